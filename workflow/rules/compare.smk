# Runs side by side, from each run's own statistics: `snakemake --cores 1 compare`. Not part of
# `all`, and no DVC stage: the runs are made by their own commands (the default here, the others
# with --configfile params-<run>.yaml --directory runs/<run>), not by this run. Which runs, by
# label, as folders relative to the working directory:
#   snakemake --cores 1 compare --config 'compare_runs={default: ., power: runs/power}'
COMPARE_RUNS = config.get("compare_runs", {"default": ".", "protocol": "runs/protocol"})


rule compare:
    input:
        stats=[os.path.normpath(os.path.join(run, "results/stats")) for run in COMPARE_RUNS.values()],
        # the layouts a confirmatory run shares with the others of its world, by content
        data=[os.path.normpath(os.path.join(run, "data")) for run in COMPARE_RUNS.values()],
        validated=[
            os.path.normpath(os.path.join(run, "results/params.json"))
            for run in COMPARE_RUNS.values()
        ],
        code=code("compare"),
    output:
        directory("results/compare"),
    params:
        runs=list(COMPARE_RUNS.values()),
        labels=list(COMPARE_RUNS),
    log:
        "logs/compare.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "dtpe compare --params {PARAMS} --runs {params.runs:q} --labels {params.labels:q} "
        "--out results/compare > {log} 2>&1"
