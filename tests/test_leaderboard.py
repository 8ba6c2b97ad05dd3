"""The leaderboard is generated (issue 74): results/leaderboard.csv is what `dtpe leaderboard`
makes from the committed runs' own statistics, the README's block is its compact table, and a
verdict reads as its decisions row decided it."""

import importlib.util
from pathlib import Path

import pandas as pd
import pytest

from dtpe import submitted
from dtpe.analysis import leaderboard, verdict_words
from dtpe.params import load

ROOT = Path(__file__).resolve().parents[1]


def test_the_committed_leaderboard_is_what_the_runs_give():
    board_params = load(ROOT / "params.yaml").leaderboard
    tests, folder = board_params.tests, board_params.submissions
    board = leaderboard.build(tests, ROOT, folder)
    committed = leaderboard.read(ROOT / "results" / "leaderboard.csv")
    pd.testing.assert_frame_equal(committed, leaderboard.read_frame(board), check_dtype=False)
    decided = leaderboard.verdicts(tests, ROOT, folder)
    assert (ROOT / "results" / "leaderboard.md").read_text() == leaderboard.markdown(
        committed, decided
    )
    submissions = [s["run"] for s in submitted.runs(ROOT, folder)]
    deciding = [t["decided_by"] for t in tests if t["decided_by"]] + submissions
    assert decided.count("\n") + 1 == sum(
        len(pd.read_csv(ROOT / run / "results/stats/decisions.csv")) for run in deciding
    )
    assert set(board.run) >= set(submissions)


def test_the_readme_block_is_the_generated_one():
    spec = importlib.util.spec_from_file_location("block", ROOT / "scripts/readme_leaderboard.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    readme = (ROOT / "README.md").read_text()
    assert script.written(readme) == readme, "README's leaderboard is stale: run the script"


@pytest.mark.parametrize(
    "outcome, side, words",
    [
        ("a > b", "fire", "above rope (tested against 0)"),
        ("a > b", "rope", "below fire (tested against 0)"),
        ("a < b", "fire", "below rope (tested against 0)"),
        ("equivalent within ±10", "rope", "within ±10 of fire"),
        ("undecided", "fire", "undecided against rope"),
        ("continue", "fire", "open against rope"),
    ],
)
def test_a_verdict_reads_from_either_side_as_decided(outcome, side, words):
    row = pd.Series({"a": "fire", "b": "rope", "outcome": outcome, "margin_pct": 10.0})
    assert verdict_words.against(row, side) == words
    other = "rope" if side == "fire" else "fire"
    assert verdict_words.mark(row, side) == verdict_words.MARKS[words.split()[0]] + other


def test_a_missing_run_is_named_before_anything_is_read(tmp_path):
    tests = [{"name": "T", "run": "runs/none", "decided_by": None}]
    with pytest.raises(FileNotFoundError, match=r"leaderboard test 'T': .*runs/none/results"):
        leaderboard.build(tests, tmp_path)


def test_uses_position_reads_the_models_moved():
    assert leaderboard.uses("k 0/5, t 0/5") == "no"
    assert leaderboard.uses("k 3/5, t 0/5") == "yes"
    assert leaderboard.uses("") == ""
