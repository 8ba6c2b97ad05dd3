"""The statistics' arithmetic over (seeds x layouts) success matrices and per-seed values: the
two-level bootstrap, the exact permutation test, Holm, the effect sizes, the power
approximations. Pure functions: no files, no tables, no prose (stats.py builds the tables,
verdicts.py the decisions)."""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
from scipy import optimize
from scipy import stats as sps

POWER = 0.8
# Exact permutation tests enumerate every relabelling up to this many; beyond, they sample.
MAX_EXACT_PERMUTATIONS = 200_000


def cell_rng(seed: int, *cell) -> np.random.Generator:
    """The generator of one cell's statistics, e.g. ("pair", grid_size, context, a, b): seeded by
    the stats seed and the cell's identity alone, so no other cell's draws move it. The cell is
    hashed with sha256, not hash(), which Python salts per process for strings."""
    digest = hashlib.sha256(json.dumps([str(part) for part in cell]).encode()).digest()
    return np.random.default_rng([seed, *np.frombuffer(digest, np.uint32).tolist()])


def percentile_interval(statistic, samples, sp, rng, batch: int = 500, confidence=None):
    """Percentile interval (at `confidence`, 1 - alpha by default) of a vectorized `statistic`
    over independent resamples of each of `samples` (scipy.stats.bootstrap): (low, high), arrays
    where the statistic has outputs of its own."""
    result = sps.bootstrap(
        samples,
        statistic,
        n_resamples=sp.bootstrap_resamples,
        confidence_level=1 - sp.alpha if confidence is None else confidence,
        method="percentile",
        vectorized=True,
        paired=False,
        batch=batch,
        rng=rng,
    )
    return result.confidence_interval.low, result.confidence_interval.high


def _bootstrap(statistic, samples, sp, rng) -> tuple[float, float]:
    """Percentile interval of `statistic` over independent resamples of each index sample."""
    low, high = percentile_interval(statistic, samples, sp, rng)
    return float(low), float(high)


def _resampled_mean(done: np.ndarray, seeds: np.ndarray, layouts: np.ndarray) -> np.ndarray:
    """Mean of `done` over resampled seeds (..., s) and layouts (..., l), per resample."""
    return done[seeds[..., :, None], layouts[..., None, :]].mean((-2, -1))


def mean_interval(done: np.ndarray, sp, rng) -> tuple[float, float]:
    """Two-level bootstrap interval of 100 x the mean of a (seeds, layouts) outcome matrix."""
    if len(done) < 2:
        return math.nan, math.nan
    seeds, layouts = np.arange(done.shape[0]), np.arange(done.shape[1])
    return _bootstrap(
        lambda s, lay, axis=-1: 100 * _resampled_mean(done, s, lay), (seeds, layouts), sp, rng
    )


def paired_gap_interval(a: np.ndarray, b: np.ndarray, sp, rng) -> tuple[float, float]:
    """Two-level bootstrap interval of 100 x (mean a - mean b) where row i of a and of b is the
    same model on two sets of layouts: the seeds resampled jointly, each set's layouts
    independently."""
    if len(a) < 2:
        return math.nan, math.nan
    samples = (np.arange(len(a)), np.arange(a.shape[1]), np.arange(b.shape[1]))
    return _bootstrap(
        lambda s, la, lb, axis=-1: 100 * (_resampled_mean(a, s, la) - _resampled_mean(b, s, lb)),
        samples,
        sp,
        rng,
    )


def diff_interval(a: np.ndarray, b: np.ndarray, sp, rng) -> tuple[float, float]:
    """Two-level bootstrap interval of 100 x (mean a - mean b): the seeds of a and of b each
    resampled, the layouts (shared, the same columns in a and b) resampled jointly."""
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan
    samples = (np.arange(len(a)), np.arange(len(b)), np.arange(a.shape[1]))
    return _bootstrap(
        lambda sa, sb, lay, axis=-1: (
            100 * (_resampled_mean(a, sa, lay) - _resampled_mean(b, sb, lay))
        ),
        samples,
        sp,
        rng,
    )


def relabellings(n_a: int, n_b: int) -> int:
    return math.comb(n_a + n_b, n_a)


def permutation_p(a: np.ndarray, b: np.ndarray, rng) -> tuple[float, float]:
    """Two-sided permutation test of mean(a) - mean(b) over seed labels (per-seed success),
    and the smallest p the design can give."""
    if len(a) < 2 or len(b) < 2:
        return math.nan, math.nan  # scipy needs two per group; one seed each tells nothing
    count = relabellings(len(a), len(b))
    exact = count <= MAX_EXACT_PERMUTATIONS
    result = sps.permutation_test(
        (a, b),
        lambda x, y, axis=-1: x.mean(axis) - y.mean(axis),
        permutation_type="independent",
        n_resamples=np.inf if exact else MAX_EXACT_PERMUTATIONS,
        alternative="two-sided",
        vectorized=True,
        rng=rng,
    )
    p_min = min(1.0, 2 / count) if exact else 2 / (MAX_EXACT_PERMUTATIONS + 1)
    return float(result.pvalue), p_min


