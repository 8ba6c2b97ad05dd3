"""k: xPos (Sun et al. 2023): RoPE whose query is also scaled by zeta_i^(m/512) and key by
zeta_i^(-n/512), zeta_i = (2i/d_head + 0.4) / 1.4, so a score decays with the distance m - n
(in timesteps: a step's tokens share k). As rotary-embedding-torch's
`RotaryEmbedding(d_head, use_xpos=True)` except that it centres positions on the sequence's
middle, which cancels in every score (its tests compare scores), and pairs dimensions
interleaved where this rope pairs halves."""

from __future__ import annotations

import torch

from dtpe.model.encodings.base import register
from dtpe.model.encodings.rope import Rope, apply_rope

SCALE_BASE = 512
"""xPos's decay length (the paper's and rotary-embedding-torch's default)"""


@register("k", "xpos", "rotary-embedding-torch 0.9.1 RotaryEmbedding(use_xpos=True), scores")
class XPos(Rope):
    def rotate(self, q, k, positions):
        angle, factor = self.angles(positions)
        zeta = (torch.arange(0, self.head_dim, 2, device=q.device) + 0.4 * self.head_dim) / (
            1.4 * self.head_dim
        )
        scale = (zeta ** (positions.to(torch.float32)[:, None] / SCALE_BASE)).repeat(1, 2)
        return apply_rope(q * scale, angle, factor), apply_rope(k / scale, angle, factor)
