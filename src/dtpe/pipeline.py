"""The pipeline, declared once: every step's command, inputs, outputs, params and resources
(its code is derived from its imports by dtpe/step_code.py). Snakemake's rules
(workflow/rules/steps.smk) are made from `STEPS` when it parses the workflow; dvc.yaml is written
from them (`python -m dtpe.dvc_yaml dvc.yaml`; tests/test_workflows.py fails while the committed
file differs); scripts/study_gpu.py runs their commands on a GPU machine; and `dtpe`'s parser is
built from each step's flags (`Flag`: the value the tools pass, the help the CLI gives).

Placeholders, filled by each tool in its own syntax: in paths `{variant}` and `{seed}` (this
model's), `{model}` (every model of the run: Snakemake lists their files, DVC names the folder)
and `{world}` (params `env.world`: DVC templates it from params.yaml, so `dvc repro` tracks the
running world's package, whichever it is); in commands also `{params}` (the params file),
`{threads}` (params `compute.threads`) and `{output.<name>}`; `compare`, a step over several
runs, has `{run}` in its paths (each run's folder) and `{runs}` and `{labels}` in its command."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from dtpe.analysis.outputs import FIGURE_TEMPLATES

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
    runs_model: bool = False
    """True: it runs a model in torch, whose numerics `dtpe` pins and checks first"""
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
        runs_model=True,
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
        runs_model=True,
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
        runs_model=True,
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
        runs_model=True,
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
        runs_model=True,
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
        runs_model=True,
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
        # the context sweep and the position step: a whole-episode run's arms at that context
        inputs=(
            "data",
            "models/{model}",
            *(f"results/eval/{sweep}/{{model}}.csv" for sweep in ("grid", "context", "position")),
        ),
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
            "position.scalings",
            "data.suite_sizes",
        ),
        params_file="params.yaml",  # its command line takes compute.threads from there
        reads=("explorer/page.html",),
        threads=True,
        mem_mb=4000,
        runtime=60,
        runs_model=True,
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
        params=(
            "study",
            "stats",
            "verdict",
            "data.suite_sizes",
            "data.train_size",
            "evaluate.contexts",
            "evaluate.whole_episode",
        ),
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
        params=(
            "study",
            "verdict",
            "data.suite_sizes",
            "data.train_size",
            "model.context",
            "stats.reference",
        ),
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


LEADERBOARD = Step(
    "leaderboard",
    "leaderboard",
    "the leaderboard from the runs params leaderboard.tests names (not a step of one run: "
    "`snakemake leaderboard`)",
    (PARAMS, Flag("--out", "results", "folder for leaderboard.csv, .md, .png")),
    inputs=("{run}/results/stats", "{run}/results/params.json"),
    outputs=tuple(Out(f"results/leaderboard.{ext}") for ext in ("csv", "md", "png")),
    params_file="params.yaml",
    benchmark=False,
    runtime=5,
)
"""the runs' standings and verdicts in one table: Snakemake's `leaderboard`, no DVC stage"""
ACROSS_RUNS = (COMPARE, LEADERBOARD)
"""the steps that read several runs"""


def step(name: str) -> Step:
    return next(s for s in (*STEPS, *ACROSS_RUNS) if s.name == name)


def runs_model(subcommand: str) -> bool:
    """Whether `dtpe <subcommand>` runs a model (Step.runs_model)."""
    return any(s.runs_model for s in (*STEPS, *ACROSS_RUNS) if s.subcommand == subcommand)
