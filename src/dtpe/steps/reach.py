"""How far back one model looks (docs/protocol.md, Evaluations): the suites of `reach_sizes`
played at each context of params `reach.contexts`, all shorter than the training one.

The training context's episodes are the grid sweep's, read from its CSV, never played again.
Each rung is evaluate.context_sweep at that one context, unscaled, from those rows: an episode
that ended within the rung's window never slid in it, nor at the training context, so it is
taken over as played, and only the longer ones are played again at the rung."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from dtpe.steps import evaluate


def ladder(model, params, data_dir, variant, seed, grid: pd.DataFrame) -> pd.DataFrame:
    """One row per episode (evaluate.COLUMNS) of every suite of params.reach_sizes() at every
    context of reach.contexts, longest first; `grid` is the model's grid sweep."""
    sizes = params.reach_sizes()
    played = grid[grid.grid_size.isin(sizes)]
    missing = sorted(set(sizes) - set(played.grid_size))
    if missing:
        raise ValueError(f"the grid sweep has no rows of the reach sizes {missing}")
    rungs = [
        evaluate.context_sweep(
            model, at_rung(params, context, sizes), data_dir, variant, seed, played
        )
        for context in sorted(params.reach.contexts, reverse=True)
    ]
    return pd.concat(rungs, ignore_index=True)[evaluate.COLUMNS]


def at_rung(params, context: int, sizes: list[int]):
    """`params` whose context sweep is the one rung `context`, unscaled, on `sizes`."""
    return replace(
        params,
        evaluate=replace(params.evaluate, contexts=[context], rope_scaling=[evaluate.NO_SCALING]),
        data=replace(params.data, suite_sizes=sizes),
    )
