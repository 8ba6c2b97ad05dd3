"""The encodings whose position reads the content, CoPE and DAPE (the `rescore` hook): each
through a model's own attention layer at float64 against its reference's forward restated in
tests/encoding_oracles.py, each one's defining property, and their options. The shared checks
(causality, the cache, the weights path) run over every registered encoding in
tests/test_encodings.py."""

import math

import encoding_oracles as oracle
import pytest
import torch
import torch.nn.functional as F
from conftest import tiny_raw
from test_encodings import CFG, batch, logits, make
from test_source_encodings import LAYERS, attention_layer

from dtpe import params
from dtpe.model import encodings

torch.set_num_threads(1)
POSITIONS = torch.arange(CFG["context"])
FLOAT64 = {"rtol": 1e-12, "atol": 1e-12}
"""a few float64 roundings on values of order 1"""


def heads_folded(x: torch.Tensor) -> torch.Tensor:
    """(B, H, L, dh) -> (B*H, L, dh), as RAM's `split_heads`."""
    return x.reshape(-1, *x.shape[2:])


# --- CoPE (Golovneva et al. 2024) ---------------------------------------------------------------


@pytest.mark.parametrize("layer", range(LAYERS))
@pytest.mark.parametrize("positions", [3, 91])  # clamped early, and never
def test_cope_matches_ram_at_float64(positions, layer):
    model, run = attention_layer(
        "cope", torch.float64, layer, options={"k": {"cope": {"positions": positions}}}
    )
    q, k, v, out = run(POSITIONS)
    allowed = torch.ones(len(POSITIONS), len(POSITIONS), dtype=torch.float64).tril()[None]
    table = model.k_encoding.table[layer].detach()[None]  # (1, dh, P), shared by the heads
    want, _ = oracle.cope_attention(
        heads_folded(q), heads_folded(k), heads_folded(v), table, allowed
    )
    torch.testing.assert_close(out, want.view_as(out), **FLOAT64)


def test_cope_positions_count_the_gated_tokens():
    """With gates shut or open (q·k far below or above 0) and a table whose logit is the
    position itself, each term added is the number of open keys from the key to the query;
    fractional gates give their sum; both stop at the table's last position."""
    enc = make("cope", options={"k": {"cope": {"positions": 5}}}).k_encoding.double()
    root, tokens = math.sqrt(enc.head_dim), 8
    opened = torch.tensor([1, 0, 1, 1, 0, 0, 1, 0], dtype=torch.bool)
    q = torch.zeros(1, 1, tokens, enc.head_dim, dtype=torch.float64)
    q[..., 0], q[..., 1] = 1.0, root
    k = torch.zeros_like(q)
    k[..., 0] = torch.where(opened, 1e4, -1e4)
    with torch.no_grad():
        enc.table.zero_()
        enc.table[:, 1] = torch.arange(5.0)  # q·e[p] = sqrt(dh) p: the term added is p
    visible = torch.ones(tokens, tokens, dtype=torch.bool).tril()
    span = encodings.Span(torch.arange(tokens), torch.arange(tokens))
    zero = torch.zeros(1, 1, tokens, tokens, dtype=torch.float64)
    with torch.no_grad():
        added = enc.rescore(zero, q, k, visible, span, 0)[0, 0]
        for i in range(tokens):
            for j in range(i + 1):
                assert added[i, j] == min(int(opened[j : i + 1].sum()), 4), (i, j)
        half = enc.rescore(zero, q, 0 * k, visible, span, 0)[0, 0]  # every gate 1/2
    steps = torch.arange(tokens, dtype=torch.float64)
    want = ((steps[:, None] - steps[None, :] + 1) / 2).clamp(max=4)
    torch.testing.assert_close(half.tril(), want.tril(), **FLOAT64)


# --- DAPE (Zheng et al. 2024) -------------------------------------------------------------------


@pytest.mark.parametrize("layer", range(LAYERS))
def test_dape_matches_its_reference_at_float64(layer):
    model, run = attention_layer("dape", torch.float64, layer)
    enc = model.k_encoding
    q, k, v, out = run(POSITIONS)
    with torch.no_grad():
        scores = oracle.dape_kerple_scores(
            q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1]),
            F.softplus(enc.base.raw_r1),
            F.softplus(enc.base.raw_r2),
            enc.mlps[layer],
        )
    hidden = POSITIONS[None, :] > POSITIONS[:, None]
    want = scores.masked_fill(hidden, float("-inf")).softmax(-1) @ v
    torch.testing.assert_close(out, want, **FLOAT64)


def test_dape_with_a_zero_mlp_is_its_base_bias_kerple():
    dape = make("dape")
    with torch.no_grad():
        for mlp in dape.k_encoding.mlps:
            mlp[-1].weight.zero_()
            mlp[-1].bias.zero_()
    kerple = make("kerple")
    shared = {
        name.replace("k_encoding.base.", "k_encoding."): value
        for name, value in dape.state_dict().items()
        if not name.startswith("k_encoding.mlps.")
    }
    kerple.load_state_dict(shared)
    args = batch()
    # both on the weights path: the same additions in the same order, bit for bit
    a, wa = logits(dape, *args, need_attention=True)
    b, wb = logits(kerple, *args, need_attention=True)
    assert torch.equal(a, b) and torch.equal(wa, wb)


# --- both ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("k", ["cope", "dape"])
def test_they_rewrite_the_logits_off_the_fused_kernel_and_see_no_absolute_k(k):
    assert encodings.REGISTRY["k"][k].needs_weights()
    model, args = make(k), batch()
    a, wa = logits(model, *args, need_attention=True)
    b, wb = logits(model, *args, k_offset=40, need_attention=True)
    torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(wa, wb, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("k", "option", "bad", "message"),
    [
        ("cope", "positions", 0, "0 is not an integer >= 1"),
        ("cope", "positions", 9.5, "9.5 is not an integer >= 1"),
        ("dape", "width", -3, "-3 is not an integer >= 1"),
    ],
)
def test_their_options_are_validated_by_name(k, option, bad, message):
    raw = tiny_raw()
    assert params.check(raw).model_config(k).options["k"] == raw["encodings"]["k"][k]
    raw["encodings"]["k"][k][option] = bad
    with pytest.raises(params.ParamsError, match=rf"encodings\.k\.{k}\.{option}: {message}$"):
        params.check(raw)
    del raw["encodings"]["k"][k][option]
    with pytest.raises(params.ParamsError, match=rf"encodings\.k\.{k}\.{option}: missing"):
        params.check(raw)


def test_they_are_listed_with_their_options_and_references():
    rows = {row["name"]: row for row in encodings.table() if row["axis"] == "k"}
    assert rows["cope"]["parameters"] == "encodings.k.cope.positions"
    assert rows["dape"]["parameters"] == "encodings.k.dape.width"
    assert "RAM" in rows["cope"]["reference"] and "DAPE" in rows["dape"]["reference"]
    assert "dtpe/model/encodings/kerple.py" in encodings.sources("dape")
