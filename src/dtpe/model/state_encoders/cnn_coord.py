"""The protocol's encoder with two coordinate channels (CoordConv, Liu et al. 2018): each cell's
row and column, scaled to [-1, 1], join the item embedding before the convolutions.

Two 3x3 convolutions see 5x5 cells, and the global average pool then forgets where they were,
so `cnn` cannot tell where the agent stands relative to a key or door more than two cells
away. The coordinate channels let the pooled features carry positions, in units of the grid
side, so the encoder stays independent of N."""

from __future__ import annotations

import torch

from dtpe.model.state_encoders.base import register
from dtpe.model.state_encoders.cnn import CNNStateEncoder


@register("cnn_coord")
class CoordCNNStateEncoder(CNNStateEncoder):
    extra_channels = 2

    def extra(self, n: int, device) -> torch.Tensor:
        axis = torch.linspace(-1, 1, n, device=device)
        return torch.stack(torch.meshgrid(axis, axis, indexing="ij"))  # (2, N, N): row, column
