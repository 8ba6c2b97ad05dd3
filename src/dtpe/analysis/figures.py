"""The study's figures (docs/protocol.md; names and captions in analysis/outputs.py), each saved
as PNG (dpi 150) and PDF.

Figures are built on `matplotlib.figure.Figure` without pyplot, so no global figure state or
interactive backend is involved; PNGs render through Agg. Timestamp and software metadata are
left out so that a rerun on the same inputs gives the same bytes.

Every plotted statistic (means, stds, intervals, differences, adjusted p, Figure 4's attention
averaged over seeds) is one the stats stage wrote to results/stats/; figures only draw them.
Figure 6 draws the attention stage's per-seed values as they are.
"""

from __future__ import annotations

import json
import math
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib import colormaps
from matplotlib.colors import ListedColormap, PowerNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from dtpe.analysis import inference
from dtpe.analysis.cells import grid_label
from dtpe.analysis.outputs import figure_names
from dtpe.steps import dataset
from dtpe.world import pictures

LEGEND_INSIDE = 8
"""variants a legend holds inside its axes; with more (20 in the family and Memory runs) it hid
the lines, so it goes beside the figure"""
LEGEND_ROWS = 10
"""rows of one column of a legend beside the figure: ten fit the shortest figure's 4.2 inches"""
LEGEND_COLUMN_INCHES = 1.9
"""the width a legend column adds to its figure, so that the axes keep theirs: the longest
variant name, rope-t_randomized, with its marker"""

TRAINING_PANELS = (
    ("train_loss", "train loss"),
    ("val_loss", "validation loss"),
    ("val_success_pct", "validation success (%)"),
    ("overfit_gap", "overfitting gap (val − train loss)"),
)


def draw(
    params, data_dir: Path, stats_dir: Path, attention_jsons: list[Path], out_dir: Path
) -> list[Path]:
    """Draws the figures into out_dir; returns the files written."""
    colours = variant_colours(params.study.variants)
    label = partial(grid_label, params.env.world)
    stats_dir, out_dir = Path(stats_dir), Path(out_dir)
    methods = json.loads((stats_dir / "methods.json").read_text())
    comparisons = pd.read_csv(stats_dir / "comparisons.csv")
    figures = {
        f"fig1_{params.env.world}": layout_picture(
            Path(data_dir), max(params.data.suite_sizes), params.env
        ),
        "fig2_training": training(pd.read_csv(stats_dir / "training_curves.csv"), colours),
        "fig3_success_by_grid": success_by_grid(
            pd.read_csv(stats_dir / "success_by_grid.csv"), colours, methods
        ),
        "fig4_attention": attention(
            json.loads((stats_dir / "attention_maps.json").read_text()),
            colours,
            pd.read_csv(stats_dir / "milestone.csv"),
        ),
        "fig5_effect_sizes": effect_sizes(
            comparisons[comparisons.context == params.model.context],
            params.study.variants,
            methods,
            label,
        ),
        "fig6_t_shift": t_shift(attention_jsons, colours),
        "fig7_aggregates": aggregates(
            pd.read_csv(stats_dir / "profile.csv"),
            pd.read_csv(stats_dir / "iqm.csv"),
            colours,
            methods,
        ),
        "fig8_reach": reach(
            pd.read_csv(stats_dir / "reach.csv"),
            pd.read_csv(stats_dir / "effective_context.csv"),
            params.model.context,
            colours,
            methods,
            label,
        ),
    }
    assert tuple(figures) == figure_names(params.env.world), "figures drawn, outputs.FIGURES differ"
    out_dir.mkdir(parents=True, exist_ok=True)
    return [path for name, fig in figures.items() for path in save(fig, out_dir / name)]


def save(fig: Figure, stem: Path) -> list[Path]:
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    fig.savefig(png, dpi=150, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None})
    return [png, pdf]


