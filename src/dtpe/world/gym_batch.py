"""Gymnasium envs played as one batch of episodes, as a world's lockstep stepper plays them: what
MiniGrid worlds are evaluated through, and the maze's own Gymnasium env in tests."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class GymBatch:
    """Gymnasium envs (KeyDoorMaze-v0's, MiniGrid's), one per episode, as one batch, stepped as
    world/lockstep.py steps them (the BatchedEnv of steps/rollout.py): done, success (the env's
    `info["success"]`, which a world's env reads from its terminal cells, world/lockstep.py's Ends),
    failure (terminated otherwise) and t (B,) per episode; once an episode has ended its env is
    stepped no more, its reward is 0 and its observation stays its last. Only the unfinished
    envs step: a Gymnasium vector env steps every env, a finished one reset and playing on, and in
    MiniGrid's Memory at 33x33 nine in ten of its steps were such (docs/notebook.md)."""

    def __init__(self, envs: list[gym.Env], seeds: list[int] | None = None):
        self.envs, self.seeds = envs, seeds

    def reset(self) -> np.ndarray:
        """Starts every episode, each env with its own of `seeds` if given (the same episodes
        at every reset)."""
        seeds = self.seeds or [None] * len(self.envs)
        self.obs = np.stack([env.reset(seed=s)[0] for env, s in zip(self.envs, seeds)])
        b = len(self.envs)
        self.t = np.zeros(b, dtype=np.int64)
        self.success = np.zeros(b, dtype=bool)
        self.failure = np.zeros(b, dtype=bool)
        self.done = np.zeros(b, dtype=bool)
        return self.obs.copy()

    def step(self, actions: np.ndarray):
        """Returns (obs, reward, terminated, truncated), each over all B episodes."""
        b = len(self.envs)
        reward = np.zeros(b)
        terminated, truncated = np.zeros(b, dtype=bool), np.zeros(b, dtype=bool)
        for i in np.flatnonzero(~self.done):
            self.obs[i], reward[i], terminated[i], truncated[i], info = self.envs[i].step(
                actions[i]
            )
            self.success[i] = info["success"]
            self.failure[i] = terminated[i] and not info["success"]
            self.t[i] += 1
        self.done |= terminated | truncated
        return self.obs.copy(), reward, terminated, truncated


def seeded(make, layouts, expected: np.ndarray, env: str, hint: str) -> GymBatch:
    """One env `make(layout)` per layout of `layouts` (SeededLayouts), reset with the layout's
    seed, as one batch of episodes (a MiniGrid world's evaluation). Raises ValueError, naming the
    seeds, where the first observations are not `expected` (B, H, W): layouts a seed of `env`
    does not draw, `hint` the likely cause."""
    seeds = layouts.seeds
    envs = [make(layouts.subset([i])) for i in range(len(layouts))]
    batch = GymBatch(envs, [int(s) for s in seeds])
    wrong = np.flatnonzero((batch.reset() != expected).reshape(len(seeds), -1).any(1))
    if len(wrong):
        raise ValueError(
            f"{env} draws other layouts than these for seeds {seeds[wrong[:5]].tolist()}: {hint}"
        )
    return batch
