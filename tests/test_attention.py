"""The attention stage's translation check moves the global timestep t only: a model without a
t encoding cannot tell the replays apart, one with sinusoids of t can, k is the same in both,
and a learned t table clamps past its rows."""

import json

import numpy as np
import pytest
import torch
from conftest import model_config, tiny_raw, tmaze_raw

from dtpe import params
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import attention, dataset
from dtpe.world.tmaze.rules import CUE_DOWN, CUE_UP


def make(variant):
    torch.manual_seed(0)
    return DecisionTransformer(model_config(variant)).eval()


def window(b=3, t=5, n=8):
    g = torch.Generator().manual_seed(1)
    return {
        "rtg": torch.rand(b, t, generator=g),
        "states": torch.randint(0, 6, (b, t, n, n), generator=g),
        "actions": torch.randint(0, 4, (b, t), generator=g),
        "timesteps": torch.arange(t).repeat(b, 1),
    }


@pytest.mark.parametrize("variant", ["rope-t_none", "learned-t_none", "alibi-t_none"])
def test_no_t_encoding_no_change(variant):
    check = attention.t_shift_check(make(variant), window(), 100)
    assert check["axis"] == "t" and check["applicable"]
    for key in ("mean_abs_diff", "max_abs_diff", "action_tv_mean", "action_tv_max"):
        assert check[key] == 0.0, key


@pytest.mark.parametrize("variant", ["rope", "learned", "sinusoidal", "nope"])
def test_sinusoidal_t_changes_attention_and_actions(variant):
    check = attention.t_shift_check(make(variant), window(), 100)
    assert check["max_abs_diff"] >= check["mean_abs_diff"] > 1e-4
    assert check["action_tv_max"] >= check["action_tv_mean"] > 1e-4
    assert check["action_tv_max"] <= 1.0


def test_k_positions_identical_t_shifted(monkeypatch):
    """Both replays give every token the same k; only the timesteps fed to the t encoding move."""
    model = make("rope")
    seen = []
    embed = model.embed

    def spy(rtg, state_emb, actions, timesteps, k_offset=0):
        x, positions, times = embed(rtg, state_emb, actions, timesteps, k_offset)
        seen.append((timesteps.clone(), positions.clone()))
        return x, positions, times

    monkeypatch.setattr(model, "embed", spy)
    win = window()
    attention.t_shift_check(model, win, 100)
    (t0, k0), (t1, k1) = seen
    assert torch.equal(k0, k1)
    assert torch.equal(k0, torch.arange(5).repeat_interleave(3))
    assert torch.equal(t0, win["timesteps"]) and torch.equal(t1, win["timesteps"] + 100)


def test_learned_t_table_clamps_past_its_rows():
    """Every shifted timestep lies past the 40 rows: any shift past them is the same replay."""
    model, win = make("rope-t_learned"), window()
    far, farther = attention.replay(model, win, 100), attention.replay(model, win, 500)
    assert all(torch.equal(a, b) for a, b in zip(far, farther))
    assert attention.t_shift_check(model, win, 100)["max_abs_diff"] > 1e-4


def test_analyse_writes_the_translation_keys(tiny_params, tiny_data):
    model = DecisionTransformer(tiny_params.model_config("rope-t_none")).eval()
    result = json.loads(json.dumps(attention.analyse(model, tiny_params, tiny_data, "rope", 1)))
    check = result["translation"]
    assert check["shift"] == tiny_params.attention.shift and check["axis"] == "t"
    assert check["mean_abs_diff"] == check["action_tv_max"] == 0.0
    n = 3 * result["window_timesteps"]
    assert len(result["heatmap"]) == len(result["distance_decay"]) == n


@pytest.fixture(scope="module")
def tmaze(tmp_path_factory):
    """Tiny T-Maze params with the milestone attention at both suites, for each cue knob, and
    their data."""
    out = {}
    for cue in ("start", "anywhere"):
        raw = tmaze_raw(cue=cue)
        raw["attention"]["milestone_sizes"] = [16, 32]
        p = params.check(raw)
        data = tmp_path_factory.mktemp(cue) / "data"
        dataset.build(p, data)
        out[cue] = (p, data)
    return out


