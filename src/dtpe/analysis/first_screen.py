"""The report's first screen: the run's question, its answer, the headline figure, one short
table and the way to the sections below. A confirmatory run's question is its declared
hypotheses and its answer their decisions, in verdict_words' sentences; an exploratory run's
question is its overlay's `report.question` and its answer its leads, the variants the short
table ranks first, said to be leads, not decisions. Every number is one the stats stage wrote."""

from __future__ import annotations

import os
import re
from functools import partial
from pathlib import Path

import pandas as pd

from dtpe.analysis import headline, standing, verdict_words
from dtpe.analysis.cells import grid_label, percent
from dtpe.analysis.findings import level
from dtpe.analysis.outputs import HEADLINE

LEADS = 3
"""variants an exploratory run's answer names"""


def section(
    params, stats_dir: Path, methods: dict, figures_dir: Path, report_dir: Path, below: list[str]
) -> str:
    """The first screen, Markdown; `below` the titles of the sections that follow it."""
    stats_dir = Path(stats_dir)
    shown = headline.kind(params, stats_dir)
    table, table_caption = short_table(params, stats_dir, methods)
    image = Path(os.path.relpath(Path(figures_dir) / f"{HEADLINE}.png", report_dir)).as_posix()
    caption = headline.CAPTIONS[shown].format(level=figure_level(shown, stats_dir, methods))
    return "\n\n".join(
        [
            f"**Question.** {question(params)}",
            "**Answer.** " + answer(params, stats_dir, methods, table),
            f"![{caption}]({image})\n\n*{caption}*",
            f"*{table_caption}*\n\n" + table.to_markdown(index=False, disable_numparse=True),
            "Below: " + " · ".join(f"[{title}](#{anchor(title)})" for title in below),
        ]
    )


def figure_level(shown: str, stats_dir: Path, methods: dict) -> str:
    """The level of the headline's intervals: the decisions' own (their ci_level) where it shows
    them, else the run's confidence."""
    if shown == "decisions":
        return verdict_words.levels(pd.read_csv(stats_dir / "decisions.csv").ci_level)
    return level(methods)


def question(params) -> str:
    hypotheses = params.verdict.declared()
    if not hypotheses:
        return params.report.question
    asked: dict[tuple[str, str], list[str]] = {}
    for h in hypotheses:
        asked.setdefault((h["b"], endpoint(params, h)), []).append(h["a"])
    return (
        "declared in its overlay before any of its models trained: "
        + "; ".join(f"do {series(a)} differ from {b} on {words}" for (b, words), a in asked.items())
        + "?"
    )


def series(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def endpoint(params, h: dict) -> str:
    """A hypothesis's endpoint in words."""
    label = lambda sizes: ", ".join(grid_label(params.env.world, n) for n in sorted(sizes))  # noqa: E731
    context = h.get("context") or params.model.context
    words = f"success over {label(h['grids'])} at context {context}"
    if h.get("minus"):
        words += f", less its success at {label(h['minus'])}"
    if h.get("margin") is not None:
        words += f" (margin ±{h['margin']:g} points)"
    return words


def answer(params, stats_dir: Path, methods: dict, table: pd.DataFrame) -> str:
    if params.verdict.declared():
        decisions = pd.read_csv(stats_dir / "decisions.csv")
        return "the declared hypotheses' decisions, as their tests decided them:\n\n" + "\n".join(
            f"- {verdict_words.sentence(row, methods)}." for row in decisions.itertuples()
        )
    far = table.columns[2]
    leads = ", ".join(f"{row.Variant} ({row[far]})" for _, row in table.head(LEADS).iterrows())
    return (
        f"Exploratory, nothing decided (no hypothesis declared). Leads {far[0].lower()}{far[1:]}: "
        f"{leads}; the table ranks every variant there."
    )


def short_table(params, stats_dir: Path, methods: dict) -> tuple[pd.DataFrame, str]:
    """The run's standing (analysis/standing.py) as a Markdown-ready table, and its caption."""
    rows = standing.rows(
        stats_dir,
        list(params.study.variants),
        params.stats.reference,
        params.data.train_size,
        params.model.context,
    )
    label = partial(grid_label, params.env.world)
    train, largest = params.data.train_size, int(rows.largest_size.iloc[0])
    table = pd.DataFrame(
        {
            "Variant": rows.variant,
            f"At {label(train)}": [
                percent(*r)
                for r in zip(rows.trained_pct, rows.trained_low_pct, rows.trained_high_pct)
            ],
            f"At {label(largest)}": [
                percent(*r)
                for r in zip(rows.largest_pct, rows.largest_low_pct, rows.largest_high_pct)
            ],
            "Horizon (median)": ["—" if pd.isna(h) else label(int(h)) for h in rows.horizon],
            "Moved by k / t off": [m or "—" for m in rows.moved],
        }
    )
    context = int(rows.context.iloc[0])
    where = (
        f"with the whole episode in the window ({context} steps)"
        if context != params.model.context
        else f"at the training context ({context} steps)"
    )
    caption = (
        f"Success {where}, mean over seeds and layouts [{level(methods)} CI], ranked by the "
        f"largest size; the median horizon at that context; of each variant's models, how many "
        "its k or t encoding switched off moves (Table 14)."
    )
    return table, caption


def anchor(title: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
