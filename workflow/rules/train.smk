rule train:
    input:
        "data",
        code=code("cli", "params", "steps/train", "model/transformer", "model/config", "numerics", "model/catalog", "steps/rollout", "model/policy", "model/checkpoint", "steps/dataset", "model/state_encoders", "atomic") + WORLD_CODE,
        encodings=variant_code,
    output:
        model=directory("models/{variant}_s{seed}"),
        metrics=directory("results/train/{variant}_s{seed}"),
    params:
        model=config["model"],
        train=config["train"],
        env=config["env"],
        compute=config["compute"],
        options=variant_options,
    log:
        "logs/train/{variant}_s{seed}.log",
    benchmark:
        "benchmarks/train/{variant}_s{seed}.tsv"
    threads: THREADS
    # Trainings are the long jobs: started first, evaluations fill the cores they leave, and
    # the last training does not run alone at the end of the run.
    priority: 1
    resources:
        mem_mb=TRAIN_RESOURCES["mem_mb"],
        runtime=TRAIN_RESOURCES["runtime"],
    shell:
        "dtpe train --params {PARAMS} --variant {wildcards.variant} --seed {wildcards.seed} --threads {threads} "
        "--data data --out models/{wildcards.variant}_s{wildcards.seed} "
        "--metrics results/train/{wildcards.variant}_s{wildcards.seed} > {log} 2>&1"
