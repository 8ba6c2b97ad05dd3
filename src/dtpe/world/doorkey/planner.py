"""DoorKey's expert: world/search.py's breadth-first search over (door, carrying, heading, row,
col) states, batched over layouts, on the successors `rules.transition` gives for every state and
action: 24 N^2 states a layout, some never reached (on walls; carrying nothing behind an unlocked
door), which cost nothing but memory."""

from __future__ import annotations

import numpy as np

from dtpe.world.doorkey.rules import (
    DOOR_LOCKED,
    N_ACTIONS,
    Layouts,
    State,
    initial_state,
    transition,
)
from dtpe.world.search import UNREACHABLE, CostToGo, successors

_DOORS, _CARRYING, _HEADINGS = 3, 2, 4


def cost_to_go(layouts: Layouts) -> CostToGo:
    """Optimal steps to the goal from every (door, carrying, heading, row, col) of every layout."""
    b, n = len(layouts), layouts.size
    shape = (b, _DOORS, _CARRYING, _HEADINGS, n, n)
    if np.prod(shape) > UNREACHABLE:
        raise ValueError(f"layouts: {b} of size {n} exceed int32 state indices; split them")

    def index(state: State, layout_index: np.ndarray) -> np.ndarray:
        return np.ravel_multi_index(
            (
                layout_index,
                state.door - DOOR_LOCKED,
                state.carrying.astype(np.int64),
                state.heading,
                state.pos[:, 0],
                state.pos[:, 1],
            ),
            shape,
        )

    layout, door, carrying, heading, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    every = State(np.stack([row, col], 1), heading, carrying.astype(bool), door + DOOR_LOCKED)
    goal = (row == layouts.goal[layout, 0]) & (col == layouts.goal[layout, 1])
    return CostToGo(successors(transition, layouts, every, layout, index, N_ACTIONS), goal, index)


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
        state, _ = transition(layouts, state, actions[:, t])
    return [actions[i, : length[i]] for i in which]
