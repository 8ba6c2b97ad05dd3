"""The rules of the Key-Door maze, once, for every front end (the Gymnasium env, data
generation, evaluation, the planner), batched over B mazes of one size in single numpy calls.

A maze is a static layout (walls, door, key, goal; no agent) plus a state (agent cell,
holds-key flag). The observation renders the state into the layout: the key leaves the grid
once picked up, so the grid alone tells whether the agent holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids
from dtpe.world.lockstep import Ends, Lockstep
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, AGENT, GOAL, KEY, DOOR = range(6)
N_CODES = 6
ACTION_NAMES = ("up", "down", "left", "right")
MOVES = np.array([[-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)  # (row, col) per action
N_ACTIONS = len(MOVES)
VOCABULARY = Vocabulary(
    codes=("empty", "wall", "agent", "goal", "key", "door"),
    actions=ACTION_NAMES,
    agent=(AGENT,),
    wall=WALL,
)


@dataclass
class Layouts(grids.Layouts):
    """B layouts of one size. grid (B, N, N) uint8 holds walls, door, key and goal;
    start and goal are (B, 2) int64 (row, col); ids (B,) int64."""

    grid: np.ndarray
    start: np.ndarray
    ids: np.ndarray

    def __post_init__(self):
        self.goal = grids.locate(self.grid, GOAL)


@dataclass
class State:
    """B states: pos (B, 2) int64 (row, col); has_key (B,) bool."""

    pos: np.ndarray
    has_key: np.ndarray


def initial_state(layouts: Layouts) -> State:
    return State(layouts.start.copy(), np.zeros(len(layouts), dtype=bool))


ENDS = Ends()
"""an episode ends on the goal, in success; a failed one at the step cap"""


def transition(grid, pos, has_key, action, layout_index=None):
    """One move for each of B agents: returns (pos, has_key).

    A move into the border, a wall or a door without the key leaves the agent in place;
    entering the key's cell picks the key up. `layout_index` (B,) selects each agent's grid
    when many states share few layouts (the planner), instead of repeating the grids.
    """
    n = grid.shape[-1]
    which = np.arange(len(pos)) if layout_index is None else layout_index
    target = pos + MOVES[action]  # (B, 2)
    inside = ((target >= 0) & (target < n)).all(1)
    target = np.clip(target, 0, n - 1)
    cell = grid[which, target[:, 0], target[:, 1]]
    blocked = ~inside | (cell == WALL) | ((cell == DOOR) & ~has_key)
    pos = np.where(blocked[:, None], pos, target)
    cell = np.where(blocked, grid[which, pos[:, 0], pos[:, 1]], cell)
    return pos, has_key | (cell == KEY)


def step(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """`transition` on states."""
    return State(*transition(layouts.grid, state.pos, state.has_key, action, layout_index))


def render(grid, pos, has_key) -> np.ndarray:
    """Observations (B, N, N) uint8: the layout, without the key once held, with the agent."""
    obs = grid.copy()
    rows = np.arange(len(grid))
    key_cells = obs == KEY
    key_cells &= has_key[:, None, None]
    obs[key_cells] = EMPTY
    obs[rows, pos[:, 0], pos[:, 1]] = AGENT
    return obs


def observe(layouts: Layouts, state: State) -> np.ndarray:
    return render(layouts.grid, state.pos, state.has_key)


class BatchedMaze(Lockstep):
    """B mazes of one size stepped in lockstep (world/lockstep.py's rules of an episode)."""

    initial_state = staticmethod(initial_state)
    transition = staticmethod(step)
    render = staticmethod(observe)
    ends = ENDS
