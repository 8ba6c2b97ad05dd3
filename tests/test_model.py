"""The model's mathematics: RoPE's relative property, the causal mask, the shared checks every
registered encoding passes, and the checkpoint's refusals."""

import dataclasses
import json
import math

import pytest
import torch
from conftest import model_config

from dtpe.model import checkpoint
from dtpe.model.encodings import REGISTRY, NotApplicable, create
from dtpe.model.encodings.rope import apply_rope, rope_angles
from dtpe.model.state_encoders import STATE_ENCODERS
from dtpe.model.state_encoders import create as create_state_encoder
from dtpe.model.state_encoders.cnn_coord import CoordCNNStateEncoder
from dtpe.model.transformer import DecisionTransformer, KVCache
from dtpe.world.maze.rules import AGENT, KEY, N_CODES, WALL


def state_encoder(name):
    return create_state_encoder(model_config("rope", state_encoder=name))


def make(encoding, **kw):
    torch.manual_seed(0)
    return DecisionTransformer(model_config(encoding, **kw)).eval()


def inputs(b=2, t=5, n=8, seed=1):
    g = torch.Generator().manual_seed(seed)
    return (
        torch.rand(b, t, generator=g),
        torch.randint(0, 6, (b, t, n, n), generator=g),
        torch.randint(0, 4, (b, t), generator=g),
        torch.arange(t).repeat(b, 1),
    )


def test_rope_scores_depend_only_on_offset():
    torch.manual_seed(0)
    q, k = torch.randn(1, 1, 1, 32), torch.randn(1, 1, 1, 32)

    def score(m, n):
        qm = apply_rope(q, rope_angles(torch.tensor([m]), 32))
        return (qm * apply_rope(k, rope_angles(torch.tensor([n]), 32))).sum().item()

    for m, n, shift in [(3, 1, 7), (0, 5, 250), (29, 0, 1000), (4000, 3990, -3000)]:
        assert score(m, n) == pytest.approx(score(m + shift, n + shift), rel=1e-4, abs=1e-4)
    assert score(3, 1) != pytest.approx(score(3, 2), abs=1e-3)


def test_rotate_half_equals_complex_multiplication():
    torch.manual_seed(0)
    x, pos = torch.randn(2, 3, 7, 16), torch.arange(7) * 13
    pairs = torch.complex(x[..., :8], x[..., 8:])  # (x_i, x_{i+d/2}) as one complex number
    rotated = pairs * torch.polar(torch.ones(7, 8), rope_angles(pos, 16))
    assert torch.allclose(
        apply_rope(x, rope_angles(pos, 16)), torch.cat([rotated.real, rotated.imag], -1), atol=1e-5
    )


def test_rope_theta_is_the_protocols():
    angles = rope_angles(torch.tensor([1]), 32)[0]
    assert torch.allclose(angles, torch.tensor([10000 ** (-2 * i / 32) for i in range(16)]))


@pytest.mark.parametrize("encoding", sorted(REGISTRY["k"]))
class TestEveryEncoding:
    def test_causal_mask_hides_the_future(self, encoding):
        model = make(encoding)
        rtg, states, actions, t = inputs()
        emb = model.encode_states(states)
        before = model(rtg, emb, actions, t)
        emb2, rtg2 = emb.clone(), rtg.clone()
        emb2[:, 3:] = torch.randn_like(emb2[:, 3:])
        rtg2[:, 3:] += 5
        after = model(rtg2, emb2, actions, t)
        assert torch.allclose(before[:, :3], after[:, :3], atol=1e-5)
        assert not torch.allclose(before[:, 3:], after[:, 3:], atol=1e-3)

    def test_own_action_token_is_not_seen(self, encoding):
        model = make(encoding)
        rtg, states, actions, t = inputs()
        emb = model.encode_states(states)
        other = (actions + 1) % 4
        other[:, :-1] = actions[:, :-1]
        assert torch.allclose(model(rtg, emb, actions, t), model(rtg, emb, other, t), atol=1e-6)

    def test_shapes_grid_sizes_and_attention(self, encoding):
        model = make(encoding)
        for n in (5, 8, 20):
            rtg, states, actions, t = inputs(n=n)
            logits, weights = model(
                rtg, model.encode_states(states), actions, t, need_attention=True
            )
            assert logits.shape == (2, 5, 4) and weights.shape == (2, 2, 15, 15)
            assert torch.allclose(weights.sum(-1), torch.ones(2, 2, 15), atol=1e-5)
            assert torch.all(weights.triu(1) == 0)

    def test_attention_path_equals_fast_path(self, encoding):
        model = make(encoding)
        rtg, states, actions, t = inputs()
        emb = model.encode_states(states)
        logits, _ = model(rtg, emb, actions, t, need_attention=True)
        assert torch.allclose(logits, model(rtg, emb, actions, t), atol=1e-5)

    def test_cached_steps_equal_the_whole_window(self, encoding):
        """The evaluation's KV cache: step by step, as episodes finish and leave the batch, the
        next action's logits equal those of the whole window run at once."""
        model = make(encoding)
        rtg, states, actions, t = inputs(b=3, t=6)
        emb = model.encode_states(states)
        cache = KVCache(len(model.blocks), 3, 3 * 6)
        for step in range(6):
            rows = torch.tensor([0, 1, 2] if step < 3 else [0, 2])
            cache.rows = rows
            w = slice(0, step + 1)
            cached = model.next_action(
                rtg[rows, w], emb[rows, w], actions[rows, w], t[rows, w], cache
            )
            whole = model(rtg[rows, w], emb[rows, w], actions[rows, w], t[rows, w])[:, -1]
            assert torch.allclose(cached, whole, atol=1e-5), step
        assert cache.tokens == 3 * 6 - 1
        # A sliding window (later timesteps, k from 0 again) runs whole, without a cache.
        sliding = model.next_action(rtg[:, 2:], emb[:, 2:], actions[:, 2:], t[:, 2:])
        assert torch.allclose(
            sliding, model(rtg[:, 2:], emb[:, 2:], actions[:, 2:], t[:, 2:])[:, -1], atol=1e-5
        )

    def test_checkpoint_round_trip(self, encoding, tmp_path):
        model = make(encoding)
        checkpoint.save(model, tmp_path / "m")
        loaded = checkpoint.load(tmp_path / "m", model.cfg)
        rtg, states, actions, t = inputs()
        assert torch.equal(
            model(rtg, model.encode_states(states), actions, t),
            loaded(rtg, loaded.encode_states(states), actions, t),
        )


