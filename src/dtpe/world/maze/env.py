"""The Gymnasium front end of the Key-Door maze, registered as ``KeyDoorMaze-v0``
(``gym.make("dtpe.world.maze.env:KeyDoorMaze-v0", size=12)`` imports this module first), one
layout of the batched stepper, with the maze's pictures: `rgb` (an image) and `ansi` (text)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dtpe.world.gym_env import LockstepEnv
from dtpe.world.maze import layouts
from dtpe.world.maze.picture import COLOURS, SYMBOLS
from dtpe.world.maze.rules import N_ACTIONS, N_CODES, BatchedMaze, Layouts


class KeyDoorMazeEnv(LockstepEnv):
    """
    ## Description
    An N x N grid split by a wall line into two rooms joined by a locked door. The agent starts
    in the first room with the key; the goal lies in the second. Pick up the key, pass the
    door, reach the goal. Interior walls are random; every layout is solvable (BFS-checked).
    Each `reset(seed=...)` draws a new layout from the layout family (`dtpe.world.maze.layouts`), or
    replays a fixed `layout` given at construction.

    ## Action Space
    `Discrete(4)`: 0 up, 1 down, 2 left, 3 right. A move into a wall, the border or a closed
    door leaves the agent in place. Entering the key's cell picks the key up.

    ## Observation Encoding
    `Box(0, 5, (N, N), uint8)`, the full grid: 0 empty, 1 wall, 2 agent, 3 goal, 4 key,
    5 door. The key leaves the grid once held, so the grid alone tells whether it is held.

    ## Rewards
    `step_reward` on every step (a penalty), plus `goal_reward` on reaching the goal.

    ## Termination
    Terminated on reaching the goal; truncated after `cap_factor * N` steps. A step after the
    episode's end leaves it as it ended, with reward 0 (the batched stepper's rule).

    ## Rendering
    `render_mode="rgb_array"`: an (N * CELL_PIXELS, N * CELL_PIXELS, 3) uint8 image;
    `render_mode="ansi"`: one line of text per row (see `ansi`).
    """

    stepper = BatchedMaze
    colours = COLOURS
    symbols = SYMBOLS
    flag = "has_key"

    def __init__(
        self,
        size: int = 8,
        wall_density: float = 0.1,
        cap_factor: int = 5,
        step_reward: float = -0.01,
        goal_reward: float = 1.0,
        layout: Layouts | None = None,
        render_mode: str | None = None,
    ):
        self.size = layouts.check_size(size)
        if layout is not None and (len(layout) != 1 or layout.size != self.size):
            # The observation space is sized from `size`; a mismatched layout would break it
            # silently.
            raise ValueError(
                f"layout must be one layout of side {self.size}, "
                f"got {len(layout)} of side {layout.size}"
            )
        self.setup(cap_factor * self.size, step_reward, goal_reward, layout, render_mode)
        self.wall_density = wall_density
        self.observation_space = spaces.Box(0, N_CODES - 1, (self.size, self.size), np.uint8)
        self.action_space = spaces.Discrete(N_ACTIONS)

    def draw(self) -> Layouts:
        return layouts.generate(self.size, 1, self.np_random, self.wall_density)

    @property
    def pos(self):
        """(1, 2) the agent's (row, col)"""
        return self.game.state.pos


gym.register(id="KeyDoorMaze-v0", entry_point="dtpe.world.maze.env:KeyDoorMazeEnv")
