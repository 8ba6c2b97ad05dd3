"""How far back a model looks: the reach step plays the ladder of contexts shorter than the
training one on its sizes (each rung the episodes playing it afresh gives), its params are
refused naming the key, and the effective context follows its rule."""

import json
import math

import numpy as np
import pandas as pd
import pytest
import torch
import yaml

from dtpe import cli, params
from dtpe.analysis import cells, figures, reach, tables
from dtpe.model import checkpoint
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, episode_csv, evaluate


def test_the_step_writes_every_rung_of_every_reach_size(tmp_path, tiny_raw_params, tiny_data):
    """`dtpe reach` on the tiny configuration: the CSV holds the ladder's contexts on the
    training size and the largest suite size, each rung's rows those of playing every episode
    at that context, and no row of the training context (the grid sweep's)."""
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(tiny_raw_params))
    checked = params.check(tiny_raw_params)
    torch.manual_seed(3)
    model = DecisionTransformer(checked.model_config("rope")).eval()
    checkpoint.save(model, tmp_path / "m")
    grid = evaluate.grid_sweep(model, checked, tiny_data, "rope", 1)
    episode_csv.write(grid, checked.env.world, tmp_path / "grid.csv")
    args = ["reach", "--params", str(path), "--variant", "rope", "--seed", "1"]
    args += ["--data", str(tiny_data), "--model", str(tmp_path / "m")]
    args += ["--grid", str(tmp_path / "grid.csv"), "--out", str(tmp_path / "reach.csv")]
    assert cli.main(args) == 0
    rows = pd.read_csv(tmp_path / "reach.csv")
    assert list(rows.columns) == evaluate.COLUMNS[:-1] + episode_csv.NAMED
    assert sorted(rows.context.unique()) == checked.reach.contexts == [1, 2, 4]
    assert sorted(rows.grid_size.unique()) == checked.reach_sizes() == [8, 10]
    assert (grid.steps > 4).all()  # untrained, to the cap: every rung plays every episode again
    for context in checked.reach.contexts:
        full = pd.concat(
            evaluate.suite_rows(
                model,
                *dataset.load_suite(tiny_data, size, checked.env),
                checked.env.cap(size),
                context,
                checked,
                "rope",
                1,
            )
            for size in checked.reach_sizes()
        )
        pd.testing.assert_frame_equal(
            rows[rows.context == context].drop(columns="world").reset_index(drop=True),
            full.reset_index(drop=True),
            check_dtype=False,
        )


def test_the_sizes_default_to_the_training_and_the_largest(tiny_raw_params):
    tiny_raw_params["data"]["suite_sizes"] = [8, 10, 12]
    assert params.check(tiny_raw_params).reach_sizes() == [8, 12]
    tiny_raw_params["reach"]["sizes"] = [10]
    assert params.check(tiny_raw_params).reach_sizes() == [10]


@pytest.mark.parametrize(
    "key, value, message",
    [
        ("contexts", [1, 6], "params key reach.contexts.1: 6 is not below the training context"),
        ("contexts", [0, 2], "params key reach.contexts.0: 0 is less than the minimum of 1"),
        ("sizes", [8, 9], "params key reach.sizes.1: 9 is not a suite size"),
    ],
)
def test_bad_reach_params_are_refused_naming_the_key(tiny_raw_params, key, value, message):
    tiny_raw_params["reach"][key] = value
    with pytest.raises(params.ParamsError, match=message):
        params.check(tiny_raw_params)


def success_rows(means: dict, low: float, high: float, size: int = 8) -> pd.DataFrame:
    """reach.csv's rows of one variant: mean success per context, the interval at 30."""
    return pd.DataFrame(
        {
            "grid_size": size,
            "variant": "rope",
            "context": c,
            "success_pct_mean": m,
            "ci_low_pct": low if c == 30 else m - 5,
            "ci_high_pct": high if c == 30 else m + 5,
            "n_seeds": 5,
        }
        for c, m in means.items()
    )


@pytest.mark.parametrize(
    "means, low, effective",
    [
        # every shorter context below the interval: the model looks the whole window back
        ({1: 10.0, 2: 20.0, 4: 40.0, 8: 60.0, 16: 70.0, 30: 90.0}, 85.0, 30),
        # the current state alone does as well (one above the interval counts as within)
        ({1: 88.0, 2: 89.0, 4: 95.0, 8: 90.0, 16: 91.0, 30: 90.0}, 85.0, 1),
        # 2 falls below: 1 within again does not count, the shortest from which on all do is 4
        ({1: 86.0, 2: 80.0, 4: 86.0, 8: 90.0, 16: 91.0, 30: 90.0}, 85.0, 4),
        # one seed: no interval, no effective context
        ({1: 88.0, 30: 90.0}, math.nan, math.nan),
    ],
)
def test_the_effective_context_rule(means, low, effective):
    found = reach.effective_context(success_rows(means, low, 95.0), 30)
    assert len(found) == 1
    got = found.effective_context.iloc[0]
    assert (math.isnan(got) and math.isnan(effective)) or got == effective
    if not math.isnan(effective):
        assert found.effective_success_pct.iloc[0] == means[effective]


