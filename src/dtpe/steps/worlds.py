"""What the steps need from each world, by the name params' `env.world` gives: its layouts
(drawn, told apart, saved and loaded), its expert's episodes, and the environment a policy is
evaluated in. The maze's is its own batched stepper; DoorKey's is MiniGrid itself."""

from __future__ import annotations

import numpy as np

from dtpe.world import layouts as maze_layouts
from dtpe.world import maze
from dtpe.world import planner as maze_planner
from dtpe.world.doorkey import planner as doorkey_planner
from dtpe.world.doorkey import rules as doorkey
from dtpe.world.doorkey.stepper import BatchedDoorKey


def play_expert(env, expert, n_actions: int, optimal: np.ndarray, detour_prob: float, rng) -> dict:
    """Plays one episode per layout of `env` in lockstep: `expert(rng)`'s actions (the planner's,
    drawn among the optimal ones at random), with random actions at `detour_prob` per step in
    the episodes where `optimal` is False. Returns the episode arrays of dataset.py's format."""
    obs = env.reset()
    b = len(optimal)
    states, actions, experts, rewards, alive = [], [], [], [], []
    while not env.done.all():
        best = expert(rng)
        detour = ~optimal & (rng.random(b) < detour_prob)
        action = np.where(detour, rng.integers(0, n_actions, b), best)
        alive.append(~env.done)
        states.append(obs)
        actions.append(action)
        experts.append(best)
        obs, reward, _, _ = env.step(action)
        rewards.append(reward)
    alive = np.stack(alive, 1)  # (E, Tmax)
    lengths = alive.sum(1)
    order = np.nonzero(alive)  # episode-major order of real steps
    rewards = np.stack(rewards, 1).astype(np.float32)
    rtg = np.flip(np.cumsum(np.flip(rewards, 1), 1), 1)
    return {
        "states": np.stack(states, 1)[order].astype(np.uint8),
        "actions": np.stack(actions, 1)[order].astype(np.uint8),
        "expert_actions": np.stack(experts, 1)[order].astype(np.uint8),
        "rewards": rewards[order],
        "rtg": np.ascontiguousarray(rtg)[order].astype(np.float32),
        "timesteps": order[1].astype(np.int32),
        "offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "optimal": optimal.astype(np.uint8),
        "success": env.success.astype(np.uint8),
    }


class Maze:
    """The Key-Door maze of world/maze.py: layouts from its own generator, ids 0..count-1."""

    name = "maze"
    extra_layout_arrays = ()

    @staticmethod
    def draw(size, count, rng, env, exclude=frozenset(), whole=True):
        return maze_layouts.generate(size, count, rng, env.wall_density, exclude=exclude)

    @staticmethod
    def fingerprints(lay) -> list[bytes]:
        return [maze_layouts.fingerprint(g, s) for g, s in zip(lay.grid, lay.start)]

    @staticmethod
    def optimal_steps(lay) -> np.ndarray:
        which = np.arange(len(lay))
        return maze_planner.CostToGo(lay).steps(lay.start, np.zeros(len(lay), bool), which)

    @staticmethod
    def episodes(lay, optimal, detour_prob, env, rng) -> dict:
        ctg, which = maze_planner.CostToGo(lay), np.arange(len(lay))
        game = maze.BatchedMaze(lay, env.cap(lay.size), env.step_reward, env.goal_reward)
        episodes = play_expert(
            game,
            lambda rng: ctg.optimal_action(game.pos, game.has_key, which, rng),
            maze.N_ACTIONS,
            optimal,
            detour_prob,
            rng,
        )
        episodes["optimal_steps"] = ctg.steps(lay.start, np.zeros(len(lay), bool), which).astype(
            np.int64
        )
        return episodes

    @staticmethod
    def layouts(arrays: dict):
        return maze.Layouts(arrays["grid"], arrays["start"], arrays["layout_id"])

    @staticmethod
    def evaluation_env(lay, env):
        return maze.BatchedMaze(lay, env.cap(lay.size), env.step_reward, env.goal_reward)

    replay_env = evaluation_env

    @staticmethod
    def agent(game) -> tuple[np.ndarray, np.ndarray]:
        """(cells (B, 2), carries the key (B,)) of the replay env's agents"""
        return game.pos, game.has_key


