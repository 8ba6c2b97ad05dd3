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
from dtpe.world.maze import AGENT, DOOR, EMPTY, GOAL, KEY, WALL, Layouts
from dtpe.world.planner import UNREACHABLE, CostToGo

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
    kept, seen = [], set(exclude)
    while len(kept) < count:
        grids = _candidates(size, max(64, 2 * (count - len(kept))), rng, wall_density)
        start = np.stack(np.divmod((grids.reshape(len(grids), -1) == AGENT).argmax(1), size), 1)
        grids[grids == AGENT] = EMPTY
        batch = Layouts(grids, start, np.arange(len(grids)))
        steps = CostToGo(batch).steps(
            start, np.zeros(len(grids), dtype=bool), np.arange(len(grids))
        )
        for i in np.flatnonzero(steps < UNREACHABLE):
            code = fingerprint(grids[i], start[i])
            if code not in seen and len(kept) < count:
                seen.add(code)
                kept.append((grids[i], start[i]))
    grid = np.stack([g for g, _ in kept]) if kept else np.zeros((0, size, size), np.uint8)
    start = np.stack([s for _, s in kept]) if kept else np.zeros((0, 2), np.int64)
    return Layouts(grid, start.astype(np.int64), np.arange(count, dtype=np.int64))


def fingerprint(grid: np.ndarray, start: np.ndarray) -> bytes:
    """Identity of a layout: its grid and start cell, as bytes."""
    return grid.astype(np.uint8).tobytes() + np.asarray(start, dtype=np.int64).tobytes()
