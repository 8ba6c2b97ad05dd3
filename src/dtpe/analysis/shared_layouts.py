"""Layouts a confirmatory run shares with the other runs of its world, counted by content: a
layout's identity is its arrays (the world's fingerprints: grid, start and whatever else tells
two apart), never its id, which each run's generator numbers afresh. Counted twice: by full
identity, and by grid alone (the start and heading ignored), since a model that trained on a
grid has seen most of what any start on it shows.

For each pair (confirmatory run, other run of the same world): the training layouts (the
train split's distinct layouts) against the other's, and each suite size's played layouts
against the other's played layouts of that size."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from dtpe.steps import dataset
from dtpe.world import catalog as worlds
from dtpe.world import grids

COLUMNS = ["run", "other", "part", "grid_size", "layouts", "shared", "shared_grid"]
"""shared_layouts.csv: part `train` (grid_size empty) or `suite`; layouts: the run's distinct
layouts there; shared: how many of them the other run holds there too, by full identity;
shared_grid: by grid alone"""


def identities(run: Path) -> tuple[str, dict]:
    """(world, {(part, grid size or None): {full identity: grid identity}}) of a run's training
    split and of its suites as its evaluation plays them (the first evaluate.layouts_per_suite,
    as results/params.json, its validated params, has it)."""
    data_dir = Path(run) / "data"
    name = dataset.recorded_world(data_dir)
    world = worlds.get(name)
    played = json.loads((Path(run) / "results" / "params.json").read_text())["evaluate"].get(
        "layouts_per_suite"
    )
    files = {("train", None): data_dir / "train.safetensors"}
    for path in sorted((data_dir / "suites").glob("N*.safetensors")):
        files["suite", int(path.stem[1:])] = path
    out = {}
    for key, path in files.items():
        layouts = world.layouts(dataset.load(path))
        if key[0] == "suite" and played is not None and played < len(layouts):
            layouts = layouts.subset(slice(0, played))
        full = world.fingerprints(layouts)
        out[key] = dict(zip(full, grids.fingerprints(layouts, ("grid",))))
    return name, out


def count(runs: dict[str, Path], confirmatory: list[str]) -> pd.DataFrame:
    """shared_layouts.csv's rows: each run labelled in `confirmatory` against every other run of
    `runs` (label -> run folder, holding data/ and results/params.json) of the same world."""
    read = {label: identities(folder) for label, folder in runs.items()}
    rows = []
    for run in confirmatory:
        world, mine = read[run]
        for other, (their_world, theirs) in read.items():
            if other == run or their_world != world:
                continue
            for (part, size), layouts in mine.items():
                there = theirs.get((part, size), {})
                grids_there = set(there.values())
                rows.append(
                    {
                        "run": run,
                        "other": other,
                        "part": part,
                        "grid_size": size,
                        "layouts": len(layouts),
                        "shared": sum(f in there for f in layouts),
                        "shared_grid": sum(g in grids_there for g in layouts.values()),
                    }
                )
    return pd.DataFrame(rows, columns=COLUMNS).astype({"grid_size": "Int64"})


THIS_RUN = "this run"
"""the label a run's own stats give itself in its shared_layouts.csv"""


def against(run: Path, others: list[str]) -> pd.DataFrame:
    """shared_layouts.csv of confirmatory run folder `run` against each folder of `others`
    (params verdict.shared_with, from `run`); a ValueError naming the knob where one is missing
    or holds another world's run. No rows where `others` is empty (a run that names none)."""
    if not others:
        return pd.DataFrame(columns=COLUMNS)
    world = dataset.recorded_world(Path(run) / "data")
    folders = {THIS_RUN: Path(run)}
    for other in others:
        folder = Path(run) / other
        needed = [folder / "data" / "summary.json", folder / "results" / "params.json"]
        missing = [str(p) for p in needed if not p.is_file()]
        if missing:
            raise ValueError(f"verdict.shared_with: {other} is no run's folder ({missing} missing)")
        theirs = dataset.recorded_world(folder / "data")
        if theirs != world:
            raise ValueError(f"verdict.shared_with: {other} is a run of {theirs}, not of {world}")
        folders[other] = folder
    return count(folders, [THIS_RUN])


def summary(shared: pd.DataFrame, run: str, grids_: list[int]) -> str:
    """One verdict's cell: the training layouts and the endpoint's suite layouts (`grids_`)
    that the other runs of its world share, full identity then grid alone in brackets; runs
    sharing the same counts named together, runs sharing none left out."""
    mine = shared[shared.run == run]
    by_counts: dict[str, list[str]] = {}
    for other, rows in mine.groupby("other", sort=False):
        if not rows.shared_grid.sum():
            continue
        train = rows[rows.part == "train"]
        suites = rows[(rows.part == "suite") & rows.grid_size.isin(grids_)]
        counts = (
            f"train {train.shared.sum()}/{train.layouts.sum()} ({train.shared_grid.sum()}), "
            f"endpoint {suites.shared.sum()}/{suites.layouts.sum()} ({suites.shared_grid.sum()})"
        )
        by_counts.setdefault(counts, []).append(other)
    return "; ".join(f"{', '.join(o)}: {c}" for c, o in by_counts.items()) or "none"
