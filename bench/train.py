"""Training throughput at the study's scale (params-study.yaml), ours against HuggingFace
transformers' DecisionTransformerModel with matching dimensions, fed the same windows of the 8x8
training set in the same run; then the fast path's loss (trimmed windows, bf16 autocast: the
lossiest option) against a plain fp32 fully padded run of the same model over the first 200
steps (at the CPU default scale, params.yaml, so the check finishes in minutes).

Usage: python bench/train.py [--batches 12] [--data data] [--precision bf16] (run `dtpe data`
first, or it is built into a temporary folder). Prints figures, then one JSON line."""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from transformers import DecisionTransformerConfig, DecisionTransformerModel

from dtpe import params
from dtpe.model.config import ModelConfig
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, train
from dtpe.world.maze.rules import N_ACTIONS, N_CODES

LOSS_TOLERANCE = 0.03  # relative, per step: bf16 keeps 8 mantissa bits


def batches(eps, count, batch_size, context, seed=0):
    rng = np.random.default_rng(seed)
    width = np.minimum(np.diff(eps["offsets"]), context)
    out = []
    while len(out) < count:
        out += train.length_buckets(width, batch_size, rng)
    return [(i, seed + j) for j, i in enumerate(out[:count])]


def windows_rng(seed: int) -> np.random.Generator:
    """A fresh generator per step and run, so that every run draws the same windows."""
    return np.random.default_rng(seed)


def time_steps(steps: dict, items) -> dict[str, list[float]]:
    """Seconds per step of each run, the runs taking turns batch by batch: a machine whose speed
    drifts during the bench slows them all alike."""
    for step in steps.values():
        step(items[0][0], windows_rng(items[0][1]))  # warm-up: allocator and kernels
    times = {name: [] for name in steps}
    for index, seed in items:
        for name, step in steps.items():
            started = time.perf_counter()
            step(index, windows_rng(seed))
            times[name].append(time.perf_counter() - started)
    return times


def ours_step_fn(model, eps, context, precision, full_padding):
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(index, rng):
        loss = train.batch_loss(
            model,
            train.windows(eps, index, context, rng, full_padding),
            torch.device("cpu"),
            precision,
        )
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def peer_step_fn(cfg: ModelConfig, eps, context):
    """HF's DT sees each grid as a flat one-hot vector and actions one-hot, padded to the
    context."""
    n = int(np.sqrt(eps["states"].shape[1] * eps["states"].shape[2]))
    hf = DecisionTransformerModel(
        DecisionTransformerConfig(
            state_dim=n * n * N_CODES,
            act_dim=N_ACTIONS,
            hidden_size=cfg.d_model,
            n_layer=cfg.n_layers,
            n_head=cfg.n_heads,
            n_inner=cfg.ffn_mult * cfg.d_model,
            activation_function="gelu",
            max_ep_len=256,
            n_positions=3 * context,
            resid_pdrop=cfg.dropout,
            embd_pdrop=cfg.dropout,
            attn_pdrop=cfg.attention_dropout,
            action_tanh=False,
        )
    ).train()
    opt = torch.optim.AdamW(hf.parameters(), lr=1e-4)

    def step(index, rng):
        b = train.windows(eps, index, context, rng, full_padding=True)
        states = F.one_hot(b["states"].long(), N_CODES).flatten(2).float()
        out = hf(
            states=states,
            actions=F.one_hot(b["actions"], N_ACTIONS).float(),
            rewards=None,
            returns_to_go=b["rtg"][..., None],
            timesteps=b["timesteps"],
            attention_mask=b["valid"].long(),
        )
        loss = F.cross_entropy(out.action_preds[b["valid"]], b["actions"][b["valid"]])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss.item()

    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", type=int, default=12)
    ap.add_argument("--check-steps", type=int, default=200)
    ap.add_argument("--data", type=Path, default=Path("data"))
    ap.add_argument("--threads", type=int, default=torch.get_num_threads())
    ap.add_argument(
        "--precision",
        choices=["bf16", "fp32"],
        help="ours' precision for the throughput figures "
        "(default: params-study.yaml's train.precision); "
        "bf16 pays off only on a CPU with native bf16 (AMX, AVX512-BF16) or a GPU",
    )
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    default, study = params.load("params.yaml"), params.load("params-study.yaml")
    data = args.data
    if not (data / "train.safetensors").is_file():
        data = Path(tempfile.mkdtemp()) / "data"
        dataset.build(default, data)
    eps = dataset.load(data / "train.safetensors")
    context, bs = study.model.context, study.train.batch_size
    precision = args.precision or study.train.precision

    cfg = study.model_config("rope")
    items = batches(eps, args.batches, bs, context)
    steps = {}
    torch.manual_seed(0)
    steps["ours"] = ours_step_fn(DecisionTransformer(cfg).train(), eps, context, precision, False)
    torch.manual_seed(0)
    steps["plain"] = ours_step_fn(DecisionTransformer(cfg).train(), eps, context, "fp32", True)
    torch.manual_seed(0)
    steps["peer"] = peer_step_fn(cfg, eps, context)
    rate = {name: bs / statistics.median(t) for name, t in time_steps(steps, items).items()}
    print(
        f"study scale (d_model {cfg.d_model}, {cfg.n_layers} layers, context {context}, "
        f"batch {bs}), "
        f"median of {args.batches} steps, the runs taking turns, {args.threads} threads:"
    )
    print(f"  ours (trimmed windows, {precision}):     {rate['ours']:.1f} samples/s")
    print(f"  ours plain (fp32, padded to context):  {rate['plain']:.1f} samples/s")
    print(f"  HF DecisionTransformerModel (fp32):    {rate['peer']:.1f} samples/s")
    print(
        f"  ratio ours/peer {rate['ours'] / rate['peer']:.2f}, "
        f"ours/plain {rate['ours'] / rate['plain']:.2f}"
    )

    small = dataclasses.replace(default.model_config("rope"), dropout=0.0, attention_dropout=0.0)
    check = batches(eps, args.check_steps, default.train.batch_size, default.model.context, seed=1)
    losses = {}
    for name, precision, full in (("fast", "bf16", False), ("plain", "fp32", True)):
        torch.manual_seed(0)
        step = ours_step_fn(
            DecisionTransformer(small).train(), eps, default.model.context, precision, full
        )
        losses[name] = np.array([step(index, windows_rng(seed)) for index, seed in check])
    rel = np.abs(losses["fast"] - losses["plain"]) / losses["plain"]
    ok = bool(rel.max() <= LOSS_TOLERANCE)
    print(
        f"loss check, {args.check_steps} steps at the CPU default scale: "
        f"max relative difference {rel.max():.4f}, "
        f"mean {rel.mean():.4f} (tolerance {LOSS_TOLERANCE}): {'ok' if ok else 'FAILED'}"
    )
    print(
        json.dumps(
            {
                "name": "train_samples_per_second",
                "ours": round(rate["ours"], 2),
                "peer": round(rate["peer"], 2),
                "unit": "samples/s",
                "ratio": round(rate["ours"] / rate["peer"], 3),
                "loss_check_ok": ok,
            }
        )
    )


if __name__ == "__main__":
    main()
