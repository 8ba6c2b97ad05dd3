"""A run's params file is an overlay: `base: params.yaml` and only the keys it changes, run into
its own directory: `snakemake --configfile params-<run>.yaml --directory runs/<run>`. The power
run (issue 15), the family run (issue 17), the protocol at CPU size and the study's scale."""

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from conftest import ROOT

from dtpe import cli, params
from dtpe.cluster import train_resources
from dtpe.model import catalog
from dtpe.model.encodings import variant

BIN = Path(sys.executable).parent
OVERLAYS = ["params-power.yaml", "params-family.yaml", "params-protocol.yaml", "params-study.yaml"]


def resolved(name: str) -> dict:
    return params.resolve(ROOT / name)


def leaves(raw: dict, at=()) -> dict:
    """Every value that is not a mapping, by its key path."""
    found = {}
    for key, value in raw.items():
        if isinstance(value, dict):
            found |= leaves(value, (*at, key))
        else:
            found[(*at, key)] = value
    return found


@pytest.mark.parametrize("name", OVERLAYS)
def test_an_overlay_changes_only_its_own_keys(name):
    own = yaml.safe_load((ROOT / name).read_text())
    assert own.pop("base") == "params.yaml"
    params.load(ROOT / name)
    run, default = leaves(resolved(name)), leaves(resolved("params.yaml"))
    assert run.keys() == default.keys()
    changed = leaves(own)
    assert {k: v for k, v in run.items() if k not in changed} == {
        k: v for k, v in default.items() if k not in changed
    }
    assert {k: run[k] for k in changed} == changed


def test_power_run_has_ten_seeds_starting_with_the_defaults():
    study, default = resolved("params-power.yaml")["study"], resolved("params.yaml")["study"]
    assert study["variants"] == default["variants"]
    assert len(study["seeds"]) == 10
    first = min(5, len(default["seeds"]))
    assert study["seeds"][:first] == default["seeds"][:first]


def test_family_run_crosses_every_k_with_sinusoidal_t_and_every_t_with_rope():
    """The family is the whole registry, at the default's first seeds (at least the study's 3)."""
    raw, default = resolved("params-family.yaml"), resolved("params.yaml")
    pairs = {(v.k, v.t) for v in map(variant, raw["study"]["variants"])}
    registered = catalog.encodings()
    assert pairs == {(k, "sinusoidal") for k in registered["k"]} | {
        ("rope", t) for t in registered["t"]
    }
    seeds = raw["study"]["seeds"]
    assert len(seeds) >= 3 and seeds == default["study"]["seeds"][: len(seeds)]
    assert raw["evaluate"]["rope_scaling"] == ["none", "linear", "ntk", "yarn"]


def test_protocol_run_is_the_studys_protocol_on_the_defaults_model_size():
    run, study, default = (resolved(n) for n in OVERLAYS[2:] + ["params.yaml"])
    for group, keys in {
        "model": ["state_encoder", "dropout", "attention_dropout"],
        "data": ["episodes", "split"],
        "train": ["targets", "lr_schedule", "batch_size", "epochs"],
    }.items():
        assert {k: run[group][k] for k in keys} == {k: study[group][k] for k in keys}, group
    size = ["d_model", "n_heads", "n_layers", "ffn_mult", "encoder_filters"]
    assert {k: run["model"][k] for k in size} == {k: default["model"][k] for k in size}
    assert run["study"]["variants"] == ["learned", "sinusoidal", "rope"]
    # the power run's ten seeds: the default's five and five more, so seed SDs compare run to run
    assert run["study"]["seeds"] == resolved("params-power.yaml")["study"]["seeds"]


def write(folder: Path, name: str, raw: dict) -> Path:
    (folder / name).write_text(yaml.safe_dump(raw))
    return folder / name


@pytest.fixture
def base(tmp_path) -> Path:
    """A copy of params.yaml in tmp_path, for overlays written beside it."""
    return write(tmp_path, "params.yaml", resolved("params.yaml"))


def test_a_key_the_base_lacks_is_named_with_the_overlay(base):
    overlay = write(base.parent, "run.yaml", {"base": "params.yaml", "train": {"lrr": 1e-3}})
    named = f"{overlay}: params key train.lrr: not in its base {base}"
    with pytest.raises(params.ParamsError, match=re.escape(named)):
        params.load(overlay)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"train": {"lr": -1}}, "params key train.lr: -1 is less than or equal to the minimum"),
        ({"data": {"split": {"train": 0.5}}}, "params key data.split: fractions sum to 0.6"),
        ({"model": {"n_heads": 3}}, "params key model.n_heads: d_model 64 must split"),
        (
            {"encodings": {"t": {"learned": {"table": 0}}}},
            "params key encodings.t.learned.table: 0 is not an integer >= 1",
        ),
    ],
)
def test_a_bad_value_is_named_with_the_file_that_set_it(base, change, message):
    overlay = write(base.parent, "run.yaml", {"base": "params.yaml", **change})
    with pytest.raises(params.ParamsError, match=re.escape(f"{overlay}: {message}")):
        params.load(overlay)
    # set in the base under a valid overlay: the base is named
    write(base.parent, "params.yaml", params.resolve(overlay))
    write(base.parent, "run.yaml", {"base": "params.yaml", "study": {"seeds": [1]}})
    with pytest.raises(params.ParamsError, match=re.escape(f"{base}: {message}")):
        params.load(overlay)


