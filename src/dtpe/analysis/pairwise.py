"""The pairs of variants: every pair compared at every grid size and context (the two-level
bootstrap interval, the exact permutation p, Holm over the primary family), the ranking read
from those pairs, and per grid size what the seeds can detect (power). Written by the stats
stage as comparisons.csv, ranking.csv and power.csv."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd

from dtpe.analysis.inference import (
    cell_rng,
    chance_gap,
    compare,
    detectable,
    holm,
    seeds_needed,
)


def outcomes(episodes: pd.DataFrame) -> np.ndarray:
    """(seeds, layouts) success of one variant on one suite, seeds and layouts sorted."""
    table = episodes.pivot(index="seed", columns="layout_id", values="success")
    return table.sort_index().sort_index(axis=1).to_numpy(float)


COMPARISON_COLUMNS = [
    "grid_size",
    "context",
    "variant_a",
    "variant_b",
    "mean_a_pct",
    "mean_b_pct",
    "diff_pct",
    "ci_low_pct",
    "ci_high_pct",
    "p_value",
    "p_min",
    "prob_improvement",
    "cohens_d",
    "n_seeds_a",
    "n_seeds_b",
    "n_layouts",
    "verdict",
    "primary",
    "p_holm",
]
"""comparisons.csv: the pair and its cell, inference.compare's numbers, whether it is of the
Holm family and its adjusted p"""


def compare_all(
    episodes: pd.DataFrame, first: list[str], train_context: int, sp, all_pairs: bool = True
):
    """Every pair of variants that both ran, at every grid size and context; `first` orders
    the pairs (the reference variant is `a` wherever it takes part). Under `all_pairs` the
    primary family, Holm-adjusted, is every pair at the training context; a run that declares
    its hypotheses tests them apart (verdicts.py) and every row here is exploratory."""
    order = first + [e for e in episodes.variant.cat.categories if e not in first]
    runnable = episodes[episodes.applicable]
    rows = []
    for (size, context), suite in runnable.groupby(["grid_size", "context"], observed=True):
        present = [e for e in order if e in set(suite.variant)]
        for var_a, var_b in itertools.combinations(present, 2):
            a = outcomes(suite[suite.variant == var_a])
            b = outcomes(suite[suite.variant == var_b])
            rows.append(
                {
                    "grid_size": size,
                    "context": context,
                    "variant_a": var_a,
                    "variant_b": var_b,
                    **compare(a, b, sp, cell_rng(sp.seed, "pair", size, context, var_a, var_b)),
                    "primary": all_pairs and context == train_context,
                }
            )
    frame = pd.DataFrame(rows, columns=COMPARISON_COLUMNS)  # a one-variant run has no pairs
    frame["p_holm"] = np.nan
    primary = frame.primary.to_numpy(bool)
    frame.loc[primary, "p_holm"] = holm(frame.p_value[primary])
    return frame


LEADING, BELOW, UNDEFINED_STANDING = "leading group", "below the first", "undefined (one seed)"


def ranking(success: pd.DataFrame, comparisons: pd.DataFrame, train_context: int) -> pd.DataFrame:
    """Per grid size, the variants by mean success (tied means share a rank; the first of them
    in the study's order is the one gaps are taken to), each with its gap to the first and that
    gap's interval, read from the pair's comparison."""
    pairs = comparisons[comparisons.context == train_context]
    rows = []
    for size, suite in success.groupby("grid_size", sort=True):
        order = suite.sort_values("success_pct_mean", ascending=False, kind="stable")
        ranks = order.success_pct_mean.rank(method="min", ascending=False).astype(int)
        first = order.variant.iloc[0]
        for rank, row in zip(ranks, order.itertuples()):
            gap, low, high = gap_to(pairs[pairs.grid_size == size], size, first, row.variant)
            if row.variant == first:
                standing = LEADING
            elif math.isnan(low):
                standing = UNDEFINED_STANDING
            else:
                standing = BELOW if low > 0 else LEADING
            rows.append(
                {
                    "grid_size": size,
                    "rank": rank,
                    "variant": row.variant,
                    "success_pct_mean": row.success_pct_mean,
                    "ci_low_pct": row.ci_low_pct,
                    "ci_high_pct": row.ci_high_pct,
                    "gap_pct": gap,
                    "gap_ci_low_pct": low,
                    "gap_ci_high_pct": high,
                    "standing": standing,
                }
            )
    return pd.DataFrame(rows)


def gap_to(pairs: pd.DataFrame, size: int, first: str, variant: str) -> tuple[float, float, float]:
    """first − variant in points with its interval, whichever way round the pair was
    compared; no interval for the first itself."""
    if variant == first:
        return 0.0, math.nan, math.nan
    ab = pairs[(pairs.variant_a == first) & (pairs.variant_b == variant)]
    ba = pairs[(pairs.variant_a == variant) & (pairs.variant_b == first)]
    if len(ab):
        row = ab.iloc[0]
        return row.diff_pct, row.ci_low_pct, row.ci_high_pct
    if len(ba):
        row = ba.iloc[0]
        return -row.diff_pct, -row.ci_high_pct, -row.ci_low_pct
    raise ValueError(f"no comparison of {first} and {variant} on {size}x{size} to rank by")


def power(grid: pd.DataFrame, success: pd.DataFrame, sp) -> pd.DataFrame:
    """Per grid size: the pooled seed SD across variants, what the seeds used can detect, the
    seeds needed for 10 points, the gap the study's seed count shows by chance, and whether the
    grid tells variants apart at all."""
    rows = []
    for size, rows_n in success.groupby("grid_size"):
        n = int(rows_n.n_seeds.min())
        sd = float(np.sqrt(np.nanmean(rows_n.success_pct_std**2))) if n > 1 else math.nan
        best = float(rows_n.success_pct_mean.max())
        rows.append(
            {
                "grid_size": size,
                "n_seeds": n,
                "seed_sd_pct": sd,
                "mde_pct": detectable(sd, n, sp.alpha),
                "seeds_for_10pts": seeds_needed(10.0, sd, sp.alpha),
                "chance_gap_pct": chance_gap(sd, sp.study_seeds, sp.alpha),
                "best_pct": best,
                "informative": best >= sp.floor_pct,
            }
        )
    return pd.DataFrame(rows)
