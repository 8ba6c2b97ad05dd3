"""The encodings of the study's sources that the first seam could not hold (Shaw, eRPE, TUPE and
TUPE-R, tAPE, FIRE), each through a model's own attention layer against its reference
(tests/encoding_oracles.py: the reference code re-derived, or tsai's own classes where they
load), and each one's defining property. The shared checks (causality, the cache, the weights
path) run over every registered encoding in tests/test_encodings.py."""

import math

import encoding_oracles as oracle
import pytest
import torch
from test_encodings import CFG, batch, logits, make

from dtpe.model import encodings

torch.set_num_threads(1)
B, T = 2, 6


LAYERS = 3
"""layers of the models whose encodings hold parameters per layer: each layer is checked against
its reference with its own parameters (a model reading layer 0's everywhere fails at 1 and 2)"""


def attention_layer(variant: str, dtype: torch.dtype = torch.float32, layer: int = 0, **kw):
    """Layer `layer`'s attention of a `variant` model in `dtype`, its output projection the
    identity, so that its output is the heads' mix of values; and a call returning (q, k, v, out)
    for inputs whose tokens have the positions `positions` (one k per token, so the model's
    causal mask by token order is the oracles' by position)."""
    if layer:
        kw.setdefault("n_layers", LAYERS)
    model = make(variant, **kw).to(dtype)
    attn = model.blocks[layer].attn
    d, heads = model.cfg.d_model, model.cfg.n_heads
    with torch.no_grad():
        attn.proj.weight.copy_(torch.eye(d))
        attn.proj.bias.zero_()

    def run(positions, times=None, seed=0):
        x = torch.randn(
            B, len(positions), d, generator=torch.Generator().manual_seed(seed), dtype=dtype
        )
        times = positions[None].repeat(B, 1) if times is None else times
        with torch.no_grad():
            q, k, v = attn.qkv(x).view(B, len(positions), 3, heads, -1).permute(2, 0, 3, 1, 4)
            out, _ = attn(x, layer, model.attending(positions, positions, times, times))
        return q, k, v, out.view(B, len(positions), heads, -1).transpose(1, 2)

    return model, run


def causal_softmax(logits, positions):
    hidden = positions[None, :] > positions[:, None]
    return logits.masked_fill(hidden, float("-inf")).softmax(-1)


POSITIONS = torch.arange(T)


# --- Shaw et al. 2018 ---------------------------------------------------------------------------


