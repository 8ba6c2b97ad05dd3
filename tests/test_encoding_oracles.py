"""Self-tests of tests/encoding_oracles.py: the sources' worked examples, the limits where an
encoding reduces to plain attention or a plain sinusoid, and, where tsai 1.0.1 loads, that its
ConvTran classes and the transcriptions agree."""

import math

import encoding_oracles as oracles
import pytest
import torch
import torch.nn.functional as F
from torch import nn

needs_tsai = pytest.mark.skipif(
    oracles.tsai_unavailable() is not None,
    reason=f"tsai's ConvTranPlus does not load: {oracles.tsai_unavailable()}",
)


def randn(*shape: int, seed: int = 0) -> torch.Tensor:
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed))


def qkv(b: int, h: int, t: int, dh: int) -> tuple[torch.Tensor, ...]:
    return randn(b, h, t, dh, seed=1), randn(b, h, t, dh, seed=2), randn(b, h, t, dh, seed=3)


def test_shaw_with_zero_tables_is_causal_softmax_attention():
    q, k, v = qkv(2, 3, 6, 4)
    zeros = torch.zeros(2 * 2 + 1, 4)
    pos = torch.arange(6)
    out = oracles.shaw_attention(q, k, v, zeros, zeros, 2, pos, pos)
    assert torch.allclose(out, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-6)


def test_shaw_matches_the_formula_term_by_term():
    """softmax_j((q_i·(k_j + a_k[clip(j-i)]))/√dh, j <= i) · (v_j + a_v[clip(j-i)]), for
    positions per batch row, against a loop over (b, h, i, j)."""
    clip, (b, h, t, dh) = 2, (2, 2, 5, 4)
    q, k, v = qkv(b, h, t, dh)
    a_k, a_v = randn(2 * clip + 1, dh, seed=4), randn(2 * clip + 1, dh, seed=5)
    pos = torch.tensor([[0, 1, 2, 3, 4], [3, 4, 6, 9, 10]])
    out = oracles.shaw_attention(q, k, v, a_k, a_v, clip, pos, pos)
    for bi in range(b):
        for hi in range(h):
            for i in range(t):
                js = [j for j in range(t) if pos[bi, j] <= pos[bi, i]]
                rel = [int(pos[bi, j] - pos[bi, i]) for j in js]
                rows = [max(-clip, min(clip, r)) + clip for r in rel]
                logits = torch.stack(
                    [q[bi, hi, i] @ (k[bi, hi, j] + a_k[r]) for j, r in zip(js, rows)]
                ) / math.sqrt(dh)
                alpha = torch.softmax(logits, 0)
                want = sum(a * (v[bi, hi, j] + a_v[r]) for a, j, r in zip(alpha, js, rows))
                assert torch.allclose(out[bi, hi, i], want, atol=1e-5)


# eRPE ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("heads", [2, 8])  # 8 heads go through tsai's class when it loads
def test_erpe_with_zero_table_is_softmax_attention_at_d_model_scale(heads):
    length, dh = 6, 4
    d_model = heads * dh
    q, k, v = qkv(2, heads, length, dh)
    pos = torch.arange(length)
    w = torch.zeros(2 * length - 1, heads)
    out, weights = oracles.erpe_attention(q, k, v, w, d_model, pos, pos, length)
    want = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=d_model**-0.5)
    assert torch.allclose(out, want, atol=1e-6)
    assert torch.allclose(weights.sum(-1), torch.ones(2, heads, length), atol=1e-6)


def test_erpe_adds_w_after_the_softmax_only_where_causal():
    length, heads, dh = 5, 2, 4
    q, k, v = qkv(1, heads, length, dh)
    w = randn(2 * length - 1, heads, seed=6)
    pos = torch.arange(length)
    _, weights = oracles.erpe_attention(q, k, v, w, heads * dh, pos, pos, length)
    _, plain = oracles.erpe_attention(q, k, v, 0 * w, heads * dh, pos, pos, length)
    for i in range(length):
        for j in range(length):
            bias = w[i - j + length - 1] if j <= i else torch.zeros(heads)
            assert torch.allclose(weights[0, :, i, j] - plain[0, :, i, j], bias, atol=1e-6)


@needs_tsai
def test_erpe_tsai_and_the_transcription_agree():
    length, heads, dh = 7, 8, 2
    q, k, v = qkv(2, heads, length, dh)
    w = randn(2 * length - 1, heads, seed=7)
    pos = torch.arange(length)
    via_tsai = oracles.erpe_attention(q, k, v, w, 12, pos, pos, length, backend="tsai")
    rederived = oracles.erpe_attention(q, k, v, w, 12, pos, pos, length, backend="rederived")
    for a, b in zip(via_tsai, rederived):
        assert torch.allclose(a, b, atol=1e-6)


