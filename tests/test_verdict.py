"""The verdict: declared hypotheses, the design check, the group-sequential interims replayed
from per-seed scores (their boundaries, estimates after a stop and error rates), the decisions
table, fresh seeds and layouts, and the field's aggregates against rliable's definitions."""

import copy

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import ROOT, tiny_raw
from scipy import stats as sps

from dtpe import cli, names, params
from dtpe.analysis import aggregates, design, group_sequential, sequential, verdicts

SEEDS = list(range(101, 121))


def confirm_raw(hypotheses=None, sequential_design=True, split_alpha=False) -> dict:
    """The tiny params with four variants and 20 seeds, testing rope against the other three on
    the mean over 10x10 and 12x12 in interims of 5; each kind of claim at the whole alpha (the
    first confirmatory runs' rule) unless `split_alpha`."""
    raw = tiny_raw()
    raw["study"] = {"variants": ["rope", "learned", "sinusoidal", "nope"], "seeds": SEEDS}
    raw["stats"]["reference"] = "rope"
    raw["data"]["suite_sizes"] = [8, 10, 12]
    raw["verdict"] = {
        "hypotheses": hypotheses
        or [
            {"a": "rope", "b": v, "grids": [10, 12], "margin": 10}
            for v in ["learned", "sinusoidal", "nope"]
        ],
        "confirmatory": False,
        "sequential": (
            {"interims": 4, "seeds_per_interim": 5, "spending": "obrien_fleming"}
            if sequential_design
            else None
        ),
        "split_alpha": split_alpha,
    }
    return raw


def planted(means: dict, sd: float, seed: int = 0) -> pd.DataFrame:
    """Per-seed endpoint scores drawn around each variant's mean."""
    rng = np.random.default_rng(seed)
    rows = [
        {"variant": v, "seed": s, "score_pct": rng.normal(m, sd), "endpoint": "10+12"}
        for v, m in means.items()
        for s in SEEDS
    ]
    return pd.DataFrame(rows)


def episode_rows(means: dict, seeds, rng, layouts: int, **extra) -> list[dict]:
    """Grid-sweep rows of every variant and seed on 8x8, 10x10 and 12x12, each layout solved
    with the variant's chance `means[variant]`."""
    return [
        {
            "variant": v,
            "seed": s,
            "grid_size": n,
            "context": 6,
            "layout_id": i,
            "success": int(rng.random() < mean),
            "applicable": True,
            **extra,
        }
        for v, mean in means.items()
        for s in seeds
        for n in [8, 10, 12]
        for i in range(layouts)
    ]


def test_the_design_check_flags_a_5_seed_18_test_family():
    raw = tiny_raw()
    raw["study"]["seeds"] = [1, 2, 3, 4, 5]
    raw["data"]["suite_sizes"] = [5, 6, 8, 10, 12, 16]  # DoorKey's run: 3 variants x 6 grids
    found = design.check(params.check(raw))
    assert found.tests == 18 and found.family == "all_pairs"
    assert found.p_min == pytest.approx(2 / 252)
    assert found.threshold == pytest.approx(0.05 / 18)
    assert not found.can_reject
    assert found.seeds_needed == 6  # 2 / C(12, 6) = 0.0022 < 0.0028
    assert "cannot reject" in found.sentence() and "6 seeds per variant" in found.sentence()
    raw["study"]["seeds"] = [1, 2, 3, 4, 5, 6]
    assert design.check(params.check(raw)).can_reject


