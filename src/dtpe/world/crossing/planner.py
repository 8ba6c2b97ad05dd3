"""SimpleCrossing's expert: world/search.py's breadth-first search over (heading, row, col) states,
batched over layouts, on the successors `rules.transition` gives for every state and action."""

from __future__ import annotations

import numpy as np

from dtpe.world.crossing.rules import N_ACTIONS, Layouts, State, transition
from dtpe.world.search import CostToGo, successors

_HEADINGS = 4


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (heading, row, col) of every layout."""
    b, n = len(layouts), layouts.size
    shape = (b, _HEADINGS, n, n)

    def index(state: State, layout_index: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(
            (layout_index, state.heading, state.pos[:, 0], state.pos[:, 1]), shape
        )

    layout, heading, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    every = State(np.stack([row, col], 1), heading)
    goal = (row == layouts.goal[layout, 0]) & (col == layouts.goal[layout, 1])
    return CostToGo(successors(transition, layouts, every, layout, index, N_ACTIONS), goal, index)
