"""Figures 1-5 of the study (PROTOCOL §6), each saved as PNG (dpi 150) and PDF:
fig1_maze, fig2_training, fig3_success_by_grid, fig4_attention, fig5_effect_sizes.

Figures are built on `matplotlib.figure.Figure` without pyplot, so no global figure state or
interactive backend is involved; PNGs render through Agg. Timestamp and software metadata are
left out so that a rerun on the same inputs gives the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.colors import ListedColormap, PowerNorm
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from dtpe import dataset
from dtpe.maze import AGENT, DOOR, EMPTY, GOAL, KEY, WALL
from dtpe.stats import read_metrics

CODE_STYLE = {
    EMPTY: ("empty", "#ffffff"),
    WALL: ("wall", "#3c3c3c"),
    AGENT: ("agent", "#1f77b4"),
    GOAL: ("goal", "#2ca02c"),
    KEY: ("key", "#f2b701"),
    DOOR: ("door", "#8c564b"),
}
TRAINING_PANELS = (
    ("train_loss", "train loss"),
    ("val_loss", "validation loss"),
    ("val_success", "validation success (%)"),
    ("overfit_gap", "overfitting gap (val − train loss)"),
)


def draw(
    params,
    data_dir: Path,
    stats_dir: Path,
    metrics_csvs: list[Path],
    attention_jsons: list[Path],
    out_dir: Path,
) -> list[Path]:
    """Draws the five figures into out_dir; returns the files written."""
    colours = encoding_colours(params.study.encodings)
    stats_dir, out_dir = Path(stats_dir), Path(out_dir)
    figures = {
        "fig1_maze": maze(Path(data_dir), max(params.data.suite_sizes)),
        "fig2_training": training(read_metrics(metrics_csvs), colours),
        "fig3_success_by_grid": success_by_grid(
            pd.read_csv(stats_dir / "success_by_grid.csv"), colours
        ),
        "fig4_attention": attention(mean_attention(attention_jsons), colours),
        "fig5_effect_sizes": effect_sizes(pd.read_csv(stats_dir / "tests.csv"), colours),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    return [path for name, fig in figures.items() for path in save(fig, out_dir / name)]


def save(fig: Figure, stem: Path) -> list[Path]:
    png, pdf = stem.with_suffix(".png"), stem.with_suffix(".pdf")
    fig.savefig(png, dpi=150, metadata={"Software": None})
    fig.savefig(pdf, metadata={"CreationDate": None})
    return [png, pdf]


def encoding_colours(encodings: list[str]) -> dict[str, str]:
    """One colour per encoding, in params order, the same in every figure."""
    palette = [f"C{i}" for i in range(10)]
    return {e: palette[i % len(palette)] for i, e in enumerate(encodings)}


def maze(data_dir: Path, size: int) -> Figure:
    """Figure 1: the first layout of the largest suite with the agent at its start."""
    layouts, optimal_steps = dataset.load_suite(data_dir, size)
    grid = layouts.grid[0].copy()
    grid[tuple(layouts.start[0])] = AGENT
    codes = sorted(CODE_STYLE)
    fig = Figure(figsize=(6, 5), layout="constrained")
    ax = fig.subplots()
    ax.imshow(
        grid,
        cmap=ListedColormap([CODE_STYLE[c][1] for c in codes]),
        vmin=-0.5,
        vmax=len(codes) - 0.5,
    )
    ax.set_xticks(np.arange(-0.5, size), minor=True)
    ax.set_yticks(np.arange(-0.5, size), minor=True)
    ax.grid(which="minor", color="#d0d0d0", linewidth=0.5)
    ax.tick_params(which="both", bottom=False, left=False, labelbottom=False, labelleft=False)
    ax.set_title(
        f"{size}×{size} evaluation layout {layouts.ids[0]} (BFS optimum {optimal_steps[0]} steps)"
    )
    ax.legend(
        handles=[
            Patch(facecolor=CODE_STYLE[c][1], edgecolor="black", label=f"{c} {CODE_STYLE[c][0]}")
            for c in codes
        ],
        loc="upper left",
        bbox_to_anchor=(1.02, 1),
        frameon=False,
    )
    return fig


def training(metrics: pd.DataFrame, colours: dict) -> Figure:
    """Figure 2: per epoch, mean over seeds with a ±1 std band (no band with one seed)."""
    metrics = metrics.assign(val_success=100 * metrics.val_success)
    summary = metrics.groupby(["encoding", "epoch"])[[m for m, _ in TRAINING_PANELS]].agg(
        ["mean", "std"]
    )
    fig = Figure(figsize=(10, 7), layout="constrained")
    for ax, (metric, label) in zip(fig.subplots(2, 2).flat, TRAINING_PANELS):
        for encoding, colour in colours.items():
            curve = summary.loc[encoding, metric]
            ax.plot(curve.index, curve["mean"], color=colour, label=encoding)
            ax.fill_between(
                curve.index,
                curve["mean"] - curve["std"],
                curve["mean"] + curve["std"],
                color=colour,
                alpha=0.2,
                linewidth=0,
            )
        ax.set(xlabel="epoch", ylabel=label)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.axes[0].legend()
    fig.suptitle("Training dynamics (mean over seeds, band ±1 std)")
    return fig


def success_by_grid(table: pd.DataFrame, colours: dict) -> Figure:
    """Figure 3: mean success per grid size, error bars ±1 std over seeds."""
    fig = Figure(figsize=(6, 4.5), layout="constrained")
    ax = fig.subplots()
    # Small horizontal offsets keep overlapping error bars apart.
    offsets = np.linspace(-0.15, 0.15, len(colours)) if len(colours) > 1 else [0.0]
    for offset, (encoding, colour) in zip(offsets, colours.items()):
        rows = table[table.encoding == encoding]
        ax.errorbar(
            rows.grid_size + offset,
            rows.success_pct_mean,
            yerr=rows.success_pct_std,
            color=colour,
            marker="o",
            capsize=3,
            label=encoding,
        )
    ax.set_xticks(sorted(table.grid_size.unique()))
    ax.set(
        xlabel="grid size N",
        ylabel="success (%)",
        ylim=(-3, 103),
        title="Success against grid size",
    )
    ax.legend()
    return fig


def mean_attention(paths) -> dict[str, dict]:
    """Distance decay and heatmap per encoding, averaged over its seeds."""
    runs = {}
    for path in paths:
        result = json.loads(Path(path).read_text())
        runs.setdefault(result["encoding"], []).append(result)
    return {
        encoding: {
            "distance_decay": np.mean([r["distance_decay"] for r in rs], axis=0),
            "heatmap": np.mean([r["heatmap"] for r in rs], axis=0),
            "seeds": len(rs),
        }
        for encoding, rs in runs.items()
    }


def attention(maps: dict[str, dict], colours: dict) -> Figure:
    """Figure 4: distance decay per encoding (left) and one mean attention map per encoding."""
    encodings = [e for e in colours if e in maps]
    fig = Figure(figsize=(4.5 * (1 + len(encodings)), 4.2), layout="constrained")
    decay_ax, *heat_axes = fig.subplots(1, 1 + len(encodings))
    for encoding in encodings:
        decay = maps[encoding]["distance_decay"]
        decay_ax.plot(np.arange(len(decay)), decay, color=colours[encoding], label=encoding)
    decay_ax.set(
        xlabel="token distance (query − key)",
        ylabel="mean attention weight",
        title="Distance decay",
    )
    decay_ax.legend()
    # One colour scale for all maps, so that they compare; square-root scaled because the first
    # queries, with few keys to spread over, would otherwise saturate it.
    norm = PowerNorm(0.5, vmin=0, vmax=max(maps[e]["heatmap"].max() for e in encodings))
    for ax, encoding in zip(heat_axes, encodings):
        image = ax.imshow(maps[encoding]["heatmap"], cmap="viridis", norm=norm)
        ax.set(
            xlabel="key token",
            ylabel="query token",
            title=f"{encoding} (mean of {maps[encoding]['seeds']} seeds)",
        )
    fig.colorbar(image, ax=heat_axes, label="attention weight (square-root scale)")
    fig.suptitle("Final-layer attention, averaged over heads and episodes")
    return fig


def effect_sizes(tests: pd.DataFrame, colours: dict) -> Figure:
    """Figure 5: Cohen's d per grid size and comparison, with its significance marks."""
    sizes = sorted(tests.grid_size.unique())
    others = [e for e in colours if e in set(tests.other)]
    width = 0.8 / len(others)
    fig = Figure(figsize=(7, 4.5), layout="constrained")
    ax = fig.subplots()
    for i, other in enumerate(others):
        rows = tests[tests.other == other].set_index("grid_size").loc[sizes]
        x = np.arange(len(sizes)) - 0.4 + width * (i + 0.5)
        height = np.where(np.isfinite(rows.cohens_d), rows.cohens_d, 0.0)
        ax.bar(x, height, width, color=colours[other], label=f"{rows.reference.iloc[0]} vs {other}")
        for xi, hi, row in zip(x, height, rows.itertuples()):
            ax.annotate(
                significance_mark(row),
                (xi, hi),
                xytext=(0, 3 if hi >= 0 else -12),
                textcoords="offset points",
                ha="center",
            )
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(np.arange(len(sizes)), [f"{n}×{n}" for n in sizes])
    alpha = tests.alpha.iloc[0]
    ax.set(
        xlabel="grid size",
        ylabel="Cohen's d (per-seed success %)",
        title=f"Effect sizes: * Welch p < {alpha:g}, † Wilcoxon p < {alpha:g}, – d undefined",
    )
    ax.legend()
    return fig


def significance_mark(row) -> str:
    """* Welch (seeds) and † Wilcoxon (layouts) significant; – undefined d; ±∞ no spread at all."""
    if np.isnan(row.cohens_d):
        return "–"
    marks = "*" * flag(row.seed_test_significant) + "†" * flag(row.layout_test_significant)
    return (("+∞ " if row.cohens_d > 0 else "−∞ ") if np.isinf(row.cohens_d) else "") + marks


def flag(value) -> bool:
    """A significance flag read back from CSV: True, False or missing (undefined test)."""
    return bool(value) if pd.notna(value) else False
