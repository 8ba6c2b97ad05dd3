"""The pipeline, declared once: every step's command, inputs, outputs, params and resources,
and its code, derived from its imports by `code`. Snakemake's rules (workflow/rules/steps.smk)
are made from `STEPS` when it parses the workflow; dvc.yaml is written from them
(`python -m dtpe.pipeline dvc.yaml`; tests/test_workflows.py fails while the committed file
differs); scripts/study_gpu.py runs their commands on a GPU machine; and `dtpe`'s parser is
built from each step's flags (`Flag`: the value the tools pass, the help the CLI gives).

Placeholders, filled by each tool in its own syntax: in paths `{variant}` and `{seed}` (this
model's), `{model}` (every model of the run: Snakemake lists their files, DVC names the folder)
and `{world}` (params `env.world`: DVC templates it from params.yaml, so `dvc repro` tracks the
running world's package, whichever it is); in commands also `{params}` (the params file),
`{threads}` (params `compute.threads`) and `{output.<name>}`; `compare`, a step over several
runs, has `{run}` in its paths (each run's folder) and `{runs}` and `{labels}` in its command."""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dtpe.analysis.outputs import FIGURE_TEMPLATES
from dtpe.world import catalog as worlds

PACKAGE = Path(__file__).resolve().parent
ROOT = PACKAGE.parents[1]  # the repository: paths below are relative to it
MODEL = "{variant}_s{seed}"
"""a model's name (dtpe/names.py) with the model's placeholders"""


@dataclass(frozen=True)
class Out:
    """An output: a file, or a folder (`folder`); DVC caches it (`cache`: data and checkpoints)
    or leaves it to git; `persist`: DVC keeps it while the step reruns; `name`: the command
    names it as `{output.<name>}`."""

    path: str
    folder: bool = False
    cache: bool = False
    persist: bool = False
    name: str | None = None


@dataclass(frozen=True)
class Flag:
    """An option of a step's command, declared once: the value the pipeline passes (its
    placeholders filled by each tool) and what `dtpe <step> --help` says of it (cli.parser
    builds each step's parser from these)."""

    name: str
    value: str
    help: str
    type: Callable = Path
    default: object = None
    """None: required"""
    nargs: str | None = None


PARAMS = Flag("--params", "{params}", "params file (default: params.yaml)", str, "params.yaml")


def _folder(name: str, folder: str, what: str) -> Flag:
    """An input folder with its conventional name as the default."""
    return Flag(name, folder, f"{what} (default: {folder})", Path, Path(folder))


THREADS = Flag("--threads", "{threads}", "torch threads (Snakemake passes its `threads`)", int, 1)
DATA = _folder("--data", "data", "data folder")
RESULTS = _folder("--results", "results", "results folder: train/, eval/, attention/, stats/")
# one model's flags: the model, its seed, its threads, the data
MODEL_FLAGS = (
    Flag("--variant", "{variant}", "the model's k x t encodings: one of study.variants", str),
    Flag("--seed", "{seed}", "the model's training seed", int),
    THREADS,
    DATA,
)


CHECKPOINT = Flag("--model", f"models/{MODEL}", "folder of the trained model")


@dataclass(frozen=True)
class Step:
    """One `dtpe` subcommand as both tools run it."""

    name: str
    """the step's name: a DVC stage, a Snakemake rule"""
    subcommand: str
    summary: str
    """its one line in `dtpe --help`"""
    flags: tuple[Flag, ...]
    """its command's options, in order (`--params` first: every step's)"""
    inputs: tuple[str, ...]
    """what it reads besides its code: other steps' outputs"""
    outputs: tuple[Out, ...]
    params: tuple[str, ...] = ()
    """the params keys it reads (a model's `variants.{variant}`: its encodings' options, and in
    DVC their files' hashes, which `dtpe check` writes)"""
    params_file: str = "results/params.json"
    """where DVC reads them: the validated file, or params.yaml itself (None: a step that
    reads the whole validated file as an input)"""
    reads: tuple[str, ...] = ()
    """package files it reads but does not import (a folder ends in /): templates, schemas,
    the registries' sources read without importing them"""
    per_model: bool = False
    threads: bool = False
    """True: params `compute.threads` (torch's threads); else one"""
    mem_mb: int = 1000
    runtime: int = 10
    benchmark: bool = True
    priority: int = 0
    comments: tuple[str, ...] = ()
    """dvc.yaml's comment lines above the stage"""

    @property
    def command(self) -> str:
        """the command both tools run, with its placeholders"""
        return " ".join(["dtpe", self.subcommand, *(f"{f.name} {f.value}" for f in self.flags)])

    def log(self) -> str:
        return f"logs/{self.name}/{MODEL}.log" if self.per_model else f"logs/{self.name}.log"

    def timing(self) -> str:
        """Its wall time's record (Snakemake's benchmark file), kept with the results: git
        keeps it, touching or pulling the step's outputs leaves it, a rerun replaces it."""
        return self.log().replace("logs/", f"{TIMINGS}/").replace(".log", ".tsv")


