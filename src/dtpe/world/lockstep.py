"""B episodes of one world stepped together under the project's episode rules, once for every
world: `step_reward` every step plus `goal_reward` on a success, an end on the world's terminal
cells (`Ends`, below: success, and failure where the world has it), truncation at `cap`
steps, and finished episodes frozen (their actions ignored, their reward 0) until every episode
is done. A world's stepper names its rules: a state dataclass of (B, ...) arrays with the agent's
cell `pos`, its start, one move, the observation and its terminal cells (world/maze/rules.py's
BatchedMaze), or takes them from its rules module (`class BatchedDoorKey(Lockstep, rules=rules)`,
world/doorkey/stepper.py).

Where episodes end is declared here once for every world and read by everything that steps,
plans or tells an episode: a world's rules module holds `ENDS = Ends(...)`, its terminal cells,
which this stepper, the search (world/search.py), the MiniGrid view (world/minigrid_view.py),
the explorer and the report read."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import ClassVar

import numpy as np


def on_goal(layouts, cells: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(B,) bool: `cells` (B, 2) (row, col) are the goal cell (`layouts.goal` (B, 2)) of layouts
    `which` (B,): the success of every world so far."""
    return (cells == layouts.goal[which]).all(1)


def on_fail(layouts, cells: np.ndarray, which: np.ndarray) -> np.ndarray:
    """(B,) bool: `cells` are the failure cell (`layouts.fail` (B, 2)) of layouts `which`: a world
    with one wrong end (Memory's other object, a T-Maze's other arm)."""
    return (cells == layouts.fail[which]).all(1)


@dataclass(frozen=True)
class Ends:
    """A world's terminal cells: an episode ends when its agent stands on one of its layout's
    `success` cells, or `failure` cells where the world has them (Memory's other object, a
    T-Maze's wrong arm, LavaGap's lava); one that reaches neither is cut at the step cap,
    unsuccessful. Each: (layouts, cells (B, 2) (row, col), which (B,) the layout of each) ->
    (B,) bool; `failure` None where only the cap ends an episode unsuccessfully.
    `failure_words`: how a failed episode ends, as the report and the explorer say it ("beside
    the other object"), given exactly where `failure` is.

    Cells, not whole states: the stepper and the search read them from the world's own state
    (its `pos`), and the MiniGrid view from MiniGrid's agent, whose other fields (what it
    carries, what it has seen) a view cannot read back into the world's state."""

    success: Callable = on_goal
    failure: Callable | None = None
    failure_words: str | None = None

    def __post_init__(self):
        if (self.failure is None) != (self.failure_words is None):
            raise ValueError("a world's failure cells and its words for them come together")

    def at(self, layouts, cells: np.ndarray, which: np.ndarray | None = None):
        """(success, failure) (B,) bool of agents on `cells` (B, 2) of layouts `which` (B,) (by
        default the B layouts, one each)."""
        which = np.arange(len(cells)) if which is None else which
        won = self.success(layouts, cells, which)
        if self.failure is None:
            return won, np.zeros(len(cells), dtype=bool)
        return won, self.failure(layouts, cells, which)


class Lockstep:
    initial_state: ClassVar[Callable]
    """layouts -> the state every episode starts in"""
    transition: ClassVar[Callable]
    """(layouts, state, actions (B,)) -> the state after; where the episode ends is `ends`'s"""
    render: ClassVar[Callable]
    """(layouts, state) -> the full grids (B, N, N), which pictures draw"""
    ends: ClassVar[Ends]
    """the world's terminal cells: success, and failure where it has one"""
    view: ClassVar[Callable | None] = None
    """(layouts, state) -> what the model is given (B, ...), where it is not `render`'s grid"""

    def __init_subclass__(cls, rules=None, **kwargs):
        """With `rules`, a module: the four are its `initial_state`, `transition`, `render` and
        `ENDS`, and the hook `view` is its own where it defines one."""
        super().__init_subclass__(**kwargs)
        if rules is not None:
            cls.initial_state = staticmethod(rules.initial_state)
            cls.transition = staticmethod(rules.transition)
            cls.render = staticmethod(rules.render)
            cls.ends = rules.ENDS
            if hasattr(rules, "view"):
                cls.view = staticmethod(rules.view)

    def __init__(self, layouts, cap: int, step_reward: float, goal_reward: float):
        self.layouts, self.cap = layouts, cap
        self.step_reward, self.goal_reward = step_reward, goal_reward
        self.reset()

    def observe(self) -> np.ndarray:
        """What the model is given of the current states: `view`'s, or the full grids (B, N, N)."""
        return (type(self).view or type(self).render)(self.layouts, self.state)

    def picture(self) -> np.ndarray:
        """The full grids (B, N, N) of the current states, which pictures draw."""
        return type(self).render(self.layouts, self.state)

    def reset(self) -> np.ndarray:
        b = len(self.layouts)
        self.state = type(self).initial_state(self.layouts)
        self.t = np.zeros(b, dtype=np.int64)
        self.success = np.zeros(b, dtype=bool)
        self.failure = np.zeros(b, dtype=bool)
        self.done = np.zeros(b, dtype=bool)
        return self.observe()

    def step(self, actions: np.ndarray):
        """Returns (obs, reward, terminated, truncated), each over all B episodes."""
        active = ~self.done
        moved = type(self).transition(self.layouts, self.state, np.asarray(actions))
        self.state = replace(
            self.state,
            **{
                f.name: np.where(
                    active.reshape(-1, *[1] * (getattr(moved, f.name).ndim - 1)),
                    getattr(moved, f.name),
                    getattr(self.state, f.name),
                )
                for f in fields(self.state)
            },
        )
        self.t += active
        won, lost = type(self).ends.at(self.layouts, self.state.pos)
        won, lost = active & won, active & lost
        terminated = won | lost
        truncated = active & ~terminated & (self.t >= self.cap)
        reward = np.where(active, self.step_reward + self.goal_reward * won, 0.0)
        self.success |= won
        self.failure |= lost
        self.done |= terminated | truncated
        return self.observe(), reward, terminated, truncated
