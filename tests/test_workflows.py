"""Snakemake and DVC describe the same pipeline: every DVC stage is a Snakemake job with the same
command, the same outputs, and inputs that cover each other (DVC may name a folder where
Snakemake lists its files). Both are expanded by the tools themselves."""

import re
import subprocess
import sys
from pathlib import Path

from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def normalize(cmd: str) -> str:
    cmd = re.sub(r"\s+>\s*\S+\s+2>&1\s*$", "", cmd)  # Snakemake's log redirection
    return " ".join(cmd.split())


def snakemake_jobs(root: Path) -> dict:
    """Every job of a forced dry run: its shell command, inputs and outputs."""
    out = subprocess.run(
        [BIN / "snakemake", "-n", "-p", "--forceall", "--cores", "1"],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    jobs = {}
    for block in out.split("\nrule ")[1:]:
        fields = dict(re.findall(r"^    (input|output): (.*)$", block, re.M))
        shell = re.search(r"^Shell command: (.*)$", block, re.M)
        if shell and "output" in fields:  # the target rule `all` has neither
            jobs[normalize(shell.group(1))] = {
                "outs": set(fields["output"].split(", ")),
                "deps": set(fields.get("input", "").split(", ")) - {""},
            }
    return jobs


def dvc_stages(root: Path) -> dict:
    with Repo(str(root)) as repo:
        return {
            normalize(s.cmd): {
                "name": s.addressing,
                "outs": {o.def_path for o in s.outs},
                "deps": {d.def_path for d in s.deps if not isinstance(d, ParamsDependency)},
            }
            for s in repo.index.stages
        }


def covers(dep: str, path: str) -> bool:
    return path == dep or path.startswith(dep.rstrip("/") + "/")


def test_snakemake_and_dvc_agree():
    jobs, stages = snakemake_jobs(ROOT), dvc_stages(ROOT)
    assert set(jobs) == set(stages), (
        f"commands only in Snakemake: {set(jobs) - set(stages)}; "
        f"only in DVC: {set(stages) - set(jobs)}"
    )
    for cmd, stage in stages.items():
        job = jobs[cmd]
        assert job["outs"] == stage["outs"], f"{stage['name']}: outputs differ"
        uncovered = {p for p in job["deps"] if not any(covers(d, p) for d in stage["deps"])}
        unused = {d for d in stage["deps"] if not any(covers(d, p) for p in job["deps"])}
        assert not uncovered and not unused, (
            f"{stage['name']}: Snakemake-only inputs {uncovered}, DVC-only deps {unused}"
        )


def test_expansion_covers_every_model():
    stages = dvc_stages(ROOT)
    names = {s["name"] for s in stages.values()}
    import yaml

    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    for enc in study["encodings"]:
        for seed in study["seeds"]:
            for stage in ("train", "evaluate_grid", "evaluate_context", "attention"):
                assert f"{stage}@{enc}-{seed}" in names
