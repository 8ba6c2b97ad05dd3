"""B episodes of one world stepped together under the project's episode rules, once for every
world's batched stepper (world/maze.py's BatchedMaze, world/doorkey/stepper.py's
BatchedDoorKey): `step_reward` every step plus `goal_reward` on the goal, truncation at `cap`
steps, and finished episodes frozen (their actions ignored, their reward 0) until every episode
is done. A world supplies its state: `start_state`, `move` and `observe`."""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np


class Lockstep(ABC):
    def __init__(self, layouts, cap: int, step_reward: float, goal_reward: float):
        self.layouts, self.cap = layouts, cap
        self.step_reward, self.goal_reward = step_reward, goal_reward
        self.reset()

    @abstractmethod
    def start_state(self) -> None:
        """Sets every episode's state to its layout's start."""

    @abstractmethod
    def move(self, actions: np.ndarray, active: np.ndarray) -> np.ndarray:
        """Applies `actions` (B,) to the `active` (B,) episodes' state only; returns whether each
        episode's move reached the goal (B,)."""

    @abstractmethod
    def observe(self) -> np.ndarray:
        """The observations (B, N, N) of the current states."""

    def reset(self) -> np.ndarray:
        b = len(self.layouts)
        self.start_state()
        self.t = np.zeros(b, dtype=np.int64)
        self.success = np.zeros(b, dtype=bool)
        self.done = np.zeros(b, dtype=bool)
        return self.observe()

    def step(self, actions: np.ndarray):
        """Returns (obs, reward, terminated, truncated), each over all B episodes."""
        active = ~self.done
        at_goal = self.move(np.asarray(actions), active)
        self.t += active
        terminated = active & at_goal
        truncated = active & ~at_goal & (self.t >= self.cap)
        reward = np.where(active, self.step_reward + self.goal_reward * terminated, 0.0)
        self.success |= terminated
        self.done |= terminated | truncated
        return self.observe(), reward, terminated, truncated
