"""Per-episode CSVs name their world and how each episode ended; a reader refuses another
world's results; the committed runs' CSVs carry both columns, added by scripts/name_episodes.py
without changing another byte."""

import importlib.util
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from dtpe import params
from dtpe.steps import episode_csv

ROOT = Path(__file__).resolve().parents[1]
SWEEPS = ("test", "seen", "grid", "context", "reach", "position")


def migration():
    spec = importlib.util.spec_from_file_location(
        "name_episodes", ROOT / "scripts/name_episodes.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def rows(**changed) -> pd.DataFrame:
    base = {
        "variant": "rope",
        "seed": 1,
        "grid_size": 16,
        "context": 32,
        "layout_id": [1, 2, 3],
        "success": [1, 0, 0],
        "steps": [9, 4, 48],
        "optimal_steps": [9, 9, 9],
        "applicable": True,
        "ending": ["success", "failure", "cap"],
    }
    return pd.DataFrame({**base, **changed})


def test_written_rows_name_their_world_last_and_read_back(tmp_path):
    path = tmp_path / "grid.csv"
    episode_csv.write(rows(), "tmaze", path)
    back = pd.read_csv(path)
    assert list(back.columns[-2:]) == episode_csv.NAMED
    assert set(back.world) == {"tmaze"}
    assert back.ending.tolist() == ["success", "failure", "cap"]
    pd.testing.assert_frame_equal(episode_csv.read([path], "tmaze"), back)


def test_another_worlds_results_are_refused_naming_both_worlds(tmp_path):
    path = tmp_path / "grid.csv"
    episode_csv.write(rows(), "tmaze", path)
    with pytest.raises(ValueError, match=r"world tmaze, but params' env.world is memory"):
        episode_csv.read([path], "memory")
    rows().drop(columns="ending").to_csv(tmp_path / "old.csv", index=False)
    with pytest.raises(ValueError, match=r"old.csv: its episodes name no world.*name_episodes"):
        episode_csv.read([tmp_path / "old.csv"], "tmaze")


def test_stats_refuse_another_worlds_results(tmp_path, tiny_params):
    """The reference params are the maze's: a T-Maze run's CSVs are refused before any
    statistic, naming both worlds."""
    import dataclasses

    from test_stats import run_stats

    tmaze = dataclasses.replace(
        tiny_params, env=dataclasses.replace(tiny_params.env, world="tmaze")
    )
    with pytest.raises(
        ValueError, match=r"episodes of the world maze, but params' env.world is tmaze"
    ):
        run_stats(tmp_path, tmaze)


def test_the_migration_adds_the_two_columns_and_nothing_else():
    script = migration()
    old = rows().drop(columns="ending").to_csv(index=False)
    read = pd.read_csv(__import__("io").StringIO(old))
    ends = script.endings(read, {16: 48}, True, Path("x.csv"))
    assert ends == ["success", "failure", "cap"]
    new = script.named(old, "tmaze", ends)
    assert script.unnamed(new) == old
    assert new.splitlines()[0].endswith(",world,ending")
    assert new.splitlines()[2].endswith(",tmaze,failure")
    # a world without failure cells cannot end an unsuccessful episode before its cap
    with pytest.raises(ValueError, match="took 4 steps against the cap 48"):
        script.endings(read, {16: 48}, False, Path("x.csv"))
    na = read.assign(applicable=False, success=np.nan, steps=np.nan)
    assert script.endings(na, {16: 48}, False, Path("x.csv")) == ["", "", ""]


def test_every_committed_episode_names_its_runs_world_and_an_ending():
    """Each committed run's per-episode CSVs end in `world` (its overlay's env.world) and
    `ending` (success, failure or cap; empty where not played)."""
    script, checked = migration(), 0
    for run in [ROOT, *sorted((ROOT / "runs").iterdir())]:
        csvs = [p for s in SWEEPS for p in sorted((run / "results/eval" / s).glob("*.csv"))]
        if not csvs:
            continue
        world = params.load(script.overlay(run)).env.world
        for path in csvs[:: max(1, len(csvs) // 20)]:
            episodes = pd.read_csv(path)
            assert list(episodes.columns[-2:]) == episode_csv.NAMED, path
            assert set(episodes.world) <= {world}, path
            played = episodes[episodes.applicable.astype(bool)]
            assert set(played.ending) <= set(episode_csv.ENDINGS), path
            assert (played.success == (played.ending == "success")).all(), path
            checked += 1
    assert checked > 100
