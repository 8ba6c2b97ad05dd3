"""Batched evaluation: all episodes of a suite step in lockstep through the batched stepper,
the model runs once per step for the whole batch of unfinished episodes. Each state is encoded
once when it is observed and kept; the window is the last `context` timesteps, re-indexed
k = 0..w-1 at every step (aligned at its first timestep, as in training).

A failed episode counts the steps it took, i.e. the cap."""

from __future__ import annotations

from contextlib import nullcontext

import numpy as np
import pandas as pd
import torch

from dtpe import dataset
from dtpe.encodings import NotApplicable
from dtpe.maze import BatchedMaze, Layouts
from dtpe.model import TOKENS_PER_STEP, KVCache

COLUMNS = [
    "encoding",
    "seed",
    "grid_size",
    "context",
    "layout_id",
    "success",
    "steps",
    "optimal_steps",
    "applicable",
]


def autocast(device: torch.device, precision: str):
    if precision == "bf16":
        return torch.autocast(device.type, dtype=torch.bfloat16)
    return nullcontext()


@torch.no_grad()
def rollout(
    model, lay: Layouts, env, context: int, target_return: float, precision: str = "fp32"
) -> dict:
    """Greedy episodes of `model` on every layout; returns success (bool) and steps (int) arrays."""
    model.encoding.check(torch.tensor([context - 1]))  # raises NotApplicable before any work
    dev = next(model.parameters()).device
    b, cap = len(lay), env.cap(lay.size)
    maze = BatchedMaze(lay, cap, env.step_reward, env.goal_reward)
    obs = maze.reset()
    state_emb = torch.zeros(b, cap, model.cfg.d_model, device=dev)
    rtg = torch.zeros(b, cap, device=dev)
    actions = torch.zeros(b, cap, dtype=torch.long, device=dev)
    timesteps = torch.arange(cap, device=dev)
    current_rtg = torch.full((b,), float(target_return), device=dev)
    # While the window grows from step 0, every token keeps its k and the cache is exact; once it
    # slides, each step re-indexes the window from k = 0 and the whole window runs again.
    cache = KVCache(len(model.blocks), b, TOKENS_PER_STEP * context)
    for t in range(cap):
        active = torch.from_numpy(np.flatnonzero(~maze.done)).to(dev)
        if len(active) == 0:
            break
        lo = max(0, t + 1 - context)
        cache.rows = active
        with autocast(dev, precision):
            state_emb[active, t] = model.encode_states(
                torch.from_numpy(obs).to(dev)[active]
            ).float()
            rtg[active, t] = current_rtg[active]
            logits = model.next_action(
                rtg[active, lo : t + 1],
                state_emb[active, lo : t + 1],
                actions[active, lo : t + 1],
                timesteps[lo : t + 1].expand(len(active), -1),
                cache if lo == 0 else None,
            )
        choice = torch.zeros(b, dtype=torch.long, device=dev)
        choice[active] = logits.argmax(-1)
        actions[:, t] = choice
        obs, reward, _, _ = maze.step(choice.cpu().numpy())
        current_rtg -= torch.from_numpy(reward.astype(np.float32)).to(dev)
    return {"success": maze.success.copy(), "steps": maze.t.copy()}


def suite_rows(model, lay, optimal_steps, env, context, params, encoding, seed) -> pd.DataFrame:
    """One row per episode of a suite, played in batches of evaluate.batch_size; N/A rows if the
    encoding cannot run at this context."""
    ev = params.evaluate
    base = pd.DataFrame(
        {
            "encoding": encoding,
            "seed": seed,
            "grid_size": lay.size,
            "context": context,
            "layout_id": lay.ids,
            "optimal_steps": optimal_steps,
        }
    )
    try:
        parts = [
            rollout(
                model,
                lay.subset(slice(i, i + ev.batch_size)),
                env,
                context,
                ev.target_return,
                ev.precision,
            )
            for i in range(0, len(lay), ev.batch_size)
        ]
    except NotApplicable:
        return base.assign(success=np.nan, steps=np.nan, applicable=False)[COLUMNS]
    return base.assign(
        success=np.concatenate([p["success"] for p in parts]).astype(int),
        steps=np.concatenate([p["steps"] for p in parts]),
        applicable=True,
    )[COLUMNS]


def sweep(
    model, params, data_dir, encoding, seed, contexts, done: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Every evaluation suite at every context in `contexts`. Suites at a context that `done` (rows
    of an earlier sweep of this model, e.g. the grid sweep's) holds are taken from it, not played
    again."""
    if done is not None and list(done.columns) != COLUMNS:
        raise ValueError(f"the rows to reuse have columns {list(done.columns)}, expected {COLUMNS}")
    frames = []
    for size in params.data.suite_sizes:
        lay, optimal_steps = dataset.load_suite(data_dir, size)
        for c in contexts:
            rows = None if done is None else done[(done.grid_size == size) & (done.context == c)]
            if rows is None or rows.empty:
                rows = suite_rows(model, lay, optimal_steps, params.env, c, params, encoding, seed)
            elif (
                set(rows.encoding) != {encoding}
                or set(rows.seed) != {seed}
                or not np.array_equal(rows.layout_id, lay.ids)
            ):
                raise ValueError(
                    f"the rows to reuse for {size}x{size} at context {c} "
                    f"are not {encoding} seed {seed} "
                    f"on this suite's layouts"
                )
            frames.append(rows)
    return pd.concat(frames, ignore_index=True)
