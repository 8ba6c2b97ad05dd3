"""cnn_coord plus an egocentric view: the (2r+1) x (2r+1) cells centred on the agent (cells
beyond the border read as walls), each cell's item code embedded by its place in the view and
summed, added to the pooled features, then a residual ReLU layer over the sum.

The pooled convolutions keep where the key, door and goal lie in units of the grid side, but
cannot keep the walls between them and the agent: agents of the pooled encoders walk towards
their target and get stuck against a wall that needs a detour. The view keeps those walls, cell
by cell, and is the same size on every grid, so the encoder still takes any N. Both parts are
linear in the cells: the residual layer lets the state token carry conjunctions (the key is to
the left and so is a wall) before any attention, for one d_model x d_model product per state
(8x8 test success 93.1 -> 94.3 % in one trial, docs/notebook.md)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dtpe.model.state_encoders.base import register
from dtpe.model.state_encoders.cnn_coord import CoordCNNStateEncoder
from dtpe.world.catalog import vocabulary


@register("cnn_ego")
class EgoCNNStateEncoder(CoordCNNStateEncoder):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.radius = cfg.view_radius
        vocab = vocabulary(cfg.world)
        self.n_codes, self.wall = vocab.n_codes, vocab.wall
        # which codes put the agent in a cell, looked up by code: not a parameter, so it stays
        # out of the checkpoint
        is_agent = torch.zeros(vocab.n_codes, dtype=torch.bool)
        is_agent[list(vocab.agent)] = True
        self.register_buffer("is_agent", is_agent, persistent=False)
        side = 2 * self.radius + 1
        # A linear layer over the view's one-hot codes, stored as the rows it would multiply.
        self.view = nn.EmbeddingBag(side * side * self.n_codes, cfg.d_model, mode="sum")
        bound = 1 / math.sqrt(side * side * self.n_codes)
        nn.init.uniform_(self.view.weight, -bound, bound)
        self.mix = nn.Sequential(nn.ReLU(), nn.Linear(cfg.d_model, cfg.d_model))

    def forward(self, grids: torch.Tensor) -> torch.Tensor:
        lead, n, r = grids.shape[:-2], grids.shape[-1], self.radius
        flat = grids.reshape(-1, n, n).long()
        agent = self.is_agent[flat].flatten(1).to(torch.uint8).argmax(1)  # (S,) the agent's cell
        span = torch.arange(2 * r + 1, device=grids.device)
        rows = (agent // n)[:, None, None] + span[None, :, None]  # (S, side, 1) in the padded grid
        cols = (agent % n)[:, None, None] + span[None, None, :]  # (S, 1, side)
        padded = F.pad(flat, (r, r, r, r), value=self.wall)  # (S, N+2r, N+2r)
        view = padded[
            torch.arange(len(flat), device=grids.device)[:, None, None], rows, cols
        ]  # (S, side, side)
        index = torch.arange(view[0].numel(), device=grids.device) * self.n_codes + view.flatten(
            1
        )  # (S, side*side)
        x = super().forward(grids) + self.view(index).reshape(*lead, -1)
        return x + self.mix(x)
