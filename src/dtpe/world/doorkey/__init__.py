"""MiniGrid's DoorKey (world/base.py's interface): its rules restated over numpy (rules.py) for
the expert (planner.py) and the lockstep stepper (stepper.py); its layouts are
`DoorKeyEnv(size).reset(seed)`'s (layouts.py, ids their seeds) and policies are evaluated in
MiniGrid itself (minigrid_env.py). Both import MiniGrid, so they load only when used."""

from __future__ import annotations

import numpy as np

from dtpe.world import grids
from dtpe.world.base import Words, World
from dtpe.world.doorkey import picture, rules
from dtpe.world.doorkey.planner import cost_to_go
from dtpe.world.doorkey.stepper import BatchedDoorKey, max_steps

MIN_SIZE = 5
"""DoorKeyEnv needs a wall column with a room of at least one column on each side"""


class DoorKey(World):
    name = "doorkey"
    vocabulary = rules.VOCABULARY
    min_size = MIN_SIZE
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
    initial_state = staticmethod(rules.initial_state)
    stepper = BatchedDoorKey

    def check_size(self, size) -> int:
        return grids.check_size(size, MIN_SIZE, "DoorKey's")

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        from dtpe.world.doorkey import layouts  # imports MiniGrid and pygame

        return layouts.draw(self.check_size(size), count, rng, exclude, whole)

    def layouts(self, arrays: dict):
        return rules.Layouts(
            arrays["grid"], arrays["start"], arrays["heading"], arrays["layout_id"]
        )

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, state.carrying

    def ground(self, lay, state) -> np.ndarray:
        # the agent stands on empty cells, the goal, the open door or where the key lay
        under = lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]
        under = np.where((state.pos == lay.door).all(1), state.door, under)
        return np.where(under == rules.KEY, rules.EMPTY, under)

    def heading(self, state) -> np.ndarray:
        return state.heading

    def evaluation_env(self, lay, env):
        from dtpe.world.doorkey.minigrid_env import minigrid_batch  # imports MiniGrid and pygame

        return minigrid_batch(lay, env.step_reward, env.goal_reward)


WORLD = DoorKey()
