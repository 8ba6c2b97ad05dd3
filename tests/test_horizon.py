"""The success horizon is read from each seed's curve from the smallest suite up and stops at
the first fall below the threshold; the attention on the milestone takes the strongest head of
any layer, over the uniform weight, and stays NaN where a variant cannot run; Figure 4 gains its
panel only where the run measured it."""

import json

import numpy as np
import pandas as pd
import pytest

from dtpe.analysis import figures, horizon, tables

SIZES = [16, 24, 32, 48]


def curve(*success):
    return pd.Series(success, index=SIZES, dtype=float)


@pytest.mark.parametrize(
    "success, expected",
    [
        ((100, 95, 80, 95), 24),  # the recovery at 48 does not extend it
        ((100, 90, 90, 90), 48),  # at the threshold counts: through the largest
        ((85, 100, 100, 100), np.nan),  # below at the smallest: undefined
        ((100, np.nan, 100, 100), 16),  # not applicable counts as below
    ],
)
def test_a_seeds_horizon_is_the_last_size_before_the_first_fall(success, expected):
    found = horizon.seed_horizon(curve(*success), 90)
    assert (np.isnan(found) and np.isnan(expected)) or found == expected


def test_horizons_summarise_the_seeds_and_count_those_through_the_largest():
    rows = [
        {"grid_size": n, "context": c, "variant": "fire", "seed": s, "success_pct": v}
        for c, per_seed in {
            32: {1: (100, 95, 80, 95), 2: (100, 100, 100, 100), 3: (100, 100, 95, 50)},
            1616: {1: (100, 100, 100, 100), 2: (85, 100, 100, 100), 3: (100, 100, 100, 100)},
        }.items()
        for s, values in per_seed.items()
        for n, v in zip(SIZES, values)
    ]
    out = horizon.horizons(pd.DataFrame(rows), 90).set_index("context")
    assert out.loc[32, "horizons"] == "24 48 32" and out.loc[32, "horizon_median"] == 32
    assert (out.loc[32, "horizon_min"], out.loc[32, "horizon_max"]) == (24, 48)
    assert out.loc[32, "through_largest"] == 1 and out.loc[32, "n_seeds"] == 3
    # one seed undefined: no median, the range over the others
    assert out.loc[1616, "horizons"] == "48 nan 48" and np.isnan(out.loc[1616, "horizon_median"])
    assert out.loc[1616, "horizon_min"] == 48 and out.loc[1616, "through_largest"] == 2
    assert out.applicable.all()


def test_a_variant_that_cannot_run_at_a_context_is_not_applicable_not_below():
    rows = [
        {"grid_size": n, "context": c, "variant": "learned", "seed": s, "success_pct": v}
        for c, v in ((32, 100.0), (1616, np.nan))
        for s in (1, 2)
        for n in SIZES
    ]
    out = horizon.horizons(pd.DataFrame(rows), 90).set_index("context")
    assert out.loc[32, "applicable"] and not out.loc[1616, "applicable"]
    assert out.loc[32, "horizon_median"] == 48 and np.isnan(out.loc[1616, "horizon_median"])


def test_a_variant_that_played_fewer_suites_is_read_to_its_own_largest(tmp_path, tiny_params):
    """A submission's grid sweep plays some suites only (evaluate.grid_sizes): its curve is read
    to the first suite it skipped (16, 24 of 16, 24, 48: its largest is 24, never 48 across the
    gap), its seeds through there count as through, and context_success gives it no mean over
    the suites it played alone."""
    from dtpe.analysis import stats

    rows = [
        {"grid_size": n, "context": 32, "variant": v, "seed": s, "success_pct": 100.0}
        for v, sizes in (("fire", SIZES), ("alibi", [*SIZES[:2], SIZES[-1]]))
        for s in (1, 2)
        for n in sizes
    ]
    out = horizon.horizons(pd.DataFrame(rows), 90).set_index("variant")
    assert out.loc["fire", "largest_size"] == 48 and out.loc["alibi", "largest_size"] == 24
    assert out.loc["alibi", "through_largest"] == 2 and out.loc["alibi", "horizon_median"] == 24
    out.reset_index().to_csv(tmp_path / "horizon.csv", index=False)
    table = tables.horizon(tiny_params, tmp_path)
    shown = table.shown.set_index("Variant")["Through the largest"]
    assert shown["fire"] == "2 of 2" and shown["alibi"] == "2 of 2 [24]"
    assert "in brackets, the largest a variant played" in table.caption
    episodes = (
        pd.DataFrame(rows)
        .rename(columns={"success_pct": "success"})
        .assign(success=1, applicable=True)
    )
    means = stats.context_success(episodes, 32).set_index("variant").success_pct_mean
    assert means["fire"] == 100 and np.isnan(means["alibi"])