TIMINGS = "results/timings"
"""every step's wall-time record, as Step.timing names it"""


def figures(ext: str = "") -> tuple[str, ...]:
    """The figures, with the run's world as `{world}`: every extension, or `ext`'s."""
    exts = [ext] if ext else ["png", "pdf"]
    return tuple(f"figures/{name}.{e}" for name in FIGURE_TEMPLATES for e in exts)


EXPLORER = ("figures/explorer.html", "figures/embeddings.png", "figures/episodes")


def targets(models: list[tuple[str, int]], world: str) -> list[str]:
    """Every output of the run: each step's, a model's step's once per model of `models`
    ((variant, seed) pairs), `{world}` filled in. Snakemake's `all` asks for them by name: a
    sequential run's next interim adds models to the inputs of existing aggregate outputs, which
    Snakemake would otherwise leave unbuilt."""
    paths = []
    for step in STEPS:
        for out in step.outputs:
            if step.per_model:
                paths += [out.path.format(variant=v, seed=s) for v, s in models]
            else:
                paths.append(out.path.format(world=world))
    return paths


SHARED_WITH = "{shared_with}"
"""an input that stands for a confirmatory run's own data/ and results/params.json and those of
each folder of params verdict.shared_with (none where it is empty): the layouts the stats step
counts as shared"""

