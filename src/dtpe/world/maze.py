"""The rules of the Key-Door world, once, for every front end (the Gymnasium env, data
generation, evaluation, the planner), and the batched stepper that applies them to B mazes
of one size in single numpy calls.

A maze is a static layout (walls, door, key, goal; no agent) plus a state (agent cell,
holds-key flag). The observation renders the state into the layout: the key leaves the grid
once picked up, so the grid alone tells whether the agent holds it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world.grids import locate
from dtpe.world.lockstep import Lockstep
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
class Layouts:
    """B layouts of one size. grid (B, N, N) uint8 holds walls, door, key and goal;
    start, key and goal are (B, 2) int64 (row, col); ids (B,) int64."""

    grid: np.ndarray
    start: np.ndarray
    ids: np.ndarray

    def __post_init__(self):
        self.goal = locate(self.grid, GOAL)

    def __len__(self) -> int:
        return len(self.grid)

    @property
    def size(self) -> int:
        return self.grid.shape[1]

    def subset(self, index) -> "Layouts":
        return Layouts(self.grid[index], self.start[index], self.ids[index])


def transition(grid, pos, has_key, action, layout_index=None):
    """One move for each of B agents: returns (pos, has_key, at_goal).

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
    return pos, has_key | (cell == KEY), cell == GOAL


def render(grid, pos, has_key) -> np.ndarray:
    """Observations (B, N, N) uint8: the layout, without the key once held, with the agent."""
    obs = grid.copy()
    rows = np.arange(len(grid))
    key_cells = obs == KEY
    key_cells &= has_key[:, None, None]
    obs[key_cells] = EMPTY
    obs[rows, pos[:, 0], pos[:, 1]] = AGENT
    return obs


class BatchedMaze(Lockstep):
    """B mazes of one size stepped in lockstep (world/lockstep.py's rules of an episode). The
    state: each agent's cell and whether it holds the key."""

    def start_state(self) -> None:
        self.pos = self.layouts.start.copy()
        self.has_key = np.zeros(len(self.layouts), dtype=bool)

    def move(self, actions: np.ndarray, active: np.ndarray) -> np.ndarray:
        pos, has_key, at_goal = transition(self.layouts.grid, self.pos, self.has_key, actions)
        self.pos = np.where(active[:, None], pos, self.pos)
        self.has_key = np.where(active, has_key, self.has_key)
        return at_goal

    def observe(self) -> np.ndarray:
        return render(self.layouts.grid, self.pos, self.has_key)
