"""Adds the `world` and `ending` columns (steps/episode_csv.py) to per-episode CSVs written before
them, changing no other byte: each line gains `,<world>,<ending>` at its end.

An episode's ending is read back as the evaluation decided it: `success` where it succeeded,
`cap` where it took its suite's step cap (params.evaluation_cap over the played layouts' expert
steps, as steps/evaluate.py computed it), `failure` where it ended sooner; empty where it was
not played (N/A). A failure on the cap's own step reads `cap` here (the CSVs cannot tell it);
a world without failure cells that shows an unsuccessful episode ending before its cap is
refused, since the cap read back must then be wrong.

    python scripts/name_episodes.py RUN [RUN ...]        # RUN: . or runs/<name>
    python scripts/name_episodes.py --against REV RUN    # check: no byte but the two columns

A run's params are its overlay (params-<name>.yaml; params.yaml for `.`)."""

from __future__ import annotations

import argparse
import io
import subprocess
import sys
from pathlib import Path

import pandas as pd

from dtpe import params as params_module
from dtpe.analysis.stats import evaluation_caps
from dtpe.steps import episode_csv
from dtpe.world import catalog as worlds

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ("test", "seen", "grid", "context", "reach", "position")
"""results/eval/<sweep>/<model>.csv: the per-episode CSVs"""
HEADER = ",".join(["", *episode_csv.NAMED])
"""what a header gains (",world,ending")"""
SPLITS = ("test", "seen")
"""sweeps played at the training size to the test split's cap"""


def overlay(run: Path) -> Path:
    run = run.resolve()
    return ROOT / ("params.yaml" if run == ROOT else f"params-{run.name}.yaml")


def endings(rows: pd.DataFrame, cap: dict[int, int], can_fail: bool, path: Path) -> list[str]:
    out = []
    for r in rows.itertuples():
        if not r.applicable:
            out.append("")
            continue
        limit = cap[int(r.grid_size)]
        if r.steps > limit or (r.steps < limit and not r.success and not can_fail):
            raise ValueError(
                f"{path}: layout {r.layout_id} at {r.grid_size} took {r.steps} steps against "
                f"the cap {limit} read back, which its world cannot end there: not migrated"
            )
        out.append("success" if r.success else "cap" if r.steps == limit else "failure")
    return out


def named(text: str, world: str, ends: list[str]) -> str:
    lines = text.split("\n")
    if lines[-1] != "" or len(lines) - 2 != len(ends):
        raise ValueError("a CSV of one line a row, ending in a newline, was expected")
    head = [lines[0] + HEADER]
    body = [f"{line},{world},{end}" for line, end in zip(lines[1:-1], ends)]
    return "\n".join(head + body) + "\n"


def migrate(run: Path) -> int:
    p = params_module.load(overlay(run))
    world = p.env.world
    can_fail = worlds.get(world).ends.failure is not None
    done = 0
    # every model of a run plays the same test split: its cap is any model's
    test = pd.read_csv(next((run / "results/eval/test").glob("*.csv")))
    split_caps, suite_caps = evaluation_caps(p, test), {}
    for sweep in SWEEPS:
        for path in sorted((run / "results/eval" / sweep).glob("*.csv")):
            text = path.read_text()
            if text.split("\n")[0].endswith(HEADER):
                continue
            if path.name not in suite_caps:
                grid = pd.read_csv(run / "results/eval/grid" / path.name)
                suite_caps[path.name] = evaluation_caps(p, grid)
            cap = split_caps if sweep in SPLITS else suite_caps[path.name]
            rows = pd.read_csv(io.StringIO(text))
            ends = endings(rows, cap, can_fail, path)
            new = named(text, world, ends)
            assert unnamed(new) == text
            path.write_text(new)
            done += 1
    return done


def unnamed(text: str) -> str:
    """`text` less its last two columns."""
    return "".join(line.rsplit(",", 2)[0] + "\n" for line in text.splitlines())


def check(run: Path, rev: str) -> int:
    """Every per-episode CSV of `run` is its version at `rev` with the two columns added."""
    bad, seen = [], 0
    for sweep in SWEEPS:
        for path in sorted((run / "results/eval" / sweep).glob("*.csv")):
            rel = path.resolve().relative_to(ROOT)
            old = subprocess.run(
                ["git", "show", f"{rev}:{rel}"], cwd=ROOT, capture_output=True, text=True
            )
            if old.returncode != 0:
                continue  # new since rev
            seen += 1
            new = path.read_text()
            if not new.startswith(old.stdout.split("\n")[0] + HEADER + "\n") or (
                unnamed(new) != old.stdout
            ):
                bad.append(str(rel))
    for b in bad[:8]:
        print(f"differs beyond the two columns: {b}")
    print(f"{run}: {seen} CSVs checked against {rev}, {len(bad)} differ beyond the two columns")
    return len(bad)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--against", metavar="REV", help="check against git revision REV")
    args = parser.parse_args()
    if args.against:
        sys.exit(1 if sum(check(run, args.against) for run in args.runs) else 0)
    for run in args.runs:
        print(f"{run}: {migrate(run)} CSVs named")


if __name__ == "__main__":
    main()
