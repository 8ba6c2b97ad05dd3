"""k: tAPE, time absolute position encoding (Foumani et al. 2024, ConvTran): the Vaswani
sinusoids with every frequency scaled by d_model / L, added to the input, so that the
embeddings of nearby positions stay distinct when d_model is large against the series' length.
Here L is the training context in timesteps (k counts timesteps; a step's three tokens share
it): a k past it continues the same sinusoids (ConvTran adds its whole buffer and cannot run
another length), so the encoding is unbounded."""

from __future__ import annotations

from dtpe.model.encodings.base import Encoding, register
from dtpe.model.encodings.sinusoidal import sinusoids


@register("k", "tape", "tsai 1.0.1 / ConvTran tAPE (equations re-derived in the tests)")
class TAPE(Encoding):
    def add_to_input(self, x, positions):
        stretched = positions.float() * (self.d_model / self.context)
        return x + sinusoids(stretched, self.d_model).to(x.dtype)
