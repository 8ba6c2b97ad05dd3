"""t: randomized positions (after Ruoss et al. 2023): the sinusoids of t + o, where during
training each window draws its own offset o uniformly from 0..max_offset (its option,
params `encodings.t.randomized.max_offset`; torch's RNG),
so the model sees timesteps beyond the 8x8 episodes' and must read t relative to its window;
in evaluation (the module's eval mode) o = 0."""

from __future__ import annotations

import torch

from dtpe.model.encodings.base import Encoding, register
from dtpe.model.encodings.sinusoidal import sinusoids


@register("t", "randomized", "property: train-time offsets in 0..max_offset; eval none")
class RandomizedT(Encoding):
    options = {"max_offset": 0}

    def __init__(self, cfg):
        super().__init__(cfg)
        self.max_offset = cfg.options["t"]["max_offset"]

    def add_to_input(self, x, positions):
        if self.training:
            shape = (positions.shape[0],) + (1,) * (positions.dim() - 1)  # one per window
            positions = positions + torch.randint(
                0, self.max_offset + 1, shape, device=positions.device
            )
        return x + sinusoids(positions, self.d_model).to(x.dtype)
