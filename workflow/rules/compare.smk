# Runs side by side, from each run's own statistics: `snakemake --cores 1 compare`. Not part of
# `all`, and no DVC stage: the runs are made by their own commands (the default here, the others
# with --configfile params-<run>.yaml --directory runs/<run>), not by this run. Which runs, by
# label, as folders relative to the working directory: workflow/compare_runs.yaml's (the
# committed results/compare's), or
#   snakemake --cores 1 compare --config 'compare_runs={default: ., power: runs/power}'
import yaml

with open(repo("workflow/compare_runs.yaml")) as f:
    COMPARE_RUNS = config.get("compare_runs") or yaml.safe_load(f)


rule compare:
    input:
        runs=[
            os.path.normpath(path.format(run=run))
            for path in pipeline.COMPARE.inputs
            for run in COMPARE_RUNS.values()
        ],
        code=code("compare"),
    output:
        directory(pipeline.COMPARE.outputs[0].path),
    params:
        runs=list(COMPARE_RUNS.values()),
        labels=list(COMPARE_RUNS),
    log:
        pipeline.COMPARE.log(),
    threads: 1
    resources:
        mem_mb=pipeline.COMPARE.mem_mb,
        runtime=pipeline.COMPARE.runtime,
    shell:
        pipeline.COMPARE.command.format(
            params="{PARAMS}", runs="{params.runs:q}", labels="{params.labels:q}"
        )
        + " > {log} 2>&1"
