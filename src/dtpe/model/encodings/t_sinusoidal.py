"""t: the study's encoding of the global timestep: fixed sinusoids of t added to the three
tokens of each step (the same function as the k encoding `sinusoidal`). Unbounded."""

from __future__ import annotations

from dtpe.model.encodings.base import Encoding, register
from dtpe.model.encodings.sinusoidal import sinusoids


@register("t", "sinusoidal", "closed form (Vaswani et al. 2017); shared checks")
class SinusoidalT(Encoding):
    def add_to_input(self, x, positions):
        return x + sinusoids(positions, self.d_model).to(x.dtype)
