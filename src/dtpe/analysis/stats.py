"""Statistics over seeds and variants (docs/protocol.md, Statistics): every number the
tables, figures and report show is computed here, once, and written as tidy CSVs (plus
metrics.json, the headline numbers for `dvc metrics show`, and methods.json, the methods in
words for captions).

The unit of replication is the training seed. Every model of a grid size plays the same
evaluation layouts, so a variant's success is a (seeds x layouts) matrix of 0/1 outcomes and
both are sources of variation: the intervals come from a two-level bootstrap that resamples the
seeds of each variant independently and the shared layouts jointly (scipy.stats.bootstrap over
index samples). The p-values come from an exact permutation test over seed labels
(scipy.stats.permutation_test on per-seed success), Holm-adjusted over the primary family: every
pair of variants at every grid size at the training context. With few seeds the permutation
test cannot go low (5 vs 5: p >= 2/252), so the intervals carry the verdict and p_min is written
beside every p. Each interval and sampled test draws from its own generator, seeded by stats.seed
and the cell it belongs to (cell_rng), so adding a variant or a context moves no other cell's
interval or p (the Holm-adjusted p still spans the family). Success is in percent of episodes;
a failed episode counts its steps up to the cap; episodes a variant cannot run (applicable
False) stay NaN, never failures.

Outputs in out_dir: training.csv, training_curves.csv, success_by_grid.csv, steps_by_grid.csv,
context.csv, comparisons.csv, ranking.csv, power.csv, iqm.csv and profile.csv (rliable's
aggregates, aggregates.py), decisions.csv (the declared hypotheses, verdicts.py; empty where none
are declared), scores.csv (each model's per-seed endpoint scores, where hypotheses are declared),
interims.csv (a sequential run's interims), reach.csv and effective_context.csv (success at
contexts shorter than the training one, how those episodes ended, and how far back each
variant looks, analysis/reach.py; empty in a run without the reach step), seen.csv (success on
training layouts beside held-out ones; empty in a run without the seen step), horizon.csv (each
variant's success horizon per context) and milestone.csv (the attention on the world's milestone
against the suite size; empty where the run measures none: analysis/horizon.py),
position_use.csv and position_use_models.csv (success with an encoding switched off beside the
model's own: analysis/position_use.py; empty in a run without it), design.json
(could the design reject: design.py), metrics.json, methods.json, and attention_maps.json (each
variant's attention averaged over its seeds, for Figure 4).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

from dtpe import names
from dtpe.analysis import (
    aggregates,
    design,
    horizon,
    methods,
    position_use,
    reach,
    sequential,
    shared_layouts,
    verdicts,
)
from dtpe.analysis.inference import (
    cell_rng,
    mean_interval,
    paired_gap_interval,
)
from dtpe.analysis.pairwise import compare_all, outcomes, power, ranking
from dtpe.steps import episode_csv
from dtpe.world import catalog as worlds

STEPS_NOTE = "failed episodes count their steps up to the cap"
NO_SCALING = "none"


def run(
    params,
    test_csvs: list[Path],
    grid_csvs: list[Path],
    context_csvs: list[Path],
    metrics_csvs: list[Path],
    attention_jsons: list[Path],
    out_dir: Path,
    reach_csvs: list[Path] = (),
    seen_csvs: list[Path] = (),
    preregistered=None,
    shared: pd.DataFrame | None = None,
    position_csvs: list[Path] = (),
) -> None:
    """Every output in out_dir (module docstring); `reach_csvs`: the reach step's CSVs, none
    in a run that predates it; `seen_csvs`: the seen step's, of the models that have one;
    `preregistered`: a confirmatory run's preregistration (dtpe.preregistration.verify), which
    its decisions carry; `shared`: the layouts it shares with the runs of verdict.shared_with
    (analysis/shared_layouts.against); `position_csvs`: the position step's, none in a run that
    predates it (its scalings join the context sweep as variants, `rope+yarn`)."""
    sp, variants = params.stats, list(params.study.variants)
    world = params.env.world
    failure_words = worlds.get(world).ends.failure_words
    maps = attention_maps(attention_jsons, variants)  # a missing file fails before the bootstrap
    grid = episode_csv.read(grid_csvs, world)
    train_context = int(grid.context.iloc[0])
    # The context sweep plays the other contexts; the training context's rows are the grid sweep's.
    altered = episode_csv.read(position_csvs, world) if position_csvs else None
    played = episode_csv.read(context_csvs, world)
    own = played[played.rope_scaling.fillna(NO_SCALING) == NO_SCALING]
    if altered is not None:
        scalings = altered[~altered.altered.str.endswith(" off")]
        played = pd.concat([played, scalings.rename(columns={"altered": "rope_scaling"})])
    context = pd.concat([grid, sequential.labelled(played)], ignore_index=True)
    labels = variants + sorted(set(context.variant) - set(variants))
    grid, context = ordered(grid, variants), ordered(context, labels)
    declared = params.verdict.declared()
    comparisons = compare_all(
        context,
        [sp.reference] + [e for e in variants if e != sp.reference],
        train_context,
        sp,
        all_pairs=not declared,
    )
    success = success_by_grid(grid, sp)
    epochs = ordered(read_metrics(metrics_csvs), variants)
    scores = sequential.endpoint_scores(context, declared, train_context) if declared else None
    replayed = sequential.replay(params, scores) if params.verdict.sequential else None
    beyond = [n for n in params.data.suite_sizes if n > params.data.train_size]
    iqm_table, profile_table = aggregates.summary(
        per_seed_success(grid[grid.applicable], ["grid_size", "variant"]),
        beyond,
        sp,
        lambda kind, variant: cell_rng(sp.seed, kind, variant),
    )
    test = ordered(episode_csv.read(test_csvs, world), variants)
    results = {
        "training": training(epochs, test),
        "training_curves": training_curves(epochs),
        "success_by_grid": success,
        "steps_by_grid": steps_by_grid(grid, failure_words),
        "context": context_success(context, train_context),
        "whole_episode": whole_episode(context, params.evaluate, sp),
        "comparisons": comparisons,
        "ranking": ranking(success, comparisons, train_context),
        "power": power(grid, success, sp),
        "decisions": verdicts.decide(params, scores, replayed, preregistered),
        "iqm": iqm_table,
        "profile": profile_table,
    }
    cap = evaluation_caps(params, context).__getitem__
    results["endings"] = endings(context, cap).assign(failure_words=failure_words)
    ladder = ordered(episode_csv.read(reach_csvs, world), variants) if reach_csvs else None
    results["reach"] = reach_success(ladder, success, grid, sp, train_context, cap)
    results["effective_context"] = reach.effective_context(results["reach"], train_context)
    seen = ordered(episode_csv.read(seen_csvs, world), variants) if seen_csvs else None
    results["seen"] = seen_success(seen, test, sp)
    results["horizon"] = horizon.horizons(
        per_seed_success(context, ["grid_size", "context", "variant"]), sp.horizon_pct
    )
    ablated = altered[altered.altered.str.endswith(" off")] if altered is not None else None
    models_off = position_use.per_model(ablated, own, sp.alpha)
    results["position_use_models"] = ordered(models_off, variants)
    results["position_use"] = ordered(position_use.per_variant(models_off, sp.alpha), variants)
    results["milestone"] = ordered(horizon.milestone(attention_jsons), variants).sort_values(
        ["variant", "grid_size"]
    )
    results["shared_layouts"] = (
        shared if shared is not None else pd.DataFrame(columns=shared_layouts.COLUMNS)
    )
    if scores is not None:
        results["scores"] = scores
    if replayed is not None:
        results["interims"] = replayed.interims
        results["looks"] = replayed.looks
    out_dir = Path(out_dir)
    for name, frame in results.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    (out_dir / "metrics.json").write_text(json.dumps(metrics(results), indent=2) + "\n")
    (out_dir / "methods.json").write_text(
        json.dumps(methods.sentences(sp, params.verdict), indent=2) + "\n"
    )
    (out_dir / "design.json").write_text(
        json.dumps(design.check(params).as_dict(), indent=2) + "\n"
    )
    (out_dir / "attention_maps.json").write_text(json.dumps(maps) + "\n")
    numerics_records(metrics_csvs).to_csv(out_dir / "numerics.csv", index=False)


# Inputs -----------------------------------------------------------------------------------


def attention_maps(paths, variants: list[str]) -> dict[str, dict]:
    """Per variant (in study order), the attention stage's distance decay and final-layer
    heatmap averaged over its seeds (Figure 4)."""
    runs = {}
    for path in paths:
        result = json.loads(Path(path).read_text())
        runs.setdefault(result["variant"], []).append(result)
    return {
        variant: {
            "distance_decay": np.mean([r["distance_decay"] for r in runs[variant]], 0).tolist(),
            "heatmap": np.mean([r["heatmap"] for r in runs[variant]], 0).tolist(),
            "seeds": len(runs[variant]),
        }
        for variant in variants
        if variant in runs
    }


def read_metrics(paths) -> pd.DataFrame:
    """Per-epoch training metrics of every run; variant and seed come from the run's folder
    name (dtpe.names), since metrics.csv does not repeat them."""
    frames = []
    for path in map(Path, paths):
        try:
            variant, seed = names.parse(path.parent.name)
        except ValueError as e:
            raise ValueError(f"{path}: its folder: {e}") from None
        frames.append(pd.read_csv(path).assign(variant=variant, seed=seed))
    return pd.concat(frames, ignore_index=True)


def numerics_records(metrics_csvs) -> pd.DataFrame:
    """Per model, the numerics its training ran under (numerics.json beside its metrics.csv):
    the mode, where its bytes reproduce, the kernels' code paths and the CPU."""
    rows = []
    for path in (Path(p).parent / "numerics.json" for p in metrics_csvs):
        if not path.is_file():
            raise ValueError(f"{path} is missing: the model was trained by an older dtpe")
        variant, seed = names.parse(path.parent.name)
        rows.append({"variant": variant, "seed": seed, **json.loads(path.read_text())})
    return pd.DataFrame(rows)


