"""Snakemake and DVC run the pipeline declared once (dtpe/pipeline.py): the committed dvc.yaml is
the one the declaration writes, and every DVC stage is a Snakemake job with the same command, the
same outputs, and inputs that cover each other (DVC may name a folder where Snakemake lists its
files, or a model's variants.<variant> param where Snakemake lists its encoding files). Both are
expanded by the tools themselves. And both list every package file a step imports."""

import re
import subprocess
import sys
from pathlib import Path

from dvc.dependency.param import ParamsDependency
from dvc.repo import Repo
from dvc.stage import PipelineStage

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


def code_params(stage) -> set:
    """The encoding files a stage covers through its variants.<variant> params: validate records
    their hashes (dtpe check), as dvc.yaml cannot derive files from a variant's name."""
    from dtpe.model.encodings import sources

    return {
        f"src/{f}"
        for d in stage.deps
        if isinstance(d, ParamsDependency)
        for key in d.params
        if key.startswith("variants.")
        for f in sources(key.removeprefix("variants."))
    }


def dvc_stages(root: Path) -> dict:
    with Repo(str(root)) as repo:
        return {
            normalize(s.cmd): {
                "name": s.addressing,
                "outs": {o.def_path for o in s.outs},
                "deps": {d.def_path for d in s.deps if not isinstance(d, ParamsDependency)}
                | code_params(s),
            }
            for s in repo.index.stages
            if isinstance(s, PipelineStage)  # not the .dvc files that track a run's outputs
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
    """One stage per model and per-model step, named by DVC from study.variants x seeds."""
    import yaml

    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    models = {f"{e}-{s}" for e in study["variants"] for s in study["seeds"]}
    names = {s["name"] for s in dvc_stages(ROOT).values()}
    for stage in ("train", "evaluate", "attention"):
        assert {n.split("@")[1] for n in names if n.startswith(f"{stage}@")} == models, stage


def step_imports(step: str) -> set:
    """The package files `dtpe <step>` imports (dtpe/step_code.py's `imports`, read from the
    source)."""
    from dtpe.step_code import imports, module_file

    return {str(module_file(m).relative_to(ROOT)) for m in imports(step)}


def test_the_numerics_are_a_dependency_of_every_step_that_runs_a_model():
    """Editing numerics.py changes what every model computes: both tools plan those steps again."""
    for step in ("train", "evaluate", "attention", "explore"):
        assert "src/dtpe/numerics.py" in step_imports(step), step
    assert "src/dtpe/numerics.py" not in step_imports("data")


def test_deps_cover_every_imported_module():
    """A stage whose step imports a package file it does not list would not rerun when that
    file changes (issue 18): the imports are read from the source, the deps from both tools."""
    jobs, stages = snakemake_jobs(ROOT), dvc_stages(ROOT)
    for cmd, stage in stages.items():
        step = cmd.split()[1]
        imported = step_imports(step)
        # the reading itself works: every step reaches a module beyond cli.py and params.py
        assert len(imported - {"src/dtpe/cli.py", "src/dtpe/params.py"}) >= 1, (step, imported)
        for tool, deps in (("dvc.yaml", stage["deps"]), ("Snakemake", jobs[cmd]["deps"])):
            missing = {f for f in imported if not any(covers(d, f) for d in deps)}
            assert not missing, f"{stage['name']}: {tool} lacks the imported {sorted(missing)}"


def dvc_params(root: Path) -> dict[str, set[str]]:
    """Each stage's params keys; variants.${item.variant} (its code hashes, checked above, and
    its encodings' options) as `variants.<variant>`."""
    with Repo(str(root)) as repo:
        return {
            s.name.split("@")[0]: {
                "variants.<variant>" if key.startswith("variants.") else key
                for d in s.deps
                if isinstance(d, ParamsDependency)
                for key in d.params
            }
            for s in repo.index.stages
            if isinstance(s, PipelineStage)
        }


def test_each_step_reads_the_declared_params_in_dvc():
    """A params group a step reads but DVC does not list would not rerun that step there when it
    changes (compute.numerics changes every trained byte, for instance); Snakemake's rules take
    the same keys from the same declaration (workflow/rules/steps.smk)."""
    from dtpe import pipeline

    stages = dvc_params(ROOT)
    for step in pipeline.STEPS:
        declared = {k.replace("{variant}", "<variant>") for k in step.params}
        assert stages[step.name] == declared, f"{step.name}: DVC reads {stages[step.name]}"
    assert {"compute", "variants.<variant>"} <= stages["train"]


def test_dvc_yaml_is_written_from_the_declaration():
    """dvc.yaml is generated: after an edit of dtpe/pipeline.py, the code it derives (a new
    import), or params.yaml's study (the plots), `python -m dtpe.dvc_yaml dvc.yaml` rewrites it."""
    import yaml

    from dtpe import dvc_yaml

    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    assert (ROOT / "dvc.yaml").read_text() == dvc_yaml.dvc_yaml(study), (
        "dvc.yaml is not the declaration's: run `python -m dtpe.dvc_yaml dvc.yaml`"
    )


def test_dvc_tracks_the_running_worlds_package_and_no_other():
    """Every stage that runs the world names its package through params.yaml's env.world."""
    import yaml

    world = yaml.safe_load((ROOT / "params.yaml").read_text())["env"]["world"]
    with Repo(str(ROOT)) as repo:
        for s in repo.index.stages:
            if not isinstance(s, PipelineStage):
                continue
            worlds = {d.def_path for d in s.deps if d.def_path.startswith("src/dtpe/world/")}
            packages = {p for p in worlds if not p.endswith(".py")}
            assert packages <= {f"src/dtpe/world/{world}"}, (s.addressing, packages)
    assert "src/dtpe/world/${env.world}" in (ROOT / "dvc.yaml").read_text()
