"""How far each variant still succeeds as the suites grow, and where its attention goes there
(issue 60): the success horizon and the attention on the milestone.

The success horizon of one seed at one context is read from its success curve over the suite
sizes, from the smallest up: the last suite size before the first one where its success falls
below stats.horizon_pct (a dip and a recovery further on do not extend it); NaN where the
smallest suite is already below; the variant is marked not applicable where it could not run at
that context at all (a learned table shorter than the context). Per variant and context the
table gives every seed's horizon, their median and range, and how many seeds hold the threshold
through the largest suite: for those the horizon is only a lower bound, the run measured no
farther. The seed is the unit.

The attention on the milestone comes from the attention step (steps/attention.py): per episode
the strongest head's weight (the largest over layers and heads) from the last step's state
token to the state token of the step where the milestone was reached (the T-Maze's cue), and
that weight over the uniform weight on the tokens the query sees; averaged over a suite's
episodes per seed, then mean and std over seeds."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

HORIZON_COLUMNS = [
    "variant",
    "context",
    "threshold_pct",
    "n_seeds",
    "seeds",
    "horizons",
    "horizon_median",
    "horizon_min",
    "horizon_max",
    "largest_size",
    "through_largest",
    "applicable",
]
MILESTONE_COLUMNS = [
    "variant",
    "grid_size",
    "n_seeds",
    "steps_mean",
    "uniform_mean",
    "weight_mean",
    "weight_std",
    "ratio_mean",
    "ratio_std",
]


def seed_horizon(curve: pd.Series, threshold_pct: float) -> float:
    """The horizon of one success curve (success % indexed by suite size, ascending)."""
    below = curve.index[~(curve >= threshold_pct)]  # NaN (not applicable) counts as below
    if not len(below):
        return float(curve.index[-1])
    before = curve.index[curve.index < below[0]]
    return float(before[-1]) if len(before) else np.nan


def horizons(per_seed: pd.DataFrame, threshold_pct: float) -> pd.DataFrame:
    """Per variant and context of `per_seed` (success_pct per grid_size, context, variant, seed),
    the seeds' horizons and their summary (module docstring)."""
    rows = []
    every = per_seed.groupby("context", observed=True).grid_size.unique()
    for (variant, context), cells in per_seed.groupby(["variant", "context"], observed=True):
        # A submission's grid sweep plays some suites only (evaluate.grid_sizes): its curve is
        # read up to the first suite it did not play, the largest it can claim to hold through.
        played = set(cells.grid_size)
        gap = [n for n in sorted(every[context]) if n not in played]
        cells = cells[cells.grid_size < gap[0]] if gap else cells
        largest = int(cells.grid_size.max())
        seeds = sorted(cells.seed.unique())
        found = np.array(
            [
                seed_horizon(
                    cells[cells.seed == s].set_index("grid_size").success_pct.sort_index(),
                    threshold_pct,
                )
                for s in seeds
            ]
        )
        defined = found[~np.isnan(found)]
        rows.append(
            {
                "variant": variant,
                "context": context,
                "threshold_pct": threshold_pct,
                "n_seeds": len(seeds),
                "seeds": " ".join(map(str, seeds)),
                "horizons": " ".join("nan" if np.isnan(h) else str(int(h)) for h in found),
                "horizon_median": float(np.median(found)) if len(defined) == len(found) else np.nan,
                "horizon_min": float(defined.min()) if len(defined) else np.nan,
                "horizon_max": float(defined.max()) if len(defined) else np.nan,
                "largest_size": largest,
                "through_largest": int((found == largest).sum()),
                "applicable": bool(cells.success_pct.notna().any()),
            }
        )
    return pd.DataFrame(rows, columns=HORIZON_COLUMNS)


def milestone(attention_jsons: list[Path]) -> pd.DataFrame:
    """Per variant and suite size, the strongest head's weight on the milestone (module
    docstring); no rows where the run measured none, NaN where the variant could not run."""
    per_seed = []
    for path in attention_jsons:
        result = json.loads(Path(path).read_text())
        for suite in result.get("milestone", []):
            row = {"variant": result["variant"], "seed": result["seed"], "grid_size": suite["size"]}
            row["steps"] = float(np.mean(suite["steps"]))
            row["uniform"] = float(np.mean(suite["uniform"]))
            if suite["applicable"]:
                kept = [w is not None for w in suite["weight"]]
                strongest = np.array([np.max(w) for w, k in zip(suite["weight"], kept) if k])
                uniform = np.array(suite["uniform"])[kept]
                row |= {"weight": strongest.mean(), "ratio": (strongest / uniform).mean()}
            per_seed.append(row)
    if not per_seed:
        return pd.DataFrame(columns=MILESTONE_COLUMNS)
    frame = pd.DataFrame(per_seed).reindex(
        columns=["variant", "seed", "grid_size", "steps", "uniform", "weight", "ratio"]
    )
    summary = frame.groupby(["variant", "grid_size"], observed=True, sort=False).agg(
        n_seeds=("seed", "nunique"),
        steps_mean=("steps", "mean"),
        uniform_mean=("uniform", "mean"),
        weight_mean=("weight", lambda s: s.mean(skipna=False)),
        weight_std=("weight", "std"),
        ratio_mean=("ratio", lambda s: s.mean(skipna=False)),
        ratio_std=("ratio", "std"),
    )
    return summary.reset_index()[MILESTONE_COLUMNS]
