"""The rules of the cue corridor, once, for every front end (data generation, evaluation, the
expert), batched over B layouts of one size in single numpy calls.

The T-Maze's corridor (world/tmaze/rules.py): cells 0..L-1 along row 1, the junction at column
L, one arm above it (row 0) and one below (row 2), the goal on one side and the trap on the
other; the agent starts at column 0 and sees only its own cell. What differs is what decides the
side: several marks on corridor cells, each shown whenever the agent stands on it (layouts.py
places them by the world's task). Two kinds of cue, A and B, and a distractor, a third mark that
never counts. A state is the agent's cell and `seen`, whether it has passed the last cue."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from dtpe.world import grids
from dtpe.world.lockstep import Ends, Lockstep, on_fail
from dtpe.world.vocabulary import Vocabulary

EMPTY, WALL, AGENT, GOAL, JUNCTION, TRAP, CUE_A, CUE_B, DISTRACTOR = range(9)
CODE_NAMES = ("empty", "wall", "agent", "goal", "junction", "trap", "cue_a", "cue_b", "distractor")
MARKS = (CUE_A, CUE_B, DISTRACTOR)
"""what lies on a corridor cell besides its floor"""
RIGHT, LEFT, UP, DOWN = range(4)
ACTION_NAMES = ("right", "left", "up", "down")
MOVES = np.array([[0, 1], [0, -1], [-1, 0], [1, 0]], dtype=np.int64)  # (row, col) per action
N_ACTIONS = len(MOVES)
VOCABULARY = Vocabulary(codes=CODE_NAMES, actions=ACTION_NAMES, agent=(AGENT,), wall=WALL)
CORRIDOR_ROW = 1
FLOOR = np.array([EMPTY, JUNCTION, *MARKS])
"""codes the agent walks on; in an arm its episode is over"""
SIDE_ROW = np.array([0, 2])
"""the goal's row by the layout's side (0: up, 1: down)"""
MIN_SIZE = 10
"""the smallest size, as the T-Maze's"""
MAX_SIZE = 10**5
"""a size's grid holds S + 1 columns in every layout of a batch"""


def check_size(size) -> int:
    """`size` (the longest corridor of a size's band) as an int, or a ValueError."""
    return grids.check_size(size, MIN_SIZE, "the cue corridor's")


@dataclass
class Layouts(grids.Layouts):
    """B layouts of one size S: grid (B, 3, S + 1) uint8 (the marks on row 1); start (B, 2), (1, 0)
    in every layout. Derived: length (B,) the corridor's cells, side (B,) 0 where the goal is the
    upper arm, last (B,) the last cue's column, goal and fail (B, 2) the arms' cells."""

    grid: np.ndarray
    start: np.ndarray

    def __post_init__(self):
        corridor = self.grid[:, CORRIDOR_ROW]
        rows = np.arange(len(self))
        self.length = (corridor == JUNCTION).argmax(1).astype(np.int64)
        self.side = (self.grid[rows, SIDE_ROW[1], self.length] == GOAL).astype(np.int64)
        cued = np.isin(corridor, (CUE_A, CUE_B))
        self.last = (corridor.shape[1] - 1 - cued[:, ::-1].argmax(1)).astype(np.int64)
        self.goal = np.stack([SIDE_ROW[self.side], self.length], 1)
        self.fail = np.stack([SIDE_ROW[1 - self.side], self.length], 1)

    @property
    def size(self) -> int:
        return self.grid.shape[2] - 1

    @property
    def ids(self) -> np.ndarray:
        """each layout's id from its content alone (its corridor up to the junction, where the
        side is drawn), so that one corridor has one id at every size"""
        return np.array([_id(row) for row in self.content()], dtype=np.int64)

    def content(self) -> list[bytes]:
        """each layout's corridor through its junction and arms: all that tells it apart"""
        return [
            self.grid[i, :, : self.length[i] + 1].tobytes() + self.length[i].tobytes()
            for i in range(len(self))
        ]