def test_dtpe_check_says_a_design_cannot_reject_and_refuses_it_when_confirmatory(tmp_path, capsys):
    raw = confirm_raw(sequential_design=False)
    raw["study"]["seeds"] = [1, 2, 3]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    out = tmp_path / "params.json"
    assert cli.main(["check", "--params", str(path), "--out", str(out)]) == 0
    assert "The design cannot reject" in capsys.readouterr().out
    assert not yaml.safe_load(out.read_text())["design"]["can_reject"]
    raw["verdict"]["confirmatory"] = True
    path.write_text(yaml.safe_dump(raw))
    out.unlink()
    assert cli.main(["check", "--params", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "confirmatory run whose design cannot reject" in err and "seeds per variant" in err
    assert not out.exists()


def test_a_confirmatory_run_refuses_seeds_of_another_params_file(tmp_path):
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    overlay = {
        "base": "params.yaml",
        "study": {"seeds": [7001, 7002, 1011]},
        "data": {"seed": 70, "suite_seed": 71},
        "verdict": {
            "hypotheses": [{"a": "rope", "b": "learned", "grids": [20]}],
            "confirmatory": True,
            "sequential": None,
        },
    }
    confirm = tmp_path / "params-confirm.yaml"
    confirm.write_text(yaml.safe_dump(overlay))
    with pytest.raises(params.ParamsError, match=r"fresh seeds.*\[1011\].*params\.yaml"):
        params.load(confirm)
    overlay["study"]["seeds"] = [7001, 7002, 7003]
    confirm.write_text(yaml.safe_dump(overlay))
    assert params.load(confirm).study.seeds == [7001, 7002, 7003]
    # the repository's own confirmatory runs are fresh against every run beside them
    for name in ["params-confirm-maze.yaml", "params-confirm-doorkey.yaml"]:
        assert params.load(ROOT / name).verdict.confirmatory


def test_a_confirmatory_run_refuses_an_exploratory_runs_layouts_unless_it_says_why(tmp_path):
    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    overlay = {
        "base": "params.yaml",
        "study": {"seeds": [7001, 7002, 7003]},
        "data": {"seed": 70},
        "verdict": {
            "hypotheses": [{"a": "rope", "b": "learned", "grids": [20]}],
            "confirmatory": True,
        },
    }
    confirm = tmp_path / "params-confirm.yaml"
    confirm.write_text(yaml.safe_dump(overlay))
    # the suite seed, inherited from params.yaml, draws the exploratory run's suites
    with pytest.raises(
        params.ParamsError, match=r"data\.suite_seed 1 also draws the layouts of .*params\.yaml"
    ):
        params.load(confirm)
    overlay["data"] = {"seed": 0, "suite_seed": 71}
    confirm.write_text(yaml.safe_dump(overlay))
    with pytest.raises(params.ParamsError, match=r"params key data\.seed: .*fresh layouts"):
        params.load(confirm)
    overlay["data"] = {"seed": 70, "suite_seed": 71}
    confirm.write_text(yaml.safe_dump(overlay))
    assert params.load(confirm).verdict.reused_layouts is None
    # a seed draws other layouts in another world: an exploratory DoorKey run's seeds are free
    other = {"base": "params.yaml", "env": {"world": "doorkey"}, "data": {"suite_seed": 71}}
    (tmp_path / "params-doorkey.yaml").write_text(yaml.safe_dump(other))
    assert params.load(confirm).data.suite_seed == 71
    # a reuse declared, with its reason, is allowed and kept for the report
    overlay["data"] = {"seed": 0}
    overlay["verdict"]["reused_layouts"] = "tests the leads on new models of the same layouts"
    confirm.write_text(yaml.safe_dump(overlay))
    assert params.load(confirm).verdict.reused_layouts.startswith("tests the leads")
    # the repository's confirmatory runs reused the exploratory layouts, and say so
    for name in ["params-confirm-maze.yaml", "params-confirm-doorkey.yaml"]:
        assert "data seed 0 and suite seed 1" in params.load(ROOT / name).verdict.reused_layouts


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda v: v["hypotheses"][0].update(b="alibi"), "'alibi' is not in study.variants"),
        (lambda v: v["hypotheses"][0].update(grids=[15]), r"\[15\] not in data.suite_sizes"),
        (lambda v: v["hypotheses"][0].update(b="rope"), "compares 'rope' with itself"),
        (lambda v: v.update(hypotheses="all_pairs"), "declares its hypotheses"),
        (lambda v: v["sequential"].update(interims=3), "caps the run at 3 interims x 5 = 15"),
    ],
)
def test_bad_hypotheses_are_refused_naming_the_key(change, message):
    raw = confirm_raw()
    change(raw["verdict"])
    with pytest.raises(params.ParamsError, match=message):
        params.check(raw)


def test_the_sequential_test_stops_early_on_a_planted_large_effect():
    """O'Brien-Fleming spends almost nothing at the first look (|z| 4.99 at alpha 0.05 / 3):
    only a gap of many seed SDs stops there."""
    p = params.check(confirm_raw())
    scores = planted({"rope": 70, "learned": 40, "sinusoidal": 35, "nope": 30}, sd=2)
    first = scores[scores.seed.isin(SEEDS[:5])]
    replayed = sequential.replay(p, first)
    assert list(replayed.decisions.decision) == ["a > b"] * 3
    assert replayed.next_interim is None
    assert replayed.finished == replayed.wanted and len(replayed.finished) == 20
    table = verdicts.decide(p, first)
    assert list(table.outcome) == ["a > b"] * 3
    assert list(table.models) == [10, 10, 10] and list(table.interim) == [1, 1, 1]
    assert (table.ci_low_pct > 0).all()


def test_a_decided_hypothesis_drops_its_variant_from_the_next_interim():
    p = params.check(confirm_raw())
    scores = planted({"rope": 60, "learned": 59, "sinusoidal": 58, "nope": 10}, sd=3, seed=3)
    replayed = sequential.replay(p, scores[scores.seed.isin(SEEDS[:5])])
    assert list(replayed.decisions.decision) == ["continue", "continue", "a > b"]
    assert replayed.next_interim == 2
    new = set(replayed.wanted) - set(replayed.finished)
    assert new == {(v, s) for v in ["rope", "learned", "sinusoidal"] for s in SEEDS[5:10]}
    assert "interim 2 trains 15 models" in replayed.summary()


def test_each_look_is_recorded_with_its_boundary_and_the_last_is_the_decision():
    """The looks (the headline figure's left panel): one row per hypothesis and look it was
    tested at, the look's |z| bound beside its z; a hypothesis's last look is its decision."""
    p = params.check(confirm_raw())
    scores = planted({"rope": 60, "learned": 59, "sinusoidal": 58, "nope": 10}, sd=3, seed=3)
    replayed = sequential.replay(p, scores)
    looks = replayed.looks
    assert list(looks.columns) == sequential.LOOK_COLUMNS
    bounds = sequential.bounds(p)
    assert [bounds[k - 1] for k in looks.interim] == list(looks.boundary)
    for row in replayed.decisions.itertuples():
        last = looks[(looks.a == row.a) & (looks.b == row.b)].iloc[-1]
        assert (last.decision, last.z, last.interim) == (row.decision, row.z, row.interim)
    assert list(looks[(looks.a == "nope") | (looks.b == "nope")].interim) == [1]  # decided at once


