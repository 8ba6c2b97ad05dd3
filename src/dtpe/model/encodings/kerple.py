"""k: Kerple-log (Chi et al. 2022): each head adds -r1 * log(1 + r2 * |m - n|) to its logits,
with learned r1, r2 > 0 (softplus of free parameters, both starting at 1). A function of the
distance alone, in timesteps (a step's tokens share k)."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from dtpe.model.encodings.base import PositionBias, register


@register("k", "kerple", "property: logits invariant to shifting every k")
class KerpleLog(PositionBias):
    def __init__(self, cfg):
        super().__init__(cfg)
        one = math.log(math.expm1(1.0))  # softplus^-1(1)
        self.raw_r1 = nn.Parameter(torch.full((cfg.n_heads,), one))
        self.raw_r2 = nn.Parameter(torch.full((cfg.n_heads,), one))

    def bias(self, q_positions, k_positions):
        distance = (q_positions[:, None] - k_positions[None, :]).abs().float()  # (Tq, Tk)
        r1, r2 = F.softplus(self.raw_r1), F.softplus(self.raw_r2)
        return -r1[:, None, None] * torch.log1p(r2[:, None, None] * distance)  # (H, Tq, Tk)
