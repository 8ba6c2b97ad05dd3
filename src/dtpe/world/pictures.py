"""Grids of cell codes as pictures, in any world's colours (World.colours): what figures, the
explorer's page and its animations draw."""

from __future__ import annotations

import numpy as np

CELL_PIXELS = 8
"""side of one cell in an rgb image: 160 pixels for a 20 x 20 grid"""


def hex_colours(colours: np.ndarray) -> list[str]:
    """'#rrggbb' of each cell code"""
    return ["#%02x%02x%02x" % tuple(int(v) for v in c) for c in colours]


def rgb(obs: np.ndarray, colours: np.ndarray) -> np.ndarray:
    """(N, N) grid of codes -> (N * CELL_PIXELS, N * CELL_PIXELS, 3) uint8 image."""
    return colours[obs].repeat(CELL_PIXELS, 0).repeat(CELL_PIXELS, 1)
