"""Memory's expert, which acts only on what it has seen: until the cue has been in its view it
cannot know which object matches, so it plays the shortest way to see the cue and then reach the
nearer end of the corridor (a plan the cue's identity cannot change); once it has seen the cue,
the shortest way to the matching object's cell. Both over every (seen, heading, row, col) of
every layout (world/minigrid_moves.py's numbering), on the successors `rules.transition` gives.

Why the nearer end and not any: from every cell before the corridor (the start room, the
hallway) both end cells are the same number of steps away (through the corridor's middle cell,
then one turn), so wherever the cue comes into view the blind plan's steps still to go are the
informed plan's, and the expert's steps fall by one at every step (tests/test_world_registry.py)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from dtpe.world import minigrid_moves
from dtpe.world.memory.rules import ENDS, N_ACTIONS, Layouts, State, transition
from dtpe.world.search import UNREACHABLE, CostToGo

FLAGS = (minigrid_moves.Flag("seen", 2, dtype=bool),)


class BlindExpert(CostToGo):
    """CostToGo whose choices before the cue is seen read `blind` (the steps to see it, then to
    the nearer end) and after it `dist` (to the matching object's cell). `dist` holds the steps
    the expert still takes: the blind plan's before the cue is seen."""

    def __init__(self, informed: CostToGo, either_end: np.ndarray, seen: np.ndarray):
        self.successors, self.index = informed.successors, informed.index
        # a seen state is worth its steps to the nearer end; an unseen one the blind plan's steps
        blind = np.where(seen, either_end, UNREACHABLE).astype(np.int32)
        while True:
            relaxed = np.where(seen, blind, np.minimum(blind, blind[self.successors].min(0) + 1))
            if np.array_equal(relaxed, blind):
                break
            blind = relaxed
        self.blind = blind
        self.dist = np.where(seen, informed.dist, blind)
        self.seen = seen

    def optimal_action(self, state, layout_index, rng=None) -> np.ndarray:
        """An action the expert's plan takes: before the cue is seen one whose successor is
        nearer by the blind plan, after it one nearer the matching object (ties as in
        CostToGo.optimal_action)."""
        here = self.index(state, layout_index)
        nxt = self.successors[:, here]  # (actions, B)
        after = np.where(self.seen[here], self.dist[nxt], self.blind[nxt])
        if rng is None:
            return after.argmin(0)
        draw = np.where(after == after.min(0), rng.random(after.shape), np.inf)
        return draw.argmin(0)


def cost_to_go(layouts: Layouts) -> BlindExpert:
    """The expert of every (seen, heading, row, col) of every layout."""
    informed = minigrid_moves.cost_to_go(layouts, transition, ENDS, N_ACTIONS, State, FLAGS)
    other = replace(layouts)  # the same layouts with the two ends' roles exchanged
    other.goal, other.fail = layouts.fail, layouts.goal
    other._sees = layouts.sees_cue
    mirrored = minigrid_moves.cost_to_go(other, transition, ENDS, N_ACTIONS, State, FLAGS)
    b, n = len(layouts), layouts.size
    shape = (b, 2, minigrid_moves.N_HEADINGS, n, n)
    seen = np.unravel_index(np.arange(np.prod(shape)), shape)[1].astype(bool)
    return BlindExpert(informed, np.minimum(informed.dist, mirrored.dist), seen)
