rule evaluate:
    input:
        "data",
        model="models/{encoding}_s{seed}",
        code=code("cli", "params", "evaluate", "model", "checkpoint", "encodings", "state_encoders", "maze", "atomic"),
    output:
        "results/eval/{sweep}/{encoding}_s{seed}.csv",
    params:
        evaluate=lambda wc: {k: v for k, v in config["evaluate"].items() if wc.sweep == "context" or k != "contexts"},
        env=config["env"],
        model=config["model"],
        suite_sizes=config["data"]["suite_sizes"],
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
        "--out results/eval/{wildcards.sweep}/{wildcards.encoding}_s{wildcards.seed}.csv > {log} 2>&1"
