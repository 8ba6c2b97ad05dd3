"""The encodings of k and t: each against a reference implementation, numerically, or by its
defining property where no package implements it; shared checks over the whole registry; and
the study's three models computing bit for bit what they computed at 86a615c."""

import math
import subprocess
import sys
from pathlib import Path

import pytest
import reference_outputs
import torch
from conftest import ROOT, model_config

from dtpe.model import catalog, encodings
from dtpe.model.encodings.alibi import alibi_slopes
from dtpe.model.encodings.rope import scaled_inv_freq
from dtpe.model.encodings.t5 import relative_bucket
from dtpe.model.state_encoders import STATE_ENCODERS
from dtpe.model.transformer import DecisionTransformer, KVCache

torch.set_num_threads(1)
CFG = {
    k: v
    for k, v in dict(reference_outputs.SHAPE, dropout=0.0, attention_dropout=0.0).items()
    if k not in ("t_table", "t_max_offset")
}
K_NAMES = sorted(encodings.REGISTRY["k"])
T_NAMES = sorted(encodings.REGISTRY["t"])
VARIANTS = list(K_NAMES) + [f"rope-t_{t}" for t in T_NAMES if t != "sinusoidal"]


def make(variant: str, seed: int = 0, **kw) -> DecisionTransformer:
    torch.manual_seed(seed)
    model = DecisionTransformer(model_config(variant, CFG, **kw)).eval()
    with torch.no_grad():  # biases start at 0 or 1 everywhere: randomize them so they matter
        for name, p in model.named_parameters():
            if "encoding" in name:
                p.add_(torch.randn_like(p) * 0.5)
    return model


def batch(size: int = 8, b: int = 2, t: int = 6, t0: int = 0, seed: int = 0):
    g = torch.Generator().manual_seed(seed)
    states = torch.randint(0, 3, (b, t, size, size), generator=g, dtype=torch.uint8)
    rtg = torch.rand(b, t, generator=g)
    actions = torch.randint(0, 4, (b, t), generator=g)
    timesteps = torch.arange(t)[None].repeat(b, 1) + t0
    return rtg, states, actions, timesteps


def logits(model, rtg, states, actions, timesteps, **kw):
    with torch.no_grad():
        return model(rtg, model.encode_states(states), actions, timesteps, **kw)


# --- the study's three models, unchanged -------------------------------------------------------


@pytest.mark.parametrize("encoding", reference_outputs.STUDY)
def test_study_models_compute_what_they_did_at_86a615c(encoding):
    stored = torch.load(
        Path(__file__).parent / "data" / "study_encodings_86a615c.pt", weights_only=True
    )[encoding]
    now = reference_outputs.outputs(encoding)
    assert stored.keys() == now.keys()
    for key in stored:
        if stored[key].is_floating_point():
            # Bit for bit only on a CPU with the same kernels as the one that wrote them: an
            # AVX-512 machine sums in another order and moves the last bit (measured: 3e-7).
            torch.testing.assert_close(
                now[key], stored[key], rtol=1e-5, atol=1e-6, msg=f"{encoding}: {key} differs"
            )
        else:
            assert torch.equal(stored[key], now[key]), f"{encoding}: {key} differs from 86a615c"


# --- variant names -----------------------------------------------------------------------------


def test_variant_names_are_read_and_bad_names_are_named():
    assert encodings.variant("rope") == encodings.Variant("rope", "sinusoidal")
    assert encodings.variant("nope-t_none") == encodings.Variant("nope", "none")
    for v in VARIANTS:
        parsed = encodings.variant(v)
        assert (parsed.k, parsed.t) in {(v, "sinusoidal"), ("rope", v.removeprefix("rope-t_"))}
    with pytest.raises(ValueError, match="unknown t encoding 'bogus'"):
        encodings.variant("rope-t_bogus")
    with pytest.raises(ValueError, match="unknown k encoding 'bogus'"):
        encodings.variant("bogus")
    with pytest.raises(ValueError, match="is not `<k>`"):
        encodings.variant("rope_t-none")


def test_the_catalog_names_what_the_registries_hold():
    """params validation reads the names from the modules' source (no torch): they must be the
    registries' own."""
    assert catalog.encodings() == {axis: set(encodings.REGISTRY[axis]) for axis in catalog.AXES}
    assert catalog.state_encoders() == set(STATE_ENCODERS)


