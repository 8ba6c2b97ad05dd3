"""k: no encoding of k at all (NoPE, Kazemnejad et al. 2023): the causal mask alone orders the
tokens. The model still gets t from its t encoding unless that is `none` too."""

from __future__ import annotations

from dtpe.model.encodings.base import Encoding, register


@register("k", "nope", "property: every hook adds nothing; no parameters")
class NoPE(Encoding):
    pass
