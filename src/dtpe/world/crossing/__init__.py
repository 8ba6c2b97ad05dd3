"""MiniGrid's SimpleCrossing (world/base.py's interface): walls across the room, one opening in
each, the goal in the far corner; turn left, turn right, forward. Its rules restated over numpy
(rules.py) for the expert (planner.py) and the lockstep stepper (stepper.py); its layouts are
`CrossingEnv(size, num_crossings, Wall).reset(seed)`'s (layouts.py, ids their seeds) and policies
are evaluated in MiniGrid itself (minigrid_env.py). Both import MiniGrid, so they load only when
used.

Why this world: its size is a parameter and its optimal actions a breadth-first search finds,
like the two others; unlike them it has nothing to pick up or open, so what carries over to
larger grids is finding the openings along a longer path, with a heading to turn. LavaCrossing
is left out; its lava, which ends an episode, would be its failure cells (world/lockstep.py)."""

from __future__ import annotations

from dtpe.world.base import Words
from dtpe.world.crossing import picture, rules
from dtpe.world.crossing.planner import cost_to_go
from dtpe.world.crossing.stepper import BatchedCrossing, max_steps
from dtpe.world.minigrid_world import MiniGridWorld


class Crossing(MiniGridWorld, rules=rules):
    name = "crossing"
    minigrid = "SimpleCrossing"
    options = {"num_crossings": (1, 4)}
    """num_crossings: wall lines across the room, each with one opening (MiniGrid's; 3 in its
    S9N3 registration)"""
    layout_arrays = ("grid", "start")
    words = Words(layouts="SimpleCrossing layouts", milestone=None)
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    stepper = BatchedCrossing

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def minigrid_modules(self):
        from dtpe.world.crossing import (
            layouts,
            minigrid_env,
        )  # MiniGrid: loaded when drawn or played

        return layouts, minigrid_env

    def count(self, size: int, options: dict) -> int:
        return rules.count(self.check_size(size), options["num_crossings"])


WORLD = Crossing()
