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

import numpy as np

from dtpe.world import grids, minigrid_moves
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


State = minigrid_moves.Agent
"""B states: the agent's cell and heading, all that changes"""


def initial_state(layouts: Layouts) -> State:
    """`reset`'s agent: at its start, facing right."""
    return State(layouts.start.copy(), np.zeros(len(layouts), dtype=np.int64))


def transition(
    layouts: Layouts, state: State, action, layout_index=None
) -> tuple[State, np.ndarray]:
    """One step of each of B states under our `action` (B,) (0..2): returns (state, at_goal),
    the state each of `layout_index`'s layouts if given (minigrid_moves.in_front)."""
    which, front, ahead = minigrid_moves.in_front(layouts, state, layout_index)
    pos, heading = minigrid_moves.turn_or_forward(state, action, front, ahead, WALKABLE)
    return State(pos, heading), (pos == layouts.goal[which]).all(1)


def render(layouts: Layouts, state: State) -> np.ndarray:
    """Full observations (B, N, N) uint8: the layout with the agent's code on its cell."""
    obs = layouts.grid.copy()
    agent = minigrid_moves.agent_code(AGENT, state.heading)
    obs[np.arange(len(obs)), state.pos[:, 0], state.pos[:, 1]] = agent
    return obs