def test_the_sequential_test_does_not_reject_a_planted_null_and_finds_equivalence():
    p = params.check(confirm_raw())
    scores = planted({"rope": 50, "learned": 50, "sinusoidal": 50, "nope": 50}, sd=3, seed=1)
    replayed = sequential.replay(p, scores)
    assert set(replayed.decisions.decision) == {"not rejected"}
    assert list(replayed.decisions.interim) == [4, 4, 4]
    table = verdicts.decide(p, scores)
    assert set(table.outcome) == {"equivalent within ±10"}
    assert list(table.models) == [40, 40, 40]
    assert (table.p_tost_holm < 0.05).all() and (table.p_tost_holm >= table.p_tost).all()
    wide = params.check(confirm_raw())  # a seed SD too large for the margin: undecided
    noisy = planted({"rope": 50, "learned": 50, "sinusoidal": 50, "nope": 50}, sd=40, seed=1)
    assert set(verdicts.decide(wide, noisy).outcome) <= {"undecided", "a > b", "a < b"}


def test_equivalence_is_holm_adjusted_across_the_family():
    """Three TOSTs each passing at 0.05 alone, the largest p near 0.05: Holm multiplies the
    smallest by 3, so one that passes alone can fail in the family."""
    p = params.check(confirm_raw(sequential_design=False))
    rows = [{"p_tost": q, "margin_pct": 10.0} for q in (0.04, 0.03, 0.02)]
    found = verdicts.equivalence(rows, [True, True, True], 0.05)
    assert [r["p_tost_holm"] for r in rows] == pytest.approx([0.06, 0.06, 0.06])
    assert found == ["undecided"] * 3
    assert verdicts.equivalence(rows[:1], [True], 0.05) == ["equivalent within ±10"]
    assert p.stats.alpha == 0.05


def test_the_boundaries_spend_alpha_as_declared():
    """Each look's boundary leaves alpha(t_k) spent by look k, checked against scipy's
    multivariate normal (the canonical joint law: corr(Z_i, Z_j) = sqrt(t_i / t_j)), an
    independent integration."""
    for spending in group_sequential.SPENDING:
        bounds = np.array(group_sequential.boundaries(EQUAL, 0.05, spending))
        t = np.arange(1, 5) / 4
        corr = np.sqrt(np.minimum.outer(t, t) / np.maximum.outer(t, t))
        for k in range(1, 5):
            law = sps.multivariate_normal(np.zeros(k), corr[:k, :k])
            stayed = law.cdf(bounds[:k], lower_limit=-bounds[:k], rng=np.random.default_rng(0))
            spent = group_sequential.SPENDING[spending](t[k - 1], 0.05)
            assert 1 - stayed == pytest.approx(spent, abs=2e-5)
    # O'Brien-Fleming's first look asks z_{alpha/2} / sqrt(t_1): all but nothing spent early
    assert group_sequential.boundaries(EQUAL, 0.05, "obrien_fleming")[0] == pytest.approx(
        3.9199, abs=1e-4
    )
    pocock = group_sequential.boundaries(EQUAL, 0.05, "pocock")
    upper, lower = group_sequential.crossings(pocock, EQUAL, 0.0)
    assert upper.sum() + lower.sum() == pytest.approx(0.05, abs=1e-9)


def test_the_estimate_after_an_early_stop_undoes_the_stops_bias():
    """On a planted 12-point gap, runs that stopped at the first look overstate the gap (the
    naive mean is biased away from 0); the stagewise median-unbiased estimate of the same runs
    sits closer to the truth, and at the cap with no earlier stop it is the z itself."""
    p = params.check(confirm_raw())
    bounds = sequential.bounds(p)
    naive, adjusted = [], []
    for seed in range(60):
        scores = planted({"rope": 62, "learned": 50, "sinusoidal": 0, "nope": 0}, sd=6, seed=seed)
        d = sequential.replay(p, scores).decisions.iloc[0]
        if d.decision == "a > b" and d.interim == 2:
            table = verdicts.decide(p, scores).iloc[0]
            naive.append(table.naive_effect_pct)
            adjusted.append(table.effect_pct)
            assert table.estimate == verdicts.STAGEWISE
            assert table.ci_low_pct < table.effect_pct < table.ci_high_pct
    assert len(naive) >= 10
    assert np.mean(naive) - 12 > abs(np.mean(adjusted) - 12)
    no_stops = tuple([np.inf] * 3 + [bounds[-1]])
    theta, _, _ = group_sequential.adjusted(no_stops, EQUAL, 3, 1.3, 0.95)
    assert theta == pytest.approx(1.3, abs=1e-6)


