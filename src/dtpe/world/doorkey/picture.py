"""DoorKey's cells as colours, for figures and pictures: MiniGrid's own look (grey walls, a
green goal, a yellow key and door) on the white of the maze's pictures, the door lighter as it
unlocks and opens, the agent blue, purple once it carries the key."""

from __future__ import annotations

import numpy as np

COLOURS = np.array(
    [
        (255, 255, 255),  # empty
        (60, 60, 60),  # wall
        (44, 160, 44),  # goal
        (242, 183, 1),  # key
        (140, 86, 75),  # door locked
        (196, 156, 148),  # door closed
        (231, 212, 207),  # door open
        *[(31, 119, 180)] * 4,  # agent, by heading
        *[(148, 103, 189)] * 4,  # agent with the key, by heading
    ],
    dtype=np.uint8,
)
"""rgb of each cell code"""
LEGEND = {
    1: "wall",
    2: "goal",
    3: "key",
    4: "door locked",
    5: "door closed",
    6: "door open",
    7: "agent",
    11: "agent with the key",
}
"""the codes a legend names, one per colour"""
