"""The Decision Transformer (docs/protocol.md, Model).

Tokens per timestep: (RTG, state, action), so a window of T timesteps is 3T tokens. Each token
has two positions, each with its own encoding (encodings/): its global episode timestep t (the
t encoding adds to the tokens; the study's is sinusoidal) and the local index k of its timestep
inside the window (0..T-1, shared by the step's three tokens; the k encoding adds to the tokens,
rotates queries and keys, biases the attention logits, or rewrites them from their content).
Windows are aligned at their first timestep (k = 0) and padded at the end: with a causal mask,
real tokens never see the padding, so no padding mask is needed.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext

import torch
import torch.nn.functional as F
from torch import nn

from dtpe.model import encodings, state_encoders
from dtpe.model.config import ModelConfig
from dtpe.model.encodings.base import Attending, Span, SwitchedOff, carries_position
from dtpe.world.catalog import vocabulary

TOKENS_PER_STEP = 3


class SelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.dropout = cfg.n_heads, cfg.attention_dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(
        self,
        x,
        layer: int,
        attending: Attending,
        need_weights=False,
        cache: "LayerCache | None" = None,
        keep: slice | None = None,
    ):
        """keep: the tokens whose outputs are wanted (all if None); every token still gives its
        key and value."""
        b, t, d = x.shape
        q, k, v = (
            self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)
        )  # (B, H, T, dh) each
        q, k = attending.rotate(q, k)
        if cache is not None:
            k, v = cache.extend(k, v)
        total = k.shape[2]
        at = torch.arange(
            total - t, total, device=x.device
        )  # the queries' places among the keys (cached first)
        if keep is not None:
            q, at, attending = q[:, :, keep], at[keep], attending.keep(keep)
        bias = attending.score(q, layer)  # broadcastable to (B, H, queries, total), or None
        scale = attending.scale  # None: SDPA's and the weights path's 1/sqrt(dh)
        weights = None
        dropout = self.dropout if self.training else 0.0
        explicit = need_weights or attending.needs_weights
        if len(at) == total and not explicit and bias is None:
            out = F.scaled_dot_product_attention(
                q, k, v, is_causal=True, dropout_p=dropout, scale=scale
            )
        else:
            causal = at[:, None] >= torch.arange(total, device=x.device)  # (queries, total)
            if explicit:
                scores = q @ k.transpose(-1, -2)  # (B, H, queries, total)
                scores = scores / math.sqrt(q.shape[-1]) if scale is None else scores * scale
                # float32 at least (autocast's bf16 widened), float64 kept (the oracle tests)
                wide = torch.promote_types(scores.dtype, torch.float32)
                if bias is not None:
                    scores = scores.to(wide) + bias
                scores = attending.rescore(scores.to(wide), q, k, causal, layer)
                weights = scores.masked_fill(~causal, float("-inf")).softmax(-1)
                added = attending.after_softmax(layer)
                if added is not None:
                    weights = weights + added.masked_fill(~causal, 0.0)
                mixed = F.dropout(weights, dropout) if dropout else weights
                out = mixed.to(v.dtype) @ v
                extra = attending.value_term(mixed, layer)
                if extra is not None:
                    out = out + extra.to(out.dtype)
            elif bias is None:
                out = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=causal, dropout_p=dropout, scale=scale
                )
            else:
                # SDPA adds a float mask to the scaled scores: the bias, -inf where causal hides
                mask = bias.to(q.dtype).masked_fill(~causal, float("-inf"))
                out = F.scaled_dot_product_attention(
                    q, k, v, attn_mask=mask, dropout_p=dropout, scale=scale
                )
        return self.proj(out.transpose(1, 2).reshape(b, len(at), d)), weights


class Block(nn.Module):
    """Pre-LayerNorm: x + attn(ln(x)), then x + ffn(ln(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ffn = nn.Sequential(
            nn.Linear(cfg.d_model, cfg.ffn_mult * cfg.d_model),
            nn.GELU(),
            nn.Linear(cfg.ffn_mult * cfg.d_model, cfg.d_model),
            nn.Dropout(cfg.dropout),
        )
        self.drop = nn.Dropout(cfg.dropout)

    def forward(
        self, x, layer, attending, need_weights=False, cache=None, keep: slice | None = None
    ):
        a, weights = self.attn(self.ln1(x), layer, attending, need_weights, cache, keep)
        x = (x if keep is None else x[:, keep]) + self.drop(a)
        return x + self.ffn(self.ln2(x)), weights


class DecisionTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        variant = encodings.variant(cfg.variant)
        self.k_encoding = encodings.create("k", variant.k, cfg)
        """the k encoding (evaluation checks it can reach a context)"""
        self.t_encoding = encodings.create("t", variant.t, cfg)
        if self.k_encoding.scale is not None and self.t_encoding.scale is not None:
            raise ValueError(
                f"variant {cfg.variant!r}: both encodings set the logits' scale; one may"
            )
        self.vocabulary = vocabulary(cfg.world)
        """the world's cell codes and actions"""
        self.state_encoder = state_encoders.create(cfg)
        self.rtg = nn.Linear(1, cfg.d_model)
        self.action = nn.Embedding(self.vocabulary.n_actions, cfg.d_model)
        # Unit-amplitude sinusoids of t (and of k) would drown the small content embeddings
        # and the model would first have to learn to scale them up: normalizing the content
        # first keeps content and position on the same scale from the start.
        self.embed_ln = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, self.vocabulary.n_actions)

    @contextmanager
    def at_context(self, context: int, scaling: str = "none") -> Iterator[None]:
        """Within the block the k encoding serves windows of `context` timesteps with the
        inference-time `scaling` ("none", or one of rope's and xpos's: at the training context
        they are unchanged); after it, however it ends, the trained encoding again. Raises
        NotApplicable on entry where the k encoding has no such scaling or cannot index that
        far. The context bounds k only: t encodings have no scaling."""
        try:
            self.k_encoding.for_context(context, scaling)
            self.k_encoding.check(torch.tensor([context - 1]))
            yield
        finally:
            self.k_encoding.for_context(self.cfg.context)

    @contextmanager
    def switched_off(self, axis: str) -> Iterator[None]:
        """Within the block the `axis` ("k" or "t") encoding adds nothing (SwitchedOff); after
        it, however it ends, the trained one again. Raises NotApplicable on entry where that
        encoding has nothing to switch off (NoPE, t `none`)."""
        name = f"{axis}_encoding"
        trained = getattr(self, name)
        if not carries_position(trained):
            raise encodings.NotApplicable(
                f"{axis} encoding {trained.name!r} has nothing to switch off"
            )
        try:
            setattr(self, name, SwitchedOff(trained))
            yield
        finally:
            setattr(self, name, trained)

    def encode_states(self, states: torch.Tensor) -> torch.Tensor:
        """(..., N, N) grids -> (..., D); evaluation encodes each state once and keeps it."""
        return self.state_encoder(states)

    def embed(self, rtg, state_emb, actions, timesteps, k_offset: int = 0):
        """The window's tokens (B, 3T, D) with their positions: k (3T,) and t (B, 3T)."""
        b, t, d = state_emb.shape
        self.k_encoding.check(torch.tensor([k_offset + t - 1]))
        tokens = self.embed_ln(
            torch.stack(
                [self.rtg((rtg / self.cfg.rtg_scale)[..., None]), state_emb, self.action(actions)],
                2,
            )
        )  # (B, T, 3, D)
        tokens = self.t_encoding.add_to_input(tokens, timesteps[..., None])
        x = tokens.reshape(b, TOKENS_PER_STEP * t, d)  # (B, 3T, D)
        positions = (torch.arange(t, device=x.device) + k_offset).repeat_interleave(
            TOKENS_PER_STEP
        )  # (3T,)
        x = self.drop(self.k_encoding.add_to_input(x, positions))
        return x, positions, timesteps.repeat_interleave(TOKENS_PER_STEP, 1)

    def attending(self, k_queries, k_keys, t_queries, t_keys) -> Attending:
        return Attending(
            self.k_encoding, Span(k_queries, k_keys), self.t_encoding, Span(t_queries, t_keys)
        )

    def forward(
        self, rtg, state_emb, actions, timesteps, k_offset: int = 0, need_attention: bool = False
    ):
        """rtg (B, T) float, state_emb (B, T, D), actions (B, T) long, timesteps (B, T) long.
        Returns action logits (B, T, n_actions), read at each state token, and, if asked, the final
        layer's attention (B, H, 3T, 3T). k runs k_offset..k_offset+T-1 over the window."""
        x, positions, times = self.embed(rtg, state_emb, actions, timesteps, k_offset)
        attending = self.attending(positions, positions, times, times)
        states = slice(1, None, TOKENS_PER_STEP)
        *inner, last = self.blocks
        for i, block in enumerate(inner):
            x, _ = block(x, i, attending)
        # The last layer's RTG and action tokens feed no later layer and no logit: it runs the
        # state tokens' queries alone, unless its whole attention map is asked for.
        x, weights = last(
            x,
            len(inner),
            attending,
            need_attention,
            keep=None if need_attention else states,
        )
        logits = self.head(
            self.ln_f(x[:, states] if need_attention else x)
        )  # state tokens, (B, T, n_actions)
        return (logits, weights) if need_attention else logits

    def next_action(
        self, rtg, state_emb, actions, timesteps, cache: "KVCache | None" = None, start: int = 0
    ):
        """Logits (B, n_actions) of the action at the window's last state token, for a window
        whose k start at 0 (the window's last action is not yet chosen: a placeholder no state token
        sees). With a cache, only the tokens after the cached ones run through the blocks,
        which is exact as long as every cached token keeps its k, i.e. while the window grows.
        The arrays hold the window's timesteps from `start` on: a cached step need pass only the
        ones the cache lacks, not the whole history."""
        first = (
            0 if cache is None else cache.tokens // TOKENS_PER_STEP
        )  # first timestep not wholly cached
        if first < start:
            raise ValueError(f"the arrays start at timestep {start}, the cache holds only {first}")
        cut = first - start
        x, positions, times = self.embed(
            rtg[:, cut:], state_emb[:, cut:], actions[:, cut:], timesteps[:, cut:], first
        )
        skip = 0 if cache is None else cache.tokens - TOKENS_PER_STEP * first
        x, positions, times = x[:, skip:-1], positions[skip:-1], times[:, skip:-1]
        new_tokens = x.shape[1]
        if cache is None:
            attending = self.attending(positions, positions, times, times)
        else:
            cache.place(positions, times)
            attending = self.attending(positions, cache.positions, times, cache.key_times())
        # The last layer's other tokens feed no later layer: only their keys and values count.
        for i, block in enumerate(self.blocks):
            x, _ = block(
                x,
                i,
                attending,
                cache=None if cache is None else cache.layer(i),
                keep=slice(-1, None) if i == len(self.blocks) - 1 else None,
            )
        if cache is not None:
            cache.tokens += new_tokens
        return self.head(self.ln_f(x[:, -1]))


class KVCache:
    """Keys and values of the tokens already run, per layer, for the `rows` of a batch that are
    still playing: an episode's step then costs its new tokens, not its whole window. The
    tensors hold those rows alone, in order: when rows leave (their episodes ended), the next
    step drops them once, so that no step copies the history of the rows that stay, and each
    layer attends to a view of its keys."""

    def __init__(self, n_layers: int, batch: int, max_tokens: int):
        self.keys: list[torch.Tensor | None] = [None] * n_layers
        self.values: list[torch.Tensor | None] = [None] * n_layers
        self.batch, self.max_tokens, self.tokens = batch, max_tokens, 0
        self.rows = torch.arange(batch)
        """the rows of the batch the next step runs, a subset of the held ones, in their order"""
        self.held: torch.Tensor | None = None
        """the rows of the batch the tensors hold; None before the first step"""
        self.positions: torch.Tensor | None = None
        """k of every token run so far and of the ones being run (an attention bias needs the
        keys' positions), shared by the rows"""
        self.times: torch.Tensor | None = None
        """t of the same tokens, per held row (held, max_tokens)"""

    def _hold_rows(self) -> None:
        """Drops the held rows that `rows` leaves out."""
        if self.held is None:
            self.held = self.rows
            return
        if torch.equal(self.held, self.rows):
            return
        keep = torch.isin(self.held, self.rows).nonzero().flatten()
        if not torch.equal(self.held[keep], self.rows):
            raise ValueError("the cache's rows may only leave, in their order, never come back")
        self.keys = [x if x is None else x[keep] for x in self.keys]
        self.values = [x if x is None else x[keep] for x in self.values]
        self.times = None if self.times is None else self.times[keep]
        self.held = self.rows

    def place(self, positions: torch.Tensor, times: torch.Tensor) -> None:
        """Records k (new,) and t (rows, new) of the tokens about to run after the `tokens`
        cached ones."""
        self._hold_rows()
        kept = self.positions[: self.tokens] if self.positions is not None else positions[:0]
        self.positions = torch.cat([kept, positions])
        if self.times is None:
            self.times = times.new_zeros(len(self.held), self.max_tokens)
        self.times[:, self.tokens : self.tokens + times.shape[1]] = times

    def key_times(self) -> torch.Tensor:
        """t (rows, keys) of every key `extend` returns, the tokens being run included."""
        return self.times[:, : len(self.positions)]

    def layer(self, i: int) -> "LayerCache":
        return LayerCache(self, i)


class LayerCache:
    """Layer i's share of a KVCache, handed to that layer's attention. The tensors are made at
    the first call, where the heads' shape and the dtype (autocast's) are known."""

    def __init__(self, cache: KVCache, i: int):
        self.cache, self.i = cache, i

    def extend(self, k: torch.Tensor, v: torch.Tensor):
        """Store k, v (rows, H, new, dh) after the cached tokens; return all of them so far."""
        c, i = self.cache, self.i
        if c.keys[i] is None:
            shape = (k.shape[0], k.shape[1], c.max_tokens, k.shape[3])
            c.keys[i], c.values[i] = k.new_zeros(shape), v.new_zeros(shape)
        end = c.tokens + k.shape[2]
        c.keys[i][:, :, c.tokens : end] = k
        c.values[i][:, :, c.tokens : end] = v
        return c.keys[i][:, :, :end], c.values[i][:, :, :end]


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def autocast(device: torch.device, precision: str):
    """bf16 autocast on `device` for precision "bf16", nothing for "fp32"."""
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()
