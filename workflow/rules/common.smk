# Cross-field checks the schema cannot state (registered encodings, splits summing to 1, ...):
# a bad params file stops here, before any job starts.
import glob
import os

from dtpe.params import check as check_params

check_params(config)

# The params file the commands read: --configfile selects another (e.g. params-study.yaml).
PARAMS = workflow.overwrite_configfiles[-1] if workflow.overwrite_configfiles else "params.yaml"

ENCODINGS = config["study"]["encodings"]
SEEDS = config["study"]["seeds"]
MODELS = expand("{encoding}_s{seed}", encoding=ENCODINGS, seed=SEEDS)
THREADS = config["compute"]["threads"]
FIGURES = expand("figures/{name}.{ext}", name=["fig1_maze", "fig2_training", "fig3_success_by_grid",
                                               "fig4_attention", "fig5_effect_sizes"], ext=["png", "pdf"])


def code(*modules):
    """The package modules a step runs, so that editing one reruns the steps that use it."""
    files = []
    for m in modules:
        files += sorted(glob.glob(f"src/dtpe/{m}/*.py")) if os.path.isdir(f"src/dtpe/{m}") else [f"src/dtpe/{m}.py"]
    return files


wildcard_constraints:
    encoding="[a-z0-9_]+",
    seed=r"\d+",
