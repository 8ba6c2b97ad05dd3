"""A Gymnasium vector env played as one batch of episodes, as a world's lockstep stepper plays
them: what MiniGrid worlds are evaluated through, and the maze's own Gymnasium env in tests."""

from __future__ import annotations

import gymnasium as gym
import numpy as np


class GymVectorBatch:
    """A Gymnasium vector env (of KeyDoorMaze-v0 envs, of MiniGrid's) as one batch of episodes,
    stepped as world/lockstep.py steps them (the BatchedEnv of steps/rollout.py): done, success
    (`terminated`, or an env's `info["success"]` where an episode may also end in failure) and t
    (B,) per episode, and once an episode has ended its actions are ignored and its reward
    is 0. A vector env resets a finished env by itself (autoreset, on the next step in Gymnasium's
    default mode) and plays on; whatever the mode, what it plays after an episode's end belongs
    to no episode here."""

    def __init__(self, vector_env: gym.vector.VectorEnv, seeds: list[int] | None = None):
        self.vector_env, self.seeds = vector_env, seeds

    def reset(self) -> np.ndarray:
        """Starts every episode, each env with its own of `seeds` if given (the same episodes
        at every reset)."""
        obs, _ = self.vector_env.reset(seed=self.seeds)
        b = self.vector_env.num_envs
        self.t = np.zeros(b, dtype=np.int64)
        self.success = np.zeros(b, dtype=bool)
        self.done = np.zeros(b, dtype=bool)
        return obs

    def step(self, actions: np.ndarray):
        """Returns (obs, reward, terminated, truncated), each over all B episodes."""
        active = ~self.done
        obs, reward, terminated, truncated, info = self.vector_env.step(np.asarray(actions))
        # an env whose episodes also end in failure says which ended well (`info["success"]`)
        won = active & (info["success"] if "success" in info else terminated)
        terminated, truncated = active & terminated, active & truncated
        self.t += active
        self.success |= won
        self.done |= terminated | truncated
        return obs, np.where(active, reward, 0.0), terminated, truncated


def seeded(make, seeds: np.ndarray, expected: np.ndarray, env: str, hint: str) -> GymVectorBatch:
    """One env from `make()` per seed, reset with its seed, as one batch of episodes (a MiniGrid
    world's evaluation). Raises ValueError, naming the seeds, where the first observations are
    not `expected` (B, N, N): layouts a seed of `env` does not draw, `hint` the likely cause."""
    batch = GymVectorBatch(
        gym.vector.SyncVectorEnv([make for _ in range(len(seeds))]), [int(s) for s in seeds]
    )
    wrong = np.flatnonzero((batch.reset() != expected).reshape(len(seeds), -1).any(1))
    if len(wrong):
        raise ValueError(
            f"{env} draws other layouts than these for seeds {seeds[wrong[:5]].tolist()}: {hint}"
        )
    return batch
