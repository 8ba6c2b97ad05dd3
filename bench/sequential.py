"""Error rates of every sequential design a committed run uses, by simulation: the family-wise
false rejection with all variants equal, and the power to find a 10-point gap, at the run's own
seed SD (pooled within variants over its per-seed endpoint scores). The simulation decides each
run as the run decides (analysis/sequential.simulate: the same boundaries, the same Welch
statistic); scores are drawn normal.

Usage: python bench/sequential.py [--runs 200000] [--seed 0]. Prints the table and writes
bench/sequential.csv (design, fwer, fwer_ci_high, power_10, with the design's numbers)."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from dtpe import params
from dtpe.analysis import sequential

ROOT = Path(__file__).resolve().parents[1]
GAP = 10.0


def seed_sd(run: Path) -> float:
    """The pooled within-variant SD of a run's per-seed endpoint scores."""
    scores = pd.read_csv(run / "results" / "stats" / "scores.csv")
    groups = scores.groupby(["variant", "endpoint"]).score_pct
    return float(
        np.sqrt((groups.var(ddof=1) * (groups.size() - 1)).sum() / (groups.size() - 1).sum())
    )


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
        sd = seed_sd(run)
        rng = np.random.default_rng(args.seed)
        shape = (args.runs, len(p.study.variants), len(p.study.seeds))
        null = sequential.simulate(p, rng.normal(0.0, sd, shape))
        false = int((null != 0).any(1).sum())
        # a 10-point gap in the first hypothesis: its a above everything else
        ahead = np.array([GAP * (v == p.verdict.declared()[0]["a"]) for v in p.study.variants])
        gap = sequential.simulate(p, ahead[:, None] + rng.normal(0.0, sd, shape))
        seq = p.verdict.sequential
        rows.append(
            {
                "design": run.name,
                "hypotheses": len(p.verdict.declared()),
                "interims": seq["interims"],
                "seeds_per_interim": seq["seeds_per_interim"],
                "spending": seq["spending"],
                "alpha": p.stats.alpha,
                "seed_sd_pct": round(sd, 2),
                "runs": args.runs,
                "fwer": false / args.runs,
                "fwer_ci_high": sps.binomtest(false, args.runs).proportion_ci(0.95).high,
                "power_10": float((gap[:, 0] == 1).mean()),
            }
        )
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    table.to_csv(ROOT / "bench" / "sequential.csv", index=False, float_format="%.4f")


if __name__ == "__main__":
    main()
