"""Training (docs/protocol.md, Training): AdamW, cross-entropy on the action read at
each state token, gradient clipping; per-epoch metrics and a resumable epoch checkpoint.

Windows are aligned at their first timestep (k = 0) and padded at the end; each epoch takes
one window of up to K timesteps per episode, starting uniformly at random among the starts
that keep it inside the episode (an episode no longer than K is one window from its first
step). A batch is trimmed to its longest window, so no step is spent on padding beyond it.
The k and t values that carried real tokens are counted (positions.json): on 8x8 most
episodes are shorter than K, so high k are rare or absent, which is what larger grids test.
"""

from __future__ import annotations

import hashlib
import json
import math
import sys
import time
from dataclasses import asdict
from pathlib import Path

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from tqdm import tqdm

from dtpe import atomic
from dtpe import preregistration as preregistered
from dtpe.model import checkpoint
from dtpe.model.transformer import DecisionTransformer, autocast, device
from dtpe.steps import dataset, rollout


def windows(
    episodes: dict,
    index: np.ndarray,
    context: int,
    rng: np.random.Generator | None,
    full_padding=False,
):
    """Batch of windows, one per episode in `index`; start 0 when rng is None. T is the longest
    window of the batch, or the context with `full_padding` (the plain reference the fast path
    is checked against). Returns tensors rtg (B, T), states (B, T, N, N), actions (B, T),
    timesteps (B, T), valid (B, T)."""
    off = episodes["offsets"]
    length = off[index + 1] - off[index]
    slack = np.maximum(length - context, 0)
    start = (
        np.zeros_like(slack)
        if rng is None
        else (rng.random(len(index)) * (slack + 1)).astype(np.int64)
    )
    width = np.minimum(length, context)
    t = context if full_padding else width.max()
    valid = np.arange(t)[None, :] < width[:, None]  # (B, T)
    steps = np.where(valid, off[index, None] + start[:, None] + np.arange(t), off[index, None])
    return {
        "rtg": torch.from_numpy(episodes["rtg"][steps]),
        "states": torch.from_numpy(episodes["states"][steps]),
        "actions": torch.from_numpy(episodes["actions"][steps].astype(np.int64)),
        "expert_actions": torch.from_numpy(episodes["expert_actions"][steps].astype(np.int64)),
        "timesteps": torch.from_numpy(episodes["timesteps"][steps].astype(np.int64)),
        "valid": torch.from_numpy(valid),
    }


def length_buckets(
    width: np.ndarray, batch_size: int, rng: np.random.Generator
) -> list[np.ndarray]:
    """Shuffled batches of episodes of similar window width: a batch is trimmed to its longest
    window, so grouping by width removes most padding. Widths are sorted within shuffled
    chunks of 16 batches, and the batches are shuffled again, so every epoch mixes anew."""
    order = rng.permutation(len(width))
    batches = []
    for lo in range(0, len(order), 16 * batch_size):
        chunk = order[lo : lo + 16 * batch_size]
        chunk = chunk[np.argsort(width[chunk], kind="stable")]
        batches += [chunk[i : i + batch_size] for i in range(0, len(chunk), batch_size)]
    return [batches[i] for i in rng.permutation(len(batches))]


