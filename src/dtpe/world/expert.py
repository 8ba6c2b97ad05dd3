"""The expert's episodes, for every world: its planner's actions played in its lockstep stepper,
with random detours in the sub-optimal ones, as arrays of steps/dataset.py's format."""

from __future__ import annotations

import numpy as np


def play_expert(env, expert, n_actions: int, optimal: np.ndarray, detour_prob: float, rng) -> dict:
    """Plays one episode per layout of `env` in lockstep: `expert(rng)`'s actions (the planner's,
    drawn among the optimal ones at random), with random actions at `detour_prob` per step in
    the episodes where `optimal` is False. Returns the episode arrays of dataset.py's format."""
    obs = env.reset()
    b = len(optimal)
    states, actions, experts, rewards, alive = [], [], [], [], []
    while not env.done.all():
        best = expert(rng)
        detour = ~optimal & (rng.random(b) < detour_prob)
        action = np.where(detour, rng.integers(0, n_actions, b), best)
        alive.append(~env.done)
        states.append(obs)
        actions.append(action)
        experts.append(best)
        obs, reward, _, _ = env.step(action)
        rewards.append(reward)
    alive = np.stack(alive, 1)  # (E, Tmax)
    lengths = alive.sum(1)
    order = np.nonzero(alive)  # episode-major order of real steps
    rewards = np.stack(rewards, 1).astype(np.float32)
    rtg = np.flip(np.cumsum(np.flip(rewards, 1), 1), 1)
    return {
        "states": np.stack(states, 1)[order].astype(np.uint8),
        "actions": np.stack(actions, 1)[order].astype(np.uint8),
        "expert_actions": np.stack(experts, 1)[order].astype(np.uint8),
        "rewards": rewards[order],
        "rtg": np.ascontiguousarray(rtg)[order].astype(np.float32),
        "timesteps": order[1].astype(np.int32),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "optimal": optimal.astype(np.uint8),
        "success": env.success.astype(np.uint8),
    }
