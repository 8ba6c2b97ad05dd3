"""`dtpe compare`: two runs' own statistics side by side, copied and never recomputed. Each fake
run is the stats step's real output on tests/test_stats.py's synthetic sweeps, one run with three
seeds and one with two, so that their numbers differ."""

import copy
import json
import math
import shutil

import pandas as pd
import pytest
from test_stats import synthetic_params, write_inputs

from dtpe import cli
from dtpe.analysis import compare, stats

RUNS = {"three": [1, 2, 3], "two": [1, 2]}


@pytest.fixture(scope="module")
def runs(tmp_path_factory, tiny_params) -> dict:
    """label -> run folder holding results/stats, as a run's stats step leaves it."""
    root = tmp_path_factory.mktemp("runs")
    folders = {}
    for label, seeds in RUNS.items():
        results = root / label / "results"
        paths = write_inputs(results, seeds)
        (results / "stats").mkdir()
        stats.run(
            synthetic_params(tiny_params, seeds),
            paths["test"],
            paths["grid"],
            paths["context"],
            paths["metrics"],
            paths["attention"],
            results / "stats",
        )
        folders[label] = root / label
    return folders


@pytest.fixture(scope="module")
def written(runs, tmp_path_factory):
    out = tmp_path_factory.mktemp("compare") / "compare"
    args = ["compare", "--runs", *map(str, runs.values()), "--labels", *runs, "--out", str(out)]
    assert cli.main(args) == 0
    return out


def same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def test_differences_are_each_runs_primary_comparisons(runs, written):
    table = pd.read_csv(written / "compare.csv")
    assert list(table.columns) == compare.COLUMNS
    for label, run in runs.items():
        theirs = pd.read_csv(run / "results" / "stats" / "comparisons.csv")
        theirs = theirs[theirs.primary]
        ours = table[(table.run == label) & (table.kind == "difference")]
        assert len(ours) == len(theirs) > 0
        for mine, row in zip(ours.itertuples(), theirs.itertuples()):
            assert (mine.grid_size, mine.variant) == (
                row.grid_size,
                f"{row.variant_a} − {row.variant_b}",
            )
            for a, b in (
                (mine.estimate_pct, row.diff_pct),
                (mine.ci_low_pct, row.ci_low_pct),
                (mine.ci_high_pct, row.ci_high_pct),
                (mine.p_holm, row.p_holm),
            ):
                assert same(a, b)


def test_success_is_each_runs_success_by_grid(runs, written):
    table = pd.read_csv(written / "compare.csv")
    for label, run in runs.items():
        theirs = pd.read_csv(run / "results" / "stats" / "success_by_grid.csv")
        ours = table[(table.run == label) & (table.kind == "success")]
        assert list(zip(ours.grid_size, ours.variant)) == list(
            zip(theirs.grid_size, theirs.variant)
        )
        assert ours.estimate_pct.tolist() == theirs.success_pct_mean.tolist()
        assert ours.ci_low_pct.tolist() == theirs.ci_low_pct.tolist()
        assert ours.p_holm.isna().all()
    # the runs differ, so a mix-up of runs would show
    three, two = (table[table.run == label].estimate_pct.tolist() for label in RUNS)
    assert three != two


def test_markdown_has_a_column_per_run_and_the_figure_is_written(written):
    text = (written / "compare.md").read_text()
    header = next(line for line in text.splitlines() if line.startswith("| World"))
    assert [c.strip() for c in header.strip("|").split("|")][3:] == list(RUNS)
    assert "| maze    | 10×10  | rope − learned" in text and "Holm p" in text
    png = (written / "compare.png").read_bytes()
    assert png.startswith(b"\x89PNG") and len(png) > 10_000


def test_the_figure_shows_the_pairs_two_runs_have(written):
    """A pair of one run compares no runs: left to compare.md, and out of the figure, unless no
    pair is shared."""
    table = pd.read_csv(written / "compare.csv")
    alone = table[(table.run == "two") & (table.kind == "difference")].assign(
        variant=lambda t: t.variant + " alone"
    )
    shown = compare.figure(pd.concat([table, alone]), {label: 0.95 for label in RUNS})
    assert pair_labels(shown) == [set(table[table.kind == "difference"].variant)]
    only = compare.figure(alone, {"two": 0.95})
    assert pair_labels(only) == [set(alone.variant)]


