"""Policies act in MiniGrid itself: a Gymnasium vector env of `DoorKeyEnv(size=N)`, one env per
layout, each reset with the layout's seed, seen through `ProjectView`: the full grid in this
world's codes, our five actions, the project's rewards. It is played as a batch of episodes by
world/gym_batch.py's GymVectorBatch; success is MiniGrid's `terminated` (DoorKey ends only on
the goal), within MiniGrid's step limit (`truncated` at max_steps = 10 N^2)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from minigrid.envs import DoorKeyEnv

from dtpe.world.doorkey.layouts import observe
from dtpe.world.doorkey.rules import (
    AGENT,
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    EMPTY,
    KEY,
    MINIGRID_ACTIONS,
    N_ACTIONS,
    N_CODES,
    Layouts,
    initial_state,
    render,
)
from dtpe.world.gym_batch import GymVectorBatch, seeded


class FullyObservedDoorKey(DoorKeyEnv):
    """MiniGrid's DoorKeyEnv, its rules and generator untouched, without the agent's partial
    7 x 7 view: `step` and `reset` build it from the grid every time (`gen_obs`, nine tenths of
    a step's time), and ProjectView reads the full grid instead."""

    def gen_obs(self):
        return None


class ProjectView(gym.Wrapper):
    """A DoorKey env with this world's observation (the full (N, N) grid of codes), actions
    (left, right, forward, pickup, toggle) and rewards (`step_reward` every step, plus
    `goal_reward` on the goal: stepper.py says why not MiniGrid's)."""

    def __init__(self, env: gym.Env, step_reward: float, goal_reward: float):
        super().__init__(env)
        n = env.unwrapped.width
        self.observation_space = spaces.Box(0, N_CODES - 1, (n, n), np.uint8)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.step_reward, self.goal_reward = step_reward, goal_reward

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        # Only the agent, the key and the door change after reset: the grid is read once and
        # each step writes those three into it, from the env's own state.
        self.grid = observe(self.env)
        x, y = self.env.unwrapped.agent_pos
        self.grid[y, x] = EMPTY
        self.door = tuple(np.argwhere(self.grid == DOOR_LOCKED)[0])  # (row, col)
        self.key = tuple(np.argwhere(self.grid == KEY)[0])
        return self._observation(), info

    def _observation(self) -> np.ndarray:
        env = self.env.unwrapped
        obs = self.grid.copy()
        carrying = env.carrying is not None
        if carrying:
            obs[self.key] = EMPTY
        door = env.grid.get(self.door[1], self.door[0])
        obs[self.door] = (
            DOOR_OPEN if door.is_open else DOOR_LOCKED if door.is_locked else DOOR_CLOSED
        )
        x, y = env.agent_pos
        obs[y, x] = AGENT + env.agent_dir + 4 * carrying
        return obs

    def step(self, action):
        _, _, terminated, truncated, info = self.env.step(int(MINIGRID_ACTIONS[int(action)]))
        reward = self.step_reward + self.goal_reward * terminated
        return self._observation(), reward, terminated, truncated, info


def vector_env(layouts: Layouts, step_reward: float, goal_reward: float) -> GymVectorBatch:
    """The layouts as a batch of MiniGrid episodes. Raises ValueError if a layout's seed does
    not draw that layout (a layout not from `reset(seed)`, or another MiniGrid's generator)."""
    size = layouts.size
    return seeded(
        lambda: ProjectView(FullyObservedDoorKey(size=size), step_reward, goal_reward),
        layouts.seeds,
        render(layouts, initial_state(layouts)),
        f"MiniGrid's DoorKeyEnv({size})",
        "were they made by another minigrid version?",
    )
