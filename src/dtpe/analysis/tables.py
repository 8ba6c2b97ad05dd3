"""The study's tables (docs/protocol.md) rendered from the statistics stage's files in
results/stats/, each written three ways: `{name}.csv` keeps the numbers (full precision, in their
own columns) so that it can be read back; `{name}.md` and `{name}.tex` show them with a caption.
Every number here is one the stats stage wrote: a table selects, orders and formats, and
computes nothing (no means, differences or tests).

How a cell reads ("N/A", "–", intervals): analysis/cells.py.

The tables and their order: analysis/outputs.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from dtpe.analysis import verdict_words
from dtpe.analysis.cells import (
    NOT_APPLICABLE,
    UNDEFINED,
    Table,
    count,
    effect,
    grid_label,
    grid_labels,
    latex,
    markdown,
    mean_std,
    number,
    p_value,
    probability,
    with_interval,
)
from dtpe.analysis.outputs import TABLE_NAMES


def write(params, stats_dir: Path, out_dir: Path) -> None:
    out_dir = Path(out_dir)
    builders = {
        "decisions": decisions,
        "training": training,
        "success_by_grid": success_by_grid,
        "iqm": iqm,
        "steps_by_grid": steps_by_grid,
        "context": context,
        "endings": endings,
        "comparisons": comparisons,
        "power": power,
        "ranking": ranking,
        "reach": reach,
        "seen": seen,
        "horizon": horizon,
        "position_use": position_use,
    }
    for name in TABLE_NAMES:
        table = builders[name](params, Path(stats_dir))
        table.numbers.to_csv(out_dir / f"{table.name}.csv", index=False)
        (out_dir / f"{table.name}.md").write_text(markdown(table))
        (out_dir / f"{table.name}.tex").write_text(latex(table))


# Inputs -----------------------------------------------------------------------------------


def read(stats_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(stats_dir / f"{name}.csv")


def methods(stats_dir: Path) -> dict:
    """The stats stage's one-sentence descriptions of its methods, and alpha, confidence and
    floor_pct."""
    return json.loads((Path(stats_dir) / "methods.json").read_text())


def at_training_context(stats_dir: Path) -> pd.DataFrame:
    """Every pair at every grid size at the training context (the context table's row of
    context multiple 1): the primary family of a run that declares none, exploratory where the
    run declares its hypotheses."""
    frame = read(stats_dir, "comparisons")
    contexts = read(stats_dir, "context")
    trained = contexts.context[contexts.context_multiple == 1].iloc[0]
    return frame[frame.context == trained].reset_index(drop=True)


def seeds(n_seeds: pd.Series) -> str:
    counts = sorted(n_seeds.unique())
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def labels(stats: pd.DataFrame) -> list[str]:
    """Variants, and labels such as rope+yarn, in the order the stats stage wrote them."""
    return list(dict.fromkeys(stats.variant))


def by_variant(
    frame: pd.DataFrame, index: str | list[str], values: list[str], variants: list[str]
) -> pd.DataFrame:
    """Wide numbers: one row per `index` (a column or several), a column `{variant}_{value}`
    per variant and value."""
    wide = frame.pivot(index=index, columns="variant", values=values)
    return pd.DataFrame({f"{e}_{v}": wide[(v, e)] for e in variants for v in values})


def confidence(methods: dict) -> str:
    return f"{100 * methods['confidence']:g} %"


# Tables -----------------------------------------------------------------------------------


def training(params, stats_dir: Path) -> Table:
    numbers = (
        read(stats_dir, "training").set_index("variant").loc[params.study.variants].reset_index()
    )
    shown = pd.DataFrame(
        {
            "Variant": numbers.variant,
            "Seeds": numbers.n_seeds,
            "Epochs": numbers.epoch_mean.map("{:.0f}".format),
            "Train loss": [
                mean_std(m, s, 3) for m, s in zip(numbers.train_loss_mean, numbers.train_loss_std)
            ],
            "Val loss": [
                mean_std(m, s, 3) for m, s in zip(numbers.val_loss_mean, numbers.val_loss_std)
            ],
            "Val success (%)": [
                mean_std(m, s)
                for m, s in zip(numbers.val_success_pct_mean, numbers.val_success_pct_std)
            ],
            "Overfit gap": [
                mean_std(m, s, 3) for m, s in zip(numbers.overfit_gap_mean, numbers.overfit_gap_std)
            ],
            "Test success (%)": [
                f"{mean_std(m, s)} (min {low:.1f})"
                for m, s, low in zip(
                    numbers.test_success_pct_mean,
                    numbers.test_success_pct_std,
                    numbers.test_success_pct_min,
                )
            ],
        }
    )
    caption = (
        "Training metrics at the final epoch per variant, mean ± std over seeds: "
        "train and validation loss, "
        "validation success % on validation layouts of the training grid size, "
        "overfitting gap (validation minus "
        "train loss). Test success: the final weights on every layout of the training size's "
        "test split, held out "
        "from training and validation; min: the worst seed."
    )
    return Table("training", caption, numbers, shown)


def success_by_grid(params, stats_dir: Path) -> Table:
    variants, reference = params.study.variants, params.stats.reference
    stats, described = read(stats_dir, "success_by_grid"), methods(stats_dir)
    values = ["success_pct_mean", "ci_low_pct", "ci_high_pct"]
    numbers = by_variant(stats, "grid_size", values, variants)
    # The reference's differences are the comparisons' rows with it first (stats.reference).
    versus = at_training_context(stats_dir)
    versus = versus[versus.variant_a == reference]
    others = [e for e in variants if e in set(versus.variant_b)]
    for other, rows in versus.groupby("variant_b", sort=False):
        rows = rows.set_index("grid_size")
        for column in ("diff_pct", "ci_low_pct", "ci_high_pct"):
            numbers[f"{reference}_minus_{other}_{column}"] = rows[column]
    numbers = numbers.reset_index()
    shown = pd.DataFrame({"Grid": grid_labels(params, numbers.grid_size)})
    for e in variants:
        shown[e] = [
            with_interval(*cells)
            for cells in zip(*(numbers[f"{e}_{v}"] for v in values), strict=True)
        ]
    for other in others:
        prefix = f"{reference}_minus_{other}"
        shown[f"{reference} − {other} (pp)"] = [
            with_interval(*cells, sign="+")
            for cells in zip(
                *(numbers[f"{prefix}_{c}"] for c in ("diff_pct", "ci_low_pct", "ci_high_pct")),
                strict=True,
            )
        ]
    caption = (
        f"Success % per grid size and variant over {seeds(stats.n_seeds)} seeds: mean "
        f"[{confidence(described)} CI]; {described['bootstrap']} "
        f"Last columns: {reference}'s difference to each other variant in percentage points "
        f"[{confidence(described)} CI] (Table comparisons has every pair). "
        f"{UNDEFINED}: undefined (one seed)."
    )
    return Table("success_by_grid", caption, numbers, shown)


def steps_by_grid(params, stats_dir: Path) -> Table:
    variants, reference = params.study.variants, params.stats.reference
    stats = read(stats_dir, "steps_by_grid")
    numbers = by_variant(stats, "grid_size", ["steps_mean", "steps_std"], variants)
    ref = stats[stats.variant == reference].set_index("grid_size")
    numbers["bfs_optimal_steps"] = ref.optimal_steps_mean
    numbers[f"{reference}_ratio_to_optimal_mean"] = ref.ratio_to_optimal_mean
    numbers[f"{reference}_ratio_to_optimal_std"] = ref.ratio_to_optimal_std
    numbers = numbers.reset_index()
    shown = pd.DataFrame(
        {
            "Grid": grid_labels(params, numbers.grid_size),
            **{
                e: [
                    mean_std(m, s)
                    for m, s in zip(numbers[f"{e}_steps_mean"], numbers[f"{e}_steps_std"])
                ]
                for e in variants
            },
        }
    )
    shown["BFS optimum"] = numbers.bfs_optimal_steps.map("{:.1f}".format)
    shown[f"{reference} / BFS"] = [
        mean_std(m, s, 2)
        for m, s in zip(
            numbers[f"{reference}_ratio_to_optimal_mean"],
            numbers[f"{reference}_ratio_to_optimal_std"],
        )
    ]
    caption = (
        "Steps per episode per grid size and variant, mean ± std over seeds; "
        f"{stats.note.iloc[0]}. "
        f"BFS optimum: mean optimal steps of the suite. {reference} / BFS: "
        "mean steps over mean optimal "
        "steps, per seed, then mean ± std."
    )
    return Table("steps_by_grid", caption, numbers, shown)


def context(params, stats_dir: Path) -> Table:
    stats = read(stats_dir, "context")
    variants = labels(stats)
    numbers = by_variant(
        stats, "context", ["success_pct_mean", "success_pct_std", "applicable"], variants
    )
    multiple = stats.groupby("context").context_multiple.first()
    numbers = numbers.assign(context_multiple=multiple).reset_index()
    shown = pd.DataFrame(
        {
            "Context": [f"{c} ({m:g}×)" for c, m in zip(numbers.context, numbers.context_multiple)],
            **{
                e: [
                    mean_std(m, s)
                    for m, s in zip(
                        numbers[f"{e}_success_pct_mean"], numbers[f"{e}_success_pct_std"]
                    )
                ]
                for e in variants
            },
        }
    )
    caption = (
        "Success % averaged over grid sizes per context length "
        "(timesteps; multiple of the training context) "
        f"and variant, mean ± std over {seeds(stats.n_seeds)} seeds. "
        "A label `k+s` is variant k run with the inference-time scaling s. "
        "N/A: not run at that context (its k encoding cannot index that far, or the scaling "
        "applies only beyond the training context); never counted as failure."
    )
    if params.evaluate.grid_sizes is not None:
        caption += (
            " A variant that played some suites only at a context (evaluate.grid_sizes: a "
            "submission's grid sweep) has no mean there."
        )
    return Table("context", caption, numbers, shown)


def endings(params, stats_dir: Path) -> Table:
    """Per suite size and context: each variant's share of episodes that ended in the world
    before the step cap, and the success of those."""
    stats = read(stats_dir, "endings")
    variants = labels(stats)
    values = ["ended_pct_mean", "success_of_ended_pct_mean"]
    numbers = by_variant(stats, ["grid_size", "context", "cap"], values, variants).reset_index()

    def cell(ended: float, won: float) -> str:
        if math.isnan(ended):
            return NOT_APPLICABLE
        return f"{ended:.0f} ({UNDEFINED if math.isnan(won) else f'{won:.0f}'})"

    shown = pd.DataFrame(
        {
            "Grid": grid_labels(params, numbers.grid_size),
            "Context": numbers.context.map(count),
            "Cap": numbers.cap.map(count),
            **{
                e: [
                    cell(*pair)
                    for pair in zip(
                        numbers[f"{e}_ended_pct_mean"], numbers[f"{e}_success_of_ended_pct_mean"]
                    )
                ]
                for e in variants
            },
        }
    )
    failure = stats.failure_words.dropna()
    how = f"in success or {failure.iloc[0]}" if len(failure) else "in success, the world's one end"
    caption = (
        f"How episodes ended: % of episodes that ended before the step cap (Cap, steps), {how}, "
        "and in parentheses the success % of those; means over seeds, per suite size and "
        f"context (timesteps). {UNDEFINED}: no episode ended; {NOT_APPLICABLE}: not run at that "
        "context. An episode that does not end plays to the cap."
    )
    return Table("endings", caption, numbers, shown)


def comparisons(params, stats_dir: Path) -> Table:
    numbers, described = at_training_context(stats_dir), methods(stats_dir)
    shown = pd.DataFrame(
        {
            "Grid": grid_labels(params, numbers.grid_size),
            "a − b": numbers.variant_a + " − " + numbers.variant_b,
            "Δ success (pp) [CI]": [
                with_interval(*cells, sign="+")
                for cells in zip(numbers.diff_pct, numbers.ci_low_pct, numbers.ci_high_pct)
            ],
            "p": numbers.p_value.map(p_value),
            "p (Holm)": numbers.p_holm.map(p_value),
            "smallest p": numbers.p_min.map(p_value),
            "P(a > b)": numbers.prob_improvement.map(probability),
            "Cohen's d": numbers.cohens_d.map(effect),
            "Verdict": numbers.verdict,
        }
    )
    family = (
        "Exploratory and unadjusted: the run's verdict is its declared hypotheses' (Table 1); "
        "p (Holm) is left empty. "
        if params.verdict.declared()
        else ""
    )
    if not len(numbers):
        caption = "One variant: no pair of variants to compare."
        return Table("comparisons", caption, numbers, shown)
    caption = (
        family + "Every pair of variants at every grid size, at the training context; "
        f"seeds per variant: {seeds(pd.concat([numbers.n_seeds_a, numbers.n_seeds_b]))}. "
        f"Δ: mean success of a minus b in percentage points [{confidence(described)} CI]: "
        f"{described['bootstrap']} p: {described['permutation']} "
        f"p (Holm): {described['holm']} Smallest p: the smallest p this design can give. "
        f"P(a > b): {described['prob_improvement']} Cohen's d: {described['cohens_d']} "
        f"Verdict: from the CI alone (a difference is resolved when its CI excludes 0). "
        f"Significant means p (Holm) < α = {described['alpha']:g}. "
        f"{UNDEFINED}: undefined (one seed, or no spread between seeds)."
    )
    return Table("comparisons", caption, numbers, shown)


def power(params, stats_dir: Path) -> Table:
    numbers, described = read(stats_dir, "power"), methods(stats_dir)
    shown = pd.DataFrame(
        {
            "Grid": grid_labels(params, numbers.grid_size),
            "Seeds": numbers.n_seeds.map(str),
            "Seed SD (pp)": numbers.seed_sd_pct.map(number),
            "Detectable Δ (pp)": numbers.mde_pct.map(number),
            "Seeds for 10 pp": numbers.seeds_for_10pts.map(count),
            f"Chance gap, {described['study_seeds']} seeds (pp)": numbers.chance_gap_pct.map(
                number
            ),
            "Best mean (%)": numbers.best_pct.map(number),
            "Informative": numbers.informative.astype(bool).map({True: "yes", False: "no (floor)"}),
        }
    )
    caption = (
        f"Power per grid size at the training context. {described['power']} "
        "Seed SD: the seed standard deviation of success % pooled over variants. "
        f"Informative: the best variant's mean success is at least "
        f"{described['floor_pct']:g} %; where every variant is below it, the grid says "
        f"nothing about encodings. {UNDEFINED}: undefined (no spread between seeds)."
    )
    return Table("power", caption, numbers, shown)


def ranking(params, stats_dir: Path) -> Table:
    numbers, described = read(stats_dir, "ranking"), methods(stats_dir)
    first = numbers.groupby("grid_size").cumcount() == 0  # the row gaps are taken to
    shown = pd.DataFrame(
        {
            "Grid": grid_labels(params, numbers.grid_size),
            "Rank": numbers["rank"].map(str),
            "Variant": numbers.variant,
            "Success (%) [CI]": [
                with_interval(*cells)
                for cells in zip(numbers.success_pct_mean, numbers.ci_low_pct, numbers.ci_high_pct)
            ],
            "First − this (pp) [CI]": [
                "first" if is_first else with_interval(*cells)
                for is_first, *cells in zip(
                    first, numbers.gap_pct, numbers.gap_ci_low_pct, numbers.gap_ci_high_pct
                )
            ],
            "Standing": numbers.standing,
        }
    )
    caption = (
        f"Ranking: {described['ranking']} Tied means share a rank. "
        f"Intervals: {confidence(described)} CI, {described['bootstrap']}"
    )
    return Table("ranking", caption, numbers, shown)


FRAGILITY = (
    "Fragile drops: of the models a hypothesis used, how many, each left out alone with the "
    "whole rule replayed, would change its outcome (a sequential run's; "
    f"{UNDEFINED} in a fixed design). |z| − bound: the deciding look's statistic beyond its "
    "boundary (negative: short of it at the cap)."
)


def fragile_drops(numbers: pd.DataFrame) -> list[str]:
    """`n of m` per decision, the undefined mark where not counted."""
    return [
        UNDEFINED if pd.isna(f) else f"{int(f)} of {int(d)}"
        for f, d in zip(numbers.fragile_drops, numbers.drops)
    ]


def z_margins(numbers: pd.DataFrame) -> pd.Series:
    """|z| − bound per decision, signed, the undefined mark in a fixed design."""
    return numbers.z_margin.map(lambda x: UNDEFINED if pd.isna(x) else f"{x:+.2f}")


def decisions(params, stats_dir: Path) -> Table:
    numbers, described = read(stats_dir, "decisions"), methods(stats_dir)
    shown = pd.DataFrame(
        {
            "Hypothesis (a vs b on grids)": numbers.hypothesis,
            "Outcome": numbers.outcome,
            "a − b (pp) [CI]": [
                with_interval(*cells, sign="+")
                for cells in zip(numbers.effect_pct, numbers.ci_low_pct, numbers.ci_high_pct)
            ],
            "Estimate": numbers.estimate,
            "Naive a − b (pp) [CI]": [
                with_interval(*cells, sign="+")
                for cells in zip(
                    numbers.naive_effect_pct, numbers.naive_ci_low_pct, numbers.naive_ci_high_pct
                )
            ],
            "Margin (pp)": numbers.margin_pct.map(number),
            "Equivalence CI (pp)": [
                f"[{low:+.1f}, {high:+.1f}]" if pd.notna(low) else UNDEFINED
                for low, high in zip(numbers.equivalence_low_pct, numbers.equivalence_high_pct)
            ],
            "TOST p, Holm": [p_value(q) if pd.notna(q) else UNDEFINED for q in numbers.p_tost_holm],
            "Seeds a + b": [f"{a} + {b}" for a, b in zip(numbers.seeds_a, numbers.seeds_b)],
            "Models": numbers.models.map(str),
            "Stable": numbers.stable.map(lambda x: f"{x:.2f}"),
            "Fragile drops": fragile_drops(numbers),
            "|z| − bound": z_margins(numbers),
        }
    )
    caption = (
        f"The run's declared hypotheses and their outcomes. {described['verdict']} "
        f"CI: {verdict_words.levels(numbers.ci_level)}, 1 − the α each hypothesis's rejection "
        "is tested at (the claims' α over the hypotheses); a stagewise median-unbiased "
        "estimate's comes from the same ordering, the naive one's is the bootstrap over the "
        "seeds used. Equivalence CI: "
        f"Welch's {100 * (1 - 2 * described['claim_alpha']):g} % interval, the one the two "
        "one-sided tests read (before Holm). Seeds: those each side had when the hypothesis was "
        "decided; models: their sum. Stable: the share of 100 seeds of the statistics' "
        f"generator giving the same outcome. {FRAGILITY}"
        if len(numbers)
        else "No hypotheses declared: the run is exploratory (its primary family is every "
        "pair at every grid size, the comparisons table)."
    )
    return Table("decisions", caption, numbers, shown)


def iqm(params, stats_dir: Path) -> Table:
    numbers, described = read(stats_dir, "iqm"), methods(stats_dir)
    shown = pd.DataFrame(
        {
            "Variant": numbers.variant,
            "IQM (%) [CI]": [
                with_interval(*cells)
                for cells in zip(numbers.iqm_pct, numbers.ci_low_pct, numbers.ci_high_pct)
            ],
            "Seeds": numbers.n_seeds.map(str),
            "Grid sizes (tasks)": numbers.tasks.astype(str),
        }
    )
    caption = f"IQM across grid sizes. {described['aggregates']}"
    if params.evaluate.grid_sizes is not None:
        caption += (
            " A variant that did not play every grid size at the training context "
            "(evaluate.grid_sizes: a submission's grid sweep) has no row."
        )
    return Table("iqm", caption, numbers, shown)


def reach(params, stats_dir: Path) -> Table:
    """Per grid size and variant: success at each context of the reach ladder and the training
    context, and the effective context (analysis/reach.py)."""
    success, effective = read(stats_dir, "reach"), read(stats_dir, "effective_context")
    described = methods(stats_dir)
    if not len(effective):
        shown = pd.DataFrame(columns=["Grid", "Variant", "Effective context"])
        caption = (
            "How far back each variant looks: none measured in this run (it has no reach "
            "evaluation: `dtpe reach` plays each model at contexts shorter than the training one)."
        )
        return Table("reach", caption, effective, shown)
    contexts = sorted(success.context.unique())
    keys = ["grid_size", "variant"]
    numbers = effective.copy()
    for c in contexts:
        at = success[success.context == c].set_index(keys)
        for column in ("success_pct_mean", "ci_low_pct", "ci_high_pct"):
            numbers[f"context_{c}_{column}"] = (
                at[column].reindex(pd.MultiIndex.from_frame(numbers[keys])).to_numpy()
            )
    trained = int(numbers.train_context.iloc[0])
    shown = pd.DataFrame(
        {"Grid": grid_labels(params, numbers.grid_size), "Variant": numbers.variant}
        | {
            f"{c}{' (trained)' if c == trained else ''}": [
                with_interval(*cells)
                for cells in zip(
                    *(
                        numbers[f"context_{c}_{v}"]
                        for v in ("success_pct_mean", "ci_low_pct", "ci_high_pct")
                    )
                )
            ]
            for c in contexts
        }
        | {"Effective context": numbers.effective_context.map(count)}
    )
    caption = (
        f"How far back each variant looks: success % at each context (timesteps) the reach step "
        f"played, the training context's from the grid sweep, over {seeds(numbers.n_seeds)} "
        f"seeds: mean [{confidence(described)} CI]; {described['bootstrap']} Effective context: "
        "the shortest context from which on every longer one's mean success is at or above the "
        f"lower bound of the training context's interval. {UNDEFINED}: undefined (one seed)."
    )
    return Table("reach", caption, numbers, shown)


def seen(params, stats_dir: Path) -> Table:
    """Per variant: success on training layouts beside the held-out test split, and the gap."""
    numbers = read(stats_dir, "seen")
    described = methods(stats_dir)
    n = grid_label(params.env.world, params.data.train_size)
    if not len(numbers):
        shown = pd.DataFrame(columns=["Variant", "Seen", "Held out", "Gap"])
        caption = (
            f"Success on {n} layouts seen in training: none measured in this run (no model has "
            "the seen step's results: `dtpe seen` plays a model on its training layouts)."
        )
        return Table("seen", caption, numbers, shown)
    shown = pd.DataFrame(
        {
            "Variant": numbers.variant,
            "Seeds (seen)": numbers.seeds,
            "Seeds (both)": numbers.paired_seeds.fillna("none"),
            **{
                title: [
                    with_interval(*cells, sign=sign)
                    for cells in zip(
                        *(
                            numbers[f"{which}_{v}"]
                            for v in ("pct_mean", "ci_low_pct", "ci_high_pct")
                        )
                    )
                ]
                for title, which, sign in (
                    ("Seen", "seen", ""),
                    ("Held out", "held_out", ""),
                    ("Gap", "gap", "+"),
                )
            },
        }
    )
    caption = (
        f"Success % at the training size ({n}) on layouts the models trained on (the first of "
        f"the train split, as many as the held-out test split holds: "
        f"{seeds(numbers.seen_layouts)}) beside the held-out test split, over the models that "
        f"played both: mean [{confidence(described)} CI]; {described['bootstrap']} Gap: seen − "
        f"held out, each seed's two sets resampled together. {NOT_APPLICABLE}: no model of the "
        "variant played both. "
        f"{UNDEFINED}: undefined (one seed)."
    )
    return Table("seen", caption, numbers, shown)


def horizon(params, stats_dir: Path) -> Table:
    """Per variant and context: every seed's success horizon and their summary
    (analysis/horizon.py)."""
    numbers = read(stats_dir, "horizon")
    pct = f"{params.stats.horizon_pct:g} %"
    largest = int(numbers.largest_size.max()) if len(numbers) else max(params.data.suite_sizes)
    fewer = (
        "; in brackets, the largest a variant played at that context where it played fewer: "
        "evaluate.grid_sizes"
        if (numbers.largest_size < largest).any()
        else ""
    )

    def cells(row) -> dict:
        if not row.applicable:
            return dict.fromkeys(("Horizon (median)", "Range", "Per seed"), NOT_APPLICABLE)
        low, high = count(row.horizon_min), count(row.horizon_max)
        return {
            "Horizon (median)": count(row.horizon_median),
            "Range": low if low == high else f"{low}–{high}",
            "Per seed": str(row.horizons).replace("nan", UNDEFINED),
        }

    shown = pd.DataFrame(
        [
            {
                "Variant": row.variant,
                "Context": count(row.context),
                **cells(row),
                "Through the largest": f"{row.through_largest} of {row.n_seeds}"
                + ("" if row.largest_size == largest else f" [{count(row.largest_size)}]"),
            }
            for row in numbers.itertuples()
        ],
        columns=[
            "Variant",
            "Context",
            "Horizon (median)",
            "Range",
            "Per seed",
            "Through the largest",
        ],
    )
    caption = (
        f"Success horizon: per seed, the last suite size before its success first falls below "
        f"{pct}, read from the smallest suite up (a later recovery does not extend it), at each "
        f"context the model was played at; the median and range over seeds (the unit). "
        f"{UNDEFINED}: already below at the smallest suite (a median with one such seed is "
        f"{UNDEFINED}); {NOT_APPLICABLE}: the variant cannot run at that context (its k "
        f"encoding cannot index that far). Through the largest: seeds at or above {pct} on every "
        f"suite up to the largest ({largest}{fewer}), whose horizon is a lower bound."
    )
    return Table("horizon", caption, numbers, shown)


def position_use(params, stats_dir: Path) -> Table:
    """Per variant, size and encoding switched off: its success beside the model's own, the
    change, and how many models use it (analysis/position_use.py)."""
    numbers = read(stats_dir, "position_use")
    described = methods(stats_dir)
    shown = pd.DataFrame(
        {
            "Variant": numbers.variant,
            "Size": grid_labels(params, numbers.grid_size),
            "Off": numbers.off,
            "Own": numbers.own.map(number),
            "Switched off": numbers.switched_off.map(number),
            "Change": [
                with_interval(*cells, sign="+")
                for cells in zip(numbers.change, numbers.change_low, numbers.change_high)
            ],
            "Models using it": [
                f"{n} of {seeds}" for n, seeds in zip(numbers.models_using, numbers.seeds)
            ],
        },
        columns=["Variant", "Size", "Off", "Own", "Switched off", "Change", "Models using it"],
    )
    if not len(numbers):
        caption = (
            "Does the model use position? Not measured in this run (params position.ablate: "
            "`dtpe position` plays each model with its k or t encoding switched off at the "
            "whole-episode context)."
        )
        return Table("position_use", caption, numbers, shown)
    context = max(params.evaluate.contexts)
    caption = (
        f"Does the model use position? Success % at context {context} with its k or t encoding "
        "switched off at inference (no table, bias or rotation; never retrained) beside its own "
        "on the same layouts, mean over seeds; Change: switched off − own [t interval over "
        f"seeds at {confidence(described)}]; a model uses the encoding where an exact McNemar "
        f"test of its paired episodes gives p < {described['alpha']:g}. No row: the encoding "
        "has nothing to switch off (NoPE, t none), the model cannot index the context, or the "
        f"run does not ask (params position.ablate). {UNDEFINED}: undefined (one seed)."
    )
    return Table("position_use", caption, numbers, shown)
