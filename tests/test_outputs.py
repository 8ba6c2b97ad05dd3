"""Tables, figures and the report, run for real on synthetic results/stats/ files with known
numbers: they render exactly what the stats stage wrote (means with their CIs, every pair's
difference, Holm and the smallest p, power, N/A and undefined marks), for any number of
variants; the figures are real PNG and PDF files that a rerun reproduces byte for byte; the
report states per grid size what the intervals resolve and calls nothing significant that
Holm does not."""

import dataclasses
import itertools
import json
import math
import subprocess
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
import test_stats
import yaml
from safetensors.numpy import save_file

from dtpe import numerics
from dtpe.analysis import (
    aggregates,
    figures,
    findings,
    first_screen,
    headline,
    horizon,
    methods,
    pairwise,
    palette,
    panels,
    reach,
    report,
    stats,
    tables,
    verdicts,
)
from dtpe.analysis.cells import UNDEFINED
from dtpe.analysis.outputs import TABLE_NAMES, figure_names
from dtpe.world.maze import WORLD, layouts
from dtpe.world.maze.planner import cost_to_go
from dtpe.world.maze.rules import State

VARIANTS = ["learned", "sinusoidal", "rope", "rope-t_learned"]
HORIZONLESS = pd.DataFrame(columns=horizon.HORIZON_COLUMNS)
REFERENCE = "rope"
SIZES = [8, 10, 20]
CONTEXTS = [6, 9]  # 6 is the training context; the learned table cannot run at 9
SEEDS = [1, 2, 3]
LAYOUTS = 100
# Mean success % per grid size and variant; 20x20 is at the floor.
MEANS = {
    8: {"learned": 94.0, "sinusoidal": 93.0, "rope": 95.0, "rope-t_learned": 96.0},
    10: {"learned": 20.0, "sinusoidal": 50.0, "rope": 80.0, "rope-t_learned": 70.0},
    20: {"learned": 0.0, "sinusoidal": 0.0, "rope": 2.0, "rope-t_learned": 1.0},
}
HALF_CI = 15.0  # a mean's CI: mean ± 15, cut to 0..100 as the bootstrap keeps it
HALF_DIFF_CI = 25.0  # a difference's CI: diff ± 25
# p, Holm-adjusted p and the design's smallest p of chosen primary comparisons; others 0.5.
P_VALUES = {
    (10, "rope", "learned"): (0.001, 0.018, 0.0001),  # significant after Holm
    (10, "learned", "sinusoidal"): (0.02, 0.3, 0.0001),  # p < alpha, but not after Holm
}
FLOOR_PCT = 10.0
DESIGN = {
    "family": "all_pairs",
    "tests": 18,
    "seeds": 3,
    "can_reject": False,
    "sentence": "The design cannot reject: a sentence the report shows as written.",
}
METHODS = {
    "unit": "The unit of replication is the trained seed.",
    "bootstrap": "Two-level bootstrap: seeds resampled per variant, layouts jointly.",
    "permutation": "Exact permutation test over seed labels.",
    "holm": "Holm over every pair at every grid size at the training context.",
    "prob_improvement": "P(a seed of a beats a seed of b), ties counted half.",
    "cohens_d": "Difference of means over the pooled seed SD (ddof 1).",
    "power": "Smallest difference detected at 80 % power, two-sided α.",
    "ranking": "Variants by mean success; the leading group's gap intervals cover 0.",
    "verdict": "No hypotheses declared: the primary family is every pair at every grid size.",
    "aggregates": "rliable's IQM and performance profile over the grids beyond training.",
    "alpha": 0.05,
    "claim_alpha": 0.05,
    "confidence": 0.95,
    "floor_pct": FLOOR_PCT,
    "study_seeds": 3,
}
# Synthetic stats files ----------------------------------------------------------------------


def pairs(variants):
    """Every pair once, the reference first where it is in the pair (stats.reference)."""
    for a, b in itertools.combinations(variants, 2):
        yield (b, a) if b == REFERENCE else (a, b)


def success_rows(variants, n_seeds):
    one = n_seeds == 1
    return pd.DataFrame(
        {
            "grid_size": size,
            "variant": e,
            "success_pct_mean": mean,
            "success_pct_std": math.nan if one else 5.0,
            "ci_low_pct": math.nan if one else max(0.0, mean - HALF_CI),
            "ci_high_pct": math.nan if one else min(100.0, mean + HALF_CI),
            "iqm_pct": mean,
            "n_seeds": n_seeds,
            "n_layouts": LAYOUTS,
        }
        for size, means in MEANS.items()
        for e, mean in means.items()
        if e in variants
    )


def comparison_rows(variants, n_seeds):
    one = n_seeds == 1
    rows = []
    for context, size, (a, b) in itertools.product(CONTEXTS, SIZES, pairs(variants)):
        is_primary = context == CONTEXTS[0]
        diff = MEANS[size][a] - MEANS[size][b]
        low, high = diff - HALF_DIFF_CI, diff + HALF_DIFF_CI
        p, p_holm, p_min = P_VALUES.get((size, a, b), (0.5, 1.0, 0.1))
        verdict = "a > b" if low > 0 else "a < b" if high < 0 else "no difference resolved"
        rows.append(
            {
                "grid_size": size,
                "context": context,
                "variant_a": a,
                "variant_b": b,
                "mean_a_pct": MEANS[size][a],
                "mean_b_pct": MEANS[size][b],
                "diff_pct": diff,
                "ci_low_pct": math.nan if one else low,
                "ci_high_pct": math.nan if one else high,
                "p_value": math.nan if one else p,
                "p_min": math.nan if one else p_min,
                "primary": is_primary,
                "p_holm": p_holm if is_primary and not one else math.nan,
                "prob_improvement": math.nan if one else 0.5 + diff / 200,
                # no spread between seeds at the floor: d undefined where the means tie
                "cohens_d": math.nan if one or (size == 20 and diff == 0) else diff / 10,
                "n_seeds_a": n_seeds,
                "n_seeds_b": n_seeds,
                "n_layouts": LAYOUTS,
                "verdict": "no difference resolved" if one else verdict,
            }
        )
    return pd.DataFrame(rows)


def context_rows(variants, n_seeds):
    rows = []
    for context in CONTEXTS:
        labels = variants + (["rope+yarn"] if context > CONTEXTS[0] else [])
        for i, label in enumerate(labels):
            runs = not (label == "learned" and context > CONTEXTS[0])
            rows.append(
                {
                    "context": context,
                    "variant": label,
                    "success_pct_mean": 90.0 - i if runs else math.nan,
                    "success_pct_std": 10.0 if runs and n_seeds > 1 else math.nan,
                    "n_seeds": n_seeds,
                    "applicable": runs,
                    "context_multiple": context / CONTEXTS[0],
                }
            )
    return pd.DataFrame(rows)


