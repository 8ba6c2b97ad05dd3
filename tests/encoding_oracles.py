"""Test oracles for seven positional encodings: each re-derived, in plain torch on plain tensors,
from its reference implementation's code (not from a description of it), so that the project's
modules can be checked against them. Shapes: B batch, H heads, T tokens, dh head width.
Positions are integer tensors of shape (T,) (shared by the batch) or (B, T).

Each oracle and the reference it transcribes (repository · file · name):
- shaw_attention: tensorflow/tensor2tensor · tensor2tensor/layers/common_attention.py ·
  `_generate_relative_positions_matrix`, `_relative_attention_inner`,
  `dot_product_attention_relative` (q pre-scaled by `multihead_attention`).
- erpe_attention: Navidfoumani/ConvTran · Models/Attention.py · `Attention_Rel_Scl`; where tsai
  1.0.1 loads and applies (8 heads, positions 0..L-1) it RUNS tsai's class of that name.
- tape: Navidfoumani/ConvTran · Models/AbsolutePositionalEncoding.py · `tAPE`; where tsai loads
  and the positions lie in 0..L-1 it READS the buffer of tsai's `tAPE`.
- tupe_logits: guolinke/TUPE · fairseq/modules/transformer_sentence_encoder.py
  (`relative_position_bucket`, the positional term) and fairseq/modules/multihead_attention.py
  (`multi_head_attention_forward`).
- fire_bias: mcleish7/arithmetic · cramming/architectures/embeddings.py · `FIRE` (added in
  cramming/architectures/attention.py after the 1/√dh scaling).
- cope_attention: facebookresearch/RAM · projects/cope/src/cope/context_position.py ·
  `ContextPosSelfAttn.forward` with its defaults (gates from the keys, divided after the
  position logits are added), heads folded into the batch as its `MultiHeadAttn.split_heads`.
- dape_kerple_scores: chuanyang-Zheng/DAPE · DAPE.py · `ParallelKerpleLog_DAPE.forward` (queries
  and keys of one length), fed megatron's scaled scores (megatron/model/transformer.py).
(T-PE, whose description no public code matches, has its own in tests/test_tpe.py.)

tsai's module `tsai/models/ConvTranPlus.py` needs nothing beyond torch, numpy and math except
`from .layers import lin_nd_head` (used only by its model head), and `tsai.models.layers` pulls
in fastcore and fastai; it is loaded here with that one module stubbed (see `tsai_convtranplus`).
"""

import importlib
import math
import sys
import types
from collections.abc import Callable
from unittest import mock

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def _pairs(q_pos: Tensor, k_pos: Tensor) -> tuple[Tensor, Tensor]:
    """(i, j) broadcast to (..., Tq, Tk): i the query's position, j the key's."""
    return q_pos[..., :, None], k_pos[..., None, :]


# ---------------------------------------------------------------------------------------------
# Shaw et al. relative positions, as tensor2tensor computes them
# ---------------------------------------------------------------------------------------------
def _relative_attention_inner(x: Tensor, y: Tensor, z: Tensor, transpose: bool) -> Tensor:
    """tensor2tensor's `_relative_attention_inner`: x (B, H, Tq, Tk or dh), y (B, H, Tk, dh),
    z (Tq, Tk, dh); returns x·y (+) x·z batched over the query position."""
    batch_size, heads, length = x.shape[0], x.shape[1], x.shape[2]
    xy_matmul = torch.matmul(x, y.transpose(-1, -2) if transpose else y)  # (B, H, Tq, Tk or dh)
    x_t = x.permute(2, 0, 1, 3)  # (Tq, B, H, Tk or dh)
    x_t_r = x_t.reshape(length, heads * batch_size, -1)  # (Tq, B*H, Tk or dh)
    x_tz_matmul = torch.matmul(x_t_r, z.transpose(-1, -2) if transpose else z)  # (Tq, B*H, .)
    x_tz_matmul_r = x_tz_matmul.reshape(length, batch_size, heads, -1)  # (Tq, B, H, .)
    x_tz_matmul_r_t = x_tz_matmul_r.permute(1, 2, 0, 3)  # (B, H, Tq, Tk or dh)
    return xy_matmul + x_tz_matmul_r_t


