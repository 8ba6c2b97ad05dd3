"""The Gymnasium front end of the Key-Door maze, registered as ``KeyDoorMaze-v0``."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dtpe import layouts
from dtpe.maze import N_ACTIONS, N_CODES, Layouts, render, transition


class KeyDoorMazeEnv(gym.Env):
    """
    ## Description
    An N x N grid split by a wall line into two rooms joined by a locked door. The agent starts
    in the first room with the key; the goal lies in the second. Pick up the key, pass the
    door, reach the goal. Interior walls are random; every layout is solvable (BFS-checked).
    Each `reset(seed=...)` draws a new layout from the layout family (`dtpe.layouts`), or
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
    Terminated on reaching the goal; truncated after `cap_factor * N` steps.
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        size: int = 8,
        wall_density: float = 0.2,
        cap_factor: int = 5,
        step_reward: float = -0.01,
        goal_reward: float = 1.0,
        layout: Layouts | None = None,
    ):
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
        self.layout = self.fixed_layout or layouts.generate(
            self.size, 1, self.np_random, self.wall_density
        )
        self.pos = self.layout.start.copy()
        self.has_key = np.zeros(1, dtype=bool)
        self.t = 0
        return self._obs(), {}

    def _obs(self) -> np.ndarray:
        return render(self.layout.grid, self.pos, self.has_key)[0]

    def step(self, action):
        self.pos, self.has_key, at_goal = transition(
            self.layout.grid, self.pos, self.has_key, np.array([int(action)])
        )
        self.t += 1
        terminated = bool(at_goal[0])
        truncated = not terminated and self.t >= self.cap
        reward = self.step_reward + self.goal_reward * terminated
        return self._obs(), float(reward), terminated, truncated, {"has_key": bool(self.has_key[0])}


gym.register(id="KeyDoorMaze-v0", entry_point="dtpe.env:KeyDoorMazeEnv")