def power_rows(n_seeds):
    one = n_seeds == 1
    return pd.DataFrame(
        {
            "grid_size": size,
            "n_seeds": n_seeds,
            "seed_sd_pct": math.nan if one else sd,
            "mde_pct": math.nan if one else mde,
            "seeds_for_10pts": math.nan if one else needed,
            "chance_gap_pct": math.nan if one else 1.6 * sd,
            "best_pct": max(MEANS[size].values()),
            "informative": max(MEANS[size].values()) >= FLOOR_PCT,
        }
        for size, sd, mde, needed in [
            (8, 2.0, 5.1, 3.0),
            (10, 15.0, 38.2, 37.0),
            (20, 1.2, 3.1, 2.0),
        ]
    )


def training_rows(variants, n_seeds):
    std = math.nan if n_seeds == 1 else 0.01
    return pd.DataFrame(
        {
            "variant": e,
            **{
                f"{metric}_{stat}": value + i if stat == "mean" else std
                for metric, value in [
                    ("epoch", 3.0),
                    ("train_loss", 0.3),
                    ("val_loss", 0.35),
                    ("val_success_pct", 95.0),
                    ("overfit_gap", 0.05),
                    ("test_success_pct", 96.0),
                    ("train_seconds", 100.0),
                ]
                for stat in ("mean", "std")
            },
            "n_seeds": n_seeds,
            "test_success_pct_min": 94.0 + i,
        }
        for i, e in enumerate(variants)
    )


def curve_rows(variants, n_seeds):
    std = math.nan if n_seeds == 1 else 0.02
    return pd.DataFrame(
        {
            "variant": e,
            "epoch": epoch,
            **{
                f"{metric}_{stat}": (1 / epoch + i if stat == "mean" else std)
                for metric in ("train_loss", "val_loss", "val_success_pct", "overfit_gap")
                for stat in ("mean", "std")
            },
            "n_seeds": n_seeds,
        }
        for i, e in enumerate(variants)
        for epoch in (1, 2, 3)
    )


def steps_rows(variants, n_seeds):
    std = math.nan if n_seeds == 1 else 1.0
    return pd.DataFrame(
        {
            "grid_size": size,
            "variant": e,
            "steps_mean": 2.0 * size + i,
            "steps_std": std,
            "optimal_steps_mean": 1.5 * size,
            "ratio_to_optimal_mean": (2.0 * size + i) / (1.5 * size),
            "ratio_to_optimal_std": std,
            "n_seeds": n_seeds,
            "note": "failed episodes count their steps up to the cap",
        }
        for size in SIZES
        for i, e in enumerate(variants)
    )


def write_stats(stats_dir, variants, seeds):
    """Every file the stats stage writes, with the columns it writes."""
    stats_dir.mkdir(parents=True)
    n = len(seeds)
    frames = {
        "training": training_rows(variants, n),
        "training_curves": curve_rows(variants, n),
        "success_by_grid": success_rows(variants, n),
        "steps_by_grid": steps_rows(variants, n),
        "context": context_rows(variants, n),
        "comparisons": comparison_rows(variants, n),
        "power": power_rows(n),
    }
    # the ranking is read off the two tables above, as the stats stage reads it
    frames["ranking"] = pairwise.ranking(
        frames["success_by_grid"], frames["comparisons"], CONTEXTS[0]
    )
    frames["decisions"] = pd.DataFrame(columns=verdicts.COLUMNS)  # all pairs: none declared
    frames["iqm"] = pd.DataFrame(
        {
            "variant": e,
            "iqm_pct": MEANS[10][e],
            "ci_low_pct": MEANS[10][e] - 5,
            "ci_high_pct": MEANS[10][e] + 5,
            "n_seeds": n,
            "tasks": "10 20",
        }
        for e in variants
    )
    frames["profile"] = pd.DataFrame(
        {
            "variant": e,
            "tau_pct": tau,
            "fraction": float(MEANS[10][e] > tau),
            "ci_low": 0.0,
            "ci_high": 1.0,
        }
        for e in variants
        for tau in aggregates.TAUS
    )
    # a run without the reach step (tests/test_reach.py renders one with it)
    frames["reach"] = pd.DataFrame(columns=stats.REACH_COLUMNS)
    frames["whole_episode"] = pd.DataFrame(columns=stats.WHOLE_EPISODE_COLUMNS)  # nor a whole one
    frames["effective_context"] = pd.DataFrame(columns=reach.EFFECTIVE_COLUMNS)
    frames["seen"] = pd.DataFrame(columns=stats.SEEN_COLUMNS)  # nor the seen step
    frames["horizon"] = horizon.horizons(
        pd.DataFrame(
            {"grid_size": size, "context": CONTEXTS[0], "variant": e, "seed": s, "success_pct": m}
            for size, by_variant in MEANS.items()
            for e, m in by_variant.items()
            if e in variants
            for s in seeds
        ),
        90,
    )
    frames["milestone"] = pd.DataFrame(columns=horizon.MILESTONE_COLUMNS)  # nor a milestone
    frames["position_use"] = pd.DataFrame(
        {
            "variant": "rope",
            "grid_size": SIZES[-1],
            "off": ["k", "t"],
            "seeds": 2,
            "own": 80.0,
            "switched_off": [50.0, 80.0],
            "change": [-30.0, 0.0],
            "change_low": [-45.0, 0.0],
            "change_high": [-15.0, 0.0],
            "models_using": [2, 0],
        }
    )
    frames["endings"] = pd.DataFrame(
        {
            "grid_size": size,
            "variant": e,
            "context": CONTEXTS[0],
            "ended_pct_mean": 100.0 if size == SIZES[0] else 50.0 * i,
            "success_of_ended_pct_mean": float("nan") if i == 0 and size != SIZES[0] else 80.0,
            "cap": 3 * size,
            "failure_words": None,
        }
        for size in SIZES
        for i, e in enumerate(variants)
    )
    for name, frame in frames.items():
        frame.to_csv(stats_dir / f"{name}.csv", index=False)
    (stats_dir / "methods.json").write_text(json.dumps(METHODS))
    (stats_dir / "design.json").write_text(json.dumps(DESIGN))


def write_attention(root, variants, seeds, width=4):
    paths = []
    n = 3 * width
    heat = np.tril(np.ones((n, n)))
    heat /= heat.sum(1, keepdims=True)
    for variant, seed in itertools.product(variants, seeds):
        path = root / "attention" / f"{variant}_s{seed}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "variant": variant,
            "seed": seed,
            "distance_decay": [float(np.diagonal(heat, -d).mean()) for d in range(n)],
            "heatmap": heat.tolist(),
            "translation": {
                "axis": "t",
                "applicable": True,
                "mean_abs_diff": 1e-6 * seed,
                "max_abs_diff": 1e-5 * seed,
                "action_tv_mean": 0.01 * seed,
                "action_tv_max": 0.1 * seed,
                "shift": 20,
            },
        }
        path.write_text(json.dumps(result))
        paths.append(path)
    return paths


def write_suite(data_dir, size):
    lay = layouts.generate(size, 2, np.random.default_rng(0), 0.2)
    steps = cost_to_go(lay).steps(State(lay.start, np.zeros(len(lay), bool)), np.arange(len(lay)))
    (data_dir / "suites").mkdir(parents=True)
    save_file(
        {**WORLD.arrays(lay), "optimal_steps": steps},
        str(data_dir / "suites" / f"N{size}.safetensors"),
    )
    (data_dir / "summary.json").write_text(json.dumps({"world": WORLD.name}))


