"""k: TUPE, transformer with untied positional encoding (Ke et al., ICLR 2021): positions leave
the input and enter every layer's logits as their own term,

    logits_ij = (q_i . k_j) / sqrt(2 dh) + ((p_i U^Q)_h . (p_j U^K)_h) / sqrt(2 dh),

with p a learned table of k (one row per timestep of the training context, so a longer window
is not applicable, as the learned table), LayerNorm'd, projected by U^Q, U^K (one Linear(d, 2d)
with bias) and split by head; the positional term is computed once per forward pass and shared
by the layers (as guolinke/TUPE). `tuper` (TUPE-R) adds T5's bidirectional relative bucket of
key - query (32 buckets, 128 the longest distance), one learned scalar per bucket and head,
unscaled. Positions are k in timesteps (a step's three tokens share k)."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register

BUCKETS, MAX_DISTANCE = 32, 128
"""TUPE-R's relative buckets (T5's defaults)"""


def bidirectional_bucket(relative: torch.Tensor) -> torch.Tensor:
    """TUPE's `relative_position_bucket(relative, bidirectional=True)`: relative = key - query;
    half the buckets for keys after the query, each half exact below 8 and log-spaced to 128."""
    half = BUCKETS // 2
    ret = (relative > 0).long() * half
    n = relative.abs()
    exact = half // 2
    large = (
        exact
        + (torch.log(n.float() / exact) / math.log(MAX_DISTANCE / exact) * (half - exact)).long()
    )
    large = torch.clamp(large, max=half - 1)
    return ret + torch.where(n < exact, n, large)


@register("k", "tupe", "guolinke/TUPE untied positional term, re-derived in tests")
class TUPE(Encoding):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.table = nn.Embedding(cfg.context, cfg.d_model)
        nn.init.normal_(self.table.weight, std=0.02)
        self.norm = nn.LayerNorm(cfg.d_model)
        self.project = nn.Linear(cfg.d_model, 2 * cfg.d_model)
        self.max_position = cfg.context - 1
        self.scale = 1.0 / math.sqrt(2 * self.head_dim)

    def prepare(self, span):
        heads = (self.n_heads, self.head_dim)
        uq, _ = self.project(self.norm(self.table(span.queries))).chunk(2, -1)
        _, uk = self.project(self.norm(self.table(span.keys))).chunk(2, -1)
        uq, uk = uq.view(-1, *heads), uk.view(-1, *heads)  # (Tq, H, dh), (Tk, H, dh)
        return torch.einsum("qhd,khd->hqk", uq, uk) * self.scale

    def score(self, q, span, layer):
        return span.take(span.shared)


@register("k", "tuper", "guolinke/TUPE (TUPE-R: with its relative bucket), re-derived in tests")
class TUPER(TUPE):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.relative = nn.Embedding(BUCKETS, cfg.n_heads)
        nn.init.normal_(self.relative.weight, std=0.02)

    def prepare(self, span):
        buckets = bidirectional_bucket(span.keys[None, :] - span.queries[:, None])
        return super().prepare(span) + self.relative(buckets).permute(2, 0, 1)
