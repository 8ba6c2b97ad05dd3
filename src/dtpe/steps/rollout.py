"""Batched episodes: a policy plays a batch of environments in lockstep, once per step for the
whole batch of unfinished episodes. `play` takes any environment and policy of the two small
interfaces below: a world's own lockstep stepper (world/lockstep.py) or Gymnasium envs
(MiniGrid's) through world/gym_batch.py's GymBatch; the Decision Transformer (model/policy.py)
or any other policy. `rollout` is the evaluation's: the model in its world.

A failed episode counts the steps it took, i.e. the cap."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.steps import episode_csv
from dtpe.world import catalog as worlds


class BatchedEnv(Protocol):
    """B episodes stepped together, as world/lockstep.py steps them. An episode's steps after its
    end are ignored and give reward 0."""

    done: np.ndarray
    """(B,) bool, whether each episode has ended (in success, in failure or at its cap)"""
    success: np.ndarray
    """(B,) bool, whether each episode succeeded"""
    failure: np.ndarray
    """(B,) bool, whether each episode ended in its world's failure (Ends.failure)"""
    t: np.ndarray
    """(B,) int, the steps each episode has taken"""

    def reset(self) -> np.ndarray:
        """Starts every episode again; returns the observations (B, H, W): full grids or views."""

    def step(self, actions: np.ndarray) -> tuple:
        """One action (B,) per episode; returns (obs (B, H, W), reward (B,), terminated (B,),
        truncated (B,))."""


class Policy(Protocol):
    """Acts on a batch of episodes; it keeps whatever it conditions on (a window, a cache)."""

    n_actions: int
    """how many actions the policy chooses from"""

    def start(self, batch_size: int, cap: int) -> None:
        """New episodes: `batch_size` of them, each of at most `cap` steps."""

    def act(self, obs: np.ndarray, active: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Actions (B,) for observations (B, H, W), and their probabilities (B, n_actions); only
        the `active` (B,) bool episodes' rows count."""

    def observe(self, rewards: np.ndarray) -> None:
        """The rewards (B,) the actions just chosen earned."""


def play(env: BatchedEnv, policy: Policy, cap: int, trace: bool = False) -> dict:
    """Plays every episode of `env` to its end, at most `cap` steps; returns success (bool),
    steps (int) and ending (episode_csv.ending's words) arrays, and with `trace` the chosen actions
    (B, cap) and their probabilities (B, cap, n_actions) at every step (zero past an episode's
    end), so a replay is this episode."""
    obs = env.reset()
    b = len(obs)
    policy.start(b, cap)
    actions = np.zeros((b, cap), np.int64)
    probs = np.zeros((b, cap, policy.n_actions), np.float32) if trace else None
    for t in range(cap):
        active = ~env.done
        if not active.any():
            break
        actions[:, t], p = policy.act(obs, active)
        if trace:
            probs[:, t] = p
        obs, reward, _, _ = env.step(actions[:, t])
        policy.observe(reward)
    result = {
        "success": env.success.copy(),
        "steps": env.t.copy(),
        "ending": episode_csv.ending(env.success, env.failure),
    }
    if trace:
        played = np.arange(cap)[None, :] < env.t[:, None]
        result.update(actions=np.where(played, actions, 0), probs=probs)
    return result


def rollout(
    model,
    lay,
    env,
    context: int,
    target_return: float,
    precision: str = "fp32",
    trace: bool = False,
    cap: int | None = None,
) -> dict:
    """Greedy episodes of `model` on every layout `lay` in its world's evaluation environment
    (World.evaluation_env: its own stepper, or MiniGrid for a MiniGrid world), whose rewards are
    the `env` params, each to at most `cap` steps (None: the world's cap): `play`'s results."""
    policy = DecisionTransformerPolicy(model, context, target_return, precision)
    game = worlds.get(env.world).evaluation_env(lay, env)
    return play(game, policy, env.cap(lay.size) if cap is None else cap, trace)