def params_file(root, params):
    """A params.yaml whose study matches the synthetic stats, for the report to load and show."""
    from conftest import tiny_raw

    raw = tiny_raw()
    raw["study"] = {"variants": params.study.variants, "seeds": params.study.seeds}
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def study_params(params, variants, seeds):
    return dataclasses.replace(
        params,
        study=dataclasses.replace(params.study, variants=variants, seeds=seeds),
        data=dataclasses.replace(params.data, suite_sizes=SIZES),
    )


def pipeline(root, params, variants=VARIANTS, seeds=SEEDS, timings=None, explorer=True):
    """stats files -> tables -> figures -> report, as the workflow runs them."""
    params = study_params(params, variants, seeds)
    stats_dir = root / "results" / "stats"
    write_stats(stats_dir, variants, seeds)
    pd.DataFrame(
        [{"variant": e, "seed": s, **test_stats.NUMERICS} for e in variants for s in seeds]
    ).to_csv(stats_dir / "numerics.csv", index=False)
    attention = write_attention(root / "results", variants, seeds)
    (stats_dir / "attention_maps.json").write_text(
        json.dumps(stats.attention_maps(attention, variants))
    )
    (root / "tables").mkdir()
    tables.write(params, stats_dir, root / "tables")
    write_suite(root / "data", max(SIZES))
    drawn = figures.draw(params, root / "data", stats_dir, attention, root / "figures")
    if explorer:  # the report only links the explore step's page
        (root / "figures" / "explorer.html").write_text("<html></html>\n")
    report.write(
        params_file(root, params),
        stats_dir,
        root / "tables",
        root / "figures",
        attention,
        [],
        [],
        timings,
        root / "figures" / "REPORT.md",
    )
    return drawn


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_params):
    root = tmp_path_factory.mktemp("outputs")
    drawn = pipeline(root, tiny_params, timings={"train/rope_s1": 12.5, "stats": 0.4})
    return root, drawn


def shown_row(path, start, contains=""):
    """The cells of the first Markdown row that starts with `start` and contains `contains`."""
    line = next(
        line
        for line in path.read_text().splitlines()
        if line.startswith(f"| {start}") and contains in line
    )
    return [cell.strip() for cell in line.strip("|").split("|")]


# Tables -----------------------------------------------------------------------------------


def test_every_table_in_three_formats(run):
    root, _ = run
    for name in TABLE_NAMES:
        for ext in ("csv", "md", "tex"):
            assert (root / "tables" / f"{name}.{ext}").stat().st_size > 0
    tex = (root / "tables" / "comparisons.tex").read_text()
    assert "\\begin{tabular}" in tex and "$\\alpha$" in tex and "−" not in tex
    assert list(pd.read_csv(root / "tables" / "training.csv").variant) == VARIANTS


def test_position_use_table_shows_the_change_and_the_models_using_each_encoding(run):
    root, _ = run
    big = SIZES[-1]
    k = shown_row(root / "tables" / "position_use.md", "rope", "| k ")
    assert k == ["rope", f"{big}×{big}", "k", "80.0", "50.0", "-30.0 [-45.0, -15.0]", "2 of 2"]
    t = shown_row(root / "tables" / "position_use.md", "rope", "| t ")
    assert t[-2:] == ["+0.0 [+0.0, +0.0]", "0 of 2"]
    text = (root / "figures" / "REPORT.md").read_text()
    assert f"- rope: k off at {big}×{big} -30.0 [-45.0, -15.0] points, 2 of 2 models" in text


def test_endings_table_shows_each_variants_ended_share_and_its_success(run):
    root, _ = run
    header = shown_row(root / "tables" / "endings.md", "Grid")
    assert header == ["Grid", "Context", "Cap", *VARIANTS]
    big = SIZES[-1]
    cells = shown_row(root / "tables" / "endings.md", f"{big}×{big}")
    # none ended: no success of them; the rest: ended % (success % of those)
    assert cells[2:] == [
        str(3 * big),
        "0 (–)",
        *(f"{50 * i} (80)" for i in range(1, len(VARIANTS))),
    ]
    assert shown_row(root / "tables" / "endings.md", f"{SIZES[0]}×")[3] == "100 (80)"


def test_success_table_shows_means_with_their_interval(run):
    root, _ = run
    numbers = pd.read_csv(root / "tables" / "success_by_grid.csv").set_index("grid_size")
    assert list(numbers.index) == SIZES
    assert numbers.loc[10, "rope_minus_learned_diff_pct"] == 60.0
    header = shown_row(root / "tables" / "success_by_grid.md", "Grid")
    assert header == ["Grid", *VARIANTS] + [f"rope − {e} (pp)" for e in VARIANTS if e != REFERENCE]
    cells = shown_row(root / "tables" / "success_by_grid.md", "10×10")
    assert cells[1:5] == [
        "20.0 [5.0, 35.0]",
        "50.0 [35.0, 65.0]",
        "80.0 [65.0, 95.0]",
        "70.0 [55.0, 85.0]",
    ]
    assert cells[5] == "+60.0 [+35.0, +85.0]"
    # the CI is the one the stats stage wrote, cut at 100, not mean ± anything
    assert shown_row(root / "tables" / "success_by_grid.md", "8×8")[3] == "95.0 [80.0, 100.0]"
    assert "±" not in (root / "tables" / "success_by_grid.md").read_text().split("\n\n")[1]


def test_comparisons_table_has_every_pair_at_the_training_context(run):
    root, _ = run
    numbers = pd.read_csv(root / "tables" / "comparisons.csv")
    assert set(numbers.context) == {CONTEXTS[0]} and numbers.primary.all()
    assert len(numbers) == len(SIZES) * math.comb(len(VARIANTS), 2)
    path = root / "tables" / "comparisons.md"
    text = path.read_text()
    for key in ("bootstrap", "permutation", "holm", "prob_improvement", "cohens_d"):
        assert METHODS[key] in text
    cells = shown_row(path, "10×10", "rope − learned")
    assert cells[2:] == ["+60.0 [+35.0, +85.0]", "0.001", "0.018", "<0.001", "0.80", "+6.00"] + [
        "a > b"
    ]
    assert shown_row(path, "10×10", "rope − rope-t_learned")[-1] == "no difference resolved"
    tie = shown_row(path, "20×20", "learned − sinusoidal")
    assert tie[7] == UNDEFINED  # Cohen's d without spread and without difference


def test_context_table_keeps_not_applicable_and_scaling_labels(run):
    root, _ = run
    numbers = pd.read_csv(root / "tables" / "context.csv").set_index("context")
    assert not numbers.loc[9, "learned_applicable"]
    header = shown_row(root / "tables" / "context.md", "Context")
    assert header == ["Context", *VARIANTS, "rope+yarn"]
    cells = shown_row(root / "tables" / "context.md", "9 ")
    assert cells[0] == "9 (1.5×)" and cells[1] == "N/A" and cells[5] == "86.0 ± 10.0"
    assert shown_row(root / "tables" / "context.md", "6 ")[5] == "N/A"