def holm(p_values) -> np.ndarray:
    """Holm's step-down adjusted p-values along the last axis, each row its own family (NaN
    stays NaN and does not count): a simulation adjusts every run's family at once."""
    p = np.asarray(p_values, float)
    order = np.argsort(p, axis=-1, kind="stable")  # NaN sorts last, so no step reads one
    ranked = np.take_along_axis(p, order, -1)
    m = (~np.isnan(p)).sum(-1, keepdims=True)
    steps = np.minimum(1.0, np.maximum.accumulate((m - np.arange(p.shape[-1])) * ranked, -1))
    out = np.empty_like(p)
    np.put_along_axis(out, order, steps, -1)
    return out


def prob_improvement(a: np.ndarray, b: np.ndarray) -> float:
    """P(X_a > X_b) + P(X_a = X_b) / 2 over seeds: the Mann-Whitney U of a over n_a n_b."""
    return float(sps.mannwhitneyu(a, b).statistic / (len(a) * len(b)))


def cohens_d(a, b) -> float:
    """(mean a - mean b) / pooled std (ddof 1): NaN when undefined (one value per group, or no
    spread and no difference), ±inf when the groups differ without any spread."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    squares = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.sqrt(squares / np.float64(len(a) + len(b) - 2))
        return float(np.float64(a.mean() - b.mean()) / pooled)


UNRESOLVED = "no difference resolved"
"""the verdict of a pair whose interval covers 0"""


def verdict(low: float, high: float) -> str:
    if low > 0:
        return "a > b"
    if high < 0:
        return "a < b"
    return UNRESOLVED


def compare(a: np.ndarray, b: np.ndarray, sp, rng) -> dict:
    """Two variants' (seeds, layouts) outcomes on the same layouts."""
    seeds_a, seeds_b = 100 * a.mean(1), 100 * b.mean(1)
    low, high = diff_interval(a, b, sp, rng)
    p, p_min = permutation_p(seeds_a, seeds_b, rng)
    return {
        "mean_a_pct": seeds_a.mean(),
        "mean_b_pct": seeds_b.mean(),
        "diff_pct": seeds_a.mean() - seeds_b.mean(),
        "ci_low_pct": low,
        "ci_high_pct": high,
        "p_value": p,
        "p_min": p_min,
        "prob_improvement": prob_improvement(seeds_a, seeds_b),
        "cohens_d": cohens_d(seeds_a, seeds_b),
        "n_seeds_a": len(a),
        "n_seeds_b": len(b),
        "n_layouts": a.shape[1],
        "verdict": verdict(low, high),
    }


def t_power(diff: float, sd: float, n: int, alpha: float) -> float:
    """Power of a two-sided two-sample t-test with n per group to detect `diff`."""
    df = 2 * n - 2
    shift = diff / (sd * math.sqrt(2 / n))
    crit = sps.t.ppf(1 - alpha / 2, df)
    # the far tail underflows to NaN for large shifts, where it is 0
    far = np.nan_to_num(sps.nct.cdf(-crit, df, shift))
    return float(sps.nct.sf(crit, df, shift) + far)


def detectable(sd: float, n: int, alpha: float) -> float:
    """The smallest difference (percentage points) detected at POWER with n seeds per group."""
    if not sd > 0 or n < 2:
        return math.nan
    return float(optimize.brentq(lambda d: t_power(d, sd, n, alpha) - POWER, 1e-9, 15 * sd))


def seeds_needed(diff: float, sd: float, alpha: float, most: int = 1000) -> float:
    """The fewest seeds per group that detect `diff` at POWER (the t approximation), also
    enough for the permutation test's smallest p to fall below alpha."""
    if not sd > 0:
        return math.nan
    for n in range(2, most + 1):
        if 2 / relabellings(n, n) < alpha and t_power(diff, sd, n, alpha) >= POWER:
            return float(n)
    return math.nan


def chance_gap(sd: float, n: int, alpha: float) -> float:
    """The difference of two equal variants' means over n seeds each (points) that chance
    exceeds with probability alpha, seeds normal with SD `sd`: how far apart a study with n
    seeds can find two variants that do not differ."""
    if not sd > 0:
        return math.nan
    return float(sps.norm.ppf(1 - alpha / 2) * sd * math.sqrt(2 / n))
