"""Training-step levers at the CPU default (params.yaml, rope), each against the portable mode's
plain eager step (the peer) in the same run: what the pins cost, and what each lever issue 27
named buys back under them. Each lever runs in its own process (the pins are read once, at
torch's first kernel), one thread, over the same windows of the 8x8 training set; the levers
take turns `--rounds` times and the medians are reported.

Figures per lever: the median step's CPU time per window after `WARMUP` steps, and the training
core-seconds one model would take, projected as (the warm-up steps' excess over the median, which
holds any compile time) + (the default's windows per model) x (the median per window). Windows
vary in width, and the median step is narrower than the window-weighted mean, so every lever's
projection is a few percent low alike; the ratios are the figure. The peer's step is also split
by operator group (torch.profiler self time, matched by substring of the op's name): the state
encoder's convolutions are one group, its Linear layers fall among the GEMMs.

Usage: python bench/levers.py [--steps 120] [--rounds 1] [--data data], from anywhere. Prints
figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from dtpe import numerics

ROOT = Path(__file__).resolve().parents[1]
WARMUP = 20


def cpu_seconds() -> float:
    """This process's CPU time and its reaped children's: the compilers torch.compile runs."""
    own, children = (
        resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
    )
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


LEVERS = {
    "portable": "the peer: eager, the portable mode's pins",
    "native": "eager, no pins and no deterministic-algorithm mode (numerics native)",
    # at one thread ATen hands a 1x1 convolution to oneDNN only for batches of 16 or more
    "linear_as_conv": "portable; each (B, T, D) Linear as a 1x1 channels-last convolution, "
    "oneDNN's AVX2 kernels instead of MKL's COMPATIBLE GEMM (batches of 16 or more)",
    "compile_ffn": "portable; each block's feed-forward torch.compile'd (dynamic shapes)",
    "compile_model": "portable; the model's forward torch.compile'd (dynamic shapes)",
    "batch64": "portable; batches of 64 windows (the same windows per model)",
}
# the operator groups of the peer's profile, by a substring of the ATen op's name
GROUPS = {
    "GEMM (MKL)": ("aten::mm", "aten::addmm", "aten::bmm"),
    "attention": ("flash_attention",),
    "convolutions (the state encoder, oneDNN)": ("convolution",),
    "dropout masks": ("bernoulli",),
}


def one(lever: str, steps: int, data: Path, with_profile: bool) -> dict:
    """Times `steps` training steps under `lever`, in this process."""
    mode = numerics.NATIVE if lever == "native" else numerics.PORTABLE
    numerics.pin(mode)
    import numpy as np
    import torch
    import torch.nn.functional as F

    from dtpe import params
    from dtpe.model.transformer import DecisionTransformer
    from dtpe.steps import dataset, train

    torch.set_num_threads(1)
    p = params.load(ROOT / "params.yaml")
    numerics.check(mode, 1)
    eps = dataset.load(data / "train.safetensors")
    k, batch_size = p.model.context, 64 if lever == "batch64" else p.train.batch_size
    width = np.minimum(np.diff(eps["offsets"]), k)
    rng, items = np.random.default_rng(0), []
    while len(items) < steps:
        items += train.length_buckets(width, batch_size, rng)
    items = items[:steps]
    torch.manual_seed(0)
    model = DecisionTransformer(p.model_config("rope")).train()
    if lever == "linear_as_conv":

        def as_conv(self, x):
            if x.dim() != 3:
                return F.linear(x, self.weight, self.bias)
            b, t, d = x.shape
            x = x.reshape(b, t, 1, d).permute(0, 3, 1, 2)
            y = F.conv2d(x, self.weight[..., None, None], self.bias)
            return y.permute(0, 2, 3, 1).reshape(b, t, -1)

        for module in model.modules():
            if isinstance(module, torch.nn.Linear):
                module.forward = as_conv.__get__(module)
    elif lever == "compile_ffn":
        for block in model.blocks:
            block.ffn.forward = torch.compile(block.ffn.forward, dynamic=True)
    elif lever == "compile_model":
        model.forward = torch.compile(model.forward, dynamic=True)
    opt = torch.optim.AdamW(
        model.parameters(), lr=p.train.lr, weight_decay=p.train.weight_decay, fused=True
    )

    def step(index, seed):
        batch = train.windows(eps, index, k, np.random.default_rng(seed))
        loss = train.batch_loss(
            model, batch, torch.device("cpu"), p.train.precision, p.train.targets
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), p.train.grad_clip)
        opt.step()

    per_window = []
    try:
        for seed, index in enumerate(items):
            started = cpu_seconds()
            step(index, seed)
            per_window.append((cpu_seconds() - started) / len(index))
    except Exception as error:  # a lever that cannot train is a finding, not a crash
        return {"lever": lever, "error": f"{type(error).__name__}: {str(error).splitlines()[0]}"}
    median = statistics.median(per_window[WARMUP:])
    warm_windows = sum(len(i) for i in items[:WARMUP])
    excess = sum(per_window[i] * len(items[i]) for i in range(WARMUP)) - median * warm_windows
    windows_per_model = p.train.epochs * len(width)
    result = {
        "lever": lever,
        "capability": torch.backends.cpu.get_cpu_capability(),
        "median_ms_per_window": median * 1e3,
        "warmup_excess_s": excess,
        "train_core_s_per_model": excess + windows_per_model * median,
    }
    if with_profile:
        result["profile"] = profile(step, items[WARMUP : WARMUP + 30])
    return result


def profile(step, items) -> dict[str, float]:
    """Shares of the steps' self CPU time by operator group."""
    from torch.profiler import profile as torch_profile

    with torch_profile() as prof:
        for seed, index in enumerate(items):
            step(index, seed)
    times = {e.key: e.self_cpu_time_total for e in prof.key_averages()}
    total = sum(times.values())
    shares = {
        group: sum(t for key, t in times.items() if any(n in key for n in names)) / total
        for group, names in GROUPS.items()
    }
    shares["other"] = 1 - sum(shares.values())
    return shares


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=120, help="training steps per lever")
    ap.add_argument("--rounds", type=int, default=1, help="turns each lever takes")
    ap.add_argument("--data", type=Path, default=ROOT / "data")
    # a child's one lever, and whether it profiles its steps
    ap.add_argument("--lever", choices=LEVERS, help=argparse.SUPPRESS)
    ap.add_argument("--profile", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.steps <= WARMUP:
        ap.error(f"--steps must exceed the {WARMUP} warm-up steps")
    if args.lever:
        print(json.dumps(one(args.lever, args.steps, args.data, args.profile)))
        return
    with tempfile.TemporaryDirectory() as tmp:
        data = args.data
        if not (data / "train.safetensors").is_file():
            data = Path(tmp) / "data"
            subprocess.run([sys.executable, "-m", "dtpe", "data", "--out", str(data)], check=True)
        runs = measure(args, data, Path(tmp))
    report(args, runs)


def measure(args, data: Path, tmp: Path) -> dict[str, list[dict]]:
    """Each lever's child results, the levers taking turns; the peer profiles its first turn."""
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINS}
    # torch.compile compiles in the child (its compilers reaped, so counted) into an empty cache
    env.update(OMP_NUM_THREADS="1", TORCHINDUCTOR_COMPILE_THREADS="1")
    runs = {lever: [] for lever in LEVERS}
    for turn in range(args.rounds):
        for lever in LEVERS:
            command = [sys.executable, __file__, "--lever", lever, "--steps", str(args.steps)]
            command += ["--data", str(data)]
            command += ["--profile"] if lever == "portable" and turn == 0 else []
            cache = tmp / f"inductor_{lever}_{turn}"
            done = subprocess.run(
                command,
                cwd=ROOT,
                env={**env, "TORCHINDUCTOR_CACHE_DIR": str(cache)},
                capture_output=True,
                text=True,
                check=True,
            )
            runs[lever].append(json.loads(done.stdout.strip().splitlines()[-1]))
    return runs


