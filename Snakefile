# The study's pipeline: dataset -> train (encoding x seed) -> grid and context evaluation ->
# attention -> statistics -> tables, figures, report. Rules only wire `dtpe` subcommands;
# dvc.yaml runs the same commands (tests/test_workflows.py checks that they agree).
from snakemake.utils import min_version, validate

min_version("9.0")

configfile: "params.yaml"

validate(config, "workflow/schemas/params.schema.yaml")

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/report.smk"


rule all:
    input:
        "figures/REPORT.md",
        FIGURES,
        "results/stats",
    default_target: True
