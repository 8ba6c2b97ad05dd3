"""k: T5's relative position bias (Raffel et al. 2020), causal: the distance q - k >= 0 falls
into one of 32 buckets (exact below 16, log-spaced up to 128, the last bucket beyond), and each
head learns one bias per bucket. Distances are in timesteps (a step's tokens share k)."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import PositionBias, register

BUCKETS = 32
"""T5's default number of buckets"""
MAX_DISTANCE = 128
"""T5's default: distances from here on share the last bucket"""


def relative_bucket(
    relative: torch.Tensor, buckets: int = BUCKETS, max_distance: int = MAX_DISTANCE
) -> torch.Tensor:
    """transformers' `T5Attention._relative_position_bucket(relative, bidirectional=False)`:
    relative = key - query; later keys (relative > 0) share bucket 0 with distance 0."""
    distance = -torch.clamp(relative, max=0)
    exact = buckets // 2
    log_bucket = exact + (
        torch.log(distance.float() / exact) / math.log(max_distance / exact) * (buckets - exact)
    ).to(torch.long)
    log_bucket = torch.clamp(log_bucket, max=buckets - 1)
    return torch.where(distance < exact, distance, log_bucket)


@register("k", "t5", "transformers 5.23 T5Attention._relative_position_bucket")
class T5(PositionBias):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.table = nn.Embedding(BUCKETS, cfg.n_heads)
        nn.init.normal_(self.table.weight, std=0.02)

    def bias(self, q_positions, k_positions):
        buckets = relative_bucket(k_positions[None, :] - q_positions[:, None])  # (Tq, Tk)
        return self.table(buckets).permute(2, 0, 1)  # (H, Tq, Tk)
