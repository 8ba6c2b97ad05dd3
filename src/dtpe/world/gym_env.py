"""What every world's Gymnasium front end shares: one layout of the world's lockstep stepper as a
`gymnasium.Env`, drawn anew at each `reset` or fixed at construction, pictured in the world's
colours (`rgb`) and symbols (`ansi`). A world's env.py states only what is its own: its knobs, how
it draws a layout, the stepper, its pictures' colours and symbols and the state's flag its info
reports (world/maze/env.py, world/tmaze/env.py)."""

from __future__ import annotations

from typing import ClassVar

import gymnasium as gym
import numpy as np

from dtpe.world import pictures

RENDER_MODES = ["rgb_array", "ansi"]


class LockstepEnv(gym.Env):
    """One episode of `stepper` (world/lockstep.py) at a time. A subclass sets the class
    attributes and, in its __init__, calls `setup` and then `draw` on reset."""

    metadata = {"render_modes": RENDER_MODES, "render_fps": 4}
    stepper: ClassVar[type]
    colours: ClassVar[np.ndarray]
    """(codes, 3) uint8 rgb of each cell code"""
    symbols: ClassVar[dict[int, str]]
    """the character of each cell code, for `ansi`"""
    flag: ClassVar[str]
    """the state's field that `info` reports beside success (the maze's has_key)"""

    def setup(self, cap: int, step_reward: float, goal_reward: float, layout, render_mode):
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode {render_mode!r} is not one of {RENDER_MODES}")
        self.render_mode, self.cap, self.fixed_layout = render_mode, cap, layout
        self.step_reward, self.goal_reward = step_reward, goal_reward

    def draw(self):
        """A layout of the env's own, drawn with `self.np_random`."""
        raise NotImplementedError

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        layout = self.fixed_layout or self.draw()
        self.game = self.stepper(layout, self.cap, self.step_reward, self.goal_reward)
        return self.game.observe()[0], {}

    def step(self, action):
        obs, reward, terminated, truncated = self.game.step(np.array([int(action)]))
        info = {
            "success": bool(self.game.success[0]),
            self.flag: bool(getattr(self.game.state, self.flag)[0]),
        }
        return obs[0], float(reward[0]), bool(terminated[0]), bool(truncated[0]), info

    def rgb(self, grid: np.ndarray) -> np.ndarray:
        """A grid of codes -> an image, CELL_PIXELS a cell, uint8 rgb."""
        return pictures.rgb(grid, self.colours)

    def ansi(self, grid: np.ndarray) -> str:
        """A grid of codes -> one line of `symbols` per row."""
        return "".join("".join(self.symbols[int(c)] for c in row) + "\n" for row in grid)

    def render(self):
        if self.render_mode == "rgb_array":
            return self.rgb(self.game.picture()[0])
        if self.render_mode == "ansi":
            return self.ansi(self.game.picture()[0])
        return None
