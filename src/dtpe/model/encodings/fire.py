"""k: FIRE, functional interpolation for relative positions (Li et al., ICLR 2024): a bias

    b(i, j) = f(psi(i - j) / (psi(max(i, L)) + 1e-6)),   psi(x) = log(|c x| + 1),

added to the logits, with f an MLP 1 -> 32 -> heads (ReLU), c learned (from 0.1) and the
threshold L learned as a multiplier (from 1) on its option `threshold` (params
`encodings.k.fire.threshold`). Dividing by the query's own (log) position maps every distance
into [0, 1] (progressive interpolation), so a longer window asks the MLP for no new input; below
L the normaliser is fixed and the bias depends on the distance alone. i, j are k in timesteps (a
step's three tokens share k). The MLP and c, L are shared by the layers, so the bias is computed
once per forward pass."""

from __future__ import annotations

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register

HIDDEN = 32
"""the MLP's width (the paper's)"""
EPS = 1e-6
"""keeps the normaliser off 0 (mcleish7/arithmetic's)"""


@register("k", "fire", "property: progressive interpolation; mcleish7/arithmetic FIRE re-derived")
class FIRE(Encoding):
    options = {"threshold": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.mlp = nn.Sequential(nn.Linear(1, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, cfg.n_heads))
        self.c = nn.Parameter(torch.tensor(0.1))
        self.threshold_scale = nn.Parameter(torch.tensor(1.0))
        self.register_buffer(
            "threshold",
            torch.tensor(float(cfg.options["k"]["threshold"])),
            persistent=False,
        )

    def psi(self, x: torch.Tensor) -> torch.Tensor:
        return torch.log(torch.abs(self.c * x) + 1)

    def prepare(self, span):
        i = span.queries.float()[:, None]
        j = span.keys.float()[None, :]
        threshold = torch.abs(self.threshold_scale * self.threshold)
        normalised = self.psi(i - j) / (self.psi(torch.maximum(i, threshold)) + EPS)
        return self.mlp(normalised[..., None]).permute(2, 0, 1)  # (H, Tq, Tk)

    def score(self, q, span, layer):
        return span.take(span.shared)
