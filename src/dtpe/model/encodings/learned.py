"""k: a trainable table of k added to the input, sized to the training context: it has no row
for k >= context, so a longer context is not applicable (an error, never a clamp)."""

from __future__ import annotations

from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("k", "learned", "none (a lookup table); shared checks")
class Learned(Encoding):
    def __init__(self, cfg):
        super().__init__(cfg)
        self.table = nn.Embedding(cfg.context, cfg.d_model)
        nn.init.normal_(self.table.weight, std=0.02)
        self.max_position = cfg.context - 1

    def add_to_input(self, x, positions):
        self.check(positions)
        return x + self.table(positions)
