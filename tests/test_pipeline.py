"""End to end with the real tools on a tiny configuration in a temporary copy of the project:
Snakemake and DVC each build everything; an evaluation-only change reruns evaluation and what
follows but no training, in both; DVC adopts Snakemake's outputs; and a fresh clone that pulls
the cached results from a local DVC remote is accepted by Snakemake as complete. On a project
that DVC built once: adding a variant plans only its models' jobs and the aggregate ones, and
an invalid param stops both tools before any output is touched. Those build for minutes (marked
slow); the first test plans the same wiring in seconds, so the fast suite runs it too."""

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import ROOT

from dtpe import pipeline

BIN = Path(sys.executable).parent
TOOL_ENV = {
    **os.environ,
    "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}",
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@t",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@t",
    "DVC_NO_ANALYTICS": "1",
}
PROJECT = ["Snakefile", "dvc.yaml", ".dvcignore", ".gitignore", "workflow", "src"]


def run(cwd, *cmd, check=True):
    done = subprocess.run(cmd, cwd=cwd, env=TOOL_ENV, capture_output=True, text=True)
    if check and done.returncode:
        raise AssertionError(
            f"{' '.join(cmd)} failed ({done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    return done


def e2e_params() -> dict:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    # One seed: the tools' handling of the seed wildcard is the same for one as for many (the
    # dry-run expansion of params.yaml's seeds is tests/test_workflows.py's), each job costs time.
    raw["study"] = {"variants": ["learned", "rope"], "seeds": [1]}
    raw["data"].update(episodes=120, suite_sizes=[8, 10], suite_layouts=4)
    raw["model"].update(d_model=16, n_heads=2, n_layers=1, context=6, item_dim=4, encoder_filters=4)
    raw["train"].update(epochs=1, batch_size=32, val_layouts=4)
    raw["evaluate"].update(contexts=[6, 9], batch_size=4)
    raw["reach"].update(contexts=[1, 4])
    raw["attention"].update(grid_size=10, episodes=2, shift=20)
    return raw


def make_project(path: Path, raw: dict) -> Path:
    path.mkdir()
    for name in PROJECT:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(
                src,
                path / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"),
            )
        elif src.exists():
            shutil.copy(src, path / name)
    (path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    run(path, "git", "init", "-q", "-b", "main")
    run(path, "dvc", "init", "-q")
    run(path, "dvc", "remote", "add", "-d", "local", str(path.parent / "remote"))
    run(path, "git", "add", "-A")
    run(path, "git", "commit", "-q", "-m", "tiny project")
    return path


def set_param(path: Path, group: str, key: str, value) -> None:
    raw = yaml.safe_load((path / "params.yaml").read_text())
    raw[group][key] = value
    (path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))


def planned_rules(path: Path) -> set:
    """Rules `snakemake -n` would run (from its job-stats table)."""
    out = run(path, "snakemake", "-n", "--cores", "2").stdout
    if "Nothing to be done" in out:
        return set()
    table = out[out.index("Job stats:") :].split("\n\n")[0].splitlines()[3:]
    return {line.split()[0] for line in table if line.split() and line.split()[0] != "total"}


def dvc_ran(output: str) -> set:
    return {
        line.split("'")[1].split("@")[0]
        for line in output.splitlines()
        if line.startswith("Running stage")
    }


def test_a_fresh_project_plans_every_declared_step_in_both_tools(tmp_path):
    """The tiny project as the slow tests build it, only planned: Snakemake would run every
    step of the declaration (a model's once per model), and DVC reports every stage, a model's
    per variant and seed, as not yet built."""
    project = make_project(tmp_path / "project", e2e_params())
    declared = {step.name for step in pipeline.STEPS}
    assert planned_rules(project) == declared | {"all"}
    stages = set(json.loads(run(project, "dvc", "status", "--json").stdout))
    per_model = {s.name for s in pipeline.STEPS if s.per_model}
    expected = {
        f"{name}@{v}-1" if name in per_model else name
        for name in declared
        for v in ("learned", "rope")
    }
    assert stages == expected


OUTPUTS = [
    "figures/REPORT.md",
    "figures/fig3_success_by_grid.png",
    "results/stats/metrics.json",
    "results/tables/success_by_grid.md",
    "results/eval/context/learned_s1.csv",
    "results/eval/test/learned_s1.csv",
    "results/params.json",
    "models/rope_s1/model.safetensors",
]


@pytest.mark.slow
def test_snakemake_then_dvc_adopts_then_clone_and_pull(tmp_path):
    project = make_project(tmp_path / "project", e2e_params())
    run(project, "snakemake", "--cores", "2")
    for out in OUTPUTS:
        assert (project / out).is_file(), out
    assert planned_rules(project) == set()

    # DVC adopts what Snakemake built, without recomputing anything.
    run(project, "dvc", "commit", "-f", "-q")
    assert json.loads(run(project, "dvc", "status", "--json").stdout) == {}

    # An evaluation-only change whose results must differ (a new context length).
    set_param(project, "evaluate", "contexts", [6, 12])
    assert planned_rules(project) == {
        "validate",
        "evaluate",
        "reach",  # it reads the trained context's episodes from the grid sweep evaluate rewrites
        "position",  # it plays at the longest context and reads the grid sweep
        "stats",
        "tables",
        "figures",
        "report",
        "explore",
        "all",
    }
    run(project, "snakemake", "--cores", "2")
    run(project, "dvc", "commit", "-f", "-q")
    assert json.loads(run(project, "dvc", "status", "--json").stdout) == {}

    run(project, "git", "add", "-A")
    run(project, "git", "commit", "-q", "-m", "results")
    run(project, "dvc", "push", "-q")
    clone = tmp_path / "clone"
    run(tmp_path, "git", "clone", "-q", str(project), str(clone))
    run(clone, "dvc", "pull", "-q")
    assert (clone / "models/rope_s1/model.safetensors").is_file()
    run(clone, "bash", "-c", "dvc status -q && snakemake --touch --forceall --cores 1")
    assert planned_rules(clone) == set()
    set_param(clone, "evaluate", "target_return", 0.9)
    assert "train" not in planned_rules(clone) and "evaluate" in planned_rules(clone)


@pytest.fixture(scope="module")
def dvc_built(tmp_path_factory):
    """A tiny project that `dvc repro` built once, and that Snakemake, too, takes as complete;
    tests work on copies (`built_copy`). Returns its path and the first run's log."""
    project = make_project(tmp_path_factory.mktemp("built") / "project", e2e_params())
    log = run(project, "dvc", "repro").stdout
    run(project, "snakemake", "--touch", "--forceall", "--cores", "1")
    return project, log


def built_copy(dvc_built, tmp_path: Path) -> Path:
    project = tmp_path / "project"
    shutil.copytree(dvc_built[0], project, symlinks=True)  # keeps mtimes: Snakemake's view
    return project


@pytest.mark.slow
def test_dvc_repro_builds_everything_and_reruns_only_evaluation(dvc_built, tmp_path):
    project, first = built_copy(dvc_built, tmp_path), dvc_built[1]
    assert {
        "validate",
        "data",
        "train",
        "evaluate",
        "attention",
        "stats",
        "tables",
        "figures",
        "report",
    } <= dvc_ran(first)
    for out in OUTPUTS:
        assert (project / out).is_file(), out
    set_param(project, "evaluate", "contexts", [6, 12])
    again = dvc_ran(run(project, "dvc", "repro").stdout)
    assert {"validate", "evaluate", "stats", "tables", "report"} <= again
    assert not again & {"data", "train", "attention"}


PER_MODEL = {step.name for step in pipeline.STEPS if step.per_model}
AGGREGATE = {"validate", "stats", "tables", "figures", "report", "explore", "all"}


def snakemake_planned_models(path: Path) -> dict:
    """Per rule of `snakemake -n`, the variants of the jobs it would run."""
    out = run(path, "snakemake", "-n", "--cores", "1").stdout
    planned = {}
    for block in out.split("\nrule ")[1:]:
        rule = block.split(":")[0].strip()
        wildcards = re.search(r"^    wildcards: (.*)$", block, re.M)
        variant = re.search(r"variant=([^,\s]+)", wildcards.group(1)) if wildcards else None
        planned.setdefault(rule, set()).add(variant.group(1) if variant else None)
    return planned


@pytest.mark.slow
def test_new_encoding_plans_only_its_models(dvc_built, tmp_path):
    project = built_copy(dvc_built, tmp_path)
    seeds = e2e_params()["study"]["seeds"]
    set_param(project, "study", "variants", ["learned", "rope", "alibi"])

    planned = snakemake_planned_models(project)
    assert set(planned) - PER_MODEL <= AGGREGATE, planned
    for rule in PER_MODEL:
        assert planned.get(rule) == {"alibi"}, (rule, planned)

    changed = set(json.loads(run(project, "dvc", "status", "--json").stdout))
    expected = {f"{stage}@alibi-{seed}" for stage in PER_MODEL for seed in seeds}
    assert expected <= changed and changed - expected <= AGGREGATE, changed


@pytest.mark.slow
def test_editing_one_worlds_colours_plans_no_job_of_another(dvc_built, tmp_path):
    """A world's code reruns its own runs only (world/catalog.py's files): after DoorKey's colours
    change, the maze project is complete in both tools; after the maze's, its models train again."""
    project = built_copy(dvc_built, tmp_path)
    doorkey = project / "src/dtpe/world/doorkey/picture.py"
    doorkey.write_text(doorkey.read_text().replace("(44, 160, 44),  # goal", "(0, 99, 0),  # goal"))
    assert planned_rules(project) == set()
    assert json.loads(run(project, "dvc", "status", "--json").stdout) == {}
    maze = project / "src/dtpe/world/maze/picture.py"
    maze.write_text(maze.read_text().replace("(44, 160, 44),  # goal", "(0, 99, 0),  # goal"))
    assert {"train", "figures"} <= planned_rules(project)
    assert "train@rope-1" in json.loads(run(project, "dvc", "status", "--json").stdout)


def tracked_outputs(path: Path) -> dict:
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for folder in ("models", "results", "data", "figures")
        for f in sorted((path / folder).rglob("*"))
        if f.is_file()
    }