def test_power_table_marks_the_floor(run):
    root, _ = run
    path = root / "tables" / "power.md"
    assert shown_row(path, "10×10") == ["10×10", "3", "15.0", "38.2", "37", "24.0", "80.0", "yes"]
    assert shown_row(path, "20×20")[-1] == "no (floor)"
    assert "Chance gap, 3 seeds (pp)" in path.read_text()
    assert METHODS["power"] in path.read_text() and "10 %" in path.read_text()


# Figures ----------------------------------------------------------------------------------


def test_figures_are_png_and_pdf(run):
    root, drawn = run
    assert sorted(p.name for p in drawn) == sorted(
        f"{n}.{e}" for n in figure_names("maze") for e in ("png", "pdf")
    )
    for path in drawn:
        head = path.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if path.suffix == ".png" else head.startswith(b"%PDF")


def test_success_figure_draws_the_stats_intervals(run):
    root, _ = run
    table = pd.read_csv(root / "results" / "stats" / "success_by_grid.csv")
    fig = headline.curves(table, HORIZONLESS, "rope", 8, WORLD.words, "")
    drawn = np.concatenate(
        [np.asarray(c.get_segments()) for ax in fig.axes for c in ax.collections]
    )
    lows, highs = drawn[:, 0, 1], drawn[:, 1, 1]  # the reference's drawn in every panel
    assert set(lows) == set(table.ci_low_pct) and set(highs) == set(table.ci_high_pct)
    assert lows.min() >= 0 and highs.max() <= 100


def test_effect_figure_has_a_row_per_pair_and_holm_marks():
    variants = ["a", "b", "c", "d", "e"]
    rows = [
        {
            "grid_size": size,
            "variant_a": a,
            "variant_b": b,
            "diff_pct": 1.0,
            "ci_low_pct": -1.0,
            "ci_high_pct": 3.0,
            "p_holm": 0.01 if (size, a, b) == (12, "a", "e") else 0.5,
            "primary": True,
            "verdict": "no difference resolved",
        }
        for size in (8, 12)
        for a, b in itertools.combinations(variants, 2)
    ]
    fig = figures.effect_sizes(pd.DataFrame(rows), variants, METHODS, str, "a")
    ax = fig.axes[0]
    rows_at = dict(zip(ax.get_yticks(), (t.get_text() for t in ax.get_yticklabels())))
    assert len(rows_at) == 10 and rows_at[max(rows_at)] == "a − b"  # the first pair on top
    marks = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert marks == ["*"]


def test_colours_are_distinct_for_many_variants():
    for n in (3, 12, 25):
        colours = palette.colours([f"e{i}" for i in range(n)])
        assert len(set(colours.values())) == n


@pytest.mark.parametrize("n", [3, 8, 9, 20])
def test_many_variants_go_into_panels_of_at_most_seven_curves(n):
    """Each panel holds at most panels.MAX_LINES curves, the reference in every one; every
    variant is drawn, and the figure stays within panels.MAX_PIXELS when saved."""
    variants = ["rope", *(f"e{i}" for i in range(n - 1))]
    table = pd.DataFrame(
        [
            {"grid_size": size, "variant": v, "success_pct_mean": 50.0}
            | {"ci_low_pct": 40.0, "ci_high_pct": 60.0}
            for v in variants
            for size in (8, 10)
        ]
    )
    horizons = pd.DataFrame({"variant": variants, "horizon_median": 8.0})
    fig = headline.curves(table, horizons, "rope", 8, WORLD.words, "")
    legends = [[t.get_text() for t in ax.get_legend().get_texts()] for ax in fig.axes]
    assert all(len(names) <= panels.MAX_LINES and "rope" in names for names in legends)
    assert set().union(*legends) == set(variants)
    assert fig.get_figwidth() * panels.DPI <= panels.MAX_PIXELS


def test_figures_rerun_byte_identical(run, tmp_path):
    root, _ = run
    comparisons = pd.read_csv(root / "results" / "stats" / "comparisons.csv")
    success = pd.read_csv(root / "results" / "stats" / "success_by_grid.csv")
    for out in ("a", "b"):
        figures.save(
            figures.effect_sizes(comparisons[comparisons.primary], VARIANTS, METHODS, str, "rope"),
            tmp_path / f"{out}5",
        )
        figures.save(
            headline.curves(success, HORIZONLESS, "rope", 8, WORLD.words, ""),
            tmp_path / f"{out}3",
        )
    for name, ext in itertools.product(("5", "3"), ("png", "pdf")):
        assert (tmp_path / f"a{name}.{ext}").read_bytes() == (
            tmp_path / f"b{name}.{ext}"
        ).read_bytes()


# Report -----------------------------------------------------------------------------------


def findings_of(text):
    return text.split("## Findings")[1].split("## Statistical methods")[0]


def test_report_embeds_tables_figures_and_methods(run):
    root, _ = run
    text = (root / "figures" / "REPORT.md").read_text()
    for name in figure_names("maze"):
        assert f"]({name}.png)" in text
    for name in TABLE_NAMES:  # each short enough to show
        assert (root / "tables" / f"{name}.md").read_text().strip() in text
    methods = text.split("## Statistical methods")[1].split("\n## ")[0]
    for key in ("unit", "bootstrap", "permutation", "holm", "power", "ranking"):
        assert methods.count(METHODS[key]) == 1, key
    # the t-shift check: one value per seed, as the attention stage wrote it
    section = text.split("## Shifting the global timestep t")[1].split("\n## ")[0]
    assert "1.0e-06, 2.0e-06, 3.0e-06" in section and "1.0e-02, 2.0e-02, 3.0e-02" in section
    assert "explorer.html" in text.split("## Looking at episodes")[1]
    assert "models per core-hour" in text
    timing = next(line for line in text.splitlines() if line.startswith("| train "))
    assert "| 1 " in timing and "12.5" in timing  # one job of its kind
    assert "```yaml\nstudy:" in text and "Code version: `" in text


def test_report_opens_with_its_question_answer_figure_and_table(run):
    """The first screen: the question (params report.question here: no hypothesis declared),
    the answer as leads, the headline figure, the short table and the links to each section,
    each section then opening with the line that says what it shows."""
    root, _ = run
    text = (root / "figures" / "REPORT.md").read_text()
    screen = "\n".join(text.splitlines()[:60])
    assert screen.index("**Question.**") < screen.index("**Answer.**") < screen.index("## ")
    assert "Leads at " in screen and "Exploratory, nothing decided" in screen
    assert "](headline.png)" in screen and "| Variant " in screen
    for title, shows in report.SHOWS.items():
        assert f"[{title}](#{first_screen.anchor(title)})" in screen
        assert f"## {title}\n\n*{shows}*" in text


def test_a_table_longer_than_a_screen_is_linked_not_shown(tmp_path):
    tables_dir = tmp_path / "results" / "tables"
    tables_dir.mkdir(parents=True)
    for name in TABLE_NAMES:
        rows = report.LONG_TABLE + 5 if name == "comparisons" else 3
        (tables_dir / f"{name}.md").write_text("| a |\n|--|\n" + "| 1 |\n" * rows)
    text = report.tables_section(tables_dir, tmp_path / "figures")
    assert f"{report.LONG_TABLE + 5} rows: [Markdown](../results/tables/comparisons.md)" in text
    assert text.count("| 1 |") == 3 * (len(TABLE_NAMES) - 1)


