"""Memory's cells as colours, for figures and pictures: MiniGrid's grey walls and green key and
ball on the white of the other worlds' pictures, the matching object's cell (the goal) pale
green, what the agent cannot see black, the agent blue."""

from __future__ import annotations

import numpy as np

COLOURS = np.array(
    [
        (0, 0, 0),  # unseen
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (242, 183, 1),  # key
        (44, 160, 44),  # ball
        (199, 233, 192),  # goal: the success cell
        *[(31, 119, 180)] * 4,  # agent, by heading
    ],
    dtype=np.uint8,
)
"""rgb of each cell code"""
LEGEND = {0: "unseen", 2: "wall", 3: "key", 4: "ball", 5: "goal", 6: "agent"}
"""the codes a legend names, one per colour"""
