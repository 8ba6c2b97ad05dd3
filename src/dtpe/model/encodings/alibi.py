"""k: ALiBi (Press et al. 2022): each head adds -slope_h * |m - n| to its logits, with the
geometric slopes of x-transformers' `AlibiPositionalBias._get_slopes` (BLOOM's too). The
distance m - n is in timesteps (the three tokens of a step share k), not in tokens."""

from __future__ import annotations

import math

import torch

from dtpe.model.encodings.base import PositionBias, register


def alibi_slopes(heads: int) -> torch.Tensor:
    """(heads,) slopes: 2^(-8/n), its powers, for the largest power of two n <= heads; the
    remaining heads take every other slope of 2n heads."""

    def power_of_two(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(heads).is_integer():
        slopes = power_of_two(heads)
    else:
        closest = 2 ** math.floor(math.log2(heads))
        slopes = power_of_two(closest) + power_of_two(2 * closest)[0::2][: heads - closest]
    return torch.tensor(slopes, dtype=torch.float32)


@register("k", "alibi", "x-transformers 2.31 AlibiPositionalBias (slopes and bias)")
class ALiBi(PositionBias):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.register_buffer("slopes", alibi_slopes(cfg.n_heads), persistent=False)

    def bias(self, q_positions, k_positions):
        distance = (q_positions[:, None] - k_positions[None, :]).abs().float()  # (Tq, Tk)
        return -self.slopes[:, None, None] * distance  # (H, Tq, Tk)