def variant_legend(fig: Figure, ax, **options) -> None:
    """The variants' legend of `ax`: inside it up to LEGEND_INSIDE entries, else beside the
    figure in columns of LEGEND_ROWS, the figure widened to hold them."""
    handles, labels = ax.get_legend_handles_labels()
    if len(labels) <= LEGEND_INSIDE:
        ax.legend(**options)
        return
    columns = math.ceil(len(labels) / LEGEND_ROWS)
    fig.set_figwidth(fig.get_figwidth() + LEGEND_COLUMN_INCHES * columns)
    fig.legend(handles, labels, loc="outside right center", ncols=columns, frameon=False)


def variant_colours(variants: list[str]) -> dict[str, tuple]:
    """One colour per variant, in params order, the same in every figure: a qualitative map
    while it has enough colours, then evenly spaced points of a continuous one."""
    n = len(variants)
    if n <= 20:
        cmap = colormaps["tab10" if n <= 10 else "tab20"]
        return {e: cmap(i) for i, e in enumerate(variants)}
    cmap = colormaps["turbo"]
    return {e: cmap(i / (n - 1)) for i, e in enumerate(variants)}


def layout_picture(data_dir: Path, size: int, env) -> Figure:
    """Figure 1: the first layout of the largest suite as the agent first sees it. The legend
    names every code but the agent's others (a DoorKey agent's heading and load)."""
    layouts, optimal_steps = dataset.load_suite(data_dir, size, env)
    world = dataset.world_of(data_dir, env)
    game = world.replay_env(layouts.subset([0]), env)
    game.reset()
    grid = game.picture()[0]  # the whole layout, where the model is given only a view (Memory)
    vocab = world.vocabulary
    colours = pictures.hex_colours(world.colours)
    shown = set(range(vocab.n_codes)) - set(vocab.agent) | {int(grid[tuple(layouts.start[0])])}
    codes = sorted(shown)
    fig = Figure(figsize=(6, 5), layout="constrained")
    ax = fig.subplots()
    ax.imshow(
        grid,
        cmap=ListedColormap(colours),
        vmin=-0.5,
        vmax=len(colours) - 0.5,
    )
    ax.set_xticks(np.arange(-0.5, size), minor=True)
    ax.set_yticks(np.arange(-0.5, size), minor=True)
    ax.grid(which="minor", color="#d0d0d0", linewidth=0.5)
    ax.tick_params(which="both", bottom=False, left=False, labelbottom=False, labelleft=False)
    ax.set_title(
        f"{grid_label(env.world, size)} evaluation layout {layouts.ids[0]} "
        f"(BFS optimum {optimal_steps[0]} steps)"
    )
    ax.legend(
        handles=[
            Patch(facecolor=colours[c], edgecolor="black", label=f"{c} {vocab.codes[c]}")
            for c in codes
        ],
        loc="upper left",
        bbox_to_anchor=(1.02, 1),
        frameon=False,
    )
    return fig


