"""The maze's expert: world/search.py's breadth-first search over (holds-key, row, col) states,
batched over layouts, on the successors `rules.transition` gives for every state and action."""

from __future__ import annotations

import numpy as np

from dtpe.world.maze.rules import N_ACTIONS, Layouts, State, transition
from dtpe.world.search import CostToGo


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (holds-key, row, col) of every layout."""
    b, n = len(layouts), layouts.size
    shape = (b, 2, n, n)
    layout, key, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    pos = np.stack([row, col], 1)
    successors = np.empty((N_ACTIONS, len(row)), dtype=np.int32)
    for a in range(N_ACTIONS):
        npos, nkey, _ = transition(
            layouts.grid, pos, key.astype(bool), np.full(len(row), a), layout
        )
        successors[a] = np.ravel_multi_index((layout, nkey, npos[:, 0], npos[:, 1]), shape)
    goal = (row == layouts.goal[layout, 0]) & (col == layouts.goal[layout, 1])

    def index(state: State, layout_index: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(
            (layout_index, state.has_key.astype(np.int64), state.pos[:, 0], state.pos[:, 1]), shape
        )

    return CostToGo(successors, goal, index)
