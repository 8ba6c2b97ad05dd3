"""k: eRPE, efficient relative position encoding (Foumani et al. 2024, ConvTran's
`Attention_Rel_Scl`): a learned scalar per head and relative offset i - j, added to the
attention weights AFTER the softmax, without renormalising; the logits are scaled by
1/sqrt(d_model) (ConvTran's, the full width, not the head's). One table of 2L - 1 offsets per
layer, zero at the start (as ConvTran's), L the training context in timesteps (a step's three
tokens share k). A window longer than L has offsets the table lacks: not applicable, as the
learned table (never clamped)."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("k", "erpe", "ConvTran Attention_Rel_Scl (tsai 1.0.1), equations re-derived in tests")
class ERPE(Encoding):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.table = nn.Parameter(torch.zeros(cfg.n_layers, 2 * cfg.context - 1, cfg.n_heads))
        self.max_position = cfg.context - 1
        self.scale = 1.0 / math.sqrt(cfg.d_model)

    def after_softmax(self, span, layer):
        offset = span.queries[:, None] - span.keys[None, :] + self.context - 1  # (Tq, Tk)
        # a key after its query has a negative offset, masked by the model: any row will do
        return self.table[layer][offset.clamp(0, 2 * self.context - 2)].permute(2, 0, 1)
