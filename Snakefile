# The study's pipeline: validate -> dataset -> train (variant x seed) -> evaluation ->
# attention -> statistics -> tables, figures, report. Rules only wire `dtpe` subcommands;
# dvc.yaml runs the same commands (tests/test_workflows.py checks that they agree).
from snakemake.utils import min_version

min_version("9.0")

# The params: the repository's params.yaml, or the file --configfile names (an overlay such as
# params-power.yaml, whose outputs go to --directory runs/power). common.smk resolves and validates
# it once, as `dtpe` does (schema and cross-field checks), and names a failing key and its file as
# `dtpe` names them (e.g. params-power.yaml: params key train.lr).

include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/explorer.smk"
include: "workflow/rules/report.smk"
include: "workflow/rules/compare.smk"


rule all:
    input:
        "figures/REPORT.md",
        FIGURES,
        EXPLORER,
        "results/stats",
        "results/params.json",
        # every model's own outputs, named: a sequential run's next interim adds models to the
        # existing results/stats' inputs, which Snakemake would otherwise leave unbuilt
        expand("results/eval/{sweep}/{model}.csv", sweep=["test", "grid", "context"], model=MODELS),
        expand("results/attention/{model}.json", model=MODELS),
    default_target: True
