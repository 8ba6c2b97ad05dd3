"""Statistics on synthetic sweeps with known answers: means and stds by hand, the seed-level
bootstrap's coverage, the exact permutation test's floor, Holm on a textbook example, N/A that
stays N/A, comparisons recomputed independently from the episodes, and one seed without a
crash."""

import dataclasses
import json
import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from dtpe import numerics
from dtpe.analysis import inference, pairwise, stats
from dtpe.steps import episode_csv
from dtpe.world import catalog

WORLD = "maze"
"""the world of params.yaml, which tiny_params shrinks"""

VARIANTS = ["learned", "sinusoidal", "rope"]
ADDED = "alibi"  # a variant added to the study after the others ran
SEEDS = [1, 2, 3]
SIZES = [8, 10]
LAYOUTS = 5
CONTEXTS = [6, 9]  # 6 is the training context; the learned table cannot run at 9
TEST_SOLVED = [10, 9, 8]  # of 10 test layouts, per seed index
# Layouts solved per (variant, size), one count per seed: layout i succeeds if i < count.
SOLVED = {
    ("learned", 8): [5, 5, 5],
    ("sinusoidal", 8): [5, 5, 5],
    ("rope", 8): [5, 5, 5],
    ("learned", 10): [2, 1, 0],
    ("sinusoidal", 10): [5, 4, 3],
    ("rope", 10): [5, 4, 3],
    (ADDED, 8): [4, 5, 5],
    (ADDED, 10): [3, 1, 2],
}


def episodes(variant, seed_index, seed, context, applicable=True) -> pd.DataFrame:
    rows = []
    for size in SIZES:
        for layout in range(LAYOUTS):
            success = layout < SOLVED[(variant, size)][seed_index]
            optimal = layout + 3
            rows.append(
                {
                    "variant": variant,
                    "seed": seed,
                    "grid_size": size,
                    "context": context,
                    "layout_id": layout,
                    "success": int(success) if applicable else np.nan,
                    "steps": (optimal + 1 if success else 5 * size) if applicable else np.nan,
                    "optimal_steps": optimal,
                    "applicable": applicable,
                    "ending": ("success" if success else "cap") if applicable else np.nan,
                }
            )
    return pd.DataFrame(rows)


def metrics(variant_index, seed) -> pd.DataFrame:
    epochs = np.arange(1, 4)
    train = 1.0 / epochs + 0.1 * variant_index + 0.01 * seed
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


