"""The interface every encoding implements and the two registries (one per axis); a variant's
name is read by dtpe.model.catalog.

A model has two positions per token: k, the index of its timestep inside the context window
(0..T-1, shared by the step's three tokens), and t, the global episode timestep. Each axis has
its own registry. An encoding plugs into the transformer through hooks, as in x-transformers
(what is shared by the layers is computed once per forward pass and handed to every layer):

    add_to_input   the token embeddings                      sinusoids, tables, tAPE
    rotate         q and k of the tokens being run (k only)  RoPE, xPos
    prepare        once per forward: what the layers share    FIRE's bias, TUPE's positional term
    scale          the logits' scale instead of 1/sqrt(dh)    TUPE, eRPE
    score          a term added to the scaled logits, may     ALiBi, T5, Kerple (positions
                   read the queries, per layer                only); Shaw, T-PE (the queries)
    rescore        the logits rewritten from themselves, q,   CoPE, DAPE (the position
                   k and the mask, per layer                   reads the content)
    after_softmax  a term added to the attention weights      eRPE
    value_term     a term added to each query's output        Shaw

The model calls every hook of both encodings (`rotate` of the k encoding alone: a t encoding's
positions differ between the rows of a batch) and never branches on names. Attention runs one
fused kernel unless an encoding rewrites the logits, adds after the softmax or to the values.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

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


@dataclass(frozen=True)
class Span:
    """The positions one attention layer sees on one axis: k as (Tq,) and (Tk,), shared by the
    rows of a batch; t as (B, Tq) and (B, Tk)."""

    queries: torch.Tensor
    keys: torch.Tensor
    """every key the queries attend to, cached ones first"""
    shared: object = None
    """what the encoding's `prepare` computed for the whole forward pass, over all its queries"""
    rows: slice | None = None
    """the forward pass's queries this layer runs (the last layer runs the state tokens alone)"""

    def take(self, prepared: torch.Tensor) -> torch.Tensor:
        """The rows of this layer's queries in a prepared (..., Tq, Tk) tensor."""
        return prepared if self.rows is None else prepared[..., self.rows, :]


class Encoding(nn.Module):
    """Hooks into the transformer; each encoding overrides the ones it uses (base.py's docstring
    lists them). Positions are k (T_tokens,) in `add_to_input` and `rotate` of a k encoding; a
    t encoding gets (B, T, 1) in `add_to_input`, against tokens (B, T, 3, D) (one t per
    timestep, shared by its three tokens). The attention hooks get a `Span` of their axis."""

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
    scale: float | None = None
    """the logits' scale; None is 1/sqrt(head width)"""

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

    def prepare(self, span: Span) -> object:
        """Once per forward pass, over all its queries: what every layer's hooks share (as
        `span.shared`). None prepares nothing."""
        return None

    def score(self, q: torch.Tensor, span: Span, layer: int) -> torch.Tensor | None:
        """A term broadcastable to the logits (B, H, Tq, Tk), added after they are scaled, from
        layer `layer`'s queries q (B, H, Tq, dh); None adds nothing (and keeps attention on its
        fused causal path)."""
        return None

    def rescore(
        self,
        logits: torch.Tensor,
        q: torch.Tensor,
        k: torch.Tensor,
        visible: torch.Tensor,
        span: Span,
        layer: int,
    ) -> torch.Tensor:
        """New logits (B, H, Tq, Tk) from the logits as scaled and with every `score` term
        added, the queries q (B, H, Tq, dh) and keys k (B, H, Tk, dh) that made them, and
        `visible` (Tq, Tk), True where the causal mask lets a query see a key (the new logits
        are masked after). Returning the logits unchanged keeps attention on its fused path;
        an encoding that overrides it has its weights formed explicitly."""
        return logits

    def after_softmax(self, span: Span, layer: int) -> torch.Tensor | None:
        """A term broadcastable to the attention weights (B, H, Tq, Tk), added to them (where
        the causal mask lets a query see) without renormalising; None adds nothing."""
        return None

    def value_term(self, weights: torch.Tensor, span: Span, layer: int) -> torch.Tensor | None:
        """From the attention weights (B, H, Tq, Tk), a term added to each query's output
        (B, H, Tq, dh); None adds nothing."""
        return None

    @classmethod
    def needs_weights(cls) -> bool:
        """Whether attention must form its weights (no fused kernel rewrites the logits or adds
        after the softmax)."""
        return any(
            getattr(cls, hook) is not getattr(Encoding, hook)
            for hook in ("rescore", "after_softmax", "value_term")
        )


