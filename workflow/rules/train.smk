def model_size():
    """Width x depth of the model relative to PROTOCOL §7's calibration model (d_model 128, 3
    layers, about 6 minutes for 20 epochs on 2 cores): 0.5 for params.yaml, 6.7 at the study's
    scale. A training job asks the cluster for 4 GB (torch, the data, a CUDA context) plus 1 GB
    per unit, and 15 minutes per unit and 20 epochs, at least an hour: ample on a GPU."""
    return config["model"]["d_model"] * config["model"]["n_layers"] / (128 * 3)


rule train:
    input:
        "data",
        code=code("cli", "params", "train", "model", "evaluate", "checkpoint", "dataset", "layouts", "planner",
                  "state_encoders", "maze", "atomic"),
        encodings=encoding_code,
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
    # Trainings are the long jobs: started first, evaluations fill the cores they leave, and
    # the last training does not run alone at the end of the run.
    priority: 1
    resources:
        mem_mb=lambda wc: 4000 + round(1000 * model_size()),
        runtime=lambda wc: max(60, round(15 * model_size() * config["train"]["epochs"] / 20)),
    shell:
        "dtpe train --params {PARAMS} --encoding {wildcards.encoding} --seed {wildcards.seed} --threads {threads} "
        "--data data --out models/{wildcards.encoding}_s{wildcards.seed} "
        "--metrics results/train/{wildcards.encoding}_s{wildcards.seed} > {log} 2>&1"
