"""Tables, figures and the report, run for real on the synthetic sweeps of test_stats: the
tables hold the expected rows and N/A, the figures are real PNG and PDF files that a rerun
reproduces byte for byte, and the report embeds the tables and links every figure."""

import numpy as np
import pandas as pd
import pytest
import yaml
from safetensors.numpy import save_file
from test_stats import ENCODINGS, SIZES, run_stats, synthetic_params

from dtpe import dataset, figures, layouts, report, tables
from dtpe.planner import CostToGo

TABLE_NAMES = ["training", "success_by_grid", "steps_by_grid", "context", "significance"]
FIGURE_NAMES = [
    "fig1_maze",
    "fig2_training",
    "fig3_success_by_grid",
    "fig4_attention",
    "fig5_effect_sizes",
]


def write_suite(data_dir, size):
    lay = layouts.generate(size, 2, np.random.default_rng(0), 0.2)
    steps = CostToGo(lay).steps(lay.start, np.zeros(len(lay), bool), np.arange(len(lay)))
    (data_dir / "suites").mkdir(parents=True)
    save_file(
        dataset.layout_arrays(lay, steps.astype(np.int64)),
        str(data_dir / "suites" / f"N{size}.safetensors"),
    )


def params_file(root, params):
    """A params.yaml whose study matches the synthetic sweeps, for the report to load and show."""
    from conftest import tiny_raw

    raw = tiny_raw()
    raw["study"] = {"encodings": params.study.encodings, "seeds": params.study.seeds}
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    return path


def pipeline(root, params, seeds, timings=None):
    """stats -> tables -> figures -> report, as the workflow runs them."""
    stats_dir, paths = run_stats(root, params, seeds)
    params = synthetic_params(params, seeds)
    (root / "tables").mkdir()
    tables.write(params, stats_dir, root / "tables")
    write_suite(root / "data", max(params.data.suite_sizes))
    drawn = figures.draw(
        params, root / "data", stats_dir, paths["metrics"], paths["attention"], root / "figures"
    )
    report.write(
        params_file(root, params),
        root / "tables",
        root / "figures",
        paths["attention"],
        timings,
        root / "figures" / "REPORT.md",
    )
    return drawn


@pytest.fixture(scope="module")
def run(tmp_path_factory, tiny_params):
    root = tmp_path_factory.mktemp("outputs")
    drawn = pipeline(root, tiny_params, [1, 2, 3], timings={"train/rope_s1": 12.5, "stats": 0.4})
    return root, drawn


def test_every_table_in_three_formats(run):
    root, _ = run
    for name in TABLE_NAMES:
        for ext in ("csv", "md", "tex"):
            assert (root / "tables" / f"{name}.{ext}").stat().st_size > 0
    assert "\\begin{tabular}" in (root / "tables" / "success_by_grid.tex").read_text()
    assert list(pd.read_csv(root / "tables" / "training.csv").encoding) == ENCODINGS


def test_success_table_rows_and_reference_difference(run):
    root, _ = run
    numbers = pd.read_csv(root / "tables" / "success_by_grid.csv").set_index("grid_size")
    assert list(numbers.index) == SIZES
    assert numbers.loc[10, "rope_minus_learned"] == pytest.approx(60.0)
    shown = (root / "tables" / "success_by_grid.md").read_text()
    assert "| 10×10" in shown and "80.0 ± 20.0" in shown and "+60.0" in shown


def test_context_table_keeps_not_applicable(run):
    root, _ = run
    numbers = pd.read_csv(root / "tables" / "context.csv").set_index("context")
    assert not numbers.loc[9, "learned_applicable"] and np.isnan(
        numbers.loc[9, "rope_minus_learned"]
    )
    row = next(
        line
        for line in (root / "tables" / "context.md").read_text().splitlines()
        if line.startswith("| 9 ")
    )
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1] == "N/A" and cells[4] == "N/A" and cells[3] == "90.0 ± 10.0"


