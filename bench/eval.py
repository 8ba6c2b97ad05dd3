"""Evaluation throughput: episodes per second of the batched evaluation (100 episodes of one
suite in lockstep) against a one-episode-at-a-time loop with the same model, in the same run;
the two take turns for a few rounds (medians reported), so a drift of the machine's speed slows
both alike.

Usage: python bench/eval.py [--size 12] [--rounds 3] [--data data]. Prints figures, then one
JSON line."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch

from dtpe import params
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, rollout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=12)
    ap.add_argument("--episodes", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    p = params.load("params.yaml")
    data = args.data
    if not (data / "suites" / f"N{args.size}.safetensors").is_file():
        data = Path(tempfile.mkdtemp()) / "data"
        dataset.build(p, data)
    lay, _ = dataset.load_suite(data, args.size, p.env)
    lay = lay.subset(slice(0, args.episodes))
    torch.manual_seed(0)
    model = DecisionTransformer(p.model_config("rope")).eval()
    k, target, precision = p.model.context, p.evaluate.target_return, p.evaluate.precision

    times = {"batched": [], "single": []}
    for _ in range(args.rounds):
        started = time.perf_counter()
        batched = rollout.rollout(model, lay, p.env, k, target, precision)
        times["batched"].append(time.perf_counter() - started)
        started = time.perf_counter()
        single = [
            rollout.rollout(model, lay.subset([i]), p.env, k, target, precision)
            for i in range(len(lay))
        ]
        times["single"].append(time.perf_counter() - started)
    batched_s, single_s = statistics.median(times["batched"]), statistics.median(times["single"])
    same = np.array_equal(batched["steps"], np.concatenate([s["steps"] for s in single]))
    ours, peer = len(lay) / batched_s, len(lay) / single_s
    print(
        f"{len(lay)} episodes on {args.size}x{args.size}, context {k}, "
        "untrained model (episodes run to the cap "
        f"of {p.env.cap(args.size)} steps when they fail), {args.threads} threads, "
        f"median of {args.rounds} rounds:"
    )
    print(f"  batched: {batched_s:.2f} s, {ours:.1f} episodes/s")
    print(f"  one at a time: {single_s:.2f} s, {peer:.2f} episodes/s")
    print(f"  same episode lengths both ways: {same}")
    print(
        json.dumps(
            {
                "name": "eval_episodes_per_second",
                "ours": round(ours, 2),
                "peer": round(peer, 3),
                "unit": "episodes/s",
                "ratio": round(ours / peer, 2),
            }
        )
    )


if __name__ == "__main__":
    main()
