"""The content-only oracle: the best guess of the side from the bag of what an episode shows (how
many times each cell code), without their order. Every task holds the same marks in every corridor
of a length, and as many of a length's layouts go up as down, so it is at chance by construction;
this measures it, on a band's every layout walked straight (`walked`) and on any episodes the
data step wrote (`played`)."""

from __future__ import annotations

from collections import Counter, defaultdict

import numpy as np

from dtpe.world.cues.rules import MARKS, Layouts


def walk_bags(layouts: Layouts) -> list[tuple]:
    """The bag of codes each layout shows on the walk from its start to the junction."""
    corridor = layouts.grid[:, 1]
    return [
        tuple(sorted(Counter(corridor[i, : layouts.length[i] + 1].tolist()).items()))
        for i in range(len(layouts))
    ]


def best_guess(bags: list[tuple], sides: np.ndarray) -> dict:
    """Per bag, the side most of its layouts take (ties: up), as learned from `bags` and `sides`."""
    votes: dict[tuple, list[int]] = defaultdict(lambda: [0, 0])
    for bag, side in zip(bags, sides):
        votes[bag][int(side)] += 1
    return {bag: int(v[1] > v[0]) for bag, v in votes.items()}


def walked(layouts: Layouts) -> float:
    """The Bayes-optimal bag oracle's accuracy over `layouts` themselves (every layout of a band:
    the most any content-only rule can score on it)."""
    bags = walk_bags(layouts)
    guess = best_guess(bags, layouts.side)
    return float(np.mean([guess[b] == s for b, s in zip(bags, layouts.side)]))


def played(train_states: list[np.ndarray], train_sides, test_states, test_sides) -> float:
    """The bag oracle learned on training episodes' observations (each (T, 1, 1) codes, detours
    and all) and scored on others'. The bag counts the marks alone, how often each showed (a
    detour shows a mark again): few bags, each learned from many episodes; unseen ones guess up."""

    def bags(states):
        return [tuple(int((s == m).sum()) for m in MARKS) for s in states]

    guess = best_guess(bags(train_states), np.asarray(train_sides))
    return float(np.mean([guess.get(b, 0) == s for b, s in zip(bags(test_states), test_sides)]))
