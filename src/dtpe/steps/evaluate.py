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

from dtpe.model.encodings import NotApplicable
from dtpe.model.transformer import TOKENS_PER_STEP, KVCache
from dtpe.steps import dataset
from dtpe.world.maze import N_ACTIONS, BatchedMaze, Layouts

NO_SCALING = "none"
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
    model,
    lay: Layouts,
    env,
    context: int,
    target_return: float,
    precision: str = "fp32",
    trace: bool = False,
) -> dict:
    """Greedy episodes of `model` on every layout; returns success (bool) and steps (int) arrays,
    and with `trace` the chosen actions (B, cap) and their softmax probabilities (B, cap, 4) at
    every step (zero past an episode's end), so a replay is the evaluation's own episode."""
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
    probs = torch.zeros(b, cap, N_ACTIONS) if trace else None
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
        if trace:
            probs[active.cpu(), t] = logits.float().softmax(-1).cpu()
        obs, reward, _, _ = maze.step(choice.cpu().numpy())
        current_rtg -= torch.from_numpy(reward.astype(np.float32)).to(dev)
    result = {"success": maze.success.copy(), "steps": maze.t.copy()}
    if trace:
        played = np.arange(cap)[None, :] < maze.t[:, None]
        result.update(actions=np.where(played, actions.cpu().numpy(), 0), probs=probs.numpy())
    return result


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


def test_split(model, params, data_dir, encoding, seed) -> pd.DataFrame:
    """The held-out 8x8 test layouts at the training context: in-distribution competence."""
    lay, optimal_steps = dataset.load_split_layouts(data_dir, "test")
    return suite_rows(
        model, lay, optimal_steps, params.env, params.model.context, params, encoding, seed
    )


def grid_sweep(model, params, data_dir, encoding, seed) -> pd.DataFrame:
    """Every evaluation suite at the training context."""
    return pd.concat(
        [
            suite_rows(
                model,
                *dataset.load_suite(data_dir, size),
                params.env,
                params.model.context,
                params,
                encoding,
                seed,
            )
            for size in params.data.suite_sizes
        ],
        ignore_index=True,
    )


def context_sweep(model, params, data_dir, encoding, seed, grid: pd.DataFrame) -> pd.DataFrame:
    """Every suite at each context of evaluate.contexts beyond the training one, with each of
    evaluate.rope_scaling the k encoding has (rows marked by `rope_scaling`).

    Unscaled, the context changes nothing before the window first slides: an episode that
    ended within both of two contexts is the same episode at either. Contexts run in ascending
    order, each taking over such rows from the nearest one already played below it (the grid
    sweep's training context first), so only the episodes that outlast it are played again (a
    scaling changes every position, so scaled contexts play everything)."""
    train_context, frames = params.model.context, []
    played_at = {train_context: grid}
    """unscaled rows by context, the sources rows are taken over from"""
    for context in sorted(c for c in params.evaluate.contexts if c != train_context):
        for scaling in params.evaluate.rope_scaling:
            try:
                model.for_context(context, scaling)
                model.encoding.check(torch.tensor([context - 1]))
            except NotApplicable:
                if scaling != NO_SCALING:
                    continue  # the k encoding has no such scaling: no rows, not N/A rows
                frames.append(
                    grid.assign(
                        context=context, success=np.nan, steps=np.nan, applicable=False
                    ).assign(rope_scaling=scaling)
                )
                continue
            source = max((c for c in played_at if c <= context), default=train_context)
            at_context = []
            for size in params.data.suite_sizes:
                played = grid[grid.grid_size == size]
                lay, optimal_steps = dataset.load_suite(data_dir, size)
                if not np.array_equal(played.layout_id, lay.ids):
                    raise ValueError(f"the grid sweep's {size}x{size} rows are not this suite's")
                if scaling == NO_SCALING:
                    played = played_at[source][played_at[source].grid_size == size]
                replay = (
                    np.ones(len(lay), bool)
                    if scaling != NO_SCALING
                    else played.steps.to_numpy() > min(context, source)
                )
                rows = played.assign(context=context)
                if replay.any():
                    again = suite_rows(
                        model,
                        lay.subset(replay),
                        optimal_steps[replay],
                        params.env,
                        context,
                        params,
                        encoding,
                        seed,
                    )
                    rows.loc[rows.index[replay], ["success", "steps", "applicable"]] = again[
                        ["success", "steps", "applicable"]
                    ].to_numpy()
                at_context.append(rows)
            if scaling == NO_SCALING:
                played_at[context] = pd.concat(at_context)
            frames.extend(rows.assign(rope_scaling=scaling) for rows in at_context)
            model.for_context(train_context)
    if not frames:
        return pd.DataFrame(columns=COLUMNS + ["rope_scaling"])
    return pd.concat(frames, ignore_index=True)[COLUMNS + ["rope_scaling"]]