def test_validating_params_imports_no_torch():
    code = "import sys; from dtpe import params; params.load('params.yaml'); print('torch' in sys.modules)"  # noqa: E501
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert out.stdout.strip() == "False", out.stderr


def test_at_least_nine_encodings_each_with_a_reference():
    entries = [c for axis in encodings.AXES for c in encodings.REGISTRY[axis].values()]
    assert len(entries) >= 9
    assert all(c.reference for c in entries)


def test_sources_name_only_the_variants_modules():
    files = encodings.sources("alibi-t_learned")
    assert "dtpe/model/encodings/alibi.py" in files and "dtpe/model/encodings/t_learned.py" in files
    assert "dtpe/model/encodings/base.py" in files and "dtpe/model/encodings/__init__.py" in files
    assert "dtpe/model/encodings/rope.py" not in files
    assert "dtpe/model/encodings/rope.py" in encodings.sources("xpos")  # xpos builds on rope


# --- shared checks over every registered encoding ----------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("size", [8, 13])
def test_causal_finite_and_any_grid_size(variant, size):
    model = make(variant)
    rtg, states, actions, timesteps = batch(size)
    base = logits(model, rtg, states, actions, timesteps)
    assert torch.isfinite(base).all()
    later = 3
    rtg2, states2, actions2 = rtg.clone(), states.clone(), actions.clone()
    rtg2[:, later:] += 1.0
    actions2[:, later - 1 :] = (actions2[:, later - 1 :] + 1) % 4  # the action after a state
    states2[:, later:] = (states2[:, later:] + 1) % 3
    changed = logits(model, rtg2, states2, actions2, timesteps)
    assert torch.equal(base[:, :later], changed[:, :later]), "a future token changed the past"
    assert not torch.equal(base[:, later:], changed[:, later:])


