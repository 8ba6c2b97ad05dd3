"""What a world over a MiniGrid env is, once, and what its package must declare; checked when
the package loads, so that a package missing a member is refused there, naming it.

A MiniGrid world's layouts are what the env's `reset(seed)` draws, its episodes are played in
MiniGrid itself for evaluation and in the world's numpy rules for data, and its agent has
MiniGrid's cell and heading (world/minigrid_moves.py). A package (crossing/ is the shortest)
holds:
- `rules.py`, numpy alone: `RULES` below (its codes and actions as a `VOCABULARY`, `MIN_SIZE` and
  `check_size`, `Layouts` a grids.SeededLayouts of `layout_arrays` and `seeds`, `initial_state`,
  `transition`, `render`, and where episodes end, `ENDS`); an agent that only walks takes
  minigrid_moves' `facing_right`, `walk` and `with_agent`;
- `layouts.py` (`from_seeds(size, seeds, **knobs)`: the env read in its codes,
  world/minigrid_view.py) and `minigrid_env.py` (`minigrid_batch(layouts, step_reward=,
  goal_reward=, **knobs)`: the env played), which import MiniGrid and so load only when the world
  draws or is evaluated;
- `stepper.py`, its rules in lockstep (`class Batched...(Lockstep, rules=rules)`), `planner.py`,
  its expert (minigrid_moves.cost_to_go), `picture.py`, its colours;
- `__init__.py`: `class X(MiniGridWorld, rules=rules)` with `CLASS` below, `cap` (MiniGrid's step
  limit), `count` and `minigrid_modules` (its two MiniGrid modules, imported there), and
  `WORLD = X()`.

Its smallest size must hold at least 6 distinct layouts: the shared tests draw train,
validation and test layouts there, apart (tests/test_world_registry.py)."""

from __future__ import annotations

import ast
from abc import abstractmethod
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import numpy as np

from dtpe.world import grids
from dtpe.world.base import World

RULES = (
    "VOCABULARY",
    "MIN_SIZE",
    "check_size",
    "Layouts",
    "initial_state",
    "transition",
    "render",
    "ENDS",
)
"""what a MiniGrid world's rules module holds"""
CLASS = ("name", "minigrid", "options", "layout_arrays", "words", "colours", "legend")
CLASS += ("planner", "stepper")
"""what its class states (besides `cap`, `count` and `minigrid_modules`)"""
MINIGRID_MODULES = {"layouts": "from_seeds", "minigrid_env": "minigrid_batch"}
"""its modules that import MiniGrid, and the function each defines: read from their source at
load, never imported there"""
DRAWS_PER_LAYOUT = 100
"""seeds drawn per layout wanted before a suite settles for fewer: MiniGrid's generators have few
layouts at small sizes (DoorKey 48 at 5 x 5, SimpleCrossing 52 at 7 x 7)"""


class MiniGridWorld(World):
    """A world over a MiniGrid env (this module's docstring)."""

    rules: ClassVar[ModuleType]
    """its rules module"""
    minigrid: ClassVar[str]
    """MiniGrid's name of its env, in messages ("DoorKey 8x8 holds ... layouts")"""
    flag: ClassVar[str | None] = None
    """the field of its state that `words.milestone` names; None where it has none"""

    def __init_subclass__(cls, rules=None, **kwargs):
        super().__init_subclass__(**kwargs)
        if rules is None:
            raise TypeError(f"{cls.__name__}: a MiniGrid world names its rules module (rules=)")
        missing = [f"rules.{m}" for m in RULES if not hasattr(rules, m)]
        missing += [m for m in CLASS if not hasattr(cls, m)]
        missing += _undefined(Path(rules.__file__).parent, MINIGRID_MODULES)
        if missing:
            raise TypeError(
                f"MiniGrid world {cls.__module__}: missing {', '.join(missing)} "
                f"(world/minigrid_world.py lists what a MiniGrid world declares)"
            )
        cls.rules = rules
        cls.vocabulary = rules.VOCABULARY
        cls.min_size = rules.MIN_SIZE
        cls.initial_state = staticmethod(rules.initial_state)

    @abstractmethod
    def minigrid_modules(self) -> tuple[ModuleType, ModuleType]:
        """Its package's `layouts` and `minigrid_env`, imported here (they import MiniGrid)."""

    def from_seeds(self, size: int, seeds, options: dict):
        """Its Layouts of the env's `reset(seed)` for each of `seeds`."""
        return self.minigrid_modules()[0].from_seeds(size, seeds, **options)

    def check_size(self, size) -> int:
        return self.rules.check_size(size)

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        """Layouts drawn by seed (grids.draw_by_seed), DRAWS_PER_LAYOUT seeds a layout wanted."""
        size = self.check_size(size)
        return grids.draw_by_seed(
            lambda seeds: self.from_seeds(size, seeds, options),
            count,
            rng,
            self.fingerprints,
            exclude,
            whole,
            DRAWS_PER_LAYOUT,
            f"{self.minigrid} {size}x{size}",
        )

    def layouts(self, arrays: dict):
        names = {name: arrays[name] for name in self.layout_arrays}
        return self.rules.Layouts(**names, seeds=arrays["layout_id"])

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        if self.flag is None:
            return state.pos, np.zeros(len(state.pos), dtype=bool)
        return state.pos, getattr(state, self.flag)

    def ground(self, lay, state) -> np.ndarray:
        # the agent stands on what its layout holds there: MiniGrid's floor and goal
        return lay.grid[np.arange(len(lay)), state.pos[:, 0], state.pos[:, 1]]

    def heading(self, state) -> np.ndarray:
        return state.heading

    def evaluation_env(self, lay, env):
        """MiniGrid itself, one env a layout."""
        return self.minigrid_modules()[1].minigrid_batch(
            lay, step_reward=env.step_reward, goal_reward=env.goal_reward, **env.options
        )


def _undefined(package: Path, wanted: dict[str, str]) -> list[str]:
    """`module.function` of `wanted` that `package`'s source does not define."""
    out = []
    for module, function in wanted.items():
        path = package / f"{module}.py"
        tree = ast.parse(path.read_text()) if path.is_file() else ast.Module(body=[])
        if not any(isinstance(n, ast.FunctionDef) and n.name == function for n in tree.body):
            out.append(f"{module}.{function}")
    return out
