"""B episodes of one world stepped together under the project's episode rules, once for every
world: `step_reward` every step plus `goal_reward` on the goal, an end in failure where the
world has one (`failed`), truncation at `cap` steps, and finished episodes frozen (their actions
ignored, their reward 0) until every episode is done. A world's stepper names its rules: a state
dataclass of (B, ...) arrays, its start, one move and the observation (world/maze/rules.py's
BatchedMaze), or takes them from its rules module (`class BatchedDoorKey(Lockstep, rules=rules)`,
world/doorkey/stepper.py)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Callable, ClassVar

import numpy as np


class Lockstep:
    initial_state: ClassVar[Callable]
    """layouts -> the state every episode starts in"""
    transition: ClassVar[Callable]
    """(layouts, state, actions (B,)) -> (state after, reached the goal (B,))"""
    render: ClassVar[Callable]
    """(layouts, state) -> the full grids (B, N, N), which pictures draw"""
    view: ClassVar[Callable | None] = None
    """(layouts, state) -> what the model is given (B, ...), where it is not `render`'s grid"""
    failed: ClassVar[Callable | None] = None
    """(layouts, state) -> (B,) bool, episodes that end off the goal, as failures; None: none"""

    def __init_subclass__(cls, rules=None, **kwargs):
        """With `rules`, a module: the three are its `initial_state`, `transition` and `render`,
        and the hooks `view` and `failed` are its own where it defines them."""
        super().__init_subclass__(**kwargs)
        if rules is not None:
            cls.initial_state = staticmethod(rules.initial_state)
            cls.transition = staticmethod(rules.transition)
            cls.render = staticmethod(rules.render)
            for hook in ("view", "failed"):
                if hasattr(rules, hook):
                    setattr(cls, hook, staticmethod(getattr(rules, hook)))

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
        self.done = np.zeros(b, dtype=bool)
        return self.observe()

    def step(self, actions: np.ndarray):
        """Returns (obs, reward, terminated, truncated), each over all B episodes."""
        active = ~self.done
        moved, at_goal = type(self).transition(self.layouts, self.state, np.asarray(actions))
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
        won = active & at_goal
        terminated = won
        if type(self).failed is not None:
            terminated = won | (active & type(self).failed(self.layouts, self.state))
        truncated = active & ~terminated & (self.t >= self.cap)
        reward = np.where(active, self.step_reward + self.goal_reward * won, 0.0)
        self.success |= won
        self.done |= terminated | truncated
        return self.observe(), reward, terminated, truncated
