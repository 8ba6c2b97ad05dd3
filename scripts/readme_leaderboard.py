"""The README's leaderboard: the compact table of results/leaderboard.csv (what `snakemake
leaderboard` wrote from the runs' own statistics) between the README's markers (the verdicts'
sentences are in results/leaderboard.md). `python
scripts/readme_leaderboard.py` rewrites the block; tests/test_leaderboard.py fails while the
committed block differs."""

from __future__ import annotations

import sys
from pathlib import Path

from dtpe.analysis import leaderboard

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
BOARD = ROOT / "results" / "leaderboard.csv"
BEGIN = "<!-- leaderboard: written by scripts/readme_leaderboard.py, do not edit -->"
END = "<!-- /leaderboard -->"


def block() -> str:
    table = leaderboard.compact(leaderboard.read(BOARD))
    return f"{BEGIN}\n\n{leaderboard.LEGEND}\n\n{table}\n\n{END}"


def written(text: str) -> str:
    """`text` with its block replaced by the one results/leaderboard.csv gives."""
    head, rest = text.split(BEGIN, 1)
    return head + block() + rest.split(END, 1)[1]


if __name__ == "__main__":
    README.write_text(written(README.read_text()))
    sys.stdout.write(block() + "\n")
