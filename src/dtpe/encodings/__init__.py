"""Registry of encodings of the local index k (a token's timestep inside the context window).

A new encoding is one module here that subclasses `Encoding` and is decorated with
`@register("name")`, plus its name in params.yaml's study.encodings.
"""

from dtpe.encodings import learned, rope, sinusoidal  # noqa: F401  (registration)
from dtpe.encodings.base import ENCODINGS, Encoding, NotApplicable, create, register

__all__ = ["ENCODINGS", "Encoding", "NotApplicable", "create", "register"]
