"""Runs side by side (e.g. the default and the protocol run, each made by its own command): one
tidy table, one Markdown table and one figure from each run's own statistics, the folder its
stats step wrote (<run>/results/stats/). Nothing is recomputed: a variant's mean success and
interval are copied from success_by_grid.csv, a pair's difference, interval and Holm p from the
Holm family's rows of comparisons.csv (every pair at every grid size at the training context),
so a run's numbers here are those of its own report.

Outputs in out_dir: compare.csv (one row per run, grid size and variant or pair), compare.md
(the same, a column per run) and compare.png (per grid size, each pair's difference with its
interval, one colour and marker per run, for the pairs two or more runs have); verdicts.csv
and verdicts.md, the benchmark's leaderboard: every declared hypothesis of every confirmatory
run among them, one row each, as its decisions.csv has it (verdicts.py), and beside each the
layouts its run shares with the other runs of its world (shared_layouts.csv, counted by content
from each run's data/ by analysis/shared_layouts.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from dtpe import names, preregistration
from dtpe.analysis import shared_layouts, tables, verdict_words, verdicts
from dtpe.analysis.cells import UNDEFINED, grid_label, p_value, with_interval

NEEDED = {
    "success_by_grid.csv": {
        "grid_size",
        "variant",
        "success_pct_mean",
        "ci_low_pct",
        "ci_high_pct",
    },
    "comparisons.csv": {
        "grid_size",
        "variant_a",
        "variant_b",
        "diff_pct",
        "ci_low_pct",
        "ci_high_pct",
        "context",
        "p_holm",
    },
    "context.csv": {"context", "context_multiple"},
}
"""the columns read from each run's results/stats/ CSVs"""
STATS = (*NEEDED, "methods.json", "design.json", "decisions.csv")
"""what is read from each run's results/stats/"""
COLUMNS = [
    "run",
    "world",
    "grid_size",
    "kind",
    "variant",
    "estimate_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_holm",
]
"""compare.csv: the run's world (its design.json's); kind `success` (variant: one variant;
estimate: its mean success) or `difference` (variant: a pair, "a − b"; estimate: the difference
of their mean success, in points), both at the training context, or `whole episode` (a variant,
RoPE's scalings as their own, `rope+yarn`: its mean success at the run's whole-episode context,
in a run that plays one); the interval at the run's own confidence; p_holm for a difference
only"""
WHOLE_EPISODE = "whole episode"
KINDS = ("success", "difference", WHOLE_EPISODE)
"""the kinds in the order each grid size lists them"""
MARKERS = "osD^vPX*"
NOT_RUN = "not run"
"""a Markdown cell of a variant or pair that run does not have"""


def stats_dir(run: Path) -> Path:
    return Path(run) / "results" / "stats"


def read(runs: list[Path], labels: list[str]) -> tuple[pd.DataFrame, dict[str, float]]:
    """The runs' numbers as compare.csv holds them, and each run's confidence level. Every
    file is checked before any is read, so a missing run stops the step before it writes."""
    if len(labels) != len(runs) or len(set(labels)) != len(labels):
        shown = ", ".join(map(str, runs))
        raise ValueError(f"one distinct label per run needed: runs {shown}; labels {labels}")
    for run in map(Path, runs):
        if not run.is_dir():
            raise FileNotFoundError(f"run folder {run} does not exist")
        missing = [
            str(stats_dir(run) / name) for name in STATS if not (stats_dir(run) / name).is_file()
        ]
        if missing:
            raise FileNotFoundError(
                f"run {run}: {', '.join(missing)} missing (its stats step has not run)"
            )
        for name, wanted in NEEDED.items():
            lacks = wanted - set(pd.read_csv(stats_dir(run) / name, nrows=0).columns)
            if lacks:
                raise ValueError(
                    f"run {run}: {stats_dir(run) / name} lacks the columns {sorted(lacks)} "
                    "(written by an older dtpe, whose column was `encoding`: rerun the run "
                    "with this one, from its evaluations on)"
                )
    frames, confidence = [], {}
    for run, label in zip(map(Path, runs), labels):
        world = json.loads((stats_dir(run) / "design.json").read_text())["world"]
        frames.append(numbers(stats_dir(run), label, world))
        confidence[label] = tables.methods(stats_dir(run))["confidence"]
    return pd.concat(frames, ignore_index=True), confidence