# what evaluate.suite_rows reads of the evaluate group: a step that plays episodes beside the
# evaluation's sweeps (seen, reach) depends on these alone, so no sweep's knob reruns it
_PLAYED = (
    "evaluate.target_return",
    "evaluate.batch_size",
    "evaluate.precision",
    "evaluate.expert_cap",
)
STEPS = (
    Step(
        "validate",
        "check",
        "validate the params file and write it as JSON",
        (PARAMS, Flag("--out", "results/params.json", "JSON file to write")),
        inputs=("{params}",),
        outputs=(Out("results/params.json", persist=True),),
        params_file=None,
        reads=("params.schema.yaml", "model/encodings/", "model/state_encoders/"),
        benchmark=False,
        runtime=5,
        comments=("persist: a failing validation leaves the last valid params in place",),
    ),
    Step(
        "data",
        "data",
        "generate the training episodes and evaluation suites",
        (PARAMS, _folder("--out", "data", "data folder to write")),
        inputs=(),
        outputs=(Out("data", folder=True, cache=True),),
        params=("data", "env"),
        mem_mb=2000,
    ),
    Step(
        "train",
        "train",
        "train one model",
        (
            PARAMS,
            *MODEL_FLAGS,
            Flag(
                "--out",
                f"models/{MODEL}",
                "folder for the trained model (safetensors and config.json)",
            ),
            Flag(
                "--metrics", f"results/train/{MODEL}", "folder for metrics.csv and positions.json"
            ),
        ),
        inputs=("data",),
        outputs=(
            Out(f"models/{MODEL}", folder=True, cache=True),
            Out(f"results/train/{MODEL}", folder=True),
        ),
        params=("model", "train", "env", "compute", "variants.{variant}"),
        per_model=True,
        threads=True,
        # Trainings are the long jobs: started first, evaluations fill the cores they leave,
        # and the last training does not run alone at the end of the run.
        priority=1,
    ),
    Step(
        "evaluate",
        "evaluate",
        "the test split, grid and context sweeps of one model",
        (
            PARAMS,
            *MODEL_FLAGS,
            CHECKPOINT,
            *(
                Flag(
                    f"--out-{sweep}",
                    f"{{output.{sweep}}}",
                    f"CSV to write, one row per episode: {what}",
                )
                for sweep, what in (
                    ("test", "the training size's test split at the training context"),
                    ("grid", "every suite at the training context"),
                    ("context", "every suite at the other contexts of evaluate.contexts"),
                )
            ),
        ),
        inputs=("data", f"models/{MODEL}"),
        outputs=tuple(
            Out(f"results/eval/{sweep}/{MODEL}.csv", name=sweep)
            for sweep in ("test", "grid", "context")
        ),
        params=("evaluate", "env", "compute", "model", "data.suite_sizes", "variants.{variant}"),
        per_model=True,
        threads=True,
        mem_mb=4000,
        runtime=60,
    ),
    Step(
        "seen",
        "seen",
        "one model on layouts it trained on, beside the test split",
        (
            PARAMS,
            *MODEL_FLAGS,
            CHECKPOINT,
            Flag(
                "--out",
                f"results/eval/seen/{MODEL}.csv",
                "CSV to write, one row per "
                "episode: training layouts, as many as the test split holds, at the training "
                "size and context",
            ),
        ),
        inputs=("data", f"models/{MODEL}"),
        outputs=(Out(f"results/eval/seen/{MODEL}.csv"),),
        params=(*_PLAYED, "env", "compute", "model", "variants.{variant}"),
        per_model=True,
        threads=True,
        mem_mb=4000,
        runtime=10,
    ),
    Step(
        "reach",
        "reach",
        "one model at contexts shorter than the training one",
        (
            PARAMS,
            *MODEL_FLAGS,
            CHECKPOINT,
            # the training context's episodes, played by the grid sweep
            Flag("--grid", f"results/eval/grid/{MODEL}.csv", "the model's grid sweep CSV"),
            Flag(
                "--out",
                f"results/eval/reach/{MODEL}.csv",
                "CSV to write, one row per "
                "episode: the reach sizes' suites at each context of reach.contexts",
            ),
        ),
        inputs=("data", f"models/{MODEL}", f"results/eval/grid/{MODEL}.csv"),
        outputs=(Out(f"results/eval/reach/{MODEL}.csv"),),
        # its own params group, and of evaluate's only what suite_rows reads: adding or changing
        # the ladder reruns no evaluation
        params=(
            "reach",
            *_PLAYED,
            "evaluate.layouts_per_suite",
            "env",
            "compute",
            "model",
            "data.suite_sizes",
            "data.train_size",
            "variants.{variant}",
        ),
        per_model=True,
        threads=True,
        mem_mb=4000,
        runtime=30,
    ),
    Step(
        "position",
        "position",
        "one model at the whole-episode context with rope's scalings and each encoding off",
        (
            PARAMS,
            *MODEL_FLAGS,
            CHECKPOINT,
            # a scaling's sweep takes the layouts the grid sweep played
            Flag("--grid", f"results/eval/grid/{MODEL}.csv", "the model's grid sweep CSV"),
            Flag(
                "--out",
                f"results/eval/position/{MODEL}.csv",
                "CSV to write, one row per episode: every suite with each of position.scalings, "
                "the suites position.sizes with each of position.ablate switched off",
            ),
        ),
        inputs=("data", f"models/{MODEL}", f"results/eval/grid/{MODEL}.csv"),
        outputs=(Out(f"results/eval/position/{MODEL}.csv"),),
        # its own params group, and of evaluate's only what it plays with: adding it to a run
        # reruns no evaluation
        params=(
            "position",
            *_PLAYED,
            "evaluate.contexts",
            "evaluate.layouts_per_suite",
            "env",
            "compute",
            "model",
            "data.suite_sizes",
            "variants.{variant}",
        ),
        per_model=True,
        threads=True,
        mem_mb=4000,
        runtime=60,
    ),
    Step(
        "attention",
        "attention",
        "attention analysis of one model",
        (
            PARAMS,
            *MODEL_FLAGS,
            CHECKPOINT,
            Flag("--out", f"results/attention/{MODEL}.json", "JSON to write"),
        ),
        inputs=("data", f"models/{MODEL}"),
        outputs=(Out(f"results/attention/{MODEL}.json"),),
        params=("attention", "env", "compute", "model", "variants.{variant}"),
        per_model=True,
        threads=True,
        mem_mb=4000,
        runtime=30,
    ),
    Step(
        "explore",
        "explore",
        "the episode and attention explorer (explorer.html), episode GIFs, embedding similarity",
        (
            PARAMS,
            THREADS,
            DATA,
            _folder("--models", "models", "checkpoints"),
            RESULTS,
            Flag("--out", "figures", "folder for the page and figures"),
        ),
        inputs=("data", "models/{model}", "results/eval/grid/{model}.csv"),
        outputs=(
            Out(EXPLORER[0]),
            Out(EXPLORER[1]),
            # one GIF per grid size (a folder: DVC's outputs cannot follow the sizes)
            Out(EXPLORER[2], folder=True),
        ),
        params=(
            "study",
            "explorer",
            "env",
            "compute",
            "model",
            "evaluate",
            "data.suite_sizes",
        ),
        params_file="params.yaml",  # its command line takes compute.threads from there
        reads=("explorer/page.html",),
        threads=True,
        mem_mb=4000,
        runtime=60,
    ),
    Step(
        "stats",
        "stats",
        "statistics over seeds and variants",
        (PARAMS, RESULTS, Flag("--out", "results/stats", "folder for the statistics")),
        inputs=(
            *(
                f"results/eval/{sweep}/{{model}}.csv"
                for sweep in ("test", "grid", "context", "reach", "seen", "position")
            ),
            "results/train/{model}",
            "results/attention/{model}.json",
            SHARED_WITH,
        ),
        outputs=(Out("results/stats", folder=True),),
        params=("study", "stats", "verdict", "data.suite_sizes", "data.train_size"),
        mem_mb=2000,
    ),
    Step(
        "tables",
        "tables",
        "the study's tables as CSV, Markdown and LaTeX",
        (
            PARAMS,
            Flag("--stats", "results/stats", "folder the stats step wrote"),
            Flag("--out", "results/tables", "folder for the tables"),
        ),
        inputs=("results/stats",),
        outputs=(Out("results/tables", folder=True),),
        params=("study", "stats", "verdict", "model.context"),
    ),
    Step(
        "figures",
        "figures",
        "Figures 1-7 as PNG and PDF",
        (PARAMS, DATA, RESULTS, Flag("--out", "figures", "folder for the figures")),
        inputs=("data", "results/stats", "results/train/{model}", "results/attention/{model}.json"),
        outputs=tuple(Out(f) for f in figures()),
        params=("study", "verdict", "data.suite_sizes", "model.context"),
        mem_mb=2000,
    ),
    Step(
        "report",
        "report",
        "figures/REPORT.md: every table and figure, params, timings",
        (
            PARAMS,
            RESULTS,
            _folder("--figures", "figures", "figures folder"),
            Flag(
                "--benchmarks",
                TIMINGS,
                f"Snakemake's benchmark files, each step's wall time "
                f"(default: {TIMINGS}; if missing: not recorded)",
                Path,
                Path(TIMINGS),
            ),
            Flag("--out", "figures/REPORT.md", "Markdown file to write"),
        ),
        # the report prints every param (the validated file, whole) and links the explorer,
        # the GIFs and the embedding figure
        inputs=(
            "results/params.json",
            "results/tables",
            "results/attention/{model}.json",
            *figures("png"),
            *EXPLORER,
        ),
        outputs=(Out("figures/REPORT.md"),),
        params_file=None,
        benchmark=False,
    ),
)
"""the steps of a run, in pipeline order"""

