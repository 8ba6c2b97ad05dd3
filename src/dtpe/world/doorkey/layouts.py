"""DoorKey layouts as MiniGrid draws them: `DoorKeyEnv(size=N).reset(seed=s)` for each seed, read
into this world's codes; and the full observation of a live MiniGrid env in the same codes.

Layouts are few and drawn far from uniformly (48 distinct ones at 5 x 5, 20,400 at 8 x 8, and
15,000 8 x 8 seeds give about 8,600 of them), so disjoint seeds do not make disjoint suites:
`draw` leaves out repeats and another suite's layouts by (grid, start, heading).
"""

from __future__ import annotations

import numpy as np
from minigrid.core.constants import OBJECT_TO_IDX, STATE_TO_IDX
from minigrid.envs import DoorKeyEnv

from dtpe.world import grids
from dtpe.world.doorkey import MIN_SIZE
from dtpe.world.doorkey.rules import (
    AGENT,
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    EMPTY,
    GOAL,
    KEY,
    WALL,
    Layouts,
)

_NOT_DOORKEY = 255
_FROM_MINIGRID = np.full((len(OBJECT_TO_IDX), len(STATE_TO_IDX)), _NOT_DOORKEY, dtype=np.uint8)
"""our code of each MiniGrid (object, state) pair of a DoorKey grid"""
for _object, _state, _code in [
    ("empty", "open", EMPTY),  # `Grid.encode` writes state 0 for cells without state
    ("wall", "open", WALL),
    ("goal", "open", GOAL),
    ("key", "open", KEY),
    ("door", "locked", DOOR_LOCKED),
    ("door", "closed", DOOR_CLOSED),
    ("door", "open", DOOR_OPEN),
]:
    _FROM_MINIGRID[OBJECT_TO_IDX[_object], STATE_TO_IDX[_state]] = _code


def observe(env: DoorKeyEnv) -> np.ndarray:
    """The full observation (N, N) uint8 of a reset MiniGrid DoorKey env in this world's codes."""
    env = env.unwrapped
    encoded = env.grid.encode()  # (x, y, [object, colour, state])
    obs = _FROM_MINIGRID[encoded[..., 0], encoded[..., 2]].T
    if (obs == _NOT_DOORKEY).any():
        raise ValueError("env holds objects other than DoorKey's (wall, goal, key, door)")
    x, y = env.agent_pos
    obs[y, x] = AGENT + env.agent_dir + 4 * (env.carrying is not None)
    return obs


def from_seeds(size, seeds) -> Layouts:
    """The layouts `DoorKeyEnv(size=size).reset(seed=s)` draws for each of `seeds`."""
    size = grids.check_size(size, MIN_SIZE, "DoorKey's")
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or not (np.issubdtype(seeds.dtype, np.integer) or seeds.size == 0):
        raise ValueError(f"seeds must be a 1-d sequence of integers, got {seeds!r}")
    if (seeds < 0).any():
        raise ValueError(f"seeds must be non-negative (Gymnasium's rule), got {seeds.min()}")
    env = DoorKeyEnv(size=size)
    grid = np.empty((len(seeds), size, size), dtype=np.uint8)
    start = np.empty((len(seeds), 2), dtype=np.int64)
    heading = np.empty(len(seeds), dtype=np.int64)
    for i, seed in enumerate(seeds):
        env.reset(seed=int(seed))
        grid[i] = observe(env)
        start[i] = env.agent_pos[::-1]
        heading[i] = env.agent_dir
        grid[i][tuple(start[i])] = EMPTY  # the agent starts on an empty cell
    return Layouts(grid, start, heading, seeds.astype(np.int64))


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout: grid, start and heading, as bytes."""
    return grids.fingerprints(layouts, ("grid", "start", "heading"))


DRAWS_PER_LAYOUT = 100
"""seeds drawn per layout wanted before a suite settles for fewer: MiniGrid's generator has few
layouts at small sizes (48 at 5 x 5)"""


def draw(size, count: int, rng: np.random.Generator, exclude=frozenset(), whole=True) -> Layouts:
    """`count` distinct layouts of side `size` none of which is in `exclude`, from seeds drawn by
    `rng`; with `whole` False, fewer if DRAWS_PER_LAYOUT * count seeds do not hold them (a suite
    of a small size), else a ValueError naming the shortfall."""
    return grids.draw_by_seed(
        lambda seeds: from_seeds(size, seeds),
        count,
        rng,
        fingerprints,
        exclude,
        whole,
        DRAWS_PER_LAYOUT,
        f"DoorKey {size}x{size}",
    )