def ordered(frame: pd.DataFrame, variants: list[str]) -> pd.DataFrame:
    """Variants in params order, so every output lists them as the study does."""
    unknown = set(frame.variant) - set(variants)
    if unknown:
        raise ValueError(f"results of variants not in study.variants: {sorted(unknown)}")
    return frame.assign(variant=pd.Categorical(frame.variant, categories=variants))


# Summaries --------------------------------------------------------------------------------


def over_seeds(per_seed: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame:
    """`{column}_mean`, `{column}_std` over seeds per group of `keys`, and n_seeds."""
    groups = per_seed.groupby(keys, observed=True)
    summary = groups[columns].agg(["mean", "std"])
    summary.columns = [f"{column}_{stat}" for column, stat in summary.columns]
    return summary.assign(n_seeds=groups.size()).reset_index()


def per_seed_success(episodes: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Success % of each seed per group of `keys`; NaN where the variant could not run."""
    with_pct = episodes.assign(success_pct=100 * episodes.success)
    return with_pct.groupby(keys + ["seed"], observed=True).success_pct.mean().reset_index()


def training(metrics: pd.DataFrame, test: pd.DataFrame) -> pd.DataFrame:
    """Final-epoch losses, validation success and overfitting gap per variant, the final
    weights' success on the held-out 8x8 test split (also its worst seed), and training time."""
    final = metrics.sort_values("epoch").groupby(["variant", "seed"], observed=True).tail(1)
    seconds = (
        metrics.groupby(["variant", "seed"], observed=True).seconds.sum().rename("train_seconds")
    )
    test_pct = per_seed_success(test, ["variant"]).rename(
        columns={"success_pct": "test_success_pct"}
    )
    per_seed = (
        final.assign(val_success_pct=100 * final.val_success)
        .join(seconds, on=["variant", "seed"])
        .merge(test_pct, on=["variant", "seed"], how="left")
    )
    summary = over_seeds(
        per_seed,
        ["variant"],
        [
            "epoch",
            "train_loss",
            "val_loss",
            "val_success_pct",
            "overfit_gap",
            "test_success_pct",
            "train_seconds",
        ],
    )
    worst = (
        per_seed.groupby("variant", observed=True)
        .test_success_pct.min()
        .rename("test_success_pct_min")
    )
    return summary.join(worst, on="variant")


SEEN_COLUMNS = [
    "variant",
    "n_seeds",
    "seeds",
    "paired_seeds",
    "seen_layouts",
    "held_out_layouts",
    *(
        f"{which}_{stat}"
        for which in ("seen", "held_out", "gap")
        for stat in ("pct_mean", "ci_low_pct", "ci_high_pct")
    ),
]


def seen_success(seen: pd.DataFrame | None, test: pd.DataFrame, sp) -> pd.DataFrame:
    """Per variant, success at the training size on layouts its models trained on (the seen
    step's, over every model that has it) beside the held-out test split and the gap seen - held
    out (over the models that played both: `paired_seeds`), each mean with its two-level
    bootstrap interval, the gap's resampling each seed's two sets together (the same model
    played both). Empty where no model has the seen step's CSV."""
    rows = []
    for variant, played in seen.groupby("variant", observed=True) if seen is not None else []:
        a = outcomes(played)
        held_out = test[(test.variant == variant) & test.seed.isin(played.seed)]
        paired = sorted(held_out.seed.unique())
        rng = cell_rng(sp.seed, "seen", variant)
        row = {
            "variant": variant,
            "n_seeds": len(a),
            "seeds": " ".join(map(str, sorted(played.seed.unique()))),
            "paired_seeds": " ".join(map(str, paired)),
            "seen_layouts": a.shape[1],
            "seen_pct_mean": 100 * a.mean(),
            **dict(zip(("seen_ci_low_pct", "seen_ci_high_pct"), mean_interval(a, sp, rng))),
        }
        if paired:
            a, b = outcomes(played[played.seed.isin(paired)]), outcomes(held_out)
            row |= {
                "held_out_layouts": b.shape[1],
                "held_out_pct_mean": 100 * b.mean(),
                **dict(
                    zip(("held_out_ci_low_pct", "held_out_ci_high_pct"), mean_interval(b, sp, rng))
                ),
                "gap_pct_mean": 100 * (a.mean() - b.mean()),
                **dict(
                    zip(("gap_ci_low_pct", "gap_ci_high_pct"), paired_gap_interval(a, b, sp, rng))
                ),
            }
        rows.append(row)
    return pd.DataFrame(rows, columns=SEEN_COLUMNS)


def training_curves(metrics: pd.DataFrame) -> pd.DataFrame:
    """Per variant and epoch, each training metric's mean and std over seeds."""
    per_seed = metrics.assign(val_success_pct=100 * metrics.val_success)
    return over_seeds(
        per_seed,
        ["variant", "epoch"],
        ["train_loss", "val_loss", "val_success_pct", "overfit_gap"],
    )


def success_by_grid(grid: pd.DataFrame, sp, cell: tuple = ("success",)) -> pd.DataFrame:
    """Mean ± std over seeds, the two-level bootstrap interval of the mean and the IQM of
    per-seed success, per grid size and variant; each interval drawn by the generator of `cell`
    and its grid size and variant."""
    grid = grid[grid.applicable]
    summary = over_seeds(
        per_seed_success(grid, ["grid_size", "variant"]),
        ["grid_size", "variant"],
        ["success_pct"],
    )
    rows = []
    for row in summary.itertuples():
        done = outcomes(grid[(grid.grid_size == row.grid_size) & (grid.variant == row.variant)])
        low, high = mean_interval(done, sp, cell_rng(sp.seed, *cell, row.grid_size, row.variant))
        rows.append(
            {
                "ci_low_pct": low,
                "ci_high_pct": high,
                "iqm_pct": float(sps.trim_mean(100 * done.mean(1), 0.25)),
                "n_layouts": done.shape[1],
            }
        )
    return pd.concat([summary, pd.DataFrame(rows, index=summary.index)], axis=1)


WHOLE_EPISODE_COLUMNS = [
    "grid_size",
    "variant",
    "context",
    "success_pct_mean",
    "success_pct_std",
    "n_seeds",
    "ci_low_pct",
    "ci_high_pct",
    "iqm_pct",
    "n_layouts",
]


def whole_episode(context: pd.DataFrame, evaluate, sp) -> pd.DataFrame:
    """success_by_grid's numbers per grid size and variant (RoPE's scalings among them) at the
    whole-episode context, the longest of evaluate.contexts, each interval its own generator:
    how far a run's models reach. Empty in a run without a whole-episode sweep."""
    if not evaluate.whole_episode:
        return pd.DataFrame(columns=WHOLE_EPISODE_COLUMNS)
    whole = max(evaluate.contexts)
    played = context[context.context == whole]
    success = success_by_grid(played, sp, ("whole", whole)).assign(context=whole)
    return success[WHOLE_EPISODE_COLUMNS]


REACH_COLUMNS = [*WHOLE_EPISODE_COLUMNS, "ended_pct_mean", "success_of_ended_pct_mean"]


def reach_success(
    ladder: pd.DataFrame | None,
    success: pd.DataFrame,
    grid: pd.DataFrame,
    sp,
    train_context: int,
    cap,
) -> pd.DataFrame:
    """success_by_grid's numbers per grid size, variant and context on the reach step's suites:
    at each context of its ladder from its episodes (each context its own generators), at the
    training context success_by_grid's rows as they are; and how the episodes ended (`endings`,
    `cap(size)` the step cap), at the training context from the grid sweep's episodes `grid`.
    Empty without a ladder (`None`)."""
    if ladder is None:
        return pd.DataFrame(columns=REACH_COLUMNS)
    rungs = [
        success_by_grid(episodes, sp, ("reach", context)).assign(context=context)
        for context, episodes in ladder.groupby("context", sort=True)
    ]
    sizes = set(ladder.grid_size)
    trained = success[success.grid_size.isin(sizes)]
    frame = pd.concat([*rungs, trained.assign(context=train_context)], ignore_index=True)
    played = pd.concat([ladder, grid[grid.grid_size.isin(sizes)]], ignore_index=True)
    frame = frame.merge(endings(played, cap), on=["grid_size", "variant", "context"], how="left")
    return frame.sort_values(["grid_size", "variant", "context"], kind="stable")[REACH_COLUMNS]


def evaluation_caps(params, played: pd.DataFrame) -> dict[int, int]:
    """{suite size: the step cap its episodes played to}, from the sweeps' rows (their expert's
    steps: params.evaluation_cap, as the evaluation computed it; the context sweep's too, which
    plays the suites a grid sweep of some suites left out)."""
    longest = played.groupby("grid_size").optimal_steps.max()
    return {int(n): params.evaluation_cap(int(n), int(steps)) for n, steps in longest.items()}


def endings(episodes: pd.DataFrame, cap) -> pd.DataFrame:
    """Per grid size, variant and context, means over seeds of the % of episodes that ended
    before the step cap `cap(size)` (their `ending`: in success, or in the world's failure:
    Memory's wrong object) and the success % of those, and the cap: where a short window loses
    the cue, a model that still reaches an object picks one at chance (50 %), and one that does
    not wanders to the cap. A seed none of whose episodes ended has no success % of them (left
    out of that mean)."""
    played = episodes[episodes.applicable.astype(bool)]
    ended = played.ending != "cap"
    per_seed = (
        played.assign(ended=100.0 * ended, won=np.where(ended, 100.0 * played.success, np.nan))
        .groupby(["grid_size", "variant", "context", "seed"], observed=True)[["ended", "won"]]
        .mean()
        .groupby(["grid_size", "variant", "context"], observed=True)
        .mean()
    )
    out = per_seed.rename(
        columns={"ended": "ended_pct_mean", "won": "success_of_ended_pct_mean"}
    ).reset_index()
    return out.assign(cap=out.grid_size.map(lambda size: cap(int(size))))


def steps_by_grid(grid: pd.DataFrame, failure_words: str | None = None) -> pd.DataFrame:
    """Mean steps per episode, and its ratio to the mean BFS optimum, per seed then over seeds;
    the note says how a failed episode ends: at the cap, or also where the world can fail
    (`failure_words`, its Ends')."""
    per_seed = (
        grid[grid.applicable]
        .groupby(["grid_size", "variant", "seed"], observed=True)[["steps", "optimal_steps"]]
        .mean()
        .reset_index()
    )
    per_seed["ratio_to_optimal"] = per_seed.steps / per_seed.optimal_steps
    summary = over_seeds(
        per_seed, ["grid_size", "variant"], ["steps", "optimal_steps", "ratio_to_optimal"]
    )
    note = STEPS_NOTE + (f", or until they end {failure_words}" if failure_words else "")
    return summary.drop(columns="optimal_steps_std").assign(note=note)


def context_success(context: pd.DataFrame, train_context: int) -> pd.DataFrame:
    """Success averaged over grid sizes per context; NaN (never 0) where not applicable, or
    where the variant did not play every suite there (evaluate.grid_sizes)."""
    per_grid = per_seed_success(context, ["context", "variant", "grid_size"])
    every = context.grid_size.nunique()
    # skipna=False: a context that runs on some grid sizes only must not average those alone.
    per_seed = (
        per_grid.groupby(["context", "variant", "seed"], observed=True)
        .success_pct.agg(lambda s: s.mean(skipna=False) if len(s) == every else np.nan)
        .reset_index()
    )
    summary = over_seeds(per_seed, ["context", "variant"], ["success_pct"])
    applicable = context.groupby(["context", "variant"], observed=True).applicable.all()
    summary = summary.join(applicable, on=["context", "variant"])
    return summary.assign(context_multiple=summary.context / train_context)


def metrics(results: dict) -> dict:
    """The headline numbers only, flat for `dvc metrics show`: the 8x8 test split's success
    pooled over every model and its worst model, and each variant's mean success per grid size.
    Differences, intervals and p-values stay in the CSVs (a column per pair would bury these).
    Undefined values become null."""
    training = results["training"]
    flat = {
        "test_success_pooled": np.average(training.test_success_pct_mean, weights=training.n_seeds),
        "test_success_min": training.test_success_pct_min.min(),
    }
    for row in results["success_by_grid"].itertuples():
        flat[f"success_{row.variant}_N{row.grid_size}"] = row.success_pct_mean
    return {key: float(value) if np.isfinite(value) else None for key, value in flat.items()}
