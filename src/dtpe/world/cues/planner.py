"""The cue corridor's expert: walk right to the junction and turn to the goal's side, in closed
form (world/search.py's CostToGo interface), as the T-Maze's (world/tmaze/planner.py): every cue
lies on the corridor the walk crosses, so the walk has passed them all when it turns."""

from __future__ import annotations

import numpy as np

from dtpe.world.cues.rules import FLOOR, N_ACTIONS, Layouts, State, transition
from dtpe.world.search import UNREACHABLE


class CorridorExpert:
    """Optimal steps to the goal from every state of `layouts`, and the actions that take them."""

    def __init__(self, layouts: Layouts):
        self.layouts = layouts

    def steps(self, state: State, layout_index: np.ndarray) -> np.ndarray:
        """Optimal steps to the goal (UNREACHABLE if none) of B states, int64."""
        lay, which = self.layouts, layout_index
        col = state.pos[:, 1]
        on_floor = np.isin(lay.grid[which, state.pos[:, 0], col], FLOOR)
        done = (state.pos == lay.goal[which]).all(1)
        walk = lay.length[which] - col + 1
        return np.where(on_floor, walk, np.where(done, 0, UNREACHABLE)).astype(np.int64)

    def optimal_action(
        self, state: State, layout_index: np.ndarray, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """An action whose successor is one step closer: the lowest index among them, or with
        `rng` one drawn uniformly from them."""
        after = np.stack(
            [
                self.steps(
                    transition(self.layouts, state, np.full(len(state.pos), a), layout_index),
                    layout_index,
                )
                for a in range(N_ACTIONS)
            ]
        )
        if rng is None:
            return after.argmin(0)
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)


def cost_to_go(layouts: Layouts) -> CorridorExpert:
    return CorridorExpert(layouts)
