"""MiniGrid's Memory (world/base.py's interface): a cue in a start room, a hallway, and at its
end a key and a ball; reaching the one that matches the cue succeeds, the other fails. Its rules
restated over numpy (rules.py) for the expert (planner.py) and the lockstep stepper (stepper.py);
its layouts are `MemoryEnv(size, random_length=True).reset(seed)`'s (layouts.py, ids their seeds)
and policies are evaluated in MiniGrid itself (minigrid_env.py). Both import MiniGrid, so they
load only when used.

Why this world: the model sees only the agent's 7 x 7 view (`rules.view`, the stepper's `view`
hook of world/lockstep.py), so the cue is out of sight for most of an episode, and a longer
hallway puts it further back in the context: which position encoding keeps a step that far back
within reach is what the sizes beyond training ask. The expert acts only on what it has seen
(planner.py)."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words, World
from dtpe.world.memory import picture, rules
from dtpe.world.memory.planner import cost_to_go
from dtpe.world.memory.stepper import BatchedMemory, max_steps


class Memory(World):
    name = "memory"
    vocabulary = rules.VOCABULARY
    min_size = rules.MIN_SIZE
    options = {}
    layout_arrays = ("grid", "start")
    chunk = 500
    """the planner holds 8 N^2 states of each layout (3.5 M at 500 layouts of 33 x 33)"""
    words = Words(layouts="Memory layouts", milestone=("has seen the cue", "has not seen the cue"))
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    initial_state = staticmethod(rules.initial_state)
    stepper = BatchedMemory

    def check_size(self, size) -> int:
        return rules.check_size(size)

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        from dtpe.world.memory import layouts  # imports MiniGrid and pygame

        return layouts.draw(size, count, rng, exclude, whole)

    def layouts(self, arrays: dict):
        return rules.Layouts(arrays["grid"], arrays["start"], arrays["layout_id"])

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, state.seen

    def ground(self, lay, state) -> np.ndarray:
        return lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]

    def heading(self, state) -> np.ndarray:
        return state.heading

    def evaluation_env(self, lay, env):
        from dtpe.world.memory.minigrid_env import minigrid_batch  # imports MiniGrid and pygame

        return minigrid_batch(lay, env.step_reward, env.goal_reward)


WORLD = Memory()
