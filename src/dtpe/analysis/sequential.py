"""Seeds added in interims: a group-sequential test of each declared hypothesis, replayed from
the per-seed scores a run has so far (analysis/group_sequential.py).

A sequential run lists the cap's seeds in study.seeds; interim k trains seeds k*n .. (k+1)*n - 1
(n = verdict.sequential.seeds_per_interim) of every variant that still takes part in an
undecided hypothesis. Nothing is kept between interims but the per-model evaluation CSVs: each
call replays every finished interim, and the interim that is not finished yet is the one to run
(`wanted`).

Each hypothesis is one two-sided test at K = verdict.sequential.interims equally spaced looks
(against a fixed arm too, verdict.fixed: a baseline not retrained, all of its seeds in from the
first look; `fractions` says why):
Welch's statistic on the seeds so far against the boundaries that the declared spending function
gives (Lan-DeMets, verdict.sequential.spending) at alpha / m, m the declared hypotheses
(Bonferroni), so the family-wise error stays at alpha across looks and hypotheses (alpha: what
the rejections spend, half the run's where verdict.split_alpha gives the other half to the
equivalence tests). The
boundaries are a function of the design alone and the statistic of the scores alone: the same
scores give the same decisions on any machine, with no random draw to hang on. A hypothesis
whose |z| crosses its look's boundary is decided with the sign of the difference and stops.

The unit of replication is the seed: a model's endpoint score is its success over the suite's
layouts, averaged over the endpoint's grid sizes, at the context the hypothesis names (the
training context's grid sweep unless it names another: the T-Maze's whole-episode context), less
the same average over its `minus` grid sizes where it names some (a reach endpoint: what a seed
keeps far out of what it has at the trained lengths).

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
from dtpe.params import fixed_arms
from dtpe.steps import episode_csv

CONTINUE, NOT_REJECTED = "continue", "not rejected"
REJECTED = ("a > b", "a < b")


def endpoint_scores(episodes: pd.DataFrame, hypotheses: list[dict], train_context: int):
    """Per model (variant, seed) and endpoint, the endpoint's score % (module docstring): each
    grid's mean over its layouts, the mean over the grids, less that over the minus grids.
    `episodes` are the evaluation's episodes (variant, seed, grid_size, context, success,
    applicable): the grid sweep's, and the context sweep's where an endpoint names another
    context, its rows played with an inference-time scaling left out."""
    runnable = episodes.loc[episodes.applicable.astype(bool)]
    if "rope_scaling" in runnable:
        runnable = runnable.loc[runnable.rope_scaling.fillna("none") == "none"]
    per_grid = (
        runnable.assign(success_pct=100 * runnable.success)
        .groupby(["variant", "seed", "context", "grid_size"], observed=True)
        .success_pct.mean()
        .reset_index()
    )

    def mean_over(grids, context) -> pd.Series:
        chosen = per_grid[per_grid.grid_size.isin(grids) & (per_grid.context == context)]
        counted = chosen.groupby(["variant", "seed"], observed=True).success_pct.agg(
            ["mean", "size"]
        )
        return counted.loc[counted["size"] == len(grids), "mean"]

    rows, seen = [], set()
    for h in hypotheses:
        key = names.endpoint_key(h)
        if key in seen:
            continue
        seen.add(key)
        context = h.get("context") or train_context
        score = mean_over(h["grids"], context)
        if h.get("minus"):
            score = (score - mean_over(h["minus"], context)).dropna()
        rows.append(score.rename("score_pct").reset_index().assign(endpoint=key))
    frame = pd.concat(rows, ignore_index=True)
    return frame.assign(variant=frame.variant.astype(str))


EPISODE_COLUMNS = ["variant", "seed", "grid_size", "context", "success", "applicable"]
"""what an endpoint reads of an episode"""
LOOK_COLUMNS = ["a", "b", "endpoint", "decision", "interim", "seeds_a", "seeds_b", "z", "boundary"]


@dataclass(frozen=True)
class Replay:
    decisions: pd.DataFrame
    """one row per hypothesis: a, b, endpoint, decision (a > b, a < b, not rejected at the cap,
    or continue), interim (1-based) at which it was decided or last tested, seeds of each side,
    and z, its statistic there"""
    interims: pd.DataFrame
    """one row per interim run: its number, the variants it trained and its seeds"""
    looks: pd.DataFrame
    """one row per hypothesis and look it was tested at: a, b, endpoint, interim, seeds of each
    side, z and the |z| that look's boundary asks"""
    next_interim: int | None
    """the interim to run next (1-based), None when the run is finished"""
    finished: list[tuple[str, int]]
    """(variant, seed) of every model of the finished interims: what the statistics read"""
    wanted: list[tuple[str, int]]
    """finished, and the models of the next interim: what the workflow builds"""
    fixed: list[tuple[str, int]] = ()
    """(variant, seed) of the fixed arms' models, never trained here (a submission imports their
    results)"""
    read: list[tuple[str, int]] = ()
    """finished and fixed, in study order: every model the statistics read"""

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
            held = set(self.fixed)
            waiting = [m for m in self.wanted if m in held]
            head = (
                f"sequential run: interim {self.next_interim} trains {new} models "
                f"({row.variants} x seeds {row.seeds}"
                + (f", and the fixed arms' {len(waiting)} first" if waiting else "")
                + ")"
            )
        return "\n".join([head, *lines])


