"""t: T-PE as the project's sources describe it: a learned function h of the interval between two
tokens' episode timesteps, added to the key inside attention,

    logits_ij = q_i . (k_j + h(t_i - t_j)) / sqrt(dh),

h an MLP 1 -> hidden -> dh (ReLU; hidden its option, params `encodings.t.tpe.hidden`) of
(t_i - t_j) / C (C the training context, so its input stays near [-1, 1] where training puts
it), shared by the heads and the layers. Timesteps differ between the rows of a batch, so the
term is (B, H, Tq, Tk). No public code matches this description (the survey's is a plain
sinusoid; Zhang et al. 2024 add sinusoids to q and k and a loss): this is the description,
implemented. Nothing is added to the input: t reaches the model through intervals alone. h is
computed once per forward pass, at each interval that occurs."""

from __future__ import annotations

import math

import torch
from torch import nn

from dtpe.model.encodings.base import Encoding, register


@register("t", "tpe", "the sources' description (no public code matches); worked example in tests")
class TPE(Encoding):
    options = {"hidden": 1}

    def __init__(self, cfg):
        super().__init__(cfg)
        hidden = cfg.options["t"]["hidden"]
        self.h = nn.Sequential(nn.Linear(1, hidden), nn.ReLU(), nn.Linear(hidden, self.head_dim))

    def prepare(self, span):
        interval = span.queries[:, :, None] - span.keys[:, None, :]  # (B, Tq, Tk)
        low = int(interval.min())
        steps = torch.arange(low, int(interval.max()) + 1, device=interval.device)
        table = self.h((steps.float() / self.context)[:, None])  # (R, dh): h at every interval
        return table, interval - low

    def score(self, q, span, layer):
        table, index = span.shared
        index = span.take(index)[:, None].expand(-1, q.shape[1], -1, -1)  # (B, H, Tq, Tk)
        rel = q @ table.to(q.dtype).T  # (B, H, Tq, R)
        return rel.gather(-1, index) / math.sqrt(self.head_dim)
