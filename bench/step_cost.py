"""Attention over the whole episode (issue 60): milliseconds per rollout step against the steps
so far, per encoding, and the key/value cache's memory at the longest length, in one run.

The model has the Memory world's shape (params-memory.yaml: d_model 64, 4 heads, 3 layers, the
agent's 7x7 view), random weights; a batch of `--batch` episodes, every one still playing;
portable numerics, one thread (the evaluation's setting). A step at t is the policy's `act` at a
context that holds the whole episode, after t steps: the policy is first brought to step t with
random states and actions and a cache of random keys and values (what a step costs does not
depend on what the cache holds), then `--repeats` steps are timed and the median reported.
Every k encoding with t sinusoidal, rope with every other t; learnedlong's table is sized to the
longest length; an encoding that cannot index t shows N/A.

A step's cost is linear in the steps so far when each step of history adds the same time: the
slopes printed (microseconds per step of history between two lengths) then stay level (a cost
quadratic in t would make each slope grow with the lengths it spans). The ratios beside them:
ms at each length over the first, and each variant's ms at the longest over rope's.

Usage: python bench/step_cost.py [--steps 100 1000 3000 10000] [--batch 8] [--repeats 7]
Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from dtpe import numerics

numerics.pin(numerics.PORTABLE)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from dtpe import params as P  # noqa: E402
from dtpe.model import encodings  # noqa: E402
from dtpe.model.encodings import NotApplicable  # noqa: E402
from dtpe.model.policy import DecisionTransformerPolicy  # noqa: E402
from dtpe.model.transformer import DecisionTransformer  # noqa: E402
from dtpe.numerics import cpu_name  # noqa: E402
from dtpe.steps.contract import brought_to  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PARAMS = ROOT / "params-memory.yaml"
VARIANTS = sorted(encodings.REGISTRY["k"]) + [
    f"rope-t_{t}" for t in sorted(encodings.REGISTRY["t"]) if t != encodings.DEFAULT_T
]


def step_ms(model, t: int, longest: int, args) -> float:
    """Median milliseconds of `args.repeats` steps from step t on; NotApplicable propagates."""
    cap = longest + args.repeats + 1  # the warm-up step and the timed ones
    policy = DecisionTransformerPolicy(model, cap, target_return=0.9)
    policy.start(args.batch, cap)
    g = torch.Generator().manual_seed(t)
    brought_to(policy, t, args.batch, g)
    side = 2 * model.cfg.view_radius + 1
    n_codes = model.vocabulary.n_codes
    views = np.random.default_rng(t).integers(
        0, n_codes, (args.repeats + 1, args.batch, side, side)
    )
    active = np.ones(args.batch, bool)
    policy.act(views[0].astype(np.uint8), active)  # warm-up: allocator and kernels at this size
    seconds = []
    for view in views[1:]:
        started = time.perf_counter()
        policy.act(view.astype(np.uint8), active)
        seconds.append(time.perf_counter() - started)
    return statistics.median(seconds) * 1e3


def cache_mib(model, longest: int, batch: int) -> dict:
    """The memory a whole-episode rollout of `longest` steps holds: the cache's keys, values and
    positions, and the policy's own arrays (encoded states, returns-to-go, actions)."""
    policy = DecisionTransformerPolicy(model, longest, target_return=0.9)
    policy.start(batch, longest)
    brought_to(policy, longest, batch, torch.Generator().manual_seed(0))
    c = policy.cache
    cache = sum(x.nbytes for x in [*c.keys, *c.values, c.times, c.positions])
    own = sum(x.nbytes for x in (policy.state_emb, policy.rtg, policy.actions, policy.timesteps))
    return {"cache": cache / 2**20, "policy_arrays": own / 2**20}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, nargs="+", default=[100, 1000, 3000, 10000])
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--variants", nargs="+", default=VARIANTS)
    args = ap.parse_args()
    steps = sorted(args.steps)
    if steps[0] < 1 or len(set(steps)) < 3 or "rope" not in args.variants:
        ap.error("--steps: three distinct lengths or more, >= 1; --variants must hold rope")
    torch.set_num_threads(1)
    raw = P.resolve(PARAMS)
    # the longest length, its warm-up and timed steps: the table reaches every step played
    raw["encodings"]["k"]["learnedlong"]["table"] = steps[-1] + args.repeats + 1
    p = P.check(raw)
    print(
        f"{cpu_name()}, 1 thread, portable numerics; {PARAMS.name}'s model (d_model "
        f"{p.model.d_model}, {p.model.n_heads} heads, {p.model.n_layers} layers, training "
        f"context {p.model.context}), batch {args.batch}, median of {args.repeats} steps"
    )
    last, spans = steps[-1], list(zip(steps, steps[1:]))
    print(
        f"{'variant':<18}"
        + "".join(f"{f'ms@{t}':>9}" for t in steps)
        + "".join(f"{f'x{t}':>8}" for t in steps[1:])
        + "".join(f"{f'us {a}-{b}':>12}" for a, b in spans)
        + f"{'vs rope':>8}"
    )
    rows = {}
    for variant in args.variants:
        torch.manual_seed(0)
        model = DecisionTransformer(p.model_config(variant)).eval()
        ms = {}
        for t in steps:
            try:
                ms[t] = step_ms(model, t, last, args)
            except NotApplicable:
                ms[t] = None
        rows[variant] = ms
    rope = rows["rope"][last]
    for variant, ms in rows.items():
        cells = "".join(f"{'N/A' if ms[t] is None else f'{ms[t]:.2f}':>9}" for t in steps)
        if None in ms.values():
            print(f"{variant:<18}{cells}")
            continue
        ratios = "".join(f"{ms[t] / ms[steps[0]]:>8.2f}" for t in steps[1:])
        slopes = "".join(f"{(ms[b] - ms[a]) / (b - a) * 1e3:>12.2f}" for a, b in spans)
        print(f"{variant:<18}{cells}{ratios}{slopes}{ms[last] / rope:>8.2f}")
    memory = cache_mib(DecisionTransformer(p.model_config("rope")).eval(), last, args.batch)
    per_episode = memory["cache"] / args.batch
    print(
        f"memory at {last} steps, batch {args.batch}: cache {memory['cache']:.1f} MiB "
        f"({per_episode:.2f} MiB an episode; evaluate.batch_size {p.evaluate.batch_size}: "
        f"{per_episode * p.evaluate.batch_size:.0f} MiB), the policy's own arrays "
        f"{memory['policy_arrays']:.1f} MiB"
    )
    print(
        json.dumps(
            {
                "bench": "step_cost",
                "cpu": cpu_name(),
                "batch": args.batch,
                "steps": steps,
                "ms_per_step": rows,
                "memory_mib": memory,
            }
        )
    )


if __name__ == "__main__":
    main()
