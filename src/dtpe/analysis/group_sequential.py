"""A group-sequential design with a declared alpha-spending function (Lan and DeMets 1983), for
one two-sided comparison tested at K equally spaced interims: its boundaries, its crossing
probabilities under any drift, and the estimate and interval that account for stopping.

Everything here is a function of the design (K, alpha, the spending function) and of the
observed statistics alone: the boundaries come from the canonical joint distribution of the
interim z statistics (Jennison and Turnbull 2000, ch. 3 and 19: Z_k = S_k / sqrt(I_k), S a
Brownian motion in the information I, drift theta per unit information), integrated on a fixed
grid, with no random draw, so the same scores give the same decisions on every machine and for
every seed.

Scale: information fractions t_k = I_k / I_K, so I_K = 1 and theta is the z the cap would show
in expectation (the effect in units of the cap's standard error); both arms growing alike give
t_k = k / K (`equally_spaced`)."""

from __future__ import annotations

from functools import cache

import numpy as np
from scipy import optimize
from scipy import stats as sps

GRID_POINTS = 401
"""quadrature points over a continuation region (Simpson's rule): the boundaries agree with
1,601 points' to 1e-9"""

SPENDING = {
    # Lan-DeMets' O'Brien-Fleming type: almost nothing spent early, nearly alpha at the cap
    "obrien_fleming": lambda t, alpha: 2 * sps.norm.sf(sps.norm.isf(alpha / 2) / np.sqrt(t)),
    # Lan-DeMets' Pocock type: spent about evenly
    "pocock": lambda t, alpha: alpha * np.log1p((np.e - 1) * t),
}
"""spending function name -> (t, two-sided alpha) -> the alpha spent by information fraction t"""
SPENDING_NAMES = {"obrien_fleming": "O'Brien-Fleming", "pocock": "Pocock"}
"""spending function name -> how the text names it"""


def equally_spaced(looks: int) -> tuple[float, ...]:
    """Information fractions of `looks` looks at which both arms gain the same seeds."""
    return tuple(k / looks for k in range(1, looks + 1))


