"""SimpleCrossing layouts as MiniGrid draws them: `CrossingEnv(size=N, num_crossings=k,
obstacle_type=Wall).reset(seed=s)` for each seed, read into this world's codes
(world/minigrid_view.py).

Layouts are few at small sizes (52 distinct ones at 7 x 7 with 3 crossings, about 1,600 at
9 x 9) and drawn far from uniformly, so disjoint seeds do not make disjoint suites: `draw` leaves
out repeats and another suite's layouts by (grid, start) (world/minigrid_world.py's
MiniGridWorld)."""

from __future__ import annotations

import numpy as np
from minigrid.core.world_object import Wall
from minigrid.envs import CrossingEnv

from dtpe.world import minigrid_view
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