def test_the_figure_keeps_the_pairs_most_runs_of_a_world_have(written):
    """Two runs sharing every pair would fill the figure; a third run's few pairs pick what it
    shows, and compare.md still lists every pair."""
    table = pd.read_csv(written / "compare.csv")
    differences = table[table.kind == "difference"]
    picked = differences.variant.unique()[:1]
    third = differences[differences.variant.isin(picked) & (differences.run == "two")]
    third = third.assign(run="confirm")
    both = pd.concat([table, third])
    confidence = {label: 0.95 for label in both.run.unique()}
    assert len(set(differences.variant)) > 1
    assert pair_labels(compare.figure(both, confidence)) == [set(picked)]
    listed = compare.markdown(both, confidence)
    assert all(pair in listed for pair in differences.variant.unique())


def pair_labels(fig) -> list[set[str]]:
    """Each world's row of panels: the pairs its first panel lists."""
    return [{t.get_text() for t in sub.axes[0].get_yticklabels()} for sub in fig.subfigs]


def test_each_world_has_its_own_row_of_panels(written):
    """Grid sizes mean different things in different worlds: a run of another world gets its
    own row, its pairs and sizes apart, and compare.md names each row's world."""
    table = pd.read_csv(written / "compare.csv")
    assert set(table.world) == {"maze"}
    other = table[table.run.isin(["two", "three"])].assign(
        world="tmaze", run=lambda t: t.run + "-t", grid_size=lambda t: t.grid_size * 100
    )
    both = pd.concat([table, other])
    confidence = {label: 0.95 for label in both.run.unique()}
    fig = compare.figure(both, confidence)
    assert [sub._suptitle.get_text() for sub in fig.subfigs] == ["maze", "tmaze"]
    sizes = [[ax.get_title() for ax in sub.axes if ax.get_visible()] for sub in fig.subfigs]
    # a T-Maze size is its longest corridor, not a grid's side
    assert sizes[1] == [f"L ≤ {n}" for n in sorted(other.grid_size.unique())]
    assert sizes[0] == [f"{n}×{n}" for n in sorted(table.grid_size.unique())]
    assert not set(sizes[0]) & set(sizes[1])
    text = compare.markdown(both, confidence)
    rows = [r for r in text.splitlines() if r.startswith("| tmaze")]
    assert rows and all(r.split("|")[1].strip() == "tmaze" for r in rows)
    assert all(r.split("|")[2].strip().startswith("L ≤ ") for r in rows)


