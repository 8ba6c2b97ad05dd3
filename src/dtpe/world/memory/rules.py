"""The rules of MiniGrid's Memory (minigrid 3.2.0: `MemoryEnv(size, random_length=True)`,
`MiniGridEnv.step`, `gen_obs_grid`) restated over numpy and batched over states, so that the
planner can search every state of many layouts at once and the data's episodes see what MiniGrid
shows.

A layout is what `reset` draws: a start room (columns 1..3 of the three middle rows) with the cue, a
key or a ball, at (N//2 - 1, 1); a hallway along the middle row to column `hallway_end` (drawn in
[4, N-2)); beyond it a vertical corridor with a key and a ball, one above and one below the middle
row, two rows away. The agent starts on the middle row, facing right, at a column in [1,
hallway_end]. Standing beside the object that matches the cue (the cell between it and the middle
row: the layout's GOAL) ends the episode as a success, beside the other one (`fail`) as a failure
(`ENDS`, world/lockstep.py's Ends); MiniGrid's pickup is a toggle there, which does nothing to a key
or a ball, so the actions are MiniGrid's moves. A state is (cell, heading, seen): `seen`, whether
the cue has been in the agent's view, is what the expert may know (planner.py); the rules never read
it.

What the model is given is the agent's view (`view`), MiniGrid's `obs["image"]` in this world's
codes: the 7 x 7 cells ahead of the agent and three to each side, rotated so that the agent looks
up from the bottom row's middle, cells beyond the border read as walls, and the cells a wall
hides (MiniGrid's `process_vis`) as "unseen". The full grid (`render`) is for pictures.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids, minigrid_moves
from dtpe.world.lockstep import Ends, on_fail
from dtpe.world.vocabulary import Vocabulary

UNSEEN, EMPTY, WALL, KEY, BALL, GOAL = range(6)
"""UNSEEN only in views (a cell the agent cannot see); GOAL only in the full grid (MiniGrid's
success cell, an empty floor in the view)"""
AGENT = 6
"""the agent's cell in the full grid holds AGENT + heading (codes 6..9); never in a view"""
N_CODES = 10
CODE_NAMES = ("unseen", "empty", "wall", "key", "ball", "goal", *minigrid_moves.agent_names())
MINIGRID_CELLS = {
    UNSEEN: (0, 0, 0),
    EMPTY: (1, 0, 0),
    WALL: (2, 5, 0),
    KEY: (5, 1, 0),
    BALL: (6, 1, 0),
}
"""the (object, colour, state) MiniGrid's `obs["image"]` writes for each code a view holds:
unseen, empty, a grey wall, a green key, a green ball (minigrid.core.constants)"""

ACTION_NAMES = minigrid_moves.MOVES
N_ACTIONS = len(ACTION_NAMES)
MINIGRID_ACTIONS = np.array([0, 1, 2], dtype=np.int64)
"""MiniGrid's number of each of our actions. Pickup (a toggle in MemoryEnv), drop, toggle and
done change nothing in Memory and are left out."""
VOCABULARY = Vocabulary(
    codes=CODE_NAMES, actions=ACTION_NAMES, agent=tuple(range(AGENT, N_CODES)), wall=WALL
)
WALKABLE = np.array([EMPTY, GOAL])
"""codes that forward enters (the key and the ball cannot be overlapped)"""
ENDS = Ends(failure=on_fail, failure_words="beside the other object")
"""beside the matching object (the goal cell) an episode ends in success, beside the other one
(the layout's `fail` cell) in failure, as MiniGrid's `terminated` at `success_pos` and
`failure_pos`"""

VIEW = 7
"""MiniGrid's agent_view_size: the view's side"""
MIN_SIZE = 9
"""MemoryEnv needs 7 (a start room of four columns, a hallway end in [4, N-2)); 7 x 7 holds 16
layouts only, too few to split and to leave a suite, so this world starts at 9 (60 layouts)"""


def check_size(size) -> int:
    """`size` as an int; a ValueError unless it is an odd integer of at least MIN_SIZE."""
    size = grids.check_size(size, MIN_SIZE, "Memory's")
    if size % 2 == 0:
        raise ValueError(
            f"grid size {size} is even: MiniGrid's MemoryEnv takes odd sizes only (it asserts an "
            "odd height, so that the hallway has a middle row)"
        )
    return size


