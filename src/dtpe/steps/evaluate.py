"""The evaluation's sweeps of one model (docs/protocol.md, Evaluations): the 8x8 test split,
every suite at the training context, and the other contexts, and the seen step's training
layouts; each suite is played in batches by
rollout.rollout.

A failed episode counts the steps it took, i.e. the cap."""

from __future__ import annotations

from contextlib import ExitStack

import numpy as np
import pandas as pd

from dtpe.model.encodings import NotApplicable
from dtpe.steps import dataset, rollout

NO_SCALING = "none"
COLUMNS = [
    "variant",
    "seed",
    "grid_size",
    "context",
    "layout_id",
    "success",
    "steps",
    "optimal_steps",
    "applicable",
    "ending",
]
"""a row's columns; episodes.write adds its world (episodes.NAMED last)"""


def suite_rows(model, lay, optimal_steps, cap, context, params, variant, seed) -> pd.DataFrame:
    """One row per episode of a suite, each played to at most `cap` steps in batches of
    evaluate.batch_size; N/A rows if the variant's k encoding cannot index this context."""
    ev = params.evaluate
    base = unplayed(lay, optimal_steps, context, variant, seed)
    try:
        parts = [
            rollout.rollout(
                model,
                lay.subset(slice(i, i + ev.batch_size)),
                params.env,
                context,
                ev.target_return,
                ev.precision,
                cap=cap,
            )
            for i in range(0, len(lay), ev.batch_size)
        ]
    except NotApplicable:
        return not_applicable(base)
    return base.assign(
        success=np.concatenate([p["success"] for p in parts]).astype(int),
        steps=np.concatenate([p["steps"] for p in parts]),
        applicable=True,
        ending=np.concatenate([p["ending"] for p in parts]),
    )[COLUMNS]


def unplayed(lay, optimal_steps, context, variant, seed) -> pd.DataFrame:
    """A suite's rows before its episodes are played: what names each."""
    return pd.DataFrame(
        {
            "variant": variant,
            "seed": seed,
            "grid_size": lay.size,
            "context": context,
            "layout_id": lay.ids,
            "optimal_steps": optimal_steps,
        }
    )


def not_applicable(rows: pd.DataFrame) -> pd.DataFrame:
    """`rows` as episodes never played: the k encoding cannot index their context."""
    return rows.assign(success=np.nan, steps=np.nan, applicable=False, ending=np.nan)[COLUMNS]


def test_split(model, params, data_dir, variant, seed) -> pd.DataFrame:
    """The held-out test layouts of the training size at the training context:
    in-distribution competence."""
    lay, optimal_steps = dataset.load_split_layouts(data_dir, "test", params.env)
    cap = split_cap(params, optimal_steps)
    return suite_rows(model, lay, optimal_steps, cap, params.model.context, params, variant, seed)


def seen_split(model, params, data_dir, variant, seed) -> pd.DataFrame:
    """Layouts the model trained on, at the training size and context: as many as the test
    split holds, the first of the train split (a fixed sample), so that the two rows are played
    alike and differ only in whether training saw the layout."""
    test, test_steps = dataset.load_split_layouts(data_dir, "test", params.env)
    lay, optimal_steps = dataset.load_split_layouts(data_dir, "train", params.env)
    n = min(len(test), len(lay))
    return suite_rows(
        model,
        lay.subset(slice(0, n)),
        optimal_steps[:n],
        split_cap(params, test_steps),
        params.model.context,
        params,
        variant,
        seed,
    )


def split_cap(params, optimal_steps) -> int:
    """The step cap of the training size's split whose expert episodes are `optimal_steps`."""
    return params.evaluation_cap(params.data.train_size, int(optimal_steps.max()))


def played_suite(data_dir, size: int, params):
    """A suite's layouts, optimal steps and step cap as the sweeps play them: its first
    evaluate.layouts_per_suite (every one where None), to params.evaluation_cap."""
    lay, optimal_steps = dataset.load_suite(data_dir, size, params.env)
    n = params.evaluate.layouts_per_suite
    if n is not None and n < len(lay):
        lay, optimal_steps = lay.subset(slice(0, n)), optimal_steps[:n]
    return lay, optimal_steps, params.evaluation_cap(size, int(optimal_steps.max()))


def suite_caps(data_dir, params) -> dict[int, int]:
    """Each suite size's step cap as the sweeps play it."""
    return {n: played_suite(data_dir, n, params)[2] for n in params.data.suite_sizes}


