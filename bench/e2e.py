"""End to end: models trained and fully evaluated per core-hour, this checkout against an earlier
implementation (default: the commit before portable numerics, unpinned) in the same run. Each
side runs its own default params.yaml, reduced alike to one model and a fraction of its epochs,
through its own CLI: data, train, then every evaluation. Core time is the children's user +
system CPU time (resource.getrusage), so a busy machine slows the wall clock but not the figure
much; the two sides take turns, `--rounds` times, and the figure is the median.

Training is the only step the reduction shortens: its per-epoch cost is constant, so the full
model's core time is projected as train / fraction + the rest, and both figures are printed.

Usage: python bench/e2e.py [--baseline 917fea9] [--fraction 0.25] [--rounds 1]
Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
# The implementation before portable numerics (issue 27): the default's params, each CPU's
# fastest kernels. This checkout runs its own default, pins on.
BASELINE = "917fea9"
# the portable mode's variables (dtpe/numerics.py): taken out of the environment, so that each
# side's own CLI decides its kernels (the baseline knows no pins and runs unpinned)
PINS = ("ATEN_CPU_CAPABILITY", "ONEDNN_MAX_CPU_ISA", "MKL_CBWR")


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def reduced_params(tree: Path, out: Path, fraction: float) -> tuple[Path, dict]:
    raw = yaml.safe_load((tree / "params.yaml").read_text())
    full_epochs = raw["train"]["epochs"]
    raw["train"]["epochs"] = max(1, round(full_epochs * fraction))
    # `study.variants` was `study.encodings` before issue 28: each tree its own word
    study_key = "variants" if "variants" in raw["study"] else "encodings"
    raw["study"] = {study_key: [raw["stats"]["reference"]], "seeds": raw["study"]["seeds"][:1]}
    path = out / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path, {"epochs": raw["train"]["epochs"], "full_epochs": full_epochs, "raw": raw}


def commands(tree: Path, params: Path, raw: dict, work: Path) -> dict[str, list[list[str]]]:
    """The steps one model takes through this tree's CLI, by what they are."""
    study_key = "variants" if "variants" in raw["study"] else "encodings"
    variant, seed = raw["study"][study_key][0], raw["study"]["seeds"][0]
    flag = "--variant" if study_key == "variants" else "--encoding"
    model, data = work / "model", work / "data"
    common = ["--params", str(params), flag, variant, "--seed", str(seed)]
    common += ["--threads", "1", "--data", str(data)]
    train = [["train", *common, "--out", str(model), "--metrics", str(work / "metrics")]]
    train[0] += ["--resume-dir", str(work / "resume")]
    evaluate_help = run_cli(tree, ["evaluate", "--help"], capture=True)
    if "--out-grid" in evaluate_help:  # one evaluation per model
        outs = [f"--out-{s}" for s in ("test", "grid", "context")]
        evaluate = [["evaluate", *common, "--model", str(model)]]
        for flag in outs:
            evaluate[0] += [flag, str(work / f"{flag[6:]}.csv")]
    else:  # the grid sweep, then the context sweep reading the grid sweep's rows
        grid, context = work / "grid.csv", work / "context.csv"
        evaluate = [
            ["evaluate", *common, "--model", str(model), "--sweep", "grid", "--out", str(grid)],
            ["evaluate", *common, "--model", str(model), "--sweep", "context"]
            + ["--out", str(context), "--reuse", str(grid)],
        ]
    return {
        "data": [["data", "--params", str(params), "--out", str(data)]],
        "train": train,
        "evaluate": evaluate,
    }


def run_cli(tree: Path, args: list[str], capture=False) -> str:
    env = {k: v for k, v in os.environ.items() if k not in PINS}
    env.update(PYTHONPATH=str(tree / "src"), OMP_NUM_THREADS="1")
    done = subprocess.run(
        [sys.executable, "-m", "dtpe", *args],
        cwd=tree,
        env=env,
        text=True,
        capture_output=True,
    )
    if done.returncode:
        raise RuntimeError(f"dtpe {' '.join(args)} in {tree} failed:\n{done.stderr[-3000:]}")
    return done.stdout if capture else ""


def one_model(tree: Path, fraction: float) -> dict:
    """Core seconds of each step for one model of `tree`'s default, reduced."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        params, info = reduced_params(tree, work, fraction)
        seconds = {}
        for step, calls in commands(tree, params, info["raw"], work).items():
            started = children_cpu()
            for args in calls:
                run_cli(tree, args)
            seconds[step] = children_cpu() - started
    train_full = seconds["train"] * info["full_epochs"] / info["epochs"]
    return {
        "epochs": info["epochs"],
        "full_epochs": info["full_epochs"],
        "state_encoder": info["raw"]["model"]["state_encoder"],
        "train_core_s": seconds["train"],
        "evaluate_core_s": seconds["evaluate"],
        "models_per_core_hour": 3600 / (seconds["train"] + seconds["evaluate"]),
        "projected_full_models_per_core_hour": 3600 / (train_full + seconds["evaluate"]),
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE, help="git revision to compare against")
    ap.add_argument("--fraction", type=float, default=0.25, help="share of the epochs trained")
    ap.add_argument("--rounds", type=int, default=1, help="turns each side takes")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        baseline = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(baseline), args.baseline],
            cwd=ROOT,
            check=True,
            capture_output=True,
        )
        try:
            runs = {"current": [], "baseline": []}
            for _ in range(args.rounds):
                runs["baseline"].append(one_model(baseline, args.fraction))
                runs["current"].append(one_model(ROOT, args.fraction))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(baseline)], cwd=ROOT)
    result = {"bench": "e2e", "baseline_revision": args.baseline, "fraction": args.fraction}
    for side, rs in runs.items():
        result[side] = {
            key: statistics.median(r[key] for r in rs) if isinstance(value, float) else value
            for key, value in rs[0].items()
        }
        r = result[side]
        print(
            f"{side:9s} {r['state_encoder']:10s} {r['epochs']}/{r['full_epochs']} epochs: train "
            f"{r['train_core_s']:.0f} core-s, evaluate {r['evaluate_core_s']:.0f} core-s; "
            f"{r['models_per_core_hour']:.1f} models/core-hour reduced, "
            f"{r['projected_full_models_per_core_hour']:.1f} projected at full epochs"
        )
    ratio = (
        result["current"]["projected_full_models_per_core_hour"]
        / result["baseline"]["projected_full_models_per_core_hour"]
    )
    result["ratio_projected_full"] = ratio if math.isfinite(ratio) else None
    print(f"ratio (projected full default, current / baseline): {ratio:.2f}x")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
