"""The Gymnasium front end of the Key-Door maze, registered as ``KeyDoorMaze-v0``
(``gym.make("dtpe.world.maze.env:KeyDoorMaze-v0", size=12)`` imports this module first), one
layout of the batched stepper, with the maze's pictures: `rgb` (an image) and `ansi` (text)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dtpe.world import pictures
from dtpe.world.maze import layouts
from dtpe.world.maze.picture import COLOURS, SYMBOLS
from dtpe.world.maze.rules import N_ACTIONS, N_CODES, BatchedMaze, Layouts


def rgb(obs: np.ndarray) -> np.ndarray:
    """(N, N) grid of codes -> (N * CELL_PIXELS, N * CELL_PIXELS, 3) uint8 image."""
    return pictures.rgb(obs, COLOURS)


def ansi(obs: np.ndarray) -> str:
    """(N, N) grid of codes -> N lines of N characters (. empty, # wall, A agent, G goal, K key,
    D door)."""
    return "".join("".join(SYMBOLS[int(c)] for c in row) + "\n" for row in obs)


class KeyDoorMazeEnv(gym.Env):
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

    metadata = {"render_modes": ["rgb_array", "ansi"], "render_fps": 4}

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
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r} is not one of {self.metadata['render_modes']}"
            )
        self.render_mode = render_mode
        self.size = layouts.check_size(size)
        if layout is not None and (len(layout) != 1 or layout.size != self.size):
            # The observation space is sized from `size`; a mismatched layout would break it
            # silently.
            raise ValueError(
                f"layout must be one layout of side {self.size}, "
                f"got {len(layout)} of side {layout.size}"
            )
        self.wall_density, self.cap = wall_density, cap_factor * self.size
        self.step_reward, self.goal_reward = step_reward, goal_reward
        self.fixed_layout = layout
        self.observation_space = spaces.Box(0, N_CODES - 1, (self.size, self.size), np.uint8)
        self.action_space = spaces.Discrete(N_ACTIONS)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        layout = self.fixed_layout or layouts.generate(
            self.size, 1, self.np_random, self.wall_density
        )
        self.maze = BatchedMaze(layout, self.cap, self.step_reward, self.goal_reward)
        return self.maze.observe()[0], {}

    @property
    def pos(self) -> np.ndarray:
        """(1, 2) the agent's (row, col)"""
        return self.maze.state.pos

    def step(self, action):
        obs, reward, terminated, truncated = self.maze.step(np.array([int(action)]))
        return (
            obs[0],
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            {"has_key": bool(self.maze.state.has_key[0])},
        )

    def render(self):
        if self.render_mode == "rgb_array":
            return rgb(self.maze.observe()[0])
        if self.render_mode == "ansi":
            return ansi(self.maze.observe()[0])
        return None


gym.register(id="KeyDoorMaze-v0", entry_point="dtpe.world.maze.env:KeyDoorMazeEnv")
