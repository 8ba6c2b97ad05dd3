"""Can the run's design reject at all? Checked from the params alone, before any training.

The primary family's first rejection needs a p below alpha / m (Holm, m hypotheses), or, in a
sequential run, below alpha / m at the cap at least (its spending leaves less to the cap); alpha
is what the rejections spend (verdict.claim_alpha: half the run's where the family's equivalence
tests spend the other half). The
exact permutation test over seed labels cannot give a p below 2 / C(n_a + n_b, n_a): with 5
seeds per variant that is 0.0079, above Holm's 0.05 / 15 = 0.0033. A design whose floor is above
its threshold reports "nothing significant" whatever the effect, so the check says so, with the
seeds per variant it would need; a confirmatory run is refused (dtpe check). A sequential run
decides by Welch's statistic against its looks' boundaries, not by a permutation test: no floor
applies, and the check states the boundaries instead."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from dtpe.analysis import group_sequential, sequential
from dtpe.params import ALL_PAIRS, ParamsError, fixed_arms


@dataclass(frozen=True)
class Design:
    family: str
    """all_pairs or declared"""
    tests: int
    """hypotheses in the primary family"""
    seeds: int
    """seeds per variant at the end of the run (a sequential run's cap)"""
    p_min: float
    """the smallest two-sided p the exact permutation test over seed labels gives at `seeds`"""
    threshold: float
    """the p the family's first rejection needs: alpha / tests (Holm's first step; a sequential
    run's Bonferroni share, of which its last look gets less), alpha the rejections'"""
    can_reject: bool
    seeds_needed: int
    """the fewest seeds per variant whose floor is below the threshold"""
    sequential: bool
    confirmatory: bool
    world: str
    """the world the run plays (params' env.world), for tables across runs"""
    boundaries: tuple = ()
    """a sequential run's |z| boundary at each look (analysis/sequential.py's bounds)"""
    spending: str = ""
    """a sequential run's spending function"""
    fixed: dict = field(default_factory=dict)
    """a sequential run's fixed arms (verdict.fixed): variant -> its seeds"""

    def sentence(self) -> str:
        if not self.tests:
            return (
                "The run has one variant: no pair to compare, so it tests nothing and decides "
                "nothing; its tables and figures describe that variant alone."
            )
        if self.sequential:
            looks = len(self.boundaries)
            return (
                f"The design is group-sequential: each of the {self.tests} declared hypotheses "
                f"is tested at {looks} looks, {self.seeds // looks} more seeds per variant at "
                f"each (up to {self.seeds}), spending {self.threshold * self.tests:g} / "
                f"{self.tests} = {self.threshold:.2g} by "
                f"{group_sequential.SPENDING_NAMES[self.spending]}'s function: |z| must reach "
                f"{self.boundaries[0]:.2f} at the first look and {self.boundaries[-1]:.2f} at the "
                "last. Its statistic is Welch's, not a permutation test, so no floor on p keeps "
                "it from rejecting." + self.fixed_words()
            )
        if self.can_reject:
            return (
                f"The design can reject: with {self.seeds} seeds per variant the permutation "
                f"test's smallest p is {self.p_min:.2g}, below the {self.threshold:.2g} that the "
                f"first of the family's {self.tests} tests needs."
            )
        return (
            f"The design cannot reject: with {self.seeds} seeds per variant the permutation "
            f"test's smallest p is {self.p_min:.2g}, above the {self.threshold:.2g} that the "
            f"first of the family's {self.tests} tests needs, so no difference can be declared "
            f"significant whatever its size; {self.seeds_needed} seeds per variant could."
        )

    def fixed_words(self) -> str:
        if not self.fixed:
            return ""
        held = ", ".join(f"{v} ({n} seeds)" for v, n in self.fixed.items())
        return (
            f" Fixed arms, all in from the first look and never retrained: {held}; the looks "
            "stay equally spaced (sequential.fractions says why)."
        )

    def as_dict(self) -> dict:
        found = asdict(self)
        if not self.fixed:  # the runs before fixed arms keep their design.json
            del found["fixed"]
        return {**found, "sentence": self.sentence()}


def p_floor(n: int) -> float:
    """The smallest two-sided p of an exact permutation test of n against n seeds."""
    return min(1.0, 2 / math.comb(2 * n, n)) if n >= 2 else 1.0


def family_size(params) -> int:
    """The number of hypotheses the correction covers: the declared ones, or every pair of
    variants at every grid size."""
    if params.verdict.hypotheses == ALL_PAIRS:
        return math.comb(len(params.study.variants), 2) * len(params.data.suite_sizes)
    return len(params.verdict.hypotheses)


def check(params) -> Design:
    tests, alpha = family_size(params), params.stats.alpha
    seeds = len(params.study.seeds)
    threshold = params.verdict.claim_alpha(alpha) / max(tests, 1)
    needed = next(n for n in range(2, 10_000) if p_floor(n) <= threshold)
    seq = params.verdict.sequential
    bounds = tuple(float(c) for c in sequential.bounds(params)) if seq and tests else ()
    return Design(
        family="declared" if params.verdict.declared() else ALL_PAIRS,
        tests=tests,
        seeds=seeds,
        p_min=p_floor(seeds),
        threshold=threshold,
        can_reject=bool(bounds) or (tests > 0 and not seq and p_floor(seeds) <= threshold),
        seeds_needed=needed,
        sequential=params.verdict.sequential is not None,
        confirmatory=params.verdict.confirmatory,
        world=params.env.world,
        boundaries=bounds,
        spending=seq["spending"] if seq else "",
        fixed=fixed_arms(params.verdict),
    )


def require(params, where) -> Design:
    """The design of a run, checked: a confirmatory run whose design cannot reject is refused
    (ParamsError naming `where`, its params file), any other run only told."""
    found = check(params)
    if params.verdict.confirmatory and not found.can_reject:
        raise ParamsError(
            f"{where}: a confirmatory run whose design cannot reject: {found.sentence()}"
        )
    return found