def attention(variant, seed, width=4) -> dict:
    n = 3 * width
    heat = np.tril(np.ones((n, n)))
    heat /= heat.sum(1, keepdims=True)
    applicable = variant != "learned"
    return {
        "variant": variant,
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


def test_attention_maps_average_each_variants_seeds_in_study_order(tmp_path):
    runs = [
        ("rope", 1, [1.0, 0.0], [[1.0, 0.0], [0.5, 0.5]]),
        ("rope", 2, [0.0, 1.0], [[1.0, 0.0], [0.0, 1.0]]),
        ("learned", 1, [0.25, 0.75], [[1.0, 0.0], [1.0, 0.0]]),
    ]
    paths = []
    for variant, seed, decay, heat in runs:
        paths.append(tmp_path / f"{variant}_s{seed}.json")
        paths[-1].write_text(
            json.dumps({"variant": variant, "distance_decay": decay, "heatmap": heat})
        )
    maps = stats.attention_maps(paths, ["learned", "rope", "sinusoidal"])
    assert list(maps) == ["learned", "rope"]  # no results, no entry
    assert maps["rope"] == {
        "distance_decay": [0.5, 0.5],
        "heatmap": [[1.0, 0.0], [0.25, 0.75]],
        "seeds": 2,
    }
    assert maps["learned"]["seeds"] == 1
    assert maps["learned"]["distance_decay"] == [0.25, 0.75]


def test_run_writes_the_seed_averaged_attention_maps(tmp_path, tiny_params):
    out, paths = run_stats(tmp_path, tiny_params)
    maps = json.loads((out / "attention_maps.json").read_text())
    assert list(maps) == list(VARIANTS)
    assert all(m["seeds"] == len(SEEDS) for m in maps.values())
    assert maps == stats.attention_maps(paths["attention"], VARIANTS)


def write_inputs(root, seeds=SEEDS, variants=VARIANTS) -> dict:
    """The per-model files the pipeline's earlier steps write, for every variant and seed."""
    paths = {"test": [], "grid": [], "context": [], "metrics": [], "attention": []}

    def save(frame, sweep, name):
        path = root / "eval" / sweep / f"{name}.csv"
        path.parent.mkdir(parents=True, exist_ok=True)
        episode_csv.write(frame, WORLD, path)
        paths[sweep].append(path)

    for e_index, variant in enumerate(variants):
        for s_index, seed in enumerate(seeds):
            name = f"{variant}_s{seed}"
            save(episodes(variant, s_index, seed, CONTEXTS[0]), "grid", name)
            context = episodes(variant, s_index, seed, CONTEXTS[1], variant != "learned")
            frames = [context.assign(rope_scaling="none")]
            if variant == "rope":  # a scaling that costs rope one layout everywhere
                frames.append(
                    context.assign(
                        rope_scaling="linear",
                        success=np.minimum(context.success, context.layout_id < 4),
                    )
                )
            save(pd.concat(frames), "context", name)
            test = pd.DataFrame(
                {
                    "variant": variant,
                    "seed": seed,
                    "grid_size": 8,
                    "context": CONTEXTS[0],
                    "layout_id": np.arange(10),
                    "success": (np.arange(10) < TEST_SOLVED[s_index]).astype(int),
                    "steps": 5,
                    "optimal_steps": 4,
                    "applicable": True,
                }
            )
            save(test.assign(ending=np.where(test.success == 1, "success", "cap")), "test", name)
            path = root / "train" / name / "metrics.csv"
            path.parent.mkdir(parents=True)
            metrics(e_index, seed).to_csv(path, index=False)
            (path.parent / "numerics.json").write_text(json.dumps(NUMERICS))
            paths["metrics"].append(path)
            path = root / "attention" / f"{name}.json"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(json.dumps(attention(variant, seed)))
            paths["attention"].append(path)
    return paths


NUMERICS = {
    "numerics": "portable",
    "reproducible_on": numerics.EVERY_CPU,
    "aten_capability": "AVX2",
    "onednn_max_cpu_isa": "AVX2",
    "mkl_cbwr": "COMPATIBLE",
    "threads": 1,
    "torch": "2.13.0",
    "cpu": "Test CPU",
}
"""what training records of its numerics (dtpe.numerics.check) beside each metrics.csv"""


def synthetic_params(params, seeds=SEEDS, variants=VARIANTS):
    return dataclasses.replace(
        params, study=dataclasses.replace(params.study, variants=variants, seeds=seeds)
    )


def run_stats(tmp_path, params, seeds=SEEDS, variants=VARIANTS):
    paths = write_inputs(tmp_path / "results", seeds, variants)
    out = tmp_path / "stats"
    out.mkdir()
    stats.run(
        synthetic_params(params, seeds, variants),
        paths["test"],
        paths["grid"],
        paths["context"],
        paths["metrics"],
        paths["attention"],
        out,
    )
    return out, paths


@pytest.fixture
def stats_dir(tmp_path, tiny_params):
    return run_stats(tmp_path, tiny_params)[0]


def read(stats_dir, name):
    return pd.read_csv(stats_dir / f"{name}.csv")


def test_success_mean_and_std_over_seeds(stats_dir):
    table = read(stats_dir, "success_by_grid").set_index(["grid_size", "variant"])
    assert list(table.loc[10].index) == VARIANTS  # params order, not alphabetical
    # rope at 10x10 solves 5, 4, 3 of 5 layouts: 100, 80, 60 %
    assert table.loc[(10, "rope"), "success_pct_mean"] == pytest.approx(80.0)
    assert table.loc[(10, "rope"), "success_pct_std"] == pytest.approx(20.0)
    assert table.loc[(10, "learned"), "success_pct_mean"] == pytest.approx(20.0)
    assert table.loc[(8, "learned"), "success_pct_std"] == 0.0
    assert (table.n_seeds == 3).all()


def test_steps_count_failures_at_the_cap_and_ratio_per_seed(stats_dir):
    table = read(stats_dir, "steps_by_grid").set_index(["grid_size", "variant"])
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
    table = read(stats_dir, "context").set_index(["context", "variant"])
    assert not table.loc[(9, "learned"), "applicable"]
    assert math.isnan(table.loc[(9, "learned"), "success_pct_mean"])
    assert table.loc[(9, "rope"), "applicable"]
    # rope, averaged over sizes 8 (100 %) and 10 (80 % mean): 90 %
    assert table.loc[(9, "rope"), "success_pct_mean"] == pytest.approx(90.0)
    assert table.loc[(9, "rope"), "context_multiple"] == pytest.approx(1.5)
    # the scaled rope is its own entry: 8x8 80 %; 10x10 seeds at 80, 80, 60 %
    assert table.loc[(9, "rope+linear"), "success_pct_mean"] == pytest.approx((80 + 220 / 3) / 2)
    assert table.loc[(6, "rope"), "success_pct_mean"] == pytest.approx(90.0)  # the grid sweep


def test_training_final_epoch_and_test_split(stats_dir):
    table = read(stats_dir, "training").set_index("variant")
    seeds = np.array(SEEDS)
    assert table.loc["rope", "train_loss_mean"] == pytest.approx(
        np.mean(1 / 3 + 0.2 + 0.01 * seeds)
    )
    assert table.loc["rope", "val_success_pct_mean"] == pytest.approx(
        100 * np.mean(0.6 + 0.01 * seeds)
    )
    assert table.loc["learned", "train_seconds_mean"] == pytest.approx(6.0)
    assert table.loc["learned", "epoch_mean"] == 3
    assert table.loc["rope", "test_success_pct_mean"] == pytest.approx(90.0)
    assert table.loc["rope", "test_success_pct_min"] == pytest.approx(80.0)


def test_comparisons_agree_with_an_independent_recomputation(stats_dir, tmp_path):
    table = read(stats_dir, "comparisons")
    required = {
        "grid_size",
        "context",
        "variant_a",
        "variant_b",
        "diff_pct",
        "ci_low_pct",
        "ci_high_pct",
        "p_value",
        "p_holm",
        "n_seeds_a",
        "n_seeds_b",
    }
    assert required <= set(table.columns)
    episodes_ = pd.concat(
        pd.read_csv(p) for p in (tmp_path / "results" / "eval" / "grid").glob("*.csv")
    )
    for row in table[table.primary].itertuples():
        mean = episodes_[episodes_.grid_size == row.grid_size].groupby("variant").success.mean()
        assert row.diff_pct == pytest.approx(100 * (mean[row.variant_a] - mean[row.variant_b]))
        assert row.ci_low_pct <= row.diff_pct <= row.ci_high_pct
    # all pairs, the reference first wherever it takes part
    pairs = set(zip(table.variant_a, table.variant_b))
    assert {("rope", "learned"), ("rope", "sinusoidal"), ("learned", "sinusoidal")} <= pairs
    primary = table[table.primary]
    assert (primary.context == 6).all() and len(primary) == 3 * len(SIZES)
    assert table[~table.primary].p_holm.isna().all()
    assert (primary.p_holm >= primary.p_value).all()
    # rope+linear against rope at context 9 exists; learned does not run there
    later = table[table.context == 9]
    assert ("rope", "rope+linear") in set(zip(later.variant_a, later.variant_b))
    assert "learned" not in set(later.variant_a) | set(later.variant_b)


def test_permutation_test_is_exact_over_seed_labels(stats_dir):
    row = read(stats_dir, "comparisons").set_index(
        ["grid_size", "context", "variant_a", "variant_b"]
    )
    row = row.loc[(10, 6, "rope", "learned")]
    rope, learned = np.array([100.0, 80.0, 60.0]), np.array([40.0, 20.0, 0.0])
    assert row.p_min == pytest.approx(2 / 20)  # 3 vs 3: 20 relabellings
    assert row.p_value == pytest.approx(2 / 20)  # fully separated: the floor
    exact = sps.permutation_test(
        (rope, learned),
        lambda x, y, axis: x.mean(axis) - y.mean(axis),
        n_resamples=np.inf,
        vectorized=True,
    )
    assert row.p_value == pytest.approx(exact.pvalue)
    assert row.prob_improvement == 1.0
    assert row.cohens_d == pytest.approx(60.0 / 20.0)  # both stds are 20
    assert row.verdict == "a > b" and row.ci_low_pct > 0


def test_ranking_orders_by_mean_and_reads_gaps_from_the_comparisons(stats_dir):
    ranking = read(stats_dir, "ranking")
    comparisons = read(stats_dir, "comparisons").set_index(
        ["grid_size", "context", "variant_a", "variant_b"]
    )
    at_10 = ranking[ranking.grid_size == 10].set_index("variant")
    # sinusoidal and rope tie at 80 %: the study's order breaks the tie; learned is at 20 %.
    assert list(at_10.index) == ["sinusoidal", "rope", "learned"]
    assert list(at_10["rank"]) == [1, 1, 3]  # tied means share a rank
    assert list(at_10.standing) == [pairwise.LEADING, pairwise.LEADING, pairwise.BELOW]
    assert at_10.gap_pct.tolist() == pytest.approx([0.0, 0.0, 60.0])
    assert math.isnan(at_10.gap_ci_low_pct["sinusoidal"])
    # learned was compared as a (learned − sinusoidal): the gap is that interval turned round.
    pair = comparisons.loc[(10, 6, "learned", "sinusoidal")]
    assert at_10.gap_ci_low_pct["learned"] == pytest.approx(-pair.ci_high_pct)
    assert at_10.gap_ci_high_pct["learned"] == pytest.approx(-pair.ci_low_pct)
    at_8 = ranking[ranking.grid_size == 8]
    assert set(at_8.standing) == {pairwise.LEADING} and len(at_8) == len(VARIANTS)
    with pytest.raises(ValueError, match="no comparison of learned and sinusoidal on 8x8"):
        pairwise.ranking(read(stats_dir, "success_by_grid"), comparisons.reset_index().head(0), 6)


def test_adding_a_variant_moves_no_other_cells_numbers(tmp_path, tiny_params, monkeypatch):
    # 3 vs 3 seeds have 20 relabellings: beyond 10 the permutation tests sample, so their
    # p-values draw from the generators as the intervals do.
    monkeypatch.setattr(inference, "MAX_EXACT_PERMUTATIONS", 10)
    before, _ = run_stats(tmp_path / "before", tiny_params)
    after, _ = run_stats(tmp_path / "after", tiny_params, variants=VARIANTS + [ADDED])
    cells = {
        "success_by_grid": ["grid_size", "variant"],
        "comparisons": ["grid_size", "context", "variant_a", "variant_b"],
    }
    for name, keys in cells.items():
        old, new = read(before, name), read(after, name)
        assert len(new) > len(old)  # the added variant has cells of its own
        kept = old[keys].merge(new, on=keys, how="left")
        # Holm adjusts over the whole primary family, which the added variant enlarges.
        pd.testing.assert_frame_equal(
            kept.drop(columns="p_holm", errors="ignore"),
            old.drop(columns="p_holm", errors="ignore"),
            check_exact=True,
        )
    sampled = read(before, "comparisons")
    assert sampled.p_value.notna().all() and (sampled.p_min == 2 / 11).all()


def test_bootstrap_interval_covers_a_zero_difference_at_its_level(tiny_params):
    sp = dataclasses.replace(tiny_params.stats, bootstrap_resamples=400, alpha=0.1)
    rng = np.random.default_rng(1)
    covered, draws = 0, 200
    for _ in range(draws):
        # 5 seeds per variant, each with its own skill; 40 shared layouts of varied difficulty
        layouts = rng.uniform(0.1, 0.9, 40)
        skill = rng.normal(0, 0.1, (10, 1))
        done = (rng.random((10, 40)) < np.clip(layouts + skill, 0, 1)).astype(float)
        low, high = inference.diff_interval(done[:5], done[5:], sp, rng)
        covered += low <= 0 <= high
    # nominal 90 %; with 5 seeds a percentile bootstrap is a little narrow, never far
    assert 0.8 <= covered / draws <= 0.99


def test_bootstrap_interval_excludes_a_large_difference(tiny_params):
    sp = tiny_params.stats
    rng = np.random.default_rng(2)
    a = (rng.random((5, 50)) < 0.8).astype(float)
    b = (rng.random((5, 50)) < 0.3).astype(float)
    low, high = inference.diff_interval(a, b, sp, rng)
    assert 30 < low < 50 < high < 70
    low, high = inference.mean_interval(a, sp, rng)
    assert 0 <= low < 80 < high <= 100


def test_holm_on_a_textbook_example():
    # Holm (1979): p sorted 0.005, 0.01, 0.03, 0.04 times 4, 3, 2, 1, then running maximum
    assert inference.holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    adjusted = inference.holm([0.5, np.nan, 0.01])
    assert adjusted[0] == pytest.approx(0.5) and np.isnan(adjusted[1])
    assert adjusted[2] == pytest.approx(0.02)


def test_power_detects_what_it_says():
    sd, n = 8.0, 5
    mde = inference.detectable(sd, n, 0.05)
    assert inference.t_power(mde, sd, n, 0.05) == pytest.approx(0.8, abs=1e-6)
    assert inference.detectable(sd, 10, 0.05) < mde  # more seeds, smaller differences
    need = inference.seeds_needed(10.0, sd, 0.05)
    assert (
        inference.t_power(10.0, sd, int(need), 0.05)
        >= 0.8
        > inference.t_power(10.0, sd, int(need) - 1, 0.05)
    )


def test_the_chance_gap_is_what_equal_variants_exceed_alpha_of_the_time():
    sd, n, alpha = 18.0, 3, 0.05
    gap = inference.chance_gap(sd, n, alpha)
    # two equal variants, n normal seeds each, many times over
    seeds = np.random.default_rng(0).normal(50.0, sd, size=(2, 200_000, n))
    gaps = np.abs(seeds[0].mean(axis=1) - seeds[1].mean(axis=1))
    assert np.mean(gaps > gap) == pytest.approx(alpha, abs=0.002)
    assert inference.chance_gap(sd, 10, alpha) < gap  # more seeds, smaller chance gaps
    assert math.isnan(inference.chance_gap(0.0, n, alpha))


def test_power_table_flags_grid_sizes_at_the_floor(stats_dir):
    table = read(stats_dir, "power").set_index("grid_size")
    assert table.loc[10, "informative"] and table.loc[10, "best_pct"] == pytest.approx(80.0)
    # pooled seed SD at 10x10: learned, sinusoidal, rope all have std 20
    assert table.loc[10, "seed_sd_pct"] == pytest.approx(20.0)
    assert table.loc[10, "n_seeds"] == 3
    assert table.loc[10, "chance_gap_pct"] == pytest.approx(inference.chance_gap(20.0, 3, 0.05))


def test_cohens_d_sign_and_pooled_std():
    assert inference.cohens_d([1, 2, 3], [4, 5, 6]) == pytest.approx(-3.0)
    # pooled: sqrt((2*1 + 3*var([0,2,4,6])) / 5)
    pooled = math.sqrt((2 * 1 + 3 * np.var([0, 2, 4, 6], ddof=1)) / 5)
    assert inference.cohens_d([1, 2, 3], [0, 2, 4, 6]) == pytest.approx((2 - 3) / pooled)


def test_metrics_json_holds_the_headline_numbers_only(stats_dir):
    headline = json.loads((stats_dir / "metrics.json").read_text())
    per_grid = {f"success_{e}_N{n}" for e in VARIANTS for n in SIZES}
    assert set(headline) == {"test_success_pooled", "test_success_min"} | per_grid
    assert headline["success_rope_N10"] == pytest.approx(80.0)
    assert headline["test_success_pooled"] == pytest.approx(90.0)
    assert headline["test_success_min"] == pytest.approx(80.0)
    methods = json.loads((stats_dir / "methods.json").read_text())
    assert "seed" in methods["unit"] and "bootstrap" in methods["bootstrap"]


def test_one_seed_runs_with_nan_spread(tmp_path, tiny_params):
    out, _ = run_stats(tmp_path, tiny_params, seeds=[7])
    success = read(out, "success_by_grid")
    assert success.success_pct_std.isna().all() and (success.n_seeds == 1).all()
    assert success.ci_low_pct.isna().all()
    comparisons = read(out, "comparisons")
    assert comparisons.ci_low_pct.isna().all() and comparisons.cohens_d.isna().all()
    assert comparisons.p_value.isna().all() and comparisons.p_holm.isna().all()


def test_metrics_folder_must_name_variant_and_seed(tmp_path):
    path = tmp_path / "rope" / "metrics.csv"
    path.parent.mkdir()
    metrics(0, 1).to_csv(path, index=False)
    with pytest.raises(ValueError, match="model name"):
        stats.read_metrics([path])


def test_numerics_of_every_model_are_collected_and_a_missing_record_named(tmp_path, tiny_params):
    out, paths = run_stats(tmp_path, tiny_params)
    recorded = pd.read_csv(out / "numerics.csv")
    assert len(recorded) == len(paths["metrics"])
    assert set(recorded.reproducible_on) == {numerics.EVERY_CPU}
    (paths["metrics"][0].parent / "numerics.json").unlink()
    with pytest.raises(ValueError, match="numerics.json is missing"):
        stats.numerics_records(paths["metrics"])


def test_the_steps_note_says_how_a_world_fails():
    """Failed episodes run to the cap where only the cap ends them; in a world that can fail
    (its Ends' words) they may also end there."""
    grid = pd.DataFrame(
        {
            "grid_size": 8,
            "variant": "rope",
            "seed": [1, 2],
            "steps": [10, 12],
            "optimal_steps": [8, 8],
            "applicable": True,
        }
    )
    assert stats.steps_by_grid(grid).note.iloc[0] == stats.STEPS_NOTE
    memory = catalog.get("memory").ends.failure_words
    assert stats.steps_by_grid(grid, memory).note.iloc[0] == (
        "failed episodes count their steps up to the cap, or until they end beside the other object"
    )


def test_whole_episode_is_success_at_the_longest_context_where_the_run_plays_it(tiny_params):
    """whole_episode.csv: success_by_grid's numbers on the longest context's episodes only (a
    scaled variant among them), and no row in a run without a whole-episode sweep."""
    rows = [
        {"grid_size": n, "variant": v, "seed": s, "layout_id": i, "context": c}
        | {"success": (s + i + c) % 3 > 0, "applicable": True}
        for n in (8, 12)
        for v in ("rope", "rope+yarn")
        for s in (1, 2)
        for i in range(4)
        for c in (6, 40)
    ]
    context = pd.DataFrame(rows)
    evaluate = dataclasses.replace(tiny_params.evaluate, contexts=[6, 40], whole_episode=True)
    whole = stats.whole_episode(context, evaluate, tiny_params.stats)
    assert list(whole.columns) == stats.WHOLE_EPISODE_COLUMNS and set(whole.context) == {40}
    alone = stats.success_by_grid(context[context.context == 40], tiny_params.stats, ("whole", 40))
    assert list(whole.success_pct_mean) == list(alone.success_pct_mean)
    assert list(whole.ci_low_pct) == list(alone.ci_low_pct)
    assert set(whole.variant) == {"rope", "rope+yarn"}
    sliding = dataclasses.replace(evaluate, whole_episode=False)
    assert stats.whole_episode(context, sliding, tiny_params.stats).empty