def shaw_relative_index(q_pos: Tensor, k_pos: Tensor, clip: int) -> Tensor:
    """`_generate_relative_positions_matrix`: clip(j - i, -clip, clip) + clip, (..., Tq, Tk)."""
    i, j = _pairs(q_pos, k_pos)
    distance_mat = j - i
    return distance_mat.clamp(-clip, clip) + clip


def shaw_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    a_k: Tensor,
    a_v: Tensor,
    clip: int,
    q_pos: Tensor,
    k_pos: Tensor,
) -> Tensor:
    """Output (B, H, Tq, dh) of tensor2tensor's `dot_product_attention_relative` under a causal
    mask (key position <= query position): softmax((q_i/√dh)·(k_j + a_k[j-i])) · (v_j + a_v[j-i]).

    tensor2tensor scales q by dh**-0.5 before the call (`multihead_attention`: `q *=
    key_depth_per_head**-0.5`), adds the mask as a -1e9 bias (`attention_bias_lower_triangle`),
    and shares the two tables ((2*clip+1, dh)) by all heads. Positions of shape (B, T) are run
    one batch row at a time, since tensor2tensor's z is one (Tq, Tk, dh) for the whole batch.
    """
    if q_pos.dim() == 2 or k_pos.dim() == 2:
        rows = q_pos.expand(q.shape[0], -1), k_pos.expand(q.shape[0], -1)
        return torch.cat(
            [
                shaw_attention(q[b : b + 1], k[b : b + 1], v[b : b + 1], a_k, a_v, clip, *pos)
                for b, pos in enumerate(zip(*rows))
            ]
        )
    depth = q.shape[-1]
    q = q * depth**-0.5
    index = shaw_relative_index(q_pos, k_pos, clip)  # (Tq, Tk)
    relations_keys = a_k[index]  # (Tq, Tk, dh): tf.gather(embeddings_table, matrix)
    relations_values = a_v[index]
    i, j = _pairs(q_pos, k_pos)
    bias = -1e9 * (1.0 - (j <= i).to(q.dtype))  # (Tq, Tk), as attention_bias_local's band
    logits = _relative_attention_inner(q, k, relations_keys, True)
    logits = logits + bias
    weights = torch.softmax(logits, dim=-1)
    return _relative_attention_inner(weights, v, relations_values, False)


# ---------------------------------------------------------------------------------------------
# tsai's ConvTranPlus (tAPE, eRPE), loaded without fastai
# ---------------------------------------------------------------------------------------------
_TSAI: dict[str, object] = {}


def tsai_convtranplus() -> types.ModuleType | None:
    """tsai 1.0.1's `tsai.models.ConvTranPlus`, or None (the reason in `tsai_unavailable()`).

    Its only import beyond torch/numpy/math is `from .layers import lin_nd_head`, whose module
    imports fastcore and fastai (which want torchvision); a stub `tsai.models.layers` stands in
    while the module loads, and is removed from sys.modules afterwards."""
    if "module" not in _TSAI:
        _TSAI["module"], _TSAI["reason"] = None, None
        name, layers = "tsai.models.ConvTranPlus", "tsai.models.layers"
        try:
            import tsai  # noqa: F401

            stubbed = layers not in sys.modules
            if stubbed:
                stub = types.ModuleType(layers)
                stub.lin_nd_head = None  # used only by ConvTranPlus's head, never here
                sys.modules[layers] = stub
            try:
                _TSAI["module"] = importlib.import_module(name)
            finally:
                if stubbed:
                    del sys.modules[layers]
        except Exception as error:  # the reason is reported by tsai_unavailable()
            _TSAI["reason"] = f"{type(error).__name__}: {error}"
    return _TSAI["module"]  # type: ignore[return-value]


def tsai_unavailable() -> str | None:
    """Why tsai's ConvTranPlus did not load (None when it did)."""
    tsai_convtranplus()
    return _TSAI["reason"]  # type: ignore[return-value]


class _Fixed(nn.Module):
    """Stands in for a projection: returns the given (B, T, H*dh) tensor whatever it is fed."""

    def __init__(self, value: Tensor):
        super().__init__()
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        return self.value


