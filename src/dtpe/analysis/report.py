"""figures/REPORT.md: the study's outputs in one page. Findings stated from the statistics
stage's files (results/stats/): per grid size what the seed-level intervals resolve, the ranking,
power, mechanisms, the confound and what is reproducible; the statistical methods in the stats
stage's own words; the six figures (linked relative to the report), the seven Markdown tables,
the t-shift check per variant and seed, the wall time of each step, the code version and
the params file used. The report computes no statistic: every number is rendered from
results/stats/ or, for the translation check, from the attention stage's per-seed files."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pandas as pd

from dtpe import atomic, names
from dtpe.analysis.stats import BELOW, LEADING, UNDEFINED_STANDING, UNRESOLVED
from dtpe.analysis.tables import grid_label, mean_std, p_value, seeds, with_interval
from dtpe.model import catalog
from dtpe.numerics import EVERY_CPU, THIS_MACHINE
from dtpe.params import chain, load

FIGURES = (
    (
        "fig1_maze",
        "Figure 1. A Key-Door maze from the largest evaluation suite, the agent at its start.",
    ),
    (
        "fig2_training",
        "Figure 2. Training dynamics per variant: train and validation loss, validation success, "
        "overfitting gap; mean over seeds, band ±1 std.",
    ),
    (
        "fig3_success_by_grid",
        "Figure 3. Success against grid size per variant; bars: {level} bootstrap CI of the mean "
        "over seeds and layouts.",
    ),
    (
        "fig4_attention",
        "Figure 4. Final-layer attention: distance decay (left) "
        "and mean attention maps per variant.",
    ),
    (
        "fig5_effect_sizes",
        "Figure 5. Difference of mean success for every pair of variants per grid size at the "
        "training context, with its {level} bootstrap CI; * Holm-adjusted p < {alpha:g}.",
    ),
    (
        "fig6_t_shift",
        "Figure 6. The same windows replayed with every global timestep t shifted beyond the "
        "training range, k unchanged: change of the final-layer attention and of the action "
        "distribution, one point per seed.",
    ),
)
TABLES = (
    ("training", "Training"),
    ("success_by_grid", "Success by grid size"),
    ("steps_by_grid", "Steps by grid size"),
    ("context", "Success by context length"),
    ("comparisons", "Pairwise comparisons"),
    ("power", "Power"),
    ("ranking", "Ranking"),
)
METHODS = (
    ("unit", "Unit of replication"),
    ("bootstrap", "Intervals"),
    ("permutation", "p-values"),
    ("holm", "Multiple comparisons"),
    ("ranking", "Ranking"),
    ("prob_improvement", "Probability of improvement"),
    ("cohens_d", "Cohen's d"),
    ("power", "Power"),
)
MAX_LISTED_PAIRS = 6
"""beyond this many unresolved pairs in a grid, the findings count them and Table 5 lists them"""
MODEL_STEPS = ("train", "evaluate")
"""the steps that train and evaluate one model: the throughput figure counts their core time"""
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


def write(
    params_path: Path,
    stats_dir: Path,
    tables_dir: Path,
    figures_dir: Path,
    attention_jsons,
    timings: dict[str, float] | None,
    out: Path,
) -> None:
    params_path, stats_dir, tables_dir, out = map(Path, (params_path, stats_dir, tables_dir, out))
    params = load(params_path)
    methods = json.loads((stats_dir / "methods.json").read_text())
    sections = [
        "# Positional encodings and length generalization in Decision Transformers: report",
        f"Code version: `{code_version(params_path)}`. Generated by `dtpe report` from the "
        "pipeline's outputs.",
        "## Findings\n\n" + findings(params, stats_dir, methods),
        "## Statistical methods\n\n" + methods_section(methods),
        "## Figures\n\n" + figures_section(Path(figures_dir), out.parent, methods),
        "## Tables\n\n" + tables_section(tables_dir),
        "## Shifting the global timestep t\n\n"
        + translation_section(attention_jsons, params.study.variants),
        "## Looking at episodes\n\n" + episodes_section(Path(figures_dir), out.parent),
        "## Wall time per step\n\n"
        + timings_section(own_steps(timings, params.study), params.compute.threads),
        "## Parameters\n\n" + params_section(params_path),
    ]
    atomic.write_text(out, "\n\n".join(sections) + "\n")


def params_section(params_path: Path) -> str:
    """Each file of the run's params, the overlay first and then its bases, as written."""
    return "\n\n".join(
        f"`{path.name}`{' (the base of the file above)' if i else ''}:\n\n"
        f"```yaml\n{path.read_text().rstrip()}\n```"
        for i, path in enumerate(chain(params_path))
    )


