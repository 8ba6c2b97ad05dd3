"""SimpleCrossing's cells as colours, for figures and pictures: MiniGrid's grey walls and green
goal on the white of the other worlds' pictures, the agent blue."""

from __future__ import annotations

import numpy as np

COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (44, 160, 44),  # goal
        *[(31, 119, 180)] * 4,  # agent, by heading
    ],
    dtype=np.uint8,
)
"""rgb of each cell code"""
LEGEND = {1: "wall", 2: "goal", 3: "agent"}
"""the codes a legend names, one per colour"""
