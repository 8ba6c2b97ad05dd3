"""The power run (issue 15) and the family run (issue 17) are params.yaml with other models, run
into their own directory: `snakemake --configfile params-<run>.yaml --directory runs/<run>`."""

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from dtpe import params
from dtpe.cluster import train_resources
from dtpe.model.encodings import variant

BIN = Path(sys.executable).parent


def load(name: str) -> dict:
    return yaml.safe_load((ROOT / name).read_text())


@pytest.mark.parametrize("name", ["params-power.yaml", "params-family.yaml"])
def test_only_the_models_differ_from_the_default(name):
    raw, default = load(name), load("params.yaml")
    params.check(raw)
    if name == "params-family.yaml":  # the family run also plays rope's scalings
        raw["evaluate"].pop("rope_scaling"), default["evaluate"].pop("rope_scaling")
    assert {k: v for k, v in raw.items() if k != "study"} == {
        k: v for k, v in default.items() if k != "study"
    }


def test_power_run_has_ten_seeds_starting_with_the_defaults():
    study, default = load("params-power.yaml")["study"], load("params.yaml")["study"]
    assert study["encodings"] == default["encodings"]
    assert len(study["seeds"]) == 10
    first = min(5, len(default["seeds"]))
    assert study["seeds"][:first] == default["seeds"][:first]


def test_family_run_crosses_k_with_sinusoidal_t_and_t_with_rope():
    raw = load("params-family.yaml")
    pairs = {(v.k, v.t) for v in map(variant, raw["study"]["encodings"])}
    ks = {"learned", "sinusoidal", "rope", "nope", "alibi", "t5", "kerple", "xpos"}
    ts = {"sinusoidal", "none", "learned", "randomized"}
    assert pairs == {(k, "sinusoidal") for k in ks} | {("rope", t) for t in ts}
    assert len(raw["study"]["seeds"]) >= 3
    assert raw["evaluate"]["rope_scaling"] == ["none", "linear", "ntk", "yarn"]


def test_directory_run_writes_there_and_reads_the_code_here(tmp_path):
    """A dry run into another directory: outputs relative to it, code and params found here."""
    workdir = tmp_path / "runs" / "power"
    out = subprocess.run(
        [BIN / "snakemake", "-n", "-p", "--cores", "1", "--configfile", "params-power.yaml"]
        + ["--directory", str(workdir)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    here = os.path.relpath(ROOT, workdir)
    inputs = {p for line in re.findall(r"^    input: (.*)$", out, re.M) for p in line.split(", ")}
    outputs = {p for line in re.findall(r"^    output: (.*)$", out, re.M) for p in line.split(", ")}
    code = {p for p in inputs if p.endswith(".py")}
    assert code and all((workdir / p).resolve().is_file() for p in code)
    assert all(p.startswith(here + "/src/dtpe/") for p in code)
    assert all(not p.startswith(("/", "..")) for p in outputs)
    assert {p.split("/")[0] for p in outputs} == {"data", "models", "results", "figures"}
    commands = re.findall(r"--params (\S+)", out)
    assert commands and {(workdir / p).resolve() for p in commands} == {ROOT / "params-power.yaml"}


@pytest.mark.parametrize(
    "name, mem_mb, runtime",
    # the default: size 0.5, an hour (the floor); the study: size 6.7 (d_model 320 x 8 layers),
    # 100 epochs at 15 minutes per unit of size per 20 epochs
    [("params.yaml", 4500, 60), ("params-study.yaml", 10667, 500)],
)
def test_a_training_job_asks_the_cluster_for_what_its_model_needs(name, mem_mb, runtime):
    assert train_resources(params.check(load(name))) == {"mem_mb": mem_mb, "runtime": runtime}
