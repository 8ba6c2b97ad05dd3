"""The rules of the T-Maze, once, for every front end (the Gymnasium env, data generation,
evaluation, the expert), batched over B layouts of one size in single numpy calls.

A layout is a corridor of cells 0..L-1 along row 1, the junction at column L, and two arms, one
above the junction (row 0) and one below (row 2): the arm on the cue's side is the goal, the
other a trap; every other cell is a wall. A layout of size S has its grid S + 1 columns wide, so
that corridors of any length in the size's band (layouts.py) share one array; the columns past
the junction are walls. The agent starts at column 0. Moving right, left, up or down into a wall
or off the grid leaves it in place (a pause); up or down at the junction enters an arm, which
ends the episode (`ENDS`): the goal as a success, the trap as a failure.

The cue (up or down) lies on one corridor cell, where the full grid (`render`) draws it. What the
model is given is only the agent's own cell (`view`, a 1 x 1 view): the cue where it shows, else
the corridor's floor or the junction; no coordinate, no step count. Where the cue shows is the
layout's `once`: at the first step only (Ni et al.'s passive T-Maze, the cue knob `start`, its
cell column 0), or every time the agent stands on its cell (`anywhere`). A state is the agent's
cell, `first` (no action taken yet: what `once` reads) and `seen` (whether the cue has shown:
what the expert may know, planner.py; the moves never read it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dtpe.world import grids
from dtpe.world.lockstep import Ends, Lockstep, on_fail
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, AGENT, GOAL, JUNCTION, CUE_UP, CUE_DOWN, TRAP = range(8)
"""EMPTY: the corridor's floor; CUE_UP, CUE_DOWN: the cue, on its corridor cell; GOAL, TRAP: the
arm on the cue's side and the other; AGENT: the agent's cell in the full grid, never in a view"""
N_CODES = 8
CODE_NAMES = ("empty", "wall", "agent", "goal", "junction", "cue_up", "cue_down", "trap")
RIGHT, LEFT, UP, DOWN = range(4)
ACTION_NAMES = ("right", "left", "up", "down")
MOVES = np.array([[0, 1], [0, -1], [-1, 0], [1, 0]], dtype=np.int64)  # (row, col) per action
N_ACTIONS = len(MOVES)
VOCABULARY = Vocabulary(codes=CODE_NAMES, actions=ACTION_NAMES, agent=(AGENT,), wall=WALL)
CORRIDOR_ROW = 1
FLOOR = np.array([EMPTY, JUNCTION, CUE_UP, CUE_DOWN])
"""codes the agent walks on; in an arm (or a wall) its episode is over"""
SIDE_ROW = np.array([0, 2])
"""the row of the goal's arm, by the layout's side (0: the cue says up, 1: down)"""

MIN_SIZE = 10
"""the smallest size: its widest band (world knob `shortest` 0, lengths 2..10) holds 18 layouts
at cue `start` (two a length), enough for training, validation and test layouts and a suite of
that size; a smaller size is refused, naming the knob that asked for it"""
MAX_SIZE = 10**6 - 1
"""a layout's id holds its cue's column in six digits (`Layouts.ids`)"""
MIN_LENGTH = 2
"""the shortest corridor any size draws: at cue `anywhere` the first half must hold a cell"""


def check_size(size) -> int:
    """`size` (the longest corridor of a size's band) as an int; a ValueError unless it is an
    integer from MIN_SIZE to MAX_SIZE."""
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)):
        raise ValueError(f"the T-Maze's size (a corridor length) must be an integer, got {size!r}")
    if size < MIN_SIZE:
        raise ValueError(
            f"corridor length {size} is below the T-Maze's minimum of {MIN_SIZE} (fewer layouts "
            "than a run splits into training, validation and test and a suite)"
        )
    if size > MAX_SIZE:
        raise ValueError(
            f"corridor length {size} is above the T-Maze's most of {MAX_SIZE} (a layout's id "
            "holds its cue's column in six digits)"
        )
    return int(size)


@dataclass
class Layouts(grids.Layouts):
    """B layouts of one size S: grid (B, 3, S + 1) uint8; start (B, 2) int64, (1, 0) in every
    layout; once (B,) bool, whether the cue shows at the first step only (cue knob `start`).
    Derived from the grid: length (B,) the corridor's cells (the junction's column), cue (B,) the
    cue's column, side (B,) 0 where the goal is the upper arm, 1 the lower; goal and fail (B, 2)
    the two arms' cells."""

    grid: np.ndarray
    start: np.ndarray
    once: np.ndarray

    def __post_init__(self):
        corridor = self.grid[:, CORRIDOR_ROW]  # (B, S + 1)
        self.length = (corridor == JUNCTION).argmax(1).astype(np.int64)
        self.cue = np.isin(corridor, (CUE_UP, CUE_DOWN)).argmax(1).astype(np.int64)
        self.side = (self.grid[np.arange(len(self)), SIDE_ROW[1], self.length] == GOAL).astype(
            np.int64
        )
        self.goal = np.stack([SIDE_ROW[self.side], self.length], 1)
        self.fail = np.stack([SIDE_ROW[1 - self.side], self.length], 1)

    @property
    def size(self) -> int:
        """the size knob S: the longest corridor of its band, one less than the grid's columns"""
        return self.grid.shape[2] - 1

    @property
    def ids(self) -> np.ndarray:
        """each layout's id, from its content alone, so that one layout has one id at every size
        and in every file: 10 * (10**6 * length + cue column) + side (0 up, 1 down)"""
        return 10 * (10**6 * self.length + self.cue) + self.side


