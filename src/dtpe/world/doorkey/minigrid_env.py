"""Policies act in MiniGrid itself: a batch of MiniGrid's `DoorKeyEnv(size=N)`, one env per
layout, each reset with the layout's seed, seen through `DoorKeyView` (world/minigrid_view.py):
the full grid in this world's codes, our five actions, the project's rewards. Success is the
goal (`rules.ENDS`), where MiniGrid terminates (DoorKey ends only there), within MiniGrid's step
limit (`truncated` at max_steps = 10 N^2)."""

from __future__ import annotations

import numpy as np
from minigrid.envs import DoorKeyEnv

from dtpe.world.doorkey.layouts import READER
from dtpe.world.doorkey.rules import (
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    EMPTY,
    ENDS,
    KEY,
    MINIGRID_ACTIONS,
    Layouts,
    initial_state,
    render,
)
from dtpe.world.gym_batch import GymBatch
from dtpe.world.minigrid_view import ProjectView, fully_observed

FullyObservedDoorKey = fully_observed(DoorKeyEnv)


class DoorKeyView(ProjectView):
    """DoorKey through this world's codes and its actions (left, right, forward, pickup, toggle)."""

    reader, minigrid_actions, ends = READER, MINIGRID_ACTIONS, ENDS

    def still(self) -> np.ndarray:
        # The key and the door change too: `draw` writes them from the env's own state.
        grid = super().still()
        self.door = tuple(np.argwhere(grid == DOOR_LOCKED)[0])  # (row, col)
        self.key = tuple(np.argwhere(grid == KEY)[0])
        return grid

    def draw(self, obs: np.ndarray) -> None:
        env = self.env.unwrapped
        if env.carrying is not None:
            obs[self.key] = EMPTY
        door = env.grid.get(self.door[1], self.door[0])
        obs[self.door] = (
            DOOR_OPEN if door.is_open else DOOR_LOCKED if door.is_locked else DOOR_CLOSED
        )
        super().draw(obs)  # the agent


def minigrid_batch(layouts: Layouts, step_reward: float, goal_reward: float) -> GymBatch:
    """The layouts as a batch of MiniGrid episodes. Raises ValueError if a layout's seed does
    not draw that layout (a layout not from `reset(seed)`, or another MiniGrid's generator)."""
    size = layouts.size
    return DoorKeyView.batch(
        lambda: FullyObservedDoorKey(size=size),
        layouts,
        render(layouts, initial_state(layouts)),
        step_reward,
        goal_reward,
        f"MiniGrid's DoorKeyEnv({size})",
        "were they made by another minigrid version?",
    )