def fixed_models(params) -> list[tuple[str, int]]:
    """(variant, seed) of the fixed arms' models, each once (`rope+yarn` is rope's models)."""
    seeds = list(params.study.seeds)
    held = fixed_arms(params.verdict)
    return list(
        dict.fromkeys((names.unscaled(arm), s) for arm, n in held.items() for s in seeds[:n])
    )


def fractions(params) -> tuple[float, ...]:
    """The information fraction at each look: k / K, with a fixed arm too. Against a
    fixed arm of m seeds the information is I_k = 1 / (s_a^2 / n_k + s_b^2 / m), which grows
    slower than k / K by how much the fixed arm's SD s_b is of the new arm's s_a, unknown before
    the looks; fractions for s_a = s_b are exact only there, and 40,000 simulated null runs
    (tests/test_verdict.py, docs/protocol.md) put the family's error at 6.1 % where s_b is a
    quarter or half of s_a. k / K, the fractions of s_b = 0, are conservative where s_b is
    larger and stay within 5.4 % where it is smaller: they are kept."""
    return group_sequential.equally_spaced(params.verdict.sequential["interims"])


def hypothesis_alpha(params) -> float:
    """The two-sided alpha one declared hypothesis's rejection is tested at: alpha / m, alpha
    what the family's rejections spend (verdict.claim_alpha), m its hypotheses. A sequential
    run's looks spend it (bounds); a fixed design's Holm never tests below it (Bonferroni)."""
    return params.verdict.claim_alpha(params.stats.alpha) / len(params.verdict.declared())


def bounds(params) -> tuple[float, ...]:
    """The |z| each look of a sequential run must reach: its spending function at
    hypothesis_alpha at its fractions."""
    seq = params.verdict.sequential
    return group_sequential.boundaries(fractions(params), hypothesis_alpha(params), seq["spending"])


def side_seeds(params, variant: str, look: int) -> list:
    """The seeds of `variant` at `look` (0-based): a fixed arm's all along, else those of the
    interims so far."""
    seeds, n = list(params.study.seeds), params.verdict.sequential["seeds_per_interim"]
    held = fixed_arms(params.verdict)
    return seeds[: held[variant]] if variant in held else seeds[: (look + 1) * n]


def per_seed(scores: pd.DataFrame, variant: str, endpoint: str, seeds: list) -> np.ndarray:
    """A variant's endpoint scores at `seeds`, in that order, where it has them."""
    mine = scores[(scores.variant == variant) & (scores.endpoint == endpoint)]
    by_seed = dict(zip(mine.seed, mine.score_pct))
    return np.array([by_seed[s] for s in seeds if s in by_seed], float)