def _simpson(low: float, high: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and Simpson weights over [low, high]."""
    z = np.linspace(low, high, GRID_POINTS)
    w = np.ones(GRID_POINTS)
    w[1:-1:2], w[2:-1:2] = 4, 2
    return z, w * (z[1] - z[0]) / 3


class _Walk:
    """The sub-density of Z_k on the continuation region of the looks before it, stage by stage,
    under drift `theta`."""

    def __init__(self, fractions: tuple[float, ...], theta: float):
        self.t = np.asarray(fractions, float)
        self.theta = theta
        self.z = self.w = self.f = None  # the density of the last stage continued through

    def exceed(self, k: int, b) -> np.ndarray:
        """P(continue through looks 1..k-1, then Z_k >= b), b a scalar or an array."""
        b = np.asarray(b, float)
        if k == 0:
            return sps.norm.sf(b - self.theta * np.sqrt(self.t[0]))
        shift, step = self._increment(k)
        moved = (b[..., None] * np.sqrt(self.t[k]) - self.z * np.sqrt(self.t[k - 1]) - shift) / step
        return (sps.norm.sf(moved) * self.f * self.w).sum(-1)

    def below(self, k: int, b) -> np.ndarray:
        """P(continue through looks 1..k-1, then Z_k <= b)."""
        return self.exceed(k, -np.inf) - self.exceed(k, b)

    def carry(self, k: int, c: float) -> None:
        """Continue through look k, whose continuation region is (-c, c)."""
        z, w = _simpson(-c, c)
        if k == 0:
            f = sps.norm.pdf(z - self.theta * np.sqrt(self.t[0]))
        else:
            shift, step = self._increment(k)
            moved = (
                z[:, None] * np.sqrt(self.t[k]) - self.z * np.sqrt(self.t[k - 1]) - shift
            ) / step
            f = (sps.norm.pdf(moved) * self.f * self.w).sum(-1) * np.sqrt(self.t[k]) / step
        self.z, self.w, self.f = z, w, f

    def _increment(self, k: int) -> tuple[float, float]:
        """Mean and SD of S_k - S_{k-1}."""
        gap = self.t[k] - self.t[k - 1]
        return self.theta * gap, np.sqrt(gap)


@cache
def boundaries(fractions: tuple[float, ...], alpha: float, spending: str) -> tuple[float, ...]:
    """The two-sided critical |z| at each look, at information `fractions` (the last 1): look k
    rejects where |Z_k| >= c_k, spending alpha(t_k) - alpha(t_{k-1}) of the family's `alpha`
    under the null. A look whose share is nothing (below 1e-12) gets an infinite bound."""
    spend = SPENDING[spending]
    spent = spend(np.asarray(fractions, float), alpha)
    walk, bounds = _Walk(fractions, 0.0), []
    for k, share in enumerate(np.diff(np.concatenate([[0.0], spent]))):
        if share < 1e-12:
            bounds.append(np.inf)
        else:
            exits = lambda c, k=k: 2 * walk.exceed(k, c) - share  # noqa: E731 (symmetric null)
            bounds.append(optimize.brentq(exits, 0.0, 40.0, xtol=1e-12))
        walk.carry(k, min(bounds[-1], 40.0))
    return tuple(float(b) for b in bounds)


def crossings(bounds, fractions, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """(upper, lower) per look at information `fractions`: the chance of stopping there across
    +c_k or -c_k under drift `theta`, having continued through the looks before."""
    walk, upper, lower = _Walk(fractions, theta), [], []
    for k, c in enumerate(bounds):
        upper.append(float(walk.exceed(k, c)))
        lower.append(float(walk.below(k, -c)))
        walk.carry(k, min(c, 40.0))
    return np.array(upper), np.array(lower)


def stagewise_tail(bounds, fractions, look: int, z: float, theta: float) -> float:
    """P_theta(an outcome at least as large as (look, z) in the stagewise ordering): stopping
    upwards at an earlier look, or reaching `look` (0-based) with Z >= z. Increasing in theta;
    at theta 0 it is the one-sided p of the sequential test (Jennison and Turnbull 8.4)."""
    walk, earlier = _Walk(fractions, theta), 0.0
    for k in range(look):
        earlier += float(walk.exceed(k, bounds[k]))
        walk.carry(k, min(bounds[k], 40.0))
    return earlier + float(walk.exceed(look, z))


def adjusted(
    bounds, fractions, look: int, z: float, confidence: float
) -> tuple[float, float, float]:
    """(median-unbiased theta, interval low, interval high) after stopping at `look` (0-based)
    with statistic z, by the stagewise ordering: theta whose tail chance is 1/2, and the thetas
    where it is (1 -+ confidence) / 2."""
    if not np.isfinite(z):
        return np.nan, np.nan, np.nan

    def solve(level: float) -> float:
        gap = lambda theta: stagewise_tail(bounds, fractions, look, z, theta) - level  # noqa: E731
        return optimize.brentq(gap, z - 20, z + 20, xtol=1e-9)

    tail = (1 - confidence) / 2
    return solve(0.5), solve(tail), solve(1 - tail)


def welch_z(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(z, standard error) of mean(a) - mean(b) over the last axis (seeds), any leading axes
    alike: Welch's t carried to the normal scale through its own tail probability (the same
    one-sided p), so that each look's statistic has the canonical design's marginal law at any
    number of seeds. Two constant samples give 0 where the means agree and +-inf where they
    differ."""
    diff = a.mean(-1) - b.mean(-1)
    va, vb = a.var(-1, ddof=1) / a.shape[-1], b.var(-1, ddof=1) / b.shape[-1]
    se = np.sqrt(va + vb)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = diff / se
        df = (va + vb) ** 2 / (va**2 / (a.shape[-1] - 1) + vb**2 / (b.shape[-1] - 1))
        z = np.sign(t) * sps.norm.isf(sps.t.sf(np.abs(t), df))
    z = np.where(se > 0, z, np.where(diff == 0, 0.0, np.copysign(np.inf, diff)))
    return z[()], se[()]
