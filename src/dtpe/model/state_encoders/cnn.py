"""The protocol's encoder (docs/protocol.md, Model): item embedding -> 2 conv (3x3, ReLU) ->
global average pool -> linear. The pool makes it independent of the grid size. The embedding
and the first convolution run as one (embedded_conv.py)."""

from __future__ import annotations

import torch
from torch import nn

from dtpe.model.state_encoders.base import register
from dtpe.model.state_encoders.embedded_conv import embedded_conv
from dtpe.world.catalog import vocabulary


@register("cnn")
class CNNStateEncoder(nn.Module):
    extra_channels = 0
    """channels every grid shares, appended to the item embedding (subclasses; see extra)"""

    def __init__(self, cfg):
        super().__init__()
        d_model, item_dim, filters = cfg.d_model, cfg.item_dim, cfg.encoder_filters
        self.items = nn.Embedding(vocabulary(cfg.world).n_codes, item_dim)
        # conv[0] runs inside embedded_conv, the rest as a module; the names are those of
        # checkpoints saved before the two were folded together.
        self.conv = nn.Sequential(
            nn.Conv2d(item_dim + self.extra_channels, filters, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(filters, filters, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.out = nn.Linear(filters, d_model)

    def forward(self, grids: torch.Tensor) -> torch.Tensor:
        lead, n = grids.shape[:-2], grids.shape[-1]
        x = embedded_conv(
            grids.reshape(-1, n, n), self.items, self.conv[0], self.extra(n, grids.device)
        )
        return self.out(self.conv[1:](x)).reshape(*lead, -1)  # conv[1:]: (S, filters)

    def extra(self, n: int, device) -> torch.Tensor | None:
        """(extra_channels, N, N) for an N x N grid, or None."""
        return None