def test_significance_table_names_tests_and_marks_undefined(run):
    root, _ = run
    shown = (root / "tables" / "significance.md").read_text()
    assert "Welch" in shown and "Wilcoxon" in shown
    row_8 = next(
        line for line in shown.splitlines() if line.startswith("| 8×8") and "learned" in line
    )
    assert row_8.count(tables.UNDEFINED) == 3  # d, p and significance with no spread between seeds
    row_10 = next(
        line for line in shown.splitlines() if line.startswith("| 10×10") and "learned" in line
    )
    assert "+3.00" in row_10 and "yes" in row_10


def test_figures_are_png_and_pdf(run):
    root, drawn = run
    assert sorted(p.name for p in drawn) == sorted(
        f"{n}.{e}" for n in FIGURE_NAMES for e in ("png", "pdf")
    )
    for path in drawn:
        head = path.read_bytes()[:8]
        assert head.startswith(b"\x89PNG") if path.suffix == ".png" else head.startswith(b"%PDF")


def test_figures_rerun_byte_identical(run, tmp_path):
    root, _ = run
    table = pd.read_csv(root / "tables" / "significance.csv").assign(alpha=0.05)
    for out in ("a", "b"):
        figures.save(
            figures.effect_sizes(table, figures.encoding_colours(ENCODINGS)), tmp_path / out
        )
    for ext in ("png", "pdf"):
        assert (tmp_path / f"a.{ext}").read_bytes() == (tmp_path / f"b.{ext}").read_bytes()


def test_report_embeds_tables_figures_and_findings(run):
    root, _ = run
    text = (root / "figures" / "REPORT.md").read_text()
    for name in FIGURE_NAMES:
        assert f"]({name}.png)" in text
    for name in TABLE_NAMES:
        assert (root / "tables" / f"{name}.md").read_text().strip() in text
    assert "highest mean success is reached by sinusoidal and rope (tied)" in text
    assert "Welch t-test over seeds p = 0.021, significant at α = 0.05" in text
    assert "| learned    | 3       | 20      | N/A" in text  # translation check not applicable
    timing = next(line for line in text.splitlines() if "train/rope_s1" in line)
    assert "12.5" in timing
    assert "```yaml\nstudy:" in text and "Code version: `" in text


def test_findings_speak_of_the_largest_grid_with_any_success():
    success = pd.DataFrame(
        {
            "grid_size": [8, 12, 20],
            "a_mean": [90.0, 10.0, 0.0],
            "a_std": [1.0, 2.0, 0.0],
            "b_mean": [80.0, 0.0, 0.0],
            "b_std": [3.0, 0.0, 0.0],
        }
    ).set_index("grid_size")
    assert report.frontier(success, ["a", "b"]) == 12
    assert report.leader_sentence(success, 12, ["a", "b"]).startswith(
        "At 12×12 the highest mean success is reached by a:"
    )
    nothing = success.assign(a_mean=0.0, b_mean=0.0)
    assert report.frontier(nothing, ["a", "b"]) == 20
    assert "by a and b (tied)" in report.leader_sentence(nothing, 20, ["a", "b"])


def test_one_seed_runs_end_to_end(tmp_path, tiny_params):
    pipeline(tmp_path, tiny_params, [7])
    text = (tmp_path / "figures" / "REPORT.md").read_text()
    assert "p undefined" in text and "not recorded" in text
    row_8 = next(
        line
        for line in (tmp_path / "tables" / "success_by_grid.md").read_text().splitlines()
        if line.startswith("| 8×8")
    )
    assert "100.0" in row_8 and "±" not in row_8  # no std from one seed


def test_code_version_is_dirty_for_code_and_params_only(tmp_path):
    import subprocess

    def git(*a):
        return subprocess.run(
            ["git", *a], cwd=tmp_path, check=True, capture_output=True, text=True
        ).stdout

    git("init", "-q")
    for name in ("src/dtpe/model.py", "params.yaml", "figures/REPORT.md"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("one\n")
    git("add", "-A")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
    head = git("rev-parse", "--short", "HEAD").strip()
    params = tmp_path / "params.yaml"
    (tmp_path / "figures/REPORT.md").write_text("rewritten by the pipeline\n")
    assert report.code_version(params) == head
    (tmp_path / "src/dtpe/model.py").write_text("two\n")
    assert report.code_version(params) == f"{head}-dirty"
    git("checkout", "--", "src")
    params.write_text("two\n")
    assert report.code_version(params) == f"{head}-dirty"
