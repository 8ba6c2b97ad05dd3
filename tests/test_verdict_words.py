"""A verdict's words come from its decisions row: each outcome says what its test decided, with
the interval at the level the claim was tested at; every committed report states each of its
run's decisions in exactly these words."""

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from dtpe.analysis import verdict_words

ROOT = Path(__file__).resolve().parents[1]
METHODS = {"claim_alpha": 0.025}


def row(**changed):
    base = dict(
        a="fire",
        b="rope",
        outcome="a > b",
        effect_pct=26.0,
        ci_low_pct=13.0,
        ci_high_pct=38.2,
        ci_level=1 - 0.025 / 2,
        margin_pct=10.0,
        equivalence_low_pct=21.8,
        equivalence_high_pct=37.0,
        z_margin=2.11,
        interim=3,
        seeds_a=15,
        seeds_b=15,
    )
    return SimpleNamespace(**{**base, **changed})


@pytest.mark.parametrize(
    "changed, words",
    [
        (
            {},
            "fire above rope (tested against 0): +26.0 [+13.0, +38.2] points [98.75 % CI], 15 + 15",
        ),
        (
            {"ci_level": 0.95},
            "fire above rope (tested against 0): +26.0 [+13.0, +38.2] points [95 % CI]",
        ),
        ({"outcome": "a < b"}, "fire below rope (tested against 0): +26.0"),
        (
            {"outcome": "equivalent within ±10", "effect_pct": 0.6, "equivalence_low_pct": -4.8},
            "fire and rope within ±10 (two one-sided tests): +0.6 [-4.8, +37.0] points [95 % "
            "interval]",
        ),
        (
            {"outcome": "undecided", "z_margin": -0.063, "seeds_a": 20, "seeds_b": 20},
            "fire vs rope undecided: 20 + 20 seeds, |z| 0.06 short of the bound at the cap",
        ),
        (
            {"outcome": "undecided", "z_margin": math.nan},
            "fire vs rope undecided: 15 + 15 seeds, neither rejected nor within ±10",
        ),
        ({"outcome": "open"}, "fire vs rope open after interim 3: 15 + 15 seeds so far"),
    ],
)
def test_each_outcome_says_what_its_test_decided(changed, words):
    assert verdict_words.sentence(row(**changed), METHODS).startswith(words)


def test_no_sentence_claims_more_than_its_outcome():
    """Only a rejection says above or below; only an equivalence says within."""
    for outcome in ("equivalent within ±10", "undecided", "open"):
        text = verdict_words.sentence(row(outcome=outcome), METHODS)
        assert " above " not in text and " below " not in text
    for outcome in ("a > b", "undecided", "open"):
        assert "within ±" not in verdict_words.sentence(row(outcome=outcome), METHODS)


def test_every_committed_report_states_its_decisions_in_these_words():
    checked = 0
    for stats in sorted(ROOT.glob("runs/*/results/stats")):
        decisions = pd.read_csv(stats / "decisions.csv")
        if not len(decisions):
            continue
        methods = json.loads((stats / "methods.json").read_text())
        report = (stats.parents[1] / "figures/REPORT.md").read_text()
        for decided in decisions.itertuples():
            # each hypothesis's rejection is tested two-sided at the claims' alpha over m
            tested = 1 - methods["claim_alpha"] / len(decisions)
            assert decided.ci_level == pytest.approx(tested), (stats, decided.hypothesis)
            assert verdict_words.sentence(decided, methods) in report, (stats, decided.hypothesis)
            checked += 1
    assert checked >= 13
