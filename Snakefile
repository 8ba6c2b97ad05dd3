# The study's pipeline: validate -> dataset -> train (variant x seed) -> evaluation ->
# attention -> explorer -> statistics -> tables, figures, report. Its steps are declared once, in
# src/dtpe/pipeline.py: workflow/rules/steps.smk makes a rule of each, and dvc.yaml is written
# from the same declaration (tests/test_workflows.py checks that it is current and that the two
# tools expand to the same jobs).
from snakemake.utils import min_version

min_version("9.0")

# The params: the repository's params.yaml, or the file --configfile names (an overlay such as
# params-power.yaml, whose outputs go to --directory runs/power). common.smk resolves and validates
# it once, as `dtpe` does (schema and cross-field checks), and names a failing key and its file as
# `dtpe` names them (e.g. params-power.yaml: params key train.lr).

include: "workflow/rules/common.smk"
include: "workflow/rules/steps.smk"
include: "workflow/rules/compare.smk"
include: "workflow/rules/leaderboard.smk"


rule all:
    input:
        pipeline.targets(MODEL_PAIRS, WORLD),
    default_target: True