def training(curves: pd.DataFrame, colours: dict) -> Figure:
    """Figure 2: per epoch, the mean over seeds with a ±1 std band (none with one seed), from
    the stats stage's training curves."""
    fig = Figure(figsize=(10, 7), layout="constrained")
    for ax, (metric, label) in zip(fig.subplots(2, 2).flat, TRAINING_PANELS):
        for variant, colour in colours.items():
            curve = curves[curves.variant == variant]
            curve = curve[curve[f"{metric}_mean"].notna()]  # epochs without validation
            mean, std = curve[f"{metric}_mean"], curve[f"{metric}_std"]
            ax.plot(curve.epoch, mean, color=colour, label=variant)
            ax.fill_between(
                curve.epoch, mean - std, mean + std, color=colour, alpha=0.2, linewidth=0
            )
        ax.set(xlabel="epoch", ylabel=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    variant_legend(fig, fig.axes[0])
    fig.suptitle("Training dynamics (mean over seeds, band ±1 std)")
    return fig


def success_by_grid(table: pd.DataFrame, colours: dict, methods: dict) -> Figure:
    """Figure 3: mean success per grid size with the stats stage's bootstrap CI of that mean,
    drawn from its bounds (asymmetric, and within 0..100 as the bootstrap keeps it)."""
    fig = Figure(figsize=(6, 4.5), layout="constrained")
    ax = fig.subplots()
    spacing = np.diff(sorted(table.grid_size.unique())).min(initial=2)
    # Horizontal offsets keep the intervals of different variants apart.
    offsets = np.linspace(-0.3, 0.3, len(colours)) * spacing / 2 if len(colours) > 1 else [0.0]
    for offset, (variant, colour) in zip(offsets, colours.items()):
        rows = table[table.variant == variant]
        x = rows.grid_size + offset
        ax.plot(x, rows.success_pct_mean, color=colour, marker="o", label=variant)
        ax.vlines(x, rows.ci_low_pct, rows.ci_high_pct, color=colour)
        for bound in (rows.ci_low_pct, rows.ci_high_pct):
            ax.plot(x, bound, linestyle="none", marker="_", markersize=8, color=colour)
    ax.set_xticks(sorted(table.grid_size.unique()))
    level = f"{100 * methods['confidence']:g} %"
    ax.set(
        xlabel="grid size N",
        ylabel="success (%)",
        ylim=(-3, 103),
        title=f"Success against grid size (bars: {level} CI over seeds and layouts)",
    )
    variant_legend(fig, ax)
    return fig


ATTENTION_COLUMNS = 6
"""Figure 4's panels per row"""


def attention(maps: dict[str, dict], colours: dict, milestone: pd.DataFrame) -> Figure:
    """Figure 4: distance decay per variant (left), one mean attention map per variant, as the
    stats stage averaged them over seeds, and, where the run measures it, the strongest head's
    weight on the milestone against the suite size (right)."""
    variants = [e for e in colours if e in maps]
    panels = 1 + len(variants) + bool(len(milestone))
    # rows of at most ATTENTION_COLUMNS panels: a run of 21 variants in one row is unreadable
    columns = min(panels, ATTENTION_COLUMNS)
    rows = -(-panels // columns)
    fig = Figure(figsize=(4.5 * columns, 4.2 * rows), layout="constrained")
    grid = fig.subplots(rows, columns, squeeze=False).ravel()
    for unused in grid[panels:]:
        unused.remove()
    decay_ax, *heat_axes = grid[:panels]
    if len(milestone):
        milestone_ax = heat_axes.pop()
        for variant, rows in milestone.groupby("variant", sort=False):
            if variant in colours:
                milestone_ax.plot(
                    rows.grid_size, rows.weight_mean, color=colours[variant], marker="o"
                )
        sizes = milestone.drop_duplicates("grid_size").sort_values("grid_size")
        milestone_ax.plot(
            sizes.grid_size,
            sizes.uniform_mean,
            color="black",
            linestyle="--",
            linewidth=0.8,
        )
        milestone_ax.set(
            xscale="log",
            yscale="log",
            xlabel="suite size (the T-Maze: corridor length)",
            ylabel="weight (mean over episodes and seeds)",
            title="Last step → milestone, strongest head\n(dashed: uniform)",
        )
    for variant in variants:
        decay = maps[variant]["distance_decay"]
        decay_ax.plot(np.arange(len(decay)), decay, color=colours[variant], label=variant)
    decay_ax.set(
        xlabel="token distance, query − key (3 tokens per step)",
        ylabel="mean attention weight",
        title="Distance decay",
    )
    variant_legend(fig, decay_ax)
    # One colour scale for all maps, so that they compare; square-root scaled because the first
    # queries, with few keys to spread over, would otherwise saturate it.
    norm = PowerNorm(0.5, vmin=0, vmax=max(np.max(maps[e]["heatmap"]) for e in variants))
    for ax, variant in zip(heat_axes, variants):
        image = ax.imshow(maps[variant]["heatmap"], cmap="viridis", norm=norm)
        ax.set(
            xlabel="key token (3k: RTG, 3k+1: state, 3k+2: action of step k)",
            ylabel="query token",
            title=f"{variant} (mean of {maps[variant]['seeds']} seeds)",
        )
    fig.colorbar(image, ax=heat_axes, label="attention weight (square-root scale)")
    fig.suptitle("Final-layer attention, averaged over heads and episodes")
    return fig


def effect_sizes(
    comparisons: pd.DataFrame, variants: list[str], methods: dict, label: Callable[[int], str]
) -> Figure:
    """Figure 5: the difference a − b of mean success with its CI, per pair (rows) and grid size
    (panels); * marks a Holm-adjusted p below alpha."""
    if not len(comparisons):  # a declared output: a one-variant run's says why it shows nothing
        fig = Figure(figsize=(4, 1.2), layout="constrained")
        fig.text(0.5, 0.5, "One variant: no pair of variants to compare", ha="center", va="center")
        return fig
    sizes = sorted(comparisons.grid_size.unique())
    order = {e: i for i, e in enumerate(variants)}
    pairs = list(
        dict.fromkeys(
            sorted(
                zip(comparisons.variant_a, comparisons.variant_b),
                key=lambda pair: (order[pair[0]], order[pair[1]]),
            )
        )
    )
    fig = Figure(figsize=(2.2 + 2.4 * len(sizes), 1.6 + 0.35 * len(pairs)), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, len(sizes), sharey=True, sharex=True))
    y = np.arange(len(pairs))[::-1]  # the first pair on top
    alpha = methods["alpha"]
    for ax, size in zip(axes, sizes):
        rows = (
            comparisons[comparisons.grid_size == size]
            .set_index(["variant_a", "variant_b"])
            .loc[pairs]
        )
        resolved = (rows.verdict != inference.UNRESOLVED).to_numpy()
        colour = np.where(resolved, "black", "grey")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.hlines(y, rows.ci_low_pct, rows.ci_high_pct, colors=colour)
        ax.scatter(rows.diff_pct, y, c=colour, zorder=3, s=18)
        for yi, row in zip(y, rows.itertuples()):
            if row.p_holm < alpha:  # NaN (outside the family) compares False
                ax.annotate("*", (row.ci_high_pct, yi), xytext=(3, -4), textcoords="offset points")
        ax.set(title=label(size), xlabel="Δ success a − b (pp)")
    axes[0].set_yticks(y, [f"{a} − {b}" for a, b in pairs])
    level = f"{100 * methods['confidence']:g} %"
    family = (
        f"* Holm p < {alpha:g}"
        if comparisons.primary.astype(bool).any()
        else "exploratory, unadjusted"
    )
    fig.suptitle(
        f"Differences of mean success with {level} bootstrap CI (black: CI excludes 0); {family}"
    )
    return fig


T_SHIFT_PANELS = (
    ("mean_abs_diff", "final-layer attention, mean |change|"),
    ("action_tv_mean", "action distribution, mean TV distance"),
)


def t_shift(attention_jsons: list[Path], colours: dict) -> Figure:
    """Figure 6: the attention stage's t-shift check, one point per seed: how much the same
    windows' attention and action distribution move when every global timestep t is shifted
    beyond the training range (k unchanged)."""
    checks = {}
    for path in attention_jsons:
        result = json.loads(Path(path).read_text())
        checks.setdefault(result["variant"], []).append(result["translation"])
    variants = [e for e in colours if e in checks]
    fig = Figure(figsize=(2 + 0.9 * len(variants), 6), layout="constrained")
    for ax, (key, label) in zip(fig.subplots(2, 1, sharex=True), T_SHIFT_PANELS):
        for x, variant in enumerate(variants):
            values = [c[key] for c in checks[variant]]
            ax.scatter([x] * len(values), values, color=colours[variant], s=18)
        ax.set(ylabel=label, ylim=(0, None))
        ax.set_xticks(range(len(variants)), variants, rotation=30, ha="right")
    shift = next(iter(checks.values()))[0]["shift"] if checks else 0
    fig.suptitle(f"Global timestep t shifted by {shift} (one point per seed)")
    return fig


def aggregates(profile: pd.DataFrame, iqm: pd.DataFrame, colours: dict, methods: dict) -> Figure:
    """Figure 7: rliable's performance profile over the grid sizes beyond training (the share
    of seed x grid scores above each threshold, with its stratified-bootstrap band) and the IQM
    of those scores with its interval."""
    fig = Figure(figsize=(11, 4.2), layout="constrained")
    if not len(iqm):
        fig.text(0.5, 0.5, "no evaluation grid larger than training", ha="center", va="center")
        return fig
    left, right = fig.subplots(1, 2, width_ratios=[3, 2])
    variants = [v for v in colours if v in set(iqm.variant)]
    for variant in variants:
        rows = profile[profile.variant == variant]
        left.plot(rows.tau_pct, rows.fraction, color=colours[variant], label=variant)
        left.fill_between(
            rows.tau_pct, rows.ci_low, rows.ci_high, color=colours[variant], alpha=0.2, lw=0
        )
    left.set(
        xlabel="success threshold τ (%)",
        ylabel="fraction of seed × grid scores > τ",
        xlim=(0, 100),
        ylim=(0, 1.02),
    )
    variant_legend(fig, left, frameon=False)
    rows = iqm.set_index("variant").loc[variants]
    y = np.arange(len(variants))[::-1]
    right.hlines(y, rows.ci_low_pct, rows.ci_high_pct, colors=[colours[v] for v in variants], lw=3)
    right.scatter(rows.iqm_pct, y, color="black", zorder=3, s=14)
    right.set_yticks(y, variants)
    right.set(xlabel="IQM of success (%)")
    tasks = str(iqm.tasks.iloc[0]).replace(" ", ", ") if len(iqm) else ""
    level = f"{100 * methods['confidence']:g} %"
    fig.suptitle(
        f"Grid sizes {tasks} as tasks: performance profile and IQM ({level} stratified bootstrap)"
    )
    return fig


def reach(
    success: pd.DataFrame,
    effective: pd.DataFrame,
    train_context: int,
    colours: dict,
    methods: dict,
    label: Callable[[int], str],
) -> Figure:
    """Figure 8: mean success against context (log scale) per grid size of the reach step, one
    line per variant with the bootstrap CI of the mean as bars, the training context dashed and
    each variant's effective context an open marker."""
    sizes = sorted(success.grid_size.unique())
    fig = Figure(figsize=(1.5 + 4.2 * max(len(sizes), 1), 4.2), layout="constrained")
    if not sizes:
        fig.text(0.5, 0.5, "no reach evaluation in this run", ha="center", va="center")
        return fig
    axes = np.atleast_1d(fig.subplots(1, len(sizes), sharey=True))
    contexts = sorted(success.context.unique())
    # Multiplicative offsets keep the intervals of different variants apart on the log axis.
    shifts = np.geomspace(0.93, 1.07, len(colours)) if len(colours) > 1 else [1.0]
    for ax, size in zip(axes, sizes):
        for shift, (variant, colour) in zip(shifts, colours.items()):
            rows = success[(success.grid_size == size) & (success.variant == variant)]
            if not len(rows):
                continue
            x = rows.context * shift
            ax.plot(x, rows.success_pct_mean, color=colour, marker="o", label=variant)
            ax.vlines(x, rows.ci_low_pct, rows.ci_high_pct, color=colour)
            mark = effective[(effective.grid_size == size) & (effective.variant == variant)]
            if len(mark) and pd.notna(mark.effective_context.iloc[0]):
                ax.plot(
                    mark.effective_context * shift,
                    mark.effective_success_pct,
                    linestyle="none",
                    marker="o",
                    markersize=11,
                    markerfacecolor="none",
                    color=colour,
                )
        ax.axvline(train_context, color="black", linestyle="--", linewidth=0.8)
        ax.set_xscale("log")
        ax.set_xticks(contexts, [str(c) for c in contexts])
        ax.minorticks_off()
        ax.set(title=label(size), xlabel="context (timesteps)", ylim=(-3, 103))
    axes[0].set(ylabel="success (%)")
    variant_legend(fig, axes[0])
    level = f"{100 * methods['confidence']:g} %"
    fig.suptitle(f"Success against context (bars: {level} CI; dashed: training context)")
    return fig
