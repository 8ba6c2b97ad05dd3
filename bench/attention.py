"""The attention seam's cost: one training step (forward and backward) and one evaluation pass
of the default model (params.yaml) per variant, this checkout against an earlier commit (default:
0bc39a1, the seam before it admitted every kind of encoding) in the same run. Each side runs in
its own process from its own source (a git worktree of the baseline), under the portable
numerics, one thread, on the same random windows; the sides take turns, `--rounds` times, and
each figure is the median. Variants the baseline lacks are timed on this side only, against the
baseline's rope (what an encoding costs beside the study's).

Usage: python bench/attention.py [--baseline 0bc39a1] [--rounds 3] [--steps 20]
Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ["learned", "sinusoidal", "rope", "nope", "alibi", "t5", "kerple", "xpos"]
NEW = ["shaw", "erpe", "tape", "tupe", "tuper", "fire", "nope-t_tpe"]

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from dtpe import numerics
numerics.pin(numerics.PORTABLE)
import torch
from dtpe import params as P
from dtpe.model import transformer
torch.set_num_threads(1)
p = P.load(sys.argv[2])
steps, out = int(sys.argv[3]), {}
for variant in sys.argv[4:]:
    try:
        cfg = p.model_config(variant)
    except AttributeError:  # before the model owned its config
        cfg = transformer.ModelConfig.from_params(p, variant)
    torch.manual_seed(0)
    model = transformer.DecisionTransformer(cfg)
    b, t, n = p.train.batch_size, cfg.context, p.data.train_size
    g = torch.Generator().manual_seed(0)
    states = torch.randint(0, 3, (b, t, n, n), generator=g, dtype=torch.uint8)
    rtg, actions = torch.rand(b, t, generator=g), torch.randint(0, 4, (b, t), generator=g)
    times = torch.arange(t)[None].repeat(b, 1)
    def step():
        model.train()
        model(rtg, model.encode_states(states), actions, times).sum().backward()
    def evaluate():
        model.eval()
        with torch.no_grad():
            model(rtg, model.encode_states(states), actions, times)
    for name, fn in (("train", step), ("eval", evaluate)):
        fn()  # warm-up
        start = time.perf_counter()
        for _ in range(steps):
            fn()
        out[f"{variant}/{name}"] = (time.perf_counter() - start) / steps * 1e3
print(json.dumps(out))
"""


def run(src: Path, params: Path, steps: int, variants: list[str]) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(src), str(params), str(steps), *variants],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", default="0bc39a1")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20)
    args = ap.parse_args()
    if args.rounds < 1 or args.steps < 1:
        ap.error("--rounds and --steps must be at least 1")
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "base"
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(base), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            ours, theirs = [], []
            for _ in range(args.rounds):
                theirs.append(run(base / "src", base / "params.yaml", args.steps, SHARED))
                ours.append(run(ROOT / "src", ROOT / "params.yaml", args.steps, SHARED + NEW))
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)])
    median = {k: statistics.median(r[k] for r in ours) for k in ours[0]}
    peer = {k: statistics.median(r[k] for r in theirs) for k in theirs[0]}
    print(f"ms per batch of the default model, median of {args.rounds} rounds; ratio = peer / ours")
    print(f"{'variant':<12} {'step':<6} {'ours':>8} {args.baseline:>8} {'ratio':>6}")
    rows = []
    for key, ms in median.items():
        variant, step = key.split("/")
        against = peer.get(key, peer[f"rope/{step}"])
        label = args.baseline if key in peer else f"{args.baseline} rope"
        rows.append({"variant": variant, "step": step, "ms": ms, "peer_ms": against})
        print(f"{variant:<12} {step:<6} {ms:8.2f} {against:8.2f} {against / ms:6.2f}  ({label})")
    print(json.dumps({"baseline": args.baseline, "rounds": args.rounds, "rows": rows}))


if __name__ == "__main__":
    main()
