"""Statistics over seeds and encodings (PROTOCOL §5.4): tidy CSVs that the tables and figures
read, and metrics.json for `dvc metrics show`.

Success is in percent of episodes. The seed is the unit of every mean ± std (ddof 1, so one
seed gives std NaN), of Cohen's d and of the Welch t-test. The paired test uses the evaluation
layouts, which every model shares: per layout, success averaged over seeds, then the Wilcoxon
signed-rank test between two encodings. A failed episode counts its steps up to the cap.
Episodes an encoding cannot run (applicable False) stay NaN: they are never failures.

Outputs in out_dir: training.csv, success_by_grid.csv, steps_by_grid.csv, context.csv,
tests.csv, metrics.json.
"""

from __future__ import annotations

import json
import math
import re
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats as sps

SEED_TEST = "Welch t-test (scipy.stats.ttest_ind, equal_var=False) on per-seed success %"
LAYOUT_TEST = (
    "Wilcoxon signed-rank (scipy.stats.wilcoxon, zero_method='zsplit') on per-layout success "
    "averaged over seeds"
)
STEPS_NOTE = "failed episodes count their steps up to the cap"
RUN_FOLDER = re.compile(r"(?P<encoding>.+)_s(?P<seed>\d+)")


def run(
    params, grid_csvs: list[Path], context_csvs: list[Path], metrics_csvs: list[Path], out_dir: Path
) -> None:
    encodings = list(params.study.encodings)
    grid = ordered(read_episodes(grid_csvs), encodings)
    context = ordered(read_episodes(context_csvs), encodings)
    results = {
        "training": training(ordered(read_metrics(metrics_csvs), encodings)),
        "success_by_grid": success_by_grid(grid),
        "steps_by_grid": steps_by_grid(grid),
        # The grid sweep runs at the training context, so its context is the 1x of the sweep.
        "context": context_success(context, int(grid.context.iloc[0])),
        "tests": tests(
            grid,
            params.stats.reference,
            [e for e in encodings if e != params.stats.reference],
            params.stats.alpha,
        ),
    }
    out_dir = Path(out_dir)
    for name, frame in results.items():
        frame.to_csv(out_dir / f"{name}.csv", index=False)
    headline = metrics(results)
    (out_dir / "metrics.json").write_text(json.dumps(headline, indent=2) + "\n")


def read_episodes(paths) -> pd.DataFrame:
    """One row per evaluation episode, from every model's sweep CSV."""
    return pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)


def read_metrics(paths) -> pd.DataFrame:
    """Per-epoch training metrics of every run, with the final weights' success on the test
    split (test.json beside metrics.csv) on every row; encoding and seed come from the run's
    folder name `{encoding}_s{seed}`, since metrics.csv does not repeat them."""
    frames = []
    for path in map(Path, paths):
        run_name = RUN_FOLDER.fullmatch(path.parent.name)
        if run_name is None:
            raise ValueError(f"{path}: its folder must be named {{encoding}}_s{{seed}}")
        test = json.loads((path.parent / "test.json").read_text())
        frames.append(
            pd.read_csv(path).assign(
                encoding=run_name["encoding"],
                seed=int(run_name["seed"]),
                test_success=test["success"],
            )
        )
    return pd.concat(frames, ignore_index=True)


def ordered(frame: pd.DataFrame, encodings: list[str]) -> pd.DataFrame:
    """Encodings in params order, so every output lists them as the study does."""
    return frame.assign(encoding=pd.Categorical(frame.encoding, categories=encodings))


def over_seeds(per_seed: pd.DataFrame, keys: list[str], columns: list[str]) -> pd.DataFrame:
    """`{column}_mean`, `{column}_std` over seeds per group of `keys`, and n_seeds."""
    groups = per_seed.groupby(keys, observed=True)
    summary = groups[columns].agg(["mean", "std"])
    summary.columns = [f"{column}_{stat}" for column, stat in summary.columns]
    return summary.assign(n_seeds=groups.size()).reset_index()


def training(metrics: pd.DataFrame) -> pd.DataFrame:
    """Final-epoch train loss, validation loss, validation success and overfitting gap per
    encoding, the final weights' test-split success (also its worst seed), and the training
    time of a run."""
    final = metrics.sort_values("epoch").groupby(["encoding", "seed"], observed=True).tail(1)
    seconds = (
        metrics.groupby(["encoding", "seed"], observed=True).seconds.sum().rename("train_seconds")
    )
    per_seed = final.assign(
        val_success_pct=100 * final.val_success, test_success_pct=100 * final.test_success
    ).join(seconds, on=["encoding", "seed"])
    summary = over_seeds(
        per_seed,
        ["encoding"],
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
        per_seed.groupby("encoding", observed=True)
        .test_success_pct.min()
        .rename("test_success_pct_min")
    )
    return summary.join(worst, on="encoding")


