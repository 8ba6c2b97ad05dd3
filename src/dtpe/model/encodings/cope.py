"""k: CoPE, contextual position encoding (Golovneva et al. 2024; facebookresearch/RAM,
projects/cope/src/cope/context_position.py, `ContextPosSelfAttn` with its defaults): a key's
position seen from a query counts the keys from it up to the query that the query's gates open,

    g_ij = sigmoid(q_i·k_j / sqrt(dh)),   p_ij = sum of g_im over j <= m <= i,

fractional, clamped to P - 1. The query's logit for a position, q_i·e[p], is interpolated between
the integer positions on either side of p_ij and added to q_i·k_j before the 1/sqrt(dh) scaling.
e is a table (dh, P) per layer, shared by the heads and zero at the start (the reference's); P is
the option `positions` (params `encodings.k.cope.positions`; the reference's block size + 1).
The positions count tokens, not timesteps, and read neither k nor t: they come from the content
alone, so no window is too long (past P - 1 they share the table's last column). It rewrites
the logits (`rescore`), so attention forms its weights explicitly."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("k", "cope", "facebookresearch/RAM ContextPosSelfAttn, forward re-derived in tests")
class CoPE(Encoding):
    options = {"positions": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.positions = cfg.options["k"]["positions"]
        self.table = nn.Parameter(torch.zeros(cfg.n_layers, self.head_dim, self.positions))

    def rescore(self, logits, q, k, visible, span, layer):
        root = math.sqrt(self.head_dim)
        # gates read q·k alone, as the reference's, whatever the t encoding added to the logits
        gates = torch.sigmoid((q @ k.transpose(-1, -2)).to(logits.dtype) / root) * visible
        counted = gates.flip(-1).cumsum(-1).flip(-1)  # (B, H, Tq, Tk): gates from j to the end
        position = counted.clamp(max=self.positions - 1)
        at_integers = q @ self.table[layer]  # (B, H, Tq, P)
        floor = position.floor()
        below = at_integers.gather(-1, floor.long())  # (B, H, Tq, Tk)
        above = at_integers.gather(-1, position.ceil().long())  # (B, H, Tq, Tk)
        weight = position - floor  # the gradient reaches the gates through it
        return logits + (above * weight + below * (1 - weight)) / root