@pytest.mark.parametrize("layer", range(LAYERS))
@pytest.mark.parametrize("clip", [1, 3, 16])
def test_shaw_matches_tensor2tensor(clip, layer):
    model, run = attention_layer("shaw", layer=layer, options={"k": {"shaw": {"clip": clip}}})
    enc = model.k_encoding
    q, k, v, out = run(POSITIONS)
    want = oracle.shaw_attention(
        q, k, v, enc.keys[layer].detach(), enc.values[layer].detach(), clip, POSITIONS, POSITIONS
    )
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def test_shaw_has_a_table_pair_per_layer_and_clips_far_distances():
    enc = make("shaw", options={"k": {"shaw": {"clip": 2}}}).k_encoding
    assert enc.keys.shape == enc.values.shape == (CFG["n_layers"], 5, CFG["d_model"] // 2)
    span = encodings.Span(torch.tensor([50]), torch.arange(51))
    assert enc.index(span)[0, :-2].eq(0).all()  # every key 2 or more behind: the end row


# --- eRPE (ConvTran) ----------------------------------------------------------------------------


@pytest.mark.parametrize("layer", range(LAYERS))
@pytest.mark.parametrize("heads", [2, 8])
def test_erpe_matches_convtran(heads, layer):
    """8 heads run tsai's own Attention_Rel_Scl (it hard-codes 8); 2, the re-derived one."""
    if heads == 8 and oracle.tsai_unavailable():
        pytest.fail(f"tsai's ConvTranPlus does not load: {oracle.tsai_unavailable()}")
    model, run = attention_layer("erpe", layer=layer, n_heads=heads, d_model=4 * heads)
    enc = model.k_encoding
    q, k, v, out = run(POSITIONS)
    want, _ = oracle.erpe_attention(
        q, k, v, enc.table[layer].detach(), model.cfg.d_model, POSITIONS, POSITIONS, CFG["context"]
    )
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def test_erpe_adds_after_the_softmax_and_cannot_reach_past_its_offsets():
    model = make("erpe")
    _, weights = logits(model, *batch(), need_attention=True)
    assert not torch.allclose(weights.sum(-1), torch.ones_like(weights.sum(-1)))
    assert (weights.triu(1) == 0).all(), "a key after its query got weight"
    with pytest.raises(encodings.NotApplicable, match="'erpe' represents k up to 5"):
        with model.at_context(2 * CFG["context"]):
            pass


# --- tAPE (ConvTran) ----------------------------------------------------------------------------


@pytest.mark.parametrize("d_model", [16, 32, 64])
def test_tape_matches_convtran(d_model):
    enc = make("tape", d_model=d_model, n_heads=2).k_encoding
    positions = torch.arange(CFG["context"])
    added = enc.add_to_input(torch.zeros(len(positions), d_model), positions)
    want = oracle.tape(positions, d_model, CFG["context"])
    torch.testing.assert_close(added, want, rtol=1e-5, atol=1e-5)
    later = torch.arange(CFG["context"], 3 * CFG["context"])  # unbounded: the same sinusoids
    torch.testing.assert_close(
        enc.add_to_input(torch.zeros(len(later), d_model), later),
        oracle.tape(later, d_model, CFG["context"], backend="rederived"),
        rtol=1e-5,
        atol=1e-5,
    )


# --- TUPE (Ke et al. 2021) ----------------------------------------------------------------------


@pytest.mark.parametrize("variant", ["tupe", "tuper"])
def test_tupe_matches_its_reference(variant):
    model, run = attention_layer(variant)
    enc = model.k_encoding
    d = model.cfg.d_model
    q, k, v, out = run(POSITIONS)
    w, b = enc.project.weight.detach(), enc.project.bias.detach()
    want_logits = oracle.tupe_logits(
        q,
        k,
        enc.table.weight.detach(),
        enc.norm.weight.detach(),
        enc.norm.bias.detach(),
        w[:d],
        b[:d],
        w[d:],
        b[d:],
        model.cfg.n_heads,
        POSITIONS,
        POSITIONS,
        rel_table=enc.relative.weight.detach() if variant == "tuper" else None,
    )
    want = causal_softmax(want_logits, POSITIONS) @ v
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def test_tupe_r_buckets_are_t5s_bidirectional_ones():
    """Beyond the exact distances too (log-spaced up to 128, then the last bucket)."""
    from transformers.models.t5.modeling_t5 import T5Attention

    from dtpe.model.encodings.tupe import bidirectional_bucket

    relative = torch.arange(-300, 300)[None, :] - torch.arange(0, 5)[:, None]
    want = T5Attention._relative_position_bucket(
        relative, bidirectional=True, num_buckets=32, max_distance=128
    )
    assert torch.equal(bidirectional_bucket(relative), want)


def test_tupe_cannot_index_past_its_table():
    model = make("tupe")
    with pytest.raises(encodings.NotApplicable, match="'tupe' represents k up to 5"):
        with model.at_context(CFG["context"] + 1):
            pass


# --- FIRE (Li et al. 2024) ----------------------------------------------------------------------


def fire_reference(enc, q_pos, k_pos):
    return oracle.fire_bias(
        q_pos, k_pos, enc.c.detach(), (enc.threshold_scale * enc.threshold).detach(), enc.mlp
    )


def test_fire_matches_mcleish7():
    model, run = attention_layer("fire")
    enc = model.k_encoding
    q, k, v, out = run(POSITIONS)
    with torch.no_grad():
        bias = fire_reference(enc, POSITIONS, POSITIONS)
    want = causal_softmax(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]) + bias, POSITIONS) @ v
    torch.testing.assert_close(out, want, rtol=1e-5, atol=1e-5)


