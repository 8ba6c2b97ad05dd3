"""Does a model use position: each encoding switched off equals a model that never had it, the
position step's rows (rope's scalings, the switched-off suites), the per-model test, and the
params it refuses."""

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import model_config, tmaze_raw

from dtpe import params
from dtpe.analysis import position_use
from dtpe.model.encodings import REGISTRY, NotApplicable, carries_position
from dtpe.model.transformer import DecisionTransformer

NO_K, NO_T = "nope", "none"


def built(variant):
    """A model whose encodings' parameters are all drawn away from their initial values (CoPE's
    start at zero and would carry nothing)."""
    torch.manual_seed(0)
    model = DecisionTransformer(model_config(variant)).eval()
    with torch.no_grad():
        for name, w in model.named_parameters():
            if name.split(".")[0] in ("k_encoding", "t_encoding"):
                w.add_(0.5 * torch.randn_like(w))
    return model


def inputs(b=2, t=5, n=8):
    g = torch.Generator().manual_seed(1)
    return (
        torch.rand(b, t, generator=g),
        torch.randint(0, 6, (b, t, n, n), generator=g),
        torch.randint(0, 4, (b, t), generator=g),
        torch.arange(t).repeat(b, 1) + 3,
    )


def without_encoding(model, axis):
    """The same weights in a model whose `axis` encoding is none at all (its logits' scale kept:
    TUPE's and eRPE's scale no position)."""
    variant = model.cfg.variant.split("-t_")
    k, t = variant[0], variant[1] if len(variant) > 1 else None
    name = f"{NO_K}-t_{t}" if axis == "k" and t else NO_K if axis == "k" else f"{k}-t_{NO_T}"
    bare = DecisionTransformer(model_config(name)).eval()
    kept = {n: w for n, w in model.state_dict().items() if not n.startswith(f"{axis}_encoding.")}
    assert not set(bare.load_state_dict(kept, strict=False).unexpected_keys)
    getattr(bare, f"{axis}_encoding").scale = getattr(model, f"{axis}_encoding").scale
    return bare


@pytest.mark.parametrize(
    "variant,axis",
    [(k, "k") for k in sorted(REGISTRY["k"]) if k != NO_K]
    + [(f"rope-t_{t}", "t") for t in sorted(REGISTRY["t"]) if t != NO_T],
)
def test_an_encoding_switched_off_is_a_model_that_never_had_it(variant, axis):
    model = built(variant)
    rtg, states, actions, t = inputs()
    emb = model.encode_states(states)
    with torch.no_grad():
        own = model(rtg, emb, actions, t)
        with model.switched_off(axis):
            off = model(rtg, emb, actions, t)
        again = model(rtg, emb, actions, t)
        bare = without_encoding(model, axis)(rtg, emb, actions, t)
    assert torch.allclose(off, bare, atol=1e-5)
    assert torch.equal(own, again)  # the trained encoding is back after the block
    assert not torch.allclose(own, off, atol=1e-4)  # it did carry something


def test_nothing_to_switch_off_is_not_applicable_and_an_error_restores_the_encoding():
    nope, rope = built("nope-t_none"), built("rope")
    assert not carries_position(nope.k_encoding) and not carries_position(nope.t_encoding)
    for axis in ("k", "t"):
        with pytest.raises(NotApplicable, match="nothing to switch off"):
            with nope.switched_off(axis):
                pass
    trained = rope.k_encoding
    with pytest.raises(RuntimeError):
        with rope.switched_off("k"):
            assert rope.k_encoding is not trained
            raise RuntimeError
    assert rope.k_encoding is trained


def test_a_switched_off_table_indexes_any_position():
    model = built("learned")
    rtg, states, actions, t = inputs(t=5)
    emb = model.encode_states(states)
    with pytest.raises(NotApplicable):
        model(rtg, emb, actions, t, k_offset=100)
    with model.switched_off("k"):
        assert model(rtg, emb, actions, t, k_offset=100).shape == (2, 5, 4)