def test_a_missing_run_is_named_and_nothing_is_written(runs, tmp_path, capsys):
    out = tmp_path / "compare"
    gone = tmp_path / "runs" / "protocol"
    args = ["compare", "--runs", str(runs["three"]), str(gone), "--labels", "three", "protocol"]
    assert cli.main([*args, "--out", str(out)]) == 1
    assert f"run folder {gone} does not exist" in capsys.readouterr().err
    gone.mkdir(parents=True)
    assert cli.main([*args, "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert str(gone / "results" / "stats" / "comparisons.csv") in err
    assert not out.exists()


def test_labels_must_match_the_runs(runs):
    with pytest.raises(ValueError, match="one distinct label per run"):
        compare.read(list(runs.values()), ["only one"])


def test_a_run_from_before_the_variant_column_is_named(runs, tmp_path):
    """A run whose stats step wrote the old `encoding` columns fails naming file and cure."""
    import shutil

    old = tmp_path / "old"
    shutil.copytree(runs["two"], old)
    for name in ("success_by_grid.csv", "comparisons.csv"):
        path = compare.stats_dir(old) / name
        frame = pd.read_csv(path)
        frame.columns = [c.replace("variant", "encoding") for c in frame.columns]
        frame.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"success_by_grid.csv lacks the columns \['variant'\]"):
        compare.read([runs["three"], old], ["three", "old"])


def test_verdicts_list_every_declared_hypothesis_of_the_confirmatory_runs_only(
    runs, tmp_path, tiny_raw_params, tiny_data
):
    from dtpe.analysis import verdicts

    confirm, two = tmp_path / "confirm", tmp_path / "two"
    for folder, source in [(confirm, runs["three"]), (two, runs["two"])]:
        shutil.copytree(source, folder)
        shutil.copytree(tiny_data, folder / "data")  # the layouts each run shares, by content
        (folder / "results" / "params.json").write_text(json.dumps(tiny_raw_params))
    stats_dir = confirm / "results" / "stats"
    design = json.loads((stats_dir / "design.json").read_text())
    (stats_dir / "design.json").write_text(json.dumps({**design, "confirmatory": True}))
    rows = [
        {column: math.nan for column in verdicts.COLUMNS}
        | {"a": a, "b": "learned", "endpoint": "10+12", "outcome": outcome, "estimate": estimate}
        | {
            "effect_pct": effect,
            "ci_low_pct": effect - 4,
            "ci_high_pct": effect + 4,
            "ci_level": 0.9875,
            "equivalence_low_pct": effect - 3,
            "equivalence_high_pct": effect + 3,
        }
        | {"seeds_a": 15, "seeds_b": 15, "stable": 1.0}
        | {"preregistration": "recorded", "overlay_commit": "e" * 40, "overlay_sha256": "f" * 64}
        for a, outcome, estimate, effect in [
            ("rope", "a > b", verdicts.STAGEWISE, 9.5),
            ("sinusoidal", "equivalent within ±10", verdicts.STAGEWISE, 0.5),
        ]
    ]
    pd.DataFrame(rows, columns=verdicts.COLUMNS).to_csv(stats_dir / "decisions.csv", index=False)
    out = tmp_path / "compare"
    args = ["--runs", str(two), str(confirm), "--labels", "two", "confirm"]
    assert cli.main(["compare", *args, "--out", str(out)]) == 0
    table = pd.read_csv(out / "verdicts.csv")
    assert list(table.run) == ["confirm", "confirm"]  # the exploratory run decides nothing
    assert list(table.a) == ["rope", "sinusoidal"] and set(table.world) == {design["world"]}
    assert list(table.effect_pct) == [9.5, 0.5] and list(table.stable) == [1.0, 1.0]
    shown = (out / "verdicts.md").read_text()
    first = [c.strip() for c in shown.splitlines()[4].strip("|").split("|")]
    assert first[2:7] == ["rope vs learned", "10, 12", "a > b", "+9.5 [+5.5, +13.5]", "98.75 % CI"]
    # an equivalence is stated with its two one-sided tests' interval, at their 1 − 2α
    second = [c.strip() for c in shown.splitlines()[5].strip("|").split("|")]
    alpha = json.loads((stats_dir / "methods.json").read_text())["claim_alpha"]
    assert second[5:7] == ["+0.5 [-2.5, +3.5]", f"{100 * (1 - 2 * alpha):.5g} % interval"]
    assert list(table.claim_alpha) == [alpha, alpha]
    assert first[-1] == "recorded: overlay at `eeeeeee` (sha256 `ffffffffffff`), its content now"
    assert (
        first[-2].startswith("two: train ") and "endpoint 6/6 (6)" in first[-2]
    )  # 10 of 10+12 is a suite
    assert pd.read_csv(out / "shared_layouts.csv").other.unique().tolist() == ["two"]
    # a confirmatory run's decisions from before the preregistration columns: rerun its stats
    decided = pd.read_csv(stats_dir / "decisions.csv")
    decided.drop(columns=["overlay_commit"]).to_csv(stats_dir / "decisions.csv", index=False)
    with pytest.raises(ValueError, match=r"decisions.csv lacks the columns \['overlay_commit'\]"):
        compare.leaderboard([confirm], ["confirm"])


def test_shared_layouts_are_counted_by_content_and_shown_beside_each_verdict(
    runs, tmp_path, tiny_raw_params, tiny_data
):
    """Two runs on one data seed share every training layout; a run on another suite seed shares
    none of its suite layouts by content, though ids repeat (each generator numbers from 0), and
    its grids alone are counted apart from the starts. The confirmatory run's verdicts carry it."""
    from dtpe import params
    from dtpe.analysis import shared_layouts
    from dtpe.steps import dataset

    other_suites = copy.deepcopy(tiny_raw_params)
    other_suites["data"]["suite_seed"] += 1
    folders = {}
    for label, data in [("confirm", tiny_data), ("same", tiny_data), ("fresh", None)]:
        folder = tmp_path / label
        shutil.copytree(runs["three"], folder)
        (folder / "results" / "params.json").write_text(json.dumps(tiny_raw_params))
        if data is None:
            dataset.build(params.check(other_suites), folder / "data")
        else:
            shutil.copytree(data, folder / "data")
        folders[label] = folder
    table = shared_layouts.count(folders, ["confirm"])
    assert set(table.other) == {"same", "fresh"} and (table.run == "confirm").all()
    same = table[table.other == "same"]
    assert (same.shared == same.layouts).all() and (same.shared_grid == same.layouts).all()
    fresh = table[(table.other == "fresh") & (table.part == "suite")]
    assert (fresh.shared == 0).all() and (fresh.layouts == 6).all()
    assert (fresh.shared_grid >= fresh.shared).all()
    fresh_train = table[(table.other == "fresh") & (table.part == "train")].iloc[0]
    assert fresh_train.shared == fresh_train.layouts  # the data seed is the same
    cell = shared_layouts.summary(table, "confirm", [10])
    assert cell.startswith(f"same: train {same.layouts.iloc[0]}/{same.layouts.iloc[0]}")
    assert "endpoint 6/6 (6)" in cell and "fresh: train" in cell and "endpoint 0/6" in cell
    # a confirmatory run's own stats count the same against the folders it names
    own = shared_layouts.against(folders["confirm"], ["../same", "../fresh"])
    expected = table.replace({"confirm": shared_layouts.THIS_RUN, "same": "../same"})
    expected = expected.replace({"fresh": "../fresh"})
    pd.testing.assert_frame_equal(own, expected)
    assert shared_layouts.against(folders["confirm"], []).empty
    with pytest.raises(ValueError, match=r"verdict.shared_with: \.\./gone is no run's folder"):
        shared_layouts.against(folders["confirm"], ["../gone"])
    summary = folders["fresh"] / "data" / "summary.json"
    summary.write_text(json.dumps({**json.loads(summary.read_text()), "world": "tmaze"}))
    with pytest.raises(ValueError, match="verdict.shared_with: ../fresh is a run of tmaze, not"):
        shared_layouts.against(folders["confirm"], ["../same", "../fresh"])


def test_shared_with_is_a_confirmatory_runs_knob(tiny_raw_params):
    from dtpe import params

    tiny_raw_params["verdict"]["shared_with"] = ["../other"]
    with pytest.raises(params.ParamsError, match="verdict.shared_with: .* not one"):
        params.check(tiny_raw_params)


def test_a_whole_episode_sweep_adds_each_variants_success_rope_scalings_included(runs, tmp_path):
    """A run that plays the whole episode lists each variant there, RoPE's scalings as their
    own rows (`rope+yarn`), copied from its whole_episode.csv; a run without one adds none."""
    run = tmp_path / "whole"
    shutil.copytree(runs["three"], run)
    whole = pd.DataFrame(
        {
            "grid_size": [10, 10, 10],
            "variant": ["rope", "rope+yarn", "nope"],
            "context": 50,
            "success_pct_mean": [40.0, 95.0, 90.0],
            "ci_low_pct": [30.0, 90.0, 80.0],
            "ci_high_pct": [50.0, 100.0, 97.5],
        }
    )
    whole.to_csv(run / "results" / "stats" / "whole_episode.csv", index=False)
    out = tmp_path / "out"
    args = ["--runs", str(run), str(runs["two"]), "--labels", "whole", "two", "--out", str(out)]
    assert cli.main(["compare", *args]) == 0
    table = pd.read_csv(out / "compare.csv")
    rows = table[table.kind == compare.WHOLE_EPISODE]
    assert set(rows.run) == {"whole"}
    assert rows.variant.tolist() == whole.variant.tolist()
    assert rows.estimate_pct.tolist() == whole.success_pct_mean.tolist()
    text = (out / "compare.md").read_text()
    assert "| maze    | 10×10  | whole episode | rope+yarn" in text
    assert "95.0 [90.0, 100.0]" in text
