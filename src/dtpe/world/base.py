"""The seam between the steps and a world: what every world declares and does. A world is one
package of world/ whose `WORLD` is an instance of `World`; world/catalog.py finds it by name
(params' `env.world`), and the steps, params and workflow call it through this interface only.

`env` below is params' `env` group: the world's name, `step_reward`, `goal_reward`, `options`
(the world's own knobs, params `worlds.<name>`) and `cap(size)`."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Callable, ClassVar

import numpy as np

from dtpe.world import grids
from dtpe.world.expert import play_expert
from dtpe.world.lockstep import Ends, Lockstep
from dtpe.world.search import CostToGo
from dtpe.world.vocabulary import Vocabulary


@dataclass(frozen=True)
class Words:
    """How the report and the explorer name a world's things."""

    layouts: str
    """its layouts, plural ("mazes")"""
    milestone: tuple[str, str] | None
    """what the agent's flag in `World.agent` says, set and not yet ("holds the key", "has not
    got the key"), or None if the world has none"""
    size: str = "{n}×{n}"
    """how a size n reads in tables, figures and the report: a grid's side for a grid world"""
    axis: str = "grid size N"
    """a figure's axis of sizes"""
    chance_pct: float | None = None
    """the success of a policy that reaches the end and picks among its endings at random (the
    T-Maze's two arms: 50); None where no such choice ends an episode"""


