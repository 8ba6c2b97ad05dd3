rule train:
    input:
        "data",
        code=code("cli", "params", "train", "model", "evaluate", "checkpoint", "encodings", "state_encoders", "maze", "atomic"),
    output:
        model=directory("models/{encoding}_s{seed}"),
        metrics=directory("results/train/{encoding}_s{seed}"),
    params:
        model=config["model"],
        train=config["train"],
        env=config["env"],
    log:
        "logs/train/{encoding}_s{seed}.log",
    benchmark:
        "benchmarks/train/{encoding}_s{seed}.tsv"
    threads: THREADS
    resources:
        mem_mb=lambda wc: 4000 if config["model"]["d_model"] <= 128 else 16000,
        runtime=lambda wc: 60 if config["model"]["d_model"] <= 128 else 24 * 60,
    shell:
        "dtpe train --params {PARAMS} --encoding {wildcards.encoding} --seed {wildcards.seed} --threads {threads} "
        "--data data --out models/{wildcards.encoding}_s{wildcards.seed} "
        "--metrics results/train/{wildcards.encoding}_s{wildcards.seed} > {log} 2>&1"
