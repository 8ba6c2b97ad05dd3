"""The rules of MiniGrid's SimpleCrossing (minigrid 3.2.0: `CrossingEnv` with walls for
obstacles, `MiniGridEnv.step`) restated over numpy and batched over states, so that the planner
can search every state of many layouts at once.

A layout is what `reset` draws: the border and `num_crossings` wall lines across the room, each
with one opening, the goal in the bottom-right corner (N-2, N-2); the agent starts in the
top-left corner (1, 1) facing right. A state is (cell, heading): nothing else ever changes.

The agent moves as in every MiniGrid world (world/minigrid_moves.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from dtpe.world import grids, minigrid_moves
from dtpe.world.lockstep import Ends
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, GOAL = range(3)
AGENT = 3
"""the agent's cell holds AGENT + heading (codes 3..6); it stands only on empty cells or the goal"""
N_CODES = 7
CODE_NAMES = ("empty", "wall", "goal", *minigrid_moves.agent_names())
"""MiniGrid's names of its objects (world/minigrid_view.py reads them by name)"""

ACTION_NAMES = minigrid_moves.MOVES
N_ACTIONS = len(ACTION_NAMES)
MINIGRID_ACTIONS = np.array([0, 1, 2], dtype=np.int64)
"""MiniGrid's number of each of our actions. Pickup, drop, toggle and done are left out: in
SimpleCrossing there is nothing to pick up or toggle, and done does nothing."""
VOCABULARY = Vocabulary(
    codes=CODE_NAMES, actions=ACTION_NAMES, agent=tuple(range(AGENT, N_CODES)), wall=WALL
)
WALKABLE = np.array([EMPTY, GOAL])
"""codes that forward enters (the objects whose `can_overlap` is true)"""
ENDS = Ends()
"""the walls end nothing, only the goal; a failed episode ends at MiniGrid's step limit"""


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


def count(size: int, num_crossings: int) -> int:
    """How many distinct layouts `CrossingEnv(size, num_crossings, Wall)` draws (52 at 7 x 7 with
    3 crossings): for every choice of `num_crossings` wall lines among the even rows and columns
    inside the border, every order of crossing them from the top-left room to the bottom-right
    one, each crossing's opening on any cell of the wall that borders the room it leaves."""
    lines = [(axis, at) for axis in ("col", "row") for at in range(2, size - 2, 2)]
    total = 0
    for chosen in combinations(lines, num_crossings):
        limits = {
            axis: [0, *sorted(at for a, at in chosen if a == axis), size - 1]
            for axis in ("col", "row")
        }
        wide, tall = ([b - a - 1 for a, b in zip(v, v[1:])] for v in limits.values())
        # ways[i][j]: the openings on the way to the room i walls right and j walls down
        ways = [[0] * len(tall) for _ in wide]
        for i in range(len(wide)):
            for j in range(len(tall)):
                ways[i][j] = (i == j == 0) + (
                    (ways[i - 1][j] * tall[j] if i else 0) + (ways[i][j - 1] * wide[i] if j else 0)
                )
        total += ways[-1][-1]
    return total


@dataclass
class Layouts(grids.SeededLayouts):
    """B layouts of one size: grid (B, N, N) uint8 of EMPTY, WALL and GOAL (no agent); start
    (B, 2) int64 (row, col); seeds (B,) int64, the `reset` seed each was drawn with."""

    grid: np.ndarray
    start: np.ndarray
    seeds: np.ndarray

    def __post_init__(self):
        self.goal = grids.locate(self.grid, GOAL)


State = minigrid_moves.Agent
"""B states: the agent's cell and heading, all that changes"""


def initial_state(layouts: Layouts) -> State:
    """`reset`'s agent: at its start, facing right."""
    return minigrid_moves.facing_right(layouts)


def transition(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """One step of each of B states under our `action` (B,) (0..2), the state each of
    `layout_index`'s layouts if given (minigrid_moves.in_front)."""
    return minigrid_moves.walk(layouts, state, action, WALKABLE, layout_index)


def render(layouts: Layouts, state: State) -> np.ndarray:
    """Full observations (B, N, N) uint8: the layout with the agent's code on its cell."""
    return minigrid_moves.with_agent(layouts.grid, state, AGENT)
