"""The rules of MiniGrid's DoorKey (minigrid 3.2.0: `MiniGridEnv.step`, `core/world_object.py`)
restated over numpy arrays and batched over states, so that the planner can search every state
of many layouts at once without MiniGrid's object-per-cell Python.

A layout is what `reset` draws: a static grid (walls, the goal, the key where it lies, the door
locked) with the agent's start cell and heading. A state is (cell, heading, carrying, door). The
key leaves the grid once picked up and never returns (drop is not an action here), so besides
the agent only `carrying` and the door's code change.

Cells are (row, col), MiniGrid's (y, x). Headings are MiniGrid's: 0 right, 1 down, 2 left, 3 up.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, GOAL, KEY, DOOR_LOCKED, DOOR_CLOSED, DOOR_OPEN = range(7)
AGENT = 7
"""the agent's cell holds AGENT + heading + 4 * carrying (codes 7..14). What it hides is known:
the agent stands only on empty cells, the goal (fixed at (N-2, N-2)) or the open door (the only
gap in the wall column; a door cannot be closed from inside it)"""
N_CODES = 15
HEADING_NAMES = ("right", "down", "left", "up")
CODE_NAMES = (
    "empty",
    "wall",
    "goal",
    "key",
    "door locked",
    "door closed",
    "door open",
    *(f"agent {h}" for h in HEADING_NAMES),
    *(f"agent {h} with key" for h in HEADING_NAMES),
)
HEADINGS = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], dtype=np.int64)
"""(row, col) step of each heading (MiniGrid's DIR_TO_VEC as (y, x))"""

LEFT, RIGHT, FORWARD, PICKUP, TOGGLE = range(5)
ACTION_NAMES = ("left", "right", "forward", "pickup", "toggle")
N_ACTIONS = len(ACTION_NAMES)
MINIGRID_ACTIONS = np.array([0, 1, 2, 3, 5], dtype=np.int64)
"""MiniGrid's number of each of our actions. MiniGrid's drop (4) and done (6) are left out of the
action set: no shortest path drops the key (there is nothing else to carry), and done does
nothing in DoorKey."""
VOCABULARY = Vocabulary(
    codes=CODE_NAMES, actions=ACTION_NAMES, agent=tuple(range(AGENT, N_CODES)), wall=WALL
)
WALKABLE = np.array([EMPTY, GOAL, DOOR_OPEN])
"""codes that forward enters (the objects whose `can_overlap` is true)"""


@dataclass
class Layouts(grids.SeededLayouts):
    """B DoorKey layouts of one size: grid (B, N, N) uint8 of EMPTY, WALL, GOAL, KEY and
    DOOR_LOCKED (no agent); start (B, 2) int64 (row, col); heading (B,) int64; seeds (B,) int64,
    the `reset` seed each was drawn with."""

    grid: np.ndarray
    start: np.ndarray
    heading: np.ndarray
    seeds: np.ndarray

    def __post_init__(self):
        self.key = grids.locate(self.grid, KEY)
        self.door = grids.locate(self.grid, DOOR_LOCKED)
        self.goal = grids.locate(self.grid, GOAL)


@dataclass
class State:
    """B states: pos (B, 2) int64 (row, col); heading (B,) int64; carrying (B,) bool; door (B,)
    int64, one of DOOR_LOCKED, DOOR_CLOSED, DOOR_OPEN."""

    pos: np.ndarray
    heading: np.ndarray
    carrying: np.ndarray
    door: np.ndarray


def initial_state(layouts: Layouts) -> State:
    b = len(layouts)
    return State(
        layouts.start.copy(),
        layouts.heading.copy(),
        np.zeros(b, dtype=bool),
        np.full(b, DOOR_LOCKED, dtype=np.int64),
    )


def transition(
    layouts: Layouts, state: State, action, layout_index=None
) -> tuple[State, np.ndarray]:
    """One step of each of B states under our `action` (B,) (0..4): returns (state, at_goal).
    `layout_index` (B,) selects each state's layout when many states share few layouts (the
    planner), instead of repeating the layouts."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    action = np.asarray(action)
    # Clipped only for the planner's states on border walls, which no episode reaches.
    front = np.clip(state.pos + HEADINGS[state.heading], 0, layouts.size - 1)
    ahead = layouts.grid[which, front[:, 0], front[:, 1]].astype(np.int64)
    at_door = (front == layouts.door[which]).all(1)
    ahead = np.where(at_door, state.door, ahead)
    ahead = np.where((front == layouts.key[which]).all(1) & state.carrying, EMPTY, ahead)

    turn = np.select([action == LEFT, action == RIGHT], [-1, 1], 0)
    heading = (state.heading + turn) % 4
    moves = (action == FORWARD) & np.isin(ahead, WALKABLE)
    pos = np.where(moves[:, None], front, state.pos)
    carrying = state.carrying | ((action == PICKUP) & (ahead == KEY))
    # Door.toggle: a locked door opens only for the key's carrier; an unlocked one flips.
    toggled = np.select(
        [state.door == DOOR_OPEN, (state.door == DOOR_LOCKED) & ~state.carrying],
        [DOOR_CLOSED, DOOR_LOCKED],
        DOOR_OPEN,
    )
    door = np.where((action == TOGGLE) & at_door, toggled, state.door)
    at_goal = (pos == layouts.goal[which]).all(1)
    return State(pos, heading, carrying, door), at_goal


def render(layouts: Layouts, state: State, layout_index=None) -> np.ndarray:
    """Full observations (B, N, N) uint8: the layout with the door's code, without the key once
    carried, and the agent's code on its cell."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    obs = layouts.grid[which].copy()
    rows = np.arange(len(obs))
    key = layouts.key[which]
    obs[rows, key[:, 0], key[:, 1]] = np.where(state.carrying, EMPTY, KEY)
    door = layouts.door[which]
    obs[rows, door[:, 0], door[:, 1]] = state.door
    obs[rows, state.pos[:, 0], state.pos[:, 1]] = AGENT + state.heading + 4 * state.carrying
    return obs
