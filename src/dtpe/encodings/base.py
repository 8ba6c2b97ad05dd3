"""The interface every encoding of the local index k implements, and the registry."""

from __future__ import annotations

import torch
from torch import nn

ENCODINGS: dict[str, type["Encoding"]] = {}


class NotApplicable(ValueError):
    """An encoding that cannot represent the asked positions (never clamped silently)."""


def register(name: str):
    def add(cls):
        cls.name = name
        ENCODINGS[name] = cls
        return cls

    return add


def create(name: str, d_model: int, n_heads: int, context: int) -> "Encoding":
    if name not in ENCODINGS:
        raise ValueError(f"unknown encoding {name!r}; registered: {sorted(ENCODINGS)}")
    return ENCODINGS[name](d_model, n_heads, context)


class Encoding(nn.Module):
    """Hooks into the transformer; each encoding overrides the ones it uses.

    positions: (T,) long, the local index k of each token (tokens of one timestep share k).
    """

    name = "base"

    def __init__(self, d_model: int, n_heads: int, context: int):
        super().__init__()
        self.d_model, self.n_heads, self.head_dim, self.context = (
            d_model,
            n_heads,
            d_model // n_heads,
            context,
        )

    max_position: int | None = None
    """largest k the encoding can represent, None if unbounded"""

    def check(self, positions: torch.Tensor) -> None:
        top = int(positions.max()) if positions.numel() else 0
        if self.max_position is not None and top > self.max_position:
            raise NotApplicable(
                f"encoding {self.name!r} represents k up to {self.max_position} "
                f"(a context of {self.max_position + 1} timesteps); asked for k = {top}"
            )

    def add_to_input(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x (B, T, D) -> x with the positions added."""
        return x

    def rotate(self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor):
        """q, k (B, H, T, dh) -> q, k, before the scores are taken."""
        return q, k
