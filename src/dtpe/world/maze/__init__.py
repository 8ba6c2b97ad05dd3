"""The Key-Door maze, the study's world (world/base.py's interface): two rooms joined by a locked
door, the key in the agent's room, the goal in the other; four moves. Its rules (rules.py), its
layout family (layouts.py), its expert (planner.py), its Gymnasium env (env.py) and its colours
(picture.py)."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words, World
from dtpe.world.maze import layouts as family
from dtpe.world.maze import picture, rules
from dtpe.world.maze.planner import cost_to_go


class Maze(World):
    name = "maze"
    vocabulary = rules.VOCABULARY
    min_size = family.MIN_SIZE
    options = {"wall_density": (0.0, 0.4), "cap_factor": (1, None)}
    """wall_density: chance that a free interior cell becomes a wall (denser grids are rarely
    solvable and drawing slows to a crawl); cap_factor: the episode cap is cap_factor * N steps"""
    layout_arrays = ("grid", "start")
    words = Words(
        layouts="mazes",
        milestone=("holds the key", "has not got the key"),
    )
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    initial_state = staticmethod(rules.initial_state)
    stepper = rules.BatchedMaze

    def check_size(self, size) -> int:
        return family.check_size(size)

    def cap(self, size: int, options: dict) -> int:
        return options["cap_factor"] * size

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        return family.generate(size, count, rng, options["wall_density"], exclude=exclude)

    def count(self, size: int, options: dict) -> None:
        # random interior walls: astronomically many at any size
        return None

    def layouts(self, arrays: dict):
        return rules.Layouts(arrays["grid"], arrays["start"], arrays["layout_id"])

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, state.has_key

    def ground(self, lay, state) -> np.ndarray:
        # entering the key's cell picks the key up: the agent never stands on it
        under = lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]
        return np.where(under == rules.KEY, rules.EMPTY, under)


WORLD = Maze()
