"""The rules of MiniGrid's SimpleCrossing (minigrid 3.2.0: `CrossingEnv` with walls for
obstacles, `MiniGridEnv.step`) restated over numpy and batched over states, so that the planner
can search every state of many layouts at once.

A layout is what `reset` draws: the border and `num_crossings` wall lines across the room, each
with one opening, the goal in the bottom-right corner (N-2, N-2); the agent starts in the
top-left corner (1, 1) facing right. A state is (cell, heading): nothing else ever changes.

Cells are (row, col), MiniGrid's (y, x). Headings are MiniGrid's: 0 right, 1 down, 2 left, 3 up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, GOAL = range(3)
AGENT = 3
"""the agent's cell holds AGENT + heading (codes 3..6); it stands only on empty cells or the goal"""
N_CODES = 7
HEADING_NAMES = ("right", "down", "left", "up")
CODE_NAMES = ("empty", "wall", "goal", *(f"agent {h}" for h in HEADING_NAMES))
HEADINGS = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], dtype=np.int64)
"""(row, col) step of each heading (MiniGrid's DIR_TO_VEC as (y, x))"""

LEFT, RIGHT, FORWARD = range(3)
ACTION_NAMES = ("left", "right", "forward")
N_ACTIONS = len(ACTION_NAMES)
MINIGRID_ACTIONS = np.array([0, 1, 2], dtype=np.int64)
"""MiniGrid's number of each of our actions. Pickup, drop, toggle and done are left out: in
SimpleCrossing there is nothing to pick up or toggle, and done does nothing."""
VOCABULARY = Vocabulary(
    codes=CODE_NAMES, actions=ACTION_NAMES, agent=tuple(range(AGENT, N_CODES)), wall=WALL
)
WALKABLE = np.array([EMPTY, GOAL])
"""codes that forward enters (the objects whose `can_overlap` is true)"""


MIN_SIZE = 7
"""the smallest room with four wall lines to choose crossings from (MiniGrid's rivers lie on the
even rows and columns inside the border), so that up to 4 crossings fit"""


def check_size(size) -> int:
    """`size` as an int; a ValueError unless it is an odd integer of at least MIN_SIZE
    (CrossingEnv asserts an odd size)."""
    size = grids.check_size(size, MIN_SIZE, "SimpleCrossing's")
    if size % 2 == 0:
        raise ValueError(f"grid size {size} is even: SimpleCrossing's sizes are odd")
    return size


@dataclass
class Layouts(grids.SeededLayouts):
    """B layouts of one size: grid (B, N, N) uint8 of EMPTY, WALL and GOAL (no agent); start
    (B, 2) int64 (row, col); seeds (B,) int64, the `reset` seed each was drawn with."""

    grid: np.ndarray
    start: np.ndarray
    seeds: np.ndarray

    def __post_init__(self):
        self.goal = grids.locate(self.grid, GOAL)


@dataclass
class State:
    """B states: pos (B, 2) int64 (row, col); heading (B,) int64."""

    pos: np.ndarray
    heading: np.ndarray


def initial_state(layouts: Layouts) -> State:
    """`reset`'s agent: at its start, facing right."""
    return State(layouts.start.copy(), np.zeros(len(layouts), dtype=np.int64))


def transition(
    layouts: Layouts, state: State, action, layout_index=None
) -> tuple[State, np.ndarray]:
    """One step of each of B states under our `action` (B,) (0..2): returns (state, at_goal).
    `layout_index` (B,) selects each state's layout when many states share few layouts (the
    planner), instead of repeating the layouts."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    action = np.asarray(action)
    # Clipped only for the planner's states on border walls, which no episode reaches.
    front = np.clip(state.pos + HEADINGS[state.heading], 0, layouts.size - 1)
    ahead = layouts.grid[which, front[:, 0], front[:, 1]]
    turn = np.select([action == LEFT, action == RIGHT], [-1, 1], 0)
    heading = (state.heading + turn) % 4
    moves = (action == FORWARD) & np.isin(ahead, WALKABLE)
    pos = np.where(moves[:, None], front, state.pos)
    return State(pos, heading), (pos == layouts.goal[which]).all(1)


def render(layouts: Layouts, state: State) -> np.ndarray:
    """Full observations (B, N, N) uint8: the layout with the agent's code on its cell."""
    obs = layouts.grid.copy()
    obs[np.arange(len(obs)), state.pos[:, 0], state.pos[:, 1]] = AGENT + state.heading
    return obs
