# The study's pipeline: validate -> dataset -> train (encoding x seed) -> evaluation ->
# attention -> statistics -> tables, figures, report. Rules only wire `dtpe` subcommands;
# dvc.yaml runs the same commands (tests/test_workflows.py checks that they agree).
from snakemake.utils import min_version

min_version("9.0")

# The repository's params.yaml wherever the run writes its outputs (--directory runs/power)
configfile: workflow.basedir + "/params.yaml"

# common.smk validates the params once, as `dtpe` does (schema and cross-field checks), and
# names a failing key as `dtpe` names it (e.g. train.lr).

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/explorer.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        "figures/REPORT.md",
        FIGURES,
        EXPLORER,
        "results/stats",
        "results/params.json",
    default_target: True
