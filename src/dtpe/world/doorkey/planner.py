"""DoorKey's expert: the breadth-first search over every (door, carrying, heading, row, col) of
every layout (world/minigrid_moves.py's numbering), on the successors `rules.transition` gives:
24 N^2 states a layout, some never reached (on walls; carrying nothing behind an unlocked door),
which cost nothing but memory."""

from __future__ import annotations

import numpy as np

from dtpe.world import minigrid_moves
from dtpe.world.doorkey.rules import (
    DOOR_LOCKED,
    ENDS,
    N_ACTIONS,
    Layouts,
    State,
    initial_state,
    transition,
)
from dtpe.world.search import UNREACHABLE, CostToGo

FLAGS = (
    minigrid_moves.Flag("door", 3, DOOR_LOCKED),  # locked, closed, open
    minigrid_moves.Flag("carrying", 2, dtype=bool),
)


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (door, carrying, heading, row, col) of every layout."""
    return minigrid_moves.cost_to_go(layouts, transition, ENDS, N_ACTIONS, State, FLAGS)


def plan(layouts: Layouts) -> list[np.ndarray]:
    """A shortest action sequence (our actions, 0..4) from each layout's start to its goal,
    the lowest-index optimal action at every step."""
    ctg, which = cost_to_go(layouts), np.arange(len(layouts))
    state = initial_state(layouts)
    length = ctg.steps(state, which)
    if (length == UNREACHABLE).any():
        raise ValueError(f"layouts {which[length == UNREACHABLE]} have no path to the goal")
    actions = np.zeros((len(layouts), length.max() if len(layouts) else 0), dtype=np.int64)
    for t in range(actions.shape[1]):
        actions[:, t] = ctg.optimal_action(state, which)
        state = transition(layouts, state, actions[:, t])
    return [actions[i, : length[i]] for i in which]
