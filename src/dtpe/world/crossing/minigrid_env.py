"""Policies act in MiniGrid itself: a Gymnasium vector env of `CrossingEnv(size=N, num_crossings=k,
obstacle_type=Wall)`, one env per layout, each reset with the layout's seed, seen through
`ProjectView`: the full grid in this world's codes, our three actions, the project's rewards.
It is played as a batch of episodes by world/gym_batch.py's GymVectorBatch; success is
MiniGrid's `terminated` (the walls end nothing, only the goal), within MiniGrid's step limit
(`truncated` at max_steps = 4 N^2)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from minigrid.core.world_object import Wall
from minigrid.envs import CrossingEnv

from dtpe.world.crossing.layouts import observe
from dtpe.world.crossing.rules import (
    AGENT,
    EMPTY,
    MINIGRID_ACTIONS,
    N_ACTIONS,
    N_CODES,
    Layouts,
    initial_state,
    render,
)
from dtpe.world.gym_batch import GymVectorBatch, seeded


class FullyObservedCrossing(CrossingEnv):
    """MiniGrid's CrossingEnv, its rules and generator untouched, without the agent's partial
    7 x 7 view (`gen_obs`, most of a step's time): ProjectView reads the full grid instead."""

    def gen_obs(self):
        return None


class ProjectView(gym.Wrapper):
    """A CrossingEnv with this world's observation (the full (N, N) grid of codes), actions (left,
    right, forward) and rewards (`step_reward` every step, plus `goal_reward` on the goal)."""

    def __init__(self, env: gym.Env, step_reward: float, goal_reward: float):
        super().__init__(env)
        n = env.unwrapped.width
        self.observation_space = spaces.Box(0, N_CODES - 1, (n, n), np.uint8)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.step_reward, self.goal_reward = step_reward, goal_reward

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        # Only the agent moves: the grid is read once, and each step writes the agent into it.
        self.grid = observe(self.env)
        x, y = self.env.unwrapped.agent_pos
        self.grid[y, x] = EMPTY
        return self._observation(), info

    def _observation(self) -> np.ndarray:
        env = self.env.unwrapped
        obs = self.grid.copy()
        x, y = env.agent_pos
        obs[y, x] = AGENT + env.agent_dir
        return obs

    def step(self, action):
        _, _, terminated, truncated, info = self.env.step(int(MINIGRID_ACTIONS[int(action)]))
        reward = self.step_reward + self.goal_reward * terminated
        return self._observation(), reward, terminated, truncated, info


def vector_env(
    layouts: Layouts, num_crossings: int, step_reward: float, goal_reward: float
) -> GymVectorBatch:
    """The layouts as a batch of MiniGrid episodes. Raises ValueError if a layout's seed does
    not draw that layout (a layout not from `reset(seed)`, or another MiniGrid's generator)."""
    size = layouts.size
    return seeded(
        lambda: ProjectView(
            FullyObservedCrossing(size=size, num_crossings=num_crossings, obstacle_type=Wall),
            step_reward,
            goal_reward,
        ),
        layouts.seeds,
        render(layouts, initial_state(layouts)),
        f"MiniGrid's CrossingEnv({size}, {num_crossings} crossings)",
        "were they made with another num_crossings or minigrid version?",
    )