COMPARE = Step(
    "compare",
    "compare",
    "runs side by side from their own statistics (not a step of one run: `snakemake compare`)",
    (
        PARAMS,
        Flag("--runs", "{runs}", "run folders, each with results/stats", nargs="+"),
        Flag("--labels", "{labels}", "one name per run, in the same order", str, nargs="+"),
        Flag("--out", "results/compare", "folder for compare.csv, .md, .png"),
    ),
    # each compared run's statistics, and its data and validated params: the layouts a
    # confirmatory run shares with the others of its world, counted by content
    inputs=("{run}/results/stats", "{run}/data", "{run}/results/params.json"),
    outputs=(Out("results/compare", folder=True),),
    benchmark=False,
    runtime=5,
)
"""several runs side by side: Snakemake's `compare`, no step of one run, no DVC stage"""


def step(name: str) -> Step:
    return next(s for s in (*STEPS, COMPARE) if s.name == name)


# ---- the code a step runs ----


def module_file(name: str) -> Path:
    path = PACKAGE.parent / name.replace(".", "/")
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _imported(module: str, name: str) -> str:
    """The module `from <module> import <name>` loads: the submodule if `name` is one."""
    sub = f"{module}.{name}"
    return sub if module_file(sub).exists() else module


def _torch_steps(cli: ast.Module) -> set[str]:
    """The cli functions in `_TORCH_STEPS`: main pins and checks the numerics they compute with."""
    for node in cli.body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "_TORCH_STEPS":
            return {e.id for e in node.value.elts}
    raise ValueError("dtpe/cli.py has no _TORCH_STEPS")


