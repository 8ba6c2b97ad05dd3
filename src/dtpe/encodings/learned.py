"""A trainable table of k added to the input, sized to the training context: it has no row
for k >= context, so a longer context is not applicable (an error, never a clamp)."""

from __future__ import annotations

from torch import nn

from dtpe.encodings.base import Encoding, register


@register("learned")
class Learned(Encoding):
    def __init__(self, d_model, n_heads, context):
        super().__init__(d_model, n_heads, context)
        self.table = nn.Embedding(context, d_model)
        nn.init.normal_(self.table.weight, std=0.02)
        self.max_position = context - 1

    def add_to_input(self, x, positions):
        self.check(positions)
        return x + self.table(positions)
