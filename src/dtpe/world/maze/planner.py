"""The maze's expert: world/search.py's breadth-first search over (holds-key, row, col) states,
batched over layouts, on the successors `rules.step` gives for every state and action."""

from __future__ import annotations

import numpy as np

from dtpe.world import search
from dtpe.world.maze.rules import ENDS, N_ACTIONS, Layouts, State, step
from dtpe.world.search import CostToGo


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (holds-key, row, col) of every layout."""
    b, n = len(layouts), layouts.size
    shape = (b, 2, n, n)
    layout, key, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    every = State(np.stack([row, col], 1), key.astype(bool))

    def index(state: State, layout_index: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(
            (layout_index, state.has_key.astype(np.int64), state.pos[:, 0], state.pos[:, 1]), shape
        )

    return search.cost_to_go(step, ENDS, layouts, every, layout, index, N_ACTIONS)
