"""The leaderboard, made from the committed runs, never by hand: a row per variant (RoPE's
scalings among them), a column group per test (params `leaderboard.tests`). In each group the
variant's standing in the test's exploratory run (analysis/standing.py: success at the trained
size and at the largest, the median horizon, how many of its models an encoding switched off
moves) and its verdicts in the test's confirmatory run (verdict_words.against, from that run's
decisions.csv), each with the run it comes from.

Outputs: leaderboard.csv (one row per test and variant), leaderboard.md (the compact table the
README shows, then one full table per test) and leaderboard.png (success at the largest size,
variants × tests)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dtpe import atomic, submitted
from dtpe.analysis import panels, standing, verdict_words
from dtpe.analysis.cells import grid_label, percent

COLUMNS = [
    "test",
    "world",
    *standing.COLUMNS,
    "uses_position",
    "verdicts",
    "marks",
    "run",
    "decided_by",
]
"""leaderboard.csv; uses_position: "no" where an encoding switched off moves none of the
variant's models, "yes" where it moves some, "" where the run did not switch any off"""


NEEDED = {
    "run": [
        "results/params.json",
        *(f"results/stats/{name}.csv" for name in standing.READS),
    ],
    "decided_by": ["results/stats/decisions.csv", "results/stats/methods.json"],
}
"""the files read of each test's runs"""


def build(tests: list[dict], root: Path, folder: str | None = None) -> pd.DataFrame:
    """Every test's rows, and under each the rows of the runs submitted to it from `folder`;
    each run's files are checked before any is read."""
    root = Path(root)
    entries = submitted.runs(root, folder) if folder else []
    needed = [(test["name"], key, test[key]) for test in tests for key in NEEDED if test[key]]
    needed += [(e["test"], key, e["run"]) for e in entries for key in NEEDED]
    for name, key, run in needed:
        for file in NEEDED[key]:
            if not (root / run / file).is_file():
                raise FileNotFoundError(
                    f"leaderboard test {name!r}: {root / run / file} missing ({key} {run!r}: its "
                    "stats step has not run at this version)"
                )
    frames = []
    for test in tests:
        frames.append(rows(test, root))
        frames += [
            rows({**test, "run": s["run"], "decided_by": s["run"]}, root, [s["variant"]])
            for s in entries
            if s["test"] == test["name"]
        ]
    return pd.concat(frames, ignore_index=True)[COLUMNS]


def rows(test: dict, root: Path, variants: list[str] | None = None) -> pd.DataFrame:
    """A test's rows: its exploratory run's variants (or `variants` alone, a submission's, with
    their own scalings) with their verdicts in its confirmatory run."""
    run = root / test["run"]
    params = json.loads((run / "results" / "params.json").read_text())
    frame = standing.rows(
        run / "results" / "stats",
        variants or params["study"]["variants"],
        variants[0] if variants else params["stats"]["reference"],
        params["data"]["train_size"],
        params["model"]["context"],
    )
    decided = (
        pd.read_csv(root / test["decided_by"] / "results" / "stats" / "decisions.csv")
        if test["decided_by"]
        else pd.DataFrame(columns=["a", "b"])
    )
    frame["verdicts"] = [
        "; ".join(verdict_words.against(r, v) for r in decided.itertuples() if v in (r.a, r.b))
        for v in frame.variant
    ]
    frame["marks"] = [
        " ".join(verdict_words.mark(r, v) for r in decided.itertuples() if v in (r.a, r.b))
        for v in frame.variant
    ]
    frame["uses_position"] = [uses(moved) for moved in frame.moved]
    return frame.assign(
        test=test["name"],
        world=params["env"]["world"],
        run=test["run"],
        decided_by=test["decided_by"] or "",
    )


TEXT = ["moved", "uses_position", "verdicts", "marks", "decided_by"]
"""leaderboard.csv's text columns, empty where nothing is said"""


def read(path: Path) -> pd.DataFrame:
    """leaderboard.csv as `build` made it."""
    return read_frame(pd.read_csv(path))


def read_frame(board: pd.DataFrame) -> pd.DataFrame:
    """`board` with its text columns' empty cells as "" (a CSV reads them as NaN)."""
    board = board.copy()
    board[TEXT] = board[TEXT].fillna("")
    return board


def uses(moved: str) -> str:
    """ "k 0/5, t 0/5" -> "no"; any model moved -> "yes"; not measured -> ""."""
    if not moved:
        return ""
    counts = [int(part.split()[1].split("/")[0]) for part in moved.split(", ")]
    return "yes" if any(counts) else "no"


def compact(board: pd.DataFrame) -> str:
    """The README's table: a row per variant, a column per test, each cell the success % at the
    largest size, * where switching an encoding off moves none of its models, and its verdicts'
    marks (verdict_words.MARKS)."""
    tests = list(dict.fromkeys(board.test))
    variants = list(dict.fromkeys(board.variant))
    header = {
        t: f"{t} ({grid_label(w, int(n))})"
        for t, w, n in board.drop_duplicates("test")[["test", "world", "largest_size"]].values
    }
    cells = {}
    for r in board.itertuples():
        text = "N/A" if pd.isna(r.largest_pct) else f"{r.largest_pct:.0f}"
        text += "*" if r.uses_position == "no" else ""
        cells[(r.variant, r.test)] = " ".join([text, *r.marks.split()]) if r.marks else text
    # unpadded: the README holds it, and padding a column to its longest cell triples its size
    rows = [["Variant", *(header[t] for t in tests)], [":--"] * (1 + len(tests))]
    rows += [[v, *(cells.get((v, t), "–") for t in tests)] for v in variants]
    return "\n".join("| " + " | ".join(row) + " |" for row in rows)


