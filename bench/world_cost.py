"""Models of other worlds against a maze model (issues 50, 60 and 73): core seconds of each step
one model takes through the CLI, data, train, evaluate (every suite at every context of
evaluate.contexts: the T-Maze's whole-episode context included), reach (its ladder), seen,
position (rope's scalings and each encoding switched off, where the params ask) and attention,
for each world's params file and for the maze default (params.yaml), in the same run on the same
machine. Both train rope at seed 42, at their own full epochs by default (an
under-trained memory model wanders to MiniGrid's cap of 5 N^2 steps and would make its
evaluation look dearer than a trained one's). Core time is the children's user + system CPU time,
one thread each, as bench/e2e.py counts it; the figure is models (every per-model step) per
core-hour and the world's model cost as a multiple of the maze model's.

Usage: python bench/world_cost.py [--world memory tmaze order recency distance] [--fraction 1.0]
Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "src"))

from e2e import children_cpu, run_cli  # noqa: E402

from dtpe import params as params_mod  # noqa: E402

WORLDS = {
    "memory": "params-memory.yaml",
    "tmaze": "params-tmaze.yaml",
    "order": "params-order.yaml",
    "recency": "params-recency.yaml",
    "distance": "params-distance.yaml",
    "maze": "params.yaml",
}
"""a world's run (the cue corridor's by its task) -> its params file"""
MODEL_STEPS = ("train", "evaluate", "reach", "seen", "position", "attention")
VARIANT, SEED = "rope", 42


def one_model(params_file: str, fraction: float) -> dict:
    """Core seconds of each step of one model under `params_file`, its epochs cut to
    `fraction`; train projected to the full epochs."""
    raw = params_mod.resolve(ROOT / params_file)
    full = raw["train"]["epochs"]
    raw["train"]["epochs"] = max(1, round(full * fraction))
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        params = work / "params.yaml"
        params.write_text(yaml.safe_dump(raw, sort_keys=False))
        data, model = work / "data", work / "model"
        common = ["--params", str(params), "--variant", VARIANT, "--seed", str(SEED)]
        common += ["--threads", "1", "--data", str(data)]
        grid = work / "grid.csv"
        steps = {
            "data": ["data", "--params", str(params), "--out", str(data)],
            "train": ["train", *common, "--out", str(model), "--metrics", str(work / "m")]
            + ["--resume-dir", str(work / "resume")],
            "evaluate": ["evaluate", *common, "--model", str(model), "--out-grid", str(grid)]
            + ["--out-test", str(work / "test.csv"), "--out-context", str(work / "ctx.csv")],
            "reach": ["reach", *common, "--model", str(model), "--grid", str(grid)]
            + ["--out", str(work / "reach.csv")],
            "seen": ["seen", *common, "--model", str(model), "--out", str(work / "seen.csv")],
            "position": ["position", *common, "--model", str(model), "--grid", str(grid)]
            + ["--out", str(work / "position.csv")],
            "attention": ["attention", *common, "--model", str(model)]
            + ["--out", str(work / "attention.json")],
        }
        seconds = {}
        for step, args in steps.items():
            started = children_cpu()
            run_cli(ROOT, args)
            seconds[step] = children_cpu() - started
    seconds["train"] *= full / raw["train"]["epochs"]
    model_s = sum(seconds[step] for step in MODEL_STEPS)
    return {
        "epochs": full,
        "core_s": seconds,
        "model_core_s": model_s,
        "models_per_core_hour": 3600 / model_s,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    others = [w for w in WORLDS if w != "maze"]
    ap.add_argument("--world", nargs="+", choices=others, default=["memory"])
    ap.add_argument("--fraction", type=float, default=1.0, help="share of the epochs trained")
    args = ap.parse_args()
    result = {"bench": "world_cost", "fraction": args.fraction, "variant": VARIANT}
    for world in (*args.world, "maze"):
        r = result[world] = one_model(WORLDS[world], args.fraction)
        steps = ", ".join(f"{step} {s:.0f}" for step, s in r["core_s"].items())
        print(
            f"{world:8s} ({WORLDS[world]}, {r['epochs']} epochs): {steps} core-s; "
            f"{r['models_per_core_hour']:.1f} models per core-hour"
        )
    for world in args.world:
        ratio = result[world]["model_core_s"] / result["maze"]["model_core_s"]
        result[f"cost_ratio_{world}_over_maze"] = ratio
        print(f"a {world} model costs {ratio:.2f}x a maze model ({', '.join(MODEL_STEPS)})")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
