"""MiniGrid's DoorKey (world/base.py's interface): its rules restated over numpy (rules.py) for
the expert (planner.py) and the lockstep stepper (stepper.py); its layouts are
`DoorKeyEnv(size).reset(seed)`'s (layouts.py, ids their seeds) and policies are evaluated in
MiniGrid itself (minigrid_env.py). Both import MiniGrid, so they load only when used."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words
from dtpe.world.doorkey import picture, rules
from dtpe.world.doorkey.planner import cost_to_go
from dtpe.world.doorkey.stepper import BatchedDoorKey, max_steps
from dtpe.world.minigrid_world import MiniGridWorld


class DoorKey(MiniGridWorld, rules=rules):
    name = "doorkey"
    minigrid = "DoorKey"
    flag = "carrying"
    options = {}
    layout_arrays = ("grid", "start", "heading")
    chunk = 2000
    """the planner holds 24 N^2 states of each layout"""
    words = Words(
        layouts="DoorKey layouts",
        milestone=("holds the key", "has not got the key"),
    )
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    stepper = BatchedDoorKey

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def minigrid_modules(self):
        from dtpe.world.doorkey import (
            layouts,
            minigrid_env,
        )  # MiniGrid: loaded when drawn or played

        return layouts, minigrid_env

    def count(self, size: int, options: dict) -> int:
        # DoorKeyEnv: a wall column s in [2, N-3], the door on one of its N-3 inner rows, then
        # in the left room's A = (s-1)(N-2) cells the agent (four headings) and the key apart
        n = self.check_size(size)
        rooms = [(s - 1) * (n - 2) for s in range(2, n - 2)]
        return 4 * (n - 3) * sum(a * (a - 1) for a in rooms)

    def ground(self, lay, state) -> np.ndarray:
        # the agent stands on empty cells, the goal, the open door or where the key lay
        under = lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]
        under = np.where((state.pos == lay.door).all(1), state.door, under)
        return np.where(under == rules.KEY, rules.EMPTY, under)


WORLD = DoorKey()
