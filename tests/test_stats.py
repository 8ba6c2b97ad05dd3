"""Statistics on synthetic sweeps with known answers: means and stds by hand, Cohen's d, the
named tests against scipy called directly, N/A that stays N/A, and one seed without a crash."""

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dtpe import stats

ENCODINGS = ["learned", "sinusoidal", "rope"]
SEEDS = [1, 2, 3]
SIZES = [8, 10]
LAYOUTS = 5
CONTEXTS = [6, 9]  # 6 is the training context; the learned table cannot run at 9
# Layouts solved per (encoding, size), one count per seed: layout i succeeds if i < count.
SOLVED = {
    ("learned", 8): [5, 5, 5],
    ("sinusoidal", 8): [5, 5, 5],
    ("rope", 8): [5, 5, 5],
    ("learned", 10): [2, 1, 0],
    ("sinusoidal", 10): [5, 4, 3],
    ("rope", 10): [5, 4, 3],
}


def episodes(encoding, seed_index, seed, context, applicable=True) -> pd.DataFrame:
    rows = []
    for size in SIZES:
        for layout in range(LAYOUTS):
            success = layout < SOLVED[(encoding, size)][seed_index]
            optimal = layout + 3
            rows.append(
                {
                    "encoding": encoding,
                    "seed": seed,
                    "grid_size": size,
                    "context": context,
                    "layout_id": layout,
                    "success": int(success) if applicable else np.nan,
                    "steps": (optimal + 1 if success else 5 * size) if applicable else np.nan,
                    "optimal_steps": optimal,
                    "applicable": applicable,
                }
            )
    return pd.DataFrame(rows)


def metrics(encoding_index, seed) -> pd.DataFrame:
    epochs = np.arange(1, 4)
    train = 1.0 / epochs + 0.1 * encoding_index + 0.01 * seed
    val = train + 0.05
    return pd.DataFrame(
        {
            "epoch": epochs,
            "train_loss": train,
            "val_loss": val,
            "val_success": 0.2 * epochs + 0.01 * seed,
            "overfit_gap": val - train,
            "seconds": 2.0,
        }
    )


def attention(encoding, seed, width=4) -> dict:
    n = 3 * width
    heat = np.tril(np.ones((n, n)))
    heat /= heat.sum(1, keepdims=True)
    applicable = encoding != "learned"
    return {
        "encoding": encoding,
        "seed": seed,
        "grid_size": 10,
        "distance_decay": [float(np.diagonal(heat, -d).mean()) for d in range(n)],
        "heatmap": heat.tolist(),
        "translation": {
            "applicable": applicable,
            "mean_abs_diff": 1e-6 * seed if applicable else None,
            "max_abs_diff": 1e-5 * seed if applicable else None,
            "shift": 20,
        },
    }


def write_inputs(root, seeds=SEEDS) -> dict:
    """The per-model files the pipeline's earlier steps write, for every encoding and seed."""
    paths = {"grid": [], "context": [], "metrics": [], "attention": []}
    for e_index, encoding in enumerate(ENCODINGS):
        for s_index, seed in enumerate(seeds):
            name = f"{encoding}_s{seed}"
            for sweep in ("grid", "context"):
                path = root / "eval" / sweep / f"{name}.csv"
                path.parent.mkdir(parents=True, exist_ok=True)
                contexts = CONTEXTS[:1] if sweep == "grid" else CONTEXTS
                frame = pd.concat(
                    [
                        episodes(
                            encoding,
                            s_index,
                            seed,
                            c,
                            applicable=not (encoding == "learned" and c > 6),
                        )
                        for c in contexts
                    ]
                )
                frame.to_csv(path, index=False)
                paths[sweep].append(path)
            path = root / "train" / name / "metrics.csv"
            path.parent.mkdir(parents=True)
            metrics(e_index, seed).to_csv(path, index=False)
            (path.parent / "test.json").write_text(
                json.dumps({"split": "test", "success": 0.9 + 0.01 * s_index})
            )
            paths["metrics"].append(path)
            path = root / "attention" / f"{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(attention(encoding, seed)))
            paths["attention"].append(path)
    return paths


def synthetic_params(params, seeds=SEEDS):
    return dataclasses.replace(
        params, study=dataclasses.replace(params.study, encodings=ENCODINGS, seeds=seeds)
    )


def run_stats(tmp_path, params, seeds=SEEDS):
    paths = write_inputs(tmp_path / "results", seeds)
    out = tmp_path / "stats"
    out.mkdir()
    stats.run(
        synthetic_params(params, seeds), paths["grid"], paths["context"], paths["metrics"], out
    )
    return out, paths


@pytest.fixture
def stats_dir(tmp_path, tiny_params):
    return run_stats(tmp_path, tiny_params)[0]


def read(stats_dir, name):
    return pd.read_csv(stats_dir / f"{name}.csv")


def test_success_mean_and_std_over_seeds(stats_dir):
    table = read(stats_dir, "success_by_grid").set_index(["grid_size", "encoding"])
    assert list(table.loc[10].index) == ENCODINGS  # params order, not alphabetical
    # rope at 10x10 solves 5, 4, 3 of 5 layouts: 100, 80, 60 %
    assert table.loc[(10, "rope"), "success_pct_mean"] == pytest.approx(80.0)
    assert table.loc[(10, "rope"), "success_pct_std"] == pytest.approx(20.0)
    assert table.loc[(10, "learned"), "success_pct_mean"] == pytest.approx(20.0)
    assert table.loc[(8, "learned"), "success_pct_std"] == 0.0
    assert (table.n_seeds == 3).all()


