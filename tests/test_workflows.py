"""Snakemake and DVC describe the same pipeline: every DVC stage is a Snakemake job with the same
command, the same outputs, and inputs that cover each other (DVC may name a folder where
Snakemake lists its files, or a model's variants.<variant> param where Snakemake lists its encoding
files). Both are expanded by the tools themselves. And both list every package file a step
imports."""

import ast
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


SRC = ROOT / "src"
# Whose imports are not followed: dtpe.cli imports each step's modules inside the step's
# function, where step_imports looks; dtpe.params reaches the encoding and state-encoder
# registries when it validates, which is the validate stage's concern (every stage follows it).


def module_file(name: str) -> Path:
    path = SRC / name.replace(".", "/")
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def imported(module: str, name: str) -> str:
    """The module `from <module> import <name>` loads: the submodule if `name` is one."""
    sub = f"{module}.{name}"
    return sub if module_file(sub).exists() else module


def torch_steps(cli: ast.Module) -> set[str]:
    """The cli functions in `_TORCH_STEPS`: main pins and checks the numerics they compute with."""
    for node in cli.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_TORCH_STEPS":
            return {e.id for e in node.value.elts}
    raise AssertionError("dtpe/cli.py has no _TORCH_STEPS")


def step_imports(step: str) -> set:
    """The dtpe modules `dtpe <step>` imports: those its cli function (and the cli helpers it
    calls) import, and theirs, transitively, by reading the source."""
    tree = ast.parse((SRC / "dtpe/cli.py").read_text())
    cli = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    todo, seen_funcs, modules = [f"cmd_{step}"], set(), {"dtpe.cli", "dtpe.params"}
    if f"cmd_{step}" in torch_steps(tree):
        modules.add("dtpe.numerics")  # main pins and checks the kernels of these steps
    while todo:
        func = todo.pop()
        seen_funcs.add(func)
        for node in ast.walk(cli[func]):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                modules |= {imported(node.module, a.name) for a in node.names}
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in cli:
                todo += [node.func.id] if node.func.id not in seen_funcs else []
    found, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        if name == "dtpe.cli" or name == "dtpe.params" and step != "check":
            continue
        for node in ast.walk(ast.parse(module_file(name).read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                todo += [imported(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("dtpe")]
    return {str(module_file(m).relative_to(ROOT)) for m in found if module_file(m).exists()}


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


def snakemake_params(root: Path) -> dict[str, set[str]]:
    """Each rule's params, as the params keys they read: `x=config["a"]["b"]` reads `a.b`;
    `variant_options` (the options of the model's encodings) stands for DVC's
    `variants.<variant>`."""
    rules = {}
    for path in sorted((root / "workflow" / "rules").glob("*.smk")):
        for name, body in re.findall(r"^rule (\w+):\n((?:    .*\n|\n)*)", path.read_text(), re.M):
            block = re.search(r"^    params:\n((?:        .*\n)*)", body, re.M)
            text = block.group(1) if block else ""
            rules[name] = {
                ".".join(re.findall(r'\["(\w+)"\]', reads))
                for reads in re.findall(r"config((?:\[\"\w+\"\])+)", text)
            } | ({"variants.<variant>"} if "=variant_options" in text else set())
    return rules


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


def test_each_step_reads_the_same_params_in_both_tools():
    """A params group a step reads but one tool does not list would not rerun that step there
    when it changes (compute.numerics changes every trained byte, for instance)."""
    rules, stages = snakemake_params(ROOT), dvc_params(ROOT)
    for stage, keys in stages.items():
        if stage in ("validate", "report"):  # they read the whole validated file
            continue
        assert rules[stage] == keys, f"{stage}: Snakemake reads {rules[stage]}, DVC {keys}"
    assert {"compute", "variants.<variant>"} <= rules["train"]
