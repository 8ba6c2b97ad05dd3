"""The cue corridor's cells as colours, for figures and the explorer: the T-Maze's, cue A orange,
cue B purple, the distractor olive."""

from __future__ import annotations

import numpy as np

from dtpe.world.cues.rules import EMPTY, VOCABULARY

COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (31, 119, 180),  # agent
        (44, 160, 44),  # goal
        (220, 220, 220),  # junction
        (214, 39, 40),  # trap
        (255, 127, 14),  # cue A
        (148, 103, 189),  # cue B
        (188, 189, 34),  # distractor
    ],
    dtype=np.uint8,
)
LEGEND = {c: name for c, name in enumerate(VOCABULARY.codes) if c != EMPTY}
