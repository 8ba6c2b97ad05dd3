"""What the encodings that read the content cost to train: training throughput of CoPE and DAPE
against rope in the same run. One training step (forward, cross-entropy on every state token,
backward, AdamW) of a params file's model on the same random full windows; the variants take
turns step by step, so a machine whose speed drifts slows them all alike, and each figure is
the median over `--steps`. Portable numerics, one thread (the study's per-job setting).

Usage: python bench/content.py [--params params.yaml] [--steps 30] [--variants rope cope dape]
Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import json
import statistics
import time

from dtpe import numerics

numerics.pin(numerics.PORTABLE)

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from dtpe import params as P  # noqa: E402
from dtpe.model.transformer import TOKENS_PER_STEP, DecisionTransformer  # noqa: E402


def trainer(p, variant: str):
    """A step function training `variant`'s model of params `p` on one fixed random batch."""
    cfg = p.model_config(variant)
    torch.manual_seed(0)
    model = DecisionTransformer(cfg).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=p.train.lr)
    b, t, n = p.train.batch_size, cfg.context, p.data.train_size
    g = torch.Generator().manual_seed(0)
    states = torch.randint(0, 3, (b, t, n, n), generator=g, dtype=torch.uint8)
    rtg = torch.rand(b, t, generator=g)
    actions = torch.randint(0, model.vocabulary.n_actions, (b, t), generator=g)
    times = torch.arange(t)[None].repeat(b, 1)

    def step():
        out = model(rtg, model.encode_states(states), actions, times)  # (B, T, n_actions)
        loss = F.cross_entropy(out.flatten(0, 1), actions.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()

    return step, b, t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--variants", nargs="+", default=["rope", "cope", "dape"])
    args = ap.parse_args()
    if args.steps < 1 or "rope" not in args.variants:
        ap.error("--steps must be at least 1 and --variants must hold rope (the ratios' base)")
    torch.set_num_threads(1)
    p = P.load(args.params)
    steps = {v: trainer(p, v) for v in args.variants}
    for step, *_ in steps.values():
        step()  # warm-up: allocator and kernels
    seconds = {v: [] for v in steps}
    for _ in range(args.steps):
        for variant, (step, *_) in steps.items():
            started = time.perf_counter()
            step()
            seconds[variant].append(time.perf_counter() - started)
    rope = statistics.median(seconds["rope"])
    print(f"{args.params}: training steps, median of {args.steps}, one thread")
    print(f"{'variant':<8} {'ms/step':>8} {'windows/s':>10} {'tokens/s':>9} {'vs rope':>8}")
    rows = []
    for variant, (_, batch, context) in steps.items():
        ms = statistics.median(seconds[variant]) * 1e3
        windows = batch / ms * 1e3
        tokens = windows * context * TOKENS_PER_STEP
        rows.append(
            {"variant": variant, "ms": ms, "windows_per_s": windows, "tokens_per_s": tokens}
        )
        ratio = rope * 1e3 / ms
        print(f"{variant:<8} {ms:8.1f} {windows:10.1f} {tokens:9.0f} {ratio:8.2f}")
    print(json.dumps({"params": args.params, "steps": args.steps, "rows": rows}))


if __name__ == "__main__":
    main()
