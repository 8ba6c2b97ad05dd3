"""Does a model use position? Each model's success with an encoding switched off at inference
(steps/position.py) beside its own on the same layouts at the same context.

Per model: the change in success and an exact McNemar test of it (scipy.stats.binomtest on the
episodes that differ, two-sided); the model uses that encoding at that size where p < stats.alpha.
Per variant: the mean change over seeds (the unit of replication) with its t interval, and how
many of its models use the encoding."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as st

MODEL_COLUMNS = [
    "variant",
    "seed",
    "grid_size",
    "off",
    "episodes",
    "own",
    "switched_off",
    "change",
    "p",
    "uses",
]
COLUMNS = [
    "variant",
    "grid_size",
    "off",
    "seeds",
    "own",
    "switched_off",
    "change",
    "change_low",
    "change_high",
    "models_using",
]


def per_model(ablated: pd.DataFrame | None, context: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per model, size and switched-off axis (MODEL_COLUMNS), success in %; `ablated`
    is the position step's `k off` / `t off` rows (None: a run without them), `context` the
    models' own episodes (the context sweep, unscaled). Rows N/A in either are left out."""
    rows = []
    if ablated is None:
        return pd.DataFrame(rows, columns=MODEL_COLUMNS)
    ablated = ablated[ablated.applicable.astype(bool)]
    own = context[context.applicable.astype(bool)]
    keys = ["variant", "seed", "grid_size", "context", "layout_id"]
    for (variant, seed, size, altered), off in ablated.groupby(
        ["variant", "seed", "grid_size", "altered"], sort=False
    ):
        pairs = off.merge(own[[*keys, "success"]], on=keys, suffixes=("_off", ""), how="inner")
        if len(pairs) != len(off):
            raise ValueError(
                f"position: {variant} seed {seed} at size {size}: {len(off)} episodes switched "
                f"off, {len(pairs)} of them in the model's own context sweep (same layouts and "
                "context): the position step and the evaluation disagree"
            )
        with_it, without = pairs.success.astype(int), pairs.success_off.astype(int)
        lost, gained = (
            int(((with_it == 1) & (without == 0)).sum()),
            int(((with_it == 0) & (without == 1)).sum()),
        )
        p = st.binomtest(lost, lost + gained, 0.5).pvalue if lost + gained else 1.0
        rows.append(
            {
                "variant": variant,
                "seed": int(seed),
                "grid_size": int(size),
                "off": altered.split()[0],
                "episodes": len(pairs),
                "own": 100 * with_it.mean(),
                "switched_off": 100 * without.mean(),
                "change": 100 * (without.mean() - with_it.mean()),
                "p": p,
                "uses": bool(p < alpha),
            }
        )
    return pd.DataFrame(rows, columns=MODEL_COLUMNS)


def per_variant(models: pd.DataFrame, alpha: float) -> pd.DataFrame:
    """One row per variant, size and axis (COLUMNS): means over seeds, the change's t interval
    at 1 - alpha (NaN below 2 seeds), and how many models use the encoding."""
    rows = []
    for (variant, size, off), g in models.groupby(["variant", "grid_size", "off"], sort=False):
        low = high = np.nan
        if len(g) >= 2 and g.change.std() > 0:
            low, high = st.ttest_1samp(g.change, 0).confidence_interval(1 - alpha)
        elif len(g) >= 2:
            low = high = g.change.iloc[0]
        rows.append(
            {
                "variant": variant,
                "grid_size": size,
                "off": off,
                "seeds": len(g),
                "own": g.own.mean(),
                "switched_off": g.switched_off.mean(),
                "change": g.change.mean(),
                "change_low": low,
                "change_high": high,
                "models_using": int(g.uses.sum()),
            }
        )
    return pd.DataFrame(rows, columns=COLUMNS)
