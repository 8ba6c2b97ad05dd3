"""The per-episode CSVs that the evaluation steps write (test, grid, context, seen, reach,
position): one row an episode, each naming its world and how it ended, so that a step reading
them refuses another world's results instead of telling them in its own words."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dtpe import atomic

ENDINGS = ("success", "failure", "cap")
"""how an episode ends: on its world's success cells, on its failure cells (Ends), or cut at
its step cap having reached neither"""
NAMED = ["world", "ending"]
"""every such CSV's last columns (the CSVs written before them gained them last:
scripts/name_episodes.py)"""


def ending(success: np.ndarray, failure: np.ndarray) -> np.ndarray:
    """(B,) ENDINGS' words of B finished episodes."""
    return np.where(success, "success", np.where(failure, "failure", "cap"))


def write(rows: pd.DataFrame, world: str, path) -> None:
    """`rows` (with `ending`; N/A rows have none) to `path`, `world` named in every row."""
    columns = [c for c in rows.columns if c not in NAMED] + NAMED
    with atomic.output(path) as tmp:
        rows.assign(world=world)[columns].to_csv(tmp, index=False)


def read(paths, world: str, columns=None) -> pd.DataFrame:
    """The rows of every CSV of `paths` (of those of `columns` it has, or all), refused where one
    names no world or another than `world` (params' env.world)."""
    wanted = None if columns is None else (lambda c: c in columns or c == "world")
    frames = []
    for path in paths:
        rows = pd.read_csv(path, usecols=wanted)
        if "world" not in rows:
            raise ValueError(
                f"{path}: its episodes name no world (written before the `world` and `ending` "
                f"columns): add them with scripts/name_episodes.py"
            )
        other = sorted(set(rows.world.dropna()) - {world})
        if other:
            raise ValueError(
                f"{path}: episodes of the world {', '.join(other)}, but params' env.world is "
                f"{world}: these are another world's results"
            )
        frames.append(rows)
    return pd.concat(frames, ignore_index=True)