@pytest.mark.slow
def test_invalid_param_touches_no_output(dvc_built, tmp_path):
    project = built_copy(dvc_built, tmp_path)
    before = tracked_outputs(project)
    assert "results/params.json" in before and "models/rope_s1/model.safetensors" in before
    set_param(project, "train", "lr", -1)
    for tool in (["dvc", "repro"], ["snakemake", "--cores", "1"]):
        done = run(project, *tool, check=False)
        assert done.returncode != 0, tool
        assert "train.lr" in done.stdout + done.stderr, (
            tool,
            done.stdout[-2000:],
            done.stderr[-2000:],
        )
        assert tracked_outputs(project) == before, tool


@pytest.mark.slow
def test_bad_params_stop_before_any_job(tmp_path):
    raw = e2e_params()
    raw["study"]["variants"] = ["rope", "alibi-typo"]
    project = make_project(tmp_path / "project", raw)
    done = run(project, "snakemake", "--cores", "1", check=False)
    assert done.returncode != 0 and "alibi-typo" in done.stdout + done.stderr
    assert not (project / "data").exists()
    raw = e2e_params()
    raw["train"]["epochs"] = "ten"
    (project / "params.yaml").write_text(yaml.safe_dump(raw))
    done = run(project, "snakemake", "--cores", "1", check=False)
    assert done.returncode != 0 and "epochs" in done.stdout + done.stderr