@pytest.mark.parametrize("variant", VARIANTS)
def test_cached_steps_equal_the_full_window(variant):
    """The KV cache (evaluation's path) gives each step's logits as one pass over the window:
    this checks the keys' positions a bias sees under the cache."""
    model = make(variant)
    rtg, states, actions, timesteps = batch(t=CFG["context"], t0=7)
    full = logits(model, rtg, states, actions, timesteps)
    emb = model.encode_states(states)
    cache = KVCache(len(model.blocks), 2, 3 * CFG["context"])
    with torch.no_grad():
        for n in range(1, CFG["context"] + 1):
            step = model.next_action(
                rtg[:, :n], emb[:, :n], actions[:, :n], timesteps[:, :n], cache
            )
            torch.testing.assert_close(step, full[:, n - 1], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("variant", VARIANTS)
def test_attention_weights_path_equals_the_fused_one(variant):
    model = make(variant)
    args = batch()
    fused = logits(model, *args)
    with_weights, weights = logits(model, *args, need_attention=True)
    torch.testing.assert_close(fused, with_weights, rtol=1e-5, atol=1e-5)
    if model.k_encoding.after_softmax(encodings.Span(torch.arange(1), torch.arange(1)), 0) is None:
        torch.testing.assert_close(weights.sum(-1), torch.ones_like(weights.sum(-1)))


# --- k encodings: references and properties ----------------------------------------------------


@pytest.mark.parametrize("heads", [1, 2, 4, 6, 8, 12])
def test_alibi_matches_x_transformers(heads):
    from x_transformers.x_transformers import AlibiPositionalBias

    ref = AlibiPositionalBias(heads=heads, total_heads=heads)
    torch.testing.assert_close(alibi_slopes(heads), ref.slopes.flatten(), rtol=0, atol=0)
    cfg = model_config("alibi", CFG, n_heads=heads, d_model=4 * heads)
    ours = encodings.create("k", "alibi", cfg)
    pos = torch.arange(10)
    torch.testing.assert_close(ours.bias(pos, pos), ref(10, 10).float())


def test_t5_buckets_match_transformers():
    from transformers.models.t5.modeling_t5 import T5Attention

    relative = torch.arange(-300, 300)[None, :] - torch.arange(0, 5)[:, None]
    want = T5Attention._relative_position_bucket(
        relative, bidirectional=False, num_buckets=32, max_distance=128
    )
    assert torch.equal(relative_bucket(relative), want)


def test_t5_bias_reads_one_learned_entry_per_head_and_bucket():
    model = make("t5")
    enc = model.k_encoding
    pos = torch.arange(40)
    bias = enc.bias(pos, pos)
    buckets = relative_bucket(pos[None, :] - pos[:, None])
    assert torch.equal(bias, enc.table.weight[buckets].permute(2, 0, 1))


def _hf_rope(rope_type, factor, seq_len=None, head_dim=16, context=30):
    from transformers import LlamaConfig
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

    rope = {"rope_type": rope_type, "factor": factor, "rope_theta": 10000.0}
    if rope_type == "yarn":
        rope["original_max_position_embeddings"] = context
    config = LlamaConfig(
        hidden_size=head_dim * 4,
        num_attention_heads=4,
        max_position_embeddings=context,
        rope_parameters=rope,
    )
    return ROPE_INIT_FUNCTIONS[rope_type](config, "cpu", seq_len=seq_len)


@pytest.mark.parametrize("context", [45, 60, 90])
@pytest.mark.parametrize("head_dim", [8, 16, 32])
def test_rope_scalings_match_transformers(context, head_dim):
    s = context / 30
    cases = {
        "linear": _hf_rope("linear", s, head_dim=head_dim),
        # NTK-aware: transformers' dynamic at factor 1 is base * (seq_len / max)^(d/(d-2))
        "ntk": _hf_rope("dynamic", 1.0, seq_len=context, head_dim=head_dim),
        "yarn": _hf_rope("yarn", s, head_dim=head_dim),
    }
    for scaling, (inv_freq, factor) in cases.items():
        ours, our_factor = scaled_inv_freq(scaling, s, head_dim, 30)
        torch.testing.assert_close(ours, inv_freq, rtol=1e-5, atol=1e-7, msg=scaling)
        assert our_factor == pytest.approx(factor, rel=1e-12), scaling
    assert cases["yarn"][1] == pytest.approx(0.1 * math.log(s) + 1)


def test_rope_scaling_applies_beyond_the_training_context_only():
    model = make("rope")
    args = batch(t=6)
    trained = logits(model, *args)
    for scaling in ("none", "linear", "ntk", "yarn"):
        with model.at_context(CFG["context"], scaling):
            assert torch.equal(logits(model, *args), trained), scaling
    with model.at_context(3 * CFG["context"], "none"):
        assert torch.equal(logits(model, *args), trained)
    with model.at_context(3 * CFG["context"], "linear"):
        assert not torch.allclose(logits(model, *args), trained)
    assert torch.equal(logits(model, *args), trained)  # undone on leaving
    with pytest.raises(encodings.NotApplicable, match="no scaling 'bogus'"):
        with model.at_context(60, "bogus"):
            pass
    with pytest.raises(encodings.NotApplicable, match="no 'linear' scaling"):
        with make("alibi").at_context(60, "linear"):
            pass


def test_a_scaled_context_is_undone_when_an_error_cuts_it_short():
    model = make("rope")
    args = batch(t=6)
    trained = logits(model, *args)
    with pytest.raises(RuntimeError, match="cut short"):
        with model.at_context(3 * CFG["context"], "yarn"):
            raise RuntimeError("cut short")
    assert torch.equal(logits(model, *args), trained)


def test_linear_scaling_is_position_interpolation():
    """Rope with linear scaling by s rotates position m as the trained rope rotates m / s."""
    model = make("rope")
    enc = model.k_encoding
    q, k = torch.randn(2, 1, 2, 12, CFG["d_model"] // CFG["n_heads"])
    pos = torch.arange(12) * 2
    enc.for_context(2 * CFG["context"], "linear")
    scaled = enc.rotate(q, k, pos)
    enc.for_context(CFG["context"])
    plain = enc.rotate(q, k, pos / 2)
    for a, b in zip(scaled, plain):
        torch.testing.assert_close(a, b)


def test_xpos_matches_rotary_embedding_torch():
    from rotary_embedding_torch import RotaryEmbedding

    head_dim, n = 16, 20
    ref = RotaryEmbedding(head_dim, use_xpos=True)
    q, k = torch.randn(2, 1, 2, n, head_dim, dtype=torch.float64).float()
    rq, rk = ref.rotate_queries_and_keys(q, k)
    want = rq @ rk.transpose(-1, -2)
    # rotary-embedding-torch pairs (2i, 2i+1); this rope pairs (i, i + d/2)
    halves = torch.cat([torch.arange(0, head_dim, 2), torch.arange(1, head_dim, 2)])
    cfg = model_config("xpos", CFG, d_model=head_dim * 2, n_heads=2)
    oq, ok = encodings.create("k", "xpos", cfg).rotate(
        q[..., halves], k[..., halves], torch.arange(n)
    )
    torch.testing.assert_close(oq @ ok.transpose(-1, -2), want, rtol=1e-4, atol=1e-4)


RELATIVE = ["rope", "xpos", "alibi", "t5", "kerple", "nope", "shaw"]


@pytest.mark.parametrize("k", RELATIVE)
def test_relative_encodings_are_invariant_to_shifting_every_k(k):
    model = make(k)
    args = batch()
    a, wa = logits(model, *args, need_attention=True)
    b, wb = logits(model, *args, k_offset=40, need_attention=True)
    torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(wa, wb, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("k", ["alibi", "t5", "kerple"])
def test_biases_depend_on_distance_alone_and_decay_or_learn(k):
    enc = make(k).k_encoding
    pos = torch.arange(12)
    assert torch.equal(enc.bias(pos, pos), enc.bias(pos + 100, pos + 100))
    bias = enc.bias(pos, pos)
    assert bias.shape == (CFG["n_heads"], 12, 12)


def test_kerple_is_its_formula():
    enc = make("kerple").k_encoding
    r1 = torch.nn.functional.softplus(enc.raw_r1)
    r2 = torch.nn.functional.softplus(enc.raw_r2)
    pos = torch.arange(5)
    d = (pos[:, None] - pos[None, :]).abs()
    want = -r1[:, None, None] * torch.log1p(r2[:, None, None] * d)
    torch.testing.assert_close(enc.bias(pos, pos), want)


def test_nope_adds_nothing():
    enc = make("nope").k_encoding
    x, q, k = torch.randn(3, 2, 2, 6, 16)
    pos = torch.arange(6)
    assert enc.add_to_input(x, pos) is x
    assert enc.rotate(q, k, pos) == (q, k)
    span = encodings.Span(pos, pos)
    assert enc.prepare(span) is None and enc.score(q, span, 0) is None
    assert enc.after_softmax(span, 0) is None and enc.value_term(q, span, 0) is None
    assert not list(enc.parameters())


# --- t encodings ------------------------------------------------------------------------------


def test_t_none_ignores_t_and_sinusoidal_t_does_not():
    rtg, states, actions, timesteps = batch()
    none = make("nope-t_none")
    assert torch.equal(
        logits(none, rtg, states, actions, timesteps),
        logits(none, rtg, states, actions, timesteps + 50),
    )
    sin = make("nope")
    assert not torch.allclose(
        logits(sin, rtg, states, actions, timesteps),
        logits(sin, rtg, states, actions, timesteps + 50),
    )


def test_learned_t_clamps_past_its_table():
    enc = make("rope-t_learned", options={"t": {"learned": {"table": 10}}}).t_encoding
    x = torch.zeros(1, 3, 3, CFG["d_model"])
    t = torch.tensor([[9, 10, 500]])[..., None]
    out = enc.add_to_input(x, t)
    assert torch.equal(out[0, 1], out[0, 0]) and torch.equal(out[0, 2], out[0, 0])
    assert torch.equal(out[0, 0, 0], enc.table.weight[9])


def test_randomized_t_offsets_windows_in_training_only():
    model = make("rope-t_randomized", options={"t": {"randomized": {"max_offset": 50}}})
    enc = model.t_encoding
    x = torch.zeros(64, 4, 3, CFG["d_model"])
    t = torch.arange(4)[None, :, None].repeat(64, 1, 1)
    from dtpe.model.encodings.sinusoidal import sinusoids

    plain = x + sinusoids(t, CFG["d_model"])
    assert torch.equal(enc.add_to_input(x, t), plain)  # eval: no offset
    enc.train()
    torch.manual_seed(3)
    shifted = enc.add_to_input(x, t)
    offsets = []
    for row in range(64):  # each window is the sinusoid of t + o, one o per window
        match = [
            o for o in range(51) if torch.allclose(shifted[row], x[row] + sinusoids(t[row] + o, 32))
        ]
        assert len(match) == 1
        offsets.append(match[0])
    assert len(set(offsets)) > 10 and max(offsets) <= 50