def make(size: int, length, cue, side, once) -> Layouts:
    """The layouts of size `size` with corridors `length` (B,), the cue at columns `cue` (B,)
    pointing to `side` (B,) (0 up, 1 down), shown at the first step only where `once` (B,)."""
    length, cue, side = (np.asarray(a, dtype=np.int64) for a in (length, cue, side))
    b, rows = len(length), np.arange(len(length))
    grid = np.full((b, 3, size + 1), WALL, dtype=np.uint8)
    grid[:, CORRIDOR_ROW] = np.where(np.arange(size + 1) < length[:, None], EMPTY, WALL)
    grid[rows, CORRIDOR_ROW, length] = JUNCTION
    grid[rows, SIDE_ROW[side], length] = GOAL
    grid[rows, SIDE_ROW[1 - side], length] = TRAP
    grid[rows, CORRIDOR_ROW, cue] = np.where(side == 0, CUE_UP, CUE_DOWN)
    start = np.tile(np.array([CORRIDOR_ROW, 0], dtype=np.int64), (b, 1))
    return Layouts(grid, start, np.broadcast_to(np.asarray(once, dtype=bool), (b,)).copy())


@dataclass
class State:
    """B states: pos (B, 2) int64 (row, col); seen (B,) bool, whether the cue has shown; first
    (B,) bool, whether no action has been taken yet."""

    pos: np.ndarray
    seen: np.ndarray
    first: np.ndarray


def shows_cue(layouts: Layouts, pos, first, which) -> np.ndarray:
    """(B,) bool: whether agents at `pos` (B, 2) in layouts `which` (B,) see the cue, `first`
    (B,) where no action has been taken yet."""
    on_cue = (pos[:, 0] == CORRIDOR_ROW) & (pos[:, 1] == layouts.cue[which])
    return on_cue & (first | ~layouts.once[which])


def initial_state(layouts: Layouts) -> State:
    """Every agent at its start, before its first action, having seen the cue if it shows there."""
    b = len(layouts)
    pos, first = layouts.start.copy(), np.ones(b, dtype=bool)
    return State(pos, shows_cue(layouts, pos, first, np.arange(b)), first)


def transition(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """One move of each of B agents under `action` (B,); where the episode ends is `ENDS`'s.
    `layout_index` (B,) selects each agent's layout where many states share few layouts (the
    expert), instead of repeating the layouts."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    grid, n = layouts.grid, layouts.size
    target = state.pos + MOVES[action]  # (B, 2)
    inside = (target[:, 0] >= 0) & (target[:, 0] <= 2) & (target[:, 1] >= 0) & (target[:, 1] <= n)
    cell = grid[which, target[:, 0].clip(0, 2), target[:, 1].clip(0, n)]
    stay = ~inside | (cell == WALL)
    pos = np.where(stay[:, None], state.pos, target)
    first = np.zeros(len(pos), dtype=bool)
    seen = state.seen | shows_cue(layouts, pos, first, which)
    return State(pos, seen, first)


ENDS = Ends(failure=on_fail, failure_words="in the wrong arm")
"""the cue's arm (`layouts.goal`) succeeds, the other (`layouts.fail`) fails"""


def floor(layouts: Layouts, state: State) -> np.ndarray:
    """(B,) the code of each agent's cell without the cue: the corridor, the junction, an arm."""
    under = layouts.grid[np.arange(len(layouts)), state.pos[:, 0], state.pos[:, 1]]
    return np.where(np.isin(under, (CUE_UP, CUE_DOWN)), EMPTY, under)


def view(layouts: Layouts, state: State) -> np.ndarray:
    """What the model is given (B, 1, 1) uint8: the code of the agent's cell, the cue where it
    shows, else `floor`'s."""
    b = len(layouts)
    cue = layouts.grid[np.arange(b), CORRIDOR_ROW, layouts.cue]
    shown = shows_cue(layouts, state.pos, state.first, np.arange(b))
    return np.where(shown, cue, floor(layouts, state)).astype(np.uint8).reshape(b, 1, 1)


def render(layouts: Layouts, state: State) -> np.ndarray:
    """Full grids (B, 3, S + 1) uint8, for pictures: the layout, its cue drawn, with the agent."""
    obs = layouts.grid.copy()
    obs[np.arange(len(obs)), state.pos[:, 0], state.pos[:, 1]] = AGENT
    return obs


class BatchedTMaze(Lockstep):
    """B T-Mazes of one size stepped in lockstep (world/lockstep.py's rules of an episode): the
    model is given `view`; the arms end an episode (`ENDS`)."""

    initial_state = staticmethod(initial_state)
    transition = staticmethod(transition)
    render = staticmethod(render)
    view = staticmethod(view)
    ends = ENDS
