"""The part of a grid size's layouts that the explorer page and the animations draw.

A side of at most `explorer.max_cells` cells is drawn whole (every maze, DoorKey and Memory grid
of the committed runs). A longer side, a T-Maze's corridor of up to 1,601 cells, is drawn over
the span the shown steps reach, a cell of margin each side: drawn whole, a 1,600-cell corridor
is 12,800 pixels wide in a GIF (its canvas alone ~20 GB with 21 variants), and the page's canvas
would give each cell less than a pixel. One window per grid size, shared by every episode of that
size, so that models compare cell by cell.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Window:
    """Rows top..top + rows - 1 and columns left..left + cols - 1 of a grid."""

    top: int
    left: int
    rows: int
    cols: int

    @property
    def side(self) -> int:
        """its longer side, in cells"""
        return max(self.rows, self.cols)

    def crop(self, grid: np.ndarray) -> np.ndarray:
        """(..., R, C) -> (..., rows, cols)"""
        return grid[..., self.top : self.top + self.rows, self.left : self.left + self.cols]

    def index(self, cells: np.ndarray) -> np.ndarray:
        """(..., 2) (row, col) cells of the grid -> row-major indices in the window"""
        cells = np.asarray(cells)
        return (cells[..., 0] - self.top) * self.cols + (cells[..., 1] - self.left)

    def cells(self, cells: np.ndarray) -> np.ndarray:
        """(..., 2) (row, col) cells of the grid -> the same cells in the window's own rows and
        columns"""
        return np.asarray(cells) - (self.top, self.left)

    def as_list(self) -> list[int]:
        return [self.top, self.left, self.rows, self.cols]


def covering(shape: tuple[int, int], paths: list[np.ndarray], max_cells: int) -> Window:
    """The window of a grid of `shape` (R, C) that draws `paths` ((T, 2) cells each, the shown
    steps of every episode of a grid size): per side, the whole side if it has at most
    `max_cells` cells, else the paths' span with a cell of margin each side, within the grid."""
    if not paths:
        raise ValueError("a window needs at least one episode's path")
    visited = np.concatenate([np.asarray(p).reshape(-1, 2) for p in paths])
    start, length = [], []
    for axis, side in enumerate(shape):
        if side <= max_cells:
            start.append(0)
            length.append(side)
            continue
        low = max(int(visited[:, axis].min()) - 1, 0)
        high = min(int(visited[:, axis].max()) + 1, side - 1)
        start.append(low)
        length.append(high - low + 1)
    return Window(start[0], start[1], length[0], length[1])
