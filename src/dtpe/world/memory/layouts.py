"""Memory layouts as MiniGrid draws them: `MemoryEnv(size=N, random_length=True).reset(seed=s)`
for each seed, read into this world's codes, the success cell as GOAL.

Layouts are few (16 at 7 x 7, 60 at 9 x 9, 120 at 11 x 11, 196 at 13 x 13, 288 at 15 x 15, 396
at 17 x 17: 4 (hallway_end - 3) ... summed over the hallway's ends, times the cue and the order
of the two objects: the world's `count`) and drawn far from uniformly, so the world's `draw`
(world/minigrid_world.py's MiniGridWorld) leaves out repeats and another suite's layouts by
(grid, start)."""

from __future__ import annotations

import numpy as np
from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX
from minigrid.envs import MemoryEnv

from dtpe.world import minigrid_view
from dtpe.world.memory.rules import BALL, EMPTY, GOAL, KEY, WALL, Layouts, check_size

_GRID = {
    (OBJECT_TO_IDX["empty"], 0): EMPTY,
    (OBJECT_TO_IDX["wall"], COLOR_TO_IDX["grey"]): WALL,
    (OBJECT_TO_IDX["key"], COLOR_TO_IDX["green"]): KEY,
    (OBJECT_TO_IDX["ball"], COLOR_TO_IDX["green"]): BALL,
}


class Reader:
    """A MemoryEnv's full grid in this world's codes (world/minigrid_view.from_seeds reads it)."""

    @staticmethod
    def still(env) -> np.ndarray:
        """The grid (N, N) uint8 without the agent, the success cell as GOAL; a ValueError where
        it holds objects other than Memory's."""
        env = env.unwrapped
        encoded = env.grid.encode()  # (x, y, [object, colour, state])
        n = env.width
        grid = np.empty((n, n), dtype=np.uint8)
        for x in range(n):
            for y in range(n):
                thing = (int(encoded[x, y, 0]), int(encoded[x, y, 1]))
                if thing not in _GRID:
                    raise ValueError("env holds objects other than Memory's")
                grid[y, x] = _GRID[thing]
        x, y = env.success_pos
        grid[y, x] = GOAL
        return grid


def make_env(size: int) -> MemoryEnv:
    return MemoryEnv(size=size, random_length=True)


def from_seeds(size, seeds) -> Layouts:
    """The layouts `reset(seed=s)` draws for each of `seeds` (the agent starts facing right)."""
    return minigrid_view.from_seeds(make_env(check_size(size)), seeds, Reader, Layouts)
