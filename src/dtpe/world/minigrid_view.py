"""What a MiniGrid world is evaluated in: MiniGrid's own env, its rules and generator untouched,
seen through the world's ProjectView (the full grid in the world's codes, the world's actions,
the project's rewards), one env per layout reset with the layout's seed, played as one batch of
episodes (gym_batch.seeded). Success is MiniGrid's `terminated`, within its step limit
(`truncated` at its `max_steps`)."""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces


def fully_observed(env_class: type) -> type:
    """`env_class` without the agent's partial 7 x 7 view: MiniGrid builds it from the grid at
    every `step` and `reset` (`gen_obs`, most of a step's time), and ProjectView reads the full
    grid instead."""
    return type(f"FullyObserved{env_class.__name__}", (env_class,), {"gen_obs": lambda self: None})


class ProjectView(gym.Wrapper):
    """A MiniGrid env with its world's observation (the full (N, N) grid of codes), actions and
    rewards (`step_reward` every step, plus `goal_reward` on the goal: world/doorkey/stepper.py
    says why not MiniGrid's). The grid is read once after `reset` (`still`: the cells no step
    changes) and each step a world's view writes what moves into a copy of it (`draw`: the
    agent, and in DoorKey the key and the door)."""

    n_codes: ClassVar[int]
    empty: ClassVar[int]
    """the world's code of an empty cell, what the agent's start reads as"""
    minigrid_actions: ClassVar[np.ndarray]
    """MiniGrid's number of each of the world's actions"""
    observe: ClassVar
    """a reset env -> its full grid (N, N) in the world's codes"""

    def __init__(self, env: gym.Env, step_reward: float, goal_reward: float):
        super().__init__(env)
        n = env.unwrapped.width
        self.observation_space = spaces.Box(0, self.n_codes - 1, (n, n), np.uint8)
        self.action_space = spaces.Discrete(len(self.minigrid_actions))
        self.step_reward, self.goal_reward = step_reward, goal_reward

    def still(self) -> np.ndarray:
        """The grid (N, N) of the reset env without the agent."""
        grid = self.observe(self.env)
        x, y = self.env.unwrapped.agent_pos
        grid[y, x] = self.empty
        return grid

    def draw(self, obs: np.ndarray) -> None:
        """Writes what moves, as the env has it now, into `obs` (the still grid's copy)."""
        raise NotImplementedError

    def _observation(self) -> np.ndarray:
        obs = self.grid.copy()
        self.draw(obs)
        return obs

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        self.grid = self.still()
        return self._observation(), info

    def step(self, action):
        _, _, terminated, truncated, info = self.env.step(int(self.minigrid_actions[int(action)]))
        reward = self.step_reward + self.goal_reward * terminated
        return self._observation(), reward, terminated, truncated, info