def test_training_drops_attention_on_every_path(monkeypatch):
    """Every attention call in training, the last layer's state-token queries included, gets the
    attention dropout rate (not the other dropout's); none in evaluation."""
    calls = []
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def spy(*args, dropout_p=0.0, **kw):
        calls.append(dropout_p)
        return sdpa(*args, dropout_p=dropout_p, **kw)

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", spy)
    model = make("rope", dropout=0.1, attention_dropout=0.25, n_layers=2)
    rtg, states, actions, t = inputs()
    model.train()(rtg, model.encode_states(states), actions, t)
    assert calls == [0.25, 0.25]
    calls.clear()
    model.eval()(rtg, model.encode_states(states), actions, t)
    assert calls == [0.0, 0.0]


def test_learned_table_refuses_longer_context():
    model = make("learned")
    rtg, states, actions, t = inputs(t=6)
    model(rtg, model.encode_states(states), actions, t)  # exactly the table's size
    rtg, states, actions, t = inputs(t=7)
    with pytest.raises(NotApplicable, match="learned"):
        model(rtg, model.encode_states(states), actions, t)
    for name in ("sinusoidal", "rope"):
        m = make(name)
        m(rtg, m.encode_states(states), actions, t, k_offset=500)


def test_unknown_encoding_lists_registered():
    with pytest.raises(ValueError, match="registered.*rope"):
        create("k", "alibi-typo", DecisionTransformer(model_config("rope")).cfg)


def test_checkpoint_refusals(tmp_path):
    model = make("rope")
    checkpoint.save(model, tmp_path / "m")
    with pytest.raises(checkpoint.CheckpointError, match="variant is 'rope', expected 'learned'"):
        checkpoint.load(tmp_path / "m", dataclasses.replace(model.cfg, variant="learned"))
    with pytest.raises(checkpoint.CheckpointError, match="d_model is 32, expected 64"):
        checkpoint.load(tmp_path / "m", dataclasses.replace(model.cfg, d_model=64))
    with pytest.raises(checkpoint.CheckpointError, match="missing"):
        checkpoint.load(tmp_path / "none", model.cfg)
    weights = tmp_path / "m" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])
    with pytest.raises(checkpoint.CheckpointError, match="corrupt or truncated"):
        checkpoint.load(tmp_path / "m", model.cfg)
    config = tmp_path / "m" / "config.json"
    meta = json.loads(config.read_text())
    del meta["config"]["view_radius"]
    config.write_text(json.dumps(meta))
    with pytest.raises(checkpoint.CheckpointError, match="lacks view_radius"):
        checkpoint.load(tmp_path / "m", model.cfg)
    config.write_text("{not json")
    with pytest.raises(checkpoint.CheckpointError, match="unreadable"):
        checkpoint.load(tmp_path / "m", model.cfg)


def test_sinusoidal_timestep_is_bounded_and_distinct():
    from dtpe.model.encodings.sinusoidal import sinusoids

    table = sinusoids(torch.arange(200), 32)
    assert table.abs().max() <= 1 + 1e-6
    assert torch.cdist(table, table).add(torch.eye(200) * 10).min() > 1e-3
    assert table[0, 1] == pytest.approx(math.cos(0))


