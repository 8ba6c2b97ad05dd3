"""Benchmark, not a test: how fast DoorKey steps where the study steps it, and how long its data
step takes, each against a peer measured in this run on this machine.

1. Agent-steps per second on 8x8 layouts with random actions (only `step` timed; layouts drawn
   and episodes reset outside the clock; only episodes still running are counted):
   - the evaluation's env: MiniGrid's DoorKey, B envs seen through
     DoorKeyView (world/doorkey/minigrid_env.py), played as the rollout plays it;
   - its peer, MiniGrid's own single env `MiniGrid-DoorKey-8x8-v0`, one action at a time (the
     faster of `gym.make`'s wrappers and the bare env);
   - data generation's stepper, BatchedDoorKey (this world's numpy rules), and its peer, the
     maze's BatchedMaze, both B in lockstep.
2. Wall time of `dataset.build` for params-doorkey.yaml against params.yaml (the maze default).

The last line printed is one JSON record.

    python bench/doorkey.py [--batch 100] [--seconds 3]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import gymnasium as gym
import minigrid  # noqa: F401  registers MiniGrid-DoorKey-8x8-v0
import numpy as np
from env import SIZE, batched_rate, minigrid_rate  # bench/env.py, beside this script

from dtpe import params as params_mod
from dtpe.steps import dataset
from dtpe.world import catalog
from dtpe.world.doorkey.minigrid_env import minigrid_batch
from dtpe.world.doorkey.rules import N_ACTIONS
from dtpe.world.doorkey.stepper import BatchedDoorKey

ROOT = Path(__file__).resolve().parents[1]
PEER = "MiniGrid-DoorKey-8x8-v0"


def batch_rate(make, n_actions: int, batch: int, seconds: float, rng) -> float:
    """Agent-steps/s of the batched envs `make()` builds, each played until every episode ends
    (or the clock runs out)."""
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        env = make()
        env.reset()
        while not env.done.all() and elapsed < seconds:
            actions = rng.integers(0, n_actions, batch)
            running = int((~env.done).sum())
            start = time.perf_counter()
            env.step(actions)
            elapsed += time.perf_counter() - start
            steps += running
    return steps / elapsed


def data_seconds(params) -> float:
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        dataset.build(params, Path(tmp) / "data")
        return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch", type=int, default=100, help="episodes stepped together")
    parser.add_argument("--seconds", type=float, default=3.0, help="stepping time per contender")
    args = parser.parse_args()
    doorkey = params_mod.load(ROOT / "params-doorkey.yaml")
    maze = params_mod.load(ROOT / "params.yaml")
    rng = np.random.default_rng(0)
    env = doorkey.env
    lay = catalog.get(env.world).draw(SIZE, 4 * args.batch, rng, env.options)
    pool = [lay.subset(slice(i * args.batch, (i + 1) * args.batch)) for i in range(4)]
    contenders = {
        "MiniGrid envs (evaluation)": lambda: minigrid_batch(
            pool[int(rng.integers(4))], env.step_reward, env.goal_reward
        ),
        "BatchedDoorKey (data)": lambda: BatchedDoorKey(
            pool[int(rng.integers(4))], env.cap(SIZE), env.step_reward, env.goal_reward
        ),
    }
    rates = {}
    for name, make in contenders.items():
        batch_rate(make, N_ACTIONS, args.batch, 0.2, rng)  # warm-up
        rates[name] = batch_rate(make, N_ACTIONS, args.batch, args.seconds, rng)
        print(
            f"{name}, B={args.batch}, {SIZE}x{SIZE}, random actions: "
            f"{rates[name]:,.0f} agent-steps/s"
        )
    batched_rate(maze.env, args.batch, 0.2, rng)  # bench/env.py's own measure of the maze
    rates["BatchedMaze"] = batched_rate(maze.env, args.batch, args.seconds, rng)
    print(f"BatchedMaze, B={args.batch}, {SIZE}x{SIZE}: {rates['BatchedMaze']:,.0f} agent-steps/s")
    peers = {}
    for how, single in (("gym.make", gym.make(PEER)), ("bare env", gym.make(PEER).unwrapped)):
        minigrid_rate(single, 0.2, rng)
        peers[how] = minigrid_rate(single, args.seconds, rng)
        print(f"{PEER} ({how}), random actions: {peers[how]:,.0f} agent-steps/s")
    peer = max(peers.values())
    evaluation = rates["MiniGrid envs (evaluation)"]
    print(f"evaluation env: {evaluation / peer:.1f}x MiniGrid's single env")
    print(
        f"BatchedDoorKey: {rates['BatchedDoorKey (data)'] / rates['BatchedMaze']:.2f}x BatchedMaze"
    )
    seconds = {"doorkey": data_seconds(doorkey), "maze": data_seconds(maze)}
    print(
        f"dataset.build: params-doorkey.yaml {seconds['doorkey']:.1f} s "
        f"({doorkey.data.episodes} episodes, suites {doorkey.data.suite_sizes}), "
        f"params.yaml {seconds['maze']:.1f} s ({maze.data.episodes} episodes)"
    )
    print(
        json.dumps(
            {
                "name": "doorkey_steps_per_second",
                "evaluation_env": round(evaluation),
                "minigrid_single": round(peer),
                "batched_doorkey": round(rates["BatchedDoorKey (data)"]),
                "batched_maze": round(rates["BatchedMaze"]),
                "data_seconds": {k: round(v, 1) for k, v in seconds.items()},
                "unit": "agent-steps/s",
            }
        )
    )


if __name__ == "__main__":
    main()