VERDICT_COLUMNS = ["run", "world", *verdicts.COLUMNS, "claim_alpha"]
"""verdicts.csv: one row per declared hypothesis of a confirmatory run, its decisions.csv row as
written (estimate: how effect and interval were made, stagewise where the test stopped), and
the α its run spends on each kind of claim (methods.json), which an equivalence's interval reads"""


def leaderboard(runs: list[Path], labels: list[str]) -> pd.DataFrame:
    """Every declared hypothesis of the confirmatory runs among `runs` (read checks the files)."""
    frames = []
    for run, label in zip(map(Path, runs), labels):
        design = json.loads((stats_dir(run) / "design.json").read_text())
        if not design.get("confirmatory"):
            continue
        decided = pd.read_csv(stats_dir(run) / "decisions.csv")
        lacks = [c for c in verdicts.COLUMNS if c not in decided.columns]
        if lacks:
            raise ValueError(
                f"run {run}: {stats_dir(run) / 'decisions.csv'} lacks the columns {lacks} "
                "(written by an older dtpe: rerun its stats step)"
            )
        methods = json.loads((stats_dir(run) / "methods.json").read_text())
        decided = decided.assign(
            run=label, world=design["world"], claim_alpha=methods["claim_alpha"]
        )
        frames.append(decided[VERDICT_COLUMNS])
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=VERDICT_COLUMNS)


def shared(runs: list[Path], labels: list[str], decided: pd.DataFrame) -> pd.DataFrame:
    """shared_layouts.csv: each confirmatory run among `runs` against every other of its world
    (the world as each run's design.json names it, so only those runs' data is read)."""
    confirmatory = list(dict.fromkeys(decided.run))
    worlds = set(decided.world)
    chosen = {
        label: Path(run)
        for run, label in zip(runs, labels)
        if json.loads((stats_dir(run) / "design.json").read_text())["world"] in worlds
    }
    return shared_layouts.count(chosen, confirmatory)


def leaderboard_markdown(table: pd.DataFrame, shared: pd.DataFrame) -> str:
    said = [verdict_words.stated(row, row.claim_alpha) for row in table.itertuples()]
    shown = pd.DataFrame(
        {
            "World": table.world,
            "Run": table.run,
            "a vs b": table.a + " vs " + table.b,
            "Grids": table.endpoint.str.replace("+", ", "),
            "Verdict": table.outcome,
            "a − b (pp) [CI]": [stated[0] for stated in said],
            "CI level": [stated[1] for stated in said],
            "Estimate": table.estimate,
            "Seeds a + b": [f"{a} + {b}" for a, b in zip(table.seeds_a, table.seeds_b)],
            "Stable": table.stable.map(lambda x: f"{x:.2f}"),
            "Fragile drops": tables.fragile_drops(table),
            "|z| − bound": tables.z_margins(table),
            "Shared layouts": [
                shared_layouts.summary(shared, run, names.endpoint_grids(endpoint))
                for run, endpoint in zip(table.run, table.endpoint)
            ],
            "Preregistration": [preregistration.describe(row) for _, row in table.iterrows()],
        }
    )
    caption = (
        "Every declared hypothesis of every confirmatory run, as its own decisions table has it "
        "(the benchmark's verdicts; exploratory runs decide nothing and are left out). a − b: "
        "the difference of per-seed success averaged over the grids, in points, with its "
        "interval at the level its verdict was tested at: an equivalence's, the two one-sided "
        "tests' 1 − 2α (α the run's for each kind of claim, claim_alpha in verdicts.csv); any "
        "other's, 1 − the α its rejection was tested at (the run's claims' α over its "
        "hypotheses; ci_level), stagewise median-unbiased where a sequential test stopped. "
        "Stable: the share of 100 seeds of the test's randomness giving the same "
        f"verdict. {tables.FRAGILITY} Shared layouts: per other run of the world that shares "
        "any, the run's training layouts and its endpoint's played suite layouts that it holds "
        "too, by content (grid, start and heading), and in brackets by grid alone "
        "(shared_layouts.csv per size). Preregistration: the commit and content (sha256) of the "
        "run's params overlay that its models record having been trained under; a run made "
        "before models kept that record has only git's order of commits to show."
    )
    return f"{caption}\n\n{shown.to_markdown(index=False, disable_numparse=True)}\n"


