"""k: the learned table of k (learned.py) with `table` rows (its option, params
`encodings.k.learnedlong.table`), sized to the longest evaluated context as HuggingFace's
Decision Transformer sizes its timestep table by `max_ep_len`, so that the table takes part at
contexts beyond training. Training reaches the first `context` rows only; the others keep the
values they were drawn with (the same N(0, 0.02) as every row), held as a buffer: no gradient and
no weight decay moves them, and the checkpoint stores them. Past its table, not applicable (an
error, never a clamp), as learned's."""

from __future__ import annotations

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("k", "learnedlong", "none (a lookup table sized by its option); shared checks")
class LearnedLong(Encoding):
    options = {"table": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        rows = cfg.options["k"]["table"]
        if rows < cfg.context:
            raise ValueError(
                f"k encoding 'learnedlong': encodings.k.learnedlong.table {rows} is shorter than "
                f"the training context model.context {cfg.context}"
            )
        drawn = nn.init.normal_(torch.empty(rows, cfg.d_model), std=0.02)
        self.trained = nn.Parameter(drawn[: cfg.context].clone())
        self.register_buffer("untrained", drawn[cfg.context :].clone())
        self.max_position = rows - 1

    def add_to_input(self, x, positions):
        self.check(positions)
        return x + torch.cat([self.trained, self.untrained])[positions]
