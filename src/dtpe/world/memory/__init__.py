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

from dtpe.world.base import Words
from dtpe.world.memory import picture, rules
from dtpe.world.memory.planner import cost_to_go
from dtpe.world.memory.stepper import BatchedMemory, max_steps
from dtpe.world.minigrid_world import MiniGridWorld


class Memory(MiniGridWorld, rules=rules):
    name = "memory"
    minigrid = "Memory"
    flag = "seen"
    options = {}
    layout_arrays = ("grid", "start")
    chunk = 500
    """the planner holds 8 N^2 states of each layout (3.5 M at 500 layouts of 33 x 33)"""
    words = Words(
        layouts="Memory layouts",
        milestone=("has seen the cue", "has not seen the cue"),
        chance_pct=50,
    )
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    stepper = BatchedMemory

    def cap(self, size: int, options: dict) -> int:
        return max_steps(size)

    def minigrid_modules(self):
        from dtpe.world.memory import layouts, minigrid_env  # MiniGrid: loaded when drawn or played

        return layouts, minigrid_env

    def count(self, size: int, options: dict) -> int:
        # MemoryEnv: a hallway end e in [4, N-3], the agent's start column in [1, e], the cue a
        # key or a ball, the two objects at the end in either order
        return 4 * sum(range(4, self.check_size(size) - 2))


WORLD = Memory()
