"""The attention stage's translation check moves the global timestep t only: a model without a
t encoding cannot tell the replays apart, one with sinusoids of t can, k is the same in both,
and a learned t table clamps past its rows."""

import json

import pytest
import torch
from conftest import model_config

from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import attention


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