def code_version(params_path: Path) -> str:
    """The commit, with -dirty if the package code or the params files differ from it; the
    pipeline's own outputs, tracked and rewritten while it runs, do not count."""

    def git(*args):
        done = subprocess.run(
            ["git", *args],
            cwd=params_path.resolve().parent,
            capture_output=True,
            text=True,
            timeout=30,
        )
        return done.stdout.strip() if done.returncode == 0 else None

    try:
        head = git("rev-parse", "--short", "HEAD")
        files = [str(path.resolve()) for path in chain(params_path)]
        changed = git("status", "--porcelain", "--", "src", *files)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    if not head:
        return "unknown"
    return f"{head}-dirty" if changed else head


def level(methods: dict) -> str:
    return f"{100 * methods['confidence']:g} %"


def findings(params, stats_dir: Path, methods: dict) -> str:
    """Per grid size what the intervals say, then the ranking, power, mechanisms, the t/k
    confound and what is reproducible."""
    success = pd.read_csv(stats_dir / "success_by_grid.csv")
    comparisons = pd.read_csv(stats_dir / "comparisons.csv")
    power = pd.read_csv(stats_dir / "power.csv").set_index("grid_size")
    primary = comparisons[comparisons.primary.astype(bool)]
    size = params.data.train_size
    intro = (
        f"Models were trained on {grid_label(size)} mazes only, {seeds(success.n_seeds)} seeds "
        f"per variant; every larger grid tests length generalization. Means carry their "
        f"{level(methods)} bootstrap CI over seeds and layouts; a difference between two "
        'variants is resolved only where its CI excludes 0. "Significant" means a '
        f"Holm-adjusted p below α = {methods['alpha']:g}; the smallest p the design can give is "
        "stated beside it."
    )
    per_grid = "\n".join(
        grid_finding(
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
            intro,
            "### What the intervals say, per grid size\n\n" + per_grid,
            "### Ranking\n\n"
            + ranking_text(pd.read_csv(stats_dir / "ranking.csv"), power, methods),
            "### Power\n\n" + power_text(power, methods),
            "### Mechanisms\n\n"
            + context_text(pd.read_csv(stats_dir / "context.csv"))
            + "\n\n"
            + confound_text(params.study.variants),
            "### What is reproducible\n\n"
            + reproducible_text(pd.read_csv(stats_dir / "numerics.csv")),
        ]
    )


