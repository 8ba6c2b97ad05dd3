"""The interface every encoding implements and the two registries (one per axis); a variant's
name is read by dtpe.model.catalog.

A model has two positions per token: k, the index of its timestep inside the context window
(0..T-1, shared by the step's three tokens), and t, the global episode timestep. Each axis has
its own registry; an encoding plugs into the transformer through three narrow hooks, as in
x-transformers: add to the token embeddings, rotate q/k, add a bias to the attention logits
(a t encoding through the first alone). The model calls the hooks and never branches on names.
"""

from __future__ import annotations

import torch
from torch import nn

from dtpe.model.catalog import AXES

REGISTRY: dict[str, dict[str, type["Encoding"]]] = {axis: {} for axis in AXES}


class NotApplicable(ValueError):
    """An encoding that cannot represent the asked positions (never clamped silently)."""


def register(axis: str, name: str, reference: str):
    """Class decorator: registers an encoding of `axis` under `name`; `reference` says what its
    tests check it against (shown by `dtpe encodings`)."""
    if axis not in AXES:
        raise ValueError(f"unknown axis {axis!r}; axes: {AXES}")

    def add(cls):
        if name in REGISTRY[axis]:
            raise ValueError(f"{axis} encoding {name!r} is registered twice")
        if cls.options and "options" not in vars(cls):
            # the catalog reads the class body only: an inherited dict would go unvalidated
            raise TypeError(
                f"{axis} encoding {name!r} inherits `options`: declare them in {cls.__name__}'s "
                "own body"
            )
        cls.name, cls.axis, cls.reference = name, axis, reference
        REGISTRY[axis][name] = cls
        return cls

    return add


def create(axis: str, name: str, cfg) -> "Encoding":
    """An encoding of `axis` built from the model config (each reads the fields it needs)."""
    if name not in REGISTRY[axis]:
        raise ValueError(f"unknown {axis} encoding {name!r}; registered: {sorted(REGISTRY[axis])}")
    return REGISTRY[axis][name](cfg)


class Encoding(nn.Module):
    """Hooks into the transformer; each encoding overrides the ones it uses.

    A k encoding gets its positions as (T_tokens,) in every hook (the same k in every row of
    a batch). A t encoding gets (B, T, 1) in `add_to_input`, against tokens (B, T, 3, D) (one t
    per timestep, shared by its three tokens); the model calls no attention hook of a t
    encoding, since t differs between the rows of a batch.
    """

    name = "base"
    axis = ""
    reference = ""
    params: tuple[str, ...] = ()
    """evaluation params keys the encoding reads (for `dtpe encodings`)"""
    options: dict[str, int | float] = {}
    """its own knobs, option name -> smallest allowed value, whose type (int or float) is the
    option's; their values are the params `encodings.<axis>.<name>.<option>` and reach the
    encoding as `cfg.options[axis]`. A literal in the registered class's own body:
    dtpe.model.catalog reads it there without importing the module."""
    max_position: int | None = None
    """largest position the encoding can represent, None if unbounded"""

    def __init__(self, cfg):
        super().__init__()
        self.d_model, self.n_heads, self.context = cfg.d_model, cfg.n_heads, cfg.context
        self.head_dim = cfg.d_model // cfg.n_heads

    def check(self, positions: torch.Tensor) -> None:
        top = int(positions.max()) if positions.numel() else 0
        if self.max_position is not None and top > self.max_position:
            raise NotApplicable(
                f"encoding {self.name!r} represents {self.axis} up to {self.max_position} "
                f"(a context of {self.max_position + 1} timesteps); asked for {self.axis} = {top}"
            )

    def for_context(self, context: int, scaling: str = "none") -> None:
        """Prepares the encoding for windows of `context` timesteps with an inference-time
        `scaling` (rope and xpos, which builds on it, have some besides "none")."""
        if scaling != "none":
            raise NotApplicable(f"encoding {self.name!r} has no {scaling!r} scaling")

    def add_to_input(self, x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        """x (..., D) -> x with the positions added."""
        return x

    def rotate(self, q: torch.Tensor, k: torch.Tensor, positions: torch.Tensor):
        """q, k (B, H, T, dh) of the same tokens -> q, k, before the scores are taken."""
        return q, k

    def bias(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor | None:
        """A bias broadcastable to the logits (B, H, Tq, Tk), added after the 1/sqrt(dh)
        scaling; None adds nothing (and keeps attention on its fused causal path)."""
        return None
