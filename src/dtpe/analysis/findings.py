"""The report's findings, in words (figures/REPORT.md's first section): the verdict from the
decisions, then per grid size what the seed-level intervals resolve, the layouts seen in
training, the ranking, power, mechanisms, the t/k confound and what is reproducible. Every
number is rendered from the statistics stage's files (results/stats/); nothing is computed."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path
from typing import Callable

import pandas as pd

from dtpe import names, preregistration
from dtpe.analysis import shared_layouts, verdict_words, verdicts
from dtpe.analysis.cells import grid_label, mean_std, p_value, with_interval
from dtpe.analysis.inference import UNRESOLVED
from dtpe.analysis.outputs import table_number
from dtpe.analysis.pairwise import BELOW, LEADING, UNDEFINED_STANDING
from dtpe.analysis.tables import seeds
from dtpe.model import catalog
from dtpe.numerics import EVERY_CPU, THIS_MACHINE
from dtpe.world import catalog as worlds

MAX_LISTED_PAIRS = 6
"""beyond this many unresolved pairs in a grid, the findings count them and the comparisons
table lists them"""


CAUTION = (
    "A conclusion a rerun could overturn is not drawn here: the findings are only those the "
    "intervals support."
)


def reproducible_text(numerics: pd.DataFrame) -> str:
    """What is bit-reproducible where, from the numerics every model was trained under."""
    data = "The dataset and evaluation suites are the same bytes on every machine (numpy only)."
    cpus = ", ".join(sorted(numerics.cpu.unique()))
    portable = numerics.reproducible_on.eq(EVERY_CPU).all()
    if portable:
        first = numerics.iloc[0]
        return (
            f"{data} Every model was trained under the portable numerics mode "
            f"(compute.numerics portable: ATen's kernels at {first.aten_capability}, oneDNN at "
            f"{first.onednn_max_cpu_isa}, MKL on its {first.mkl_cbwr} branch, "
            f"{first.threads} thread per job, torch {first.torch}): its checkpoints, and so "
            f"every metric, are the same bytes on {EVERY_CPU}; not across GPUs, other torch "
            f"builds or ARM CPUs. Trained on: {cpus}. {CAUTION}"
        )
    modes = ", ".join(sorted(numerics.numerics.unique()))
    return (
        f"{data} The models were trained under compute.numerics {modes} on {cpus}: their "
        f"weights, and so every metric, reproduce on {THIS_MACHINE}. On another CPU the "
        "floating-point order of the kernels differs, training produces other weights, and the "
        f"numbers move within the seed noise that the intervals above describe. {CAUTION}"
    )


def level(methods: dict) -> str:
    return f"{100 * methods['confidence']:g} %"


def section(params, stats_dir: Path, methods: dict, unevaluated: list[str] = ()) -> str:
    """Per grid size what the intervals say, then the ranking, power, mechanisms, the t/k
    confound and what is reproducible; `unevaluated`: the models trained but never evaluated."""
    success = pd.read_csv(stats_dir / "success_by_grid.csv")
    comparisons = pd.read_csv(stats_dir / "comparisons.csv")
    power = pd.read_csv(stats_dir / "power.csv").set_index("grid_size")
    primary = comparisons[comparisons.context == params.model.context]
    size = params.data.train_size
    declared = bool(params.verdict.declared())
    layouts = worlds.get(params.env.world).words.layouts
    label = partial(grid_label, params.env.world)
    intro = (
        f"Models were trained on {label(size)} {layouts} only, {seeds(success.n_seeds)} "
        f"seeds per variant; every larger grid tests length generalization. Means carry their "
        f"{level(methods)} bootstrap CI over seeds and layouts; a difference between two "
        "variants is resolved only where its CI excludes 0. "
        + (
            "Every comparison below is exploratory: the run's verdict is its declared "
            "hypotheses' (above), and these p-values are unadjusted."
            if declared
            else '"Significant" means a Holm-adjusted p below α = '
            f"{methods['alpha']:g}; the smallest p the design can give is stated beside it."
        )
        + (
            f" Trained but not evaluated: {', '.join(unevaluated)} (their checkpoints were gone "
            "before their evaluation finished, `dtpe stats --no-evaluation`): every success "
            "below counts the other seeds."
            if unevaluated
            else ""
        )
    )
    per_grid = "\n".join(
        grid_finding(
            label,
            grid,
            success[success.grid_size == grid],
            primary[primary.grid_size == grid],
            power.loc[grid],
            methods,
        )
        for grid in sorted(power.index)
    )
    return "\n\n".join(
        [
            "### Verdict\n\n" + verdict_text(params, stats_dir, methods),
            intro,
            "### What the intervals say, per grid size\n\n" + per_grid,
            "### Layouts seen in training\n\n"
            + seen_text(pd.read_csv(stats_dir / "seen.csv"), label(size), methods),
            "### Ranking\n\n"
            + ranking_text(label, pd.read_csv(stats_dir / "ranking.csv"), power, methods),
            "### Power\n\n" + power_text(label, power, methods),
            "### Mechanisms\n\n"
            + context_text(pd.read_csv(stats_dir / "context.csv"))
            + "\n\n"
            + reach_text(label, pd.read_csv(stats_dir / "effective_context.csv"))
            + "\n\n"
            + position_text(label, pd.read_csv(stats_dir / "position_use.csv"))
            + confound_text(params.study.variants),
            "### What is reproducible\n\n"
            + reproducible_text(pd.read_csv(stats_dir / "numerics.csv"))
            + precision_text(params),
        ]
    )


def precision_text(params) -> str:
    """The arithmetic the models ran under, where it is not fp32 throughout."""
    modes = {"training": params.train.precision, "evaluation": params.evaluate.precision}
    autocast = [step for step, mode in modes.items() if mode != "fp32"]
    if not autocast:
        return ""
    return (
        f" {' and '.join(autocast).capitalize()} ran under "
        f"{', '.join(sorted({modes[s] for s in autocast}))} autocast (train.precision, "
        "evaluate.precision): matrix products in that precision, the weights and the "
        "optimizer's state in fp32."
    )


def shared_sentence(stats_dir: Path, decisions: pd.DataFrame) -> str:
    """The layouts the run shares with the runs of verdict.shared_with, on each endpoint its
    hypotheses decide (shared_layouts.csv); nothing where it names none."""
    path = stats_dir / "shared_layouts.csv"
    shared = pd.read_csv(path) if path.is_file() else pd.DataFrame()
    if not len(shared):
        return ""
    grids = {tuple(names.endpoint_grids(e)): None for e in decisions.endpoint}
    counts = "; ".join(
        f"endpoint grids {', '.join(map(str, g))}: "
        + shared_layouts.summary(shared, shared_layouts.THIS_RUN, list(g))
        for g in grids
    )
    return (
        "\n\nLayouts shared with the other runs of this world (verdict.shared_with; by content, "
        "full identity of the run's distinct layouts, by grid alone in brackets; "
        f"shared_layouts.csv per size): {counts}."
    )


def verdict_text(params, stats_dir: Path, methods: dict) -> str:
    """Whether the design could reject, then each declared hypothesis's outcome with its
    effect, interval, seeds and models (the decisions table), or what an all-pairs family is."""
    design = json.loads((stats_dir / "design.json").read_text())
    decisions = pd.read_csv(stats_dir / "decisions.csv")
    if not design["tests"]:  # one variant: nothing to decide
        return design["sentence"]
    lines = [design["sentence"]]
    if not len(decisions):
        lines.append(
            f"The primary family is every pair of variants at every grid size ({design['tests']} "
            "tests, Holm-adjusted): no hypothesis was declared before the data, so this run is "
            "exploratory."
        )
        return " ".join(lines)
    kind = "confirmatory" if params.verdict.confirmatory else "declared"
    sequential = params.verdict.sequential
    alpha = methods["claim_alpha"]
    how = (
        f"seeds added in interims of {sequential['seeds_per_interim']} by a group-sequential "
        f"test (at most {sequential['interims']}), family-wise error at α = {alpha:g}"
        if sequential
        else f"Holm over the declared family at α = {alpha:g}"
    )
    lines.append(
        f"The run's {kind} hypotheses ({len(decisions)}; {how}; Table "
        f"{table_number('decisions')}), a − b in points on the seeds each used, its interval "
        "over seeds at the level its claim was tested at; where the estimate accounts for the "
        "stop, the naive mean difference follows it:"
    )
    text = (
        " ".join(lines)
        + "\n\n"
        + "\n".join(
            f"- **{row.hypothesis}**: {verdict_words.sentence(row, methods)}"
            + (
                ""
                if row.estimate == verdicts.NAIVE
                else f" ({row.estimate}; naive "
                + with_interval(
                    row.naive_effect_pct, row.naive_ci_low_pct, row.naive_ci_high_pct, sign="+"
                )
                + ")"
            )
            + f" ({row.models} models, stable for {row.stable:.0%} of 100 test seeds)"
            for row in decisions.itertuples()
        )
    )
    stated = preregistration.describe(decisions.iloc[0].to_dict())
    if stated:
        text += (
            "\n\nPreregistration, the params overlay that declares these hypotheses as its "
            f"models record it (decisions.csv): {stated}."
        )
    for amendment in params.verdict.amendments:
        text += (
            f"\n\nAmended from the overlay's content `{amendment['from_sha256'][:12]}`: "
            f"{amendment['why']}"
        )
    if params.verdict.reused_layouts:
        text += f"\n\nLayouts reused from an exploratory run: {params.verdict.reused_layouts}"
    text += shared_sentence(stats_dir, decisions)
    if sequential and (stats_dir / "interims.csv").is_file():
        interims = pd.read_csv(stats_dir / "interims.csv")
        done = interims[interims.finished.astype(bool)]
        models = sum(
            len(str(r.variants).split()) * len(str(r.seeds).split()) for r in done.itertuples()
        )
        text += (
            f"\n\nInterims finished: {len(done)} of at most {sequential['interims']}, "
            f"{models} models trained."
        )
        pending = interims[~interims.finished.astype(bool)]
        if len(pending):
            row = pending.iloc[0]
            text += (
                f" Next: interim {row.interim}, {row.variants} at seeds {row.seeds} (the same "
                "command runs it)."
            )
    return text


def grid_finding(
    label: Callable[[int], str],
    grid: int,
    success: pd.DataFrame,
    pairs: pd.DataFrame,
    power: pd.Series,
    methods: dict,
) -> str:
    """One bullet: informative or at the floor, each variant's mean [CI], the pairs whose CI
    resolves a direction with Holm p beside the smallest possible p, and those it leaves open."""
    if power.informative:
        standing = f"informative (best mean {power.best_pct:.1f} % ≥ {methods['floor_pct']:g} %)"
    else:
        standing = (
            f"at the floor (best mean {power.best_pct:.1f} % < {methods['floor_pct']:g} %): every "
            "variant fails nearly every layout, so this grid says nothing about encodings"
        )
    means = "; ".join(
        f"{row.variant} {mean_interval(row.success_pct_mean, row.ci_low_pct, row.ci_high_pct)}"
        for row in success.itertuples()
    )
    resolved = pairs[pairs.verdict != UNRESOLVED]
    open_pairs = pairs[pairs.verdict == UNRESOLVED]
    text = [f"- **{label(grid)}**: {standing}. Mean success: {means}."]
    if len(resolved):
        text.append(
            "The intervals resolve "
            + "; ".join(
                f"{direction(row)}: {difference(row, methods)}" for row in resolved.itertuples()
            )
            + "."
        )
    if len(open_pairs) > MAX_LISTED_PAIRS:
        text.append(
            f"{'The other' if len(resolved) else 'All'} {len(open_pairs)} pairs resolve no "
            f"difference (Table {table_number('comparisons')})."
        )
    elif len(open_pairs):
        text.append(
            "They resolve no difference for "
            + "; ".join(
                f"{row.variant_a} − {row.variant_b} "
                f"{with_interval(row.diff_pct, row.ci_low_pct, row.ci_high_pct, sign='+')}"
                for row in open_pairs.itertuples()
            )
            + f" (points, a − b [CI]; Table {table_number('comparisons')} has every p)"
            + "."
        )
    return " ".join(text)


def mean_interval(mean: float, low: float, high: float) -> str:
    if pd.isna(low):
        return f"{mean:.1f} % (CI undefined)"
    return f"{mean:.1f} % [{low:.1f}, {high:.1f}]"


def direction(row) -> str:
    """The resolved direction, the larger mean first."""
    return (
        f"{row.variant_a} > {row.variant_b}"
        if row.verdict == "a > b"
        else f"{row.variant_b} > {row.variant_a}"
    )


def difference(row, methods: dict) -> str:
    """`a − b` in points with its CI, the Holm-adjusted p and beside it the smallest p."""
    interval = (
        "CI undefined"
        if pd.isna(row.ci_low_pct)
        else f"{level(methods)} CI [{row.ci_low_pct:+.1f}, {row.ci_high_pct:+.1f}]"
    )
    if not row.primary:
        return (
            f"{row.variant_a} − {row.variant_b} = {row.diff_pct:+.1f} points ({interval}, "
            f"unadjusted p {p_value(row.p_value)}, exploratory)"
        )
    significant = ", significant" if pd.notna(row.p_holm) and row.p_holm < methods["alpha"] else ""
    return (
        f"{row.variant_a} − {row.variant_b} = {row.diff_pct:+.1f} points ({interval}, "
        f"Holm p {p_value(row.p_holm)}{significant}, smallest possible p {p_value(row.p_min)})"
    )


def ranking_text(
    label: Callable[[int], str], ranking: pd.DataFrame, power: pd.DataFrame, methods: dict
) -> str:
    """Per grid size the first, the leading group and the variants resolved below the first
    with their gaps (the ranking table); floor grids are marked, as they rank nothing."""
    lines = [
        f"Table {table_number('ranking')}; {methods['ranking']} Gaps are first − variant in "
        "points [CI]."
    ]
    for size, rows in ranking.groupby("grid_size", sort=True):
        firsts = rows[rows["rank"] == 1]
        line = (
            f"- {label(size)}{'' if power.loc[size].informative else ' (at the floor)'}: "
            f"first {' and '.join(firsts.variant)} "
            + mean_interval(*firsts[["success_pct_mean", "ci_low_pct", "ci_high_pct"]].iloc[0])
        )
        if (rows.standing == UNDEFINED_STANDING).any():
            lines.append(line + "; gap intervals undefined (one seed), so no group is drawn.")
            continue
        lead, below = rows[rows.standing == LEADING], rows[rows.standing == BELOW]
        line += f"; leading group ({len(lead)} of {len(rows)}): {', '.join(lead.variant)}"
        if len(below):
            line += "; below the first: " + ", ".join(
                f"{row.variant} "
                + with_interval(row.gap_pct, row.gap_ci_low_pct, row.gap_ci_high_pct)
                for row in below.itertuples()
            )
        lines.append(line + ".")
    return "\n".join(lines)


def power_text(label: Callable[[int], str], power: pd.DataFrame, methods: dict) -> str:
    lines = [methods["power"]]
    for grid, row in power.iterrows():
        if pd.isna(row.mde_pct):
            lines.append(
                f"- {label(grid)}: {row.n_seeds:.0f} seeds, no spread between seeds: "
                "power undefined."
            )
            continue
        lines.append(
            f"- {label(grid)}{'' if row.informative else ' (at the floor)'}: seed SD "
            f"{row.seed_sd_pct:.1f} points with {row.n_seeds:.0f} seeds per variant; the "
            f"smallest detectable difference is {row.mde_pct:.1f} points, and detecting 10 "
            f"points needs {row.seeds_for_10pts:.0f} seeds per variant; "
            f"{methods['study_seeds']} seeds per variant (the study's count) exceed "
            f"{row.chance_gap_pct:.1f} points between two equal variants in "
            f"{100 * methods['alpha']:g} % of comparisons."
        )
    return "\n".join(lines)


def context_text(context: pd.DataFrame) -> str:
    """Success averaged over grid sizes at each context beyond the training one (its table)."""
    lines = [
        f"Context length (Table {table_number('context')}; success averaged over grid sizes, "
        "mean ± std over seeds; N/A: its k encoding cannot index that far). Figure 4 and the "
        "translation check show how each variant attends."
    ]
    for (ctx, multiple), rows in context.groupby(["context", "context_multiple"], sort=True):
        cells = "; ".join(
            f"{row.variant} {mean_std(row.success_pct_mean, row.success_pct_std)}"
            for row in rows.itertuples()
        )
        lines.append(f"- {ctx} timesteps ({multiple:g}× the training context): {cells}.")
    return "\n".join(lines)


def seen_text(seen: pd.DataFrame, size_label: str, methods: dict) -> str:
    """Success on training layouts beside held-out ones at the training size (its table)."""
    where = f"Table {table_number('seen')}"
    if not len(seen):
        return (
            f"Success on the layouts training saw: not measured in this run (no model has the "
            f"seen step's results; {where})."
        )
    cells = "; ".join(
        f"{row.variant} "
        + mean_interval(row.seen_pct_mean, row.seen_ci_low_pct, row.seen_ci_high_pct)
        + f" (seeds {row.seeds})"
        + (
            f", held out {row.held_out_pct_mean:.1f}, gap "
            + mean_interval(row.gap_pct_mean, row.gap_ci_low_pct, row.gap_ci_high_pct)
            + f" (seeds {row.paired_seeds})"
            if pd.notna(row.held_out_pct_mean)
            else ", not evaluated on held-out layouts"
        )
        for row in seen.itertuples()
    )
    return (
        f"Success % on {size_label} layouts the models trained on (the first of the train "
        f"split, as many as the held-out test split holds), played as the held-out test split "
        f"is; beside it the held-out split and the gap seen − held out over the models that "
        f"played both, each with its {level(methods)} bootstrap CI ({where}): {cells}."
    )


def reach_text(label: Callable[[int], str], effective: pd.DataFrame) -> str:
    """Per grid size of the reach step, each variant's effective context (its table)."""
    if not len(effective):
        return (
            "How far back each variant looks: not measured in this run (no reach evaluation; "
            f"Table {table_number('reach')})."
        )
    lines = [
        f"How far back each variant looks (Table {table_number('reach')}, Figure 8): the "
        "effective context, the shortest context from which on every longer one's mean success "
        "is at or above the lower bound of the training context's interval, out of "
        f"{effective.train_context.iloc[0]} trained."
    ]
    for size, rows in effective.groupby("grid_size", sort=True):
        cells = "; ".join(
            f"{row.variant} "
            + (
                "undefined (one seed)"
                if pd.isna(row.effective_context)
                else f"{row.effective_context:.0f} ({row.effective_success_pct:.1f} % against "
                + mean_interval(row.train_success_pct, row.train_ci_low_pct, row.train_ci_high_pct)
                + " trained)"
            )
            for row in rows.itertuples()
        )
        lines.append(f"- {label(size)}: {cells}.")
    return "\n".join(lines)