def test_the_table_and_figure_render_the_ladder_and_say_none_without_it(tmp_path, tiny_params):
    methods = {"confidence": 0.95, "bootstrap": "Two-level bootstrap."}
    success = pd.concat(
        [
            success_rows({1: 50.0, 4: 88.0, 30: 90.0}, 85.0, 95.0, size=8),
            success_rows({1: 10.0, 4: 20.0, 30: 40.0}, 30.0, 50.0, size=20),
        ]
    )
    for name, frames in {
        "with": (success, reach.effective_context(success, 30)),
        "without": (success.iloc[:0], reach.effective_context(success.iloc[:0], 30)),
    }.items():
        stats_dir = tmp_path / name
        stats_dir.mkdir()
        (stats_dir / "methods.json").write_text(json.dumps(methods))
        frames[0].to_csv(stats_dir / "reach.csv", index=False)
        frames[1].to_csv(stats_dir / "effective_context.csv", index=False)
        table = tables.reach(tiny_params, stats_dir)
        text = cells.markdown(table) + cells.latex(table)
        fig = figures.reach(*frames, 30, "rope", methods, str)
        if name == "with":
            assert list(table.shown.columns)[2:-1] == ["1", "4", "30 (trained)"]
            assert list(table.shown["Effective context"]) == ["4", "30"]
            assert "88.0 [83.0, 93.0]" in text and len(fig.axes) == 2
        else:
            assert "none measured in this run" in text and not len(table.shown)
            assert fig.texts[0].get_text() == "no reach evaluation in this run"
        assert np.isfinite(fig.get_size_inches()).all()


def test_stats_read_the_ladder_and_the_grid_sweep_for_the_training_context(tmp_path, tiny_params):
    """Context 4 plays as the training context does and context 1 solves nothing: every variant's
    effective context is 4 (1 where it solves nothing either), and the training context's numbers
    are success_by_grid's."""
    from test_stats import synthetic_params, write_inputs

    from dtpe.analysis import stats

    paths = write_inputs(tmp_path / "results")
    reach_csvs = []
    for grid_csv in paths["grid"]:
        grid = pd.read_csv(grid_csv)
        rungs = [grid.assign(context=4), grid.assign(context=1, success=0, ending="cap")]
        reach_csvs.append(tmp_path / "results" / "reach" / grid_csv.name)
        reach_csvs[-1].parent.mkdir(exist_ok=True)
        pd.concat(rungs).to_csv(reach_csvs[-1], index=False)
    out = tmp_path / "stats"
    out.mkdir()
    run = synthetic_params(tiny_params)
    stats.run(run, *(paths[k] for k in ("test", "grid", "context", "metrics", "attention")), out,
              reach_csvs)  # fmt: skip
    success = pd.read_csv(out / "reach.csv")
    trained = int(pd.read_csv(paths["grid"][0]).context.iloc[0])
    assert sorted(success.context.unique()) == [1, 4, trained]
    by_grid = pd.read_csv(out / "success_by_grid.csv")
    shared = [c for c in by_grid.columns if c in success.columns]
    pd.testing.assert_frame_equal(
        success.loc[success.context == trained, shared].reset_index(drop=True), by_grid[shared]
    )
    effective = pd.read_csv(out / "effective_context.csv")
    # at the floor (an interval from 0) nothing falls below it: context 1 is as good
    floor = effective.train_ci_low_pct == 0
    assert len(effective) == len(by_grid) and floor.any() and not floor.all()
    assert (effective.effective_context == np.where(floor, 1, 4)).all()


def test_endings_count_the_episodes_that_ended_before_the_cap_and_their_success():
    """Two seeds on one suite whose cap is 10: seed 1 ends 3 of 4 episodes (2 in success, one in
    failure at step 4), seed 2 none (every one at the cap): 37.5 % ended on average, and the
    success of those ended is seed 1's 2 of 3 alone; a success at the cap's own step ended (each
    row's `ending`, as the evaluation recorded it)."""
    from dtpe.analysis.stats import endings

    episodes = pd.DataFrame(
        {
            "grid_size": 9,
            "variant": "rope",
            "context": 1,
            "seed": [1, 1, 1, 1, 2, 2, 2, 2],
            "success": [1, 1, 0, 0, 0, 0, 0, 0],
            "steps": [5, 10, 4, 10, 10, 10, 10, 10],
            "applicable": True,
            "ending": ["success", "success", "failure"] + ["cap"] * 5,
        }
    )
    row = endings(episodes, lambda size: {9: 10}[size]).iloc[0]
    assert row.ended_pct_mean == pytest.approx((75 + 0) / 2)
    assert row.success_of_ended_pct_mean == pytest.approx(100 * 2 / 3)
