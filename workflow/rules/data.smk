# Snakemake validates the params when it parses the workflow (common.smk); this rule writes
# them as DVC's first stage does, the file DVC's stages read their params from.
rule validate:
    input:
        PARAMS_FILES,
        code=code("cli", "params", "atomic", "analysis/design", "model/encodings", "model/state_encoders", "model/catalog", "model/config") + WORLD_CODE,
        schema=repo("src/dtpe/params.schema.yaml"),
    output:
        "results/params.json",
    log:
        "logs/validate.log",
    threads: 1
    resources:
        mem_mb=1000,
        runtime=5,
    shell:
        "dtpe check --params {PARAMS} --out results/params.json > {log} 2>&1"


rule data:
    input:
        code=code("cli", "params", "steps/dataset", "atomic") + WORLD_CODE,
    output:
        directory("data"),
    params:
        data=config["data"],
        env=config["env"],
    log:
        "logs/data.log",
    benchmark:
        "benchmarks/data.tsv"
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    shell:
        "dtpe data --params {PARAMS} --out data > {log} 2>&1"
