"""Breadth-first search over DoorKey's states (cell, heading, carrying, door), batched over
layouts: the expert of this world.

As the maze's planner, the search runs backwards from the goal on the transition table that
`rules.transition` gives for every state and action, so the expert cannot disagree with the rules
the world simulates. The result is a cost-to-go table, optimal steps from every state, from which
the optimal action of every state follows: the labels of sub-optimal episodes as well as plans.
"""

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

UNREACHABLE = np.iinfo(np.int32).max - 1
"""steps of a state with no path to the goal"""
_DOORS, _CARRYING, _HEADINGS = 3, 2, 4


class CostToGo:
    """Optimal steps to the goal from every (door, carrying, heading, row, col) of every layout:
    24 N^2 states a layout, some of them never reached (on walls; carrying nothing behind an
    unlocked door), which cost nothing but memory (5 int32 successors each)."""

    def __init__(self, layouts: Layouts):
        b, n = len(layouts), layouts.size
        self.shape = (b, _DOORS, _CARRYING, _HEADINGS, n, n)
        if np.prod(self.shape) > UNREACHABLE:
            raise ValueError(f"layouts: {b} of size {n} exceed int32 state indices; split them")
        layout, door, carrying, heading, row, col = np.unravel_index(
            np.arange(np.prod(self.shape)), self.shape
        )
        every = State(np.stack([row, col], 1), heading, carrying.astype(bool), door + DOOR_LOCKED)
        # (actions, states): reducing over the short leading axis is several times faster
        self.next_state = np.stack(
            [
                self._index(
                    layout, transition(layouts, every, np.full(len(row), a), layout)[0]
                ).astype(np.int32)
                for a in range(N_ACTIONS)
            ]
        )
        goal = (row == layouts.goal[layout, 0]) & (col == layouts.goal[layout, 1])
        # Level-synchronous BFS on the reversed graph: a state's distance is one more than its
        # best successor's; it settles after (longest shortest path) sweeps. int32 halves the
        # memory each sweep's gather reads, and UNREACHABLE + 1 still fits it.
        dist = np.where(goal, 0, UNREACHABLE).astype(np.int32)
        while True:
            relaxed = np.minimum(dist, dist[self.next_state].min(0) + 1)
            if np.array_equal(relaxed, dist):
                break
            dist = relaxed
        self.dist = dist

    def _index(self, layout_index: np.ndarray, state: State) -> np.ndarray:
        return np.ravel_multi_index(
            (
                layout_index,
                state.door - DOOR_LOCKED,
                state.carrying.astype(np.int64),
                state.heading,
                state.pos[:, 0],
                state.pos[:, 1],
            ),
            self.shape,
        )

    def steps(self, state: State, layout_index: np.ndarray) -> np.ndarray:
        """Optimal steps to the goal (UNREACHABLE if none) of B states."""
        return self.dist[self._index(layout_index, state)]

    def optimal_action(
        self, state: State, layout_index: np.ndarray, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """An action whose successor is one step closer: the lowest index among them, or with
        `rng` one drawn uniformly from them."""
        after = self.dist[self.next_state[:, self._index(layout_index, state)]]  # (actions, B)
        if rng is None:
            return after.argmin(0)
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)


def plan(layouts: Layouts) -> list[np.ndarray]:
    """A shortest action sequence (our actions, 0..4) from each layout's start to its goal,
    the lowest-index optimal action at every step."""
    ctg, which = CostToGo(layouts), np.arange(len(layouts))
    state = initial_state(layouts)
    length = ctg.steps(state, which)
    if (length == UNREACHABLE).any():
        raise ValueError(f"layouts {which[length == UNREACHABLE]} have no path to the goal")
    actions = np.zeros((len(layouts), length.max() if len(layouts) else 0), dtype=np.int64)
    for t in range(actions.shape[1]):
        actions[:, t] = ctg.optimal_action(state, which)
        state, _ = transition(layouts, state, actions[:, t])
    return [actions[i, : length[i]] for i in which]
