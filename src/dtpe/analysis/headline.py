"""The headline figure, the first screen's picture of a run's answer, chosen by what the run
measures (`kind`):

- `decisions`, a run that declares its hypotheses: each hypothesis' z at each look against the
  look's boundary (left), and its estimate with its interval against 0 and its margin (right);
- `reach`, a run with a whole-episode sweep: success against size with the whole episode in the
  window, the trained sizes shaded, chance drawn, each variant's median horizon marked;
- `ladder`, any other: success against size at the training context.

Curves come in panels (analysis/panels.py). Every number drawn is one the stats stage wrote."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dtpe.analysis import palette, panels, verdict_words
from dtpe.world import catalog as worlds

CAPTIONS = {
    "decisions": "The declared hypotheses: each one's z at each look against that look's "
    "boundary (left; a hypothesis stops where it crosses), and its estimate with its {level} "
    "interval against 0 and its margin (right).",
    "reach": "Success against size with the whole episode in the window (log axis where sizes "
    "span 10× or more; shaded: the trained sizes; dotted: chance), the reference and its "
    "scalings first; open markers: each variant's median horizon. Other variants' scalings: "
    "Tables 6 and 12. Last panel, where the run measures it: the last step's weight on the cue "
    "against size, for the reference and the variants most successful at the largest size.",
    "ladder": "Success against size at the training context (shaded: the trained size; "
    "dotted: chance where the world has one), the reference in every panel; open markers: each "
    "variant's median horizon.",
}


def kind(params, stats_dir: Path) -> str:
    """What the headline shows for a run (module docstring)."""
    if params.verdict.declared():
        return "decisions"
    return "reach" if len(read(stats_dir, "whole_episode")) else "ladder"


def read(stats_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(Path(stats_dir) / f"{name}.csv")


def draw(params, stats_dir: Path) -> Figure:
    """The headline figure of the run whose params and stats folder are given."""
    shown = kind(params, stats_dir)
    if shown == "decisions":
        looks = Path(stats_dir) / "looks.csv"
        return decisions(
            read(stats_dir, "decisions"),
            pd.read_csv(looks) if looks.is_file() else None,
        )
    success = read(stats_dir, "whole_episode" if shown == "reach" else "success_by_grid")
    context = int(success.context.iloc[0]) if shown == "reach" else int(params.model.context)
    horizon = read(stats_dir, "horizon")
    return curves(
        success,
        horizon[horizon.context == context],
        params.stats.reference,
        params.data.train_size,
        worlds.get(params.env.world).words,
        f"with the whole episode in the window ({context} steps)"
        if shown == "reach"
        else f"at the training context ({context} steps)",
        read(stats_dir, "milestone") if shown == "reach" else None,
    )


def curves(
    success: pd.DataFrame,
    horizon: pd.DataFrame,
    reference: str,
    train_size: int,
    words,
    where: str,
    milestone: pd.DataFrame | None = None,
) -> Figure:
    """Success (mean over seeds and layouts, bars its interval) against size, in panels
    (analysis/panels.py), each variant's median horizon an open marker; with `milestone` (the
    attention step's milestone.csv) a last panel: the weight the last step puts on the cue
    against size, for the reference and the variants most successful at the largest size."""
    labels = list(dict.fromkeys(success.variant))
    groups = panels.groups(labels, reference)
    colours = palette.colours(labels)
    sizes = sorted(success.grid_size.unique())
    measured = milestone is not None and bool(milestone.weight_mean.notna().any())
    fig, axes = panels.grid(len(groups) + measured)
    log = sizes[-1] >= 10 * sizes[0]
    medians = dict(zip(horizon.variant, horizon.horizon_median))
    for ax, (title, members) in zip(axes[0], groups):
        if log:
            ax.axvspan(sizes[0] / 1.15, train_size * 1.15, color="0.9", zorder=0)
        else:
            ax.axvspan(sizes[0] - 0.5, train_size + 0.5, color="0.9", zorder=0)
        if words.chance_pct is not None:
            ax.axhline(words.chance_pct, color="black", linestyle=":", linewidth=0.8)
        for variant in members:
            rows = success[success.variant == variant]
            if not len(rows):
                continue
            options = panels.style(variant, reference, panels.faint(title, groups), colours)
            panels.curve(ax, rows, "grid_size", options, variant)
            at = rows[rows.grid_size == medians.get(variant, np.nan)]
            if len(at):
                ax.plot(
                    at.grid_size,
                    at.success_pct_mean,
                    marker="o",
                    markersize=10,
                    markerfacecolor="none",
                    linestyle="none",
                    color=options["color"],
                )
        if log:
            ax.set_xscale("log")
        ax.set_xticks(sizes, panels.tick_labels(sizes, log))
        ax.minorticks_off()
        ax.set(title=title, xlabel=words.axis, ylabel="success (%)", ylim=(-3, 103))
        ax.legend(fontsize=7, loc="lower left", frameon=False)
    if measured:
        far = success[success.grid_size == sizes[-1]].set_index("variant").success_pct_mean
        leads = [v for v in far.sort_values(ascending=False, kind="stable").index if v != reference]
        shown = [
            reference,
            *[v for v in leads if v in set(milestone.variant)][: panels.MAX_LINES - 1],
        ]
        cue(axes[0][-1], milestone, shown, colours, words)
    fig.suptitle(f"Success against {words.axis}\n{where}")
    return fig


def cue(ax, milestone: pd.DataFrame, shown: list[str], colours: dict, words) -> None:
    """The last step's weight on the cue (the strongest head's, mean over episodes and seeds)
    against size, uniform attention dotted."""
    for variant in shown:
        rows = milestone[milestone.variant == variant].dropna(subset=["weight_mean"])
        ax.plot(rows.grid_size, rows.weight_mean, marker="o", color=colours[variant], label=variant)
    sizes = milestone.drop_duplicates("grid_size").sort_values("grid_size")
    ax.plot(sizes.grid_size, sizes.uniform_mean, color="black", linestyle=":", linewidth=0.8)
    ax.set(
        xscale="log",
        yscale="log",
        xlabel=words.axis,
        ylabel="weight on the cue",
        title="Last step → cue, strongest head (dotted: uniform)",
    )
    ax.legend(fontsize=7, loc="lower left", frameon=False)


def decisions(table: pd.DataFrame, looks: pd.DataFrame | None) -> Figure:
    """Left: z per look against ±the boundary, one line per hypothesis; right: each estimate
    with its interval, 0 and ±margin marked."""
    width, height = panels.PANEL_INCHES
    fig = Figure(figsize=(2 * width + 1.5, height + 0.4), layout="constrained")
    left, right = fig.subplots(1, 2)
    names = [f"{r.a} − {r.b}" for r in table.itertuples()]
    colours = palette.colours(list(table.a))
    if looks is not None and len(looks):
        bounds = looks.drop_duplicates("interim").sort_values("interim")
        for sign in (1, -1):
            left.step(
                bounds.interim, sign * bounds.boundary, where="mid", color="black", linewidth=0.9
            )
        for (a, b), rows in looks.groupby(["a", "b"], sort=False):
            left.plot(
                rows.interim, rows.z, marker="o", color=colours.get(a, "black"), label=f"{a} − {b}"
            )
        left.set_xticks(sorted(bounds.interim))
        left.legend(fontsize=7, frameon=False)
    else:
        left.text(
            0.5, 0.5, "a fixed design: one look", ha="center", va="center", transform=left.transAxes
        )
    left.axhline(0, color="0.6", linewidth=0.8)
    left.set(
        xlabel="look (interim)",
        ylabel="z (Welch) of a − b",
        title="z at each look (black: the boundary)",
    )
    y = np.arange(len(table))[::-1]
    right.axvline(0, color="black", linewidth=0.8)
    for yi, row in zip(y, table.itertuples()):
        colour = colours.get(row.a, "black")
        right.hlines(yi, row.ci_low_pct, row.ci_high_pct, color=colour, linewidth=2)
        right.plot(row.effect_pct, yi, "o", color=colour)
        if not math.isnan(row.margin_pct):
            right.plot([-row.margin_pct, row.margin_pct], [yi, yi], "|", color="0.4", markersize=14)
    right.set_yticks(y, names)
    level = verdict_words.levels(table.ci_level)
    right.set(xlabel="a − b (points)", title=f"Estimate, {level} interval (|: ±margin)")
    fig.suptitle("The declared hypotheses")
    return fig
