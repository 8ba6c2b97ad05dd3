# One job per model plays its three raw results: the 8x8 test split and every suite at the
# training context, and the context sweep at the other contexts (with evaluate.rope_scaling).
rule evaluate:
    input:
        "data",
        model="models/{variant}_s{seed}",
        code=code("cli", "params", "steps/evaluate", "steps/rollout", "model/policy", "model/transformer", "model/config", "numerics", "model/catalog", "model/checkpoint", "steps/dataset", "model/state_encoders", "atomic") + WORLD_CODE,
        encodings=variant_code,
    output:
        test="results/eval/test/{variant}_s{seed}.csv",
        grid="results/eval/grid/{variant}_s{seed}.csv",
        context="results/eval/context/{variant}_s{seed}.csv",
    params:
        evaluate=config["evaluate"],
        env=config["env"],
        compute=config["compute"],
        model=config["model"],
        options=variant_options,
        suite_sizes=config["data"]["suite_sizes"],
    log:
        "logs/evaluate/{variant}_s{seed}.log",
    benchmark:
        "benchmarks/evaluate/{variant}_s{seed}.tsv"
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "dtpe evaluate --params {PARAMS} --variant {wildcards.variant} --seed {wildcards.seed} "
        "--threads {threads} --data data --model models/{wildcards.variant}_s{wildcards.seed} "
        "--out-test {output.test} --out-grid {output.grid} --out-context {output.context} > {log} 2>&1"
