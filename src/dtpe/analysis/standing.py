"""Where each variant of a run stands, as its stats stage wrote it: success at the training size
and at the largest, with their intervals, with the whole episode in the window where the run
plays it (whole_episode.csv) and at the training context otherwise (success_by_grid.csv); its
median success horizon at that context; and, of its models, how many an encoding switched off
moves (position_use.csv). A run's first screen and the leaderboard render these rows; nothing
here is computed but picked."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

READS = ("whole_episode", "success_by_grid", "horizon", "position_use")
"""the stats files a standing is picked from"""
COLUMNS = [
    "variant",
    "context",
    "trained_size",
    "trained_pct",
    "trained_low_pct",
    "trained_high_pct",
    "largest_size",
    "largest_pct",
    "largest_low_pct",
    "largest_high_pct",
    "horizon",
    "moved",
]


def rows(
    stats_dir: Path, variants: list[str], reference: str, train_size: int, train_context: int
) -> pd.DataFrame:
    """One row per variant of `variants` and per scaling of `reference` the run played, ranked
    by success at the largest size (a variant that cannot index the context last, NaN)."""
    stats_dir = Path(stats_dir)
    success = pd.read_csv(stats_dir / "whole_episode.csv")
    if len(success):
        context = int(success.context.iloc[0])
    else:
        success, context = pd.read_csv(stats_dir / "success_by_grid.csv"), train_context
    scalings = [v for v in dict.fromkeys(success.variant) if v.startswith(reference + "+")]
    largest = int(success.grid_size.max())
    horizon = pd.read_csv(stats_dir / "horizon.csv")
    horizon = horizon[horizon.context == context].set_index("variant").horizon_median
    moved = moved_by(pd.read_csv(stats_dir / "position_use.csv"))
    out = []
    for variant in [*variants, *scalings]:
        mine = success[success.variant == variant].set_index("grid_size")

        def at(size, column):
            return float(mine[column].get(size, float("nan")))

        out.append(
            {
                "variant": variant,
                "context": context,
                "trained_size": train_size,
                "trained_pct": at(train_size, "success_pct_mean"),
                "trained_low_pct": at(train_size, "ci_low_pct"),
                "trained_high_pct": at(train_size, "ci_high_pct"),
                "largest_size": largest,
                "largest_pct": at(largest, "success_pct_mean"),
                "largest_low_pct": at(largest, "ci_low_pct"),
                "largest_high_pct": at(largest, "ci_high_pct"),
                "horizon": float(horizon.get(variant, float("nan"))),
                "moved": moved.get(variant, ""),
            }
        )
    frame = pd.DataFrame(out, columns=COLUMNS)
    return frame.sort_values("largest_pct", ascending=False, kind="stable", na_position="last")


def moved_by(use: pd.DataFrame) -> dict[str, str]:
    """{variant: "k 3/5, t 0/5"}: of its models, how many its k (t) encoding switched off
    moves (an exact McNemar test, position_use) at the largest size it was switched off at."""
    if not len(use):
        return {}
    largest = use[use.grid_size == use.grid_size.max()]
    return {
        variant: ", ".join(f"{r.off} {r.models_using}/{r.seeds}" for r in rows.itertuples())
        for variant, rows in largest.groupby("variant", sort=False)
    }
