"""The layout family: one seeded generator for every grid size N >= MIN_SIZE.

A wall line splits the grid into two rooms joined by one door. The agent and the key lie in
the first room, the goal in the second, so the goal cannot be reached without the door and
the door cannot be passed without the key: every layout forces key -> door -> goal. Interior
walls fall at random (`wall_density`) except on the door's two neighbours; each layout is then
turned by one of the 8 symmetries of the square, and kept only if BFS solves it.
"""

from __future__ import annotations

import numpy as np

from dtpe.world import grids
from dtpe.world.maze.planner import cost_to_go
from dtpe.world.maze.rules import AGENT, DOOR, EMPTY, GOAL, KEY, WALL, Layouts, State
from dtpe.world.search import UNREACHABLE

# Each room needs two columns so that agent and key both fit beside a cleared door neighbour.
MIN_SIZE = 5


def check_size(size) -> int:
    return grids.check_size(size, MIN_SIZE)


def _pick(free: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random True cell per grid of `free` (B, N, N), as (B, 2); each grid needs
    one."""
    scores = np.where(free, rng.random(free.shape), -1.0).reshape(len(free), -1)
    return np.stack(np.divmod(scores.argmax(1), free.shape[-1]), 1)


def _candidates(size: int, count: int, rng: np.random.Generator, wall_density: float) -> np.ndarray:
    """`count` candidate grids (count, N, N) with the agent drawn in (code AGENT)."""
    n, rows = size, np.arange(count)
    wall_col = rng.integers(2, n - 2, count)  # both rooms at least two columns wide
    door_row = rng.integers(0, n, count)
    col = np.arange(n)[None, None, :]
    grid = np.where(rng.random((count, n, n)) < wall_density, WALL, EMPTY).astype(np.uint8)
    grid[col.repeat(n, 1).repeat(count, 0) == wall_col[:, None, None]] = WALL
    grid[rows, door_row, wall_col] = DOOR
    grid[rows, door_row, wall_col - 1] = EMPTY
    grid[rows, door_row, wall_col + 1] = EMPTY
    left = (col < wall_col[:, None, None]) & (grid == EMPTY)
    right = (col > wall_col[:, None, None]) & (grid == EMPTY)
    for code, room in ((GOAL, right), (AGENT, left), (KEY, left)):
        cell = _pick(room, rng)
        grid[rows, cell[:, 0], cell[:, 1]] = code
        room[rows, cell[:, 0], cell[:, 1]] = False  # door neighbours keep each room non-empty
    symmetry = rng.integers(0, 8, count)
    for s in range(8):
        pick = symmetry == s
        turned = np.rot90(grid[pick], s % 4, axes=(1, 2))
        grid[pick] = turned[:, :, ::-1] if s >= 4 else turned
    return grid


def generate(
    size, count: int, rng: np.random.Generator, wall_density: float, exclude=frozenset()
) -> Layouts:
    """`count` solvable layouts of side `size`, none of whose grids (as bytes) is in `exclude`
    or repeated. Layout ids are 0..count-1."""
    size = check_size(size)
    if count < 0:
        raise ValueError(f"layout count must be >= 0, got {count}")

    def solvable(n: int) -> Layouts:
        drawn = _candidates(size, n, rng, wall_density)
        start = np.stack(np.divmod((drawn.reshape(n, -1) == AGENT).argmax(1), size), 1)
        drawn[drawn == AGENT] = EMPTY
        batch = Layouts(drawn, start, np.arange(n))
        steps = cost_to_go(batch).steps(State(start, np.zeros(n, dtype=bool)), np.arange(n))
        return batch.subset(np.flatnonzero(steps < UNREACHABLE))

    parts = grids.draw_distinct(solvable, count, fingerprints, exclude)
    if not parts:
        empty = np.zeros(0, np.int64)
        return Layouts(np.zeros((0, size, size), np.uint8), np.zeros((0, 2), np.int64), empty)
    kept = Layouts.join(parts)
    return Layouts(kept.grid, kept.start.astype(np.int64), np.arange(count, dtype=np.int64))


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout: its grid and start cell, as bytes."""
    return grids.fingerprints(layouts, ("grid", "start"))
