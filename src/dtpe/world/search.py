"""Breadth-first search for every world's expert: optimal steps to the goal from every state of
many layouts at once, and the optimal actions that follow from them.

A world numbers its states (every state of every layout, 0..S-1) and gives the successor of each
under each action, from its own rules; the search runs backwards from the success states on that
table, so an expert can never disagree with the world it plans for. Its terminal states
(world/lockstep.py's Ends: success, and failure where the world has it) are dead ends, as the
episode is over there: no path leads through a failure. A state no path leaves for success
costs UNREACHABLE."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

UNREACHABLE = np.iinfo(np.int32).max - 1
"""steps of a state with no path to the goal (one below int32's largest, so that one more step
still fits)"""


def cost_to_go(transition, ends, layouts, every, layout, index, n_actions: int) -> CostToGo:
    """Optimal steps to success from each of `every` (S states of `layouts`, state s of layout
    `layout[s]`, numbered 0..S-1 by the world's `index`), on the successors the world's own
    `transition` gives under each of its `n_actions`, its terminal cells `ends` (world/lockstep.py)
    success and dead ends."""
    table = np.stack(
        [
            index(transition(layouts, every, np.full(len(layout), a), layout), layout).astype(
                np.int32
            )
            for a in range(n_actions)
        ]
    )  # (actions, S)
    won, lost = ends.at(layouts, every.pos, layout)
    over = np.flatnonzero(won | lost)
    table[:, over] = over.astype(np.int32)
    return CostToGo(table, won, index)


class CostToGo:
    """Optimal steps to the goal from every state. `successors` (actions, S): the state each
    action leads to (int32 where S allows: each sweep gathers from it); `goal` (S,) bool; `index`
    maps a world's batch of states and their layouts to state numbers."""

    def __init__(self, successors: np.ndarray, goal: np.ndarray, index: Callable):
        if successors.shape[1] > UNREACHABLE:
            raise ValueError(f"{successors.shape[1]} states exceed int32 state numbers; split them")
        self.successors, self.index = successors, index
        # Level-synchronous: a state's distance is one more than its best successor's; it settles
        # after (longest shortest path) sweeps. Reducing over the short leading axis (actions) is
        # several times faster than over states.
        dist = np.where(goal, 0, UNREACHABLE).astype(np.int32)
        while True:
            relaxed = np.minimum(dist, dist[successors].min(0) + 1)
            if np.array_equal(relaxed, dist):
                break
            dist = relaxed
        self.dist = dist

    def steps(self, state, layout_index: np.ndarray) -> np.ndarray:
        """Optimal steps to the goal (UNREACHABLE if none) of B states, int64."""
        return self.dist[self.index(state, layout_index)].astype(np.int64)

    def optimal_action(
        self, state, layout_index: np.ndarray, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """An action whose successor is one step closer: the lowest index among them, or with
        `rng` one drawn uniformly from them."""
        after = self.dist[self.successors[:, self.index(state, layout_index)]]  # (actions, B)
        if rng is None:
            return after.argmin(0)
        # the smallest of a uniform draw over the optimal actions only
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)