@dataclass
class Layouts(grids.SeededLayouts):
    """B layouts of one size: grid (B, N, N) uint8 of EMPTY, WALL, KEY, BALL and GOAL (no agent);
    start (B, 2) int64 (row, col); seeds (B,) int64, the `reset` seed each was drawn with."""

    grid: np.ndarray
    start: np.ndarray
    seeds: np.ndarray

    def __post_init__(self):
        b, n = len(self.grid), self.size
        self.goal = grids.locate(self.grid, GOAL)
        # the other end cell, across the middle row from the goal
        self.fail = np.stack([np.full(b, 2 * (n // 2)) - self.goal[:, 0], self.goal[:, 1]], 1)
        self.cue = np.tile(np.array([n // 2 - 1, 1], dtype=np.int64), (b, 1))
        self._sees = None

    @property
    def sees_cue(self) -> np.ndarray:
        """(B, 4, N, N) bool: whether the cue is in the view of the agent at each (heading, row,
        col), computed once per layouts."""
        if self._sees is None:
            self._sees = cue_visibility(self)
        return self._sees


@dataclass
class State(minigrid_moves.Agent):
    """B states: pos (B, 2) int64 (row, col); heading (B,) int64; seen (B,) bool, whether the cue
    has been in the agent's view."""

    seen: np.ndarray


def initial_state(layouts: Layouts) -> State:
    """`reset`'s agent: at its start, facing right, having seen the cue if it is in view."""
    b = len(layouts)
    heading = np.zeros(b, dtype=np.int64)
    pos = layouts.start.copy()
    return State(pos, heading, layouts.sees_cue[np.arange(b), heading, pos[:, 0], pos[:, 1]])


def transition(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """One step of each of B states under our `action` (B,) (0..2). `layout_index`: as in
    minigrid_moves.in_front."""
    which, front, ahead = minigrid_moves.in_front(layouts, state, layout_index)
    pos, heading = minigrid_moves.turn_or_forward(state, action, front, ahead, WALKABLE)
    seen = state.seen | layouts.sees_cue[which, heading, pos[:, 0], pos[:, 1]]
    return State(pos, heading, seen)


def render(layouts: Layouts, state: State) -> np.ndarray:
    """Full grids (B, N, N) uint8, for pictures: the layout with the agent's code on its cell."""
    return minigrid_moves.with_agent(layouts.grid, state, AGENT)


def view(layouts: Layouts, state: State) -> np.ndarray:
    """What the model is given (B, 7, 7) uint8: MiniGrid's `obs["image"]` in this world's codes,
    as (row, col) of the image (its [x, y] transposed): the agent in row 6, column 3, looking up
    (row 0 is farthest ahead)."""
    cells, _, _ = view_cells(layouts, state.pos, state.heading, np.arange(len(state.pos)))
    return cells


def view_cells(layouts: Layouts, pos, heading, which) -> tuple[np.ndarray, ...]:
    """(codes (B, 7, 7) uint8 as `view` gives them, rows (B, 7, 7), cols (B, 7, 7) int64: the
    grid cell each view cell shows) of agents at `pos` (B, 2) facing `heading` (B,) in layouts
    `which` (B,). MiniGrid's `gen_obs_grid`: `slice` (walls beyond the border), `rotate_left`,
    `process_vis` (a wall hides what lies behind it), the agent's own cell empty."""
    n = layouts.size
    ahead = minigrid_moves.HEADINGS[heading]  # (B, 2) (row, col) step forward
    right = np.stack([ahead[:, 1], -ahead[:, 0]], 1)  # the agent's right: forward turned clockwise
    depth = (VIEW - 1 - np.arange(VIEW))[:, None]  # (7, 1): view row r is 6 - r cells ahead
    side = (np.arange(VIEW) - VIEW // 2)[None, :]  # (1, 7): view column c is c - 3 to the right
    rows = pos[:, 0, None, None] + depth * ahead[:, 0, None, None] + side * right[:, 0, None, None]
    cols = pos[:, 1, None, None] + depth * ahead[:, 1, None, None] + side * right[:, 1, None, None]
    inside = (rows >= 0) & (rows < n) & (cols >= 0) & (cols < n)
    grid = layouts.grid[which[:, None, None], rows.clip(0, n - 1), cols.clip(0, n - 1)]
    grid = np.where(inside, grid, WALL)
    visible = _visible(grid == WALL)
    codes = np.where(grid == GOAL, EMPTY, grid)
    codes[:, VIEW - 1, VIEW // 2] = EMPTY  # the agent's cell: what it carries, nothing here
    return np.where(visible, codes, UNSEEN).astype(np.uint8), rows, cols


def _visible(opaque: np.ndarray) -> np.ndarray:
    """(B, 7, 7) bool, MiniGrid's `Grid.process_vis` over B views at once (indexed [row, col] of
    the view, its [j, i]): from the agent's cell, each row from the nearest, a cell that is seen
    and does not hide what is behind it (anything but a wall) shows its neighbours along the row
    and the two ahead of it, swept left to right, then right to left."""
    b = len(opaque)
    mask = np.zeros((b, VIEW, VIEW), dtype=bool)
    mask[:, VIEW - 1, VIEW // 2] = True
    clear = ~opaque
    for j in reversed(range(VIEW)):
        for i in range(VIEW - 1):
            go = mask[:, j, i] & clear[:, j, i]
            mask[:, j, i + 1] |= go
            if j > 0:
                mask[:, j - 1, i + 1] |= go
                mask[:, j - 1, i] |= go
        for i in reversed(range(1, VIEW)):
            go = mask[:, j, i] & clear[:, j, i]
            mask[:, j, i - 1] |= go
            if j > 0:
                mask[:, j - 1, i - 1] |= go
                mask[:, j - 1, i] |= go
    return mask


def cue_visibility(layouts: Layouts) -> np.ndarray:
    """(B, 4, N, N) bool: whether the cue is in the view of an agent at each (heading, row, col)
    of each layout. Only cells within six of the cue can see it, so only those are computed."""
    b, n = len(layouts), layouts.size
    out = np.zeros((b, minigrid_moves.N_HEADINGS, n, n), dtype=bool)
    if b == 0:
        return out
    cue = layouts.cue[0]
    near = np.arange(max(0, cue[0] - VIEW + 1), min(n, cue[0] + VIEW))
    near_cols = np.arange(max(0, cue[1] - VIEW + 1), min(n, cue[1] + VIEW))
    which, heading, row, col = (
        a.ravel()
        for a in np.meshgrid(
            np.arange(b), np.arange(minigrid_moves.N_HEADINGS), near, near_cols, indexing="ij"
        )
    )
    pos = np.stack([row, col], 1)
    codes, rows, cols = view_cells(layouts, pos, heading, which)
    seen = ((rows == cue[0]) & (cols == cue[1]) & (codes != UNSEEN)).any((1, 2))
    out[which, heading, row, col] = seen
    return out
