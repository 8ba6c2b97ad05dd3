"""The T-Maze's expert: walk right to the junction and turn to the cue's side, having seen the
cue; the interface of world/search.py's CostToGo (`steps`, `optimal_action`) over the rules'
states, in closed form.

Why not the shared search: it sweeps once per step of the longest path, over every state of
every layout, so a suite of corridors of length L costs L^2 per layout; evaluation suites reach
corridors hundreds of times longer than training's. The closed form is the search's answer
(tests/test_tmaze_world.py compares the two over every state of small layouts), and its actions
are read off the rules' own `transition`, so the expert cannot disagree with the world.

The expert's goal is the cue's arm reached with the cue seen: an arm entered unseen is a dead
end, so from a state that has not seen the cue the expert's way leads over the cue's cell
before it turns. From the start that is the walk right (the cue lies on the corridor's first
half, or shows at the first step), which is why its episodes never turn before the cue has
shown."""

from __future__ import annotations

import numpy as np

from dtpe.world.search import UNREACHABLE
from dtpe.world.tmaze.rules import FLOOR, N_ACTIONS, Layouts, State, transition


class CorridorExpert:
    """Optimal steps to the goal (the cue's arm, the cue seen) from every state of `layouts`,
    and the actions that take them."""

    def __init__(self, layouts: Layouts):
        self.layouts = layouts

    def steps(self, state: State, layout_index: np.ndarray) -> np.ndarray:
        """Optimal steps to the goal (UNREACHABLE if none) of B states, int64."""
        lay, which = self.layouts, layout_index
        length, cue, col = lay.length[which], lay.cue[which], state.pos[:, 1]
        # the cue shows again only where it is not the start's: walk over its cell, or where
        # the agent stands on it, step in place into a wall of the corridor
        to_cue = np.where(col < cue, 0, np.where(col == cue, 1, 2 * (col - cue)))
        seen_by = np.where(lay.once[which], UNREACHABLE, to_cue)
        walk = np.minimum(np.where(state.seen, 0, seen_by) + length - col + 1, UNREACHABLE)
        on_floor = np.isin(lay.grid[which, state.pos[:, 0], col], FLOOR)
        done = state.seen & (state.pos == lay.goal[which]).all(1)
        return np.where(on_floor, walk, np.where(done, 0, UNREACHABLE)).astype(np.int64)

    def optimal_action(
        self, state: State, layout_index: np.ndarray, rng: np.random.Generator | None = None
    ) -> np.ndarray:
        """An action whose successor is one step closer: the lowest index among them, or with
        `rng` one drawn uniformly from them (CostToGo.optimal_action's ties)."""
        after = np.stack(
            [
                self.steps(
                    transition(self.layouts, state, np.full(len(state.pos), a), layout_index),
                    layout_index,
                )
                for a in range(N_ACTIONS)
            ]
        )  # (actions, B)
        if rng is None:
            return after.argmin(0)
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)


def cost_to_go(layouts: Layouts) -> CorridorExpert:
    return CorridorExpert(layouts)