def test_fire_interpolates_progressively():
    """Below the threshold the bias depends on the distance alone; beyond it each query divides
    its distances by its own (log) position, so every distance maps into [0, 1]: the farthest
    key of any query gets the same bias, however long the window."""
    enc = make("fire", options={"k": {"fire": {"threshold": 8}}}).k_encoding
    with torch.no_grad():
        enc.threshold_scale.fill_(1.0)
        enc.c.fill_(0.5)
        near = enc.prepare(encodings.Span(torch.arange(8), torch.arange(8)))
        shifted = enc.prepare(encodings.Span(torch.arange(8) - 4, torch.arange(8) - 4))
        far = enc.prepare(encodings.Span(torch.tensor([20, 60]), torch.arange(61)))
    torch.testing.assert_close(near[:, 4:, :4], shifted[:, 4:, :4])  # i, i - 4 both below 8
    torch.testing.assert_close(far[:, 0, 0], far[:, 1, 0])  # j = 0 from i = 20 and from i = 60
    assert not torch.allclose(far[:, 0, 10], far[:, 1, 50])  # the same distance, other bias


@pytest.mark.parametrize("k", ["fire", "tupe", "tuper"])
def test_what_the_layers_share_is_prepared_once_per_forward_pass(k):
    model = make(k)
    calls = []
    prepare = model.k_encoding.prepare
    model.k_encoding.prepare = lambda span: calls.append(1) or prepare(span)
    logits(model, *batch())
    assert len(calls) == 1 and CFG["n_layers"] > 1


# --- every new k encoding ---------------------------------------------------------------------


@pytest.mark.parametrize("k", ["shaw", "erpe", "tupe", "tuper", "fire", "cope", "dape"])
def test_every_parameter_of_the_new_encodings_learns(k):
    """Each parameter gets a gradient from a training loss; and where the encoding holds its
    parameters per layer, each layer's own do (a whole tensor's gradient would hide a layer that
    reads another's table)."""
    model = make(k, n_layers=LAYERS).train()
    rtg, states, actions, timesteps = batch()
    model(rtg, model.encode_states(states), actions, timesteps).sum().backward()
    grads = {n: p.grad for n, p in model.named_parameters() if n.startswith("k_encoding")}
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads.values())
    per_layer = per_layer_gradients(grads)
    assert bool(per_layer) == (k in PER_LAYER), sorted(per_layer)
    for name, layers in per_layer.items():
        assert len(layers) == LAYERS and all(g.abs().sum() > 0 for g in layers), name


PER_LAYER = {"shaw", "erpe", "cope", "dape"}
"""the encodings that hold parameters per layer: a leading axis of n_layers (Shaw's, eRPE's and
CoPE's tables) or a module per layer (DAPE's MLPs)"""


def per_layer_gradients(grads: dict) -> dict[str, list]:
    """{parameter: the gradient of each layer's part} of the per-layer parameters among `grads`
    (of a LAYERS-layer model whose other axes are never LAYERS long): a module list's
    `.<layer>.` members gathered by their name without it."""
    found: dict[str, list] = {}
    for name, g in grads.items():
        parts = name.split(".")
        index = next((i for i, part in enumerate(parts) if part.isdigit()), None)
        if index is not None and parts[index - 1] == "mlps":
            found.setdefault(".".join(parts[:index] + parts[index + 1 :]), []).append(g)
        elif g.ndim and g.shape[0] == LAYERS:
            found[name] = list(g)
    return found


def test_only_encodings_that_mix_after_the_softmax_leave_the_fused_kernel():
    fused = {"fire", "tape", "tupe", "tuper", "alibi", "rope", "learned"}
    for name in fused:
        assert not encodings.REGISTRY["k"][name].needs_weights(), name
    for name in ("shaw", "erpe"):
        assert encodings.REGISTRY["k"][name].needs_weights(), name
    # off the fused kernel, attention dropout still drops weights in training
    dropped = make("shaw", attention_dropout=0.5).train()
    rtg, states, actions, timesteps = batch()
    torch.manual_seed(0)
    a = dropped(rtg, dropped.encode_states(states), actions, timesteps)
    torch.manual_seed(1)
    b = dropped(rtg, dropped.encode_states(states), actions, timesteps)
    assert not torch.allclose(a, b)
