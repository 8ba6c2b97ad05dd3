"""The cue corridor (world/base.py's interface): the T-Maze's corridor, junction and two arms, the
model seeing only its own cell, but the side is decided by where marks lie, not by what they are
(layouts.py): which of two cues came first (`order`), which kind the last of several was
(`recency`), or how far back one cue lies in units of the corridor (`distance`).

Why this world: in the T-Maze the cue is the one mark of its kind, found by its content at any
distance (a model with its position table zeroed still wins there). Here every episode of a task
holds the same marks, so a bag of its tokens without their order is at chance
(tests/test_cues_world.py's oracle), and a model must carry where and when it saw them, at
lengths tens of times the trained ones (issue 73)."""

from __future__ import annotations

import numpy as np

from dtpe.world.base import Words, World
from dtpe.world.cues import layouts as family
from dtpe.world.cues import picture, rules
from dtpe.world.cues.planner import cost_to_go


class Cues(World):
    name = "cues"
    vocabulary = rules.VOCABULARY
    min_size = rules.MIN_SIZE
    options = {
        "task": ("order", "recency", "distance"),
        "cues": (2, None),
        "distractors": (0, None),
        "shortest": (0.0, 1.0),
        "slack": (1, None),
    }
    """task: what decides the side (layouts.TASKS); cues: the recency task's cues (even);
    distractors: marks that never count, on other cells; shortest: a size S draws corridors of
    ceil(S * shortest)..S cells; slack: the cap is S + slack steps"""
    layout_arrays = ("grid", "start")
    words = Words(
        layouts="cue corridors",
        milestone=("has passed the last cue", "has not passed the last cue"),
        size="L ≤ {n}",
        axis="corridor length L",
        chance_pct=50,
    )
    colours = picture.COLOURS
    legend = picture.LEGEND
    planner = staticmethod(cost_to_go)
    initial_state = staticmethod(rules.initial_state)
    stepper = rules.BatchedCues

    def check_size(self, size) -> int:
        return rules.check_size(size)

    def cap(self, size: int, options: dict) -> int:
        return size + options["slack"]

    def draw(self, size, count, rng, options, exclude=frozenset(), whole=True):
        return family.draw(size, count, rng, options, exclude, whole)

    def count(self, size: int, options: dict) -> int:
        return family.Band(size, options).total

    def layouts(self, arrays: dict):
        return rules.Layouts(arrays["grid"], arrays["start"])

    def fingerprints(self, layouts) -> list[bytes]:
        return family.fingerprints(layouts)

    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        return state.pos, state.seen

    def ground(self, lay, state) -> np.ndarray:
        return rules.floor(lay, state)


WORLD = Cues()