@pytest.mark.parametrize("name", sorted(set(STATE_ENCODERS) - {"view"}))
def test_every_grid_encoder_takes_any_grid_size(name):
    torch.manual_seed(0)
    encoder = state_encoder(name)
    for n in (5, 8, 20, 64):
        grids = torch.randint(0, 6, (3, 2, n, n))
        out = encoder(grids)
        assert out.shape == (3, 2, 32) and torch.isfinite(out).all()
    moved = torch.zeros(2, 8, 8, dtype=torch.long)
    moved[0, 1, 1], moved[1, 1, 2] = 2, 2  # the agent one cell apart
    assert not torch.allclose(*encoder(moved))
    with pytest.raises(ValueError, match="registered"):
        state_encoder("nope")


@pytest.mark.parametrize("name", ["cnn", "cnn_coord"])
def test_encoder_is_a_convolution_over_embedded_items(name):
    """The encoders run their item embedding and first convolution as one convolution over
    one-hot codes: the same outputs and parameter gradients as the embedding, then the
    convolution (cnn_coord: over the embedding with the row and column channels appended)."""
    torch.manual_seed(0)
    encoder = state_encoder(name)
    grids = torch.randint(0, 6, (3, 7, 7))
    x = encoder.items(grids).permute(0, 3, 1, 2)
    if name == "cnn_coord":
        axis = torch.linspace(-1, 1, 7)
        x = torch.cat(
            [x, torch.stack(torch.meshgrid(axis, axis, indexing="ij")).expand(3, -1, -1, -1)], 1
        )
    reference = encoder.out(encoder.conv(x))
    ours = encoder(grids)
    assert torch.allclose(ours, reference, atol=1e-6)
    expected = torch.autograd.grad(reference.square().sum(), list(encoder.parameters()))
    got = torch.autograd.grad(ours.square().sum(), list(encoder.parameters()))
    for e, g in zip(expected, got):
        assert torch.allclose(g, e, atol=1e-5)


def test_egocentric_view_is_the_cells_around_the_agent():
    """cnn_ego adds to cnn_coord's features one embedding per cell of the (2r+1)^2 view centred
    on the agent, indexed by the cell's place in the view and its code; cells past the border
    read as walls; then x + Linear(ReLU(x)) over the sum. Checked against a crop cut cell by
    cell, with the agent at corners and edges."""
    torch.manual_seed(0)
    encoder = state_encoder("cnn_ego")
    r, side = encoder.radius, 2 * encoder.radius + 1
    grids = torch.randint(0, 2, (4, 6, 6))  # empty and wall cells
    for g, (row, col) in zip(grids, [(0, 0), (5, 5), (2, 3), (0, 4)]):
        g[row, col], g[5 - row, 5 - col] = AGENT, KEY
    expected = []
    for g in grids:
        row, col = [int(v[0]) for v in torch.nonzero(g == AGENT, as_tuple=True)]
        total = torch.zeros(32)
        for i in range(side):
            for j in range(side):
                y, x = row - r + i, col - r + j
                code = int(g[y, x]) if 0 <= y < 6 and 0 <= x < 6 else WALL
                total += encoder.view.weight[(i * side + j) * N_CODES + code]
        expected.append(total)
    x = CoordCNNStateEncoder.forward(encoder, grids) + torch.stack(expected)
    mix = encoder.mix[1]
    assert torch.allclose(encoder(grids), x + torch.relu(x) @ mix.weight.T + mix.bias, atol=1e-5)


def test_view_encoder_embeds_each_cell_by_its_place_and_refuses_other_shapes():
    """The view encoder (states that are the agent's view, Memory's 7 x 7): one embedding row
    per cell's place in the view and code, summed, then x + Linear(ReLU(x)); checked cell by
    cell. The same codes at other places give another state (a key left of the agent is not a
    key right of it); a state of another side is refused, naming model.view_radius."""
    from dtpe.world.memory.rules import VOCABULARY

    torch.manual_seed(0)
    encoder = create_state_encoder(
        model_config("rope", state_encoder="view", view_radius=3, world="memory")
    )
    n_codes = VOCABULARY.n_codes
    views = torch.randint(0, n_codes, (2, 3, 7, 7))
    total = torch.zeros(2, 3, 32)
    for i in range(7):
        for j in range(7):
            total += encoder.view.weight[(i * 7 + j) * n_codes + views[..., i, j]]
    mix = encoder.mix[1]
    expected = total + torch.relu(total) @ mix.weight.T + mix.bias
    assert torch.allclose(encoder(views), expected, atol=1e-5)
    left, right = torch.ones(2, 7, 7, dtype=torch.long)
    left[4, 1], right[4, 5] = 3, 3  # a key two cells left, or right, of the agent's column
    assert not torch.allclose(encoder(left), encoder(right))
    with pytest.raises(ValueError, match="not the agent's 7 x 7 view of model.view_radius 3"):
        encoder(torch.ones(1, 9, 9, dtype=torch.long))