def numbers(stats: Path, label: str, world: str) -> pd.DataFrame:
    """One run's rows: per grid size its variants' success, then its pairs' differences, each
    in the order its stats step wrote them."""
    success = tables.read(stats, "success_by_grid")
    pairs = tables.at_training_context(stats)
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "grid_size": success.grid_size,
                    "kind": "success",
                    "variant": success.variant,
                    "estimate_pct": success.success_pct_mean,
                    "ci_low_pct": success.ci_low_pct,
                    "ci_high_pct": success.ci_high_pct,
                    "p_holm": np.nan,
                }
            ),
            pd.DataFrame(
                {
                    "grid_size": pairs.grid_size,
                    "kind": "difference",
                    "variant": pairs.variant_a + " − " + pairs.variant_b,
                    "estimate_pct": pairs.diff_pct,
                    "ci_low_pct": pairs.ci_low_pct,
                    "ci_high_pct": pairs.ci_high_pct,
                    "p_holm": pairs.p_holm,
                }
            ),
        ],
        ignore_index=True,
    )
    whole = (
        pd.read_csv(stats / "whole_episode.csv")
        if (stats / "whole_episode.csv").is_file()
        else None
    )
    if whole is not None and len(whole):
        frame = pd.concat(
            [
                frame,
                pd.DataFrame(
                    {
                        "grid_size": whole.grid_size,
                        "kind": WHOLE_EPISODE,
                        "variant": whole.variant,
                        "estimate_pct": whole.success_pct_mean,
                        "ci_low_pct": whole.ci_low_pct,
                        "ci_high_pct": whole.ci_high_pct,
                        "p_holm": np.nan,
                    }
                ),
            ],
            ignore_index=True,
        )
    frame.insert(0, "run", label)
    frame.insert(1, "world", world)
    return frame.sort_values("grid_size", kind="stable")[COLUMNS]


def write(
    table: pd.DataFrame,
    confidence: dict[str, float],
    decided: pd.DataFrame,
    shared: pd.DataFrame,
    out_dir: Path,
) -> list[Path]:
    """compare.csv, .md and .png, verdicts.csv and .md and shared_layouts.csv in out_dir;
    returns them."""
    out_dir = Path(out_dir)
    paths = [out_dir / f"compare.{ext}" for ext in ("csv", "md", "png")]
    table.to_csv(paths[0], index=False)
    paths[1].write_text(markdown(table, confidence))
    # no software metadata: a rerun on the same inputs gives the same bytes
    figure(table, confidence).savefig(paths[2], dpi=150, metadata={"Software": None})
    paths += [out_dir / "verdicts.csv", out_dir / "verdicts.md"]
    decided.to_csv(paths[3], index=False)
    paths[4].write_text(leaderboard_markdown(decided, shared))
    paths.append(out_dir / "shared_layouts.csv")
    shared.to_csv(paths[5], index=False)
    return paths


def levels(confidence: dict[str, float]) -> str:
    """The runs' confidence levels: one, or one per run where they differ."""
    shown = {label: f"{100 * c:g} %" for label, c in confidence.items()}
    if len(set(shown.values())) == 1:
        return next(iter(shown.values()))
    return ", ".join(f"{level} ({label})" for label, level in shown.items())


def cell(row) -> str:
    if row.kind != "difference":
        return with_interval(row.estimate_pct, row.ci_low_pct, row.ci_high_pct)
    shown = with_interval(row.estimate_pct, row.ci_low_pct, row.ci_high_pct, sign="+")
    return f"{shown}, Holm p {p_value(row.p_holm)}"


