"""Every layer's attention weights from the model's own forward pass, read through hooks on
each block's self-attention, for the analyses that look inside the model (steps/attention.py's
milestone attention, the explorer's per-step attention)."""

from __future__ import annotations

import inspect
from contextlib import contextmanager

import torch


def _attention_modules(model) -> list[torch.nn.Module]:
    """Each block's self-attention, in order: the innermost modules that take `need_weights`
    (a block passes it on to its attention)."""
    found = [
        m for m in model.modules() if "need_weights" in inspect.signature(m.forward).parameters
    ]
    return [m for m in found if not any(n is not m for n in m.modules() if n in found)]


@contextmanager
def every_layer_attention(model):
    """Within the block, `model.forward(..., need_attention=True)` also records every layer's
    attention weights (B, H, Tq, Tk) in the yielded list, in layer order. Read-only: the
    hooks ask each layer for the weights that the forward pass already computes for its last
    layer, on the same path, and keep them."""
    kept, handles = [], []

    def ask(module, args, kwargs):
        bound = inspect.signature(module.forward).bind(*args, **kwargs)
        bound.arguments["need_weights"] = True
        return bound.args, bound.kwargs

    def keep(module, args, kwargs, output):
        kept.append(output[1])

    for module in _attention_modules(model):
        handles.append(module.register_forward_pre_hook(ask, with_kwargs=True))
        handles.append(module.register_forward_hook(keep, with_kwargs=True))
    try:
        yield kept
    finally:
        for h in handles:
            h.remove()


@torch.no_grad()
def layer_attention(model, rtg, state_emb, actions, timesteps):
    """The model's own forward pass on windows whose k start at 0: (logits (B, T, 4),
    [L x (B, H, 3T, 3T)])."""
    with every_layer_attention(model) as weights:
        logits, _ = model(rtg, state_emb, actions, timesteps, need_attention=True)
    return logits, list(weights)
