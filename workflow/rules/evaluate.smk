# One job per model plays its three raw results: the 8x8 test split and every suite at the
# training context, and the context sweep at the other contexts (with evaluate.rope_scaling).
rule evaluate:
    input:
        "data",
        model="models/{encoding}_s{seed}",
        code=code("cli", "params", "steps/evaluate", "steps/rollout", "model/policy", "model/transformer", "model/catalog", "model/checkpoint", "steps/dataset", "world/layouts", "world/planner",
                  "model/state_encoders", "world/maze", "atomic"),
        encodings=encoding_code,
    output:
        test="results/eval/test/{encoding}_s{seed}.csv",
        grid="results/eval/grid/{encoding}_s{seed}.csv",
        context="results/eval/context/{encoding}_s{seed}.csv",
    params:
        evaluate=config["evaluate"],
        env=config["env"],
        compute=config["compute"],
        model=config["model"],
        suite_sizes=config["data"]["suite_sizes"],
    log:
        "logs/evaluate/{encoding}_s{seed}.log",
    benchmark:
        "benchmarks/evaluate/{encoding}_s{seed}.tsv"
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "dtpe evaluate --params {PARAMS} --encoding {wildcards.encoding} --seed {wildcards.seed} "
        "--threads {threads} --data data --model models/{wildcards.encoding}_s{wildcards.seed} "
        "--out-test {output.test} --out-grid {output.grid} --out-context {output.context} > {log} 2>&1"