class DoorKey:
    """MiniGrid's DoorKey (world/doorkey/): layouts are `DoorKeyEnv(size).reset(seed)`'s, ids
    their seeds; episodes are stepped by this world's numpy rules, evaluations in MiniGrid."""

    name = "doorkey"
    extra_layout_arrays = ("heading",)
    DRAWS_PER_LAYOUT = 100
    """seeds drawn per layout wanted before a suite settles for fewer: MiniGrid's generator has
    few layouts at small sizes (48 at 5 x 5)"""
    CHUNK = 2000
    """layouts planned at once: the planner holds 24 N^2 states of each"""

    @staticmethod
    def draw(size, count, rng, env, exclude=frozenset(), whole=True):
        """`count` distinct layouts of side `size` none of which is in `exclude`, from seeds
        drawn by `rng`; with `whole` False, fewer if DRAWS_PER_LAYOUT * count seeds do not
        hold them (a suite of a small size), else a ValueError naming the shortfall."""
        from dtpe.world.doorkey import layouts as doorkey_layouts  # imports MiniGrid and pygame

        parts, kept, seen, drawn = [], 0, set(exclude), 0
        while kept < count and drawn < DoorKey.DRAWS_PER_LAYOUT * count:
            chunk = max(64, 2 * (count - kept))
            seeds = rng.integers(0, 2**31 - 1, chunk)
            drawn += chunk
            new = doorkey_layouts.distinct(doorkey_layouts.from_seeds(size, seeds), seen)
            new = new.subset(slice(0, count - kept))
            seen |= set(doorkey_layouts.fingerprints(new))
            parts.append(new)
            kept += len(new)
        if kept == 0 or (whole and kept < count):
            raise ValueError(
                f"DoorKey {size}x{size}: {kept} new distinct layouts in {drawn} seeds, "
                f"{count} wanted"
            )
        return doorkey.Layouts(
            *(
                np.concatenate([getattr(p, k) for p in parts])
                for k in ("grid", "start", "heading", "seeds")
            )
        )

    @staticmethod
    def fingerprints(lay) -> list[bytes]:
        return [
            lay.grid[i].tobytes() + lay.start[i].tobytes() + lay.heading[i].tobytes()
            for i in range(len(lay))
        ]

    @staticmethod
    def optimal_steps(lay) -> np.ndarray:
        return np.concatenate(
            [np.zeros(0, np.int64)]
            + [
                doorkey_planner.CostToGo(part).steps(
                    doorkey.initial_state(part), np.arange(len(part))
                )
                for part in _chunks(lay)
            ]
        ).astype(np.int64)

    @staticmethod
    def episodes(lay, optimal, detour_prob, env, rng) -> dict:
        return _join(
            [
                DoorKey._episodes(part, optimal[i : i + len(part)], detour_prob, env, rng)
                for i, part in zip(range(0, len(lay), DoorKey.CHUNK), _chunks(lay))
            ]
        )

    @staticmethod
    def _episodes(lay, optimal, detour_prob, env, rng) -> dict:
        ctg, which = doorkey_planner.CostToGo(lay), np.arange(len(lay))
        game = BatchedDoorKey(lay, env.cap(lay.size), env.step_reward, env.goal_reward)
        episodes = play_expert(
            game,
            lambda rng: ctg.optimal_action(game.state, which, rng),
            doorkey.N_ACTIONS,
            optimal,
            detour_prob,
            rng,
        )
        episodes["optimal_steps"] = ctg.steps(doorkey.initial_state(lay), which).astype(np.int64)
        return episodes

    @staticmethod
    def layouts(arrays: dict):
        return doorkey.Layouts(
            arrays["grid"], arrays["start"], arrays["heading"], arrays["layout_id"]
        )

    @staticmethod
    def evaluation_env(lay, env):
        from dtpe.world.doorkey.minigrid_env import vector_env  # imports MiniGrid and pygame

        return vector_env(lay, env.step_reward, env.goal_reward)

    @staticmethod
    def replay_env(lay, env):
        return BatchedDoorKey(lay, env.cap(lay.size), env.step_reward, env.goal_reward)

    @staticmethod
    def agent(game) -> tuple[np.ndarray, np.ndarray]:
        return game.state.pos, game.state.carrying


def _chunks(lay):
    return [lay.subset(slice(i, i + DoorKey.CHUNK)) for i in range(0, len(lay), DoorKey.CHUNK)]


def _join(parts: list[dict]) -> dict:
    """Episode dicts played apart, as one: offsets moved on by the steps before each."""
    out = {k: np.concatenate([p[k] for p in parts]) for k in parts[0] if k != "offsets"}
    ends = np.cumsum([0] + [p["offsets"][-1] for p in parts])
    out["offsets"] = np.concatenate(
        [[0]] + [p["offsets"][1:] + e for p, e in zip(parts, ends)]
    ).astype(np.int64)
    return out


WORLDS = {"maze": Maze, "doorkey": DoorKey}


def of_layouts(lay):
    """The world whose layouts `lay` are."""
    return DoorKey if isinstance(lay, doorkey.Layouts) else Maze
