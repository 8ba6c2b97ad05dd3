"""MiniGrid's SimpleCrossing (world/base.py's interface): walls across the room, one opening in
each, the goal in the far corner; turn left, turn right, forward. Its rules restated over numpy
(rules.py) for the expert (planner.py) and the lockstep stepper (stepper.py); its layouts are
`CrossingEnv(size, num_crossings, Wall).reset(seed)`'s (layouts.py, ids their seeds) and policies
are evaluated in MiniGrid itself (minigrid_env.py). Both import MiniGrid, so they load only when
used.

Why this world: its size is a parameter and its optimal actions a breadth-first search finds,
like the two others; unlike them it has nothing to pick up or open, so what carries over to
larger grids is finding the openings along a longer path, with a heading to turn. LavaCrossing
is left out: its lava ends an episode, which the study's success-or-cap episodes do not model."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words, World
from dtpe.world.crossing import picture, rules
from dtpe.world.crossing.planner import cost_to_go
from dtpe.world.crossing.stepper import BatchedCrossing, max_steps


class Crossing(World):
    name = "crossing"
    vocabulary = rules.VOCABULARY
    min_size = rules.MIN_SIZE
    options = {"num_crossings": (1, 4)}
    """num_crossings: wall lines across the room, each with one opening (MiniGrid's; 3 in its
    S9N3 registration)"""
    layout_arrays = ("grid", "start")
    words = Words(layouts="SimpleCrossing layouts", milestone=None)
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    initial_state = staticmethod(rules.initial_state)
    stepper = BatchedCrossing

    def check_size(self, size) -> int:
        return rules.check_size(size)

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        from dtpe.world.crossing import layouts  # imports MiniGrid and pygame

        return layouts.draw(size, count, rng, options["num_crossings"], exclude, whole)

    def layouts(self, arrays: dict):
        return rules.Layouts(arrays["grid"], arrays["start"], arrays["layout_id"])

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, np.zeros(len(state.pos), dtype=bool)

    def ground(self, lay, state) -> np.ndarray:
        return lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]

    def heading(self, state) -> np.ndarray:
        return state.heading

    def evaluation_env(self, lay, env):
        from dtpe.world.crossing.minigrid_env import minigrid_batch  # imports MiniGrid and pygame

        return minigrid_batch(lay, env.options["num_crossings"], env.step_reward, env.goal_reward)


WORLD = Crossing()