@pytest.mark.parametrize("cue", ["start", "anywhere"])
def test_the_milestone_is_the_first_step_that_shows_the_cue(tmaze, cue):
    """The milestone step of every expert episode is the first whose observation is the cue:
    the first step at `start`, the cue's cell at `anywhere`."""
    p, data = tmaze[cue]
    world = dataset.world_of(data, p.env)
    lay, _ = dataset.load_suite(data, 32, p.env)
    eps = world.episodes(lay, np.ones(len(lay), bool), 0.0, p.env, np.random.default_rng(0))
    off, lengths = eps["offsets"], np.diff(eps["offsets"])
    actions = np.zeros((len(lay), lengths.max()), np.int64)
    for i, (a, n) in enumerate(zip(off[:-1], lengths)):
        actions[i, :n] = eps["actions"][a : a + n]
    steps = attention.milestone_steps(world, lay, actions, lengths, p.env)
    for i, a in enumerate(off[:-1]):
        shows = np.isin(eps["states"][a : off[i + 1]].reshape(-1), (CUE_UP, CUE_DOWN))
        assert steps[i] == np.flatnonzero(shows)[0]
    if cue == "start":
        assert (steps == 0).all()
    else:
        assert (steps > 0).any() and (steps < lengths // 2 + 1).all()


def test_milestone_attention_reads_every_layer_and_head_or_is_na(tmaze):
    """Per episode an (L, H) weight of the last state token on the cue's state token, the
    final layer's equal to the model's own attention map there; a learned k table shorter
    than the episodes gives N/A, never a crash."""
    p, data = tmaze["anywhere"]
    torch.manual_seed(0)
    model = DecisionTransformer(p.model_config("rope")).eval()
    out = [attention.milestone_attention(model, p, data, size) for size in (16, 32)]
    for r in out:
        assert r["applicable"] and len(r["weight"]) == len(r["steps"]) == p.attention.episodes
        w = np.array(r["weight"])
        assert w.shape == (len(r["steps"]), p.model.n_layers, p.model.n_heads)
        assert ((w > 0) & (w < 1)).all()
        assert np.allclose(r["uniform"], [1 / (3 * (n - 1) + 2) for n in r["steps"]])
    # the final layer's weight, from the model's own map of the first episode at 32
    world = dataset.world_of(data, p.env)
    lay, _ = dataset.load_suite(data, 32, p.env)
    eps = world.episodes(
        lay.subset(slice(0, 1)), np.ones(1, bool), 0.0, p.env, np.random.default_rng(0)
    )
    n, at = out[1]["steps"][0], out[1]["milestone_step"][0]
    with model.at_context(n):
        _, weights = attention.replay(
            model,
            {
                "rtg": torch.from_numpy(eps["rtg"][None]),
                "states": torch.from_numpy(eps["states"][None]),
                "actions": torch.from_numpy(eps["actions"][None].astype(np.int64)),
                "timesteps": torch.from_numpy(eps["timesteps"][None].astype(np.int64)),
            },
        )
    own = weights[0, :, 3 * (n - 1) + 1, 3 * at + 1].tolist()
    assert np.allclose(out[1]["weight"][0][-1], own, atol=1e-6)
    short = DecisionTransformer(p.model_config("learned")).eval()  # a table of model.context
    assert p.model.context < min(out[0]["steps"])
    assert attention.milestone_attention(short, p, data, 16)["applicable"] is False


def test_milestone_sizes_are_suite_sizes_of_a_world_with_a_milestone():
    raw = tmaze_raw()
    raw["attention"]["milestone_sizes"] = [24]
    with pytest.raises(params.ParamsError, match=r"attention\.milestone_sizes.*24 is not a suite"):
        params.check(raw)
    raw = tiny_raw()
    raw["env"]["world"], raw["worlds"]["crossing"] = "crossing", {"num_crossings": 1}
    raw["data"].update(train_size=9, suite_sizes=[9])
    raw["attention"].update(grid_size=9, milestone_sizes=[9])
    with pytest.raises(params.ParamsError, match="has no milestone"):
        params.check(raw)
