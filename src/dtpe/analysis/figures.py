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
from functools import partial
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap, PowerNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from dtpe.analysis import headline, inference, palette, panels
from dtpe.analysis.cells import grid_label
from dtpe.analysis.outputs import HEADLINE, figure_names
from dtpe.steps import dataset
from dtpe.world import catalog as worlds
from dtpe.world import pictures

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
    colours = palette.colours(params.study.variants)
    reference = params.stats.reference
    label = partial(grid_label, params.env.world)
    stats_dir, out_dir = Path(stats_dir), Path(out_dir)
    methods = json.loads((stats_dir / "methods.json").read_text())
    comparisons = pd.read_csv(stats_dir / "comparisons.csv")
    horizons = pd.read_csv(stats_dir / "horizon.csv")
    figures = {
        HEADLINE: headline.draw(params, stats_dir),
        f"fig1_{params.env.world}": layout_picture(
            Path(data_dir), max(params.data.suite_sizes), params.env
        ),
        "fig2_training": training(
            pd.read_csv(stats_dir / "training_curves.csv"), colours, reference
        ),
        "fig3_success_by_grid": headline.curves(
            pd.read_csv(stats_dir / "success_by_grid.csv"),
            horizons[horizons.context == params.model.context],
            reference,
            params.data.train_size,
            worlds.get(params.env.world).words,
            f"at the training context ({params.model.context} steps)",
        ),
        "fig4_attention": attention(
            json.loads((stats_dir / "attention_maps.json").read_text()),
            colours,
            pd.read_csv(stats_dir / "milestone.csv"),
            reference,
        ),
        "fig5_effect_sizes": effect_sizes(
            comparisons[comparisons.context == params.model.context],
            params.study.variants,
            methods,
            label,
            reference,
        ),
        "fig6_t_shift": t_shift(attention_jsons, colours),
        "fig7_aggregates": aggregates(
            pd.read_csv(stats_dir / "profile.csv"),
            pd.read_csv(stats_dir / "iqm.csv"),
            colours,
            methods,
            reference,
        ),
        "fig8_reach": reach(
            pd.read_csv(stats_dir / "reach.csv"),
            pd.read_csv(stats_dir / "effective_context.csv"),
            params.model.context,
            reference,
            methods,
            label,
        ),
    }
    assert tuple(figures) == figure_names(params.env.world), "figures drawn, outputs.FIGURES differ"
    out_dir.mkdir(parents=True, exist_ok=True)
    return [path for name, fig in figures.items() for path in save(fig, out_dir / name)]


def save(fig: Figure, stem: Path) -> list[Path]:
    """PNG and PDF; a figure wider than panels.MAX_PIXELS at panels.DPI is saved at the dpi that
    fits it."""
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    dpi = min(panels.DPI, panels.MAX_PIXELS / fig.get_figwidth())
    fig.savefig(png, dpi=dpi, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None})
    return [png, pdf]


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


def training(curves: pd.DataFrame, colours: dict, reference: str) -> Figure:
    """Figure 2: per epoch, the mean over seeds with a ±1 std band (none with one seed), from
    the stats stage's training curves; a column per metric, a row per panel of variants."""
    groups = panels.groups(list(colours), reference)
    fig, axes = panels.grid(len(TRAINING_PANELS), rows_of=len(groups), inches=(3.2, 2.6), columns=4)
    for row, (title, members) in zip(axes, groups):
        for ax, (metric, label) in zip(row, TRAINING_PANELS):
            for variant in members:
                curve = curves[curves.variant == variant]
                curve = curve[curve[f"{metric}_mean"].notna()]  # epochs without validation
                mean, std = curve[f"{metric}_mean"], curve[f"{metric}_std"]
                options = panels.style(variant, reference, panels.faint(title, groups), colours)
                ax.plot(curve.epoch, mean, label=variant, **options)
                ax.fill_between(
                    curve.epoch, mean - std, mean + std, color=options["color"], alpha=0.15, lw=0
                )
            ax.set(xlabel="epoch", ylabel=label, title=title)
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        row[0].legend(fontsize=7, frameon=False)
    fig.suptitle("Training dynamics (mean over seeds, band ±1 std)")
    return fig


