"""Evaluation's three sweeps of one model: the 8x8 test split, every suite at the training
context, and the longer contexts, where rows of the grid sweep are taken over only where a
longer context cannot change the episode (checked here against playing everything); and the seen
step's training layouts."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, evaluate, rollout


def model_for(params, variant, seed=0):
    torch.manual_seed(seed)
    return DecisionTransformer(params.model_config(variant)).eval()


@pytest.fixture(scope="module")
def long_params(tiny_params):
    # Untrained models play to the cap (3 N): at a training context of 24 steps the 8x8
    # episodes (24 steps) are ones a longer context cannot change, the 10x10 ones (30) are not;
    # a shorter context changes both, and 30 takes its rows over from 27, not from 24
    return dataclasses.replace(
        tiny_params,
        env=dataclasses.replace(
            tiny_params.env, options={**tiny_params.env.options, "cap_factor": 3}
        ),
        model=dataclasses.replace(tiny_params.model, context=24),
        evaluate=dataclasses.replace(
            tiny_params.evaluate, contexts=[30, 12, 24, 27], rope_scaling=["none", "linear"]
        ),
    )


def test_test_split_is_every_test_layout_once(tiny_data, tiny_params):
    model = model_for(tiny_params, "rope")
    rows = evaluate.test_split(model, tiny_params, tiny_data, "rope", 1)
    lay, optimal = dataset.load_split_layouts(tiny_data, "test", tiny_params.env)
    assert list(rows.layout_id) == list(lay.ids) and (rows.grid_size == lay.size).all()
    assert (rows.context == tiny_params.model.context).all()
    played = rollout.rollout(model, lay, tiny_params.env, tiny_params.model.context, 0.8)
    assert np.array_equal(rows.success.to_numpy(), played["success"].astype(int))
    assert np.array_equal(rows.optimal_steps.to_numpy(), optimal)


def test_seen_plays_as_many_training_layouts_as_the_test_split_holds(tiny_data, tiny_params):
    """The first training layouts, as many as the test split has, each once, played as the
    test split is: layouts training saw, beside the held-out ones."""
    model = model_for(tiny_params, "rope")
    rows = evaluate.seen_split(model, tiny_params, tiny_data, "rope", 1)
    test, _ = dataset.load_split_layouts(tiny_data, "test", tiny_params.env)
    train, optimal = dataset.load_split_layouts(tiny_data, "train", tiny_params.env)
    assert len(train) > len(test) == len(rows)
    assert list(rows.layout_id) == list(train.ids[: len(test)])
    assert not set(rows.layout_id) & set(test.ids)
    assert (rows.context == tiny_params.model.context).all()
    played = rollout.rollout(
        model, train.subset(slice(0, len(test))), tiny_params.env, tiny_params.model.context, 0.8
    )
    assert np.array_equal(rows.success.to_numpy(), played["success"].astype(int))
    assert np.array_equal(rows.optimal_steps.to_numpy(), optimal[: len(test)])


@pytest.mark.parametrize("variant", ["rope", "learned"])
def test_context_sweep_equals_playing_every_episode(tiny_data, long_params, variant):
    model = model_for(long_params, variant, seed=3)
    grid = evaluate.grid_sweep(model, long_params, tiny_data, variant, 1)
    swept = evaluate.context_sweep(model, long_params, tiny_data, variant, 1, grid)
    train_context = long_params.model.context
    assert (grid.steps > train_context).any() and (grid.steps <= train_context).any()
    later = [c for c in long_params.evaluate.contexts if c != train_context]
    assert set(swept.context) == set(later)
    for context in later:
        for scaling in set(swept.rope_scaling):
            # the encoding itself, not at_context: a context it cannot index plays N/A rows
            model.k_encoding.for_context(context, scaling)
            full = pd.concat(
                evaluate.suite_rows(
                    model,
                    *dataset.load_suite(tiny_data, size, long_params.env),
                    long_params.env.cap(size),
                    context,
                    long_params,
                    variant,
                    1,
                )
                for size in long_params.data.suite_sizes
            )
            model.k_encoding.for_context(train_context)
            rows = swept[(swept.context == context) & (swept.rope_scaling == scaling)]
            pd.testing.assert_frame_equal(
                rows[evaluate.COLUMNS].reset_index(drop=True),
                full.reset_index(drop=True),
                check_dtype=False,
            )
    # only rope has scalings; learned cannot run past its table and says so on every row
    assert set(swept.rope_scaling) == ({"none", "linear"} if variant == "rope" else {"none"})
    if variant == "learned":
        beyond = swept[swept.context > train_context]
        assert not beyond.applicable.any() and beyond.success.isna().all()
        assert swept[swept.context < train_context].applicable.all()


def test_context_sweep_replays_what_a_context_can_change(tiny_data, long_params, monkeypatch):
    """The untrained model plays every episode to the cap whatever the context, so equal rows
    alone cannot show that a changed episode was played again: here what was played is."""
    params = dataclasses.replace(
        long_params, evaluate=dataclasses.replace(long_params.evaluate, rope_scaling=["none"])
    )
    model = model_for(params, "rope", seed=3)
    grid = evaluate.grid_sweep(model, params, tiny_data, "rope", 1)
    steps = grid.groupby("grid_size").steps.max()
    assert grid.grid_size.nunique() == 2 and steps[8] == 24 and steps[10] == 30
    played, suite_rows = [], evaluate.suite_rows

    def spy(model, lay, optimal_steps, cap, context, *rest):
        played.append((context, lay.size, len(lay)))
        return suite_rows(model, lay, optimal_steps, cap, context, *rest)

    monkeypatch.setattr(evaluate, "suite_rows", spy)
    evaluate.context_sweep(model, params, tiny_data, "rope", 1, grid)
    n = grid.grid_size.value_counts()
    # 12 changes every episode longer than 12; 27 those longer than 24 (the 10x10 ones, played
    # at 24 to the cap, 30 steps), and 30 those longer than 27 at 27, not all the 24-step ones
    assert played == [(12, 8, n[8]), (12, 10, n[10]), (27, 10, n[10]), (30, 10, n[10])]


def test_layouts_per_suite_plays_each_suites_first_layouts_in_every_sweep(tiny_data, long_params):
    """At most evaluate.layouts_per_suite of each suite, its first, in the grid and context
    sweeps and the reach ladder; the rows are those of playing that cut suite by itself."""
    from dtpe.steps import reach

    cut = dataclasses.replace(
        long_params, evaluate=dataclasses.replace(long_params.evaluate, layouts_per_suite=3)
    )
    model = model_for(cut, "rope", seed=3)
    grid = evaluate.grid_sweep(model, cut, tiny_data, "rope", 1)
    swept = evaluate.context_sweep(model, cut, tiny_data, "rope", 1, grid)
    for size in cut.data.suite_sizes:
        lay, optimal = dataset.load_suite(tiny_data, size, cut.env)
        assert len(lay) > 3
        first = lay.ids[:3].tolist()
        assert grid[grid.grid_size == size].layout_id.tolist() == first
        for _, rows in swept[swept.grid_size == size].groupby(["context", "rope_scaling"]):
            assert rows.layout_id.tolist() == first
        alone = evaluate.suite_rows(
            model,
            lay.subset(slice(0, 3)),
            optimal[:3],
            cut.env.cap(size),
            cut.model.context,
            cut,
            "rope",
            1,
        )
        pd.testing.assert_frame_equal(
            grid[grid.grid_size == size].reset_index(drop=True), alone, check_dtype=False
        )
    rungs = dataclasses.replace(cut, reach=dataclasses.replace(cut.reach, contexts=[12]))
    ladder = reach.ladder(model, rungs, tiny_data, "rope", 1, grid)
    assert len(ladder) == 3 * len(rungs.reach_sizes())


@pytest.mark.parametrize("value", [0, -3, 2.5, "40"])
def test_a_bad_layouts_per_suite_is_refused_naming_the_key(tiny_raw_params, value):
    from dtpe import params

    tiny_raw_params["evaluate"]["layouts_per_suite"] = value
    with pytest.raises(params.ParamsError, match="evaluate.layouts_per_suite"):
        params.check(tiny_raw_params)


def test_evaluation_cap_is_the_worlds_or_a_multiple_of_the_longest_expert_episode(long_params):
    size = 10
    world = long_params.env.cap(size)  # 3 N: 30
    assert long_params.evaluation_cap(size, 7) == world  # evaluate.expert_cap null
    at = dataclasses.replace(long_params.evaluate, expert_cap=1.5)
    capped = dataclasses.replace(long_params, evaluate=at)
    assert capped.evaluation_cap(size, 7) == 11  # ceil(1.5 x 7)
    assert capped.evaluation_cap(size, 25) == world  # never beyond the world's own cap


def test_an_expert_cap_only_cuts_the_episodes_that_outlast_it(tiny_data, long_params):
    """evaluate.expert_cap: every sweep plays each size to its multiple of the longest expert
    episode there; an episode that ended before it is the one played to the world's cap, and the
    stats stage reads the same caps from the rows."""
    from dtpe.analysis import stats

    capped = dataclasses.replace(
        long_params,
        evaluate=dataclasses.replace(long_params.evaluate, expert_cap=1.0, rope_scaling=["none"]),
    )
    model = model_for(capped, "rope", seed=3)
    full = evaluate.grid_sweep(model, long_params, tiny_data, "rope", 1)
    cut = evaluate.grid_sweep(model, capped, tiny_data, "rope", 1)
    caps = evaluate.suite_caps(tiny_data, capped)
    assert stats.evaluation_caps(capped, cut) == caps
    for size, cap in caps.items():
        longest = dataset.load_suite(tiny_data, size, capped.env)[1].max()
        assert cap == longest < long_params.env.cap(size)
        a, b = full[full.grid_size == size], cut[cut.grid_size == size]
        assert b.steps.max() == cap  # the untrained model's failures run to it
        ended = a.steps.to_numpy() < cap
        np.testing.assert_array_equal(a[ended].steps, b[ended].steps)
        np.testing.assert_array_equal(a[ended].success, b[ended].success)
        assert (b[~ended].steps == cap).all()
    swept = evaluate.context_sweep(model, capped, tiny_data, "rope", 1, cut)
    assert (swept.steps <= swept.grid_size.map(caps)).all()
    ends = stats.endings(pd.concat([cut, swept.drop(columns="rope_scaling")]), caps.__getitem__)
    assert set(ends.cap) == set(caps.values())
    assert ends.ended_pct_mean.between(0, 100).all()