def markdown(table: pd.DataFrame, confidence: dict[str, float]) -> str:
    keys = ["world", "grid_size", "kind", "variant"]
    cells = table.assign(cell=[cell(row) for row in table.itertuples()])
    wide = cells.pivot(index=keys, columns="run", values="cell")
    # rows by world in the runs' order, then the runs' own order (grid size, then success
    # before differences); runs as given
    worlds = {w: i for i, w in enumerate(dict.fromkeys(table.world))}
    order = cells.assign(kind_rank=cells.kind.map(KINDS.index), world_rank=cells.world.map(worlds))
    order = order.sort_values(["world_rank", "grid_size", "kind_rank"], kind="stable")
    order = order.drop_duplicates(keys)
    wide = wide.reindex(pd.MultiIndex.from_frame(order[keys]))[list(dict.fromkeys(table.run))]
    shown = wide.fillna(NOT_RUN).reset_index()
    sizes = shown.pop("grid_size")
    shown.insert(0, "Grid", [grid_label(w, n) for w, n in zip(shown.world, sizes)])
    shown.insert(0, "World", shown.pop("world"))
    whole = shown.kind == WHOLE_EPISODE
    shown.insert(2, "Context", np.where(whole, "whole episode", "training"))
    shown = shown.drop(columns="kind").rename(columns={"variant": "Variant or a − b"})
    caption = (
        "Each run's own statistics (its results/stats/), side by side. A variant: mean success "
        "% over seeds [CI]; a pair a − b: the difference of mean success in points [CI] and its "
        f"Holm-adjusted p, at the run's training context. CI: {levels(confidence)}, the run's "
        f"two-level bootstrap. {UNDEFINED}: undefined (one seed); {NOT_RUN}: a variant "
        "or pair that run does not have."
    )
    if whole.any():
        caption += (
            " Context `whole episode`: a variant's success with the whole episode in the window "
            "(the run's longest context), RoPE played with each of its inference-time scalings "
            "as a variant of its own (`rope+yarn`)."
        )
    else:
        shown = shown.drop(columns="Context")
    return f"{caption}\n\n{shown.to_markdown(index=False, disable_numparse=True)}\n"


def figure(table: pd.DataFrame, confidence: dict[str, float]) -> Figure:
    """A row of panels per world (grid sizes mean different things in different worlds), a
    panel per grid size: each pair's difference a − b with its interval (rows), one colour and
    marker per run, the runs of a pair side by side. Per world, only the pairs held by the most
    of its runs, and by two at least, where any world has such: a pair of one run compares no
    runs, and two exploratory runs of a world share all their 190 or 210 pairs, a figure no one
    can read, where a confirmatory run beside them picks its few (compare.md keeps every pair)."""
    pairs_table = table[table.kind == "difference"]
    held = pairs_table.groupby(["world", "variant"]).run.transform("nunique")
    most = held.groupby(pairs_table.world).transform("max")
    shared = (held > 1) & (held == most)
    if shared.any():
        pairs_table = pairs_table[shared]
    runs = list(dict.fromkeys(table.run))
    worlds = list(dict.fromkeys(pairs_table.world))
    widest = int(pairs_table.groupby("world").grid_size.nunique().max())
    heights = [1.2 + 0.45 * pairs_table[pairs_table.world == w].variant.nunique() for w in worlds]
    fig = Figure(figsize=(2.2 + 2.6 * widest, 0.6 + sum(heights)), layout="constrained")
    cmap = colormaps["tab10"]
    # vertical offsets keep the runs of one pair apart, the first run on top as in the legend
    offsets = dict(zip(runs, np.linspace(0.25, -0.25, len(runs)) if len(runs) > 1 else [0.0]))
    rows_of = np.atleast_1d(fig.subfigures(len(worlds), 1, height_ratios=heights))
    for sub, world in zip(rows_of, worlds):
        own_world = pairs_table[pairs_table.world == world]
        sizes = sorted(own_world.grid_size.unique())
        pairs = list(dict.fromkeys(own_world.variant))
        rows = {pair: len(pairs) - 1 - i for i, pair in enumerate(pairs)}  # the first on top
        axes = np.atleast_1d(sub.subplots(1, widest, sharey=True, sharex=True))
        for ax in axes[len(sizes) :]:
            ax.set_visible(False)
        for ax, size in zip(axes, sizes):
            ax.axvline(0, color="black", linewidth=0.8)
            for i, run in enumerate(runs):
                own = own_world[(own_world.run == run) & (own_world.grid_size == size)]
                y = own.variant.map(rows) + offsets[run]
                colour = cmap(i % cmap.N)
                ax.hlines(y, own.ci_low_pct, own.ci_high_pct, colors=[colour])
                ax.scatter(
                    own.estimate_pct, y, color=colour, marker=MARKERS[i % len(MARKERS)], s=20
                )
            ax.set(title=grid_label(world, size), xlabel="Δ success a − b (pp)")
        axes[0].set_yticks(list(rows.values()), list(rows))
        sub.suptitle(world, x=0.0, ha="left", fontweight="bold")
    fig.legend(
        handles=[
            Line2D([], [], color=cmap(i % cmap.N), marker=MARKERS[i % len(MARKERS)], label=run)
            for i, run in enumerate(runs)
        ],
        loc="outside right upper",
        frameon=False,
    )
    fig.suptitle(f"Differences of mean success per run, with each run's {levels(confidence)} CI")
    return fig
