rule tables:
    input:
        "results/stats",
        code=code("cli", "params", "analysis/tables", "analysis/outputs", "atomic"),
    output:
        directory("results/tables"),
    params:
        study=config["study"],
        stats=config["stats"],
        verdict=config["verdict"],
        context=config["model"]["context"],
    log:
        "logs/tables.log",
    benchmark:
        "benchmarks/tables.tsv"
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "dtpe tables --params {PARAMS} --stats results/stats --out results/tables > {log} 2>&1"


rule figures:
    input:
        "data",
        "results/stats",
        metrics=expand("results/train/{model}", model=MODELS),
        attention=expand("results/attention/{model}.json", model=MODELS),
        code=code("cli", "params", "analysis/figures", "analysis/inference", "analysis/outputs", "analysis/sequential", "names", "steps/dataset") + WORLD_CODE,
    output:
        [report(f, caption=f"../report/{Path(f).stem}.rst", category="Figures") if f.endswith(".png") else f
         for f in FIGURES],
    params:
        study=config["study"],
        verdict=config["verdict"],
        suite_sizes=config["data"]["suite_sizes"],
        context=config["model"]["context"],
    log:
        "logs/figures.log",
    benchmark:
        "benchmarks/figures.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "dtpe figures --params {PARAMS} --data data --results results --out figures > {log} 2>&1"


rule report:
    input:
        # the report prints every param: the validated file, whole
        "results/params.json",
        "results/tables",
        [f for f in FIGURES if f.endswith(".png")],
        attention=expand("results/attention/{model}.json", model=MODELS),
        # the report links the explorer, the GIFs and the embedding figure
        explorer=EXPLORER,
        code=code("cli", "params", "analysis/report", "model/catalog", "numerics", "analysis/stats", "analysis/inference", "analysis/aggregates", "analysis/design", "analysis/sequential", "analysis/verdicts", "analysis/methods", "analysis/outputs", "names", "analysis/tables", "atomic") + WORLD_CODE,
    output:
        "figures/REPORT.md",
    log:
        "logs/report.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    shell:
        "dtpe report --params {PARAMS} --results results --figures figures --benchmarks benchmarks "
        "--out figures/REPORT.md > {log} 2>&1"