LEGEND = (
    "Success % at each test's largest size (the whole episode in the window where the test "
    "plays it), mean over seeds; *: switching its k or t encoding off moves none of its models "
    "there; the test's confirmatory verdicts: >rope above rope, <rope below, ≈rope within the "
    "margin, ?rope undecided, …rope open (a look to come); –: not run."
)


CAPTION = (
    "Generated by `dtpe leaderboard` from the runs' own statistics; exploratory standings are "
    "leads, the verdicts decisions (their sentences below the table)."
)


def verdicts(tests: list[dict], root: Path, folder: str | None = None) -> str:
    """Every decision of the tests' confirmatory runs and of the runs submitted to them, one
    line each, in verdict_words' sentence with the interval at the level its claim was tested
    at."""
    entries = submitted.runs(root, folder) if folder else []
    lines = []
    for test in tests:
        deciding = [test["decided_by"]] if test["decided_by"] else []
        deciding += [s["run"] for s in entries if s["test"] == test["name"]]
        for run in deciding:
            stats = Path(root) / run / "results" / "stats"
            methods = json.loads((stats / "methods.json").read_text())
            for row in pd.read_csv(stats / "decisions.csv").itertuples():
                said = verdict_words.sentence(row, methods)
                lines.append(f"- {test['name']} (`{run}`, on {row.endpoint}): {said}.")
    return "\n".join(lines)


def markdown(board: pd.DataFrame, decided: str) -> str:
    parts = [CAPTION, LEGEND, compact(board), "The verdicts:\n\n" + decided]
    seen = set()
    # a test's own runs' rows first, then each run submitted to it (build's order), each its
    # own table: its sizes, seeds and source are its run's
    for (test, _), rows_ in board.groupby(["test", "run"], sort=False):
        label = lambda n: grid_label(rows_.world.iloc[0], int(n))  # noqa: E731
        shown = pd.DataFrame(
            {
                "Variant": rows_.variant,
                f"At {label(rows_.trained_size.iloc[0])}": [
                    percent(*x)
                    for x in rows_[["trained_pct", "trained_low_pct", "trained_high_pct"]].values
                ],
                f"At {label(rows_.largest_size.iloc[0])}": [
                    percent(*x)
                    for x in rows_[["largest_pct", "largest_low_pct", "largest_high_pct"]].values
                ],
                "Horizon (median)": ["—" if pd.isna(h) else label(h) for h in rows_.horizon],
                "Moved by k / t off": [m or "—" for m in rows_.moved],
                "Verdicts": [v or "—" for v in rows_.verdicts],
            }
        )
        source = rows_.run.iloc[0] + (
            f", verdicts from {rows_.decided_by.iloc[0]}" if rows_.decided_by.iloc[0] else ""
        )
        heading = f"{test}: submitted" if test in seen else test
        seen.add(test)
        parts.append(
            f"### {heading}\n\nFrom {source}; context {int(rows_.context.iloc[0])}.\n\n"
            + shown.to_markdown(index=False, disable_numparse=True)
        )
    return "\n\n".join(parts) + "\n"


def figure(board: pd.DataFrame) -> Figure:
    """Success at the largest size, variants (rows) × tests (columns); blank: not run or N/A."""
    tests = list(dict.fromkeys(board.test))
    variants = list(dict.fromkeys(board.variant))
    grid = np.full((len(variants), len(tests)), np.nan)
    for r in board.itertuples():
        grid[variants.index(r.variant), tests.index(r.test)] = r.largest_pct
    fig = Figure(figsize=(2.0 + 1.6 * len(tests), 1.0 + 0.3 * len(variants)), layout="constrained")
    ax = fig.subplots()
    image = ax.imshow(grid, cmap="viridis", vmin=0, vmax=100, aspect="auto")
    for (i, j), value in np.ndenumerate(grid):
        if not np.isnan(value):
            ax.text(
                j,
                i,
                f"{value:.0f}",
                ha="center",
                va="center",
                fontsize=7,
                color="black" if value > 60 else "white",
            )
    ax.set_xticks(range(len(tests)), tests, rotation=20, ha="right")
    ax.set_yticks(range(len(variants)), variants)
    fig.colorbar(image, ax=ax, label="success at the largest size (%)")
    fig.suptitle("The leaderboard: success far out, per test")
    return fig


def make(params, root: Path, out: Path) -> list[Path]:
    """The leaderboard of params' tests and the runs submitted to them, built whole from the
    runs under `root` before anything is written to `out`."""
    tests, folder = params.leaderboard.tests, params.leaderboard.submissions
    board = build(tests, root, folder)
    return write(board, verdicts(tests, root, folder), out)


def write(board: pd.DataFrame, decided: str, out: Path) -> list[Path]:
    """leaderboard.csv, .md (`decided`: the verdicts' lines) and .png in `out`."""
    paths = [out / f"leaderboard.{ext}" for ext in ("csv", "md", "png")]
    with atomic.output(paths[0]) as tmp:
        board.to_csv(tmp, index=False)
    atomic.write_text(paths[1], markdown(board, decided))
    with atomic.output(paths[2]) as tmp:
        figure(board).savefig(tmp, format="png", dpi=panels.DPI, metadata={"Software": None})
    return paths