def attention(
    maps: dict[str, dict], colours: dict, milestone: pd.DataFrame, reference: str
) -> Figure:
    """Figure 4: distance decay (first panels), where the run measures it the strongest head's
    weight on the milestone against the suite size (next), then one mean attention map per
    variant, as the stats stage averaged them over seeds; curves in panels (analysis/panels)."""
    variants = [e for e in colours if e in maps]
    groups = panels.groups(variants, reference)
    measured = [g for g in groups if len(milestone)]
    fig, axes = panels.grid(
        len(groups) + len(measured) + len(variants), inches=(3.2, 3.0), columns=4
    )
    axes = list(axes[0])
    for title, members in groups:
        ax = axes.pop(0)
        for variant in members:
            decay = maps[variant]["distance_decay"]
            options = panels.style(variant, reference, panels.faint(title, groups), colours)
            ax.plot(np.arange(len(decay)), decay, label=variant, **options)
        ax.set(
            xlabel="token distance, query − key (3 a step)",
            ylabel="mean attention weight",
            title=f"Distance decay: {title}",
        )
        ax.legend(fontsize=7, frameon=False)
    sizes = milestone.drop_duplicates("grid_size").sort_values("grid_size")
    for title, members in measured:
        ax = axes.pop(0)
        for variant in members:
            rows = milestone[milestone.variant == variant]
            options = panels.style(variant, reference, panels.faint(title, groups), colours)
            ax.plot(rows.grid_size, rows.weight_mean, marker="o", label=variant, **options)
        ax.plot(sizes.grid_size, sizes.uniform_mean, color="black", linestyle=":", lw=0.8)
        ax.set(
            xscale="log",
            yscale="log",
            xlabel="suite size",
            ylabel="weight (mean over episodes, seeds)",
            title=f"Last step → milestone: {title}",
        )
        ax.legend(fontsize=7, frameon=False)
    # One colour scale for all maps, so that they compare; square-root scaled because the first
    # queries, with few keys to spread over, would otherwise saturate it.
    norm = PowerNorm(0.5, vmin=0, vmax=max(np.max(maps[e]["heatmap"]) for e in variants))
    for ax, variant in zip(axes, variants):
        image = ax.imshow(maps[variant]["heatmap"], cmap="viridis", norm=norm)
        ax.set(
            xlabel="key token (3k: RTG, +1 state, +2 action)",
            ylabel="query token",
            title=f"{variant} (mean of {maps[variant]['seeds']} seeds)",
        )
    fig.colorbar(image, ax=axes, label="attention weight (square-root scale)", shrink=0.5)
    fig.suptitle(
        "Final-layer attention, averaged over heads and episodes"
        + ("; the milestone panels' dotted line: uniform attention" if measured else "")
    )
    return fig


MAX_PAIRS = 30
"""pairs Figure 5 draws at most: of more, only the reference's (Table 7 holds every pair)"""


def effect_sizes(
    comparisons: pd.DataFrame,
    variants: list[str],
    methods: dict,
    label: Callable[[int], str],
    reference: str,
) -> Figure:
    """Figure 5: the difference a − b of mean success with its CI, per pair (rows) and grid size
    (panels); * marks a Holm-adjusted p below alpha. Of more than MAX_PAIRS pairs, only those of
    the reference."""
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
    every = len(pairs)
    if every > MAX_PAIRS:
        pairs = [pair for pair in pairs if reference in pair]
    fig, axes = panels.grid(
        len(sizes), inches=(3.0, 1.2 + 0.3 * len(pairs)), columns=4, sharey=True, sharex=True
    )
    axes = axes[0]
    y = np.arange(len(pairs))[::-1]  # the first pair on top
    alpha = methods["alpha"]
    for ax, size in zip(axes, sizes):
        rows = (
            comparisons[comparisons.grid_size == size]
            .set_index(["variant_a", "variant_b"])
            .reindex(pairs)  # a pair one of whose variants did not play this size: no point
        )
        resolved = (rows.verdict.notna() & (rows.verdict != inference.UNRESOLVED)).to_numpy()
        colour = np.where(resolved, "black", "grey")
        ax.axvline(0, color="black", linewidth=0.8)
        ax.hlines(y, rows.ci_low_pct, rows.ci_high_pct, colors=colour)
        ax.scatter(rows.diff_pct, y, c=colour, zorder=3, s=18)
        for yi, row in zip(y, rows.itertuples()):
            if row.p_holm < alpha:  # NaN (outside the family) compares False
                ax.annotate("*", (row.ci_high_pct, yi), xytext=(3, -4), textcoords="offset points")
        ax.set(title=label(size), xlabel="Δ success a − b (pp)")
    axes[0].set_yticks(y, [f"{a} − {b}" for a, b in pairs])  # shared by every panel
    level = f"{100 * methods['confidence']:g} %"
    family = (
        f"* Holm p < {alpha:g}"
        if comparisons.primary.astype(bool).any()
        else "exploratory, unadjusted"
    )
    shown = (
        f"; the {len(pairs)} pairs with {reference} of {every} (Table 7)"
        if len(pairs) < every
        else ""
    )
    fig.suptitle(
        f"Differences of mean success with {level} bootstrap CI (black: CI excludes 0); "
        f"{family}{shown}"
    )
    return fig


T_SHIFT_PANELS = (
    ("mean_abs_diff", "final-layer attention, mean |change|"),
    ("action_tv_mean", "action distribution, mean TV distance"),
)