@needs_tsai
def test_tsai_erpe_unmasked_indexes_w_by_query_minus_key():
    """tsai's class as it ships (no mask): softmax(q·k/√d_model) + w[i - j + L - 1]."""
    length, heads, dh = 4, 8, 2
    q, k, v = qkv(1, heads, length, dh)
    w = randn(2 * length - 1, heads, seed=8)
    _, weights = oracles.tsai_erpe_attention(q, k, v, w, 16, length, causal=False)
    soft = torch.softmax(q @ k.transpose(-1, -2) * 16**-0.5, -1)
    for i in range(length):
        for j in range(length):
            want = soft[0, :, i, j] + w[i - j + length - 1]
            assert torch.allclose(weights[0, :, i, j], want, atol=1e-6)


# tAPE ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("backend", ["auto", "rederived"])
def test_tape_at_length_d_model_is_the_vaswani_sinusoid(backend):
    d_model = 8
    pos = torch.arange(d_model)
    pe = oracles.tape(pos, d_model, d_model, backend=backend)
    angle = pos[:, None].double() / 10000 ** (torch.arange(0, d_model, 2).double() / d_model)
    want = torch.stack([angle.sin(), angle.cos()], -1).flatten(1)  # sin, cos interleaved
    assert torch.allclose(pe.double(), want, atol=1e-6)


def test_tape_scales_the_angle_by_d_model_over_length():
    d_model, length = 8, 32
    pos = torch.tensor([0, 5, 31])
    short = oracles.tape(pos, d_model, length, backend="rederived")
    angle = (pos[:, None].double() * d_model / length) / 10000 ** (
        torch.arange(0, d_model, 2).double() / d_model
    )
    assert torch.allclose(short[:, 0::2].double(), angle.sin(), atol=1e-6)
    assert torch.allclose(short[:, 1::2].double(), angle.cos(), atol=1e-6)


@needs_tsai
def test_tape_tsai_and_the_transcription_agree():
    pos = torch.arange(24)
    for d_model in (4, 16):
        via_tsai = oracles.tape(pos, d_model, 24, backend="tsai")
        assert torch.equal(via_tsai, oracles.tape(pos, d_model, 24, backend="rederived"))


# FIRE ----------------------------------------------------------------------------------------
def fire_mlp(heads: int = 3) -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(1, 32), nn.ReLU(), nn.Linear(32, heads))


@torch.no_grad()
def test_fire_is_shift_invariant_below_the_threshold():
    mlp, pos = fire_mlp(), torch.arange(10)
    bias = oracles.fire_bias(pos, pos, 0.1, 16.0, mlp)
    shifted = oracles.fire_bias(pos + 5, pos + 5, 0.1, 16.0, mlp)  # every i + 5 < 16
    assert bias.shape == (3, 10, 10)
    assert torch.equal(bias, shifted)
    beyond = oracles.fire_bias(pos + 20, pos + 20, 0.1, 16.0, mlp)
    assert not torch.allclose(bias, beyond)


def test_fire_normalises_by_psi_of_the_query_position_beyond_the_threshold():
    c, threshold, eps = 0.1, 8.0, 1e-6
    q_pos, k_pos = torch.tensor([3, 12, 40]), torch.arange(45)
    bias = oracles.fire_bias(q_pos, k_pos, c, threshold, lambda x: x)  # the identity "MLP"
    assert bias.shape == (1, 3, 45)

    def psi(x):
        return math.log(abs(c * x) + 1)

    for a, i in enumerate(q_pos.tolist()):
        for j in k_pos.tolist():
            want = psi(i - j) / (psi(max(i, threshold)) + eps)  # |.|: i - j < 0 as j - i
            assert bias[0, a, j].item() == pytest.approx(want, rel=1e-5, abs=1e-7)


def test_fire_takes_the_threshold_as_its_absolute_value():
    pos = torch.arange(6)
    assert torch.equal(
        oracles.fire_bias(pos, pos, 0.1, -8.0, lambda x: x),
        oracles.fire_bias(pos, pos, 0.1, 8.0, lambda x: x),
    )


# TUPE ----------------------------------------------------------------------------------------
def tupe_parameters(d: int, seed: int = 10) -> dict[str, torch.Tensor]:
    names = ("ln_weight", "ln_bias", "uq_weight", "uq_bias", "uk_weight", "uk_bias")
    shapes = ((d,), (d,), (d, d), (d,), (d, d), (d,))
    return {n: randn(*s, seed=seed + a) for a, (n, s) in enumerate(zip(names, shapes))}


