"""The study's five tables (PROTOCOL §6) from the statistics step's CSVs, each written three ways:
`{name}.csv` keeps the numbers (mean and std in their own columns, full precision) so that it
can be read back; `{name}.md` and `{name}.tex` show them as "mean ± std" with a caption.

In the shown tables "N/A" means the encoding cannot run there (never 0), and "–" a statistic
that is undefined (one seed, or no spread between seeds).

Tables: training, success_by_grid, steps_by_grid, context, significance.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

NOT_APPLICABLE = "N/A"
UNDEFINED = "–"
LATEX_SPECIALS = str.maketrans({c: "\\" + c for c in "&%$#_{}"})
# pdflatex has no glyphs for these in text mode; math mode draws them everywhere.
LATEX_SYMBOLS = str.maketrans(
    {
        "±": r"$\pm$",
        "−": r"$-$",
        "×": r"$\times$",
        "Δ": r"$\Delta$",
        "∞": r"$\infty$",
        "<": r"$<$",
        "–": "--",
    }
)


@dataclass
class Table:
    name: str
    caption: str
    numbers: pd.DataFrame
    shown: pd.DataFrame


def write(params, stats_dir: Path, out_dir: Path) -> None:
    out_dir = Path(out_dir)
    for build in (training, success_by_grid, steps_by_grid, context, significance):
        table = build(params, Path(stats_dir))
        table.numbers.to_csv(out_dir / f"{table.name}.csv", index=False)
        (out_dir / f"{table.name}.md").write_text(markdown(table))
        (out_dir / f"{table.name}.tex").write_text(latex(table))


def markdown(table: Table) -> str:
    # numparse off: tabulate would otherwise turn "+3.0" into 3 and "1.50" into 1.5
    return f"{table.caption}\n\n{table.shown.to_markdown(index=False, disable_numparse=True)}\n"


def latex(table: Table) -> str:
    tex = table.shown.to_latex(
        index=False,
        escape=True,
        caption=table.caption.translate(LATEX_SPECIALS),
        label=f"tab:{table.name}",
    )
    return tex.translate(LATEX_SYMBOLS)


# Cell formats -----------------------------------------------------------------------------


def mean_std(mean: float, std: float, digits: int = 1) -> str:
    if math.isnan(mean):
        return NOT_APPLICABLE
    return f"{mean:.{digits}f}" if math.isnan(std) else f"{mean:.{digits}f} ± {std:.{digits}f}"


def signed(value: float, digits: int = 1) -> str:
    return NOT_APPLICABLE if math.isnan(value) else f"{value:+.{digits}f}"


def effect(d: float) -> str:
    if math.isnan(d):
        return UNDEFINED
    return ("+∞" if d > 0 else "−∞") if math.isinf(d) else f"{d:+.2f}"


def p_value(p: float) -> str:
    if math.isnan(p):
        return UNDEFINED
    return "<0.001" if p < 0.001 else f"{p:.3f}"


def yes_no(flag) -> str:
    return UNDEFINED if pd.isna(flag) else ("yes" if flag else "no")


def grid_label(size: int) -> str:
    return f"{size}×{size}"


# Tables -----------------------------------------------------------------------------------


def read(stats_dir: Path, name: str) -> pd.DataFrame:
    return pd.read_csv(stats_dir / f"{name}.csv")


def seeds(stats: pd.DataFrame) -> str:
    counts = sorted(stats.n_seeds.unique())
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def others(params) -> list[str]:
    return [e for e in params.study.encodings if e != params.stats.reference]


def by_encoding(frame: pd.DataFrame, index: str, value: str, encodings: list[str]) -> pd.DataFrame:
    """Wide numbers: one row per `index`, columns `{encoding}_mean` and `{encoding}_std` of
    `value`."""
    wide = frame.pivot(index=index, columns="encoding", values=[f"{value}_mean", f"{value}_std"])
    columns = {
        f"{e}_{stat}": wide[(f"{value}_{stat}", e)] for e in encodings for stat in ("mean", "std")
    }
    return pd.DataFrame(columns)


def shown_by_encoding(numbers: pd.DataFrame, encodings: list[str], digits: int = 1) -> dict:
    return {
        e: [mean_std(m, s, digits) for m, s in zip(numbers[f"{e}_mean"], numbers[f"{e}_std"])]
        for e in encodings
    }


def training(params, stats_dir: Path) -> Table:
    numbers = (
        read(stats_dir, "training").set_index("encoding").loc[params.study.encodings].reset_index()
    )
    shown = pd.DataFrame(
        {
            "Encoding": numbers.encoding,
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
        "Training metrics at the final epoch per encoding, mean ± std over seeds: "
        "train and validation loss, "
        "validation success % on validation layouts of the training grid size, "
        "overfitting gap (validation minus "
        "train loss). Test success: the final weights on every layout of the training size's "
        "test split, held out "
        "from training and validation; min: the worst seed."
    )
    return Table("training", caption, numbers, shown)


def success_by_grid(params, stats_dir: Path) -> Table:
    encodings, reference = params.study.encodings, params.stats.reference
    stats = read(stats_dir, "success_by_grid")
    numbers = by_encoding(stats, "grid_size", "success_pct", encodings)
    for other in others(params):
        numbers[f"{reference}_minus_{other}"] = (
            numbers[f"{reference}_mean"] - numbers[f"{other}_mean"]
        )
    numbers = numbers.reset_index()
    shown = pd.DataFrame(
        {"Grid": numbers.grid_size.map(grid_label), **shown_by_encoding(numbers, encodings)}
    )
    for other in others(params):
        shown[f"{reference} − {other} (pp)"] = numbers[f"{reference}_minus_{other}"].map(signed)
    caption = (
        f"Success % per grid size and encoding, mean ± std over {seeds(stats)} seeds, "
        f"and {reference}'s "
        "difference to each other encoding in percentage points."
    )
    return Table("success_by_grid", caption, numbers, shown)


def steps_by_grid(params, stats_dir: Path) -> Table:
    encodings, reference = params.study.encodings, params.stats.reference
    stats = read(stats_dir, "steps_by_grid")
    numbers = by_encoding(stats, "grid_size", "steps", encodings)
    ref = stats[stats.encoding == reference].set_index("grid_size")
    numbers["bfs_optimal_steps"] = ref.optimal_steps_mean
    numbers[f"{reference}_ratio_to_optimal_mean"] = ref.ratio_to_optimal_mean
    numbers[f"{reference}_ratio_to_optimal_std"] = ref.ratio_to_optimal_std
    numbers = numbers.reset_index()
    shown = pd.DataFrame(
        {"Grid": numbers.grid_size.map(grid_label), **shown_by_encoding(numbers, encodings)}
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
        "Steps per episode per grid size and encoding, mean ± std over seeds; "
        f"{stats.note.iloc[0]}. "
        f"BFS optimum: mean optimal steps of the suite. {reference} / BFS: "
        "mean steps over mean optimal "
        "steps, per seed, then mean ± std."
    )
    return Table("steps_by_grid", caption, numbers, shown)


def context(params, stats_dir: Path) -> Table:
    encodings, reference = params.study.encodings, params.stats.reference
    stats = read(stats_dir, "context")
    numbers = by_encoding(stats, "context", "success_pct", encodings)
    applicable = stats.pivot(index="context", columns="encoding", values="applicable")
    for e in encodings:
        numbers[f"{e}_applicable"] = applicable[e]
    for other in others(params):
        # NaN where either side is N/A: a difference to a model that cannot run is no number
        numbers[f"{reference}_minus_{other}"] = (
            numbers[f"{reference}_mean"] - numbers[f"{other}_mean"]
        )
    multiple = stats.groupby("context").context_multiple.first()
    numbers = numbers.assign(context_multiple=multiple).reset_index()
    shown = pd.DataFrame(
        {
            "Context": [f"{c} ({m:g}×)" for c, m in zip(numbers.context, numbers.context_multiple)],
            **shown_by_encoding(numbers, encodings),
        }
    )
    for other in others(params):
        shown[f"{reference} − {other} (pp)"] = numbers[f"{reference}_minus_{other}"].map(signed)
    caption = (
        "Success % averaged over grid sizes per context length "
        "(timesteps; multiple of the training context) "
        f"and encoding, mean ± std over seeds, and {reference}'s difference in percentage points. "
        "N/A: the encoding cannot index that far (not run, not counted as failure)."
    )
    return Table("context", caption, numbers, shown)


def significance(params, stats_dir: Path) -> Table:
    stats = read(stats_dir, "tests")
    numbers = stats[
        [
            "grid_size",
            "reference",
            "other",
            "success_diff_pct",
            "cohens_d",
            "n_seeds_reference",
            "n_seeds_other",
            "seed_test_p",
            "seed_test_significant",
            "n_layouts",
            "layout_test_p",
            "layout_test_significant",
        ]
    ]
    shown = pd.DataFrame(
        {
            "Grid": numbers.grid_size.map(grid_label),
            "Comparison": numbers.reference + " vs " + numbers.other,
            "Δ success (pp)": numbers.success_diff_pct.map(signed),
            "Cohen's d": numbers.cohens_d.map(effect),
            "p (Welch, seeds)": numbers.seed_test_p.map(p_value),
            f"p < {params.stats.alpha:g}": numbers.seed_test_significant.map(yes_no),
            "p (Wilcoxon, layouts)": numbers.layout_test_p.map(p_value),
            f"p < {params.stats.alpha:g} (paired)": numbers.layout_test_significant.map(yes_no),
        }
    )
    caption = (
        f"Per grid size, {params.stats.reference} against each other encoding. "
        "Cohen's d with the pooled "
        f"std of per-seed success %. Tests: {stats.seed_test.iloc[0]}; paired over the shared "
        f"evaluation layouts: {stats.layout_test.iloc[0]}. "
        f"Significant: p < {params.stats.alpha:g}. "
        f"{UNDEFINED}: undefined (one seed, or no spread between seeds)."
    )
    return Table("significance", caption, numbers, shown)
