"""How far back a variant looks: its effective context, read off its success at contexts
shorter than the training one (the reach step's ladder; docs/protocol.md, Statistics).

The effective context of a variant on a grid size is the shortest context c of the ladder
(the training context included) such that, at c and at every longer context of the ladder, the
variant's mean success over seeds is at or above the lower bound of the training context's
interval (the two-level bootstrap interval over seeds and layouts, success_by_grid's): from c up,
the shorter window loses nothing the seeds can tell. A mean above the interval counts as within
it. It is the training context where even the next shorter rung falls below, and 1 where a
window of one step, the current state alone, does as well. Undefined (NaN) where the training
context's interval is (one seed)."""

from __future__ import annotations

import math

import pandas as pd

EFFECTIVE_COLUMNS = [
    "grid_size",
    "variant",
    "train_context",
    "effective_context",
    "effective_success_pct",
    "train_success_pct",
    "train_ci_low_pct",
    "train_ci_high_pct",
    "n_seeds",
]


def effective_context(success: pd.DataFrame, train_context: int) -> pd.DataFrame:
    """Per grid size and variant of `success` (one row per context: success_pct_mean and, at the
    training context, ci_low_pct, ci_high_pct and n_seeds), its effective context (module
    docstring) with the success there and the training context's mean and interval."""
    rows = []
    for (size, variant), cells in success.groupby(["grid_size", "variant"], observed=True):
        cells = cells.sort_values("context", ascending=False)
        trained = cells[cells.context == train_context]
        if not len(trained):
            raise ValueError(f"{variant} on {size}x{size}: no success at the training context")
        trained = trained.iloc[0]
        effective, at = math.nan, math.nan
        if not math.isnan(trained.ci_low_pct):
            for cell in cells.itertuples():  # the training context first, then shorter
                if not cell.success_pct_mean >= trained.ci_low_pct:  # NaN (N/A) ends it too
                    break
                effective, at = cell.context, cell.success_pct_mean
        rows.append(
            {
                "grid_size": size,
                "variant": variant,
                "train_context": train_context,
                "effective_context": effective,
                "effective_success_pct": at,
                "train_success_pct": trained.success_pct_mean,
                "train_ci_low_pct": trained.ci_low_pct,
                "train_ci_high_pct": trained.ci_high_pct,
                "n_seeds": trained.n_seeds,
            }
        )
    return pd.DataFrame(rows, columns=EFFECTIVE_COLUMNS)