def position_text(label: Callable[[int], str], use: pd.DataFrame) -> str:
    """Per variant, whether its models use the encodings switched off (Table position_use): a
    variant none of whose models' success moves uses no position where it was asked."""
    if not len(use):
        return ""
    lines = [
        f"Does each variant use position (Table {table_number('position_use')}): its success "
        "with its k or t encoding switched off at inference beside its own; a model uses the "
        "encoding where its paired episodes differ (exact McNemar test)."
    ]
    for variant, rows in use.groupby("variant", sort=False):
        used = rows[rows.models_using > 0]
        if used.empty:
            sizes = ", ".join(label(n) for n in sorted(rows.grid_size.unique()))
            lines.append(
                f"- {variant}: no model's success moves with its {' or '.join(rows.off.unique())} "
                f"encoding off at {sizes}: it uses no position there."
            )
            continue
        lines.append(
            f"- {variant}: "
            + "; ".join(
                f"{row.off} off at {label(row.grid_size)} "
                + with_interval(row.change, row.change_low, row.change_high, sign="+")
                + f" points, {row.models_using} of {row.seeds} models using it"
                for row in used.itertuples()
            )
            + "."
        )
    return "\n".join(lines) + "\n\n"


def confound_text(variants: list[str]) -> str:
    """t and k coincide in training; say which of this run's models cannot separate them."""
    sinusoidal_t = [e for e in variants if catalog.variant(e).t == catalog.DEFAULT_T]
    text = (
        "A confound: training episodes are shorter than the context window, so the global "
        "timestep t equals the in-window index k on almost every training token."
    )
    if sinusoidal_t:
        return text + (
            f" In {', '.join(sinusoidal_t)} the timestep t is encoded with the sinusoid that the "
            "sinusoidal k encoding also uses, so what these models take from k is not separated "
            "from what they take from t. The family run (variants with another t, "
            "`<k>-t_<t>`) separates them."
        )
    return text + (
        " No model of this run encodes t with the sinusoid: compare models with the same k "
        "and different t to separate the two."
    )
