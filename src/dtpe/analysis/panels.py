"""Figures of many variants split into panels a reader can tell apart: at most MAX_LINES curves
a panel, the reference with its scalings first, then the variants whose t is another, then the
others in params order, the reference drawn faintly in each for comparison; panels in rows of
at most COLUMNS, so that no figure is wider than MAX_PIXELS."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dtpe.analysis import palette

MAX_LINES = 7
"""curves a panel holds at most"""
COLUMNS = 3
"""panels a row holds"""
PANEL_INCHES = (4.2, 3.4)
DPI = 150
MAX_PIXELS = 2000
"""the widest a saved figure may be (figures.save lowers the dpi of a wider one)"""
REFERENCE_GREY = "0.45"


def groups(labels: list[str], reference: str) -> list[tuple[str, list[str]]]:
    """(title, variants) per panel (module docstring); `labels` in the order to draw them."""
    own = [v for v in labels if "+" not in v and v != reference]
    first = [v for v in labels if v == reference or v.startswith(reference + "+")]
    kinds = [
        ("encodings", [v for v in own if "-t_" not in v]),
        (f"t encodings, k = {reference}", [v for v in own if "-t_" in v]),
    ]
    out = [(f"{reference} and its scalings", first)] if len(first) > 1 else []
    room = MAX_LINES - (reference in labels)
    for title, members in kinds:
        chunks = [members[i : i + room] for i in range(0, len(members), room)]
        for i, chunk in enumerate(chunks):
            named = f"{title} ({i + 1}/{len(chunks)})" if len(chunks) > 1 else title
            out.append((named, [reference, *chunk] if reference in labels else chunk))
    return out or [(reference, first)]


def grid(
    n_panels: int,
    rows_of: int = 1,
    inches: tuple = PANEL_INCHES,
    columns: int = COLUMNS,
    **share,
) -> tuple[Figure, np.ndarray]:
    """A figure of `rows_of` rows of `n_panels` panels each, a row wrapped after `columns`;
    returns it and its axes (rows_of, n_panels)."""
    columns = min(n_panels, columns)
    wrapped = math.ceil(n_panels / columns)
    fig = Figure(
        figsize=(inches[0] * columns + 0.4, inches[1] * wrapped * rows_of + 0.6),
        layout="constrained",
    )
    axes = fig.subplots(wrapped * rows_of, columns, squeeze=False, **share)
    for r in range(rows_of):
        block = axes[r * wrapped : (r + 1) * wrapped].ravel()
        for unused in block[n_panels:]:
            unused.remove()
    out = np.array(
        [axes[r * wrapped : (r + 1) * wrapped].ravel()[:n_panels] for r in range(rows_of)]
    )
    return fig, out


def style(variant: str, reference: str, faint: bool, colours: dict) -> dict:
    """The line options of `variant` in a panel; `faint` draws the reference grey and thin."""
    grey = faint and variant == reference
    return {
        "color": REFERENCE_GREY if grey else colours[variant],
        "linestyle": palette.line_style(variant),
        "linewidth": 1.0 if grey else 1.6,
    }


def curve(ax, rows: pd.DataFrame, x: str, options: dict, label: str) -> None:
    """Mean success against `x` with its interval as bars (the stats stage's bounds)."""
    rows = rows.sort_values(x)
    ax.errorbar(
        rows[x],
        rows.success_pct_mean,
        yerr=[rows.success_pct_mean - rows.ci_low_pct, rows.ci_high_pct - rows.success_pct_mean],
        marker="o",
        markersize=3,
        elinewidth=0.7,
        label=label,
        **options,
    )


def faint(title: str, panels: list) -> bool:
    """Whether the reference is drawn faintly in the panel `title`: in every panel but the
    first of several."""
    return len(panels) > 1 and title != panels[0][0]


def tick_labels(sizes: list, log: bool) -> list[str]:
    """The sizes' tick labels: on a log axis only those at least 1.8x the last one named, the
    largest always, so that neighbours do not crowd."""
    if not log:
        return [str(n) for n in sizes]
    named, last = [], None
    for i, n in enumerate(sizes):
        show = last is None or n >= 1.8 * last or i == len(sizes) - 1
        named.append(str(n) if show else "")
        last = n if show else last
    return named
