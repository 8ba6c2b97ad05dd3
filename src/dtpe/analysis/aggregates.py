"""The field's aggregates over seeds and tasks, as rliable defines them (Agarwal et al. 2021;
rliable/metrics.py and rliable/library.py), computed with scipy: rliable 1.2.0 does not import
beside pandas 3.

The tasks are the grid sizes beyond training; a variant's scores are a (seeds x tasks) matrix of
success %, one row per training seed (the unit of replication).
- IQM: the interquartile mean of every score of the matrix (rliable's aggregate_iqm:
  scipy.stats.trim_mean(scores, 0.25, axis=None)).
- Performance profile: for each threshold tau, the share of the matrix's scores above tau
  (rliable's run_score_deviation: np.mean(scores > tau)), the score distribution over seeds
  and tasks.
- Intervals: the stratified bootstrap (rliable's StratifiedBootstrap): each task's seeds
  resampled with replacement independently of the other tasks'; here scipy.stats.bootstrap
  with one sample per task, which resamples each sample on its own, percentile method."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from dtpe.analysis.inference import percentile_interval

TAUS = np.linspace(0, 100, 101)
"""the profile's thresholds, success %"""
IQM_COLUMNS = ["variant", "iqm_pct", "ci_low_pct", "ci_high_pct", "n_seeds", "tasks"]
PROFILE_COLUMNS = ["variant", "tau_pct", "fraction", "ci_low", "ci_high"]


def iqm(scores: np.ndarray, axis=None) -> np.ndarray:
    return sps.trim_mean(scores, 0.25, axis=axis)


def profile(scores: np.ndarray, taus: np.ndarray = TAUS) -> np.ndarray:
    """Share of scores above each tau: the last two axes are (seeds, tasks)."""
    above = scores[..., None] > taus
    return above.mean(axis=(-3, -2))


def stratified_interval(scores: np.ndarray, statistic, sp, rng) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval of `statistic` (of a (..., seeds, tasks) matrix) under the stratified
    bootstrap: every task's column its own sample."""
    if scores.shape[0] < 2:
        shape = np.shape(statistic(scores))
        return np.full(shape, np.nan), np.full(shape, np.nan)
    return percentile_interval(
        # scipy wants the resamples on the statistic's last axis, after any outputs of its own
        lambda *columns, axis=-1: np.moveaxis(statistic(np.stack(columns, axis=-1)), 0, -1),
        tuple(scores.T),
        sp,
        rng,
        batch=200,
    )


def matrices(per_seed: pd.DataFrame, tasks: list[int]) -> dict[str, np.ndarray]:
    """Per variant, its (seeds x tasks) success matrix from per-seed success rows (variant,
    seed, grid_size, success_pct); only seeds with every task."""
    chosen = per_seed[per_seed.grid_size.isin(tasks)]
    out = {}
    for variant, rows in chosen.groupby("variant", observed=True, sort=False):
        table = rows.pivot(index="seed", columns="grid_size", values="success_pct")
        out[str(variant)] = table.reindex(columns=tasks).dropna().sort_index().to_numpy(float)
    return out


def summary(
    per_seed: pd.DataFrame, tasks: list[int], sp, rng_of
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(iqm, profile) tables: per variant the IQM across tasks with its stratified interval;
    per variant and tau the profile with its pointwise interval; both empty without tasks (a
    run whose suites are none larger than training). `rng_of(kind, variant)` gives
    each cell its generator. A variant none of whose seeds played every task (a submission's
    grid sweep of some suites only: evaluate.grid_sizes) has no row."""
    iqm_rows, profile_rows = [], []
    for variant, scores in (matrices(per_seed, tasks) if tasks else {}).items():
        if not len(scores):
            continue
        low, high = stratified_interval(
            scores, lambda s: iqm(s.reshape(*s.shape[:-2], -1), axis=-1), sp, rng_of("iqm", variant)
        )
        iqm_rows.append(
            {
                "variant": variant,
                "iqm_pct": float(iqm(scores)),
                "ci_low_pct": float(low),
                "ci_high_pct": float(high),
                "n_seeds": scores.shape[0],
                "tasks": " ".join(str(t) for t in tasks),
            }
        )
        p_low, p_high = stratified_interval(scores, profile, sp, rng_of("profile", variant))
        for tau, value, lo, hi in zip(TAUS, profile(scores), p_low, p_high):
            profile_rows.append(
                {
                    "variant": variant,
                    "tau_pct": tau,
                    "fraction": value,
                    "ci_low": lo,
                    "ci_high": hi,
                }
            )
    return (
        pd.DataFrame(iqm_rows, columns=IQM_COLUMNS),
        pd.DataFrame(profile_rows, columns=PROFILE_COLUMNS),
    )
