"""A MiniGrid env seen as a MiniGrid world sees it, once for every such world: its grid read in
the world's codes (`GridReader`), the layouts `reset(seed)` draws (`from_seeds`), and
what a world is evaluated in, MiniGrid's own env, its rules and generator untouched, seen through
the world's ProjectView (the full grid in the world's codes, the world's actions, the project's
rewards), one env per layout reset with the layout's seed, played as one batch of episodes
(gym_batch.seeded). Where an episode ended, and whether in success, is the world's declaration
(world/lockstep.py) read at MiniGrid's agent, held to MiniGrid's `terminated` (`outcome`), within
its step limit (`truncated` at its `max_steps`). Imports MiniGrid: a world loads it only where
it reads or plays MiniGrid."""

from __future__ import annotations

from dataclasses import fields
from typing import ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from minigrid.core.constants import OBJECT_TO_IDX, STATE_TO_IDX

from dtpe.world import grids
from dtpe.world.gym_batch import seeded
from dtpe.world.lockstep import Ends
from dtpe.world.minigrid_moves import agent_code
from dtpe.world.vocabulary import Vocabulary

_UNKNOWN = 255


class GridReader:
    """A MiniGrid env's grid in a MiniGrid world's codes. The world names its codes as MiniGrid
    names what a cell holds: the object ("wall", "goal", "key"), then its state where it has one
    ("door locked"); its agent's codes are world/minigrid_moves.py's (the first
    `vocabulary.agent[0]`, then the heading, then whether it carries something). `world`: its
    name in errors ("DoorKey")."""

    def __init__(self, vocabulary: Vocabulary, world: str):
        self.vocabulary, self.world = vocabulary, world
        self.table = np.full((len(OBJECT_TO_IDX), len(STATE_TO_IDX)), _UNKNOWN, dtype=np.uint8)
        """our code of each MiniGrid (object, state) pair of the world's grids"""
        for code, name in enumerate(vocabulary.codes):
            if code not in vocabulary.agent:
                thing, _, state = name.partition(" ")
                # `Grid.encode` writes state 0 ("open") for an object without state
                self.table[OBJECT_TO_IDX[thing], STATE_TO_IDX[state or "open"]] = code

    def still(self, env: gym.Env) -> np.ndarray:
        """The grid (N, N) uint8 without the agent (on a reset env, the empty cell it starts on);
        a ValueError where it holds objects the world has not."""
        encoded = env.unwrapped.grid.encode()  # (x, y, [object, colour, state])
        grid = self.table[encoded[..., 0], encoded[..., 2]].T
        if (grid == _UNKNOWN).any():
            raise ValueError(f"env holds objects other than {self.world}'s")
        return grid

    def agent(self, env: gym.Env) -> tuple[tuple[int, int], int]:
        """The agent's cell (row, col) and code."""
        env = env.unwrapped
        x, y = env.agent_pos
        return (y, x), agent_code(self.vocabulary.agent[0], env.agent_dir, env.carrying is not None)

    def observe(self, env: gym.Env) -> np.ndarray:
        """The full observation (N, N) uint8: the grid with the agent."""
        grid = self.still(env)
        cell, code = self.agent(env)
        grid[cell] = code
        return grid


def from_seeds(env: gym.Env, seeds, reader: GridReader, layouts: type) -> grids.SeededLayouts:
    """The layouts `env.reset(seed=s)` draws for each of `seeds`, as the world's `layouts` class
    (a SeededLayouts dataclass of grid, start, seeds and heading where it has one: a world
    without it starts its agent facing right, and a ValueError says where it does not)."""
    seeds = np.asarray(seeds)
    if seeds.ndim != 1 or not (np.issubdtype(seeds.dtype, np.integer) or seeds.size == 0):
        raise ValueError(f"seeds must be a 1-d sequence of integers, got {seeds!r}")
    if (seeds < 0).any():
        raise ValueError(f"seeds must be non-negative (Gymnasium's rule), got {seeds.min()}")
    size = env.unwrapped.width
    grid = np.empty((len(seeds), size, size), dtype=np.uint8)
    start = np.empty((len(seeds), 2), dtype=np.int64)
    heading = np.empty(len(seeds), dtype=np.int64)
    for i, seed in enumerate(seeds):
        env.reset(seed=int(seed))
        grid[i] = reader.still(env)
        start[i] = env.unwrapped.agent_pos[::-1]
        heading[i] = env.unwrapped.agent_dir
    arrays = {"grid": grid, "start": start, "heading": heading, "seeds": seeds.astype(np.int64)}
    names = [f.name for f in fields(layouts)]
    if "heading" not in names and heading.any():
        first = np.flatnonzero(heading)[0]
        raise ValueError(
            f"seed {seeds[first]}: the agent starts facing {heading[first]}, not right"
        )
    return layouts(**{name: arrays[name] for name in names})


