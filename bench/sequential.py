"""Error rates of every sequential design a committed run uses, by simulation, at the run's own
seed SD (pooled within variants over its per-seed endpoint scores):
- fwer: the family-wise false rejection with all variants equal;
- combined_10: any wrong claim of the family (a false rejection, a rejection with the wrong sign,
  or equivalence within the margin claimed of a pair the margin's gap separates) with one true
  gap at the margin: the first hypothesis's `a` 10 points above every other variant;
- power_10: how often that gap is found (its hypothesis decided a > b).
Each design is simulated under both rules of verdict.split_alpha (each kind of claim at alpha, the
first three confirmatory runs' rule; at alpha / 2 each, the default since). The simulation decides
each run as the run decides (analysis/verdicts.simulate: the same
boundaries and Welch statistic, then the Holm-adjusted TOST of what the cap left undecided);
scores are drawn normal.

Usage: python bench/sequential.py [--runs 200000] [--seed 0]. Prints the table and writes
bench/sequential.csv (design, fwer, combined_10, power_10 with upper 95 % bounds of the error
rates, and the design's numbers)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from dtpe import params
from dtpe.analysis import sequential, verdicts

ROOT = Path(__file__).resolve().parents[1]
GAP = 10.0


def seed_sd(run: Path) -> float:
    """The pooled within-variant SD of a run's per-seed endpoint scores."""
    scores = pd.read_csv(run / "results" / "stats" / "scores.csv")
    groups = scores.groupby(["variant", "endpoint"]).score_pct
    return float(
        np.sqrt((groups.var(ddof=1) * (groups.size() - 1)).sum() / (groups.size() - 1).sum())
    )


def rates(p, sd: float, runs: int, seed: int) -> dict:
    """The design's error rates and power over `runs` simulated runs at seed SD `sd`."""
    rng = np.random.default_rng(seed)
    arms = sequential.arms(p)
    shape = (runs, len(arms), len(p.study.seeds))
    null = verdicts.simulate(p, rng.normal(0.0, sd, shape))
    false = int(np.isin(null, (1, -1)).any(1).sum())
    hypotheses = p.verdict.declared()
    ahead = np.array([GAP * (v == hypotheses[0]["a"]) for v in arms])
    gap = verdicts.simulate(p, ahead[:, None] + rng.normal(0.0, sd, shape))
    index = {v: i for i, v in enumerate(arms)}
    truth = np.array([ahead[index[h["a"]]] - ahead[index[h["b"]]] for h in hypotheses])
    wrong = np.where(
        truth == 0, np.isin(gap, (1, -1)), (gap == verdicts.EQUIVALENT) | (gap == -np.sign(truth))
    )
    combined = int(wrong.any(1).sum())
    return {
        "fwer": false / runs,
        "fwer_ci_high": sps.binomtest(false, runs).proportion_ci(0.95).high,
        "combined_10": combined / runs,
        "combined_10_ci_high": sps.binomtest(combined, runs).proportion_ci(0.95).high,
        "power_10": float((gap[:, 0] == 1).mean()),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200_000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rows = []
    for path in sorted(ROOT.glob("params-*.yaml")):
        p = params.load(path)
        run = ROOT / "runs" / path.stem.removeprefix("params-")
        if not p.verdict.sequential or not (run / "results" / "stats" / "scores.csv").is_file():
            continue
        sd, seq = seed_sd(run), p.verdict.sequential
        for split in (False, True):
            p = dataclasses.replace(p, verdict=dataclasses.replace(p.verdict, split_alpha=split))
            rows.append(
                {
                    "design": run.name,
                    "split_alpha": split,
                    "hypotheses": len(p.verdict.declared()),
                    "interims": seq["interims"],
                    "seeds_per_interim": seq["seeds_per_interim"],
                    "spending": seq["spending"],
                    "alpha": p.stats.alpha,
                    "seed_sd_pct": round(sd, 2),
                    "runs": args.runs,
                    **rates(p, sd, args.runs, args.seed),
                }
            )
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    table.to_csv(ROOT / "bench" / "sequential.csv", index=False, float_format="%.4f")


if __name__ == "__main__":
    main()
