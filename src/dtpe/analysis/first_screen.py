"""The report's first screen: the run's question, its answer, the headline figure, one short
table and the way to the sections below. A confirmatory run's question is its declared
hypotheses and its answer their decisions, in verdict_words' sentences; an exploratory run's
question is its overlay's `report.question` and its answer its leads, the variants the short
table ranks first, said to be leads, not decisions. Every number is one the stats stage wrote."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd

from dtpe.analysis import headline, verdict_words
from dtpe.analysis.cells import grid_label, with_interval
from dtpe.analysis.outputs import HEADLINE

LEADS = 3
"""variants an exploratory run's answer names"""


def section(
    params, stats_dir: Path, methods: dict, figures_dir: Path, report_dir: Path, below: list[str]
) -> str:
    """The first screen, Markdown; `below` the titles of the sections that follow it."""
    stats_dir = Path(stats_dir)
    shown = headline.kind(params, stats_dir)
    table, table_caption = short_table(params, stats_dir)
    image = Path(os.path.relpath(Path(figures_dir) / f"{HEADLINE}.png", report_dir)).as_posix()
    caption = headline.CAPTIONS[shown].format(level=f"{100 * methods['confidence']:g} %")
    return "\n\n".join(
        [
            f"**Question.** {question(params)}",
            "**Answer.** " + answer(params, stats_dir, methods, table),
            f"![{caption}]({image})\n\n*{caption}*",
            f"*{table_caption}*\n\n" + table.to_markdown(index=False, disable_numparse=True),
            "Below: " + " · ".join(f"[{title}](#{anchor(title)})" for title in below),
        ]
    )


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


def short_table(params, stats_dir: Path) -> tuple[pd.DataFrame, str]:
    """Per variant (the reference's scalings included): success at the training size and at
    the largest, with the whole episode in the window where the run plays it, else at the
    training context, with their intervals, its median horizon, and how many of its models an
    encoding switched off moves at the largest size it was switched off at; ranked by success
    at the largest size."""
    success = pd.read_csv(stats_dir / "whole_episode.csv")
    if len(success):
        context = int(success.context.iloc[0])
    else:
        success, context = pd.read_csv(stats_dir / "success_by_grid.csv"), params.model.context
    reference = params.stats.reference
    scalings = [v for v in dict.fromkeys(success.variant) if v.startswith(reference + "+")]
    labels = [*params.study.variants, *scalings]  # N/A where a variant cannot index the context
    train, largest = params.data.train_size, int(success.grid_size.max())
    label = lambda n: grid_label(params.env.world, n)  # noqa: E731
    horizon = pd.read_csv(stats_dir / "horizon.csv")
    horizon = dict(
        zip(*horizon[horizon.context == context][["variant", "horizon_median"]].T.values)
    )
    use = pd.read_csv(stats_dir / "position_use.csv")
    moved = moved_by(use)
    rows = []
    for variant in labels:
        mine = success[success.variant == variant].set_index("grid_size")
        rows.append(
            {
                "Variant": variant,
                f"At {label(train)}": cell(mine, train),
                f"At {label(largest)}": cell(mine, largest),
                "Horizon (median)": "—"
                if pd.isna(horizon.get(variant))
                else label(int(horizon[variant])),
                "Moved by k / t off": moved.get(variant, "—"),
                "_rank": mine.success_pct_mean.get(largest, -1.0),
            }
        )
    ranked = pd.DataFrame(rows).sort_values("_rank", ascending=False, kind="stable")
    where = (
        f"with the whole episode in the window ({context} steps)"
        if context != params.model.context
        else f"at the training context ({context} steps)"
    )
    caption = (
        f"Success {where}, mean over seeds and layouts [{level(params)} CI], ranked by the "
        f"largest size; the median horizon at that context; of each variant's models, how many "
        "its k or t encoding switched off moves (Table 14)."
    )
    return ranked.drop(columns="_rank"), caption


def level(params) -> str:
    return f"{100 * (1 - params.stats.alpha):g} %"


def cell(success: pd.DataFrame, size: int) -> str:
    if size not in success.index:
        return "N/A"
    row = success.loc[size]
    return with_interval(row.success_pct_mean, row.ci_low_pct, row.ci_high_pct) + " %"


def moved_by(use: pd.DataFrame) -> dict[str, str]:
    """{variant: "k 3/5, t 0/5"}: of its models, how many its k (t) encoding switched off
    moves (an exact McNemar test, position_use) at the largest size it was switched off at."""
    if not len(use):
        return {}
    largest = use[use.grid_size == use.grid_size.max()]
    return {
        variant: ", ".join(f"{r.off} {r.models_using}/{r.seeds}" for r in rows.itertuples())
        for variant, rows in largest.groupby("variant", sort=False)
    }


def anchor(title: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
