"""k: relative position representations (Shaw et al. 2018): learned vectors a^K, a^V of the
clipped distance j - i (in timesteps: a step's three tokens share k), added to the keys and to
the values, as tensor2tensor's `dot_product_attention_relative`:

    logits_ij = q_i . (k_j + a^K_ij) / sqrt(dh),   out_i = sum_j alpha_ij (v_j + a^V_ij),

with a^K_ij = w^K[clip(j - i, -K, K)], one table pair of 2K + 1 rows (width dh, shared by the
heads) per layer. Distances past K share the table's end rows: clipping is the encoding's
definition (Shaw's, and what lets it run longer windows), not a fallback. K is its option
(params `encodings.k.shaw.clip`). In a causal model only j <= i occur: K + 1 rows are used."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("k", "shaw", "tensor2tensor dot_product_attention_relative, re-derived in tests")
class Shaw(Encoding):
    options = {"clip": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.clip = cfg.options["k"]["clip"]
        rows = 2 * self.clip + 1
        self.keys = nn.Parameter(torch.randn(cfg.n_layers, rows, self.head_dim) * 0.02)
        self.values = nn.Parameter(torch.randn(cfg.n_layers, rows, self.head_dim) * 0.02)

    def index(self, span) -> torch.Tensor:
        """(Tq, Tk) table rows of the clipped distances j - i."""
        distance = span.keys[None, :] - span.queries[:, None]
        return distance.clamp(-self.clip, self.clip) + self.clip

    def score(self, q, span, layer):
        index = self.index(span)
        rel = q @ self.keys[layer].to(q.dtype).T  # (B, H, Tq, 2K + 1): q_i . a^K_r for every r
        gathered = rel.gather(-1, index.expand(*rel.shape[:2], *index.shape))
        return gathered / math.sqrt(self.head_dim)

    def value_term(self, weights, span, layer):
        table = self.values[layer][self.index(span)]  # (Tq, Tk, dh)
        return torch.einsum("bhqk,qkd->bhqd", weights, table.to(weights.dtype))
