"""Seeds added in interims: a group-sequential test of each declared hypothesis, replayed from
the per-seed scores a run has so far (analysis/group_sequential.py).

A sequential run lists the cap's seeds in study.seeds; interim k trains seeds k*n .. (k+1)*n - 1
(n = verdict.sequential.seeds_per_interim) of every variant that still takes part in an
undecided hypothesis. Nothing is kept between interims but the per-model evaluation CSVs: each
call replays every finished interim, and the interim that is not finished yet is the one to run
(`wanted`).

Each hypothesis is one two-sided test at K = verdict.sequential.interims equally spaced looks:
Welch's statistic on the seeds so far against the boundaries that the declared spending function
gives (Lan-DeMets, verdict.sequential.spending) at alpha / m, m the declared hypotheses
(Bonferroni), so the family-wise error stays at alpha across looks and hypotheses. The
boundaries are a function of the design alone and the statistic of the scores alone: the same
scores give the same decisions on any machine, with no random draw to hang on. A hypothesis
whose |z| crosses its look's boundary is decided with the sign of the difference and stops.

The unit of replication is the seed: a model's endpoint score is its success over the suite's
layouts, averaged over the endpoint's grid sizes.

"Not rejected" at the cap is not equivalence: a hypothesis undecided at the cap is reported as
equivalent only where it declares a margin and its equivalence test passes
(analysis/verdicts.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dtpe import names
from dtpe.analysis import group_sequential

CONTINUE, NOT_REJECTED = "continue", "not rejected"
REJECTED = ("a > b", "a < b")


def endpoint_key(grids) -> str:
    """The name of an endpoint: its grid sizes, e.g. `10+12+16`."""
    return "+".join(str(g) for g in sorted(grids))


def endpoint_scores(grid: pd.DataFrame, hypotheses: list[dict]) -> pd.DataFrame:
    """Per model (variant, seed) and endpoint, the success % over the endpoint's grids: each
    grid's mean over its layouts, then the mean over the grids. `grid` is the grid sweep's
    episodes (variant, seed, grid_size, success, applicable)."""
    runnable = grid.loc[grid.applicable.astype(bool)]
    per_grid = (
        runnable.assign(success_pct=100 * runnable.success)
        .groupby(["variant", "seed", "grid_size"], observed=True)
        .success_pct.mean()
        .reset_index()
    )
    rows = []
    for grids in {tuple(sorted(h["grids"])) for h in hypotheses}:
        chosen = per_grid[per_grid.grid_size.isin(grids)]
        counted = chosen.groupby(["variant", "seed"], observed=True).success_pct.agg(
            ["mean", "size"]
        )
        complete = counted[counted["size"] == len(grids)]
        rows.append(
            complete["mean"].rename("score_pct").reset_index().assign(endpoint=endpoint_key(grids))
        )
    frame = pd.concat(rows, ignore_index=True)
    return frame.assign(variant=frame.variant.astype(str))


@dataclass(frozen=True)
class Replay:
    decisions: pd.DataFrame
    """one row per hypothesis: a, b, endpoint, decision (a > b, a < b, not rejected at the cap,
    or continue), interim (1-based) at which it was decided or last tested, seeds of each side,
    and z, its statistic there"""
    interims: pd.DataFrame
    """one row per interim run: its number, the variants it trained and its seeds"""
    next_interim: int | None
    """the interim to run next (1-based), None when the run is finished"""
    finished: list[tuple[str, int]]
    """(variant, seed) of every model of the finished interims: what the statistics read"""
    wanted: list[tuple[str, int]]
    """finished, and the models of the next interim: what the workflow builds"""

    def summary(self) -> str:
        """What the run has decided and what it trains next, for the workflow's log."""
        lines = [
            f"  {r.a} vs {r.b} on {r.endpoint}: {r.decision} (interim {r.interim}, "
            f"{r.seeds_a} + {r.seeds_b} seeds)"
            for r in self.decisions.itertuples()
        ]
        if self.next_interim is None:
            head = f"sequential run finished: {len(self.finished)} models"
        else:
            new = len(self.wanted) - len(self.finished)
            row = self.interims[self.interims.interim == self.next_interim].iloc[0]
            head = (
                f"sequential run: interim {self.next_interim} trains {new} models "
                f"({row.variants} x seeds {row.seeds})"
            )
        return "\n".join([head, *lines])


def bounds(params) -> tuple[float, ...]:
    """The |z| each look of a sequential run must reach: its spending function at alpha / m."""
    seq = params.verdict.sequential
    alpha = params.stats.alpha / len(params.verdict.declared())
    return group_sequential.boundaries(seq["interims"], alpha, seq["spending"])


def per_seed(scores: pd.DataFrame, variant: str, endpoint: str, seeds: list) -> np.ndarray:
    """A variant's endpoint scores at `seeds`, in that order, where it has them."""
    mine = scores[(scores.variant == variant) & (scores.endpoint == endpoint)]
    by_seed = dict(zip(mine.seed, mine.score_pct))
    return np.array([by_seed[s] for s in seeds if s in by_seed], float)


