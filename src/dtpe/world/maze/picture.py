"""The maze's cells as colours and characters, for figures, the explorer and the Gymnasium env's
pictures."""

from __future__ import annotations

import numpy as np

from dtpe.world.maze.rules import AGENT, DOOR, EMPTY, GOAL, KEY, VOCABULARY, WALL

COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (31, 119, 180),  # agent
        (44, 160, 44),  # goal
        (242, 183, 1),  # key
        (140, 86, 75),  # door
    ],
    dtype=np.uint8,
)
"""rgb of each cell code"""
LEGEND = {c: name for c, name in enumerate(VOCABULARY.codes) if c != EMPTY}
"""the codes a legend names, one per colour"""
SYMBOLS = {EMPTY: ".", WALL: "#", AGENT: "A", GOAL: "G", KEY: "K", DOOR: "D"}
"""character of each cell code in the ansi picture"""
