"""How the tables' cells read (every table, the report and the figures' captions show numbers
this way): means, intervals, effects, p-values and counts, a size in its world's words, and a
Table as Markdown and LaTeX. "N/A": the variant cannot run there (never 0); "–": a statistic that
is undefined (one seed, or no spread between seeds)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import pandas as pd

from dtpe.world import catalog as worlds

NOT_APPLICABLE = "N/A"
UNDEFINED = "–"
LATEX_SPECIALS = str.maketrans({c: "\\" + c for c in "&%$#_{}"})
# pdflatex has no glyphs for these in text mode; math mode draws them everywhere.
LATEX_SYMBOLS = str.maketrans(
    {
        "±": r"$\pm$",
        "−": r"$-$",
        "×": r"$\times$",
        "Δ": r"$\Delta$",
        "∞": r"$\infty$",
        "α": r"$\alpha$",
        "≥": r"$\geq$",
        "≤": r"$\leq$",
        "≈": r"$\approx$",
        "<": r"$<$",
        ">": r"$>$",
        "–": "--",
    }
)


@dataclass
class Table:
    name: str
    caption: str
    numbers: pd.DataFrame
    shown: pd.DataFrame


def markdown(table: Table) -> str:
    # numparse off: tabulate would otherwise turn "+3.0" into 3 and "1.50" into 1.5
    return f"{table.caption}\n\n{table.shown.to_markdown(index=False, disable_numparse=True)}\n"


def latex(table: Table) -> str:
    tex = table.shown.to_latex(
        index=False,
        escape=True,
        caption=table.caption.translate(LATEX_SPECIALS),
        label=f"tab:{table.name}",
    )
    return tex.translate(LATEX_SYMBOLS)


def mean_std(mean: float, std: float, digits: int = 1) -> str:
    if math.isnan(mean):
        return NOT_APPLICABLE
    return f"{mean:.{digits}f}" if math.isnan(std) else f"{mean:.{digits}f} ± {std:.{digits}f}"


def with_interval(value: float, low: float, high: float, sign: str = "") -> str:
    """`value [low, high]`; `[–]` where the interval is undefined (one seed)."""
    if math.isnan(value):
        return NOT_APPLICABLE
    interval = UNDEFINED if math.isnan(low) else f"{low:{sign}.1f}, {high:{sign}.1f}"
    return f"{value:{sign}.1f} [{interval}]"


def percent(mean: float, low: float, high: float) -> str:
    """A success % with its interval, `N/A` where the variant cannot play there."""
    return NOT_APPLICABLE if math.isnan(mean) else with_interval(mean, low, high) + " %"


def effect(d: float) -> str:
    if math.isnan(d):
        return UNDEFINED
    return ("+∞" if d > 0 else "−∞") if math.isinf(d) else f"{d:+.2f}"


def p_value(p: float) -> str:
    if math.isnan(p):
        return UNDEFINED
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def probability(value: float) -> str:
    return UNDEFINED if math.isnan(value) else f"{value:.2f}"


def number(value: float) -> str:
    return UNDEFINED if math.isnan(value) else f"{value:.1f}"


def count(value: float) -> str:
    """A whole number the stats stage wrote as float (NaN where undefined)."""
    return UNDEFINED if math.isnan(value) else f"{value:.0f}"


def grid_label(world: str, size: int) -> str:
    """A size as its world names it (`Words.size`)."""
    return worlds.get(world).words.size.format(n=size)


def grid_labels(params, sizes: pd.Series) -> pd.Series:
    return sizes.map(partial(grid_label, params.env.world))
