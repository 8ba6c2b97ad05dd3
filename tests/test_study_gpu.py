"""scripts/study_gpu.py, the study's scale on a GPU in one command, run end to end on the CPU at
a tiny size: what it packs is what the device may return (at most 8 files, none over 16 MiB,
plain names, no folders), the per-episode CSVs with the evaluation's columns, the training
curves, the device and wall times; a budget that runs out still packs what finished; bad
options and a missing params file are refused with the reason."""

import io
import json
import re
import subprocess
import sys
import tarfile

import pandas as pd
import pytest
import yaml
from conftest import ROOT, tiny_raw

from dtpe.pipeline import STEPS
from dtpe.steps.evaluate import COLUMNS

MODEL_STEPS = tuple(s.name for s in STEPS if s.per_model)
"""a model's steps as the runner plays them: the pipeline's"""

SCRIPT = ROOT / "scripts" / "study_gpu.py"
VARIANTS = ["learned", "sinusoidal", "rope"]
FIRST, LATER = [f"{v}_s1" for v in VARIANTS], [f"{v}_s2" for v in VARIANTS]


def study_gpu(*args, timeout=300):
    return subprocess.run(
        [sys.executable, str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Seed 1 with budget to spare, then seed 2 added in the same --work with a budget that
    runs out before any of its models can finish (three processes that each load torch)."""
    tmp = tmp_path_factory.mktemp("study_gpu")
    raw = tiny_raw()
    raw["study"]["seeds"] = [1]
    params = tmp / "tiny.yaml"
    params.write_text(yaml.safe_dump(raw))
    common = ["--params", params, "--work", tmp / "work", "--jobs", 3, "--threads", 1]
    first = study_gpu(*common, "--out", tmp / "out1", "--budget-s", 600, "--more-seeds", "")
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
    cut = study_gpu(*common, "--out", tmp / "out2", "--budget-s", 1, "--more-seeds", 2)
    assert cut.returncode == 0, cut.stdout[-3000:] + cut.stderr[-3000:]
    return {"first": (tmp / "out1", first.stdout), "cut": (tmp / "out2", cut.stdout)}


def packed(out):
    """The manifest, and the results' and logs' archives as {name: bytes}."""
    manifest = json.loads((out / "study.json").read_text())
    archives = {}
    for name in ("results", "logs"):
        with tarfile.open(out / f"{name}.tar.gz") as tar:
            archives[name] = {m.name: tar.extractfile(m).read() for m in tar.getmembers()}
    return manifest, archives["results"], archives["logs"]


@pytest.mark.parametrize("run", ["first", "cut"])
def test_the_pack_is_what_the_device_returns(runs, run):
    out, _ = runs[run]
    files = list(out.iterdir())
    assert 1 <= len(files) <= 8
    for f in files:
        assert f.is_file() and re.fullmatch(r"[A-Za-z0-9._-]+", f.name), f
        assert f.stat().st_size <= 16 * 2**20


def test_every_model_is_trained_evaluated_and_analysed_per_episode(runs):
    out, stdout = runs["first"]
    manifest, results, logs = packed(out)
    assert manifest["finished"] == FIRST and manifest["unfinished"] == []
    assert "results/params.json" in results
    assert not any(name.endswith(".safetensors") for name in results)  # no checkpoints
    for model in FIRST:
        curve = pd.read_csv(io.BytesIO(results[f"results/train/{model}/metrics.csv"]))
        assert list(curve.epoch) == [1, 2] and curve.val_success.notna().all()
        for sweep in ("test", "grid", "context", "seen"):
            rows = pd.read_csv(io.BytesIO(results[f"results/eval/{sweep}/{model}.csv"]))
            assert set(COLUMNS) <= set(rows.columns) and len(rows) > 0
        assert json.loads(results[f"results/attention/{model}.json"])
        assert f"logs/train_{model}.log" in logs
        assert f"{model} " in stdout and "finished" in stdout


def test_the_device_code_and_wall_times_are_recorded(runs):
    manifest, results, _ = packed(runs["first"][0])
    assert manifest["device"]["name"].startswith("cpu: ") and not manifest["device"]["cuda"]
    assert manifest["numerics"]["mode"] == "portable"  # the params' own off a GPU
    assert manifest["wall_s"] > 0 and manifest["budget_hit"] is False
    assert manifest["setup"]["data"]["wall_s"] > 0
    for model in FIRST:
        record = manifest["models"][model]
        assert record["wall_s"] == pytest.approx(
            sum(record[s]["wall_s"] for s in MODEL_STEPS),
            abs=0.05,
        )
        for step in MODEL_STEPS:  # as the report reads
            timing = pd.read_csv(
                io.BytesIO(results[f"results/timings/{step}/{model}.tsv"]), sep="\t"
            )
            assert timing.s.iloc[0] == pytest.approx(record[step]["wall_s"], abs=0.01)
        # the quick steps that need the checkpoint run right after training
        assert list(record)[-6:] == ["train", "attention", "seen", "evaluate", "reach", "position"]
    assert re.fullmatch(r"[0-9a-f]{64}", manifest["code"]["src_sha256"])
    assert manifest["data"]["splits"]["train"]["episodes"] > 0
    assert re.fullmatch(r"[0-9a-f]{32}", manifest["data_md5"]["train.safetensors"])
    assert "numerics: portable" in manifest["params"]["overlay"]
    assert manifest["precision"]["mode"] == "params"  # fp32, the params' own, off a GPU
    assert "precision" not in manifest["params"]["overlay"]
    assert manifest["mps"] == {"status": "off"}


def test_precision_and_seeds_are_the_commands_to_choose(tmp_path):
    """bf16 autocast asked for off a GPU too, and a command of its own seeds (a run split by
    seed): the overlay the steps read says bf16 for training and evaluation, and seed 7 is the
    one this command must finish (the budget stops it here, during the data)."""
    raw = tiny_raw()
    params = tmp_path / "tiny.yaml"
    params.write_text(yaml.safe_dump(raw))
    done = study_gpu(
        "--params", params, "--work", tmp_path / "w", "--out", tmp_path / "o",
        "--budget-s", 0.5, "--precision", "bf16", "--seeds", 7, "--more-seeds", "",
        "--steps", "train,evaluate", timeout=120,
    )  # fmt: skip
    assert done.returncode == 3, done.stdout[-2000:] + done.stderr[-2000:]  # study seeds cut
    manifest, _, _ = packed(tmp_path / "o")
    assert manifest["precision"]["mode"] == "bf16"
    assert manifest["precision"]["params_modes"] == {"train": "fp32", "evaluate": "fp32"}
    overlay = yaml.safe_load(manifest["params"]["overlay"])
    assert overlay["train"] == {"precision": "bf16"} == overlay["evaluate"]
    assert manifest["params"]["resolved"]["train"]["precision"] == "bf16"
    assert sorted(manifest["models"]) == sorted(f"{v}_s7" for v in VARIANTS)
    assert all(m["study_seed"] for m in manifest["models"].values())
    # the steps asked for, and no others: what a model still lacks after an earlier command
    assert all(
        set(MODEL_STEPS) & set(m) == {"train", "evaluate"} for m in manifest["models"].values()
    )


def test_a_budget_that_runs_out_still_packs_what_finished(runs):
    out, stdout = runs["cut"]
    manifest, results, logs = packed(out)
    assert manifest["budget_hit"] is True and manifest["complete"] is True
    assert manifest["finished"] == FIRST == manifest["finished_earlier"]
    assert manifest["complete_seeds"] == [1]
    assert manifest["unfinished"] == LATER
    for model in FIRST:
        assert f"results/eval/grid/{model}.csv" in results
    for model in LATER:
        assert manifest["models"][model]["train"]["status"] == "stopped"
        assert f"logs/train_{model}.log" in logs  # what it printed before it was stopped
        assert not any(model in name for name in results)
    assert "unfinished" in stdout


@pytest.mark.parametrize(
    "args, says",
    [
        (["--jobs", "0"], "--jobs: 0 is not > 0"),
        (["--budget-s", "soon"], "--budget-s"),
        (["--more-seeds", "1,x"], "not a comma-separated list of seeds"),
        (["--seeds", "x"], "not a comma-separated list of seeds"),
        (["--precision", "fp16"], "invalid choice: 'fp16'"),
        (["--steps", "train,grid"], "grid: not a per-model step"),
        (["--steps", "evaluate"], "the steps need train"),
        (["--params", "missing.yaml"], "missing.yaml does not exist"),
    ],
)
def test_bad_options_and_a_missing_params_file_are_refused(tmp_path, args, says):
    done = study_gpu("--work", tmp_path / "w", "--out", tmp_path / "o", *args, timeout=60)
    assert done.returncode == 2 and says in done.stderr
    assert not (tmp_path / "o").exists()