def test_report_throughput_counts_the_threads_params_give_each_job():
    timings = {"train/rope_s1": 100.0, "evaluate/rope_s1": 80.0, "stats": 20.0}
    one, two = (report.timings_section(timings, threads) for threads in (1, 2))
    # 1 model in 180 s of train and evaluate: 20 per core-hour on one core, 10 on two
    assert "one core each (compute.threads 1)" in one and "20.0 models per core-hour" in one
    assert "2 cores each (compute.threads 2)" in two and "10.0 models per core-hour" in two
    assert "18.0 models per hour of wall time" in two  # 200 s over every step


def test_report_counts_only_the_models_of_its_params():
    # benchmarks/ also holds the steps of a model trained beside the run (a seed on its way in)
    timings = {
        "train/rope_s1": 100.0,
        "evaluate/rope_s1": 80.0,
        "train/rope_s9": 90.0,
        "stats": 20.0,
    }
    study = SimpleNamespace(variants=["rope"], seeds=[1])
    own = report.own_steps(timings, study)
    assert own == {"train/rope_s1": 100.0, "evaluate/rope_s1": 80.0, "stats": 20.0}
    assert "1 models trained" in report.timings_section(own, 1)
    assert report.own_steps(None, study) is None


def test_report_findings_follow_the_intervals(run):
    root, _ = run
    text = findings_of((root / "figures" / "REPORT.md").read_text())
    grid_10 = next(line for line in text.splitlines() if line.startswith("- **10×10**"))
    assert "informative (best mean 80.0 % ≥ 10 %)" in grid_10
    assert "rope 80.0 % [65.0, 95.0]" in grid_10
    assert (
        "rope > learned: rope − learned = +60.0 points (95 % CI [+35.0, +85.0], Holm p 0.018, "
        "significant, smallest possible p <0.001)" in grid_10
    )
    # p < alpha before Holm, not after: resolved by its CI (b ahead), but not significant
    assert (
        "sinusoidal > learned: learned − sinusoidal = -30.0 points (95 % CI [-55.0, -5.0], "
        "Holm p 0.300, smallest possible p <0.001)" in grid_10
    )
    unresolved = grid_10.split("They resolve no difference for ")[1]
    assert "rope − rope-t_learned +10.0 [-15.0, +35.0]" in unresolved
    # "significant" only where Holm says so, besides the sentence that defines the word
    assert text.count("significant") == 1 and text.count('"Significant" means') == 1
    grid_20 = next(line for line in text.splitlines() if line.startswith("- **20×20**"))
    assert "at the floor (best mean 2.0 % < 10 %)" in grid_20
    grid_8 = next(line for line in text.splitlines() if line.startswith("- **8×8**"))
    assert "The intervals resolve" not in grid_8


def test_report_ranks_by_the_gap_intervals(run):
    root, _ = run
    text = findings_of((root / "figures" / "REPORT.md").read_text())
    ranking = text.split("### Ranking")[1].split("###")[0]
    assert METHODS["ranking"] in ranking
    assert (
        "- 10×10: first rope 80.0 % [65.0, 95.0]; leading group (2 of 4): rope, rope-t_learned; "
        "below the first: sinusoidal 30.0 [5.0, 55.0], learned 60.0 [35.0, 85.0]." in ranking
    )
    assert "- 8×8: first rope-t_learned 96.0 % [81.0, 100.0]; leading group (4 of 4)" in ranking
    assert "- 20×20 (at the floor): first rope 2.0 %" in ranking
    table = (root / "tables" / "ranking.md").read_text()
    row = next(line for line in table.splitlines() if line.startswith("| 10×10  | 3 "))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells == [
        "10×10",
        "3",
        "sinusoidal",
        "50.0 [35.0, 65.0]",
        "30.0 [5.0, 55.0]",
        pairwise.BELOW,
    ]


def test_many_unresolved_pairs_are_counted_not_listed():
    pairs = pd.DataFrame(
        {
            "variant_a": [f"e{i}" for i in range(8)],
            "variant_b": "f",
            "diff_pct": 1.0,
            "ci_low_pct": -5.0,
            "ci_high_pct": 7.0,
            "verdict": "no difference resolved",
        }
    )
    success = pd.DataFrame(
        {"variant": ["f"], "success_pct_mean": [50.0], "ci_low_pct": [40.0], "ci_high_pct": [60]}
    )
    power = pd.Series({"informative": True, "best_pct": 50.0})
    line = findings.grid_finding(str, 12, success, pairs, power, METHODS)
    number = TABLE_NAMES.index("comparisons") + 1
    assert f"All 8 pairs resolve no difference (Table {number})." in line
    assert "e3 − f" not in line
    line = findings.grid_finding(str, 12, success, pairs.head(6), power, METHODS)
    assert "They resolve no difference for e0 − f +1.0 [-5.0, +7.0]" in line


def test_report_findings_order_power_confound_and_reproducibility(run):
    root, _ = run
    text = findings_of((root / "figures" / "REPORT.md").read_text())
    order = [
        "per grid size",
        "### Ranking",
        "### Power",
        "### Mechanisms",
        "### What is reproducible",
    ]
    assert [text.index(h) for h in order] == sorted(text.index(h) for h in order)
    assert (
        "10×10: seed SD 15.0 points with 3 seeds per variant; the smallest detectable difference "
        "is 38.2 points, and detecting 10 points needs 37 seeds per variant; 3 seeds per "
        "variant (the study's count) exceed 24.0 points between two equal variants in 5 % of "
        "comparisons." in text
    )
    assert "In learned, sinusoidal, rope the timestep t" in text  # not rope-t_learned
    assert "t equals the in-window index k" in text
    assert "9 timesteps (1.5× the training context): learned N/A" in text
    assert "rope+yarn 86.0 ± 10.0" in text
    assert "dataset and evaluation suites are the same bytes on every machine" in text
    assert "portable numerics mode" in text and "MKL on its COMPATIBLE branch" in text


def test_reproducibility_says_this_machine_only_when_a_model_ran_native():
    record = dict(test_stats.NUMERICS, cpu="Other CPU")
    native = dict(record, numerics="native", reproducible_on=numerics.THIS_MACHINE)
    text = findings.reproducible_text(pd.DataFrame([test_stats.NUMERICS, native]))
    assert "this machine only" in text and "Other CPU, Test CPU" in text
    assert "portable numerics mode" in findings.reproducible_text(pd.DataFrame([record]))


def test_report_numbers_come_from_the_stats_files(tmp_path, run):
    """A number changed in results/stats/ and nowhere else reaches the findings."""
    root, _ = run
    stats_dir = tmp_path / "stats"
    stats_dir.mkdir()
    for path in (root / "results" / "stats").iterdir():
        (stats_dir / path.name).write_bytes(path.read_bytes())
    success = pd.read_csv(stats_dir / "success_by_grid.csv")
    success.loc[(success.grid_size == 10) & (success.variant == "rope"), "ci_low_pct"] = 61.5
    success.to_csv(stats_dir / "success_by_grid.csv", index=False)
    out = tmp_path / "REPORT.md"
    attention = sorted((root / "results" / "attention").glob("*.json"))
    report.write(
        root / "params.yaml",
        stats_dir,
        root / "tables",
        root / "figures",
        attention,
        [],
        [],
        None,
        out,
    )
    assert "rope 80.0 % [61.5, 95.0]" in out.read_text()


