"""The verdict on a run's declared hypotheses: one row per hypothesis with its outcome, estimate,
interval, seeds, models and stability (results/stats/decisions.csv).

Each hypothesis compares two variants on one endpoint, the per-seed success averaged over its
grid sizes (sequential.endpoint_scores); the seed is the unit of replication. A fixed design
tests the family at once: an exact permutation test over seed labels per hypothesis, Holm over
the declared family only. A sequential design takes the group-sequential decisions
(sequential.replay), and each hypothesis's numbers from the seeds it had when it was decided.
Either way:
- a > b or a < b: rejected, with the sign of the difference;
- equivalent within +-margin: not rejected, a margin declared, and the two one-sided Welch tests
  against -margin and +margin (TOST) pass at alpha after Holm over the hypotheses tested for
  equivalence, so the family's equivalence claims hold together as its difference claims do;
  alpha is each kind of claim's (verdict.claim_alpha: half the run's under split_alpha, so that
  the family's claims of both kinds together err at most the run's alpha);
- undecided: not rejected and not shown equivalent (at the cap, in a sequential run);
- open: a sequential run whose next interim still tests it.

The estimate: in a sequential run, stopping where the difference happens to be large biases the
plain mean difference away from 0, so the verdict's estimate and interval are the stagewise
median-unbiased ones (group_sequential.adjusted), and the plain mean difference and its
bootstrap interval over the seeds used stay beside them as `naive_*`. In a fixed design both
are the plain ones. Both intervals are at `ci_level` (`level`), 1 - the alpha the hypothesis's
rejection is tested at (claim alpha / m, m the declared hypotheses), so that the interval is
given at the level of the claim: a fixed design's is Bonferroni's level, which Holm's steps
never go below. The bootstrap resamples each variant's seeds independently
(scipy.stats.bootstrap); the layouts are the suite's, the same for every model.

`stable` is the share of 100 seeds of the statistics' generator (stats.seed 0..99) under which
the outcome comes out the same: 1.0 where the decision draws nothing at random.

A confirmatory run's rows carry its preregistration (PREREGISTRATION, dtpe/preregistration.py):
whether its models record the overlay they were trained under, its commit and content hash, and
for a run that predates the record, what git orders; empty in any other run."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats as sps

from dtpe import names
from dtpe.analysis import group_sequential, sequential
from dtpe.analysis.inference import (
    MAX_EXACT_PERMUTATIONS,
    cell_rng,
    holm,
    percentile_interval,
    permutation_p,
    relabellings,
)
from dtpe.preregistration import COLUMNS as PREREGISTRATION

COLUMNS = [
    "hypothesis",
    "a",
    "b",
    "endpoint",
    "outcome",
    "estimate",
    "effect_pct",
    "ci_low_pct",
    "ci_high_pct",
    "ci_level",
    "naive_effect_pct",
    "naive_ci_low_pct",
    "naive_ci_high_pct",
    "margin_pct",
    "equivalence_low_pct",
    "equivalence_high_pct",
    "p_value",
    "p_holm",
    "p_tost",
    "p_tost_holm",
    "seeds_a",
    "seeds_b",
    "models",
    "interim",
    "stable",
    "drops",
    "fragile_drops",
    "z_margin",
    *PREREGISTRATION,
]
OPEN, UNDECIDED = "open", "undecided"
NAIVE, STAGEWISE = "mean difference", "stagewise median-unbiased"
STABILITY_SEEDS = range(100)


def interval(a: np.ndarray, b: np.ndarray, confidence: float, sp, rng) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b), seeds resampled within each."""
    if len(a) < 2 or len(b) < 2:
        return np.nan, np.nan
    low, high = percentile_interval(
        lambda x, y, axis=-1: x.mean(axis) - y.mean(axis), (a, b), sp, rng, confidence=confidence
    )
    return float(low), float(high)


def welch_interval(a: np.ndarray, b: np.ndarray, confidence: float) -> tuple[float, float]:
    """Welch's interval of mean(a) - mean(b) at `confidence`: the one the TOST's two one-sided
    tests at (1 - confidence) / 2 read."""
    if len(a) < 2 or len(b) < 2:
        return np.nan, np.nan
    ci = sps.ttest_ind(a, b, equal_var=False).confidence_interval(confidence)
    diff = a.mean() - b.mean()
    # two constant samples: scipy gives NaN, the interval is the difference itself
    return (diff, diff) if np.isnan(ci.low) else (float(ci.low), float(ci.high))


