"""The layout family: every size S draws corridors from a band of lengths, [ceil(S * shortest),
S] (world knob `shortest`; never below rules.MIN_LENGTH), each with its cue on one cell and one
side.

Why a band: at cue `start` one length holds two layouts (the cue up or down), too few to split
into training, validation and test layouts; a band of lengths holds two a length. Evaluation
suites at a dense grid of sizes then each cover a band of their own.

A layout is (length, cue column, side); at cue `start` the cue's column is 0, at `anywhere` one
of the first half's, 0..L//2 - 1. Layouts are drawn uniformly from those of the band, each once,
none excluded: the band's whole list shuffled where it is short enough to hold or the layouts
wanted are many of it, else drawn with repeats left out (where at least half the band is free,
a draw finds new layouts at least half the time)."""

from __future__ import annotations

import math

import numpy as np

from dtpe.world import grids
from dtpe.world.tmaze.rules import MIN_LENGTH, Layouts, check_size, make

CUES = ("start", "anywhere")
"""the cue knob's values: Ni et al.'s passive T-Maze (the cue at the first step only, on the
start's cell), or one random cell of the corridor's first half, seen only while standing on it"""
LISTED = 2**20
"""layouts of a band listed whole and shuffled (8 MiB of indices); beyond, drawn with repeats"""


class Band:
    """The layouts of size `size` under the cue knob `cue` and the shortest corridor's share
    `shortest`, numbered 0..total-1: by length, then cue column, then side."""

    def __init__(self, size, cue: str, shortest: float):
        self.size = check_size(size)
        if cue not in CUES:
            raise ValueError(f"cue {cue!r} is not one of {', '.join(CUES)}")
        if not 0 <= shortest <= 1:
            raise ValueError(f"shortest {shortest!r} is not a share from 0 to 1")
        self.cue, self.once = cue, cue == "start"
        self.lengths = np.arange(max(MIN_LENGTH, math.ceil(size * shortest)), size + 1)
        cues = np.ones_like(self.lengths) if self.once else self.lengths // 2
        self.first = np.concatenate([[0], np.cumsum(2 * cues)])  # each length's first number
        self.total = int(self.first[-1])

    def __str__(self) -> str:
        return (
            f"the T-Maze's size {self.size} (corridors {self.lengths[0]}..{self.size}, "
            f"cue {self.cue})"
        )

    def layouts(self, numbers: np.ndarray) -> Layouts:
        """The layouts numbered `numbers` (B,)."""
        at = np.searchsorted(self.first, numbers, side="right") - 1
        within = numbers - self.first[at]
        return make(self.size, self.lengths[at], within // 2, within % 2, self.once)


def draw(
    size,
    count: int,
    rng: np.random.Generator,
    cue: str,
    shortest: float,
    exclude=frozenset(),
    whole=True,
) -> Layouts:
    """`count` distinct layouts of size `size` whose fingerprints are not in `exclude`, drawn by
    `rng`; with `whole` False fewer where the band holds fewer new ones, else (or where it holds
    none) a ValueError naming the band and how many it holds."""
    band = Band(size, cue, shortest)
    if count < 0:
        raise ValueError(f"layout count must be >= 0, got {count}")
    if band.total <= LISTED or 2 * (count + len(exclude)) > band.total:
        order, drawn = rng.permutation(band.total), 0

        def candidates(n: int) -> Layouts:
            nonlocal drawn
            drawn += n
            return band.layouts(order[drawn - n : drawn])

        limit = band.total
    else:

        def candidates(n: int) -> Layouts:
            return band.layouts(rng.integers(0, band.total, n))

        limit = None
    parts = grids.draw_distinct(candidates, count, fingerprints, exclude, limit)
    kept = sum(len(p) for p in parts)
    if (whole and kept < count) or (count and not kept):
        taken = f", {band.total - kept} of them taken already" if band.total > kept else ""
        raise ValueError(
            f"{band} holds {band.total} layouts{taken}: {kept} new ones, {count} wanted"
        )
    return Layouts.join(parts) if parts else band.layouts(np.zeros(0, np.int64))


def fingerprints(layouts: Layouts) -> list[bytes]:
    """Identity of each layout by its content (its id and where its cue shows), not its grid's
    bytes: a corridor drawn at two sizes is one layout, whose grids differ in width."""
    content = np.stack([layouts.ids, layouts.once.astype(np.int64)], 1)
    return [row.tobytes() for row in content]