def pushed_and_cloned(project: Path, run_dir: str, clone: Path, overlay: list) -> Path:
    """A run's data and models tracked (`dvc add`) and pushed as a run's are, the project
    committed and cloned, the clone's data and models pulled from the remote and accepted by
    Snakemake (`--touch`): the clone, as another machine would have it."""
    run(project, "dvc", "add", "-q", f"{run_dir}/data", f"{run_dir}/models")
    run(project, "git", "add", "-A")
    run(project, "git", "commit", "-q", "-m", run_dir)
    run(project, "dvc", "push", "-q")
    run(clone.parent, "git", "clone", "-q", str(project), str(clone))
    run(clone, "dvc", "pull", "-q", f"{run_dir}/data.dvc", f"{run_dir}/models.dvc")
    run(clone, "snakemake", "--touch", "--forceall", "--cores", "1", *overlay)
    return clone


@pytest.mark.slow
def test_a_doorkey_run_goes_through_snakemake_and_dvc(tmp_path):
    """A tiny DoorKey run as the README gives it, an overlay in runs/<run>: Snakemake builds it
    all, DVC tracks its data and models (`dvc add`, as a run's are), a clone pulls them back from
    the remote, and Snakemake takes the clone as complete."""
    raw = e2e_params()
    project = make_project(tmp_path / "project", raw)
    raw["env"]["world"] = "doorkey"
    raw["data"].update(suite_sizes=[5, 6], suite_layouts=4)
    raw["attention"]["grid_size"] = 6
    raw["explorer"]["max_steps"] = 20
    raw["evaluate"]["contexts"] = [raw["model"]["context"]]  # as params-doorkey.yaml: none longer
    (project / "runs" / "doorkey").mkdir(parents=True)
    (project / "params-doorkey.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    overlay = ["--configfile", "params-doorkey.yaml", "--directory", "runs/doorkey"]
    run(project, "snakemake", "--cores", "2", *overlay)
    for out in OUTPUTS:
        assert (project / "runs/doorkey" / out).is_file(), out
    summary = json.loads((project / "runs/doorkey/data/summary.json").read_text())
    assert sorted(summary["suites"]) == ["5", "6"]
    assert summary["suites"]["6"]["cap"] == 360  # MiniGrid's 10 N^2
    clone = pushed_and_cloned(project, "runs/doorkey", tmp_path / "clone", overlay)
    assert (clone / "runs/doorkey/models/rope_s1/model.safetensors").is_file()
    out = run(clone, "snakemake", "-n", "--cores", "1", *overlay).stdout
    assert "Nothing to be done" in out, out[-2000:]


@pytest.mark.slow
def test_a_sequential_run_adds_its_seeds_interim_by_interim(tmp_path):
    """A tiny sequential run (params `verdict.sequential`): each call of the one command trains
    the next interim's models only and recomputes the decisions from every evaluation so far;
    the finished interims' models survive a clone through the DVC remote; once the run is
    finished (decided or at its cap) the command has nothing to do."""
    raw = e2e_params()
    project = make_project(tmp_path / "project", raw)
    raw["study"] = {"variants": ["learned", "rope"], "seeds": [1, 2, 3, 4]}
    raw["verdict"] = {
        "hypotheses": [{"a": "rope", "b": "learned", "grids": [10], "margin": 50}],
        "confirmatory": False,
        "sequential": {"interims": 2, "seeds_per_interim": 2, "spending": "obrien_fleming"},
    }
    (project / "runs" / "seq").mkdir(parents=True)
    (project / "params-seq.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    overlay = ["--configfile", "params-seq.yaml", "--directory", "runs/seq"]
    first = run(project, "snakemake", "--cores", "2", *overlay)
    assert "interim 1 trains 4 models" in first.stderr
    stats = project / "runs/seq/results/stats"
    interims = (stats / "interims.csv").read_text()
    assert "1,learned rope,1 2,True" in interims
    models = project / "runs/seq/models"
    assert sorted(p.name for p in models.iterdir()) == [
        "learned_s1",
        "learned_s2",
        "rope_s1",
        "rope_s2",
    ]
    decided = (stats / "decisions.csv").read_text().splitlines()[1]
    # 2 seeds a side: Welch's t on 2 degrees of freedom, carried to z, stays below
    # O'Brien-Fleming's first boundary (|z| 2.77) but for a gap of many seed SDs: the test goes on
    assert ",open," in decided, decided
    kept = {p.name: (p / "model.safetensors").stat().st_mtime_ns for p in models.iterdir()}
    clone = pushed_and_cloned(project, "runs/seq", tmp_path / "clone", overlay)
    planned = run(clone, "snakemake", "-n", "-p", "--cores", "1", *overlay)
    assert "interim 2 trains 4 models" in planned.stderr
    trains = re.findall(r"dtpe train .* --seed (\d+)", planned.stdout + planned.stderr)
    # the first interim's models are kept
    assert sorted(set(trains)) == ["3", "4"], planned.stdout[-3000:]
    second = run(project, "snakemake", "--cores", "2", *overlay)
    assert "interim 2 trains 4 models" in second.stderr
    for name, mtime in kept.items():
        assert (models / name / "model.safetensors").stat().st_mtime_ns == mtime, name
    assert len(list(models.iterdir())) == 8
    decisions = pd.read_csv(stats / "decisions.csv").iloc[0]
    assert decisions.interim == 2  # decided at the cap's interim
    assert decisions.outcome in ("equivalent within ±50", "undecided", "a > b", "a < b")
    last = run(project, "snakemake", "-n", "--cores", "1", *overlay)
    assert "sequential run finished: 8 models" in last.stderr
    assert "Nothing to be done" in last.stdout