def test_one_seed_runs_end_to_end(tmp_path, tiny_params):
    pipeline(tmp_path, tiny_params, variants=VARIANTS[:3], seeds=[7], explorer=False)
    text = (tmp_path / "figures" / "REPORT.md").read_text()
    assert "Not made: `dtpe explore` replays the run's checkpoints" in text
    assert "CI undefined" in text and "not recorded" in text and "power undefined" in text
    assert "- 10×10: first rope 80.0 % (CI undefined); gap intervals undefined (one seed)" in text
    row_8 = shown_row(tmp_path / "tables" / "success_by_grid.md", "8×8")
    assert row_8[1] == f"94.0 [{UNDEFINED}]"
    power = shown_row(tmp_path / "tables" / "power.md", "8×8")
    assert power[2:5] == [UNDEFINED] * 3


def test_code_version_is_dirty_for_code_and_params_only(tmp_path):
    def git(*a):
        return subprocess.run(
            ["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True
        ).stdout

    git("init", "-q")
    for name in ("src/dtpe/model/transformer.py", "params.yaml", "figures/REPORT.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("one: 1\n")
    (tmp_path / "params-run.yaml").write_text("base: params.yaml\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    head = git("rev-parse", "--short", "HEAD").strip()
    params = tmp_path / "params.yaml"
    (tmp_path / "figures/REPORT.md").write_text("rewritten by the pipeline\n")
    assert report.code_version(params) == head
    (tmp_path / "src/dtpe/model/transformer.py").write_text("two\n")
    assert report.code_version(params) == f"{head}-dirty"
    git("checkout", "--", "src")
    params.write_text("one: 2\n")
    assert report.code_version(params) == f"{head}-dirty"
    # an overlay run is dirty when its base is
    assert report.code_version(tmp_path / "params-run.yaml") == f"{head}-dirty"


def test_the_confound_reads_variant_names_with_the_catalog():
    """`rope-t_sinusoidal` names its t and is still the study's sinusoid of t."""
    from dtpe.analysis.findings import confound_text

    assert "In rope-t_sinusoidal the timestep t" in confound_text(["rope-t_sinusoidal"])
    assert "In rope the timestep t" in confound_text(["rope", "rope-t_none"])
    assert "No model of this run encodes t with the sinusoid" in confound_text(["rope-t_none"])


def test_a_declared_run_reports_its_verdict_first_and_the_rest_as_exploratory(
    tmp_path, tiny_params
):
    root = tmp_path
    pipeline(root, tiny_params)
    stats_dir = root / "results" / "stats"
    comparisons = pd.read_csv(stats_dir / "comparisons.csv")
    comparisons.assign(primary=False, p_holm=math.nan).to_csv(
        stats_dir / "comparisons.csv", index=False
    )
    decided = {
        "hypothesis": "rope vs learned on 10+20",
        "a": "rope",
        "b": "learned",
        "endpoint": "10+20",
        "outcome": "a > b",
        "estimate": verdicts.STAGEWISE,
        "effect_pct": 31.0,
        "ci_low_pct": 20.5,
        "ci_high_pct": 41.5,
        "ci_level": 1 - 0.025 / 2,
        "naive_effect_pct": 33.0,
        "naive_ci_low_pct": 22.5,
        "naive_ci_high_pct": 43.5,
        "margin_pct": 10.0,
        "equivalence_low_pct": 22.0,
        "equivalence_high_pct": 40.0,
        "p_value": math.nan,
        "p_holm": math.nan,
        "seeds_a": 5,
        "seeds_b": 5,
        "models": 10,
        "interim": 1,
        "stable": 1.0,
        "drops": 10,
        "fragile_drops": 3,
        "z_margin": 0.41,
        "preregistration": "recorded, amended",
        "overlay_commit": f"{'a' * 40} {'b' * 40}",
        "overlay_sha256": f"{'c' * 64} {'d' * 64}",
    }
    still_open = {
        **decided,
        "hypothesis": "rope vs sinusoidal on 10+20",
        "b": "sinusoidal",
        "outcome": "open",
        "estimate": verdicts.NAIVE,
        "effect_pct": 16.0,
        "ci_low_pct": -2.0,
        "ci_high_pct": 30.0,
    }
    decisions = pd.DataFrame([decided, still_open], columns=verdicts.COLUMNS)
    decisions.to_csv(stats_dir / "decisions.csv", index=False)
    pd.DataFrame(
        [
            {
                "interim": 1,
                "variants": "learned sinusoidal rope",
                "seeds": "1 2 3",
                "finished": True,
            },
            {"interim": 2, "variants": "sinusoidal rope", "seeds": "4 5 6", "finished": False},
        ]
    ).to_csv(stats_dir / "interims.csv", index=False)
    design = {**DESIGN, "can_reject": True, "sentence": "The design can reject: as written."}
    (stats_dir / "design.json").write_text(json.dumps(design))
    from conftest import tiny_raw

    raw = tiny_raw()
    raw["study"] = {"variants": VARIANTS, "seeds": SEEDS + [4, 5, 6]}
    raw["data"]["suite_sizes"] = SIZES
    raw["verdict"] = {
        "hypotheses": [
            {"a": "rope", "b": b, "grids": [10, 20], "margin": 10}
            for b in ("learned", "sinusoidal")
        ],
        "confirmatory": True,
        "sequential": {"interims": 2, "seeds_per_interim": 3, "spending": "obrien_fleming"},
        "amendments": [{"from_sha256": "c" * 64, "why": "a comment reworded."}],
    }
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    from dtpe import params as params_mod

    declared = params_mod.check(raw)
    tables_dir = root / "tables"
    for old in tables_dir.iterdir():
        old.unlink()
    tables.write(declared, stats_dir, tables_dir)
    from dtpe.analysis import shared_layouts

    pd.DataFrame(
        [
            (shared_layouts.THIS_RUN, "../explore", "train", None, 8, 5, 8),
            (shared_layouts.THIS_RUN, "../explore", "suite", 10, 6, 2, 3),
            (shared_layouts.THIS_RUN, "../explore", "suite", 20, 6, 0, 1),
        ],
        columns=shared_layouts.COLUMNS,
    ).to_csv(stats_dir / "shared_layouts.csv", index=False)
    attention = sorted((root / "results" / "attention").glob("*.json"))
    out = root / "figures" / "REPORT.md"
    report.write(path, stats_dir, tables_dir, root / "figures", attention, [], [], None, out)
    text = out.read_text()
    verdict = text.split("### Verdict\n\n")[1].split("###")[0]
    assert verdict.startswith("The design can reject: as written.")
    assert (
        "shared_layouts.csv per size): endpoint grids 10, 20: ../explore: train 5/8 (8), "
        "endpoint 2/12 (4)." in verdict
    )
    assert (
        "confirmatory hypotheses (2; seeds added in interims of 3 by a group-sequential" in verdict
    )
    assert (
        "- **rope vs learned on 10+20**: rope above learned (tested against 0): +31.0 [+20.5, "
        "+41.5] points [98.75 % CI], 5 + 5 seeds (stagewise median-unbiased; naive +33.0 [+22.5, "
        "+43.5]) (10 models, stable for 100% of 100 test seeds)" in verdict
    )
    assert "- **rope vs sinusoidal on 10+20**: rope vs sinusoidal open after interim" in verdict
    assert "Interims finished: 1 of at most 2, 9 models trained." in verdict
    assert "Next: interim 2, sinusoidal rope at seeds 4 5 6" in verdict
    assert (
        "Preregistration, the params overlay that declares these hypotheses as its models record "
        "it (decisions.csv): recorded, amended: overlay at `aaaaaaa`, `bbbbbbb` (sha256 "
        "`cccccccccccc`, `dddddddddddd`), amended since, as declared." in verdict
    )
    assert "Amended from the overlay's content `cccccccccccc`: a comment reworded." in verdict
    # the headline's and the methods' levels are the decisions' own, not the run's 95 %
    assert "its estimate with its 98.75 % interval against 0" in text.split("## ")[0]
    assert "(the declared hypotheses' at 98.75 %: 1 − the α each one's rejection" in text
    assert "Every comparison below is exploratory" in text
    assert "Holm p" not in text.split("### What the intervals say")[1].split("###")[0]
    assert "unadjusted p" in text and "exploratory)" in text
    caption = (tables_dir / "comparisons.md").read_text().splitlines()[0]
    assert caption.startswith("Exploratory and unadjusted")
    assert shown_row(tables_dir / "decisions.md", "rope vs learned")[1] == "a > b"
    # the fragility's two columns, last: 3 of the 10 models' drops undo it, 0.41 past the bound
    assert shown_row(tables_dir / "decisions.md", "rope vs learned")[-2:] == ["3 of 10", "+0.41"]
    assert text.index("### Table 1. Declared hypotheses") < text.index("### Table 2. Training")


def test_attention_files_lacking_are_named_or_refused(tmp_path):
    """A run whose checkpoints were gone before the attention step (the GPU budget ran out)
    names those models; any other missing file, a named model that has its file, or one not of
    the run is refused."""
    from dtpe import cli

    models = [("learned", 1), ("rope", 1), ("rope", 2)]
    write_attention(tmp_path, ["learned", "rope"], [1])
    assert len(cli.attention_jsons(models, tmp_path, ["rope_s2"])) == 2
    with pytest.raises(FileNotFoundError, match="1 models lack their JSON.*rope_s2.json"):
        cli.attention_jsons(models, tmp_path, [])
    with pytest.raises(ValueError, match=r"\['rope_s1'\] have their attention file"):
        cli.attention_jsons(models, tmp_path, ["rope_s1", "rope_s2"])
    with pytest.raises(ValueError, match=r"\['fire_s1'\] are not models of this run"):
        cli.attention_jsons(models, tmp_path, ["fire_s1", "rope_s2"])


def test_report_names_the_models_without_attention_and_the_precision(tmp_path, tiny_params):
    paths = write_attention(tmp_path, ["learned"], [1])
    text = report.translation_section(paths, ["learned", "rope"], ["rope_s1", "rope_s2"])
    assert "| learned   | 1 " in text
    assert text.endswith(
        "No attention results for rope_s1, rope_s2: their checkpoints were gone before the "
        "attention step ran (`dtpe stats --no-attention`), so Figures 4 and 6 and this table "
        "average the other seeds (Figure 4 gives each variant's count)."
    )
    assert findings.precision_text(tiny_params) == ""
    bf16 = dataclasses.replace(
        tiny_params, train=dataclasses.replace(tiny_params.train, precision="bf16")
    )
    assert findings.precision_text(bf16) == (
        " Training ran under bf16 autocast (train.precision, evaluate.precision): matrix "
        "products in that precision, the weights and the optimizer's state in fp32."
    )


def test_models_never_evaluated_are_named_or_refused(tmp_path):
    """A run whose checkpoints were gone before the evaluation finished (the GPU budget ran out)
    names those models: they leave the evaluations' inputs; a named model that has its grid
    sweep, or one not of the run, is refused."""
    from dtpe import cli

    models = [("learned", 1), ("rope", 1), ("rope", 2)]
    (tmp_path / "eval" / "grid").mkdir(parents=True)
    for name in ("learned_s1", "rope_s1"):
        (tmp_path / "eval" / "grid" / f"{name}.csv").write_text("x\n")
    assert cli.evaluated_models(models, tmp_path, ["rope_s2"]) == models[:2]
    assert cli.evaluated_models(models, tmp_path, []) == models
    with pytest.raises(ValueError, match=r"\['rope_s1'\] have their grid sweep"):
        cli.evaluated_models(models, tmp_path, ["rope_s1", "rope_s2"])
    with pytest.raises(ValueError, match=r"\['fire_s1'\] are not models of this run"):
        cli.evaluated_models(models, tmp_path, ["fire_s1"])


def seen_rows(variant, seed, wins, layouts=4):
    """A sweep's rows of one model: the first `wins` of `layouts` layouts succeed."""
    return pd.DataFrame(
        {
            "variant": variant,
            "seed": seed,
            "layout_id": range(layouts),
            "success": [1] * wins + [0] * (layouts - wins),
        }
    )


def test_seen_layouts_beside_held_out_ones(tiny_params):
    """Success on training layouts beside the held-out split, per variant: over every model with
    the seen step's rows; the held-out split and the gap over the models that played both."""
    sp = tiny_params.stats
    seen = pd.concat(
        [seen_rows("learned", 1, 4), seen_rows("learned", 2, 3), seen_rows("rope", 1, 2)]
    )
    test = pd.concat(
        [seen_rows("learned", 1, 2), seen_rows("learned", 2, 2), seen_rows("learned", 3, 0)]
    )
    table = stats.seen_success(seen, test, sp).set_index("variant")
    learned, rope = table.loc["learned"], table.loc["rope"]
    assert learned.seeds == "1 2" == learned.paired_seeds  # seed 3 played no seen layout
    assert learned.seen_pct_mean == 87.5 and learned.held_out_pct_mean == 50.0
    assert learned.gap_pct_mean == 37.5
    assert learned.gap_ci_low_pct <= 37.5 <= learned.gap_ci_high_pct
    # the same model played both sets: seeds far apart but each with no gap give no gap
    level = pd.concat([seen_rows("learned", 1, 4), seen_rows("learned", 2, 0)])
    paired = stats.seen_success(level, level, sp).iloc[0]
    assert (paired.gap_ci_low_pct, paired.gap_ci_high_pct) == (0.0, 0.0)
    assert paired.seen_ci_low_pct == 0.0 and paired.seen_ci_high_pct == 100.0
    assert rope.seen_pct_mean == 50.0 and rope.paired_seeds == ""
    assert math.isnan(rope.held_out_pct_mean) and math.isnan(rope.gap_pct_mean)
    assert math.isnan(rope.seen_ci_low_pct)  # one seed: no interval
    assert stats.seen_success(None, test, sp).empty


def test_seen_table_and_text(tmp_path, tiny_params):
    sp = tiny_params.stats
    seen = pd.concat([seen_rows("learned", 1, 4), seen_rows("learned", 2, 3)])
    test = pd.concat([seen_rows("learned", 1, 2), seen_rows("learned", 2, 2)])
    stats.seen_success(seen, test, sp).to_csv(tmp_path / "seen.csv", index=False)
    (tmp_path / "methods.json").write_text(json.dumps(methods.sentences(sp, tiny_params.verdict)))
    table = tables.seen(tiny_params, tmp_path)
    assert list(table.shown.iloc[0])[:3] == ["learned", "1 2", "1 2"]
    assert table.shown.iloc[0]["Seen"].startswith("87.5 [")
    assert table.shown.iloc[0]["Gap"].startswith("+37.5 [")
    text = findings.seen_text(
        pd.read_csv(tmp_path / "seen.csv"), "8×8", json.load((tmp_path / "methods.json").open())
    )
    assert "learned 87.5 % [" in text and "held out 50.0, gap 37.5 % [" in text
    empty = stats.seen_success(None, test, sp)
    empty.to_csv(tmp_path / "seen.csv", index=False)
    assert tables.seen(tiny_params, tmp_path).shown.empty
    assert "not measured in this run" in findings.seen_text(empty, "8×8", {})


def test_a_one_variant_run_is_analysed_without_comparisons(tmp_path):
    """One variant passes `dtpe check`; stats, tables, figures and the report then describe it
    alone: no pair, no family, nothing decided."""
    import torch
    from conftest import tiny_raw

    from dtpe import cli

    torch.set_num_threads(1)
    raw = tiny_raw()
    raw["study"] = {"variants": ["rope"], "seeds": [1, 2]}
    raw["stats"]["reference"] = "rope"
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    given, data, results = ["--params", str(path)], str(tmp_path / "data"), tmp_path / "results"
    assert cli.main(["check", *given, "--out", str(results / "params.json")]) == 0
    assert cli.main(["data", *given, "--out", data]) == 0
    for seed in (1, 2):
        model, name = ["--variant", "rope", "--seed", str(seed), "--data", data], f"rope_s{seed}"
        checkpoint = ["--model", str(tmp_path / "models" / name)]
        trained = ["--out", checkpoint[1], "--metrics", str(results / "train" / name)]
        trained += ["--resume-dir", str(tmp_path / "resume" / name)]
        assert cli.main(["train", *given, *model, *trained]) == 0
        sweeps = [
            arg
            for sweep in ("test", "grid", "context")
            for arg in (f"--out-{sweep}", str(results / "eval" / sweep / f"{name}.csv"))
        ]
        assert cli.main(["evaluate", *given, *model, *checkpoint, *sweeps]) == 0
        attention = ["--out", str(results / "attention" / f"{name}.json")]
        assert cli.main(["attention", *given, *model, *checkpoint, *attention]) == 0
    stats_dir, figures_dir = results / "stats", tmp_path / "figures"
    assert cli.main(["stats", *given, "--results", str(results), "--out", str(stats_dir)]) == 0
    assert len(pd.read_csv(stats_dir / "comparisons.csv")) == 0
    tables_dir = ["--out", str(results / "tables")]
    assert cli.main(["tables", *given, "--stats", str(stats_dir), *tables_dir]) == 0
    drawn = ["--data", data, "--results", str(results), "--out", str(figures_dir)]
    assert cli.main(["figures", *given, *drawn]) == 0
    (figures_dir / "explorer.html").write_text("<html></html>\n")
    reported = ["--results", str(results), "--figures", str(figures_dir)]
    out = figures_dir / "REPORT.md"
    assert cli.main(["report", *given, *reported, "--out", str(out)]) == 0
    verdict = out.read_text().split("### Verdict\n\n")[1].split("\n\n")[0]
    assert verdict == (
        "The run has one variant: no pair to compare, so it tests nothing and decides nothing; "
        "its tables and figures describe that variant alone."
    )
    caption = (results / "tables" / "comparisons.md").read_text().splitlines()[0]
    assert caption == "One variant: no pair of variants to compare."


def test_the_attention_figure_wraps_many_variants_into_rows():
    """Figure 4 of a 21-variant run (the T-Maze's): its decay and milestone curves in panels of at
    most panels.MAX_LINES, then every variant's map, in rows of at most four panels, no wider
    than panels.MAX_PIXELS; three variants keep one decay panel."""
    rng = np.random.default_rng(0)

    def maps(names):
        return {
            v: {"distance_decay": rng.random(9), "heatmap": rng.random((9, 9)), "seeds": 2}
            for v in names
        }

    many = ["rope", *(f"v{i}" for i in range(20))]
    milestone = pd.DataFrame(
        {"variant": many[:2], "grid_size": [16, 16], "weight_mean": [0.5, 0.2]}
    ).assign(uniform_mean=0.01)
    colours = dict(zip(many, itertools.cycle(["C0", "C1"])))
    fig = figures.attention(maps(many), colours, milestone, "rope")
    drawn = [ax for ax in fig.axes if ax.get_label() != "<colorbar>"]
    groups = len(panels.groups(many, "rope"))
    assert len(drawn) == 2 * groups + 21
    assert drawn[0].get_subplotspec().get_geometry()[1] == 4
    assert {ax.get_title().split(" (")[0] for ax in drawn} >= set(many)
    assert all(len(ax.get_lines()) <= panels.MAX_LINES + 1 for ax in drawn)  # + uniform
    assert fig.get_figwidth() * panels.DPI <= panels.MAX_PIXELS
    few = figures.attention(maps(many[:3]), colours, milestone.iloc[:0], "rope")
    assert len([ax for ax in few.axes if ax.get_label() != "<colorbar>"]) == 1 + 3


def test_a_reach_headline_ends_with_the_cue_attention_of_the_leads():
    """Beside the success curves, the last step's weight on the cue against size: the reference
    and the variants most successful at the largest size, at most panels.MAX_LINES, uniform
    attention dotted; none where the run did not measure it."""
    variants = ["rope", "rope+yarn", *(f"e{i}" for i in range(9))]
    sizes = (16, 160, 1600)
    success = pd.DataFrame(
        [
            {"grid_size": n, "variant": v, "success_pct_mean": 50.0 + i}
            | {"ci_low_pct": 40.0, "ci_high_pct": 60.0}
            for i, v in enumerate(variants)
            for n in sizes
        ]
    )
    milestone = pd.DataFrame(
        [
            {"variant": v, "grid_size": n, "weight_mean": 0.1, "uniform_mean": 1 / n}
            for v in variants
            if "+" not in v
            for n in sizes
        ]
    )
    words = WORLD.words
    fig = headline.curves(success, HORIZONLESS, "rope", 16, words, "", milestone)
    last = fig.axes[-1]
    named = [t.get_text() for t in last.get_legend().get_texts()]
    assert named == ["rope", "e8", "e7", "e6", "e5", "e4", "e3"]
    assert len(last.get_lines()) == panels.MAX_LINES + 1
    bare = headline.curves(success, HORIZONLESS, "rope", 16, words, "", milestone.iloc[:0])
    assert len(bare.axes) == len(fig.axes) - 1