LOADING = ("dtpe.params", "dtpe.settings")
"""modules every step runs whose own imports (validation's, the types' model and world) count
for `check` alone"""


def imports(subcommand: str) -> set[str]:
    """The dtpe modules `dtpe <subcommand>` imports, read from the source (nothing imported):
    those its cli function and the cli helpers it calls import, and theirs, transitively. Every
    step loads the params; their validation's own imports count for `check` alone."""
    tree = ast.parse((PACKAGE / "cli.py").read_text())
    cli = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    # every step loads the params: their types (settings) are read by all, their validation
    # and the overlays' merge by `check` alone (their result is the validated file)
    todo, seen, modules = [f"cmd_{subcommand}"], set(), {"dtpe.cli", "dtpe.params", "dtpe.settings"}
    if f"cmd_{subcommand}" in _torch_steps(tree):
        modules.add("dtpe.numerics")  # main pins and checks the kernels of these steps
    while todo:
        func = todo.pop()
        seen.add(func)
        for node in ast.walk(cli[func]):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                modules |= {_imported(node.module, a.name) for a in node.names}
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in cli:
                todo += [node.func.id] if node.func.id not in seen else []
    found, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        if name == "dtpe.cli" or (name in LOADING and subcommand != "check"):
            continue
        for node in ast.walk(ast.parse(module_file(name).read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                todo += [_imported(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("dtpe")]
    return {m for m in found if module_file(m).exists()}


# Packages whose modules are found at run time (pkgutil), so that their imports do not show
# them: a step that reaches one depends on all of it. The encodings are a model's own: a model's
# step depends on its variant's files alone (`model.encodings.sources`).
REGISTRIES = ("dtpe.model.state_encoders", "dtpe.model.encodings")
WORLD = "src/dtpe/world/{world}/"
"""the running world's package (params env.world)"""


def code(name: str) -> list[str]:
    """The package files step `name` runs, relative to the repository, from its imports: a
    folder ends in /, a registry the step reaches is its whole folder (a model's step: not the
    encodings, which are its variant's), and a step that reaches the world depends on
    world/catalog.py's `files`: the modules every world shares and the running world's package
    (`WORLD`), never another world's."""
    s = step(name)
    files, world = set(), False
    for module in imports(s.subcommand):
        registry = next((r for r in REGISTRIES if module.startswith(f"{r}.") or module == r), "")
        if module.startswith("dtpe.world"):
            world = True
        elif registry == "dtpe.model.encodings" and s.per_model:
            continue  # the variant's files: encodings.sources
        elif registry:
            files.add(f"src/{registry.replace('.', '/')}/")
        else:
            files.add(str(module_file(module).relative_to(ROOT)))
    files |= {f"src/dtpe/{r}" for r in s.reads}
    if world:
        files |= {f"src/{f}" for f in _shared_world_files()} | {WORLD}
    return sorted(files)


def _shared_world_files() -> list[str]:
    own = f"dtpe/world/{worlds.UNNAMED}/"
    return [f for f in worlds.files(worlds.UNNAMED) if not f.startswith(own)]


def files(name: str, world: str) -> list[str]:
    """`code(name)` as files, for the run's world: each folder's *.py (page.html and the
    schema are named as files)."""
    found = []
    for entry in code(name):
        entry = entry.format(world=world)
        if entry.endswith("/"):
            found += sorted(str(p.relative_to(ROOT)) for p in (ROOT / entry).glob("*.py"))
        else:
            found.append(entry)
    return found


# ---- dvc.yaml ----

_DVC = {
    "params": "params.yaml",
    "variant": "${item.variant}",
    "seed": "${item.seed}",
    "world": "${env.world}",
}
_HEADER = """\
# Written by `python -m dtpe.pipeline dvc.yaml` from src/dtpe/pipeline.py, the pipeline's one
# declaration, which Snakemake's rules read too: edit that, not this file (tests/test_workflows.py
# fails while they differ). Every stage is a `dtpe` command, lists the package code it imports
# (pipeline.code) and reads its params from results/params.json, which the first stage, validate,
# writes from params.yaml: a bad value stops `dvc repro` there, before any stage deletes its
# outputs. A model's encoding files are no deps of its own (dvc.yaml cannot derive files from a
# variant's name): validate records their hashes under variants.<variant>.code, beside its
# encodings' options, a param of the model's stages, so adding or editing an encoding, or changing
# one encoding's option, reruns only the models that use it. A stage that runs the world lists the
# modules every world shares and the running world's package, src/dtpe/world/${env.world}
# (templated from params.yaml), never another world's; its world's knobs reach it as env.options.
"""
_PLOTS = """
# `dvc metrics show`, `dvc exp show`: the statistics stage's headline numbers (8x8 test success,
# each variant's success per grid size); differences, intervals and p-values are in its CSVs.
metrics:
  - results/stats/metrics.json

# `dvc plots show`: every model's training curves, one plot per model. DVC's top-level plots
# take files or whole folders but no globs, and results/train/<model>/ also holds JSON that
# is no data series: so one line per model of params.yaml's study.variants x study.seeds
# (written with the stages: rewrite dvc.yaml when they change).
plots:
"""


def _dvc_deps(s: Step) -> list[str]:
    """A stage's inputs as DVC names them. SHARED_WITH is left out: DVC runs the repository's
    own run, which validation keeps from counting shared layouts unless it is confirmatory, and
    the folders are a list of params that DVC cannot template into deps."""
    return list(dict.fromkeys(_dvc_path(i) for i in s.inputs if i != SHARED_WITH))


def _dvc_path(path: str) -> str:
    """A path as a DVC stage names it: every model's files as their folder."""
    if "{model}" in path:
        path = path[: path.index("{model}")].rstrip("/")
    return path.format(**_DVC)


def _stage(s: Step) -> list[str]:
    values = {
        "threads": "${compute.threads}",
        "output": type("Outputs", (), {o.name: _dvc_path(o.path) for o in s.outputs if o.name}),
        **_DVC,
    }
    lines = [f"  {s.name}:"]
    if s.per_model:
        lines += ["    matrix:", "      variant: ${study.variants}", "      seed: ${study.seeds}"]
    lines += [f"    cmd: {s.command.format(**values)}", "    deps:"]
    lines += [f"      - {d}" for d in _dvc_deps(s)]
    lines += [f"      - {c.rstrip('/').format(**_DVC)}" for c in code(s.name)]
    if s.params:
        keys = [f"{k.format(**_DVC)}" for k in s.params]
        if s.params_file == "params.yaml":
            lines += ["    params:", *(f"      - {k}" for k in keys)]
        else:
            lines += [
                "    params:",
                f"      - {s.params_file}:",
                *(f"          - {k}" for k in keys),
            ]
    lines += ["    outs:", *(f"      # {c}" for c in s.comments)]
    for o in s.outputs:
        flags = ([] if o.cache else ["cache: false"]) + (["persist: true"] if o.persist else [])
        lines += [f"      - {_dvc_path(o.path)}" + (":" if flags else "")]
        lines += [f"          {f}" for f in flags]
    return lines


def dvc_yaml(study: dict) -> str:
    """dvc.yaml's text: the stages, then the metrics and the plots of params `study`'s
    models."""
    stages = [line for s in STEPS for line in ("", *_stage(s))][1:]
    models = [f"{v}_s{seed}" for v in study["variants"] for seed in study["seeds"]]
    curves = [
        f"  - results/train/{models[0]}/metrics.csv: &training_curves",
        "      x: epoch",
        "      y: [train_loss, val_loss, val_success, overfit_gap]",
        *(f"  - results/train/{m}/metrics.csv: *training_curves" for m in models[1:]),
    ]
    return "\n".join([_HEADER + "stages:", *stages, _PLOTS + "\n".join(curves)]) + "\n"


def main(argv: list[str]) -> int:
    """`python -m dtpe.pipeline [FILE]`: dvc.yaml from the declaration and params.yaml's
    study, printed or written to FILE."""
    import yaml

    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    text = dvc_yaml(study)
    if argv:
        Path(argv[0]).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