def test_steps_count_failures_at_the_cap_and_ratio_per_seed(stats_dir):
    table = read(stats_dir, "steps_by_grid").set_index(["grid_size", "encoding"])
    # learned, 10x10, seed 1 solves layouts 0-1 (4, 5 steps), fails 2-4 (cap 50 each)
    per_seed_steps = [(4 + 5 + 150) / 5, (4 + 200) / 5, 250 / 5]
    optimal = np.mean([3, 4, 5, 6, 7])
    row = table.loc[(10, "learned")]
    assert row.steps_mean == pytest.approx(np.mean(per_seed_steps))
    assert row.steps_std == pytest.approx(np.std(per_seed_steps, ddof=1))
    assert row.optimal_steps_mean == pytest.approx(optimal)
    assert row.ratio_to_optimal_mean == pytest.approx(np.mean(per_seed_steps) / optimal)
    assert "cap" in row.note


def test_context_not_applicable_stays_nan(stats_dir):
    table = read(stats_dir, "context").set_index(["context", "encoding"])
    assert not table.loc[(9, "learned"), "applicable"]
    assert math.isnan(table.loc[(9, "learned"), "success_pct_mean"])
    assert table.loc[(9, "rope"), "applicable"]
    # rope, averaged over sizes 8 (100 %) and 10 (80 % mean): 90 %
    assert table.loc[(9, "rope"), "success_pct_mean"] == pytest.approx(90.0)
    assert table.loc[(9, "rope"), "context_multiple"] == pytest.approx(1.5)


def test_training_final_epoch_from_folder_names(stats_dir):
    table = read(stats_dir, "training").set_index("encoding")
    seeds = np.array(SEEDS)
    assert table.loc["rope", "train_loss_mean"] == pytest.approx(
        np.mean(1 / 3 + 0.2 + 0.01 * seeds)
    )
    assert table.loc["rope", "val_success_pct_mean"] == pytest.approx(
        100 * np.mean(0.6 + 0.01 * seeds)
    )
    assert table.loc["learned", "train_seconds_mean"] == pytest.approx(6.0)
    assert table.loc["learned", "epoch_mean"] == 3
    assert table.loc["rope", "test_success_pct_mean"] == pytest.approx(
        100 * np.mean(0.9 + 0.01 * np.arange(len(SEEDS)))
    )
    assert table.loc["rope", "test_success_pct_min"] == pytest.approx(90.0)


def test_effect_size_and_named_tests_match_scipy(stats_dir):
    table = read(stats_dir, "tests").set_index(["grid_size", "other"])
    row = table.loc[(10, "learned")]
    rope, learned = [100.0, 80.0, 60.0], [40.0, 20.0, 0.0]
    assert row.success_diff_pct == pytest.approx(60.0)
    assert row.cohens_d == pytest.approx(60.0 / 20.0)  # both stds are 20
    assert "Welch" in row.seed_test and "Wilcoxon" in row.layout_test
    assert row.seed_test_p == pytest.approx(sps.ttest_ind(rope, learned, equal_var=False).pvalue)
    per_layout_rope = [1, 1, 1, 2 / 3, 1 / 3]
    per_layout_learned = [2 / 3, 1 / 3, 0, 0, 0]
    assert row.layout_test_p == pytest.approx(
        sps.wilcoxon(per_layout_rope, per_layout_learned, zero_method="zsplit").pvalue
    )
    assert bool(row.seed_test_significant) == (row.seed_test_p < 0.05)
    same = table.loc[(10, "sinusoidal")]
    assert same.cohens_d == 0.0 and same.layout_test_p == 1.0  # identical on every layout


def test_no_spread_gives_undefined_not_significant(stats_dir):
    row = read(stats_dir, "tests").set_index(["grid_size", "other"]).loc[(8, "learned")]
    assert math.isnan(row.cohens_d) and math.isnan(row.seed_test_p)
    assert pd.isna(row.seed_test_significant)


def test_cohens_d_sign_and_pooled_std():
    assert stats.cohens_d([1, 2, 3], [4, 5, 6]) == pytest.approx(-3.0)
    # pooled: sqrt((2*1 + 3*var([0,2,4,6])) / 5)
    pooled = math.sqrt((2 * 1 + 3 * np.var([0, 2, 4, 6], ddof=1)) / 5)
    assert stats.cohens_d([1, 2, 3], [0, 2, 4, 6]) == pytest.approx((2 - 3) / pooled)


def test_metrics_json_is_flat_and_valid(stats_dir):
    headline = json.loads((stats_dir / "metrics.json").read_text())
    assert headline["success_rope_N10"] == pytest.approx(80.0)
    assert headline["success_learned_context9"] is None
    assert all(not isinstance(v, (dict, list)) for v in headline.values())


def test_one_seed_runs_with_nan_spread(tmp_path, tiny_params):
    out, _ = run_stats(tmp_path, tiny_params, seeds=[7])
    success = read(out, "success_by_grid")
    assert success.success_pct_std.isna().all() and (success.n_seeds == 1).all()
    tests = read(out, "tests")
    assert tests.seed_test_p.isna().all() and tests.cohens_d.isna().all()
    assert tests.layout_test_p.notna().all()  # layouts still pair up with one seed


def test_metrics_folder_must_name_encoding_and_seed(tmp_path):
    path = tmp_path / "rope" / "metrics.csv"
    path.parent.mkdir()
    metrics(0, 1).to_csv(path, index=False)
    with pytest.raises(ValueError, match="encoding"):
        stats.read_metrics([path])