def batches_per_epoch(episodes: int, batch_size: int) -> int:
    """len(length_buckets(...)) without drawing from the generator."""
    full, rest = divmod(episodes, 16 * batch_size)
    return 16 * full + -(-rest // batch_size)


def lr_factor(schedule: str, total_steps: int):
    """Multiplier of the learning rate at each optimizer step."""
    if schedule == "cosine":
        return lambda step: 0.5 * (1 + math.cos(math.pi * min(step, total_steps) / total_steps))
    return lambda step: 1.0


def batch_loss(model, batch, dev, precision, targets="taken"):
    """Cross-entropy of the action read at each state token against the action taken there, or
    (targets "expert") the BFS plan's action in that state: detours still show the model states
    off the plan and the recovery from them, but are never themselves imitated (DART-style
    labels, Laskey et al. 2017). The action tokens of the input are the actions taken either way."""
    b = {k: v.to(dev) for k, v in batch.items()}
    with autocast(dev, precision):
        logits = model(b["rtg"], model.encode_states(b["states"]), b["actions"], b["timesteps"])
    labels = b["expert_actions"] if targets == "expert" else b["actions"]
    return F.cross_entropy(logits[b["valid"]].float(), labels[b["valid"]])


@torch.no_grad()
def validation_loss(
    model, episodes: dict, context: int, batch_size: int, dev, precision, targets="taken"
) -> float:
    """Cross-entropy over every action of the episodes' first windows (start 0). Episodes go in
    order of length, so a batch carries little padding."""
    order = np.argsort(np.diff(episodes["offsets"]), kind="stable")
    total, count = 0.0, 0
    for i in range(0, len(order), batch_size):
        batch = windows(episodes, order[i : i + batch_size], context, None)
        n = int(batch["valid"].sum())
        total += batch_loss(model, batch, dev, precision, targets).item() * n
        count += n
    return total / count


def run_key(params, variant: str, seed: int, data_dir: Path) -> str:
    """What a resume checkpoint must match: the run's params, the training data's bytes and the
    package's code (epochs of an older loss or model must not join the new ones)."""
    h = hashlib.sha256(
        json.dumps(
            [
                asdict(params.model_config(variant)),
                asdict(params.train),
                asdict(params.env),
                seed,
            ],
            sort_keys=True,
        ).encode()
    )
    h.update((Path(data_dir) / "train.safetensors").read_bytes())
    package = Path(__file__).parents[1]
    for source in sorted(package.rglob("*.py")):
        h.update(source.relative_to(package).as_posix().encode() + b"\0" + source.read_bytes())
    return h.hexdigest()


def train(
    params,
    variant: str,
    seed: int,
    data_dir: Path,
    model_dir: Path,
    metrics_dir: Path,
    resume_dir: Path,
    threads: int,
    numerics: dict,
    preregistration: dict | None = None,
) -> pd.DataFrame:
    """Trains one model and writes it with its metrics; `numerics` (dtpe.numerics.check) is
    recorded beside them: which kernels made these bytes, and where they reproduce. A
    confirmatory run's model also records `preregistration` (dtpe.preregistration.lock), the
    overlay it was trained under, beside them and in its checkpoint's metadata; None records
    nothing, so every other model keeps its bytes."""
    torch.set_num_threads(threads)
    dev = device()
    tp, k = params.train, params.model.context
    train_eps = dataset.load(Path(data_dir) / "train.safetensors")
    val_eps = dataset.load(Path(data_dir) / "val.safetensors")
    val_layouts, _ = dataset.load_split_layouts(data_dir, "val", params.env)
    val_layouts = val_layouts.subset(slice(0, tp.val_layouts))

    torch.manual_seed(seed)
    model = DecisionTransformer(params.model_config(variant)).to(dev)
    # fused: one kernel for every parameter's update, a third of the unfused step's time at this
    # size (bench/train.py); the same update up to float order
    opt = torch.optim.AdamW(model.parameters(), lr=tp.lr, weight_decay=tp.weight_decay, fused=True)
    rng = np.random.default_rng(seed)
    train_width = np.minimum(np.diff(train_eps["offsets"]), k)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lr_factor(tp.lr_schedule, tp.epochs * batches_per_epoch(len(train_width), tp.batch_size)),
    )
    # Training episodes end by the cap, so t stays below it.
    k_hist, t_hist = (
        np.zeros(k, np.int64),
        np.zeros(params.env.cap(params.data.train_size), np.int64),
    )
    rows, first_epoch = [], 1
    key, resume_file = run_key(params, variant, seed, data_dir), Path(resume_dir) / "last.pt"
    if resume_file.is_file():
        # on the CPU: the RNG state and histograms stay there (on a GPU, load_state_dict
        # moves the weights and the optimizer's state to their parameters)
        state = torch.load(resume_file, map_location="cpu", weights_only=True)
        if state["key"] == key:
            model.load_state_dict(state["model"])
            opt.load_state_dict(state["optimizer"])
            sched.load_state_dict(state["scheduler"])
            torch.set_rng_state(state["torch_rng"])
            rng.bit_generator.state = json.loads(state["numpy_rng"])
            k_hist, t_hist = state["k_hist"].numpy(), state["t_hist"].numpy()
            rows, first_epoch = json.loads(state["rows"]), state["epoch"] + 1
            print(f"resuming {variant} seed {seed} after epoch {state['epoch']}")
        else:
            print(f"ignoring {resume_file}: it belongs to other params or data")

    for epoch in range(first_epoch, tp.epochs + 1):
        started = time.perf_counter()
        model.train()
        total, count = 0.0, 0  # the epoch's loss over every action, as validation_loss weighs it
        bar = tqdm(
            length_buckets(train_width, tp.batch_size, rng),
            desc=f"{variant} s{seed} epoch {epoch}/{tp.epochs}",
            leave=False,
            # in a Snakemake/DVC log a bar is one carriage-return line per update
            disable=not sys.stderr.isatty(),
        )
        for index in bar:
            batch = windows(train_eps, index, k, rng)
            valid = batch["valid"].numpy()
            k_hist[: valid.shape[1]] += valid.sum(0)
            t_hist += np.bincount(batch["timesteps"].numpy()[valid], minlength=len(t_hist))
            loss = batch_loss(model, batch, dev, tp.precision, tp.targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), tp.grad_clip)
            opt.step()
            sched.step()
            value, n = loss.item(), int(valid.sum())
            total += value * n
            count += n
            bar.set_postfix(loss=f"{value:.3f}")
        train_loss = total / count
        row = {"epoch": epoch, "train_loss": train_loss}
        # validation every val_every epochs and after the last: the rollouts take about a
        # tenth of an epoch's time; the other epochs' rows leave it empty
        if epoch % tp.val_every == 0 or epoch == tp.epochs:
            model.eval()
            val_loss = validation_loss(
                model, val_eps, k, tp.batch_size, dev, tp.precision, tp.targets
            )
            result = rollout.rollout(
                model, val_layouts, params.env, k, tp.val_target_return, tp.precision
            )
            row.update(
                val_loss=val_loss,
                val_success=float(result["success"].mean()),
                overfit_gap=val_loss - train_loss,
            )
        else:
            row.update(val_loss=math.nan, val_success=math.nan, overfit_gap=math.nan)
        rows.append({**row, "seconds": time.perf_counter() - started})
        print(" ".join(f"{c}={v:.4g}" for c, v in rows[-1].items()), flush=True)
        with atomic.output(resume_file) as tmp:
            torch.save(
                {
                    "key": key,
                    "epoch": epoch,
                    "model": model.state_dict(),
                    "optimizer": opt.state_dict(),
                    "scheduler": sched.state_dict(),
                    "torch_rng": torch.get_rng_state(),
                    "numpy_rng": json.dumps(rng.bit_generator.state),
                    "k_hist": torch.from_numpy(k_hist),
                    "t_hist": torch.from_numpy(t_hist),
                    "rows": json.dumps(rows),
                },
                tmp,
            )

    metrics = pd.DataFrame(rows)
    checkpoint.save(
        model,
        model_dir,
        extra={
            "variant": variant,
            "seed": seed,
            "epochs": tp.epochs,
            # the code paths, not the CPU's name: the checkpoint's bytes are the same on every
            # CPU the mode serves (numerics.json beside the metrics names the CPU)
            "numerics": {k: v for k, v in numerics.items() if k != "cpu"},
        },
        metadata=(
            {preregistered.METADATA_KEY: json.dumps(preregistration, sort_keys=True)}
            if preregistration
            else None
        ),
    )
    with atomic.output(metrics_dir) as tmp:
        tmp.mkdir()
        metrics.to_csv(tmp / "metrics.csv", index=False)
        (tmp / "numerics.json").write_text(json.dumps(numerics, indent=1) + "\n")
        if preregistration:
            (tmp / preregistered.RECORD).write_text(json.dumps(preregistration, indent=1) + "\n")
        (tmp / "positions.json").write_text(
            json.dumps(
                {
                    "context": k,
                    "k_unit": "timestep",
                    "alignment": "window starts at k=0, padding after the episode end",
                    "k_histogram": k_hist.tolist(),
                    "t_histogram": t_hist.tolist(),
                    "k_max_seen": int(np.flatnonzero(k_hist).max()),
                    "t_max_seen": int(np.flatnonzero(t_hist).max()),
                },
                indent=1,
            )
            + "\n"
        )
    resume_file.unlink()
    if not any(resume_file.parent.iterdir()):
        resume_file.parent.rmdir()
    return metrics
