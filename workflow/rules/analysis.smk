rule attention:
    input:
        "data",
        model="models/{variant}_s{seed}",
        code=code("cli", "params", "steps/attention", "steps/dataset", "model/transformer", "model/config", "numerics", "model/catalog", "model/checkpoint", "model/state_encoders", "atomic") + WORLD_CODE,
        encodings=variant_code,
    output:
        "results/attention/{variant}_s{seed}.json",
    params:
        attention=config["attention"],
        env=config["env"],
        compute=config["compute"],
        model=config["model"],
        options=variant_options,
    log:
        "logs/attention/{variant}_s{seed}.log",
    benchmark:
        "benchmarks/attention/{variant}_s{seed}.tsv"
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=30,
    shell:
        "dtpe attention --params {PARAMS} --variant {wildcards.variant} --seed {wildcards.seed} --threads {threads} "
        "--data data --model models/{wildcards.variant}_s{wildcards.seed} "
        "--out results/attention/{wildcards.variant}_s{wildcards.seed}.json > {log} 2>&1"


rule stats:
    input:
        test=expand("results/eval/test/{model}.csv", model=MODELS),
        grid=expand("results/eval/grid/{model}.csv", model=MODELS),
        context=expand("results/eval/context/{model}.csv", model=MODELS),
        metrics=expand("results/train/{model}", model=MODELS),
        attention=expand("results/attention/{model}.json", model=MODELS),
        code=code("cli", "params", "analysis/stats", "analysis/inference", "analysis/aggregates", "analysis/design", "analysis/sequential", "analysis/verdicts", "analysis/methods", "names", "atomic"),
    output:
        directory("results/stats"),
    params:
        study=config["study"],
        stats=config["stats"],
        verdict=config["verdict"],
        suite_sizes=config["data"]["suite_sizes"],
        train_size=config["data"]["train_size"],
    log:
        "logs/stats.log",
    benchmark:
        "benchmarks/stats.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "dtpe stats --params {PARAMS} --results results --out results/stats > {log} 2>&1"
