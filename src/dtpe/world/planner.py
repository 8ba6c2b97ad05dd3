"""Breadth-first search over (cell, holds-key) states, batched over layouts.

The search runs backwards from the goal on the transition table the world's own rules give
(`maze.transition` on every state and action), so the planner can never disagree with the
environment. The result is a cost-to-go table: optimal steps from every state, from which the
optimal action of every state follows. A sub-optimal episode is the same policy with random
detours (see dataset.py).
"""

from __future__ import annotations

import numpy as np

from dtpe.world.maze import N_ACTIONS, Layouts, transition

UNREACHABLE = np.iinfo(np.int32).max


class CostToGo:
    """Optimal steps to the goal from every (holds-key, row, col) of every layout."""

    def __init__(self, layouts: Layouts):
        b, n = len(layouts), layouts.size
        self.size = n
        states = b * 2 * n * n
        layout, key, row, col = np.unravel_index(np.arange(states), (b, 2, n, n))
        pos = np.stack([row, col], 1)
        # (actions, states): reducing over the short leading axis is several times faster
        self.next_state = np.empty((N_ACTIONS, states), dtype=np.int64)
        for a in range(N_ACTIONS):
            npos, nkey, _ = transition(
                layouts.grid, pos, key.astype(bool), np.full(states, a), layout
            )
            self.next_state[a] = np.ravel_multi_index(
                (layout, nkey, npos[:, 0], npos[:, 1]), (b, 2, n, n)
            )
        goal_state = (row == layouts.goal[layout, 0]) & (col == layouts.goal[layout, 1])
        # Level-synchronous BFS on the reversed graph: a state's distance is one more than its
        # best successor's; it settles after at most (longest shortest path) sweeps.
        dist = np.where(goal_state, 0, UNREACHABLE).astype(np.int64)
        while True:
            best = dist[self.next_state].min(0)
            relaxed = np.where(
                goal_state, 0, np.minimum(dist, np.where(best < UNREACHABLE, best + 1, UNREACHABLE))
            )
            if np.array_equal(relaxed, dist):
                break
            dist = relaxed
        self.dist = dist.reshape(b, 2, n, n)
        self._flat = dist

    def steps(self, pos: np.ndarray, has_key: np.ndarray, layout_index: np.ndarray) -> np.ndarray:
        """Optimal steps to the goal (UNREACHABLE if none) of B states."""
        return self.dist[layout_index, has_key.astype(np.int64), pos[:, 0], pos[:, 1]]

    def optimal_action(
        self,
        pos: np.ndarray,
        has_key: np.ndarray,
        layout_index: np.ndarray,
        rng: np.random.Generator | None = None,
    ) -> np.ndarray:
        """An action whose successor is one step closer: the lowest index among them, or with
        `rng` one drawn uniformly from them."""
        n = self.size
        state = ((layout_index * 2 + has_key.astype(np.int64)) * n + pos[:, 0]) * n + pos[:, 1]
        after = self._flat[self.next_state[:, state]]  # (actions, B)
        if rng is None:
            return after.argmin(0)
        # the smallest of a uniform draw over the optimal actions only
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)
