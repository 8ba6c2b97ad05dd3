"""The Gymnasium front end of the T-Maze, registered as ``TMaze-v0``
(``gym.make("dtpe.world.tmaze.env:TMaze-v0", size=16)`` imports this module first), one layout
of the batched stepper, with the T-Maze's pictures: `rgb` (an image) and `ansi` (text)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from dtpe.world.gym_env import LockstepEnv
from dtpe.world.tmaze import layouts as family
from dtpe.world.tmaze.picture import COLOURS, SYMBOLS
from dtpe.world.tmaze.rules import N_ACTIONS, N_CODES, BatchedTMaze, Layouts


class TMazeEnv(LockstepEnv):
    """
    ## Description
    A corridor of L cells, a junction at its end and two arms, one above and one below it. A
    cue on one corridor cell says which arm to take. Each `reset(seed=...)` draws a layout of
    size `size`: a corridor length from ceil(size * shortest) to size, a cue cell and a side
    (`dtpe.world.tmaze.layouts`), or replays a fixed `layout` given at construction.

    ## Action Space
    `Discrete(4)`: 0 right, 1 left, 2 up, 3 down. A move into a wall or off the grid leaves the
    agent in place: up and down along the corridor, left at its first cell, right at the
    junction. Up or down at the junction enters an arm.

    ## Observation Encoding
    `Box(0, 7, (1, 1), uint8)`, the agent's own cell only: 0 the corridor, 4 the junction, 5 the
    cue saying up, 6 saying down, where it shows: with `cue="start"` at the first step only,
    with `cue="anywhere"` whenever the agent stands on the cue's cell (one of the corridor's
    first half). No coordinate and no step count.

    ## Rewards
    `step_reward` on every step (a penalty), plus `goal_reward` on entering the cue's arm.

    ## Termination
    Terminated on entering either arm: the cue's arm succeeds (`info["success"]`), the other
    fails. Truncated after `size + slack` steps. A step after the episode's end leaves it as it
    ended, with reward 0 (the batched stepper's rule).

    ## Rendering
    `render_mode="rgb_array"`: a (3 * CELL_PIXELS, (size + 1) * CELL_PIXELS, 3) uint8 image of
    the whole T-Maze; `render_mode="ansi"`: its three rows as text (see `ansi`).
    """

    stepper = BatchedTMaze
    colours = COLOURS
    symbols = SYMBOLS
    flag = "seen"

    def __init__(
        self,
        size: int = 16,
        cue: str = "start",
        shortest: float = 1.0,
        slack: int = 8,
        step_reward: float = -0.01,
        goal_reward: float = 1.0,
        layout: Layouts | None = None,
        render_mode: str | None = None,
    ):
        self.band = family.Band(size, cue, shortest)
        if isinstance(slack, bool) or not isinstance(slack, int) or slack < 1:
            raise ValueError(f"slack must be an integer >= 1, got {slack!r}")
        if layout is not None and (
            len(layout) != 1 or layout.size != self.band.size or layout.once[0] != self.band.once
        ):
            # the observation is the view the layout's own cue rule gives: a layout of another
            # knob would play another T-Maze than the one asked for
            cues = [family.CUES[1 - int(once)] for once in layout.once]
            raise ValueError(
                f"layout must be one layout of size {self.band.size} at cue {cue}, got "
                f"{len(layout)} of size {layout.size} at cue {cues}"
            )
        self.size = self.band.size
        self.setup(self.size + slack, step_reward, goal_reward, layout, render_mode)
        self.observation_space = spaces.Box(0, N_CODES - 1, (1, 1), np.uint8)
        self.action_space = spaces.Discrete(N_ACTIONS)

    def draw(self) -> Layouts:
        return self.band.layouts(self.np_random.integers(0, self.band.total, 1))


gym.register(id="TMaze-v0", entry_point="dtpe.world.tmaze.env:TMazeEnv")