HOOKS = ("add_to_input", "rotate", "prepare", "score", "rescore", "after_softmax", "value_term")


def carries_position(encoding: Encoding) -> bool:
    """Whether `encoding` adds anything through a hook (NoPE and t `none` do not): what there
    is to switch off."""
    return any(getattr(type(encoding), h) is not getattr(Encoding, h) for h in HOOKS)


class SwitchedOff(Encoding):
    """`encoding` switched off at inference, to ask whether a model uses it: no table added,
    no bias, no rotation; it indexes any position. It keeps the logits' scale (TUPE's, eRPE's),
    which is no position."""

    def __init__(self, encoding: Encoding):
        nn.Module.__init__(self)
        self.name, self.axis = f"{encoding.name} (off)", encoding.axis
        self.scale, self.context = encoding.scale, encoding.context
        self.d_model, self.n_heads, self.head_dim = (
            encoding.d_model,
            encoding.n_heads,
            encoding.head_dim,
        )


class Attending:
    """One forward pass's encodings with their spans, handed to every attention layer: it calls
    each hook of both encodings and combines their terms."""

    def __init__(self, k: Encoding, k_span: Span, t: Encoding, t_span: Span, prepare=True):
        if prepare:
            k_span = replace(k_span, shared=k.prepare(k_span))
            t_span = replace(t_span, shared=t.prepare(t_span))
        self.k, self.k_span, self.t, self.t_span = k, k_span, t, t_span
        self.pairs = ((k, k_span), (t, t_span))
        self.scale = k.scale if k.scale is not None else t.scale
        self.needs_weights = k.needs_weights() or t.needs_weights()

    def keep(self, rows: slice) -> "Attending":
        """The same pass for the queries `rows` alone (keys unchanged)."""
        k_span = replace(self.k_span, queries=self.k_span.queries[rows], rows=rows)
        t_span = replace(self.t_span, queries=self.t_span.queries[:, rows], rows=rows)
        return Attending(self.k, k_span, self.t, t_span, prepare=False)

    def rotate(self, q, k):
        return self.k.rotate(q, k, self.k_span.queries)

    @staticmethod
    def _sum(terms):
        terms = [t for t in terms if t is not None]
        if not terms:
            return None
        total = terms[0]
        for term in terms[1:]:
            total = total + term
        return total

    def score(self, q, layer):
        return self._sum(enc.score(q, span, layer) for enc, span in self.pairs)

    def rescore(self, logits, q, k, visible, layer):
        for enc, span in self.pairs:
            logits = enc.rescore(logits, q, k, visible, span, layer)
        return logits

    def after_softmax(self, layer):
        return self._sum(enc.after_softmax(span, layer) for enc, span in self.pairs)

    def value_term(self, weights, layer):
        return self._sum(enc.value_term(weights, span, layer) for enc, span in self.pairs)


class PositionBias(Encoding):
    """An encoding whose logit term is a function of the query's and key's k alone, computed in
    each layer (ALiBi, T5, Kerple)."""

    def bias(self, q_positions: torch.Tensor, k_positions: torch.Tensor) -> torch.Tensor:
        """(Tq,), (Tk,) -> a bias (H, Tq, Tk)."""
        raise NotImplementedError

    def score(self, q, span, layer):
        return self.bias(span.queries, span.keys)
