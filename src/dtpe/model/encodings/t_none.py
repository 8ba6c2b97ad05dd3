"""t: no encoding of the global timestep; with k = nope the model sees no position at all."""

from __future__ import annotations

from dtpe.model.encodings.base import Encoding, register


@register("t", "none", "property: adds nothing to the tokens")
class NoT(Encoding):
    pass