def test_tupe_with_zero_positional_projections_is_content_over_sqrt_2dh():
    b, h, t, dh = 2, 2, 5, 4
    q, k, _ = qkv(b, h, t, dh)
    params = tupe_parameters(h * dh)
    for name in ("uq_weight", "uq_bias", "uk_weight", "uk_bias"):
        params[name] = torch.zeros_like(params[name])
    p, pos = randn(t, h * dh, seed=20), torch.arange(t)
    logits = oracles.tupe_logits(q, k, p, **params, n_heads=h, q_pos=pos, k_pos=pos)
    assert torch.allclose(logits, q @ k.transpose(-1, -2) / math.sqrt(2 * dh), atol=1e-6)


def test_tupe_positional_term_is_scaled_by_sqrt_2dh_and_split_per_head():
    """U^Q = U^K = 0 with biases b^Q, b^K: the positional term is b^Q_h·b^K_h/√(2dh)."""
    h, dh, t = 2, 4, 3
    params = tupe_parameters(h * dh)
    params["uq_weight"] = torch.zeros_like(params["uq_weight"])
    params["uk_weight"] = torch.zeros_like(params["uk_weight"])
    zeros, pos = torch.zeros(1, h, t, dh), torch.arange(t)
    logits = oracles.tupe_logits(
        zeros, zeros, randn(t, h * dh, seed=21), **params, n_heads=h, q_pos=pos, k_pos=pos
    )
    per_head = (params["uq_bias"].view(h, dh) * params["uk_bias"].view(h, dh)).sum(-1)
    want = (per_head / math.sqrt(2 * dh))[None, :, None, None].expand(1, h, t, t)
    assert torch.allclose(logits, want, atol=1e-6)


@torch.no_grad()
def test_tupe_matches_the_encoders_lines_with_modules():
    """TUPE's TransformerSentenceEncoder lines with its modules (CLS row dropped), and its
    rp_bucket lookup, against the oracle at positions 0..T-1."""
    b, h, dh, t = 2, 2, 4, 40
    d = h * dh
    q, k, _ = qkv(b, h, t, dh)
    pos_ln, pos_q_linear, pos_k_linear = nn.LayerNorm(d), nn.Linear(d, d), nn.Linear(d, d)
    table = nn.Embedding(33, h)
    for module in (pos_ln, pos_q_linear, pos_k_linear, table):
        for param in module.parameters():
            param.copy_(randn(*param.shape, seed=param.numel()))
    p = randn(t, d, seed=30)
    weight = pos_ln(p[:t, :])
    pos_scaling = float(d / h * 2) ** -0.5
    pos_q = pos_q_linear(weight).view(t, h, -1).transpose(0, 1) * pos_scaling
    pos_k = pos_k_linear(weight).view(t, h, -1).transpose(0, 1)
    abs_pos_bias = torch.bmm(pos_q, pos_k.transpose(1, 2))
    relative_position = torch.arange(t)[None, :] - torch.arange(t)[:, None]  # memory - context
    rp_bucket = oracles.relative_position_bucket(relative_position, num_buckets=32)
    abs_pos_bias += F.embedding(rp_bucket, table.weight).permute([2, 0, 1])
    scaling = float(dh * 2) ** -0.5
    want = torch.matmul(q * scaling, k.transpose(-1, -2)) + abs_pos_bias
    pos = torch.arange(t)
    got = oracles.tupe_logits(
        q, k, p, pos_ln.weight, pos_ln.bias, pos_q_linear.weight, pos_q_linear.bias,
        pos_k_linear.weight, pos_k_linear.bias, h, pos, pos, rel_table=table.weight,
    )  # fmt: skip
    assert torch.allclose(got, want, atol=1e-5)


def test_relative_position_bucket_values_and_t5():
    """key - query: 0 -> 0, one key back -> 1, one ahead -> 17, 8 back -> 8, 16 back -> 10,
    far back -> 15 (16 exact-or-log buckets each side, max distance 128)."""
    spots = {0: 0, -1: 1, 1: 17, -7: 7, -8: 8, -16: 10, -127: 15, -128: 15, -1000: 15, 200: 31}
    got = oracles.relative_position_bucket(torch.tensor(list(spots)))
    assert got.tolist() == list(spots.values())
    t5 = pytest.importorskip("transformers.models.t5.modeling_t5")
    relative = torch.arange(-300, 301)
    assert torch.equal(
        oracles.relative_position_bucket(relative),
        t5.T5Attention._relative_position_bucket(relative, True, 32, 128),
    )