def per_seed_success(episodes: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Success % of each seed per group of `keys`; NaN where the encoding could not run."""
    with_pct = episodes.assign(success_pct=100 * episodes.success)
    return with_pct.groupby(keys + ["seed"], observed=True).success_pct.mean().reset_index()


def success_by_grid(grid: pd.DataFrame) -> pd.DataFrame:
    per_seed = per_seed_success(grid[grid.applicable], ["grid_size", "encoding"])
    return over_seeds(per_seed, ["grid_size", "encoding"], ["success_pct"])


def steps_by_grid(grid: pd.DataFrame) -> pd.DataFrame:
    """Mean steps per episode, and its ratio to the mean BFS optimum, per seed then over seeds."""
    per_seed = (
        grid[grid.applicable]
        .groupby(["grid_size", "encoding", "seed"], observed=True)[["steps", "optimal_steps"]]
        .mean()
        .reset_index()
    )
    per_seed["ratio_to_optimal"] = per_seed.steps / per_seed.optimal_steps
    summary = over_seeds(
        per_seed, ["grid_size", "encoding"], ["steps", "optimal_steps", "ratio_to_optimal"]
    )
    return summary.drop(columns="optimal_steps_std").assign(note=STEPS_NOTE)


def context_success(context: pd.DataFrame, train_context: int) -> pd.DataFrame:
    """Success averaged over grid sizes per context; NaN (never 0) where not applicable."""
    per_grid = per_seed_success(context, ["context", "encoding", "grid_size"])
    # skipna=False: a context that runs on some grid sizes only must not average those alone.
    per_seed = (
        per_grid.groupby(["context", "encoding", "seed"], observed=True)
        .success_pct.agg(lambda s: s.mean(skipna=False))
        .reset_index()
    )
    summary = over_seeds(per_seed, ["context", "encoding"], ["success_pct"])
    applicable = context.groupby(["context", "encoding"], observed=True).applicable.all()
    summary = summary.join(applicable, on=["context", "encoding"])
    return summary.assign(context_multiple=summary.context / train_context)


def cohens_d(a, b) -> float:
    """(mean a - mean b) / pooled std (ddof 1): NaN when undefined (one value per group, or no
    spread and no difference), ±inf when the groups differ without any spread."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    squares = ((a - a.mean()) ** 2).sum() + ((b - b.mean()) ** 2).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        pooled = np.sqrt(squares / np.float64(len(a) + len(b) - 2))
        return float(np.float64(a.mean() - b.mean()) / pooled)


def welch_p(a, b) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter(
            "ignore", RuntimeWarning
        )  # degenerate samples give NaN, reported as such
        return float(sps.ttest_ind(a, b, equal_var=False).pvalue)


def wilcoxon_p(a, b) -> float:
    """Paired over layouts. zsplit keeps tied layouts in the ranks (split between signs), so
    all-zero differences give p = 1.0 rather than an error."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return float(sps.wilcoxon(a, b, zero_method="zsplit").pvalue)


def significant(p: float, alpha: float):
    return pd.NA if math.isnan(p) else bool(p < alpha)


def tests(grid: pd.DataFrame, reference: str, others: list[str], alpha: float) -> pd.DataFrame:
    """Per grid size, the reference encoding against each other one."""
    grid = grid[grid.applicable]
    seeds = per_seed_success(grid, ["grid_size", "encoding"]).set_index(
        ["grid_size", "encoding", "seed"]
    )
    layouts = (
        grid.groupby(["grid_size", "layout_id", "encoding"], observed=True)
        .success.mean()
        .unstack("encoding")
    )
    rows = [
        {
            "grid_size": size,
            "reference": reference,
            "other": other,
            **compare(
                seeds.success_pct.loc[(size, reference)],
                seeds.success_pct.loc[(size, other)],
                layouts.loc[size, [reference, other]].dropna(),
                alpha,
            ),
        }
        for size in sorted(grid.grid_size.unique())
        for other in others
    ]
    return pd.DataFrame(rows).astype(
        {"seed_test_significant": "boolean", "layout_test_significant": "boolean"}
    )


def compare(reference: pd.Series, other: pd.Series, layouts: pd.DataFrame, alpha: float) -> dict:
    """Per-seed success % of two encodings, and their per-layout success
    (columns reference, other)."""
    p_seeds = welch_p(reference, other)
    p_layouts = wilcoxon_p(layouts.iloc[:, 0], layouts.iloc[:, 1])
    return {
        "reference_success_pct": reference.mean(),
        "other_success_pct": other.mean(),
        "success_diff_pct": reference.mean() - other.mean(),
        "cohens_d": cohens_d(reference, other),
        "n_seeds_reference": len(reference),
        "n_seeds_other": len(other),
        "seed_test": SEED_TEST,
        "seed_test_p": p_seeds,
        "seed_test_significant": significant(p_seeds, alpha),
        "layout_test": LAYOUT_TEST,
        "n_layouts": len(layouts),
        "layout_test_p": p_layouts,
        "layout_test_significant": significant(p_layouts, alpha),
        "alpha": alpha,
    }


def metrics(results: dict) -> dict:
    """Headline numbers, flat for `dvc metrics show`; undefined values become null."""
    flat = {}
    for row in results["training"].itertuples():
        flat[f"val_success_{row.encoding}"] = row.val_success_pct_mean
        flat[f"test_success_{row.encoding}"] = row.test_success_pct_mean
    for row in results["success_by_grid"].itertuples():
        flat[f"success_{row.encoding}_N{row.grid_size}"] = row.success_pct_mean
    for row in results["context"].itertuples():
        flat[f"success_{row.encoding}_context{row.context}"] = row.success_pct_mean
    for row in results["tests"].itertuples():
        flat[f"cohens_d_{row.reference}_vs_{row.other}_N{row.grid_size}"] = row.cohens_d
        flat[f"p_{row.reference}_vs_{row.other}_N{row.grid_size}"] = row.seed_test_p
    return {key: float(value) if np.isfinite(value) else None for key, value in flat.items()}
