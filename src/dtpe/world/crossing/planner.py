"""SimpleCrossing's expert: the breadth-first search over every (heading, row, col) of every
layout (world/minigrid_moves.py's numbering), on the successors `rules.transition` gives."""

from __future__ import annotations

from dtpe.world import minigrid_moves
from dtpe.world.crossing.rules import ENDS, N_ACTIONS, Layouts, State, transition
from dtpe.world.search import CostToGo


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (heading, row, col) of every layout."""
    return minigrid_moves.cost_to_go(layouts, transition, ENDS, N_ACTIONS, State)