def tost_p(a: np.ndarray, b: np.ndarray, margin: float):
    """The p of the two one-sided Welch tests of |mean(a) - mean(b)| < margin (the larger of the
    two: H0 a - b <= -margin, and H0 a - b >= margin), over the last axis (seeds), any leading
    axes alike (a simulation's runs)."""
    if a.shape[-1] < 2 or b.shape[-1] < 2:
        return np.nan
    # two constant samples: scipy's t is undefined, the difference is exact
    exact = (a.var(-1) == 0) & (b.var(-1) == 0)
    p = np.where(np.abs(a.mean(-1) - b.mean(-1)) < margin, 0.0, 1.0)
    if not exact.all():
        above = sps.ttest_ind(a + margin, b, equal_var=False, alternative="greater", axis=-1)
        below = sps.ttest_ind(a - margin, b, equal_var=False, alternative="less", axis=-1)
        p = np.where(exact, p, np.maximum(above.pvalue, below.pvalue))
    return float(p) if p.ndim == 0 else p


def describe(
    h: dict, a: np.ndarray, b: np.ndarray, sp, claim_alpha: float, confidence: float
) -> dict:
    """The plain estimate of one hypothesis on the seeds it used with its interval at
    `confidence`; its equivalence interval the one its TOST at `claim_alpha` reads."""
    endpoint = names.endpoint_key(h)
    rng = cell_rng(sp.seed, "effect", h["a"], h["b"], endpoint)
    low, high = interval(a, b, confidence, sp, rng)
    margin = h["margin"]
    eq_low, eq_high = (
        (np.nan, np.nan) if margin is None else welch_interval(a, b, 1 - 2 * claim_alpha)
    )
    core = essentials(h, a, b)
    return {
        "hypothesis": f"{h['a']} vs {h['b']} on {endpoint}",
        "a": h["a"],
        "b": h["b"],
        "endpoint": endpoint,
        "estimate": NAIVE,
        **core,
        "ci_low_pct": low,
        "ci_high_pct": high,
        "ci_level": confidence,
        "naive_effect_pct": core["effect_pct"],
        "naive_ci_low_pct": low,
        "naive_ci_high_pct": high,
        "equivalence_low_pct": eq_low,
        "equivalence_high_pct": eq_high,
        "models": len(a) + len(b),
    }


def essentials(h: dict, a: np.ndarray, b: np.ndarray) -> dict:
    """What `outcomes` reads of one hypothesis on the seeds it used: the effect, the margin,
    the TOST p and the seeds of each side."""
    margin = h["margin"]
    return {
        "effect_pct": float(a.mean() - b.mean()) if len(a) and len(b) else np.nan,
        "margin_pct": np.nan if margin is None else float(margin),
        "p_tost": np.nan if margin is None else tost_p(a, b, margin),
        "seeds_a": len(a),
        "seeds_b": len(b),
    }


def sequential_sides(params, scores: pd.DataFrame, replayed):
    """Per declared hypothesis of a sequential run: (hypothesis, its replayed decision, a's and
    b's scores on the seeds it had when decided or last tested)."""
    seeds = list(params.study.seeds)
    for h, d in zip(params.verdict.declared(), replayed.decisions.itertuples()):
        a = sequential.per_seed(scores, h["a"], d.endpoint, seeds)[: d.seeds_a]
        b = sequential.per_seed(scores, h["b"], d.endpoint, seeds)[: d.seeds_b]
        yield h, d, a, b


def equivalence(rows: list[dict], tested: list[bool], alpha: float) -> list[str | None]:
    """Holm over the TOSTs of the hypotheses `tested` for equivalence: per row its outcome,
    equivalent or undecided, None where not tested."""
    p = [r["p_tost"] if t else np.nan for r, t in zip(rows, tested)]
    adjusted = holm(p)
    out = []
    for r, t, q in zip(rows, tested, adjusted):
        r["p_tost_holm"] = q
        out.append(
            None if not t else f"equivalent within ±{r['margin_pct']:g}" if q < alpha else UNDECIDED
        )
    return out


def level(params) -> float:
    """The confidence of a declared hypothesis's interval (decisions.csv `ci_level`): 1 - the
    two-sided alpha its rejection is tested at (sequential.hypothesis_alpha), so that a
    sequential run's stagewise interval excludes 0 when its test rejected and covers it when
    not (one end at 0, to rounding, where z lies exactly on the cap's boundary)."""
    return 1 - sequential.hypothesis_alpha(params)