def tsai_erpe_attention(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, d_model: int, length: int, causal: bool = True
) -> tuple[Tensor, Tensor]:
    """tsai's `Attention_Rel_Scl.forward` run on given q, k, v (B, 8, L, dh) and table w
    (2L-1, 8): its three projections replaced by the given tensors, its `to_out` LayerNorm by
    the identity; with `causal`, its softmax gets the mask (the module's global `nn` swapped for
    the call) and the table's rows for i - j < 0 are zeroed, so that the bias lands only where
    j <= i. The weights are read off its second `torch.matmul` (weights · v)."""
    module = tsai_convtranplus()
    if module is None:
        raise RuntimeError(f"tsai's ConvTranPlus does not load: {tsai_unavailable()}")
    batch, heads, tokens, head_width = q.shape
    if heads != 8:
        raise ValueError("tsai 1.0.1's Attention_Rel_Scl gathers `.repeat(1, 8)`: 8 heads only")
    if tokens != length or k.shape[2] != length:
        raise ValueError("Attention_Rel_Scl's bias is built for exactly `length` tokens")
    layer = module.Attention_Rel_Scl(d_model, length, n_heads=heads, dropout=0.0)
    table = w.detach().clone()
    if causal:
        table[: length - 1] = 0  # rows i - j + L - 1 < L - 1: keys after the query
    layer.relative_bias_table = nn.Parameter(table)

    def flat(x: Tensor) -> Tensor:  # (B, H, L, dh) -> (B, L, H*dh), as the Linear's output
        return x.transpose(1, 2).reshape(batch, length, heads * head_width)

    layer.query, layer.key, layer.value = _Fixed(flat(q)), _Fixed(flat(k)), _Fixed(flat(v))
    layer.to_out = nn.Identity()
    allowed = torch.ones(length, length, dtype=torch.bool)
    if causal:
        allowed = allowed.tril()

    def softmax(x: Tensor, dim: int) -> Tensor:
        return torch.softmax(x.masked_fill(~allowed, float("-inf")), dim=dim)

    calls: list[tuple[Tensor, Tensor]] = []

    def matmul(a: Tensor, b: Tensor) -> Tensor:
        calls.append((a, b))
        return torch.matmul(a, b)

    fake_nn = types.SimpleNamespace(functional=types.SimpleNamespace(softmax=softmax))
    fake_torch = types.SimpleNamespace(matmul=matmul)
    with mock.patch.object(module, "nn", fake_nn), mock.patch.object(module, "torch", fake_torch):
        out = layer(torch.zeros(batch, length, d_model, dtype=q.dtype))  # (B, L, H*dh)
    assert len(calls) == 2, "Attention_Rel_Scl.forward has two matmuls (q·k, weights·v)"
    return out.reshape(batch, length, heads, head_width).transpose(1, 2), calls[1][0]


# ---------------------------------------------------------------------------------------------
# ConvTran's eRPE (Attention_Rel_Scl)
# ---------------------------------------------------------------------------------------------
def _erpe_rederived(
    q: Tensor, k: Tensor, v: Tensor, w: Tensor, d_model: int, q_pos, k_pos, length: int
) -> tuple[Tensor, Tensor]:
    i, j = _pairs(q_pos, k_pos)
    allowed = j <= i  # (..., Tq, Tk)
    index = i - j + length - 1  # relative_coords[1] += seq_len - 1 (coords are query - key)
    if bool(((index < 0) | (index > 2 * length - 2))[allowed.expand_as(index)].any()):
        raise ValueError("a causal pair is further apart than length - 1: no row of w")
    scale = d_model**-0.5  # ConvTran: emb_size ** -0.5, the full width
    attn = torch.matmul(q, k.transpose(-1, -2)) * scale  # (B, H, Tq, Tk)
    attn = attn.masked_fill(~allowed.unsqueeze(-3), float("-inf"))  # ConvTran has no mask
    attn = torch.softmax(attn, dim=-1)
    relative_bias = w[index.clamp(0, 2 * length - 2)].movedim(-1, -3)  # (..., H, Tq, Tk)
    relative_bias = torch.where(allowed.unsqueeze(-3), relative_bias, 0.0)
    attn = attn + relative_bias  # after the softmax, no renormalisation
    return torch.matmul(attn, v), attn