def t_shift(attention_jsons: list[Path], colours: dict) -> Figure:
    """Figure 6: the attention stage's t-shift check, one point per seed: how much the same
    windows' attention and action distribution move when every global timestep t is shifted
    beyond the training range (k unchanged); the variants down the side."""
    checks = {}
    for path in attention_jsons:
        result = json.loads(Path(path).read_text())
        checks.setdefault(result["variant"], []).append(result["translation"])
    variants = [e for e in colours if e in checks]
    fig = Figure(figsize=(9, 1.4 + 0.28 * len(variants)), layout="constrained")
    y = np.arange(len(variants))[::-1]
    for ax, (key, label) in zip(fig.subplots(1, 2, sharey=True), T_SHIFT_PANELS):
        for yi, variant in zip(y, variants):
            values = [c[key] for c in checks[variant]]
            ax.scatter(values, [yi] * len(values), color=colours[variant], s=18)
        ax.set(xlabel=label, xlim=(0, None))
        ax.set_yticks(y, variants)
    shift = next(iter(checks.values()))[0]["shift"] if checks else 0
    fig.suptitle(f"Global timestep t shifted by {shift} (one point per seed)")
    return fig


def aggregates(
    profile: pd.DataFrame, iqm: pd.DataFrame, colours: dict, methods: dict, reference: str
) -> Figure:
    """Figure 7: rliable's performance profile over the grid sizes beyond training (the share
    of seed x grid scores above each threshold, with its stratified-bootstrap band), in panels,
    and the IQM of those scores with its interval (last panel)."""
    if not len(iqm):
        fig = Figure(figsize=(6, 2), layout="constrained")
        fig.text(0.5, 0.5, "no evaluation grid larger than training", ha="center", va="center")
        return fig
    variants = [v for v in colours if v in set(iqm.variant)]
    groups = panels.groups(variants, reference)
    fig, axes = panels.grid(len(groups) + 1)
    *profiles, right = axes[0]
    for ax, (title, members) in zip(profiles, groups):
        for variant in members:
            rows = profile[profile.variant == variant]
            options = panels.style(variant, reference, panels.faint(title, groups), colours)
            ax.plot(rows.tau_pct, rows.fraction, label=variant, **options)
            ax.fill_between(
                rows.tau_pct, rows.ci_low, rows.ci_high, color=options["color"], alpha=0.15, lw=0
            )
        ax.set(
            xlabel="success threshold τ (%)",
            ylabel="fraction of seed × grid scores > τ",
            xlim=(0, 100),
            ylim=(0, 1.02),
            title=title,
        )
        ax.legend(fontsize=7, frameon=False)
    rows = iqm.set_index("variant").loc[variants]
    y = np.arange(len(variants))[::-1]
    right.hlines(y, rows.ci_low_pct, rows.ci_high_pct, colors=[colours[v] for v in variants], lw=3)
    right.scatter(rows.iqm_pct, y, color="black", zorder=3, s=14)
    right.set_yticks(y, variants)
    right.set(xlabel="IQM of success (%)", title="IQM")
    tasks = str(iqm.tasks.iloc[0]).replace(" ", ", ")
    level = f"{100 * methods['confidence']:g} %"
    fig.suptitle(
        f"Grid sizes {tasks} as tasks: performance profile and IQM ({level} stratified bootstrap)"
    )
    return fig


def reach(
    success: pd.DataFrame,
    effective: pd.DataFrame,
    train_context: int,
    reference: str,
    methods: dict,
    label: Callable[[int], str],
) -> Figure:
    """Figure 8: mean success against context (log scale), a row per grid size of the reach
    step, the variants in panels, with the bootstrap CI of the mean as bars, the training
    context dashed and each variant's effective context an open marker."""
    sizes = sorted(success.grid_size.unique())
    if not sizes:
        fig = Figure(figsize=(6, 2), layout="constrained")
        fig.text(0.5, 0.5, "no reach evaluation in this run", ha="center", va="center")
        return fig
    labels = list(dict.fromkeys(success.variant))
    colours = palette.colours(labels)
    groups = panels.groups(labels, reference)
    fig, axes = panels.grid(len(groups), rows_of=len(sizes), sharey=True)
    contexts = sorted(success.context.unique())
    for row, size in zip(axes, sizes):
        for ax, (title, members) in zip(row, groups):
            for variant in members:
                rows = success[(success.grid_size == size) & (success.variant == variant)]
                if not len(rows):
                    continue
                options = panels.style(variant, reference, panels.faint(title, groups), colours)
                panels.curve(ax, rows, "context", options, variant)
                mark = effective[(effective.grid_size == size) & (effective.variant == variant)]
                if len(mark) and pd.notna(mark.effective_context.iloc[0]):
                    ax.plot(
                        mark.effective_context,
                        mark.effective_success_pct,
                        linestyle="none",
                        marker="o",
                        markersize=11,
                        markerfacecolor="none",
                        color=options["color"],
                    )
            ax.axvline(train_context, color="black", linestyle="--", linewidth=0.8)
            ax.set_xscale("log")
            ax.set_xticks(contexts, [str(c) for c in contexts])
            ax.minorticks_off()
            ax.set(
                title=f"{label(size)}: {title}",
                xlabel="context (timesteps)",
                ylabel="success (%)",
                ylim=(-3, 103),
            )
            ax.legend(fontsize=7, frameon=False)
    level = f"{100 * methods['confidence']:g} %"
    fig.suptitle(f"Success against context (bars: {level} CI; dashed: training context)")
    return fig