def write_json(path, variant, seed, suites):
    path.write_text(json.dumps({"variant": variant, "seed": seed, "milestone": suites}))
    return path


def suite(size, weights, uniform, steps):
    return {
        "size": size,
        "applicable": weights is not None,
        "steps": steps,
        "milestone_step": [0] * len(steps),
        "weight": weights,
        "uniform": uniform,
    }


def test_the_milestone_weight_is_the_strongest_head_of_any_layer(tmp_path):
    # two episodes, 2 layers x 2 heads each; the strongest heads: 0.6 and 0.2
    a = [[[0.1, 0.6], [0.3, 0.0]], [[0.2, 0.1], [0.0, 0.05]]]
    b = [[[0.4, 0.1], [0.1, 0.1]], [[0.1, 0.1], [0.3, 0.1]]]  # strongest: 0.4 and 0.3
    paths = [
        write_json(tmp_path / "a.json", "fire", 1, [suite(16, a, [0.1, 0.05], [10, 20])]),
        write_json(tmp_path / "b.json", "fire", 2, [suite(16, b, [0.1, 0.05], [10, 20])]),
        write_json(tmp_path / "c.json", "learned", 1, [suite(16, None, [0.1, 0.05], [10, 20])]),
    ]
    out = horizon.milestone(paths).set_index("variant")
    assert out.loc["fire", "weight_mean"] == pytest.approx(np.mean([0.4, 0.35]))
    # per seed the ratio to uniform, averaged over episodes: (6 + 4) / 2 and (4 + 6) / 2
    assert out.loc["fire", "ratio_mean"] == pytest.approx(5.0)
    assert out.loc["fire", "n_seeds"] == 2 and out.loc["fire", "steps_mean"] == 15
    assert out.loc["fire", "uniform_mean"] == pytest.approx(0.075)
    assert np.isnan(out.loc["learned", "weight_mean"]) and out.loc["learned", "n_seeds"] == 1
    # a run without the measurement: no rows, the columns kept
    bare = write_json(tmp_path / "d.json", "fire", 3, [])
    assert list(horizon.milestone([bare]).columns) == horizon.MILESTONE_COLUMNS
    assert horizon.milestone([bare]).empty


def test_figure_4_draws_the_milestone_panel_only_where_measured():
    maps = {"fire": {"distance_decay": [0.5, 0.3], "heatmap": [[1.0, 0.0], [0.5, 0.5]], "seeds": 1}}
    colours = {"fire": (0.0, 0.0, 1.0, 1.0)}
    bare = figures.attention(maps, colours, pd.DataFrame(columns=horizon.MILESTONE_COLUMNS), "fire")
    measured = pd.DataFrame(
        {
            "variant": "fire",
            "grid_size": [16, 64],
            "n_seeds": 1,
            "steps_mean": [12.0, 50.0],
            "uniform_mean": [0.03, 0.007],
            "weight_mean": [0.3, 0.25],
            "weight_std": np.nan,
            "ratio_mean": [10.0, 35.0],
            "ratio_std": np.nan,
        }
    )
    drawn = figures.attention(maps, colours, measured, "fire")
    panel = [ax for ax in drawn.axes if ax.get_xscale() == "log"]
    assert len(drawn.axes) == len(bare.axes) + 1 and len(panel) == 1
    lines = panel[0].get_lines()
    assert [list(line.get_ydata()) for line in lines] == [[0.3, 0.25], [0.03, 0.007]]


def test_the_table_shows_not_applicable_apart_from_undefined(tmp_path, tiny_params):
    rows = [
        {"grid_size": n, "context": c, "variant": "learned", "seed": s, "success_pct": v}
        for c, by_seed in ((6, {1: 100.0, 2: 50.0}), (9, {1: np.nan, 2: np.nan}))
        for s, v in by_seed.items()
        for n in SIZES
    ]
    horizon.horizons(pd.DataFrame(rows), 90).to_csv(tmp_path / "horizon.csv", index=False)
    shown = tables.horizon(tiny_params, tmp_path).shown.set_index("Context")
    assert shown.loc["6", "Per seed"] == "48 –" and shown.loc["6", "Horizon (median)"] == "–"
    assert shown.loc["6", "Range"] == "48" and shown.loc["6", "Through the largest"] == "1 of 2"
    assert (shown.loc["9", ["Horizon (median)", "Range", "Per seed"]] == "N/A").all()