class World(ABC):
    """One world, as the steps, params, analysis and explorer see it.

    Required (a class attribute without a default, or an abstract method): `name`, `vocabulary`,
    `min_size`, `options`, `layout_arrays`, `words`, `colours`, `legend`, `stepper`, `planner`,
    `initial_state`, `cap`, `draw`, `count`, `layouts`, `agent`, `ground`. With a default,
    overridden where a world differs: `chunk` (None: every layout planned at once), `heading`
    (None: no heading), `evaluation_env` (its own stepper; MiniGrid itself for a MiniGrid
    world), `replay_env`, `check_size`, `fingerprints`, `arrays`, `optimal_steps`, `episodes`.
    Read from the stepper, never restated: `ends`, its terminal cells.

    What the pipeline relies on beyond the types (tests/test_world_registry.py checks each, for
    every world found):
    - cell codes: `vocabulary.codes` names one "empty" (the floor every agent starts on: `ground`
      at `initial_state`) and one "goal" (what an agent that succeeded stands on);
    - `layout_arrays` begins with "grid" (B, N, N) and "start" (B, 2), then any of its own
      (DoorKey's "heading"): a data file saves them, `fingerprints` tells layouts apart by them;
    - `options` is a literal dict in the class body of the package's `__init__.py` (world/
      catalog.py reads it from the source without importing the world, to validate params);
      `{}` for a world without knobs;
    - `draw` returns distinct layouts, none in `exclude`: the training, validation and test
      layouts of a run never repeat, nor the suites' (fewer only where `whole` is False), and
      at a size `count` names it draws every one of them and no more;
    - where an episode ends is its rules' `ENDS` (world/lockstep.py) alone: the stepper, the search,
      the MiniGrid view and the explorer read it; `transition` only moves, and a failing state
      is no dead end by hand (the search makes every terminal state one).
    """

    name: ClassVar[str]
    """its package's name under world/, params' `env.world`"""
    vocabulary: ClassVar[Vocabulary]
    """the cell codes and actions a model of this world takes"""
    min_size: ClassVar[int]
    """the smallest grid side it draws"""
    options: ClassVar[dict[str, tuple]]
    """its knobs (params `worlds.<name>.<knob>`): name -> (smallest, largest or None) allowed
    value, ints for an integer knob, or a tuple of the strings a knob may be (`("start",
    "anywhere")`); a literal dict (`options = {...}` in its package's __init__.py), read from
    the source by world/catalog.py"""
    layout_arrays: ClassVar[tuple[str, ...]]
    """the arrays a layout is saved as and told apart by: "grid", "start", then any of its own"""
    chunk: ClassVar[int | None] = None
    """layouts planned at once (None: all), where the planner's states a layout are many"""
    words: ClassVar[Words]
    colours: ClassVar[np.ndarray]
    """(codes, 3) uint8 rgb of each cell code, for figures, the explorer and animations"""
    legend: ClassVar[dict[int, str]]
    """{code: name} of the codes a legend shows, one per colour (the empty cell left out)"""
    stepper: ClassVar[type[Lockstep]]
    """its rules stepped in lockstep: data generation's expert plays in it, replays step in it"""
    planner: ClassVar[Callable[..., CostToGo]]
    """layouts -> its expert: optimal steps and actions from every state of them"""
    initial_state: ClassVar[Callable]
    """layouts -> the state each starts in (what `planner` and `stepper` take)"""

    def check_size(self, size) -> int:
        """`size` as an int, or a ValueError naming the problem."""
        return grids.check_size(size, self.min_size, f"{self.name}'s")

    @abstractmethod
    def cap(self, size: int, options: dict) -> int:
        """The episode's step cap at grid side `size`."""

    @abstractmethod
    def draw(self, size, count: int, rng, options: dict, exclude=frozenset(), whole=True):
        """`count` distinct layouts of side `size` whose fingerprints are not in `exclude`; with
        `whole` False a world whose layouts run out may return fewer (a small suite)."""

    @abstractmethod
    def count(self, size: int, options: dict) -> int | None:
        """How many distinct layouts it draws at side `size` (by `fingerprints`); None where they
        are more than any run draws (the maze's random walls)."""

    @abstractmethod
    def layouts(self, arrays: dict):
        """Its Layouts from a data file's arrays (`layout_arrays` and `layout_id`)."""

    @abstractmethod
    def agent(self, state) -> tuple[np.ndarray, np.ndarray]:
        """(cells (B, 2) row, col; the flag `words.milestone` names (B,) bool) of B states."""

    @abstractmethod
    def ground(self, layouts, state) -> np.ndarray:
        """(B,) the code of what each agent stands on: its cell as the observation would show it
        without the agent (the explorer draws the agent over it)."""

    def heading(self, state) -> np.ndarray | None:
        """(B,) the way each agent faces, MiniGrid's 0 right, 1 down, 2 left, 3 up; None in a world
        whose agent has no heading (the explorer draws a disc, not a triangle)."""
        return None

    @property
    def ends(self) -> Ends:
        """Its terminal cells (world/lockstep.py's Ends), as its stepper steps them: where an
        episode ends in success, and in failure where the world has one."""
        return self.stepper.ends

    def evaluation_env(self, layouts, env):
        """Where a policy is evaluated (rollout.BatchedEnv): by default its own stepper."""
        return self.replay_env(layouts, env)

    def replay_env(self, layouts, env) -> Lockstep:
        return self.stepper(layouts, env.cap(layouts.size), env.step_reward, env.goal_reward)

    def fingerprints(self, layouts) -> list[bytes]:
        return grids.fingerprints(layouts, self.layout_arrays)

    def arrays(self, layouts) -> dict:
        """What a data file holds of `layouts`."""
        out = {name: getattr(layouts, name) for name in self.layout_arrays}
        return {**out, "layout_id": layouts.ids}

    def optimal_steps(self, layouts) -> np.ndarray:
        """The expert's steps from each layout's start to its goal, int64."""
        return np.concatenate(
            [np.zeros(0, np.int64)]
            + [
                self.planner(part).steps(self.initial_state(part), np.arange(len(part)))
                for part in self._chunks(layouts)
            ]
        )

    def episodes(self, layouts, optimal: np.ndarray, detour_prob: float, env, rng) -> dict:
        """One expert episode per layout (world/expert.py's format), played `chunk` layouts at
        a time."""
        parts = []
        for start, part in zip(
            range(0, len(layouts), self.chunk or len(layouts) or 1), self._chunks(layouts)
        ):
            ctg, which = self.planner(part), np.arange(len(part))
            game = self.replay_env(part, env)
            episodes = play_expert(
                game,
                lambda rng: ctg.optimal_action(game.state, which, rng),
                self.vocabulary.n_actions,
                optimal[start : start + len(part)],
                detour_prob,
                rng,
            )
            episodes["optimal_steps"] = ctg.steps(self.initial_state(part), which)
            self._replay_in_evaluation(part, episodes, env)
            parts.append(episodes)
        return _join(parts)

    def _replay_in_evaluation(self, layouts, episodes: dict, env) -> None:
        """A world evaluated elsewhere than in its stepper (MiniGrid) replays its expert's
        episodes there: a ValueError where one ends otherwise, as where the rules forgot a
        failure cell the expert then walks through."""
        if type(self).evaluation_env is World.evaluation_env:
            return
        lengths = np.diff(episodes["offsets"])
        actions = np.zeros((len(lengths), lengths.max(initial=0)), np.int64)
        actions[np.arange(actions.shape[1]) < lengths[:, None]] = episodes["actions"]
        game = self.evaluation_env(layouts, env)
        game.reset()
        try:
            for step in actions.T:
                game.step(step)
        except ValueError as e:
            raise ValueError(f"{self.name}'s expert, replayed in its evaluation: {e}") from None
        wrong = (game.t != lengths) | (game.success != episodes["success"].astype(bool))
        if wrong.any():
            raise ValueError(
                f"{self.name}'s expert episodes of layouts {layouts.ids[wrong][:5].tolist()} end "
                f"otherwise in its evaluation: its rules and its evaluation are not one game"
            )

    def _chunks(self, layouts) -> list:
        step = self.chunk or len(layouts) or 1
        return [layouts.subset(slice(i, i + step)) for i in range(0, len(layouts), step)]


def _join(parts: list[dict]) -> dict:
    """Episode dicts played apart, as one: offsets moved on by the steps before each."""
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "offsets"}
    ends = np.cumsum([0] + [p["offsets"][-1] for p in parts])
    out["offsets"] = np.concatenate(
        [[0]] + [p["offsets"][1:] + e for p, e in zip(parts, ends)]
    ).astype(np.int64)
    return out
