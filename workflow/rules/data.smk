rule data:
    input:
        code=code("cli", "params", "dataset", "layouts", "maze", "planner", "atomic"),
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
