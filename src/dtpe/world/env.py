"""The Gymnasium front end of the Key-Door maze, registered as ``KeyDoorMaze-v0``
(``gym.make("dtpe.world.env:KeyDoorMaze-v0", size=12)`` imports this module first), one layout of
the batched stepper; `GymVectorBatch`, a Gymnasium vector env of it played as a batch of
episodes, as the batched stepper plays them; and the maze's pictures: `rgb` (an image, also used
by the explorer's animations) and `ansi` (text)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dtpe.world import layouts
from dtpe.world.maze import (
    AGENT,
    DOOR,
    EMPTY,
    GOAL,
    KEY,
    N_ACTIONS,
    N_CODES,
    WALL,
    BatchedMaze,
    Layouts,
)

CELL_PIXELS = 8
"""side of one cell in an rgb image: 160 pixels for a 20 x 20 maze"""
COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (31, 119, 180),  # agent
        (44, 160, 44),  # goal
        (242, 183, 1),  # key
        (140, 86, 75),  # door
    ],
    dtype=np.uint8,
)
"""rgb of each cell code, the colours of figures.CODE_STYLE"""
SYMBOLS = {EMPTY: ".", WALL: "#", AGENT: "A", GOAL: "G", KEY: "K", DOOR: "D"}
"""character of each cell code in the ansi picture"""


def rgb(obs: np.ndarray) -> np.ndarray:
    """(N, N) grid of codes -> (N * CELL_PIXELS, N * CELL_PIXELS, 3) uint8 image."""
    return COLOURS[obs].repeat(CELL_PIXELS, 0).repeat(CELL_PIXELS, 1)


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
    Each `reset(seed=...)` draws a new layout from the layout family (`dtpe.world.layouts`), or
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
        return self.maze.pos

    def step(self, action):
        obs, reward, terminated, truncated = self.maze.step(np.array([int(action)]))
        return (
            obs[0],
            float(reward[0]),
            bool(terminated[0]),
            bool(truncated[0]),
            {"has_key": bool(self.maze.has_key[0])},
        )

    def render(self):
        if self.render_mode == "rgb_array":
            return rgb(self.maze.observe()[0])
        if self.render_mode == "ansi":
            return ansi(self.maze.observe()[0])
        return None


class GymVectorBatch:
    """A Gymnasium vector env of KeyDoorMaze-v0 envs as one batch of episodes, stepped as
    BatchedMaze steps its mazes (the BatchedEnv of steps/rollout.py): done, success and t (B,)
    per episode, and once an episode has ended its actions are ignored and its reward is 0. A
    vector env resets a finished env by itself (autoreset, on the next step in Gymnasium's
    default mode) and plays on; whatever the mode, what it plays after an episode's end belongs
    to no episode here. Other worlds' vector envs play through it too
    (world/doorkey/minigrid_env.py)."""

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
        obs, reward, terminated, truncated, _ = self.vector_env.step(np.asarray(actions))
        terminated, truncated = active & terminated, active & truncated
        self.t += active
        self.success |= terminated
        self.done |= terminated | truncated
        return obs, np.where(active, reward, 0.0), terminated, truncated


gym.register(id="KeyDoorMaze-v0", entry_point="dtpe.world.env:KeyDoorMazeEnv")