def replay(params, scores: pd.DataFrame, dropped: frozenset = frozenset()) -> Replay:
    """Replays the group-sequential test over the finished interims. `scores` holds the per-seed
    endpoint scores (endpoint_scores) of the models trained so far, a fixed arm's all of them;
    `dropped` names (variant, seed) models counted as finished whose scores are left out (the
    fragility's drops)."""
    seq = params.verdict.sequential
    n, interims = seq["seeds_per_interim"], seq["interims"]
    seeds = list(params.study.seeds)
    hypotheses = params.verdict.declared()
    critical = bounds(params)
    held = fixed_arms(params.verdict)
    rows = [
        {"decision": CONTINUE, "interim": 0, "seeds_a": 0, "seeds_b": 0, "z": np.nan}
        for _ in hypotheses
    ]
    trained: dict[int, set[str]] = {}
    looks = []
    next_interim = None
    have = set(zip(scores.variant, scores.seed)) | dropped
    # a fixed arm is all in before the first look: until then (a submission that retrains its
    # baseline) its models are wanted with the first look's
    fixed_in = all((v, s) in have for v in held for s in seeds[: held[v]])
    for k in range(interims):
        open_ = [i for i, r in enumerate(rows) if r["decision"] == CONTINUE]
        if not open_:
            break
        live = {hypotheses[i][side] for i in open_ for side in "ab"} - set(held)
        block = seeds[k * n : (k + 1) * n]
        trained[k + 1] = live
        if not fixed_in or not all((v, s) in have for v in live for s in block):
            next_interim = k + 1
            break
        for i in open_:
            h = hypotheses[i]
            endpoint = names.endpoint_key(h)
            a, b = (
                per_seed(scores, h[side], endpoint, side_seeds(params, h[side], k)) for side in "ab"
            )
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
            looks.append(
                {
                    "a": h["a"],
                    "b": h["b"],
                    "endpoint": endpoint,
                    **rows[i],
                    "boundary": critical[k],
                }
            )
    decisions = pd.DataFrame(
        [
            {"a": h["a"], "b": h["b"], "endpoint": names.endpoint_key(h), **row}
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

    def ordered(chosen) -> list[tuple[str, int]]:
        return sorted(set(chosen), key=lambda m: (order[m[0]], seeds.index(m[1])))

    def models(interims) -> list[tuple[str, int]]:
        return ordered(
            (v, s) for k in interims for v in trained[k] for s in seeds[(k - 1) * n : k * n]
        )

    held = fixed_models(params)

    return Replay(
        decisions=decisions,
        interims=table,
        looks=pd.DataFrame(looks, columns=LOOK_COLUMNS),
        next_interim=next_interim,
        finished=models(done),
        wanted=models(trained) + ([] if fixed_in else held),
        fixed=held,
        read=ordered([*models(done), *held]),
    )


def plan(params, eval_folder) -> Replay:
    """The replay of a sequential run from the evaluation's per-model CSVs in `eval_folder`
    (results/eval): models not evaluated yet are simply absent."""
    hypotheses = params.verdict.declared()
    rows = episodes(
        params,
        eval_folder,
        whole=any(h.get("context") for h in hypotheses),
        scaled=any("+" in h[side] for h in hypotheses for side in "ab"),
    )
    return replay(params, endpoint_scores(rows, hypotheses, params.model.context))


def episodes(params, eval_folder, whole: bool, scaled: bool) -> pd.DataFrame:
    """The episodes an endpoint reads (EPISODE_COLUMNS) of the run's models that have them: the
    grid sweep's, with `whole` the context sweep's, and with `scaled` RoPE's scalings from the
    position step, each its own variant (`rope+yarn`)."""

    def found(sweep: str) -> list[Path]:
        return [
            path
            for v in params.study.variants
            for s in params.study.seeds
            if (path := Path(eval_folder) / sweep / f"{names.model_name(v, s)}.csv").is_file()
        ]

    world, frames = params.env.world, []
    paths = [p for sweep in ["grid"] + ["context"] * whole for p in found(sweep)]
    if paths:
        frames.append(episode_csv.read(paths, world, EPISODE_COLUMNS + ["rope_scaling"]))
    if scaled and (altered := found("position")):
        rows = episode_csv.read(altered, world, EPISODE_COLUMNS + ["altered"])
        rows = rows[~rows.altered.str.endswith(" off")]
        frames.append(labelled(rows.rename(columns={"altered": "rope_scaling"})))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=EPISODE_COLUMNS)


def labelled(episodes: pd.DataFrame) -> pd.DataFrame:
    """RoPE played with an inference-time scaling is its own entry: `rope+yarn`."""
    if "rope_scaling" not in episodes:
        return episodes
    scaled = episodes.rope_scaling.fillna("none") != "none"
    label = episodes.variant.where(~scaled, episodes.variant + "+" + episodes.rope_scaling)
    return episodes.assign(variant=label).drop(columns="rope_scaling")


def arms(params) -> list[str]:
    """What a design's hypotheses compare, in order: study.variants, then the scaled variants
    they name (`rope+yarn`)."""
    variants = list(params.study.variants)
    named = [h[side] for h in params.verdict.declared() for side in "ab"]
    return variants + sorted(set(named) - set(variants))


def simulate(params, draws: np.ndarray) -> np.ndarray:
    """The design's decisions (runs, hypotheses) on simulated per-seed scores `draws` (runs,
    arms(params), study.seeds in order; a fixed arm's first seeds count): +1 a > b, -1 a < b, 0
    not rejected by the cap. Each hypothesis is decided at the first look whose |z| reaches its
    boundary, as replay decides it, so their error rates are the design's."""
    interims = params.verdict.sequential["interims"]
    variants = arms(params)
    hypotheses = params.verdict.declared()
    out = np.zeros((len(draws), len(hypotheses)), int)
    for i, h in enumerate(hypotheses):
        a, b = (draws[:, variants.index(h[side])] for side in "ab")  # (runs, seeds)
        looks = [
            group_sequential.welch_z(
                a[:, : len(side_seeds(params, h["a"], k))],
                b[:, : len(side_seeds(params, h["b"], k))],
            )[0]
            for k in range(interims)
        ]
        z = np.stack(looks, axis=1)  # (runs, looks)
        crossed = np.abs(z) >= np.array(bounds(params))
        first, hit = crossed.argmax(1), crossed.any(1)
        out[hit, i] = np.sign(z[hit, first[hit]]).astype(int)
    return out
