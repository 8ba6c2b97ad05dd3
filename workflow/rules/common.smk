import os
import sys

from dtpe.analysis.design import require as require_design
from dtpe.cluster import train_resources
from dtpe.model.catalog import options_of
from dtpe import pipeline, step_code
# aliased: a bare `chain` in the Snakefile's namespace shadows the one Snakemake itself uses
from dtpe.params import chain as params_chain, load as load_params, resolve as resolve_params


def repo(path):
    """A file of this repository as the working directory sees it. `--directory runs/power`
    puts every output under runs/power while the code and params files stay here; in the
    default run the working directory is the repository and `path` is returned unchanged (as
    dvc.yaml names it)."""
    return os.path.relpath(os.path.join(workflow.basedir, path))


# The params file the commands read: --configfile selects another (e.g. params-study.yaml);
# Snakemake makes it absolute, the commands get it relative to the working directory.
PARAMS = (
    os.path.relpath(workflow.overwrite_configfiles[-1])
    if workflow.overwrite_configfiles
    else repo("params.yaml")
)
# It and the files it builds on (an overlay's base): editing any of them revalidates.
PARAMS_FILES = [str(f) for f in params_chain(PARAMS)]

# Validated as `dtpe` validates (the schema, then the cross-field checks it cannot state:
# registered encodings, splits summing to 1, ...): a bad params file stops here, before any job
# starts. Then what a training job asks a cluster for (dtpe/cluster.py).
TRAIN_RESOURCES = train_resources(load_params(PARAMS))
# A confirmatory run whose design cannot reject stops here, before any model trains; any other
# run is told (dtpe check writes the same into results/params.json and the report).
print("design: " + require_design(load_params(PARAMS), PARAMS).sentence(), file=sys.stderr)

# The rules read the params as `dtpe` resolves them. Snakemake's own merge of the --configfile
# knows nothing of `base` (an overlay's base is not always params.yaml) and would leave that key
# in; keys that are no params group (--config compare_runs=...) stay.
config.pop("base", None)
config.update(resolve_params(PARAMS))
# As `dtpe check` writes it (results/params.json): the world's own knobs (params `worlds.<world>`)
# in env, so a step that reads env reruns when its world's knobs change, never another world's.
config["env"] = {**config["env"], "options": config["worlds"].get(config["env"]["world"]) or {}}

# A confirmatory run's stats count the layouts it shares with the runs of verdict.shared_with
# (folders from its own): its and their data and validated params are its inputs
SHARED_WITH = config["verdict"].get("shared_with") or []  # optional in a params file
SHARED_LAYOUTS = [
    os.path.normpath(os.path.join(run, path))
    for run in (["."] + SHARED_WITH if SHARED_WITH else [])
    for path in ("data", "results/params.json")
]

VARIANTS = config["study"]["variants"]
SEEDS = config["study"]["seeds"]
MODEL_PAIRS = [(variant, seed) for variant in VARIANTS for seed in SEEDS]
if config["verdict"]["sequential"]:
    # Seeds come in interims: the models of the finished interims and of the next one, the
    # group-sequential test replayed from the evaluations this run has
    # (dtpe/analysis/sequential.py). Each call runs one interim; the next plans the one after it.
    from dtpe.analysis.sequential import plan as sequential_plan

    SEQUENTIAL = sequential_plan(load_params(PARAMS), "results/eval")
    MODEL_PAIRS = SEQUENTIAL.wanted
    print(SEQUENTIAL.summary(), file=sys.stderr)
MODELS = [f"{variant}_s{seed}" for variant, seed in MODEL_PAIRS]
THREADS = config["compute"]["threads"]
WORLD = config["env"]["world"]


def code(step):
    """The package files a step runs (dtpe/step_code.py's `code`, from its imports, with the running
    world's package, never another world's), so that editing one reruns the steps that use it."""
    return [repo(f) for f in step_code.files(step, WORLD)]


def variant_code(wildcards):
    """The encodings package files the model variant runs (its k and t modules, what they import,
    base.py, __init__.py): adding an encoding reruns only the models that use it."""
    from dtpe.model.encodings import sources

    return [repo(f"src/{f}") for f in sources(wildcards.variant)]


def variant_options(wildcards):
    """The options of the model variant's encodings (params `encodings`): changing one encoding's
    option reruns only the models that use it."""
    return options_of(wildcards.variant, config["encodings"])


wildcard_constraints:
    # a variant name, as dtpe.model.catalog reads it: `<k>` or `<k>-t_<t>`
    variant=r"[a-z0-9]+(-t_[a-z0-9]+)?",
    seed=r"\d+",
