"""What every world's grids share: its layouts' container, a grid side checked against the world's
minimum, the cell of a code that each grid holds once, and layouts told apart and deduplicated."""

from __future__ import annotations

from dataclasses import fields

import numpy as np


class Layouts:
    """B layouts of one size, as a world's dataclass of (B, ...) arrays declares them (its grid
    (B, N, N) uint8 first); what every world's layouts do."""

    grid: np.ndarray

    def __len__(self) -> int:
        return len(self.grid)

    @property
    def size(self) -> int:
        return self.grid.shape[1]

    def subset(self, index):
        """The layouts `index` selects (an index array, a slice), as the same world's Layouts."""
        return type(self)(**{f.name: getattr(self, f.name)[index] for f in fields(self)})

    @classmethod
    def join(cls, parts: list):
        """The layouts of `parts` (one or more), in order, as one."""
        return cls(
            **{f.name: np.concatenate([getattr(p, f.name) for p in parts]) for f in fields(cls)}
        )


class SeededLayouts(Layouts):
    """Layouts a MiniGrid env draws by `reset(seed)`: their `seeds` (B,) int64 name them."""

    seeds: np.ndarray

    @property
    def ids(self) -> np.ndarray:
        """each layout's id, as the evaluation's rows name it: its seed"""
        return self.seeds


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


def fingerprints(layouts, arrays: tuple[str, ...]) -> list[bytes]:
    """Identity of each of `layouts`: the bytes of its rows of the named arrays (a world's grid,
    start and whatever else tells two of its layouts apart)."""
    rows = [getattr(layouts, name) for name in arrays]
    return [
        b"".join(np.ascontiguousarray(a[i]).tobytes() for a in rows) for i in range(len(layouts))
    ]


def draw_distinct(draw, count: int, fingerprints, exclude=frozenset(), limit=None) -> list:
    """What a world's generator keeps: from batches `draw(n)` of n candidate layouts (n twice the
    number still wanted, at least 64), the first `count` distinct ones whose fingerprints are not
    in `exclude`, in the order drawn, as the part kept of each batch. With `limit`, it stops after
    that many candidates, with fewer if they did not hold `count` (a world with few layouts)."""
    parts, kept, seen, drawn = [], 0, set(exclude), 0
    while kept < count and (limit is None or drawn < limit):
        n = max(64, 2 * (count - kept))
        drawn += n
        batch = draw(n)
        new = new_distinct(fingerprints(batch), seen, count - kept)
        parts.append(batch.subset(np.array(new, dtype=np.int64)))
        kept += len(new)
    return parts


def draw_by_seed(
    from_seeds, count: int, rng, fingerprints, exclude, whole: bool, per_layout: int, what: str
):
    """What a world drawn by a generator's seeds keeps (MiniGrid's): `count` distinct layouts none
    of which is in `exclude`, from seeds drawn by `rng` and read by `from_seeds`; with `whole`
    False, fewer if `per_layout` * count seeds do not hold them (a suite of a small size), else a
    ValueError naming the shortfall (`what`: the world and size): the distinct layouts the seeds
    drew, which are the size's as far as they tell, and how many of them were new."""
    limit, drawn, seeds = per_layout * count, set(), 0

    def told_apart(layouts) -> list[bytes]:
        nonlocal seeds
        codes = fingerprints(layouts)
        drawn.update(codes)
        seeds += len(codes)
        return codes

    parts = draw_distinct(
        lambda n: from_seeds(rng.integers(0, 2**31 - 1, n)), count, told_apart, exclude, limit
    )
    kept = sum(len(p) for p in parts)
    if kept == 0 or (whole and kept < count):
        taken = f", {len(drawn) - kept} of them taken already" if len(drawn) > kept else ""
        raise ValueError(
            f"{what} holds {len(drawn)} distinct layouts as far as {seeds} seeds tell{taken}: "
            f"{kept} new ones, {count} wanted"
        )
    return type(parts[0]).join(parts)


def new_distinct(codes: list[bytes], seen: set, room: int) -> list[int]:
    """Indices of the first `room` of `codes` that are neither in `seen` nor repeats; their codes
    join `seen`. A world's generator keeps drawing until its suite is full of them."""
    kept = []
    for i, code in enumerate(codes):
        if len(kept) == room:
            break
        if code not in seen:
            seen.add(code)
            kept.append(i)
    return kept
