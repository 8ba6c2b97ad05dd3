"""k: DAPE, data-adaptive positional encoding (Zheng et al., NeurIPS 2024; chuanyang-Zheng/DAPE,
DAPE.py, `ParallelKerpleLog_DAPE`): on the scaled logits A and a static bias B, the new logits

    A + B + f([A, B]),

f an MLP 2H -> width -> H (LeakyReLU) over the heads' logits and biases of each query-key pair
together, one per layer (the reference builds one per attention layer). Its base bias B is
Kerple-log, this registry's `kerple` (the paper's DAPE-Kerple): -r1 log(1 + r2 |i - j|) per head,
i, j the k of query and key in timesteps; its r1, r2 are kerple's, shared by the layers and kept
positive by a softplus, where the reference has a pair per layer clamped at 0.01. With f zero,
DAPE is kerple. width is the option `width` (params `encodings.k.dape.width`; the reference's
`mlp_width`, 32). It rewrites the logits (`rescore`), so attention forms its weights explicitly."""

from __future__ import annotations

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register
from dtpe.model.encodings.kerple import KerpleLog


@register("k", "dape", "chuanyang-Zheng/DAPE ParallelKerpleLog_DAPE, forward re-derived in tests")
class DAPE(Encoding):
    options = {"width": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.base = KerpleLog(cfg)
        width, heads = cfg.options["k"]["width"], cfg.n_heads
        self.mlps = nn.ModuleList(
            nn.Sequential(nn.Linear(2 * heads, width), nn.LeakyReLU(), nn.Linear(width, heads))
            for _ in range(cfg.n_layers)
        )

    def rescore(self, logits, q, k, visible, span, layer):
        bias = self.base.bias(span.queries, span.keys).expand_as(logits)  # (B, H, Tq, Tk)
        pairs = torch.cat([logits, bias], 1).permute(0, 2, 3, 1)  # (B, Tq, Tk, 2H)
        adapted = self.mlps[layer](pairs).permute(0, 3, 1, 2)  # (B, H, Tq, Tk)
        return logits + bias + adapted
