"""Policies act in MiniGrid itself: a batch of MiniGrid's `MemoryEnv(size=N,
random_length=True)`, one env per layout, each reset with the layout's seed, seen through
`MemoryView`: MiniGrid's own `obs["image"]` (the agent's 7 x 7 view, occlusion included) in this
world's codes, our three actions, the project's rewards. MiniGrid's `terminated` ends an episode
at either object; `info["success"]` says which ended at the matching one, by the world's
terminal cells (`rules.ENDS`, minigrid_view.outcome; world/gym_batch.py counts those), within
MiniGrid's step limit (`truncated` at max_steps = 5 N^2)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from minigrid.core.constants import COLOR_TO_IDX, OBJECT_TO_IDX, STATE_TO_IDX

from dtpe.world.gym_batch import GymBatch, seeded
from dtpe.world.memory.layouts import Reader, make_env
from dtpe.world.memory.rules import (
    ENDS,
    MINIGRID_ACTIONS,
    MINIGRID_CELLS,
    N_CODES,
    VIEW,
    Layouts,
    initial_state,
    view,
)
from dtpe.world.minigrid_view import outcome

_UNKNOWN = 255
CODES = np.full((len(OBJECT_TO_IDX), len(COLOR_TO_IDX), len(STATE_TO_IDX)), _UNKNOWN, np.uint8)
"""this world's code of each (object, colour, state) a view holds"""
for _code, _cell in MINIGRID_CELLS.items():
    CODES[_cell] = _code


def image_codes(image: np.ndarray) -> np.ndarray:
    """MiniGrid's `obs["image"]` (7, 7, 3) [x, y] as this world's view (7, 7) [row, col]; a
    ValueError where it shows something Memory's views never hold."""
    index = tuple(image[..., i].astype(np.int64) for i in range(3))
    inside = all((i < n).all() for i, n in zip(index, CODES.shape))
    codes = CODES[index].T if inside else None
    if codes is None or (codes == _UNKNOWN).any():
        raise ValueError(f"a view holds cells other than Memory's: {image.reshape(-1, 3).tolist()}")
    return codes


def image_of(codes: np.ndarray) -> np.ndarray:
    """The (object, colour, state) image (7, 7, 3) uint8 [x, y] MiniGrid writes for a view (7, 7)
    of this world's codes: `image_codes` undone."""
    table = np.zeros((N_CODES, 3), dtype=np.uint8)
    for code, cell in MINIGRID_CELLS.items():
        table[code] = cell
    return table[codes.T]


class MemoryView(gym.Wrapper):
    """MemoryEnv of one layout with this world's observation (MiniGrid's view in its codes),
    actions (left, right, forward) and rewards (`step_reward` every step, plus `goal_reward` at
    the matching object); `info["success"]`: the episode ended at the matching object."""

    def __init__(self, env: gym.Env, layout: Layouts, step_reward: float, goal_reward: float):
        super().__init__(env)
        self.layout = layout
        self.observation_space = spaces.Box(0, N_CODES - 1, (VIEW, VIEW), np.uint8)
        self.action_space = spaces.Discrete(len(MINIGRID_ACTIONS))
        self.step_reward, self.goal_reward = step_reward, goal_reward

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return image_codes(obs["image"]), info

    def step(self, action):
        obs, _, terminated, truncated, info = self.env.step(int(MINIGRID_ACTIONS[int(action)]))
        success = outcome(self.env, self.layout, ENDS, terminated)
        reward = self.step_reward + self.goal_reward * success
        info = {**info, "success": success}
        return image_codes(obs["image"]), reward, terminated, truncated, info


def minigrid_batch(layouts: Layouts, step_reward: float, goal_reward: float) -> GymBatch:
    """The layouts as a batch of MiniGrid episodes. Raises ValueError if a layout's seed does
    not draw that layout (a layout not from `reset(seed)`, or another MiniGrid's generator):
    its first view, then its whole grid and start, which the view does not show."""
    size = layouts.size
    env = f"MiniGrid's MemoryEnv({size}, random_length=True)"
    hint = "were they made by another minigrid version?"
    batch = seeded(
        lambda layout: MemoryView(make_env(size), layout, step_reward, goal_reward),
        layouts,
        view(layouts, initial_state(layouts)),
        env,
        hint,
    )
    grid = np.stack([Reader.still(e) for e in batch.envs])
    start = np.stack([e.unwrapped.agent_pos[::-1] for e in batch.envs])
    wrong = np.flatnonzero((grid != layouts.grid).any((1, 2)) | (start != layouts.start).any(1))
    if len(wrong):
        raise ValueError(
            f"{env} draws other grids or starts than these for seeds "
            f"{layouts.seeds[wrong[:5]].tolist()} (the same first view): {hint}"
        )
    return batch