def stopped(h: dict, d, a: np.ndarray, b: np.ndarray, params) -> dict:
    """A sequential hypothesis's estimate, interval and p that account for where it stopped:
    the stagewise ordering over the design's looks, in points through the z of the look it
    stopped at."""
    bounds, fractions = sequential.bounds(params), sequential.fractions(params)
    look, z = d.interim - 1, d.z
    effect = a.mean() - b.mean()
    _, se = group_sequential.welch_z(a, b)
    # theta is z at the cap in expectation; at this look, z per point is z / effect
    per_theta = np.sqrt(fractions[look]) * (effect / z if z and np.isfinite(z) else se)
    theta, low, high = group_sequential.adjusted(bounds, fractions, look, z, level(params))
    tail = (
        group_sequential.stagewise_tail(bounds, fractions, look, z, 0.0) if np.isfinite(z) else 0.0
    )
    return {
        "estimate": STAGEWISE,
        "effect_pct": theta * per_theta,
        "ci_low_pct": low * per_theta,
        "ci_high_pct": high * per_theta,
        "p_value": min(1.0, 2 * min(tail, 1 - tail)),
    }


def permutation_ps(params, scores: pd.DataFrame, seed: int) -> list[float]:
    """Each declared hypothesis's permutation p with the statistics' generator at `seed` (a
    fixed design's test: exact where the relabellings are few enough, else sampled)."""
    seeds, out = list(params.study.seeds), []
    for h in params.verdict.declared():
        endpoint = names.endpoint_key(h)
        a, b = (sequential.per_seed(scores, h[side], endpoint, seeds) for side in "ab")
        out.append(permutation_p(a, b, cell_rng(seed, "test", h["a"], h["b"], endpoint))[0])
    return out


def outcomes(params, replayed, rows: list[dict], p: list[float] | None) -> list[str]:
    """Each hypothesis's outcome: from the replay's decisions in a sequential run, from the
    permutation ps `p` in a fixed one; then equivalence where not rejected."""
    hypotheses, alpha = params.verdict.declared(), params.verdict.claim_alpha(params.stats.alpha)
    if params.verdict.sequential:
        ends = [d.decision != sequential.CONTINUE for d in replayed.decisions.itertuples()]
        found = [
            d.decision if d.decision in sequential.REJECTED else None
            for d in replayed.decisions.itertuples()
        ]
        tested = [
            end and f is None and h["margin"] is not None
            for end, f, h in zip(ends, found, hypotheses)
        ]
        equal = equivalence(rows, tested, alpha)
        return [f or e or (UNDECIDED if end else OPEN) for f, e, end in zip(found, equal, ends)]
    rejected = [q < alpha for q in holm(p)]
    tested = [not rej and h["margin"] is not None for rej, h in zip(rejected, hypotheses)]
    equal = equivalence(rows, tested, alpha)
    return [
        ("a > b" if r["effect_pct"] > 0 else "a < b") if rej else e or UNDECIDED
        for r, rej, e in zip(rows, rejected, equal)
    ]


EQUIVALENT = 2


def simulate(params, draws: np.ndarray) -> np.ndarray:
    """A sequential design's outcomes (runs, hypotheses) on simulated per-seed scores `draws`
    (runs, sequential.arms, study.seeds in order), as `outcomes` decides them: +1 a > b, -1
    a < b (sequential.simulate), EQUIVALENT where not rejected at the cap, a margin declared and
    the Holm-adjusted TOST on the cap's seeds passes, 0 undecided."""
    found = sequential.simulate(params, draws)
    variants, last = sequential.arms(params), params.verdict.sequential["interims"] - 1
    p = np.full(found.shape, np.nan)
    for i, h in enumerate(params.verdict.declared()):
        if h["margin"] is not None:
            a, b = (
                draws[
                    :, variants.index(h[side]), : len(sequential.side_seeds(params, h[side], last))
                ]
                for side in "ab"
            )
            p[:, i] = np.where(found[:, i] == 0, tost_p(a, b, h["margin"]), np.nan)
    alpha = params.verdict.claim_alpha(params.stats.alpha)
    return np.where(holm(p) < alpha, EQUIVALENT, found)


def light_rows(params, scores: pd.DataFrame, replayed) -> list[dict]:
    """Per hypothesis what `outcomes` reads of a sequential run, without the intervals: the
    fragility replays the outcomes once per dropped model."""
    return [essentials(h, a, b) for h, _, a, b in sequential_sides(params, scores, replayed)]