def erpe_attention(
    q: Tensor,
    k: Tensor,
    v: Tensor,
    w: Tensor,
    d_model: int,
    q_pos: Tensor,
    k_pos: Tensor,
    length: int,
    backend: str = "auto",
) -> tuple[Tensor, Tensor]:
    """ConvTran's `Attention_Rel_Scl` under a causal mask: weights = softmax(q·k * d_model**-0.5,
    masked to -inf where k_pos > q_pos) + w[i - j + length - 1] per head (w (2*length-1, H),
    added after the softmax, only where j <= i); returns (weights · v (B, H, Tq, dh), weights
    (B, H, Tq, Tk)).

    backend "tsai" runs tsai 1.0.1's class (`tsai_erpe_attention`: 8 heads, positions
    0..length-1 only), "rederived" the transcription here (any H, any positions), "auto" tsai
    where it loads and applies, else the transcription."""
    if backend not in ("auto", "tsai", "rederived"):
        raise ValueError(f"backend {backend!r}")
    span = torch.arange(length)
    fits_tsai = (
        q.shape[1] == 8
        and q_pos.dim() == 1
        and k_pos.dim() == 1
        and torch.equal(q_pos.cpu(), span)
        and torch.equal(k_pos.cpu(), span)
    )
    if backend == "tsai" and not fits_tsai:
        raise ValueError("tsai's Attention_Rel_Scl: 8 heads, positions 0..length-1 only")
    if backend == "tsai" or (backend == "auto" and fits_tsai and tsai_convtranplus() is not None):
        return tsai_erpe_attention(q, k, v, w, d_model, length, causal=True)
    return _erpe_rederived(q, k, v, w, d_model, q_pos, k_pos, length)


# ---------------------------------------------------------------------------------------------
# ConvTran's tAPE
# ---------------------------------------------------------------------------------------------
def _tape_rederived(positions: Tensor, d_model: int, length: int) -> Tensor:
    if d_model % 2:
        raise ValueError("tAPE's pe[:, 1::2] = cos(...) needs an even d_model")
    position = positions.to(torch.float)[..., None]  # (..., 1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(*positions.shape, d_model)
    pe[..., 0::2] = torch.sin((position * div_term) * (d_model / length))
    pe[..., 1::2] = torch.cos((position * div_term) * (d_model / length))
    return pe


def tape(positions: Tensor, d_model: int, length: int, backend: str = "auto") -> Tensor:
    """ConvTran's tAPE vectors (..., d_model) at `positions`: even channels sin, odd cos, of
    pos * 10000^(-2m/d_model) * d_model/length, float32. (tAPE itself adds its whole (length,
    d_model) buffer to the input: positions 0..length-1.)

    backend "tsai" reads tsai 1.0.1's `tAPE(d_model, seq_len=length).pe` (positions within
    0..length-1 only), "rederived" computes ConvTran's lines here, "auto" tsai where it loads
    and the positions fit, else the transcription."""
    if backend not in ("auto", "tsai", "rederived"):
        raise ValueError(f"backend {backend!r}")
    inside = bool(((positions >= 0) & (positions < length)).all())
    module = tsai_convtranplus() if backend != "rederived" else None
    if backend == "tsai" and (module is None or not inside):
        raise ValueError(f"tsai's tAPE: {tsai_unavailable() or 'positions outside 0..length-1'}")
    if module is not None and inside:
        table = module.tAPE(d_model, seq_len=length, dropout=0.0).pe[0]  # (length, d_model)
        return table[positions.long().cpu()]
    return _tape_rederived(positions, d_model, length)


