# The episode and attention explorer, the episode GIFs and the embedding similarity figure: one
# `dtpe explore` that replays the grid sweep's own episodes from the checkpoints.
# figures/episodes holds one GIF per grid size (a folder: DVC's outputs cannot follow the sizes)
EXPLORER = ["figures/explorer.html", "figures/embeddings.png", "figures/episodes"]


rule explore:
    input:
        "data",
        models=expand("models/{model}", model=MODELS),
        grid=expand("results/eval/grid/{model}.csv", model=MODELS),
        code=code("cli", "params", "explorer/build", "names", "explorer/page", "explorer/traces", "explorer/animations", "explorer/embeddings", "steps/rollout", "model/policy", "model/transformer", "model/config", "numerics", "model/catalog", "model/checkpoint", "model/encodings", "model/state_encoders", "steps/dataset", "atomic") + WORLD_CODE,
        page=repo("src/dtpe/explorer/page.html"),
    output:
        "figures/explorer.html",
        "figures/embeddings.png",
        directory("figures/episodes"),
    params:
        study=config["study"],
        explorer=config["explorer"],
        env=config["env"],
        compute=config["compute"],
        model=config["model"],
        evaluate=config["evaluate"],
        suite_sizes=config["data"]["suite_sizes"],
    log:
        "logs/explore.log",
    benchmark:
        "benchmarks/explore.tsv"
    threads: THREADS
    resources:
        mem_mb=4000,
        runtime=60,
    shell:
        "dtpe explore --params {PARAMS} --threads {threads} --data data --models models --results results "
        "--out figures > {log} 2>&1"
