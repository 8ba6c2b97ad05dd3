"""The Decision Transformer of PROTOCOL §3.

Tokens per timestep: (RTG, state, action), so a window of T timesteps is 3T tokens. Every
token gets the sinusoidal encoding of its global episode timestep t; the local index k of its
timestep inside the window (0..T-1, shared by the step's three tokens) goes through the
encoding under study. Windows are aligned at their first timestep (k = 0) and padded at the
end: with a causal mask, real tokens never see the padding, so no padding mask is needed.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import torch
import torch.nn.functional as F
from torch import nn

from dtpe import encodings, state_encoders
from dtpe.encodings.sinusoidal import sinusoids
from dtpe.maze import N_ACTIONS

TOKENS_PER_STEP = 3


@dataclass(frozen=True)
class ModelConfig:
    encoding: str
    d_model: int
    n_heads: int
    n_layers: int
    ffn_mult: int
    dropout: float
    context: int
    state_encoder: str
    item_dim: int
    encoder_filters: int
    rtg_scale: float

    @classmethod
    def from_params(cls, model_params, encoding: str) -> "ModelConfig":
        return cls(encoding=encoding, **asdict(model_params))


class SelfAttention(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.n_heads, self.dropout = cfg.n_heads, cfg.dropout
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)

    def forward(self, x, positions, encoding, need_weights=False):
        b, t, d = x.shape
        q, k, v = self.qkv(x).view(b, t, 3, self.n_heads, d // self.n_heads).permute(2, 0, 3, 1, 4)  # (B, H, T, dh) each
        q, k = encoding.rotate(q, k, positions)
        if need_weights:
            scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])  # (B, H, T, T)
            causal = torch.ones(t, t, dtype=torch.bool, device=x.device).tril()
            weights = scores.float().masked_fill(~causal, float("-inf")).softmax(-1)
            out = weights.to(v.dtype) @ v
        else:
            weights = None
            out = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=self.dropout if self.training else 0.0)
        return self.proj(out.transpose(1, 2).reshape(b, t, d)), weights


class Block(nn.Module):
    """Pre-LayerNorm: x + attn(ln(x)), then x + ffn(ln(x))."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.attn = SelfAttention(cfg)
        self.ffn = nn.Sequential(nn.Linear(cfg.d_model, cfg.ffn_mult * cfg.d_model), nn.GELU(),
                                 nn.Linear(cfg.ffn_mult * cfg.d_model, cfg.d_model), nn.Dropout(cfg.dropout))
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x, positions, encoding, need_weights=False):
        a, weights = self.attn(self.ln1(x), positions, encoding, need_weights)
        x = x + self.drop(a)
        return x + self.ffn(self.ln2(x)), weights


class DecisionTransformer(nn.Module):
    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.encoding = encodings.create(cfg.encoding, cfg.d_model, cfg.n_heads, cfg.context)
        self.state_encoder = state_encoders.create(cfg.state_encoder, cfg.d_model, cfg.item_dim, cfg.encoder_filters)
        self.rtg = nn.Linear(1, cfg.d_model)
        self.action = nn.Embedding(N_ACTIONS, cfg.d_model)
        # Unit-amplitude sinusoids of t (and of k) would drown the small content embeddings
        # and the model would first have to learn to scale them up: normalizing the content
        # first keeps content and position on the same scale from the start.
        self.embed_ln = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layers))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, N_ACTIONS)

    def encode_states(self, states: torch.Tensor) -> torch.Tensor:
        """(..., N, N) grids -> (..., D); evaluation encodes each state once and keeps it."""
        return self.state_encoder(states)

    def forward(self, rtg, state_emb, actions, timesteps, k_offset: int = 0, need_attention: bool = False):
        """rtg (B, T) float, state_emb (B, T, D), actions (B, T) long, timesteps (B, T) long.
        Returns action logits (B, T, 4), read at each state token, and, if asked, the final
        layer's attention (B, H, 3T, 3T). k runs k_offset..k_offset+T-1 over the window."""
        b, t, d = state_emb.shape
        self.encoding.check(torch.tensor([k_offset + t - 1]))
        tokens = self.embed_ln(torch.stack([self.rtg((rtg / self.cfg.rtg_scale)[..., None]), state_emb, self.action(actions)], 2))  # (B, T, 3, D)
        tokens = tokens + sinusoids(timesteps, d).to(tokens.dtype)[:, :, None, :]
        x = tokens.reshape(b, TOKENS_PER_STEP * t, d)  # (B, 3T, D)
        positions = (torch.arange(t, device=x.device) + k_offset).repeat_interleave(TOKENS_PER_STEP)  # (3T,)
        x = self.drop(self.encoding.add_to_input(x, positions))
        weights = None
        for i, block in enumerate(self.blocks):
            x, weights = block(x, positions, self.encoding, need_attention and i == len(self.blocks) - 1)
        logits = self.head(self.ln_f(x[:, 1::TOKENS_PER_STEP]))  # state tokens, (B, T, 4)
        return (logits, weights) if need_attention else logits


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")