# ---------------------------------------------------------------------------------------------
# TUPE (guolinke/TUPE)
# ---------------------------------------------------------------------------------------------
def relative_position_bucket(
    relative_position: Tensor,
    bidirectional: bool = True,
    num_buckets: int = 32,
    max_distance: int = 128,
) -> Tensor:
    """TUPE's `relative_position_bucket` ("this is from T5"), relative_position = key - query."""
    ret = 0
    n = -relative_position
    if bidirectional:
        num_buckets //= 2
        ret += (n < 0).to(torch.long) * num_buckets  # keys after the query: the upper half
        n = torch.abs(n)
    else:
        n = torch.max(n, torch.zeros_like(n))
    max_exact = num_buckets // 2
    is_small = n < max_exact
    val_if_large = max_exact + (
        torch.log(n.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    val_if_large = torch.min(val_if_large, torch.full_like(val_if_large, num_buckets - 1))
    ret += torch.where(is_small, n, val_if_large)
    return ret


def tupe_logits(
    q: Tensor,
    k: Tensor,
    p: Tensor,
    ln_weight: Tensor,
    ln_bias: Tensor,
    uq_weight: Tensor,
    uq_bias: Tensor,
    uk_weight: Tensor,
    uk_bias: Tensor,
    n_heads: int,
    q_pos: Tensor,
    k_pos: Tensor,
    rel_table: Tensor | None = None,
    num_buckets: int = 32,
    max_distance: int = 128,
    ln_eps: float = 1e-5,
) -> Tensor:
    """TUPE's pre-mask logits (B, H, Tq, Tk) (or (H, Tq, Tk)-broadcast positional part):
    (q_i*(2dh)**-0.5)·k_j + ((LN(p)[i] U^Q + b^Q)_h*(2dh)**-0.5)·(LN(p)[j] U^K + b^K)_h
    [+ rel_table[bucket(j - i)]_h, unscaled].

    q, k (B, H, T, dh) are the content projections of the token embeddings alone (TUPE adds no
    position to its input); p (P, d = H*dh) the absolute table, indexed by position; the
    Linear weights are torch's (out, in). TUPE's own table has one extra first row for [CLS]
    (token t reads p[t + 1]) and overrides row/column 0 ([CLS] untying): not done here."""
    head_width, width = q.shape[-1], p.shape[-1]
    if n_heads * head_width != width:
        raise ValueError("TUPE splits the d-wide positional projections into n_heads heads")
    attn_scale_factor = 2
    scaling = float(head_width * attn_scale_factor) ** -0.5  # multi_head_attention_forward
    pos_scaling = float(width / n_heads * attn_scale_factor) ** -0.5  # the encoder's
    content = torch.matmul(q * scaling, k.transpose(-1, -2))  # q = q * scaling; bmm(q, k^T)
    weight = F.layer_norm(p, (width,), ln_weight, ln_bias, ln_eps)  # pos_ln(pos.weight)

    def heads(x: Tensor, positions: Tensor) -> Tensor:  # (..., T, d) -> (..., H, T, dh)
        return x.view(*positions.shape, n_heads, -1).movedim(-2, -3)

    pos_q = heads(F.linear(weight[q_pos], uq_weight, uq_bias), q_pos) * pos_scaling
    pos_k = heads(F.linear(weight[k_pos], uk_weight, uk_bias), k_pos)
    abs_pos_bias = torch.matmul(pos_q, pos_k.transpose(-1, -2))  # (..., H, Tq, Tk)
    if rel_table is not None:
        i, j = _pairs(q_pos, k_pos)
        bucket = relative_position_bucket(j - i, num_buckets=num_buckets, max_distance=max_distance)
        abs_pos_bias = abs_pos_bias + F.embedding(bucket, rel_table).movedim(-1, -3)
    return content + abs_pos_bias  # attn_output_weights += attn_bias


# ---------------------------------------------------------------------------------------------
# FIRE (mcleish7/arithmetic)
# ---------------------------------------------------------------------------------------------
def fire_bias(
    q_pos: Tensor,
    k_pos: Tensor,
    c: float | Tensor,
    threshold: float | Tensor,
    mlp: Callable[[Tensor], Tensor],
    eps: float = 1e-6,
) -> Tensor:
    """FIRE's bias (H, Tq, Tk) ((B, H, Tq, Tk) for (B, T) positions), added to the logits after
    their 1/√dh scaling: mlp(log(|c(i-j)| + 1) / (log(|c·max(i, |threshold|)| + 1) + eps)),
    `threshold` the product L_multiplier * init_L; `mlp` maps (..., 1) to (..., H).
    i - j < 0 (keys after the query) gives the same value as j - i (the abs); a causal mask
    hides them. The normaliser takes the query's position."""
    c = torch.as_tensor(c, dtype=torch.float)
    positions_q, positions_k = q_pos.to(torch.float), k_pos.to(torch.float)
    relative_distances = positions_q[..., :, None] - positions_k[..., None, :]  # i - j
    threshold = torch.abs(torch.as_tensor(threshold, dtype=torch.float))
    position_normalizer = torch.max(positions_q, threshold)[..., :, None]
    relative_distances = torch.log(torch.abs(c * relative_distances) + 1)
    position_normalizer = torch.log(torch.abs(c * position_normalizer) + 1)
    normalized_distances = relative_distances / (position_normalizer + eps)
    return mlp(normalized_distances.unsqueeze(-1)).movedim(-1, -3)  # (..., H, Tq, Tk)


# ---------------------------------------------------------------------------------------------
# CoPE (facebookresearch/RAM)
# ---------------------------------------------------------------------------------------------
def cope_attention(
    query: Tensor, key: Tensor, val: Tensor, pos_emb: Tensor, attn_mask: Tensor
) -> tuple[Tensor, Tensor]:
    """RAM's `ContextPosSelfAttn.forward` (cope_sep_key, cope_val_gates, cope_nodiv off, no
    relative term) on query, key, val (B*H, L, dh), pos_emb (1, dh, npos) and attn_mask
    (B*H or 1, L, L), 1 where a query sees a key and 0 elsewhere; returns (output (B*H, L, dh),
    weights (B*H, L, L)). The position p_ij = sum over m >= j of gate_im (the mask zeroes the
    keys after the query), clamped to npos - 1; q_i·e[p] is interpolated between floor and ceil."""
    npos, head_dim = pos_emb.shape[-1], query.shape[-1]
    gate_logits = torch.bmm(query, key.transpose(-1, -2))  # (B*H, Lq, Lk)
    gates = torch.sigmoid(gate_logits / math.sqrt(head_dim)) * attn_mask
    positions = gates.flip(-1).cumsum(dim=-1).flip(-1).clamp(max=npos - 1)  # (B*H, Lq, Lk)
    pos_logits_fixed = torch.matmul(query, pos_emb)  # (B*H, Lq, npos)
    positions_ceil, positions_floor = positions.ceil().long(), positions.floor().long()
    pos_logits_ceil = pos_logits_fixed.gather(-1, positions_ceil)
    pos_logits_floor = pos_logits_fixed.gather(-1, positions_floor)
    pos_ceil_weight = positions - positions_floor
    pos_logits = pos_logits_ceil * pos_ceil_weight + pos_logits_floor * (1 - pos_ceil_weight)
    attn_logits = (gate_logits + pos_logits) / math.sqrt(head_dim)  # added, then divided
    attn = torch.softmax(attn_logits + attn_mask.log(), dim=-1)
    return torch.bmm(attn, val), attn


# ---------------------------------------------------------------------------------------------
# DAPE over Kerple-log (chuanyang-Zheng/DAPE)
# ---------------------------------------------------------------------------------------------
def dape_kerple_scores(
    x: Tensor, bias_p: Tensor, bias_a: Tensor, mlp: Callable[[Tensor], Tensor], eps: float = 1e-2
) -> Tensor:
    """DAPE.py's `ParallelKerpleLog_DAPE.forward` on the scaled scores x (B, H, L, L) (megatron
    divides q·k by sqrt(dh) before the call and masks after it): the Kerple-log bias
    -p·log(1 + a·diff), diff = tril(i - j) (0 above the diagonal), p and a (H,) clamped at eps;
    then x + bias + mlp(cat([x, bias], heads)), the MLP (2H -> H) on each pair's heads."""
    length = x.shape[-1]
    diff = torch.tril(
        torch.arange(length).view(length, 1).repeat(1, length) + torch.arange(0, -length, -1)
    ).to(x.dtype)  # (L, L)
    p = bias_p.clamp(min=eps)[:, None, None]
    a = bias_a.clamp(min=eps)[:, None, None]
    bias = -p * torch.log(1 + a * diff)  # (H, L, L)
    x_a_bias = torch.cat((x, torch.tile(bias, (x.shape[0], 1, 1, 1))), dim=1)  # (B, 2H, L, L)
    x_a_bias = mlp(x_a_bias.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)  # (B, H, L, L)
    return x + bias + x_a_bias