def test_a_stopped_hypothesis_interval_is_at_the_level_its_rejection_was_tested_at():
    """Each look tests a hypothesis two-sided at alpha / m (0.05 / 3 here): its stagewise
    interval at 1 - alpha / m excludes 0 exactly when the test rejected, on either side; at the
    run's 95 % some unrejected hypotheses here would show an interval that excludes 0."""
    p = params.check(confirm_raw())
    assert verdicts.level(p) == pytest.approx(1 - 0.05 / 3)
    seen = set()
    for means in (
        {"rope": 58, "learned": 50, "sinusoidal": 52, "nope": 47},
        {"rope": 44, "learned": 52, "sinusoidal": 50, "nope": 53},
    ):
        for seed in range(4):
            scores = planted(means, sd=9, seed=seed)
            replayed = sequential.replay(p, scores)
            for h, d, a, b in verdicts.sequential_sides(p, scores, replayed):
                row = verdicts.stopped(h, d, a, b, p)
                excludes = row["ci_low_pct"] > 0 or row["ci_high_pct"] < 0
                assert excludes == (d.decision in sequential.REJECTED), (means, seed, h["b"])
                seen.add(d.decision)
    assert seen == {"a > b", "a < b", "not rejected"}


def test_decisions_are_a_function_of_the_scores_alone():
    """No random draw decides: every hypothesis's outcome is the same under 100 seeds of the
    statistics' generator (`stable` 1.0), and the same scores replay to the same table."""
    p = params.check(confirm_raw())
    scores = planted({"rope": 60, "learned": 52, "sinusoidal": 50, "nope": 30}, sd=8, seed=5)
    table = verdicts.decide(p, scores)
    assert (table.stable == 1.0).all()
    pd.testing.assert_frame_equal(table, verdicts.decide(p, scores))


def test_the_simulated_design_decides_as_the_replay_and_holds_its_error_rate():
    p = params.check(confirm_raw())
    centres = np.array([8.0, 0.0, 0.0, 0.0])[:, None]  # rope 8 points ahead
    draws = centres + np.random.default_rng(3).normal(0.0, 8.0, (30, 4, 20))
    simulated = sequential.simulate(p, draws)
    sign = {"a > b": 1, "a < b": -1, "not rejected": 0}
    for run, decided in zip(draws, simulated):
        scores = pd.DataFrame(
            [
                {"variant": v, "seed": s, "score_pct": run[i, j], "endpoint": "10+12"}
                for i, v in enumerate(p.study.variants)
                for j, s in enumerate(SEEDS)
            ]
        )
        replayed = sequential.replay(p, scores).decisions.decision.map(sign).tolist()
        assert replayed == decided.tolist()
    assert simulated[:, 0].any()  # some runs find rope's lead: the comparison is not vacuous
    null = sequential.simulate(p, np.random.default_rng(0).normal(0.0, 10.0, (20_000, 4, 20)))
    # 20,000 runs at a true rate of at most 0.05 exceed 0.053 about 1 time in 1,000
    assert (null != 0).any(1).mean() <= 0.053


def test_a_fixed_design_holm_adjusts_the_declared_family_only():
    raw = confirm_raw(sequential_design=False)
    raw["study"]["seeds"] = SEEDS[:10]  # 10 + 10 seeds: the permutation test is exact
    p = params.check(raw)
    scores = planted({"rope": 70, "learned": 40, "sinusoidal": 69, "nope": 69}, sd=5)
    table = verdicts.decide(p, scores)
    assert table.outcome.iloc[0] == "a > b"
    assert table.p_holm.iloc[0] == pytest.approx(min(1, 3 * table.p_value.iloc[0]))
    assert list(table.models) == [20, 20, 20]
    assert (table.stable == 1.0).all()


def test_a_sampled_permutation_test_measures_how_often_its_decision_holds(monkeypatch):
    """Where the relabellings are too many to enumerate, the p is sampled and a decision near
    the threshold can move with the generator's seed: `stable` counts how often it holds."""
    monkeypatch.setattr(verdicts, "MAX_EXACT_PERMUTATIONS", 100)
    monkeypatch.setattr("dtpe.analysis.inference.MAX_EXACT_PERMUTATIONS", 100)
    raw = confirm_raw(sequential_design=False)
    raw["study"]["seeds"] = SEEDS[:5]  # C(10, 5) = 252 relabellings > 100: sampled
    raw["verdict"]["hypotheses"] = [{"a": "rope", "b": "learned", "grids": [10, 12]}]
    p = params.check(raw)
    stable = []
    for gap in np.linspace(0, 20, 9):
        scores = planted({"rope": 50 + gap, "learned": 50}, sd=6, seed=2)
        stable.append(verdicts.decide(p, scores).stable.iloc[0])
    assert min(stable) < 1.0 and max(stable) == 1.0


def test_the_plan_reads_the_evaluations_and_asks_for_the_next_interim(tmp_path):
    p = params.check(confirm_raw())
    grid = tmp_path / "eval" / "grid"
    grid.mkdir(parents=True)
    assert sequential.plan(p, grid.parent).next_interim == 1
    means = {"rope": 0.6, "learned": 0.6, "sinusoidal": 0.6, "nope": 0.05}
    rows = pd.DataFrame(episode_rows(means, SEEDS[:5], np.random.default_rng(0), 40))
    for (v, s), frame in rows.groupby(["variant", "seed"]):
        frame.assign(world="maze").to_csv(grid / f"{names.model_name(v, s)}.csv", index=False)
    plan = sequential.plan(p, grid.parent)
    assert len(plan.finished) == 20
    assert plan.next_interim == 2
    assert {v for v, _ in set(plan.wanted) - set(plan.finished)} == {
        "rope",
        "learned",
        "sinusoidal",
    }


