"""DoorKey layouts as MiniGrid draws them: `DoorKeyEnv(size=N).reset(seed=s)` for each seed, read
into this world's codes (world/minigrid_view.py); and the full observation of a live MiniGrid env
in the same codes.

Layouts are few and drawn far from uniformly (48 distinct ones at 5 x 5, 20,400 at 8 x 8, and
15,000 8 x 8 seeds give about 8,600 of them), so disjoint seeds do not make disjoint suites:
the world's `draw` (world/minigrid_world.py's MiniGridWorld) leaves out repeats and another
suite's layouts by (grid, start, heading).
"""

from __future__ import annotations

import numpy as np
from minigrid.envs import DoorKeyEnv

from dtpe.world import minigrid_view
from dtpe.world.doorkey.rules import VOCABULARY, Layouts, check_size

READER = minigrid_view.GridReader(VOCABULARY, "DoorKey")
"""MiniGrid's objects in this world's codes: empty, wall, goal, key, the door locked, closed or
open, the agent by heading and whether it carries the key"""


def observe(env: DoorKeyEnv) -> np.ndarray:
    """The full observation (N, N) uint8 of a MiniGrid DoorKey env in this world's codes."""
    return READER.observe(env)


def from_seeds(size, seeds) -> Layouts:
    """The layouts `DoorKeyEnv(size=size).reset(seed=s)` draws for each of `seeds`."""
    return minigrid_view.from_seeds(DoorKeyEnv(size=check_size(size)), seeds, READER, Layouts)
