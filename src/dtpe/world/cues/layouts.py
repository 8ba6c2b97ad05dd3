"""The layout family: every size S draws corridors from a band of lengths [ceil(S * shortest), S]
(world knob `shortest`), and on each corridor the marks its task asks for (world knob `task`):

- `order`: one cue A and one cue B on two cells; the goal is up where A comes first. Every
  corridor holds one of each, so the episode's marks without their order say nothing of the side.
- `recency`: `cues` cues (an even number), half A and half B; the goal is up where the last is
  an A. Every corridor holds as many of each.
- `distance`: one cue A, in the corridor's first quarter (the goal up: the cue lies at least
  three quarters of the corridor back from the junction) or its last quarter (down: at most a
  quarter back), L // 4 cells each. The units scale with the corridor, so no count of steps
  learned on short corridors tells the two apart on long ones.

Each also holds `distractors` distractor marks on other cells, which never count. Layouts are
drawn uniformly from the band, each once: the band listed whole and shuffled where it is short
enough (so that a size draws all of its layouts and no more), else drawn with repeats left out."""

from __future__ import annotations

import itertools
import math

import numpy as np

from dtpe.world import grids
from dtpe.world.cues.rules import CUE_A, CUE_B, DISTRACTOR, Layouts, check_size, make

TASKS = ("order", "recency", "distance")
LISTED = 2**16
"""layouts of a band listed whole and shuffled; beyond, drawn with repeats left out"""


def quarters(length: int) -> tuple[np.ndarray, np.ndarray]:
    """The cue's columns in the `distance` task: the first quarter's (up), the last quarter's
    (down), as many cells each, so that a corridor's length says nothing of its side."""
    q = length // 4
    return np.arange(0, q), np.arange(length - q, length)


class Band:
    """The layouts of size `size` under the world's knobs."""

    def __init__(self, size, options: dict):
        self.size = check_size(size)
        self.task, self.cues, self.distractors = (
            options["task"],
            options["cues"],
            options["distractors"],
        )
        if self.task not in TASKS:
            raise ValueError(f"task {self.task!r} is not one of {', '.join(TASKS)}")
        if self.task == "recency" and self.cues % 2:
            raise ValueError(f"cues {self.cues}: the recency task holds as many A as B cues")
        marks = {"order": 2, "recency": self.cues, "distance": 1}[self.task]
        shortest = max(marks + self.distractors, 4, math.ceil(self.size * options["shortest"]))
        if shortest > self.size:
            raise ValueError(
                f"size {self.size} cannot hold {marks} cues and {self.distractors} distractors"
            )
        self.lengths = np.arange(shortest, self.size + 1)
        self.counts = [self.count_at(int(n)) for n in self.lengths]
        self.total = sum(self.counts)

    def __str__(self) -> str:
        return (
            f"the cue corridor's size {self.size} (corridors {self.lengths[0]}..{self.size}, "
            f"task {self.task})"
        )

    def count_at(self, length: int) -> int:
        """The layouts of one corridor length."""
        d = self.distractors
        if self.task == "order":
            return length * (length - 1) * math.comb(length - 2, d)
        if self.task == "recency":
            k = self.cues
            return math.comb(length, k) * math.comb(k, k // 2) * math.comb(length - k, d)
        return sum(map(len, quarters(length))) * math.comb(length - 1, d)

    def placed(self, length: int, cells, kinds) -> tuple[dict, int]:
        """The marks ({column: code}) of cues at `cells` of `kinds` (in the order placed) with
        distractors on the rest of `cells`, and the side the task gives them."""
        n = len(kinds)
        marks = {int(c): k for c, k in zip(cells[:n], kinds)}
        marks |= {int(c): DISTRACTOR for c in cells[n:]}
        if self.task == "order":
            side = int(cells[0] > cells[1])  # cells[0] holds A
        elif self.task == "recency":
            side = int(marks[max(int(c) for c in cells[:n])] == CUE_B)
        else:
            side = int(cells[0] >= quarters(length)[1][0])
        return marks, side

    def sample(self, n: int, rng: np.random.Generator) -> Layouts:
        """`n` layouts drawn uniformly from the band, repeats possible."""
        p = np.array(self.counts, dtype=float)
        lengths = rng.choice(self.lengths, size=n, p=p / p.sum())
        drawn = []
        for length in map(int, lengths):
            if self.task == "distance":
                near = np.concatenate(quarters(length))
                cue = int(rng.choice(near))
                rest = np.setdiff1d(np.arange(length), [cue])
                cells = [cue, *rng.choice(rest, self.distractors, replace=False)]
                kinds = [CUE_A]
            else:
                k = 2 if self.task == "order" else self.cues
                cells = list(rng.choice(length, k + self.distractors, replace=False))
                pairs = [CUE_A, CUE_B] * (k // 2)
                kinds = pairs if self.task == "order" else list(rng.permutation(pairs))
            drawn.append((length, *self.placed(length, cells, kinds)))
        return self._made(drawn)

    def listed(self) -> Layouts:
        """Every layout of the band, in a fixed order."""
        drawn = []
        for length in map(int, self.lengths):
            for cells, kinds in self._arrangements(length):
                rest = [c for c in range(length) if c not in cells]
                for extra in itertools.combinations(rest, self.distractors):
                    drawn.append((length, *self.placed(length, [*cells, *extra], kinds)))
        return self._made(drawn)

    def _arrangements(self, length: int):
        """(cue cells, their kinds) of every arrangement of one corridor's cues."""
        if self.task == "order":
            for a, b in itertools.permutations(range(length), 2):
                yield [a, b], [CUE_A, CUE_B]
        elif self.task == "recency":
            k = self.cues
            for cells in itertools.combinations(range(length), k):
                for ones in itertools.combinations(range(k), k // 2):
                    yield list(cells), [CUE_A if i in ones else CUE_B for i in range(k)]
        else:
            for cue in np.concatenate(quarters(length)):
                yield [int(cue)], [CUE_A]

    def _made(self, drawn: list) -> Layouts:
        if not drawn:
            return make(self.size, np.zeros(0), [], np.zeros(0))
        lengths, marks, sides = zip(*drawn)
        return make(self.size, lengths, list(marks), sides)


def draw(size, count: int, rng, options: dict, exclude=frozenset(), whole=True) -> Layouts:
    """`count` distinct layouts of size `size` whose fingerprints are not in `exclude`, drawn by
    `rng`; with `whole` False fewer where the band holds fewer new ones, else (or where it holds
    none) a ValueError naming the band and how many it holds."""
    band = Band(size, options)
    if count < 0:
        raise ValueError(f"layout count must be >= 0, got {count}")
    if band.total <= LISTED:
        every = band.listed()
        order, taken = rng.permutation(band.total), 0

        def candidates(n: int) -> Layouts:
            nonlocal taken
            taken += n
            return every.subset(order[taken - n : taken])

        limit = band.total
    else:

        def candidates(n: int) -> Layouts:
            return band.sample(n, rng)

        limit = None
    parts = grids.draw_distinct(candidates, count, fingerprints, exclude, limit)
    kept = sum(len(p) for p in parts)
    if (whole and kept < count) or (count and not kept):
        taken_note = f", {band.total - kept} of them taken already" if band.total > kept else ""
        raise ValueError(
            f"{band} holds {band.total} layouts{taken_note}: {kept} new ones, {count} wanted"
        )
    return Layouts.join(parts) if parts else band.sample(0, rng)


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout by its content, not its grid's width: a corridor drawn at two sizes
    is one layout."""
    return layouts.content()