@pytest.mark.parametrize(
    "old, new",
    [
        ({"study": {"encodings": ["rope"]}}, "study.variants"),
        ({"model": {"t_max_offset": 9}}, "encodings.t.randomized.max_offset"),
    ],
)
def test_a_renamed_key_is_refused_naming_its_new_place_and_the_file(base, old, new):
    overlay = write(base.parent, "run.yaml", {"base": "params.yaml", **old})
    group, key = next(iter(old.items()))
    named = f"{overlay}: params key {group}.{next(iter(key))} is now {new}"
    with pytest.raises(params.ParamsError, match=re.escape(named)):
        params.load(overlay)


def test_overlays_chain_relative_to_their_folder(base):
    (base.parent / "runs").mkdir()
    middle = write(base.parent, "middle.yaml", {"base": "params.yaml", "train": {"epochs": 2}})
    top = write(base.parent / "runs", "top.yaml", {"base": "../middle.yaml", "train": {"lr": 0.1}})
    loaded = params.load(top)
    assert (loaded.train.epochs, loaded.train.lr) == (2, 0.1)
    assert loaded.train.batch_size == params.load(base).train.batch_size
    assert [f.resolve() for f in params.chain(top)] == [f.resolve() for f in (top, middle, base)]


def test_a_base_cycle_and_a_missing_base_are_refused(tmp_path):
    write(tmp_path, "a.yaml", {"base": "b.yaml"})
    write(tmp_path, "b.yaml", {"base": "a.yaml"})
    with pytest.raises(params.ParamsError, match="base cycle .*a.yaml -> .*b.yaml -> .*a.yaml"):
        params.load(tmp_path / "a.yaml")
    write(tmp_path, "c.yaml", {"base": "gone.yaml"})
    with pytest.raises(
        params.ParamsError, match=r"gone.yaml does not exist \(the base of .*c.yaml"
    ):
        params.load(tmp_path / "c.yaml")


def test_check_writes_the_resolved_params(tmp_path):
    """DVC's stages and the report read results/params.json: the overlay's values and its base's."""
    out = tmp_path / "params.json"
    assert (
        cli.main(["check", "--params", str(ROOT / "params-protocol.yaml"), "--out", str(out)]) == 0
    )
    written = json.loads(out.read_text())
    protocol = yaml.safe_load((ROOT / "params-protocol.yaml").read_text())
    assert written["train"]["lr"] == protocol["train"]["lr"] and written["model"]["d_model"] == 64
    assert "base" not in written


@pytest.mark.parametrize("run", ["power", "protocol"])
def test_directory_run_writes_there_and_reads_the_code_here(tmp_path, run):
    """A dry run into another directory: outputs relative to it, code and params found here, and
    the models the resolved overlay names."""
    workdir = tmp_path / "runs" / run
    out = subprocess.run(
        [BIN / "snakemake", "-n", "-p", "--cores", "1", "--configfile", f"params-{run}.yaml"]
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
    assert commands and {(workdir / p).resolve() for p in commands} == {ROOT / f"params-{run}.yaml"}
    # an edit of the base revalidates too
    assert {f"{here}/params-{run}.yaml", f"{here}/params.yaml"} <= inputs
    study = resolved(f"params-{run}.yaml")["study"]
    models = {p.removeprefix("models/") for p in outputs if p.startswith("models/")}
    assert models == {f"{e}_s{s}" for e in study["variants"] for s in study["seeds"]}


@pytest.mark.parametrize(
    "name, mem_mb, runtime",
    # the default and the protocol: size 0.5, an hour (the floor); the study: size 6.7 (d_model
    # 320 x 8 layers), 100 epochs at 15 minutes per unit of size per 20 epochs
    [
        ("params.yaml", 4500, 60),
        ("params-protocol.yaml", 4500, 60),
        ("params-study.yaml", 10667, 500),
    ],
)
def test_a_training_job_asks_the_cluster_for_what_its_model_needs(name, mem_mb, runtime):
    assert train_resources(params.load(ROOT / name)) == {"mem_mb": mem_mb, "runtime": runtime}
