"""SimpleCrossing layouts as MiniGrid draws them: `CrossingEnv(size=N, num_crossings=k,
obstacle_type=Wall).reset(seed=s)` for each seed, read into this world's codes.

Layouts are few at small sizes (52 distinct ones at 7 x 7 with 3 crossings, about 1,600 at
9 x 9) and drawn far from uniformly, so disjoint seeds do not make disjoint suites: `draw` leaves
out repeats and another suite's layouts by (grid, start)."""

from __future__ import annotations

import numpy as np
from minigrid.core.constants import OBJECT_TO_IDX
from minigrid.core.world_object import Wall
from minigrid.envs import CrossingEnv

from dtpe.world import grids
from dtpe.world.crossing.rules import AGENT, EMPTY, GOAL, WALL, Layouts, check_size

DRAWS_PER_LAYOUT = 100
"""seeds drawn per layout wanted before a suite settles for fewer (52 layouts in all at 7 x 7)"""
_NOT_CROSSING = 255
_FROM_MINIGRID = np.full(len(OBJECT_TO_IDX), _NOT_CROSSING, dtype=np.uint8)
"""our code of each MiniGrid object of a SimpleCrossing grid"""
for _object, _code in [("empty", EMPTY), ("wall", WALL), ("goal", GOAL)]:
    _FROM_MINIGRID[OBJECT_TO_IDX[_object]] = _code


def make_env(size: int, num_crossings: int) -> CrossingEnv:
    return CrossingEnv(size=size, num_crossings=num_crossings, obstacle_type=Wall)


def observe(env: CrossingEnv) -> np.ndarray:
    """The full observation (N, N) uint8 of a reset MiniGrid CrossingEnv in this world's codes."""
    env = env.unwrapped
    obs = _FROM_MINIGRID[env.grid.encode()[..., 0]].T  # encode: (x, y, [object, colour, state])
    if (obs == _NOT_CROSSING).any():
        raise ValueError("env holds objects other than SimpleCrossing's (walls and the goal)")
    x, y = env.agent_pos
    obs[y, x] = AGENT + env.agent_dir
    return obs


def from_seeds(size, seeds, num_crossings: int) -> Layouts:
    """The layouts `reset(seed=s)` draws for each of `seeds`."""
    size = check_size(size)
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or not (np.issubdtype(seeds.dtype, np.integer) or seeds.size == 0):
        raise ValueError(f"seeds must be a 1-d sequence of integers, got {seeds!r}")
    if (seeds < 0).any():
        raise ValueError(f"seeds must be non-negative (Gymnasium's rule), got {seeds.min()}")
    env = make_env(size, num_crossings)
    grid = np.empty((len(seeds), size, size), dtype=np.uint8)
    start = np.empty((len(seeds), 2), dtype=np.int64)
    for i, seed in enumerate(seeds):
        env.reset(seed=int(seed))
        if env.agent_dir != 0:
            raise ValueError(f"seed {seed}: the agent starts facing {env.agent_dir}, not right")
        grid[i] = observe(env)
        start[i] = env.agent_pos[::-1]
        grid[i][tuple(start[i])] = EMPTY  # the agent starts on an empty cell
    return Layouts(grid, start, seeds.astype(np.int64))


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout: grid and start, as bytes."""
    return grids.fingerprints(layouts, ("grid", "start"))


def draw(
    size, count: int, rng: np.random.Generator, num_crossings: int, exclude=frozenset(), whole=True
) -> Layouts:
    """`count` distinct layouts of side `size` none of which is in `exclude`, from seeds drawn by
    `rng`; with `whole` False, fewer if DRAWS_PER_LAYOUT * count seeds do not hold them (a suite
    of a small size), else a ValueError naming the shortfall."""
    return grids.draw_by_seed(
        lambda seeds: from_seeds(size, seeds, num_crossings),
        count,
        rng,
        fingerprints,
        exclude,
        whole,
        DRAWS_PER_LAYOUT,
        f"SimpleCrossing {size}x{size}",
    )
