"""PROTOCOL §3's encoder: item embedding -> 2 conv (3x3, ReLU) -> global average pool -> linear.
The pool makes it independent of the grid size. The embedding and the first convolution run as
one (embedded_conv.py)."""
from __future__ import annotations

import torch
from torch import nn

from dtpe.maze import N_CODES
from dtpe.state_encoders.base import register
from dtpe.state_encoders.embedded_conv import embedded_conv


@register("cnn")
class CNNStateEncoder(nn.Module):
    def __init__(self, d_model: int, item_dim: int, filters: int):
        super().__init__()
        self.items = nn.Embedding(N_CODES, item_dim)
        # conv[0] runs inside embedded_conv, the rest as a module; the names are those of checkpoints
        # saved before the two were folded together.
        self.conv = nn.Sequential(
            nn.Conv2d(item_dim, filters, 3, padding=1), nn.ReLU(),
            nn.Conv2d(filters, filters, 3, padding=1), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.out = nn.Linear(filters, d_model)

    def forward(self, grids: torch.Tensor) -> torch.Tensor:
        lead, n = grids.shape[:-2], grids.shape[-1]
        x = self.conv[1:](embedded_conv(grids.reshape(-1, n, n), self.items, self.conv[0]))  # (S, filters)
        return self.out(x).reshape(*lead, -1)