def grid_finding(
    grid: int, success: pd.DataFrame, pairs: pd.DataFrame, power: pd.Series, methods: dict
) -> str:
    """One bullet: informative or at the floor, each variant's mean [CI], the pairs whose CI
    resolves a direction with Holm p beside the smallest possible p, and those it leaves open."""
    if power.informative:
        standing = f"informative (best mean {power.best_pct:.1f} % ≥ {methods['floor_pct']:g} %)"
    else:
        standing = (
            f"at the floor (best mean {power.best_pct:.1f} % < {methods['floor_pct']:g} %): every "
            "variant fails nearly every maze, so this grid says nothing about encodings"
        )
    means = "; ".join(
        f"{row.variant} {mean_interval(row.success_pct_mean, row.ci_low_pct, row.ci_high_pct)}"
        for row in success.itertuples()
    )
    resolved = pairs[pairs.verdict != UNRESOLVED]
    open_pairs = pairs[pairs.verdict == UNRESOLVED]
    text = [f"- **{grid_label(grid)}**: {standing}. Mean success: {means}."]
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
            "difference (Table 5)."
        )
    elif len(open_pairs):
        text.append(
            "They resolve no difference for "
            + "; ".join(
                f"{row.variant_a} − {row.variant_b} "
                f"{with_interval(row.diff_pct, row.ci_low_pct, row.ci_high_pct, sign='+')}"
                for row in open_pairs.itertuples()
            )
            + " (points, a − b [CI]; Table 5 has every p)"
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
    significant = ", significant" if pd.notna(row.p_holm) and row.p_holm < methods["alpha"] else ""
    return (
        f"{row.variant_a} − {row.variant_b} = {row.diff_pct:+.1f} points ({interval}, "
        f"Holm p {p_value(row.p_holm)}{significant}, smallest possible p {p_value(row.p_min)})"
    )


def ranking_text(ranking: pd.DataFrame, power: pd.DataFrame, methods: dict) -> str:
    """Per grid size the first, the leading group and the variants resolved below the first
    with their gaps (Table 7); floor grids are marked, as they rank nothing."""
    lines = [f"Table 7; {methods['ranking']} Gaps are first − variant in points [CI]."]
    for size, rows in ranking.groupby("grid_size", sort=True):
        firsts = rows[rows["rank"] == 1]
        line = (
            f"- {grid_label(size)}{'' if power.loc[size].informative else ' (at the floor)'}: "
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


def power_text(power: pd.DataFrame, methods: dict) -> str:
    lines = [methods["power"]]
    for grid, row in power.iterrows():
        if pd.isna(row.mde_pct):
            lines.append(
                f"- {grid_label(grid)}: {row.n_seeds:.0f} seeds, no spread between seeds: "
                "power undefined."
            )
            continue
        lines.append(
            f"- {grid_label(grid)}{'' if row.informative else ' (at the floor)'}: seed SD "
            f"{row.seed_sd_pct:.1f} points with {row.n_seeds:.0f} seeds per variant; the "
            f"smallest detectable difference is {row.mde_pct:.1f} points, and detecting 10 "
            f"points needs {row.seeds_for_10pts:.0f} seeds per variant; "
            f"{methods['study_seeds']} seeds per variant (the study's count) exceed "
            f"{row.chance_gap_pct:.1f} points between two equal variants in "
            f"{100 * methods['alpha']:g} % of comparisons."
        )
    return "\n".join(lines)


def context_text(context: pd.DataFrame) -> str:
    """Success averaged over grid sizes at each context beyond the training one (Table 4)."""
    lines = [
        "Context length (Table 4; success averaged over grid sizes, mean ± std over seeds; N/A: "
        "its k encoding cannot index that far). Figure 4 and the translation check show how each "
        "variant attends."
    ]
    for (ctx, multiple), rows in context.groupby(["context", "context_multiple"], sort=True):
        cells = "; ".join(
            f"{row.variant} {mean_std(row.success_pct_mean, row.success_pct_std)}"
            for row in rows.itertuples()
        )
        lines.append(f"- {ctx} timesteps ({multiple:g}× the training context): {cells}.")
    return "\n".join(lines)


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


def methods_section(methods: dict) -> str:
    lines = [f"- **{title}.** {methods[key]}" for key, title in METHODS]
    lines.append(
        f"- **Levels.** Intervals at {level(methods)}; α = {methods['alpha']:g}; a grid is "
        f"informative where its best variant reaches {methods['floor_pct']:g} % success."
    )
    return "\n".join(lines)


def figures_section(figures_dir: Path, report_dir: Path, methods: dict) -> str:
    blocks = []
    for name, template in FIGURES:
        caption = template.format(level=level(methods), alpha=methods["alpha"])
        link = Path(os.path.relpath(figures_dir / f"{name}.png", report_dir)).as_posix()
        blocks.append(f"![{caption}]({link})\n\n*{caption}* ([PDF]({link[:-4]}.pdf))")
    return "\n\n".join(blocks)


def tables_section(tables_dir: Path) -> str:
    return "\n\n".join(
        f"### Table {i}. {title}\n\n{(tables_dir / f'{name}.md').read_text().rstrip()}"
        for i, (name, title) in enumerate(TABLES, start=1)
    )


def translation_section(attention_jsons, variants: list[str]) -> str:
    """Per variant and seed: the same windows replayed with the global timestep t shifted by
    `shift`, how much the final-layer attention and the action distribution moved, as the
    attention stage wrote them."""
    runs = sorted(
        (json.loads(Path(p).read_text()) for p in attention_jsons), key=lambda r: r["seed"]
    )
    rows = []
    for variant in [e for e in variants if any(r["variant"] == e for r in runs)]:
        checks = [r["translation"] for r in runs if r["variant"] == variant]
        rows.append(
            {
                "Variant": variant,
                "Seeds": ", ".join(str(r["seed"]) for r in runs if r["variant"] == variant),
                "Shift of t": str(checks[0]["shift"]),
                "Attention, mean abs. change": per_seed(checks, "mean_abs_diff"),
                "Attention, max abs. change": per_seed(checks, "max_abs_diff"),
                "Actions, mean TV distance": per_seed(checks, "action_tv_mean"),
            }
        )
    if not rows:
        return "No attention results."
    note = (
        "The same windows of states replayed with every global timestep t moved by the shift, "
        "beyond the range training saw, while the in-window index k stays 0..L-1: how much the "
        "final-layer attention weights and the action distribution (total variation distance) "
        "change, one value per seed in the order of the seeds column. 0 means the model ignores "
        "t; in the study's three models t is the same sinusoid whatever encodes k."
    )
    return note + "\n\n" + pd.DataFrame(rows).to_markdown(index=False, disable_numparse=True)


def per_seed(checks: list[dict], key: str) -> str:
    return ", ".join(f"{c[key]:.1e}" for c in checks)


def episodes_section(figures_dir: Path, report_dir: Path) -> str:
    """Links to what `dtpe explore` wrote beside the figures."""

    def link(name):
        return Path(os.path.relpath(figures_dir / name, report_dir)).as_posix()

    gifs = sorted((figures_dir / "episodes").glob("N*.gif"), key=lambda p: int(p.stem[1:]))
    text = [
        f"- [explorer.html]({link('explorer.html')}): step through the evaluation's own "
        "episodes (maze, path, action probabilities, return-to-go, attention per layer and "
        "head); open the file in a browser, no server needed.",
        f"- [embeddings.png]({link('embeddings.png')}): cosine similarity of the k and t "
        "position embeddings.",
    ]
    if gifs:
        text.append(
            "- Episode animations, a success and a failure per variant: "
            + ", ".join(f"[{g.stem[1:]}×{g.stem[1:]}]({link('episodes/' + g.name)})" for g in gifs)
            + "."
        )
    return "\n".join(text)


def own_steps(timings: dict[str, float] | None, study) -> dict[str, float] | None:
    """The run's own steps: a model's (`train/<model>`, ...) only for the models of its params,
    since benchmarks/ also keeps the steps of models trained beside the run (more seeds on their
    way into it)."""
    if not timings:
        return timings
    models = {names.model_name(v, s) for v in study.variants for s in study.seeds}
    return {
        step: seconds
        for step, seconds in timings.items()
        if "/" not in step or step.split("/", 1)[1] in models
    }


def timings_section(timings: dict[str, float] | None, threads: int) -> str:
    if not timings:
        return "Wall time: not recorded (no Snakemake benchmark files for this run)."
    rows = [
        {"Step": step, "Wall time (s)": f"{seconds:.1f}"}
        for step, seconds in sorted(timings.items())
    ]
    total = sum(timings.values())
    rows.append({"Step": "total (sum over jobs)", "Wall time (s)": f"{total:.1f}"})
    models = sum(step.startswith("train/") for step in timings)
    per_model = sum(v for k, v in timings.items() if k.split("/")[0] in MODEL_STEPS)
    cores = "one core" if threads == 1 else f"{threads} cores"
    rate = (
        f" Training and evaluation jobs run on {cores} each (compute.threads {threads}), so a "
        f"model's core-seconds are its wall time × {threads}: {models} models trained and fully "
        f"evaluated ({', '.join(MODEL_STEPS)}) at {3600 * models / (threads * per_model):.1f} "
        f"models per core-hour; with every step of the run, {3600 * models / total:.1f} models "
        "per hour of wall time summed over jobs."
        if models and per_model
        else ""
    )
    return f"From Snakemake's benchmark files.{rate}\n\n" + pd.DataFrame(rows).to_markdown(
        index=False, disable_numparse=True
    )
