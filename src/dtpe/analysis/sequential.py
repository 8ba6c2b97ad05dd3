"""Seeds added in interims: AdaStop's group-sequential permutation test (Mathieu et al.; the
`adastop` package) replayed from the per-seed scores a run has so far.

A sequential run lists the cap's seeds in study.seeds; interim k trains seeds k*n .. (k+1)*n - 1
(n = verdict.sequential.seeds_per_interim) of every variant that still takes part in an
undecided hypothesis. Nothing is kept between interims but the per-model evaluation CSVs: each
call replays every finished interim through a fresh comparator seeded by
verdict.sequential.seed, so the same scores give the same decisions on any machine, and the
interim that is not finished yet is the one to run (`wanted`).

Hypotheses are grouped by endpoint (the grids averaged); each group is one comparator, and the
groups share alpha equally (Bonferroni), so the family-wise error stays at alpha across them.
The unit of replication is the seed: a model's endpoint score is its success over the suite's
layouts, averaged over the endpoint's grid sizes.

AdaStop's "equal" at the last interim means "not rejected", not equivalence: a hypothesis
undecided at the cap is reported as equivalent only where it declares a margin and the interval
of its difference lies within it (analysis/verdicts.py)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from adastop import MultipleAgentsComparator

from dtpe import names

CONTINUE = "continue"
SIGN = {"larger": "a > b", "smaller": "a < b"}


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
    """one row per hypothesis: a, b, endpoint, decision (a > b, a < b, equal at the cap, or
    continue), interim (1-based) at which it was decided or last tested, seeds of each side"""
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


def replay(params, scores: pd.DataFrame) -> Replay:
    """Replays AdaStop over the finished interims of every endpoint group. `scores` holds the
    per-seed endpoint scores (endpoint_scores) of the models trained so far."""
    seq = params.verdict.sequential
    n, interims = seq["seeds_per_interim"], seq["interims"]
    seeds = list(params.study.seeds)
    hypotheses = params.verdict.declared()
    groups: dict[str, list[int]] = {}
    for i, h in enumerate(hypotheses):
        groups.setdefault(endpoint_key(h["grids"]), []).append(i)
    # adastop 0.1.3 compares |mean a - mean b| with the permutation distribution of the signed
    # difference's maximum, a one-sided quantile for a two-sided statistic: on a planted null
    # (3 comparisons, n 5, K 4) it rejected in 10.7 % of 1,000 runs at alpha 0.05. Half of
    # alpha restores a two-sided test (tests/test_verdict.py measures it).
    alpha = params.stats.alpha / len(groups) / 2

    rows: list[dict] = [{} for _ in hypotheses]
    trained: dict[int, set[str]] = {}
    next_interim = None
    for endpoint, members in groups.items():
        agents = [
            v
            for v in params.study.variants
            if any(v in (hypotheses[i]["a"], hypotheses[i]["b"]) for i in members)
        ]
        pairs = np.array(
            [(agents.index(hypotheses[i]["a"]), agents.index(hypotheses[i]["b"])) for i in members]
        )
        comparator = MultipleAgentsComparator(
            n=n, K=interims, B=seq["permutations"], comparisons=pairs, alpha=alpha, seed=seq["seed"]
        )
        mine = scores[scores.endpoint == endpoint]
        have = {v: dict(zip(g.seed, g.score_pct)) for v, g in mine.groupby("variant")}
        values = {v: np.array([]) for v in agents}
        for i in members:
            rows[i] = {"decision": CONTINUE, "interim": 0, "seeds_a": 0, "seeds_b": 0}
        for k in range(interims):
            live = {agents[j] for j in np.ravel(comparator.current_comparisons)}
            block = seeds[k * n : (k + 1) * n]
            trained.setdefault(k + 1, set()).update(live)
            if not all(s in have.get(v, {}) for v in live for s in block):
                next_interim = k + 1 if next_interim is None else min(next_interim, k + 1)
                break
            for v in live:
                values[v] = np.concatenate([values[v], [have[v][s] for s in block]])
            comparator.partial_compare(values, verbose=False)
            for i, (a, b) in zip(members, pairs):
                if rows[i]["decision"] != CONTINUE:
                    continue
                rows[i] = {
                    "decision": comparator.decisions[str(np.array([a, b]))],
                    "interim": k + 1,
                    "seeds_a": len(values[agents[a]]),
                    "seeds_b": len(values[agents[b]]),
                }
            if comparator.is_finished:
                break
    decisions = pd.DataFrame(
        [
            {"a": h["a"], "b": h["b"], "endpoint": endpoint_key(h["grids"]), **row}
            for h, row in zip(hypotheses, rows)
        ]
    )
    decisions["decision"] = decisions.decision.map(lambda d: SIGN.get(d, d))
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