def _id(content: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(content, digest_size=8).digest(), "little") >> 1


def make(size: int, length, marks: list[dict[int, int]], side) -> Layouts:
    """The layouts of size `size` with corridors `length` (B,), each with its `marks` ({column:
    code}) and its goal on `side` (B,) (0 up, 1 down)."""
    length, side = (np.asarray(a, dtype=np.int64) for a in (length, side))
    b, rows = len(length), np.arange(len(length))
    grid = np.full((b, 3, size + 1), WALL, dtype=np.uint8)
    grid[:, CORRIDOR_ROW] = np.where(np.arange(size + 1) < length[:, None], EMPTY, WALL)
    grid[rows, CORRIDOR_ROW, length] = JUNCTION
    grid[rows, SIDE_ROW[side], length] = GOAL
    grid[rows, SIDE_ROW[1 - side], length] = TRAP
    for i, placed in enumerate(marks):
        for column, code in placed.items():
            grid[i, CORRIDOR_ROW, column] = code
    start = np.tile(np.array([CORRIDOR_ROW, 0], dtype=np.int64), (b, 1))
    return Layouts(grid, start)


@dataclass
class State:
    """B states: pos (B, 2) int64 (row, col); seen (B,) bool, whether the agent has stood on its
    layout's last cue."""

    pos: np.ndarray
    seen: np.ndarray


def _seen(layouts: Layouts, pos, which) -> np.ndarray:
    return (pos[:, 0] == CORRIDOR_ROW) & (pos[:, 1] >= layouts.last[which])


def initial_state(layouts: Layouts) -> State:
    b = len(layouts)
    pos = layouts.start.copy()
    return State(pos, _seen(layouts, pos, np.arange(b)))


def transition(layouts: Layouts, state: State, action, layout_index=None) -> State:
    """One move of each of B agents under `action` (B,); where the episode ends is `ENDS`'s."""
    which = np.arange(len(state.pos)) if layout_index is None else layout_index
    grid, n = layouts.grid, layouts.size
    target = state.pos + MOVES[action]
    inside = (target[:, 0] >= 0) & (target[:, 0] <= 2) & (target[:, 1] >= 0) & (target[:, 1] <= n)
    cell = grid[which, target[:, 0].clip(0, 2), target[:, 1].clip(0, n)]
    pos = np.where((~inside | (cell == WALL))[:, None], state.pos, target)
    return State(pos, state.seen | _seen(layouts, pos, which))


ENDS = Ends(failure=on_fail, failure_words="in the wrong arm")
"""the goal's arm succeeds, the other fails"""


def floor(layouts: Layouts, state: State) -> np.ndarray:
    """(B,) each agent's cell without its mark: the corridor, the junction, an arm."""
    under = layouts.grid[np.arange(len(layouts)), state.pos[:, 0], state.pos[:, 1]]
    return np.where(np.isin(under, MARKS), EMPTY, under)


def view(layouts: Layouts, state: State) -> np.ndarray:
    """What the model is given (B, 1, 1) uint8: the code of the agent's cell, its mark shown."""
    b = len(layouts)
    under = layouts.grid[np.arange(b), state.pos[:, 0], state.pos[:, 1]]
    return under.astype(np.uint8).reshape(b, 1, 1)


def render(layouts: Layouts, state: State) -> np.ndarray:
    obs = layouts.grid.copy()
    obs[np.arange(len(obs)), state.pos[:, 0], state.pos[:, 1]] = AGENT
    return obs


class BatchedCues(Lockstep):
    """B cue corridors of one size stepped in lockstep: the model is given `view`; the arms end an
    episode (`ENDS`)."""

    initial_state = staticmethod(initial_state)
    transition = staticmethod(transition)
    render = staticmethod(render)
    view = staticmethod(view)
    ends = ENDS
