"""t: a trainable table of timesteps added to the three tokens of each step, as the original
Decision Transformer's `embed_timestep`. It has `table` rows (its option, params
`encodings.t.learned.table`); a timestep past the last
row is CLAMPED to it (as the original code does), so every t >= table - 1 shares one
embedding: past its table the model cannot tell late timesteps apart."""

from __future__ import annotations

from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("t", "learned", "none (a lookup table; clamps t >= table - 1); shared checks")
class LearnedT(Encoding):
    options = {"table": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.table = nn.Embedding(cfg.options["t"]["table"], cfg.d_model)
        nn.init.normal_(self.table.weight, std=0.02)

    def add_to_input(self, x, positions):
        return x + self.table(positions.clamp(max=self.table.num_embeddings - 1))
