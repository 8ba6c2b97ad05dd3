"""scripts/evaluate_shards.py, one model's evaluate step split over processes by RoPE scaling
and suite size: at a tiny size on the CPU its three CSVs are byte for byte what one `dtpe
evaluate` writes, the runner then keeps them and goes on; groups that miss a suite size, and
params without RoPE's scalings or with a grid sweep of some suites, are refused with the
reason."""

import shutil
import subprocess
import sys

import pytest
import yaml
from conftest import ROOT, tiny_raw

from dtpe import params

pytestmark = pytest.mark.slow  # a training and eleven processes that each load torch

SHARDS = ROOT / "scripts" / "evaluate_shards.py"
RUNNER = ROOT / "scripts" / "study_gpu.py"
SWEEPS = ("test", "grid", "context")


def run(*args):
    return subprocess.run(
        [sys.executable, *map(str, args)], capture_output=True, text=True, timeout=600
    )


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny rope model trained by the runner in its --work, with three scalings to play."""
    tmp = tmp_path_factory.mktemp("shards")
    raw = tiny_raw()
    raw["study"].update(variants=["rope"], seeds=[1])
    raw["data"]["suite_sizes"] = [8, 10, 12]
    raw["evaluate"]["rope_scaling"] = ["none", "linear", "ntk", "yarn"]
    params = tmp / "tiny.yaml"
    params.write_text(yaml.safe_dump(raw))
    work = tmp / "work"
    common = ["--params", params, "--work", work, "--jobs", 1, "--threads", 1, "--more-seeds", ""]
    done = run(RUNNER, *common, "--out", tmp / "out1", "--steps", "train", "--budget-s", 600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return tmp, work, common


def test_the_shards_write_one_steps_bytes_and_the_runner_goes_on(trained):
    tmp, work, common = trained
    one = tmp / "one"
    done = run(
        "-m", "dtpe", "evaluate", "--params", work / "params.yaml", "--variant", "rope",
        "--seed", 1, "--threads", 1, "--data", work / "data", "--model", work / "models/rope_s1",
        *(a for s in SWEEPS for a in (f"--out-{s}", one / f"{s}.csv")),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    done = run(SHARDS, "--work", work, "--variant", "rope", "--seeds", 1, "--groups", "12;8,10")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "in 8 processes" in done.stdout and "played differently: 0" in done.stdout
    for sweep in SWEEPS:
        merged = (work / f"results/eval/{sweep}/rope_s1.csv").read_bytes()
        assert merged == (one / f"{sweep}.csv").read_bytes(), sweep
    again = run(SHARDS, "--work", work, "--variant", "rope", "--seeds", 1)
    assert "evaluation exists, kept" in again.stdout
    steps = ["--steps", "train,evaluate,reach", "--budget-s", 600]
    done = run(RUNNER, *common, "--out", tmp / "out2", *steps)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "evaluate kept, reach done" in done.stdout


@pytest.mark.parametrize(
    "groups, evaluate, says",
    [
        ("8;10", None, "must hold each of data.suite_sizes"),
        (None, {"rope_scaling": ["none"]}, "shards need `none` first"),
        (None, {"whole_episode": True, "grid_sizes": [8, 10, 12]}, "shards split the suites"),
    ],
)
def test_groups_that_miss_a_size_and_params_without_scalings_are_refused(
    trained, tmp_path, groups, evaluate, says
):
    _, work, _ = trained
    copy = tmp_path / "work"
    shutil.copytree(work, copy, ignore=shutil.ignore_patterns("results", "shards"))
    if evaluate:
        raw = yaml.safe_load((copy / "params.yaml").read_text())
        raw.setdefault("evaluate", {}).update(evaluate)
        if evaluate.get("whole_episode"):  # the largest suite's whole episode in the window
            whole = params.load(copy / "params.yaml").env.cap(12)
            raw["evaluate"]["contexts"] = [6, whole]
        (copy / "params.yaml").write_text(yaml.safe_dump(raw))
    args = ["--groups", groups] if groups else []
    done = run(SHARDS, "--work", copy, "--variant", "rope", "--seeds", 1, *args)
    assert done.returncode != 0 and says in done.stderr
    assert not (copy / "results/eval").exists()  # nothing written