def replay(params, scores: pd.DataFrame) -> Replay:
    """Replays the group-sequential test over the finished interims. `scores` holds the per-seed
    endpoint scores (endpoint_scores) of the models trained so far."""
    seq = params.verdict.sequential
    n, interims = seq["seeds_per_interim"], seq["interims"]
    seeds = list(params.study.seeds)
    hypotheses = params.verdict.declared()
    critical = bounds(params)
    rows = [
        {"decision": CONTINUE, "interim": 0, "seeds_a": 0, "seeds_b": 0, "z": np.nan}
        for _ in hypotheses
    ]
    trained: dict[int, set[str]] = {}
    next_interim = None
    have = set(zip(scores.variant, scores.seed))
    for k in range(interims):
        open_ = [i for i, r in enumerate(rows) if r["decision"] == CONTINUE]
        if not open_:
            break
        live = {hypotheses[i][side] for i in open_ for side in "ab"}
        block, so_far = seeds[k * n : (k + 1) * n], seeds[: (k + 1) * n]
        trained[k + 1] = live
        if not all((v, s) in have for v in live for s in block):
            next_interim = k + 1
            break
        for i in open_:
            h = hypotheses[i]
            endpoint = endpoint_key(h["grids"])
            a, b = (per_seed(scores, h[side], endpoint, so_far) for side in "ab")
            z, _ = group_sequential.welch_z(a, b)
            crossed = abs(z) >= critical[k]
            last = k == interims - 1
            rows[i] = {
                "decision": REJECTED[int(z < 0)] if crossed else NOT_REJECTED if last else CONTINUE,
                "interim": k + 1,
                "seeds_a": len(a),
                "seeds_b": len(b),
                "z": z,
            }
    decisions = pd.DataFrame(
        [
            {"a": h["a"], "b": h["b"], "endpoint": endpoint_key(h["grids"]), **row}
            for h, row in zip(hypotheses, rows)
        ]
    )
    done = [k for k in trained if next_interim is None or k < next_interim]
    table = pd.DataFrame(
        [
            {
                "interim": k,
                "variants": " ".join(v for v in params.study.variants if v in trained[k]),
                "seeds": " ".join(str(s) for s in seeds[(k - 1) * n : k * n]),
                "finished": k in done,
            }
            for k in sorted(trained)
        ]
    )
    order = {v: i for i, v in enumerate(params.study.variants)}

    def models(interims) -> list[tuple[str, int]]:
        chosen = {(v, s) for k in interims for v in trained[k] for s in seeds[(k - 1) * n : k * n]}
        return sorted(chosen, key=lambda m: (order[m[0]], seeds.index(m[1])))

    return Replay(
        decisions=decisions,
        interims=table,
        next_interim=next_interim,
        finished=models(done),
        wanted=models(trained),
    )


def plan(params, grid_folder) -> Replay:
    """The replay of a sequential run from the grid sweep's per-model CSVs in `grid_folder`
    (results/eval/grid): models not evaluated yet are simply absent."""
    paths = [
        path
        for v in params.study.variants
        for s in params.study.seeds
        if (path := Path(grid_folder) / f"{names.model_name(v, s)}.csv").is_file()
    ]
    columns = ["variant", "seed", "grid_size", "success", "applicable"]
    episodes = (
        pd.concat([pd.read_csv(p, usecols=columns) for p in paths], ignore_index=True)
        if paths
        else pd.DataFrame(columns=columns)
    )
    return replay(params, endpoint_scores(episodes, params.verdict.declared()))


def simulate(params, draws: np.ndarray) -> np.ndarray:
    """The design's decisions (runs, hypotheses) on simulated per-seed scores `draws` (runs,
    study.variants, study.seeds in order): +1 a > b, -1 a < b, 0 not rejected by the cap. Each
    hypothesis is decided at the first look whose |z| reaches its boundary, as replay decides
    it, so their error rates are the design's."""
    n, interims = (params.verdict.sequential[k] for k in ("seeds_per_interim", "interims"))
    variants = list(params.study.variants)
    critical = np.array(bounds(params))
    hypotheses = params.verdict.declared()
    out = np.zeros((len(draws), len(hypotheses)), int)
    for i, h in enumerate(hypotheses):
        a, b = (draws[:, variants.index(h[side])] for side in "ab")  # (runs, seeds)
        looks = [
            group_sequential.welch_z(a[:, :k], b[:, :k])[0] for k in range(n, n * interims + 1, n)
        ]
        z = np.stack(looks, axis=1)  # (runs, looks)
        crossed = np.abs(z) >= critical
        first, hit = crossed.argmax(1), crossed.any(1)
        out[hit, i] = np.sign(z[hit, first[hit]]).astype(int)
    return out
