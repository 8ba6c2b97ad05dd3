"""The verdict on a run's declared hypotheses: one row per hypothesis with its outcome, effect,
interval, seeds and models (results/stats/decisions.csv).

Each hypothesis compares two variants on one endpoint, the per-seed success averaged over its
grid sizes (sequential.endpoint_scores); the seed is the unit of replication. A fixed design
tests the family at once: an exact permutation test over seed labels per hypothesis, Holm over
the declared family only. A sequential design takes AdaStop's decisions (sequential.replay), and
each hypothesis's numbers from the seeds it had when it was decided. Either way:
- a > b or a < b: rejected, with the sign of the difference;
- equivalent within +-margin: not rejected, a margin declared, and the difference's
  1 - 2 alpha interval (the two one-sided tests at alpha) inside it;
- undecided: not rejected and not shown equivalent (at the cap, in a sequential run);
- open: a sequential run whose next interim still tests it.
The effect's interval is the 1 - alpha percentile bootstrap over seeds, each variant's seeds
resampled independently (scipy.stats.bootstrap); the layouts are the suite's, the same for
every model."""

from __future__ import annotations

import numpy as np
import pandas as pd

from dtpe.analysis import sequential
from dtpe.analysis.inference import cell_rng, holm, percentile_interval, permutation_p

COLUMNS = [
    "hypothesis",
    "a",
    "b",
    "endpoint",
    "outcome",
    "effect_pct",
    "ci_low_pct",
    "ci_high_pct",
    "margin_pct",
    "equivalence_low_pct",
    "equivalence_high_pct",
    "p_value",
    "p_holm",
    "seeds_a",
    "seeds_b",
    "models",
    "interim",
]
OPEN, UNDECIDED = "open", "undecided"


def interval(a: np.ndarray, b: np.ndarray, confidence: float, sp, rng) -> tuple[float, float]:
    """Percentile bootstrap interval of mean(a) - mean(b), seeds resampled within each."""
    if len(a) < 2 or len(b) < 2:
        return np.nan, np.nan
    low, high = percentile_interval(
        lambda x, y, axis=-1: x.mean(axis) - y.mean(axis), (a, b), sp, rng, confidence=confidence
    )
    return float(low), float(high)


def summarise(h: dict, a: np.ndarray, b: np.ndarray, sp) -> dict:
    """Effect and intervals of one hypothesis on the seeds it used."""
    endpoint = sequential.endpoint_key(h["grids"])
    low, high = interval(
        a, b, 1 - sp.alpha, sp, cell_rng(sp.seed, "effect", h["a"], h["b"], endpoint)
    )
    eq_low, eq_high = (
        interval(a, b, 1 - 2 * sp.alpha, sp, cell_rng(sp.seed, "tost", h["a"], h["b"], endpoint))
        if h["margin"] is not None
        else (np.nan, np.nan)
    )
    return {
        "hypothesis": f"{h['a']} vs {h['b']} on {endpoint}",
        "a": h["a"],
        "b": h["b"],
        "endpoint": endpoint,
        "effect_pct": float(a.mean() - b.mean()) if len(a) and len(b) else np.nan,
        "ci_low_pct": low,
        "ci_high_pct": high,
        "margin_pct": np.nan if h["margin"] is None else float(h["margin"]),
        "equivalence_low_pct": eq_low,
        "equivalence_high_pct": eq_high,
        "seeds_a": len(a),
        "seeds_b": len(b),
        "models": len(a) + len(b),
    }


def not_rejected(row: dict, at_end: bool) -> str:
    """The outcome of a hypothesis the test did not reject."""
    if not at_end:
        return OPEN
    margin = row["margin_pct"]
    if (
        np.isfinite(margin)
        and -margin < row["equivalence_low_pct"] <= row["equivalence_high_pct"] < margin
    ):
        return f"equivalent within ±{margin:g}"
    return UNDECIDED


def per_seed(scores: pd.DataFrame, variant: str, endpoint: str, seeds: list) -> np.ndarray:
    """A variant's endpoint scores at `seeds`, in that order, where it has them."""
    mine = scores[(scores.variant == variant) & (scores.endpoint == endpoint)]
    by_seed = dict(zip(mine.seed, mine.score_pct))
    return np.array([by_seed[s] for s in seeds if s in by_seed], float)


def decide(params, scores: pd.DataFrame | None, replayed=None) -> pd.DataFrame:
    """The decisions table of the declared hypotheses (empty under all_pairs), from the per-seed
    endpoint scores of the run's models and, in a sequential run, their replay
    (sequential.replay; replayed here when not given)."""
    hypotheses, sp = params.verdict.declared(), params.stats
    if not hypotheses:
        return pd.DataFrame(columns=COLUMNS)
    seeds = list(params.study.seeds)
    rows = []
    if params.verdict.sequential:
        replayed = replayed or sequential.replay(params, scores)
        for h, d in zip(hypotheses, replayed.decisions.itertuples()):
            a = per_seed(scores, h["a"], d.endpoint, seeds)[: d.seeds_a]
            b = per_seed(scores, h["b"], d.endpoint, seeds)[: d.seeds_b]
            row = summarise(h, a, b, sp)
            at_end = d.decision != sequential.CONTINUE
            rejected = d.decision in sequential.SIGN.values()
            outcome = d.decision if rejected else not_rejected(row, at_end)
            rows.append(
                {
                    **row,
                    "outcome": outcome,
                    "p_value": np.nan,
                    "p_holm": np.nan,
                    "interim": d.interim,
                }
            )
        return pd.DataFrame(rows, columns=COLUMNS)
    for h in hypotheses:
        endpoint = sequential.endpoint_key(h["grids"])
        a = per_seed(scores, h["a"], endpoint, seeds)
        b = per_seed(scores, h["b"], endpoint, seeds)
        p, _ = permutation_p(a, b, cell_rng(sp.seed, "test", h["a"], h["b"], endpoint))
        rows.append({**summarise(h, a, b, sp), "p_value": p, "interim": np.nan})
    frame = pd.DataFrame(rows)
    frame["p_holm"] = holm(frame.p_value)
    frame["outcome"] = [
        ("a > b" if r["effect_pct"] > 0 else "a < b")
        if r["p_holm"] < sp.alpha
        else not_rejected(r, at_end=True)
        for r in frame.to_dict("records")
    ]
    return frame[COLUMNS]
