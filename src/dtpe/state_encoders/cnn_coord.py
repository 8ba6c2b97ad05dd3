"""The protocol's encoder with two coordinate channels (CoordConv, Liu et al. 2018): each cell's
row and column, scaled to [-1, 1], join the item embedding before the convolutions.

Two 3x3 convolutions see 5x5 cells, and the global average pool then forgets where they were,
so `cnn` cannot tell where the agent stands relative to a key or door more than two cells
away. The coordinate channels let the pooled features carry positions, in units of the grid
side, so the encoder stays independent of N."""
from __future__ import annotations

import torch
from torch import nn

from dtpe.maze import N_CODES
from dtpe.state_encoders.base import register
from dtpe.state_encoders.embedded_conv import embedded_conv


@register("cnn_coord")
class CoordCNNStateEncoder(nn.Module):
    def __init__(self, d_model: int, item_dim: int, filters: int):
        super().__init__()
        self.items = nn.Embedding(N_CODES, item_dim)
        # conv[0] runs inside embedded_conv, the rest as a module; the names are those of checkpoints
        # saved before the two were folded together.
        self.conv = nn.Sequential(
            nn.Conv2d(item_dim + 2, filters, 3, padding=1), nn.ReLU(),
            nn.Conv2d(filters, filters, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.out = nn.Linear(filters, d_model)

    def forward(self, grids: torch.Tensor) -> torch.Tensor:
        lead, n = grids.shape[:-2], grids.shape[-1]
        axis = torch.linspace(-1, 1, n, device=grids.device)
        coords = torch.stack(torch.meshgrid(axis, axis, indexing="ij"))  # (2, N, N)
        x = self.conv[1:](embedded_conv(grids.reshape(-1, n, n), self.items, self.conv[0], coords))  # (S, filters)
        return self.out(x).reshape(*lead, -1)
