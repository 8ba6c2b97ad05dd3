"""The T-Maze's cells as colours and characters, for figures, the explorer and the Gymnasium
env's pictures: the maze's white floor, grey walls, blue agent and green goal; the junction pale,
the cue orange (up) or purple (down), the trap red."""

from __future__ import annotations

import numpy as np

from dtpe.world.tmaze.rules import (
    AGENT,
    CUE_DOWN,
    CUE_UP,
    EMPTY,
    GOAL,
    JUNCTION,
    TRAP,
    VOCABULARY,
    WALL,
)

COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (31, 119, 180),  # agent
        (44, 160, 44),  # goal
        (220, 220, 220),  # junction
        (255, 127, 14),  # cue up
        (148, 103, 189),  # cue down
        (214, 39, 40),  # trap
    ],
    dtype=np.uint8,
)
"""rgb of each cell code"""
LEGEND = {c: name for c, name in enumerate(VOCABULARY.codes) if c != EMPTY}
"""the codes a legend names, one per colour"""
SYMBOLS = {
    EMPTY: ".",
    WALL: "#",
    AGENT: "A",
    GOAL: "G",
    JUNCTION: "+",
    CUE_UP: "^",
    CUE_DOWN: "v",
    TRAP: "X",
}
"""character of each cell code in the ansi picture"""