def report(args, runs: dict[str, list[dict]]) -> None:
    result = {"bench": "levers", "steps": args.steps, "rounds": args.rounds, "levers": {}}
    peer = statistics.median(r["train_core_s_per_model"] for r in runs["portable"])
    for lever, rs in runs.items():
        failed = [r for r in rs if "error" in r]
        if failed:
            result["levers"][lever] = failed[0]
            print(f"{lever:15s} fails: {failed[0]['error'][:160]}")
            continue
        core_s = statistics.median(r["train_core_s_per_model"] for r in rs)
        row = {
            "capability": rs[0]["capability"],
            "median_ms_per_window": statistics.median(r["median_ms_per_window"] for r in rs),
            "warmup_excess_s": statistics.median(r["warmup_excess_s"] for r in rs),
            "train_core_s_per_model": core_s,
            "speed_vs_portable": peer / core_s,
        }
        result["levers"][lever] = row
        print(
            f"{lever:15s} {row['capability']:6s} {row['median_ms_per_window']:.3f} ms/window, "
            f"warm-up excess {row['warmup_excess_s']:.1f} s, one model's training "
            f"{core_s:.0f} core-s: {row['speed_vs_portable']:.2f}x the portable eager step"
            f" ({LEVERS[lever]})"
        )
    shares = runs["portable"][0]["profile"]
    result["portable_profile"] = shares
    print(
        "portable step by operator group: " + ", ".join(f"{g} {s:.0%}" for g, s in shares.items())
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