def outcome(env: gym.Env, layout, ends: Ends, terminated: bool) -> bool:
    """Whether a MiniGrid episode of `layout` (one layout) ended in success by the world's
    terminal cells `ends` at MiniGrid's agent. A ValueError where MiniGrid's `terminated` and
    the declaration disagree: the world's rules would end its episodes elsewhere than MiniGrid's
    (its data and its evaluation would not be the same game)."""
    x, y = env.unwrapped.agent_pos
    won, lost = ends.at(layout, np.array([[y, x]]), np.zeros(1, dtype=np.int64))
    if bool(terminated) != bool(won[0] or lost[0]):
        raise ValueError(
            f"MiniGrid's {type(env.unwrapped).__name__} {'ended' if terminated else 'went on'} "
            f"at cell {(int(y), int(x))}, where the world's rules "
            f"{'go on' if terminated else 'end the episode'}"
        )
    return bool(won[0])


def fully_observed(env_class: type) -> type:
    """`env_class` without the agent's partial 7 x 7 view: MiniGrid builds it from the grid at
    every `step` and `reset` (`gen_obs`, most of a step's time), and ProjectView reads the full
    grid instead."""
    return type(f"FullyObserved{env_class.__name__}", (env_class,), {"gen_obs": lambda self: None})


class ProjectView(gym.Wrapper):
    """A MiniGrid env of one layout with its world's observation (the full (N, N) grid of
    codes), actions, rewards (`step_reward` every step, plus `goal_reward` on a success:
    world/doorkey/stepper.py says why not MiniGrid's) and success (`info["success"]`, by its
    terminal cells, `outcome`). The grid is read once after `reset` (`still`: the cells no step
    changes) and each step `draw` writes what moves into a copy of it: the agent, and what a
    world's view adds (DoorKey's key and door)."""

    reader: ClassVar[GridReader]
    """the world's codes of MiniGrid's objects"""
    minigrid_actions: ClassVar[np.ndarray]
    """MiniGrid's number of each of the world's actions"""
    ends: ClassVar[Ends]
    """the world's terminal cells (its rules' ENDS)"""

    def __init__(self, env: gym.Env, layout, step_reward: float, goal_reward: float):
        super().__init__(env)
        self.layout = layout
        n = env.unwrapped.width
        self.observation_space = spaces.Box(0, self.reader.vocabulary.n_codes - 1, (n, n), np.uint8)
        self.action_space = spaces.Discrete(len(self.minigrid_actions))
        self.step_reward, self.goal_reward = step_reward, goal_reward

    @classmethod
    def batch(
        cls, make, layouts, first, step_reward: float, goal_reward: float, env: str, hint: str
    ):
        """The `layouts` as a batch of MiniGrid episodes, one env `make()` each, seen through this
        view and reset with the layout's seed (gym_batch.seeded): a ValueError where a seed's
        observation is not the layout's `first` (B, N, N), the world's own, `hint` the likely
        cause. `env`: MiniGrid's env in the message ("MiniGrid's DoorKeyEnv(8)")."""
        return seeded(
            lambda layout: cls(make(), layout, step_reward, goal_reward), layouts, first, env, hint
        )

    def still(self) -> np.ndarray:
        """The grid (N, N) of the reset env without the agent."""
        return self.reader.still(self.env)

    def draw(self, obs: np.ndarray) -> None:
        """Writes what moves, as the env has it now, into `obs` (the still grid's copy)."""
        cell, code = self.reader.agent(self.env)
        obs[cell] = code

    def _observation(self) -> np.ndarray:
        obs = self.grid.copy()
        self.draw(obs)
        return obs

    def reset(self, **kwargs):
        _, info = self.env.reset(**kwargs)
        self.grid = self.still()
        return self._observation(), info

    def step(self, action):
        _, _, terminated, truncated, info = self.env.step(int(self.minigrid_actions[int(action)]))
        success = outcome(self.env, self.layout, self.ends, terminated)
        reward = self.step_reward + self.goal_reward * success
        return self._observation(), reward, terminated, truncated, {**info, "success": success}
