"""SimpleCrossing layouts as MiniGrid draws them: `CrossingEnv(size=N, num_crossings=k,
obstacle_type=Wall).reset(seed=s)` for each seed, read into this world's codes
(world/minigrid_view.py).

Layouts are few at small sizes (52 distinct ones at 7 x 7 with 3 crossings, about 1,600 at
9 x 9) and drawn far from uniformly, so disjoint seeds do not make disjoint suites: `draw` leaves
out repeats and another suite's layouts by (grid, start)."""

from __future__ import annotations

import numpy as np
from minigrid.core.world_object import Wall
from minigrid.envs import CrossingEnv

from dtpe.world import grids, minigrid_view
from dtpe.world.crossing.rules import VOCABULARY, Layouts, check_size

READER = minigrid_view.GridReader(VOCABULARY, "SimpleCrossing")
"""MiniGrid's objects in this world's codes: empty, wall, goal, the agent by heading"""


def make_env(size: int, num_crossings: int, env_class=CrossingEnv) -> CrossingEnv:
    return env_class(size=size, num_crossings=num_crossings, obstacle_type=Wall)


def observe(env: CrossingEnv) -> np.ndarray:
    """The full observation (N, N) uint8 of a MiniGrid CrossingEnv in this world's codes."""
    return READER.observe(env)


def from_seeds(size, seeds, num_crossings: int) -> Layouts:
    """The layouts `reset(seed=s)` draws for each of `seeds` (the agent starts facing right)."""
    return minigrid_view.from_seeds(
        make_env(check_size(size), num_crossings), seeds, READER, Layouts
    )


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout: grid and start, as bytes."""
    return grids.fingerprints(layouts, ("grid", "start"))


def draw(
    size, count: int, rng: np.random.Generator, num_crossings: int, exclude=frozenset(), whole=True
) -> Layouts:
    """`count` distinct layouts of side `size` none of which is in `exclude`, from seeds drawn by
    `rng`; with `whole` False, fewer if the seeds do not hold them (a suite of a small size), else
    a ValueError naming the size and how many layouts it holds (minigrid_view.draw)."""
    return minigrid_view.draw(
        lambda seeds: from_seeds(size, seeds, num_crossings),
        count,
        rng,
        fingerprints,
        exclude,
        whole,
        f"SimpleCrossing {size}x{size}",
    )
