"""Each world's cells as colours, by the name params' `env.world` gives: what figures, the
explorer's page and its animations draw grids with."""

from __future__ import annotations

import numpy as np

from dtpe.world import env as maze_env
from dtpe.world import maze
from dtpe.world.doorkey import picture as doorkey_picture

COLOURS = {"maze": maze_env.COLOURS, "doorkey": doorkey_picture.COLOURS}
"""(codes, 3) uint8 rgb of each cell code, by world"""
CELL_PIXELS = maze_env.CELL_PIXELS
LEGENDS = {
    "maze": {c: name for c, name in enumerate(maze.VOCABULARY.codes) if c != maze.EMPTY},
    "doorkey": doorkey_picture.LEGEND,
}
"""{code: name} of each code a legend shows, one per colour (the empty cell left out)"""


def hex_colours(world: str) -> list[str]:
    """'#rrggbb' of each cell code"""
    return ["#%02x%02x%02x" % tuple(int(v) for v in c) for c in COLOURS[world]]


def rgb(obs: np.ndarray, world: str) -> np.ndarray:
    """(N, N) grid of codes -> (N * CELL_PIXELS, N * CELL_PIXELS, 3) uint8 image."""
    return COLOURS[world][obs].repeat(CELL_PIXELS, 0).repeat(CELL_PIXELS, 1)