def fragility(params, scores: pd.DataFrame, found: list[str], used: list[set]) -> list[float]:
    """Per hypothesis of a sequential run, how many of the single models it used (`used`: its
    variants' first seeds_a and seeds_b seeds), each dropped alone, would change its outcome:
    the whole rule replayed without that model's score (the looks, and the equivalence tests
    over every hypothesis), the model counted as trained. NaN in a fixed design: it would rerun
    every permutation test once per model (up to 200,000 relabellings each, minutes a run); the
    sequential design, every confirmatory run's, draws nothing and replays in milliseconds."""
    if not params.verdict.sequential:
        return [np.nan] * len(found)
    hypotheses, changed = params.verdict.declared(), [0.0] * len(found)
    models = sorted({m for u in used for m in u})
    for variant, seed in models:
        # a model's scores under every label it plays (rope's as rope and as rope+yarn) go
        model = scores.variant.map(names.unscaled) == names.unscaled(variant)
        kept = scores[~(model & (scores.seed == seed))]
        replayed = sequential.replay(params, kept, frozenset({(variant, seed)}))
        again = outcomes(params, replayed, light_rows(params, kept, replayed), None)
        for i, (h, u) in enumerate(zip(hypotheses, used)):
            if (variant, seed) in u and again[i] != found[i]:
                changed[i] += 1
    return changed


def decide(params, scores: pd.DataFrame | None, replayed=None, preregistered=None) -> pd.DataFrame:
    """The decisions table of the declared hypotheses (empty under all_pairs), from the per-seed
    endpoint scores of the run's models and, in a sequential run, their replay
    (sequential.replay; replayed here when not given); each row with the run's preregistration
    where it is confirmatory (preregistration.verify)."""
    hypotheses, sp = params.verdict.declared(), params.stats
    claim_alpha = params.verdict.claim_alpha(sp.alpha)
    if not hypotheses:
        return pd.DataFrame(columns=COLUMNS)
    tested = level(params)
    seeds = list(params.study.seeds)
    rows = []
    if params.verdict.sequential:
        replayed = replayed or sequential.replay(params, scores)
        for h, d, a, b in sequential_sides(params, scores, replayed):
            row = {
                **describe(h, a, b, sp, claim_alpha, tested),
                "p_value": np.nan,
                "p_holm": np.nan,
            }
            if d.decision != sequential.CONTINUE:
                row.update(stopped(h, d, a, b, params))
            rows.append({**row, "interim": d.interim})
    else:
        for h in hypotheses:
            endpoint = names.endpoint_key(h)
            a, b = (sequential.per_seed(scores, h[side], endpoint, seeds) for side in "ab")
            rows.append({**describe(h, a, b, sp, claim_alpha, tested), "interim": np.nan})
    p, again = None, []
    if not params.verdict.sequential:
        p = permutation_ps(params, scores, sp.seed)
        for row, raw, q in zip(rows, p, holm(p)):
            row["p_value"], row["p_holm"] = raw, q
        # an exact test (and the sequential design) draws nothing: only a sampled one can move
        if any(relabellings(r["seeds_a"], r["seeds_b"]) > MAX_EXACT_PERMUTATIONS for r in rows):
            again = [permutation_ps(params, scores, s) for s in STABILITY_SEEDS]
    found = outcomes(params, replayed, rows, p)
    # each seed's outcomes once, on copies: equivalence writes its Holm p into the rows it gets
    others = [outcomes(params, replayed, [dict(r) for r in rows], q) for q in again]
    used = [
        {(h["a"], s) for s in seeds[: r["seeds_a"]]} | {(h["b"], s) for s in seeds[: r["seeds_b"]]}
        for h, r in zip(hypotheses, rows)
    ]
    fragile = fragility(params, scores, found, used)
    critical = sequential.bounds(params) if params.verdict.sequential else None
    for i, (row, outcome) in enumerate(zip(rows, found)):
        same = [other[i] == outcome for other in others]
        row["outcome"], row["stable"] = outcome, float(np.mean(same)) if same else 1.0
        row["drops"], row["fragile_drops"] = len(used[i]), fragile[i]
        row["z_margin"] = np.nan
        if critical is not None and row["interim"] >= 1:
            d = replayed.decisions.iloc[i]
            row["z_margin"] = float(abs(d.z) - critical[int(d.interim) - 1])
        if preregistered is not None:
            row.update(preregistered.columns())
    return pd.DataFrame(rows, columns=COLUMNS)
