"""Benchmark, not a test: how fast the world steps, and how long the data step takes.

1. Agent-steps per second of `BatchedMaze` (B mazes in lockstep, random actions) on 8x8 layouts,
   against MiniGrid's `MiniGrid-DoorKey-8x8-v0` stepped one action at a time with random actions,
   both measured in this run on this machine. Only `step` is timed on either side: layouts are
   drawn, actions sampled and episodes reset outside the clock. Our count includes only the
   mazes whose episode was still running (finished ones are frozen, not stepped).
2. Wall time of `dataset.build` with the default params.yaml into a temporary folder.

The last line printed is one JSON record for the step rate. The ratio uses the faster of the
two ways of running MiniGrid (through `gym.make`'s wrappers, or the bare env), so it does not
flatter us.

    python bench/env.py [--batch 1000] [--seconds 3] [--params params.yaml]
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

from dtpe import params as params_mod
from dtpe.steps import dataset
from dtpe.world.maze import layouts
from dtpe.world.maze.rules import N_ACTIONS, BatchedMaze

ROOT = Path(__file__).resolve().parents[1]
SIZE = 8
PEER = "MiniGrid-DoorKey-8x8-v0"
POOL_BATCHES = 4  # distinct layout batches cycled through, so resets meet new mazes


def batched_rate(env_params, batch: int, seconds: float, rng: np.random.Generator) -> float:
    pool = layouts.generate(SIZE, POOL_BATCHES * batch, rng, env_params.options["wall_density"])
    batches = [pool.subset(slice(i * batch, (i + 1) * batch)) for i in range(POOL_BATCHES)]
    steps, elapsed, round_ = 0, 0.0, 0
    while elapsed < seconds:
        maze = BatchedMaze(
            batches[round_ % POOL_BATCHES],
            env_params.cap(SIZE),
            env_params.step_reward,
            env_params.goal_reward,
        )
        round_ += 1
        while not maze.done.all():
            actions = rng.integers(0, N_ACTIONS, batch)
            running = int((~maze.done).sum())
            start = time.perf_counter()
            maze.step(actions)
            elapsed += time.perf_counter() - start
            steps += running
    return steps / elapsed


def minigrid_rate(env, seconds: float, rng: np.random.Generator) -> float:
    env.reset(seed=int(rng.integers(2**31)))
    steps, elapsed = 0, 0.0
    while elapsed < seconds:
        actions = rng.integers(0, env.action_space.n, 1000)
        start = time.perf_counter()
        for a in actions:
            _, _, terminated, truncated, _ = env.step(a)
            if terminated or truncated:
                elapsed += time.perf_counter() - start
                env.reset(seed=int(rng.integers(2**31)))
                start = time.perf_counter()
        elapsed += time.perf_counter() - start
        steps += len(actions)
    return steps / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--batch", type=int, default=1000, help="mazes stepped in lockstep")
    parser.add_argument(
        "--seconds", type=float, default=3.0, help="stepping time measured per contender"
    )
    parser.add_argument("--params", type=Path, default=ROOT / "params.yaml")
    args = parser.parse_args()
    params = params_mod.load(args.params)
    rng = np.random.default_rng(0)

    batched_rate(params.env, args.batch, 0.2, rng)  # warm-up: first-call allocations, caches
    ours = batched_rate(params.env, args.batch, args.seconds, rng)
    print(f"BatchedMaze, B={args.batch}, {SIZE}x{SIZE}, random actions: {ours:,.0f} agent-steps/s")

    peers = {}
    for how, env in (("gym.make", gym.make(PEER)), ("bare env", gym.make(PEER).unwrapped)):
        minigrid_rate(env, 0.2, rng)
        peers[how] = minigrid_rate(env, args.seconds, rng)
        print(f"{PEER} ({how}), random actions: {peers[how]:,.0f} agent-steps/s")
    peer = max(peers.values())
    print(f"ratio: {ours / peer:,.0f}x the faster MiniGrid figure (target >= 200x)")

    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        summary = dataset.build(params, Path(tmp) / "data")
        data_seconds = time.perf_counter() - start
    episodes = sum(s["episodes"] for s in summary["splits"].values())
    print(
        f"dataset.build ({args.params.name}: {episodes} episodes on "
        f"{params.data.train_size}x{params.data.train_size}, "
        f"suites {params.data.suite_sizes} x {params.data.suite_layouts}): "
        f"{data_seconds:.2f} s (target < 10 s)"
    )
    print(
        json.dumps(
            {
                "name": "env_steps_per_second",
                "ours": round(ours),
                "peer": round(peer),
                "unit": "agent-steps/s",
                "ratio": round(ours / peer, 1),
            }
        )
    )


if __name__ == "__main__":
    main()
