"""The T-Maze (world/base.py's interface): a corridor, a cue on one of its cells, and at its end a
junction with two arms; turning to the cue's side succeeds, the other way fails; four moves.
Its rules (rules.py), its layouts, a band of corridor lengths at every size (layouts.py), its
expert (planner.py), its Gymnasium env `TMaze-v0` (env.py) and its colours (picture.py).

Why this world: the model sees only the agent's own cell (a 1 x 1 view: the cue where it shows,
else the corridor or the junction), so the turn at the end depends on one observation as far
back as the corridor is long. Trained on short corridors and tested on corridors tens of times
longer, it asks how far back each position encoding still reaches (Ni et al., NeurIPS 2023,
"When do transformers shine in RL?"; issue 60). The cue knob says where the cue shows: at the
first step only (`start`, Ni et al.'s passive T-Maze, where the cue is always the episode's
first token) or on one cell of the corridor's first half (`anywhere`, found by its content)."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words, World
from dtpe.world.tmaze import layouts as family
from dtpe.world.tmaze import picture, rules
from dtpe.world.tmaze.planner import cost_to_go


class TMaze(World):
    name = "tmaze"
    vocabulary = rules.VOCABULARY
    min_size = rules.MIN_SIZE
    options = {"cue": ("start", "anywhere"), "shortest": (0.0, 1.0), "slack": (1, None)}
    """cue: where the cue shows (layouts.CUES); shortest: a size S draws corridor lengths from
    ceil(S * shortest) to S (1: S alone; never below rules.MIN_LENGTH); slack: the episode cap
    is S + slack steps, the expert's S + 1 at the longest corridor plus slack - 1 for detours"""
    layout_arrays = ("grid", "start", "once")
    # a size is the longest corridor of its band (options' `shortest`), not a grid's side
    words = Words(
        layouts="T-Mazes",
        milestone=("has seen the cue", "has not seen the cue"),
        size="L ≤ {n}",
        axis="corridor length L",
        chance_pct=50,
    )
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    initial_state = staticmethod(rules.initial_state)
    stepper = rules.BatchedTMaze

    def check_size(self, size) -> int:
        return rules.check_size(size)

    def cap(self, size: int, options: dict) -> int:
        # one cap a size, from its longest corridor: a shorter corridor's episode gets the longer
        # slack, and the analysis reads a size's cap (an episode that ends before it has ended
        # in the world)
        return size + options["slack"]

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        return family.draw(size, count, rng, options["cue"], options["shortest"], exclude, whole)

    def count(self, size: int, options: dict) -> int:
        return family.Band(size, options["cue"], options["shortest"]).total

    def layouts(self, arrays: dict):
        return rules.Layouts(arrays["grid"], arrays["start"], arrays["once"])

    def fingerprints(self, layouts) -> list[bytes]:
        return family.fingerprints(layouts)

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, state.seen

    def ground(self, lay, state) -> np.ndarray:
        # the cue is a sign the view shows, not the floor: the explorer draws the agent over the
        # corridor
        return rules.floor(lay, state)


WORLD = TMaze()