def rliable_stratified_iqm(scores, reps, rng):
    """rliable's StratifiedBootstrap of aggregate_iqm, as rliable/library.py draws it: one run
    index per (run, task) cell, each task's column resampled on its own."""
    runs, tasks = scores.shape
    out = []
    for _ in range(reps):
        idx = rng.integers(0, runs, (runs, tasks))
        out.append(sps.trim_mean(scores[idx, np.arange(tasks)], 0.25, axis=None))
    return np.percentile(out, [2.5, 97.5])


def test_the_aggregates_follow_rliables_definitions():
    rng = np.random.default_rng(0)
    scores = np.clip(rng.normal([80, 60, 40, 20], 12, (10, 4)), 0, 100)
    # aggregate_iqm: trim_mean over every run and task
    assert aggregates.iqm(scores) == pytest.approx(sps.trim_mean(scores.ravel(), 0.25))
    # run_score_deviation: the share of scores above tau
    prof = aggregates.profile(scores)
    for tau, value in zip(aggregates.TAUS, prof):
        assert value == pytest.approx(np.mean(scores > tau))
    assert prof[0] <= 1 and np.all(np.diff(prof) <= 0)
    sp = params.check(tiny_raw()).stats
    low, high = aggregates.stratified_interval(
        scores, lambda s: aggregates.iqm(s.reshape(*s.shape[:-2], -1), axis=-1), sp, rng
    )
    want_low, want_high = rliable_stratified_iqm(scores, 4000, np.random.default_rng(1))
    assert low == pytest.approx(want_low, abs=1.0) and high == pytest.approx(want_high, abs=1.0)
    # the profile's pointwise band, against the same resampling drawn by hand
    p_low, p_high = aggregates.stratified_interval(scores, aggregates.profile, sp, rng)
    draws = np.random.default_rng(2)
    by_hand = []
    for _ in range(4000):
        idx = draws.integers(0, 10, (10, 4))
        by_hand.append(aggregates.profile(scores[idx, np.arange(4)]))
    want = np.percentile(by_hand, [2.5, 97.5], axis=0)
    assert p_low.shape == aggregates.TAUS.shape
    assert np.abs(p_low - want[0]).max() <= 0.051 and np.abs(p_high - want[1]).max() <= 0.051
    assert (p_low <= prof + 1e-12).all() and (prof <= p_high + 1e-12).all()
    # stratified: a task whose runs all agree adds no spread, however far it lies
    flat = scores.copy()
    flat[:, 0] = 100
    assert aggregates.stratified_interval(
        flat[:, :1], lambda s: aggregates.iqm(s.reshape(*s.shape[:-2], -1), axis=-1), sp, rng
    ) == pytest.approx((100, 100))


def test_stats_of_a_declared_run_write_decisions_and_mark_every_pair_exploratory(tmp_path):
    raw = confirm_raw(sequential_design=False)
    raw["study"]["seeds"] = SEEDS[:10]
    p = params.check(copy.deepcopy(raw))
    means = {"rope": 0.9, "learned": 0.2, "sinusoidal": 0.85, "nope": 0.8}
    frames = episode_rows(means, SEEDS[:10], np.random.default_rng(0), 6, steps=5, optimal_steps=5)
    grid = pd.DataFrame(frames)
    compared = __import__("dtpe.analysis.stats", fromlist=["compare_all"]).compare_all(
        grid.assign(variant=pd.Categorical(grid.variant, p.study.variants)),
        ["rope", "learned", "sinusoidal", "nope"],
        6,
        p.stats,
        all_pairs=not p.verdict.declared(),
    )
    assert not compared.primary.any() and compared.p_holm.isna().all()
    scores = sequential.endpoint_scores(grid, p.verdict.declared(), 6)
    assert len(scores) == 40
    table = verdicts.decide(p, scores)
    assert table.hypothesis.tolist()[0] == "rope vs learned on 10+12"
    assert table.outcome.iloc[0] == "a > b"


