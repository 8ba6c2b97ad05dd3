"""What every world's grids share: a grid side checked against the world's minimum, and the cell
of a code that each grid holds once."""

from __future__ import annotations

import numpy as np


def check_size(size, minimum: int, whose: str = "the") -> int:
    """`size` as an int; a ValueError naming the problem if it is no integer or below
    `minimum` (`whose` minimum, e.g. "DoorKey's")."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise ValueError(f"grid size must be an integer, got {size!r}")
    if size < minimum:
        raise ValueError(f"grid size {size} is below {whose} minimum of {minimum}")
    return int(size)


def locate(grid: np.ndarray, code: int) -> np.ndarray:
    """(B, 2) cell (row, col) of the one `code` in each grid of `grid` (B, N, N)."""
    flat = (grid.reshape(len(grid), grid.shape[1] * grid.shape[2]) == code).argmax(1)
    return np.stack(np.divmod(flat, grid.shape[-1]), 1).astype(np.int64)