@pytest.fixture(scope="module")
def tmaze(tmp_path_factory):
    """A tiny T-Maze run's params, data and its untrained models (playing is what is tested)."""
    from dtpe.steps import dataset

    raw = tmaze_raw()
    raw["study"]["variants"] = ["learned", "rope", "nope"]
    raw["evaluate"].update(contexts=[6, 40], whole_episode=True)
    raw["position"] = {"scalings": ["yarn"], "ablate": ["k", "t"], "sizes": [16, 32]}
    p = params.check(raw)
    data = tmp_path_factory.mktemp("tmaze") / "data"
    dataset.build(p, data)
    return p, data


def play(p, data, variant):
    from dtpe.steps import evaluate, position

    torch.manual_seed(0)
    model = DecisionTransformer(p.model_config(variant)).eval()
    grid = evaluate.grid_sweep(model, p, data, variant, 1)
    context = evaluate.context_sweep(model, p, data, variant, 1, grid)
    return position.played(model, p, data, variant, 1, grid), context


def test_the_position_step_scales_rope_alone_and_pairs_each_switched_off_episode(tmaze):
    p, data = tmaze
    rope, rope_own = play(p, data, "rope")
    learned, _ = play(p, data, "learned")
    nope, _ = play(p, data, "nope")
    n = p.data.suite_layouts
    assert sorted(rope.altered.unique()) == ["k off", "t off", "yarn"]
    assert (rope.context == 40).all() and rope.applicable.all()
    assert len(rope[rope.altered == "yarn"]) == n * len(p.data.suite_sizes)
    # the learned table of 6 cannot index 40: no scaling rows, and N/A where it is switched off
    assert set(learned.altered) == {"k off", "t off"} and not learned.applicable.any()
    assert set(nope.altered) == {"t off"}  # NoPE has no k to switch off
    keys = ["grid_size", "layout_id"]
    off = rope[rope.altered == "k off"]
    assert off[keys].merge(rope_own[keys]).shape[0] == len(off)
    models = position_use.per_model(rope[rope.altered.str.endswith("off")], rope_own, 0.05)
    assert len(models) == 2 * len(p.position.sizes) and models.episodes.eq(n).all()


def test_per_model_counts_the_episodes_that_differ():
    own = pd.DataFrame(
        {
            "variant": "rope",
            "seed": 1,
            "grid_size": 16,
            "context": 40,
            "layout_id": np.arange(20),
            "success": [1] * 20,
            "applicable": True,
        }
    )
    off = own.assign(success=[0] * 15 + [1] * 5, altered="k off")
    models = position_use.per_model(off, own, 0.05)
    row = models.iloc[0]
    assert row.own == 100 and row.switched_off == 25 and row.change == -75
    assert row.p == pytest.approx(2 * 0.5**15) and row.uses
    same = position_use.per_model(own.assign(altered="t off"), own, 0.05).iloc[0]
    assert same.p == 1 and not same.uses
    with pytest.raises(ValueError, match="disagree"):
        position_use.per_model(off.assign(layout_id=off.layout_id + 100), own, 0.05)
    summary = position_use.per_variant(pd.concat([models, models.assign(seed=2)]), 0.05)
    assert summary.models_using.iloc[0] == 2 and summary.change.iloc[0] == -75


@pytest.mark.parametrize(
    "position,evaluate,match",
    [
        ({"scalings": ["yarn"]}, {"whole_episode": False}, "whole_episode is false"),
        ({"ablate": ["k"], "sizes": []}, {}, "position.ablate asks"),
        ({"ablate": ["k"], "sizes": [99]}, {}, "99 is not a suite size"),
        ({"scalings": ["ntk"]}, {"rope_scaling": ["none", "ntk"]}, "in evaluate.rope_scaling"),
    ],
)
def test_params_refuse_a_position_step_that_cannot_play(position, evaluate, match):
    raw = tmaze_raw()
    raw["evaluate"].update({"contexts": [6, 40], "whole_episode": True, **evaluate})
    raw["position"].update(position)
    with pytest.raises(params.ParamsError, match=match):
        params.check(raw)


def test_a_run_without_the_ablation_says_so_in_its_table(tmp_path, tiny_params):
    import json

    from dtpe.analysis import tables

    pd.DataFrame(columns=position_use.COLUMNS).to_csv(tmp_path / "position_use.csv", index=False)
    (tmp_path / "methods.json").write_text(json.dumps({"confidence": 0.95, "alpha": 0.05}))
    table = tables.position_use(tiny_params, tmp_path)
    assert "Not measured in this run" in table.caption and table.shown.empty
