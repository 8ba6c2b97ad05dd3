"""MiniGrid's movement, once for every MiniGrid world (DoorKey, SimpleCrossing, any to come):
the agent's headings and cell codes, turning and moving forward (minigrid 3.2.0:
`MiniGridEnv.step`, `DIR_TO_VEC`) restated over numpy and batched over states, and the
numbering of a world's states for the breadth-first search (world/search.py). Numpy alone, so
that a world's rules load without MiniGrid; reading MiniGrid's own envs is world/minigrid_view.py.

A MiniGrid world's state is a dataclass of (B, ...) arrays: the agent's `pos` (B, 2) int64
(row, col) and `heading` (B,) int64 (`Agent`), then whatever else its rules change (DoorKey's
carrying and door), which the search numbers as its `Flag`s. Cells are (row, col), MiniGrid's
(y, x); headings are MiniGrid's: 0 right, 1 down, 2 left, 3 up. A world's actions begin with
MiniGrid's first three, left, right and forward, under MiniGrid's numbers.

A world whose agent only walks (SimpleCrossing) takes its rules whole from here: it starts
facing right (`facing_right`), `walk`s, and is drawn `with_agent`; world/minigrid_world.py is
what a MiniGrid world declares."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import search
from dtpe.world.search import UNREACHABLE, CostToGo

HEADING_NAMES = ("right", "down", "left", "up")
N_HEADINGS = len(HEADING_NAMES)
HEADINGS = np.array([[0, 1], [1, 0], [0, -1], [-1, 0]], dtype=np.int64)
"""(row, col) step of each heading (MiniGrid's DIR_TO_VEC as (y, x))"""
LEFT, RIGHT, FORWARD = range(3)
MOVES = ("left", "right", "forward")
"""the first actions of every MiniGrid world, by their number there and here"""


def agent_names(carrying: str = "") -> tuple[str, ...]:
    """The names of the agent's four codes, one a heading (`carrying`: what it holds, if any:
    " with key"). A world's agent codes are `agent_code`'s: its first, plus the heading, plus
    N_HEADINGS if it carries something."""
    return tuple(f"agent {h}{carrying}" for h in HEADING_NAMES)


def agent_code(first: int, heading, carrying=False):
    """The code of a cell that holds the agent: `first` (the world's first agent code) + heading,
    + N_HEADINGS where it carries something."""
    return first + heading + N_HEADINGS * carrying


@dataclass
class Agent:
    """B agents: pos (B, 2) int64 (row, col); heading (B,) int64. A world whose rules change
    nothing else has this as its state; another adds its fields in a subclass."""

    pos: np.ndarray
    heading: np.ndarray


def in_front(layouts, state: Agent, layout_index=None):
    """(which, front, ahead) of B agents: each one's layout (`layout_index`, or the B layouts
    one each), the cell in front of it (B, 2) and what that layout's grid holds there (B,) int64,
    before anything the state changes (a door opened, a key picked up: the world writes those).
    `layout_index` (B,) selects each state's layout when many states share few layouts (the
    planner), instead of repeating the layouts."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    # Clipped only for the planner's states on border walls, which no episode reaches.
    front = np.clip(state.pos + HEADINGS[state.heading], 0, layouts.size - 1)
    return which, front, layouts.grid[which, front[:, 0], front[:, 1]].astype(np.int64)


def turn_or_forward(state: Agent, action, front, ahead, walkable) -> tuple[np.ndarray, ...]:
    """(pos, heading) of B agents after `action` (B,): left and right turn, forward enters
    `front` where `ahead` is one of the `walkable` codes (the objects whose `can_overlap` is
    true); any other action leaves both."""
    action = np.asarray(action)
    turn = np.select([action == LEFT, action == RIGHT], [-1, 1], 0)
    heading = (state.heading + turn) % N_HEADINGS
    moves = (action == FORWARD) & np.isin(ahead, walkable)
    return np.where(moves[:, None], front, state.pos), heading


@dataclass(frozen=True)
class Flag:
    """A field of a world's state besides the agent's cell and heading, as the search numbers
    it: `count` values from `lowest`, held as `dtype` (DoorKey's door: 3 codes from
    DOOR_LOCKED)."""

    name: str
    count: int
    lowest: int = 0
    dtype: type = np.int64


def cost_to_go(layouts, transition, ends, n_actions: int, state: type, flags=()) -> CostToGo:
    """Optimal steps to success from every (flags..., heading, row, col) of every layout:
    world/search.py's breadth-first search on the successors the world's `transition` (its
    rules) gives for each state and each of its `n_actions`, its terminal cells `ends`, `state`
    its state's class and `flags` (Flag) its other fields, numbered in that order. Some states
    are never reached (on walls), which costs nothing but memory."""
    b, n = len(layouts), layouts.size
    shape = (b, *(f.count for f in flags), N_HEADINGS, n, n)
    if np.prod(shape) > UNREACHABLE:
        raise ValueError(f"layouts: {b} of size {n} exceed int32 state indices; split them")

    def index(states, layout_index: np.ndarray) -> np.ndarray:
        numbered = (getattr(states, f.name).astype(np.int64) - f.lowest for f in flags)
        return np.ravel_multi_index(
            (layout_index, *numbered, states.heading, states.pos[:, 0], states.pos[:, 1]), shape
        )

    layout, *values, heading, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    every = state(
        pos=np.stack([row, col], 1),
        heading=heading,
        **{f.name: (v + f.lowest).astype(f.dtype) for f, v in zip(flags, values)},
    )
    return search.cost_to_go(transition, ends, layouts, every, layout, index, n_actions)


def facing_right(layouts) -> Agent:
    """`reset`'s agents: each at its layout's `start`, facing right."""
    return Agent(layouts.start.copy(), np.zeros(len(layouts), dtype=np.int64))


def walk(layouts, state: Agent, action, walkable, layout_index=None) -> Agent:
    """One step of each of B agents that only turn and move forward onto `walkable` codes
    (`layout_index`: as in `in_front`)."""
    _, front, ahead = in_front(layouts, state, layout_index)
    return Agent(*turn_or_forward(state, action, front, ahead, walkable))


def with_agent(grid: np.ndarray, state: Agent, first: int) -> np.ndarray:
    """Full grids (B, N, N): `grid` with each agent's code (`agent_code` from `first`) on its
    cell."""
    obs = grid.copy()
    obs[np.arange(len(obs)), state.pos[:, 0], state.pos[:, 1]] = agent_code(first, state.heading)
    return obs