def check_whole_episode(params, data_dir) -> None:
    """Where the whole episode is asked for and the caps come from the suites (evaluate.
    expert_cap), the longest context holds every played suite's cap: refused before any episode
    is played (dtpe.params checks the world's caps, which it knows without the data)."""
    ev = params.evaluate
    if not ev.whole_episode or ev.expert_cap is None:
        return
    caps = suite_caps(data_dir, params)
    size = max(caps, key=caps.get)
    if max(ev.contexts) < caps[size]:
        raise ValueError(
            f"evaluate.whole_episode: the whole episode is asked for, but the longest of "
            f"evaluate.contexts {list(ev.contexts)} is {max(ev.contexts)} steps, shorter than "
            f"the cap of suite size {size} ({caps[size]} steps: evaluate.expert_cap "
            f"{ev.expert_cap} x its expert's longest episode): make it at least {caps[size]}"
        )


def grid_sweep(model, params, data_dir, variant, seed) -> pd.DataFrame:
    """Every evaluation suite at the training context (those of evaluate.grid_sizes)."""
    return pd.concat(
        [
            suite_rows(
                model,
                *played_suite(data_dir, size, params),
                params.model.context,
                params,
                variant,
                seed,
            )
            for size in params.grid_sizes()
        ],
        ignore_index=True,
    )


def named(data_dir, params, variant, seed, context) -> pd.DataFrame:
    """Every suite's episodes at `context`, unplayed: what names each row."""
    return pd.concat(
        [
            unplayed(lay, optimal_steps, context, variant, seed)
            for lay, optimal_steps, _ in (
                played_suite(data_dir, size, params) for size in params.data.suite_sizes
            )
        ],
        ignore_index=True,
    )


def context_sweep(model, params, data_dir, variant, seed, grid: pd.DataFrame) -> pd.DataFrame:
    """Every suite at each context of evaluate.contexts beyond the training one, with each of
    evaluate.rope_scaling the k encoding has (rows marked by `rope_scaling`).

    Unscaled, the context changes nothing before the window first slides: an episode that
    ended within both of two contexts is the same episode at either. Contexts run in ascending
    order, each taking over such rows from the nearest one already played below it (the grid
    sweep's training context first), so only the episodes that outlast it are played again (a
    scaling changes every position, so scaled contexts play everything). A suite the grid sweep
    left out (evaluate.grid_sizes) has no rows to take over there: it is played whole at the
    first longer context and with every scaling, and taken over from below as any other after."""
    train_context, frames = params.model.context, []
    played_at = {train_context: grid}
    """unscaled rows by context, the sources rows are taken over from"""
    for context in sorted(c for c in params.evaluate.contexts if c != train_context):
        for scaling in params.evaluate.rope_scaling:
            with ExitStack() as scaled:
                try:
                    scaled.enter_context(model.at_context(context, scaling))
                except NotApplicable:
                    if scaling != NO_SCALING:
                        continue  # the k encoding has no such scaling: no rows, not N/A rows
                    frames.append(
                        not_applicable(named(data_dir, params, variant, seed, context)).assign(
                            rope_scaling=scaling
                        )
                    )
                    continue
                source = max((c for c in played_at if c <= context), default=train_context)
                at_context = []
                for size in params.data.suite_sizes:
                    lay, optimal_steps, cap = played_suite(data_dir, size, params)
                    left_out = size not in params.grid_sizes()
                    if left_out and (scaling != NO_SCALING or source == train_context):
                        # no rows to take over: the suite is played whole
                        at_context.append(
                            suite_rows(
                                model, lay, optimal_steps, cap, context, params, variant, seed
                            )
                        )
                        continue
                    played = grid[grid.grid_size == size]
                    if not left_out and not np.array_equal(played.layout_id, lay.ids):
                        raise ValueError(
                            f"the grid sweep's {size}x{size} rows are not this suite's"
                        )
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
                            cap,
                            context,
                            params,
                            variant,
                            seed,
                        )
                        outcome = ["success", "steps", "applicable", "ending"]
                        rows.loc[rows.index[replay], outcome] = again[outcome].to_numpy()
                    at_context.append(rows)
                if scaling == NO_SCALING:
                    played_at[context] = pd.concat(at_context)
                frames.extend(rows.assign(rope_scaling=scaling) for rows in at_context)
    if not frames:
        return pd.DataFrame(columns=COLUMNS + ["rope_scaling"])
    return pd.concat(frames, ignore_index=True)[COLUMNS + ["rope_scaling"]]