def test_snakemake_refuses_a_confirmatory_run_that_cannot_reject_before_any_job(tmp_path):
    """The workflow checks the design when it parses the params, as dtpe check does: no model of
    a confirmatory run that could never reject trains."""
    import subprocess
    import sys
    from pathlib import Path

    (tmp_path / "params.yaml").write_text((ROOT / "params.yaml").read_text())
    overlay = {
        "base": "params.yaml",
        "study": {"seeds": [7001, 7002, 7003]},
        "data": {"seed": 70, "suite_seed": 71},
        "verdict": {
            "hypotheses": [{"a": "rope", "b": "learned", "grids": [20]}],
            "confirmatory": True,
            "sequential": None,
        },
    }
    (tmp_path / "params-confirm.yaml").write_text(yaml.safe_dump(overlay))
    done = subprocess.run(
        [
            Path(sys.executable).parent / "snakemake",
            "-n",
            "--cores",
            "1",
            "--snakefile",
            ROOT / "Snakefile",
            "--configfile",
            tmp_path / "params-confirm.yaml",
            "--directory",
            tmp_path,
        ],
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert "confirmatory run whose design cannot reject" in done.stdout + done.stderr
    assert "dtpe train" not in done.stdout + done.stderr


def test_a_run_with_no_grid_beyond_training_has_empty_aggregates():
    """A run whose suites are none larger than its training grid (a tiny DoorKey run at 5x5 and
    6x6) has no tasks for rliable's aggregates: empty tables, not an error."""
    sp = params.check(tiny_raw()).stats
    rows = pd.DataFrame({"variant": ["rope"], "seed": [1], "grid_size": [5], "success_pct": [50.0]})
    iqm_table, profile_table = aggregates.summary(rows, [], sp, lambda kind, variant: None)
    assert iqm_table.empty and profile_table.empty
    assert list(iqm_table.columns) == aggregates.IQM_COLUMNS


def test_an_endpoint_at_another_context_less_its_minus_grids():
    """An endpoint reads the context it names (the unscaled rows only) and subtracts the same
    average over its minus grids, per seed; without a context, the grid sweep's; the names keep
    them apart."""
    at_train = {"a": "rope", "b": "learned", "grids": [12]}
    reach = {**at_train, "grids": [10, 12], "context": 9, "minus": [8]}
    rng = np.random.default_rng(0)
    grid = pd.DataFrame(episode_rows({"rope": 1.0, "learned": 1.0}, [1, 2], rng, 10))
    far = pd.DataFrame(episode_rows({"rope": 0.5, "learned": 0.0}, [1, 2], rng, 10))
    far = far.assign(context=9, success=np.where(far.grid_size == 8, 1, far.success))
    scaled = far.assign(rope_scaling="yarn", success=1)  # must not count as rope's own
    episodes = pd.concat(
        [grid.assign(rope_scaling=np.nan), far.assign(rope_scaling="none"), scaled],
        ignore_index=True,
    )
    scores = sequential.endpoint_scores(episodes, [at_train, reach], 6)
    assert set(scores.endpoint) == {"12", "10+12@9-8"}
    by = scores.set_index(["endpoint", "variant", "seed"]).score_pct
    assert (by.loc["12"] == 100).all() and (by.loc[("10+12@9-8", "learned")] == -100).all()
    rope = far[(far.variant == "rope") & (far.grid_size > 8)]
    expected = 100 * rope.groupby(["seed", "grid_size"]).success.mean().groupby("seed").mean()
    assert np.allclose(by.loc[("10+12@9-8", "rope")].sort_index(), expected - 100)


def test_hypotheses_name_played_contexts_and_minus_grids_apart_from_their_grids():
    for change, error in (
        ({"context": 7}, r"hypotheses\[0\]\.context: 7 is not a context the evaluation plays"),
        ({"minus": [16]}, r"hypotheses\[0\]\.minus: \[16\] not in data.suite_sizes"),
        ({"minus": [10]}, r"hypotheses\[0\]\.minus: \[10\] are in its grids too"),
    ):
        raw = confirm_raw([{"a": "rope", "b": "learned", "grids": [10, 12], **change}])
        with pytest.raises(params.ParamsError, match=error):
            params.check(raw)
    same = {"a": "rope", "b": "learned", "grids": [10, 12]}
    assert params.check(confirm_raw([same, {**same, "context": 9}, {**same, "minus": [8]}]))
    with pytest.raises(params.ParamsError, match=r"on 10\+12@9 twice"):
        params.check(confirm_raw([{**same, "context": 9}, {**same, "context": 9}]))


def test_fragility_counts_the_single_drops_that_change_an_outcome():
    """A gap shrinking toward the boundary: far above it no single seed undoes "a > b" (a drop
    at most defers it to a later look), decided at the cap by a hair some do; a fixed design
    does not count them (NaN)."""
    hypotheses = [{"a": "rope", "b": "learned", "grids": [10, 12], "margin": 10}]
    p = params.check(confirm_raw(hypotheses))
    found = []
    for gap in (2, 10, 30):
        row = verdicts.decide(p, planted({"rope": 50 + gap, "learned": 50}, sd=6, seed=5)).iloc[0]
        found.append((row.outcome, row.fragile_drops, row.drops))
    assert found[-1][0] == "a > b" and found[-1][1] == 0
    assert any(o == "a > b" and 0 < f < d for o, f, d in found)
    raw = confirm_raw(hypotheses, sequential_design=False)
    raw["study"]["seeds"] = SEEDS[:5]  # an exact test
    row = verdicts.decide(params.check(raw), planted({"rope": 80, "learned": 50}, sd=6)).iloc[0]
    assert np.isnan(row.fragile_drops) and np.isnan(row.z_margin) and row.drops == 10


def test_a_sequential_decisions_margin_is_its_z_beyond_the_looks_boundary():
    p = params.check(confirm_raw())
    scores = planted({"rope": 80, "learned": 50, "sinusoidal": 78, "nope": 80}, sd=6, seed=3)
    table = verdicts.decide(p, scores).set_index("b")
    replayed = sequential.replay(p, scores).decisions.set_index("b")
    bounds = sequential.bounds(p)
    for b in ("learned", "sinusoidal"):
        d = replayed.loc[b]
        assert table.loc[b, "z_margin"] == pytest.approx(abs(d.z) - bounds[int(d.interim) - 1])
        assert table.loc[b, "drops"] == d.seeds_a + d.seeds_b
    # a 30-point gap at SD 6 is decided early and no single seed undoes it
    assert table.loc["learned", "outcome"] == "a > b" and table.loc["learned", "interim"] <= 2
    assert table.loc["learned", "fragile_drops"] == 0 and table.loc["learned", "z_margin"] > 0


def test_the_plan_reads_the_context_sweep_where_an_endpoint_names_its_context(tmp_path):
    """A sequential run whose hypothesis is read at another context counts a model finished
    once its context sweep is in, not its grid sweep alone."""
    hypotheses = [{"a": "rope", "b": "learned", "grids": [10, 12], "context": 9}]
    p = params.check(confirm_raw(hypotheses))
    rows = pd.DataFrame(
        episode_rows({"rope": 0.6, "learned": 0.6}, SEEDS[:5], np.random.default_rng(0), 8)
    )
    for sweep in ("grid", "context"):
        (tmp_path / sweep).mkdir()
    for (v, s), frame in rows.groupby(["variant", "seed"]):
        frame.assign(world="maze").to_csv(
            tmp_path / "grid" / f"{names.model_name(v, s)}.csv", index=False
        )
    assert sequential.plan(p, tmp_path).next_interim == 1  # no context sweep yet
    for (v, s), frame in rows.assign(context=9).groupby(["variant", "seed"]):
        frame.assign(world="maze").to_csv(
            tmp_path / "context" / f"{names.model_name(v, s)}.csv", index=False
        )
    plan = sequential.plan(p, tmp_path)
    assert len(plan.finished) == 10 and plan.next_interim == 2


def test_a_sequential_design_states_its_boundaries_not_a_permutation_floor():
    p = params.check(confirm_raw())  # 3 hypotheses, 4 looks of 5 seeds
    found = design.check(p)
    bounds = sequential.bounds(p)
    assert found.can_reject and found.boundaries == pytest.approx(bounds)
    text = found.sentence()
    assert text.startswith("The design is group-sequential") and "permutation test's" not in text
    assert f"{bounds[0]:.2f} at the first look and {bounds[-1]:.2f}" in text
    assert "4 looks, 5 more seeds per variant" in text and "O'Brien-Fleming" in text


def test_the_simulated_rule_claims_as_the_decisions_table_equivalence_included():
    """verdicts.simulate, which bench/sequential.py's error rates come from, gives each run the
    outcome the decisions table's rule (verdicts.outcomes) gives its scores, equivalence within
    the margin included."""
    p = params.check(confirm_raw(split_alpha=True))
    centres = np.array([10.0, 0.0, 4.0, 0.0])[:, None]
    draws = centres + np.random.default_rng(4).normal(0.0, 6.0, (40, 4, 20))
    simulated = verdicts.simulate(p, draws)
    code = {"a > b": 1, "a < b": -1, "undecided": 0, "equivalent within ±10": verdicts.EQUIVALENT}
    for run, decided in zip(draws, simulated):
        scores = pd.DataFrame(
            [
                {"variant": v, "seed": s, "score_pct": run[i, j], "endpoint": "10+12"}
                for i, v in enumerate(p.study.variants)
                for j, s in enumerate(SEEDS)
            ]
        )
        replayed = sequential.replay(p, scores)
        rows = verdicts.light_rows(p, scores, replayed)
        outcomes = verdicts.outcomes(p, replayed, rows, None)
        assert [code[o] for o in outcomes] == decided.tolist()
    assert {1, 0, verdicts.EQUIVALENT} <= set(simulated.ravel())  # every kind of claim is met


def test_split_alpha_keeps_the_familys_claims_together_within_alpha():
    """With one true gap at the margin (rope 10 points above the rest), the family's wrong
    claims (a rejection between equal variants, or rope called equivalent to one 10 points
    below) exceed alpha under the whole-alpha rule and stay within it when each kind of claim
    spends alpha / 2, whose boundaries are the whole rule's at half the alpha."""
    whole, split = (params.check(confirm_raw(split_alpha=s)) for s in (False, True))
    assert whole.verdict.claim_alpha(0.05) == 0.05 and split.verdict.claim_alpha(0.05) == 0.025
    halved = group_sequential.boundaries(EQUAL, 0.025 / 3, "obrien_fleming")
    assert sequential.bounds(split) == pytest.approx(halved)
    no_margin = confirm_raw(split_alpha=True)
    for h in no_margin["verdict"]["hypotheses"]:
        del h["margin"]  # no equivalence claimed: the rejections keep the whole alpha
    assert params.check(no_margin).verdict.claim_alpha(0.05) == 0.05
    centres = np.array([10.0, 0.0, 0.0, 0.0])[:, None]
    draws = centres + np.random.default_rng(0).normal(0.0, 8.0, (20_000, 4, 20))
    # rope's three hypotheses each carry the true gap: a wrong claim is equivalence or a < b
    wrong = {
        name: np.isin(verdicts.simulate(p, draws), (-1, verdicts.EQUIVALENT)).any(1).mean()
        for name, p in (("whole", whole), ("split", split))
    }
    # 20,000 runs: a true rate of 0.05 exceeds 0.053 about 1 time in 1,000
    assert wrong["whole"] > 0.053 and wrong["split"] <= 0.05


EQUAL = group_sequential.equally_spaced(4)


def fixed_raw() -> dict:
    """learned, sinusoidal and nope each gain 5 seeds a look against rope, fixed at all 20 of
    study.seeds from the first look (a baseline not retrained)."""
    raw = confirm_raw(
        [{"a": v, "b": "rope", "grids": [10, 12]} for v in ["learned", "sinusoidal", "nope"]]
    )
    raw["verdict"]["fixed"] = [{"arm": "rope", "seeds": 20}]
    return raw


def test_a_fixed_arm_is_all_in_at_the_first_look_and_never_trained():
    p = params.check(fixed_raw())
    scores = planted({"rope": 50, "learned": 80, "sinusoidal": 50, "nope": 50}, sd=5, seed=2)
    first = scores[(scores.variant == "rope") | scores.seed.isin(SEEDS[:5])]
    replayed = sequential.replay(p, first)
    learned = replayed.decisions.iloc[0]
    assert (learned.decision, learned.interim) == ("a > b", 1)
    assert (learned.seeds_a, learned.seeds_b) == (5, 20)
    assert not any(v == "rope" for v, _ in replayed.wanted)  # the baseline is not retrained
    assert replayed.next_interim == 2
    # a fixed arm not all in (a submission that retrains its baseline): no look is taken, and
    # its models are wanted with the first look's
    without = first[~((first.variant == "rope") & (first.seed == SEEDS[19]))]
    waiting = sequential.replay(p, without)
    assert waiting.next_interim == 1 and waiting.looks.empty
    assert ("rope", SEEDS[19]) in waiting.wanted and ("learned", SEEDS[0]) in waiting.wanted
    table = verdicts.decide(p, scores)
    assert table.outcome.iloc[0] == "a > b"
    assert "Fixed arms" in design.check(p).sentence()


def fixed_arm_null(p, ratio: float, runs: int = 20_000) -> float:
    """The family's false rejections over `runs` null runs whose fixed arm (rope) has `ratio`
    times the other arms' seed SD."""
    draws = np.random.default_rng(1).normal(0.0, 10.0, (runs, 4, 20))
    draws[:, 0] *= ratio
    return (sequential.simulate(p, draws) != 0).any(1).mean()


def test_the_fixed_arm_design_holds_its_error_rate_whatever_the_arms_sds(monkeypatch):
    """Against a fixed arm the looks stay equally spaced (sequential.fractions): 20,000 null
    runs each, the family's false rejections stay within 0.056 whether the fixed arm's seed SD
    is half, equal to or twice the new arm's (3 Monte Carlo SEs above 0.05 at half: Welch's
    small-sample law), where the fractions of equal SDs, I_k = 1 / (1/5k + 1/20), reach 0.058 at
    half; and the replay decides as the simulation does."""
    p = params.check(fixed_raw())
    rates = {ratio: fixed_arm_null(p, ratio) for ratio in (0.5, 1.0, 2.0)}
    assert max(rates.values()) <= 0.056 and rates[1.0] <= 0.05
    info = [1 / (1 / (5 * k) + 1 / 20) for k in range(1, 5)]
    monkeypatch.setattr(sequential, "fractions", lambda _: tuple(i / info[-1] for i in info))
    assert fixed_arm_null(p, 0.5) > 0.057
    monkeypatch.undo()
    draws = np.random.default_rng(1).normal(0.0, 10.0, (40, 4, 20))
    sign = {"a > b": 1, "a < b": -1, "not rejected": 0}
    for run, decided in zip(draws, sequential.simulate(p, draws)):
        scores = pd.DataFrame(
            [
                {"variant": v, "seed": s, "score_pct": run[i, j], "endpoint": "10+12"}
                for i, v in enumerate(p.study.variants)
                for j, s in enumerate(SEEDS)
            ]
        )
        assert sequential.replay(p, scores).decisions.decision.map(sign).tolist() == list(decided)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"fixed": [{"arm": "learnedlong", "seeds": 20}]}, "no declared hypothesis compares it"),
        ({"fixed": [{"arm": "rope", "seeds": 21}]}, "21 seeds, but study.seeds lists 20"),
        ({"fixed": [{"arm": "rope", "seeds": 20}, {"arm": "rope", "seeds": 5}]}, "listed twice"),
        ({"sequential": None}, "fixed arms are held through the looks"),
        (
            {"fixed": [{"arm": "rope", "seeds": 20}, {"arm": "learned", "seeds": 20}]},
            "both learned and rope are fixed arms",
        ),
    ],
)
def test_a_wrong_fixed_arm_is_refused(change, message):
    raw = fixed_raw()
    raw["verdict"].update(change)
    with pytest.raises(params.ParamsError, match=message):
        params.check(raw)
