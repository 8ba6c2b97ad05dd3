"""The rules of MiniGrid's DoorKey (minigrid 3.2.0: `MiniGridEnv.step`, `core/world_object.py`)
restated over numpy arrays and batched over states, so that the planner can search every state
of many layouts at once without MiniGrid's object-per-cell Python.

A layout is what `reset` draws: a static grid (walls, the goal, the key where it lies, the door
locked) with the agent's start cell and heading. A state is (cell, heading, carrying, door). The
key leaves the grid once picked up and never returns (drop is not an action here), so besides
the agent only `carrying` and the door's code change.

The agent moves as in every MiniGrid world (world/minigrid_moves.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids, minigrid_moves
from dtpe.world.lockstep import Ends
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, GOAL, KEY, DOOR_LOCKED, DOOR_CLOSED, DOOR_OPEN = range(7)
AGENT = 7
"""the agent's cell holds AGENT + heading + 4 * carrying (codes 7..14). What it hides is known:
the agent stands only on empty cells, the goal (fixed at (N-2, N-2)) or the open door (the only
gap in the wall column; a door cannot be closed from inside it)"""
N_CODES = 15
CODE_NAMES = (
    "empty",
    "wall",
    "goal",
    "key",
    "door locked",
    "door closed",
    "door open",
    *minigrid_moves.agent_names(),
    *minigrid_moves.agent_names(" with key"),
)
"""MiniGrid's names of its objects and their states (world/minigrid_view.py reads them by name)"""

PICKUP, TOGGLE = 3, 4
"""our numbers of the actions after MiniGrid's moves (minigrid_moves' LEFT, RIGHT, FORWARD)"""
ACTION_NAMES = (*minigrid_moves.MOVES, "pickup", "toggle")
N_ACTIONS = len(ACTION_NAMES)
MINIGRID_ACTIONS = np.array([0, 1, 2, 3, 5], dtype=np.int64)
"""MiniGrid's number of each of our actions. MiniGrid's drop (4) and done (6) are left out of the
action set: no shortest path drops the key (there is nothing else to carry), and done does
nothing in DoorKey."""
VOCABULARY = Vocabulary(
    codes=CODE_NAMES, actions=ACTION_NAMES, agent=tuple(range(AGENT, N_CODES)), wall=WALL
)
MIN_SIZE = 5
"""DoorKeyEnv needs a wall column with a room of at least one column on each side"""


def check_size(size) -> int:
    return grids.check_size(size, MIN_SIZE, "DoorKey's")


WALKABLE = np.array([EMPTY, GOAL, DOOR_OPEN])
"""codes that forward enters (the objects whose `can_overlap` is true)"""
ENDS = Ends()
"""MiniGrid's DoorKey ends only on the goal; a failed episode at its step limit"""


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
class State(minigrid_moves.Agent):
    """B states: pos (B, 2) int64 (row, col); heading (B,) int64; carrying (B,) bool; door (B,)
    int64, one of DOOR_LOCKED, DOOR_CLOSED, DOOR_OPEN."""

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


def transition(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """One step of each of B states under our `action` (B,) (0..4).
    The agent turns and moves as in every MiniGrid world, through the door once it is open;
    pickup takes the key in front, toggle opens or closes the door in front (a locked one opens
    only for the key's carrier: minigrid 3.2.0's `Door.toggle`). `layout_index`: as in
    minigrid_moves.in_front."""
    which, front, ahead = minigrid_moves.in_front(layouts, state, layout_index)
    at_door = (front == layouts.door[which]).all(1)
    ahead = np.where(at_door, state.door, ahead)
    ahead = np.where((front == layouts.key[which]).all(1) & state.carrying, EMPTY, ahead)
    action = np.asarray(action)
    pos, heading = minigrid_moves.turn_or_forward(state, action, front, ahead, WALKABLE)
    carrying = state.carrying | ((action == PICKUP) & (ahead == KEY))
    # Door.toggle: a locked door opens only for the key's carrier; an unlocked one flips.
    toggled = np.select(
        [state.door == DOOR_OPEN, (state.door == DOOR_LOCKED) & ~state.carrying],
        [DOOR_CLOSED, DOOR_LOCKED],
        DOOR_OPEN,
    )
    door = np.where((action == TOGGLE) & at_door, toggled, state.door)
    return State(pos, heading, carrying, door)


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
    agent = minigrid_moves.agent_code(AGENT, state.heading, state.carrying)
    obs[rows, state.pos[:, 0], state.pos[:, 1]] = agent
    return obs
