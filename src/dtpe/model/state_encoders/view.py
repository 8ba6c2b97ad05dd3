"""For a world whose states are already the agent's view (Memory: MiniGrid's 7 x 7 image, the
agent at its bottom middle): a linear layer over the view's one-hot cells, each cell's code
embedded by its place in the view and summed, then a residual ReLU layer.

Why not the pooled convolutions: in a view, where a thing lies is what it is. Memory's cue and
the two objects at the hallway's end carry the same codes (a key, a ball), told apart only by
where they stand from the agent, and the turn at the junction depends on which object is on
which side; `cnn` pools positions away and `cnn_coord` keeps them only as pooled averages. The
view's side is model.view_radius's (2r + 1), so the encoder takes any grid size."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.state_encoders.base import register
from dtpe.world.catalog import vocabulary


@register("view")
class ViewStateEncoder(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.side = 2 * cfg.view_radius + 1
        self.n_codes = vocabulary(cfg.world).n_codes
        places = self.side * self.side * self.n_codes
        self.view = nn.EmbeddingBag(places, cfg.d_model, mode="sum")
        bound = 1 / math.sqrt(places)
        nn.init.uniform_(self.view.weight, -bound, bound)
        self.mix = nn.Sequential(nn.ReLU(), nn.Linear(cfg.d_model, cfg.d_model))
        # each cell's first row of the embedding: not a parameter, so it stays out of the
        # checkpoint
        offsets = torch.arange(self.side * self.side) * self.n_codes
        self.register_buffer("offsets", offsets, persistent=False)

    def forward(self, views: torch.Tensor) -> torch.Tensor:
        lead, shape = views.shape[:-2], tuple(views.shape[-2:])
        if shape != (self.side, self.side):
            raise ValueError(
                f"state encoder view: states are {shape[0]} x {shape[1]}, not the agent's "
                f"{self.side} x {self.side} view of model.view_radius {(self.side - 1) // 2}; "
                "it reads a world whose states are views (Memory)"
            )
        index = self.offsets + views.reshape(-1, self.side * self.side).long()
        x = self.view(index).reshape(*lead, -1)
        return x + self.mix(x)
