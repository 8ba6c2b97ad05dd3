# The leaderboard from the runs params `leaderboard.tests` names (their folders from the
# repository's root): `snakemake --cores 1 leaderboard`. Not part of `all`, and no DVC stage: the
# runs are made by their own commands; the runs submitted to its tests (`dtpe submit`) join it.
from dtpe import submitted

LEADERBOARD_RUNS = sorted(
    {
        folder
        for test in load_params(PARAMS).leaderboard.tests
        for folder in (test["run"], test["decided_by"])
        if folder
    }
    | {
        entry["run"]
        for entry in submitted.runs(".", load_params(PARAMS).leaderboard.submissions)
    }
)


rule leaderboard:
    input:
        runs=[
            os.path.normpath(path.format(run=run))
            for path in pipeline.LEADERBOARD.inputs
            for run in LEADERBOARD_RUNS
        ],
        params=PARAMS_FILES,
        code=code("leaderboard"),
    output:
        [out.path for out in pipeline.LEADERBOARD.outputs],
    log:
        pipeline.LEADERBOARD.log(),
    threads: 1
    resources:
        mem_mb=pipeline.LEADERBOARD.mem_mb,
        runtime=pipeline.LEADERBOARD.runtime,
    shell:
        pipeline.LEADERBOARD.command.format(params="{PARAMS}") + " > {log} 2>&1"
