"""A declared hypothesis's outcome in words, rendered from its row of the decisions table
(analysis/verdicts.py) and nothing else, so that a sentence states a verdict only as its test
decided it, with the interval at the level the claim was tested at:

- a > b: "a above b (tested against 0)", the difference's CI at the row's ci_level, the level
  its rejection was tested at (a fixed design's Holm: Bonferroni's level, which Holm's steps
  never go below);
- equivalent: "a and b within ±m", the TOST's (1 − 2α) interval;
- undecided: "n + n seeds, |z| x short of the bound" at the cap (a sequential run's; a fixed
  design's "neither above nor within ±m");
- open: the interim it has reached."""

from __future__ import annotations

import math

from dtpe.analysis import verdicts
from dtpe.analysis.cells import with_interval


def sentence(row, methods: dict) -> str:
    """One decisions row (a namedtuple or Series) in words; `methods` the run's methods.json
    (the alpha each kind of claim spends)."""
    seeds = f"{row.seeds_a} + {row.seeds_b} seeds"
    shown, level = stated(row, methods["claim_alpha"])
    if row.outcome in ("a > b", "a < b"):
        side = "above" if row.outcome == "a > b" else "below"
        return f"{row.a} {side} {row.b} (tested against 0): {shown} points [{level}], {seeds}"
    if str(row.outcome).startswith("equivalent"):
        return (
            f"{row.a} and {row.b} within ±{row.margin_pct:g} (two one-sided tests): {shown} "
            f"points [{level}], {seeds}"
        )
    if row.outcome == verdicts.UNDECIDED:
        short = (
            f"|z| {-row.z_margin:.2f} short of the bound at the cap"
            if not math.isnan(row.z_margin)
            else "neither rejected nor within "
            + ("the margin" if math.isnan(row.margin_pct) else f"±{row.margin_pct:g}")
        )
        return f"{row.a} vs {row.b} undecided: {seeds}, {short}; {shown} points [{level}]"
    return f"{row.a} vs {row.b} open after interim {row.interim}: {seeds} so far"


def stated(row, claim_alpha: float) -> tuple[str, str]:
    """The difference and interval a decisions row's verdict is stated with, and the interval's
    level in words: an equivalence's TOST (1 − 2α) interval, any other outcome's CI at its
    ci_level; `claim_alpha` the run's α for each kind of claim (methods.json)."""
    if str(row.outcome).startswith("equivalent"):
        low, high = row.equivalence_low_pct, row.equivalence_high_pct
        level = f"{_level(1 - 2 * claim_alpha)} interval"
    else:
        low, high, level = row.ci_low_pct, row.ci_high_pct, f"{_level(row.ci_level)} CI"
    return with_interval(row.effect_pct, low, high, sign="+"), level


def _level(confidence: float) -> str:
    # 5 figures: 1 − 0.05 / 8 is 99.375 %, not a rounded-up 99.38
    return f"{100 * confidence:.5g} %"


def levels(ci_levels) -> str:
    """The decisions' interval levels (their ci_level column) in words: one, or each that
    occurs."""
    return " or ".join(_level(c) for c in sorted(set(ci_levels)))


def against(row, variant: str) -> str:
    """A decisions row in a few words from `variant`'s side, for the leaderboard: "above rope
    (tested against 0)", "within ±10 of rope", "undecided against rope", "open against rope"."""
    other = row.b if variant == row.a else row.a
    if row.outcome in ("a > b", "a < b"):
        above = (row.outcome == "a > b") == (variant == row.a)
        return f"{'above' if above else 'below'} {other} (tested against 0)"
    if str(row.outcome).startswith("equivalent"):
        return f"within ±{row.margin_pct:g} of {other}"
    if row.outcome == verdicts.UNDECIDED:
        return f"undecided against {other}"
    return f"open against {other}"


MARKS = {"above": ">", "below": "<", "within": "≈", "undecided": "?", "open": "…"}
"""a verdict's mark in the README's leaderboard: above, below, within the margin of, undecided
against, open against its partner"""


def mark(row, variant: str) -> str:
    """`against` as a mark and the partner: ">rope", "≈rope", "?rope"."""
    words = against(row, variant)
    return MARKS[words.split()[0]] + words.split(" (")[0].split()[-1]
