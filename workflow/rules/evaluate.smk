rule evaluate:
    input:
        "data",
        model="models/{encoding}_s{seed}",
        code=code("cli", "params", "evaluate", "model", "checkpoint", "encodings", "state_encoders", "maze", "atomic"),
        # the grid sweep's rows at the training context, which the context sweep takes instead of playing them again
        grid=lambda wc: f"results/eval/grid/{wc.encoding}_s{wc.seed}.csv" if wc.sweep == "context" else [],
    output:
        "results/eval/{sweep}/{encoding}_s{seed}.csv",
    params:
        evaluate=lambda wc: {k: v for k, v in config["evaluate"].items() if wc.sweep == "context" or k != "contexts"},
        env=config["env"],
        model=config["model"],
        suite_sizes=config["data"]["suite_sizes"],
        reuse=lambda wc, input: f" --reuse {input.grid}" if wc.sweep == "context" else "",
    wildcard_constraints:
        sweep="grid|context",
    log:
        "logs/evaluate/{sweep}/{encoding}_s{seed}.log",
    benchmark:
        "benchmarks/evaluate/{sweep}/{encoding}_s{seed}.tsv"
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "dtpe evaluate --params {PARAMS} --sweep {wildcards.sweep} --encoding {wildcards.encoding} --seed {wildcards.seed} "
        "--threads {threads} --data data --model models/{wildcards.encoding}_s{wildcards.seed} "
        "--out results/eval/{wildcards.sweep}/{wildcards.encoding}_s{wildcards.seed}.csv{params.reuse} > {log} 2>&1"
