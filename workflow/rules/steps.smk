# One rule per step of dtpe/pipeline.py's STEPS, the pipeline's one declaration, from which
# dvc.yaml is written too: its command, inputs, outputs, params and code are read there, so the
# two tools cannot drift apart. Here they take Snakemake's form: a model's `{variant}` and `{seed}`
# are wildcards, every model's files (`{model}`) are listed, the params reach a rule as values
# (a model's encodings' options through `variant_options`), and each step's code is its files,
# the running world's package among them (`code`).


def step_inputs(step):
    """A step's inputs, named: its data, its code and, for a model, its variant's encodings."""
    data = []
    for path in step.inputs:
        if path == "{params}":
            data += PARAMS_FILES
        elif path == pipeline.SHARED_WITH:
            data += SHARED_LAYOUTS
        elif "{model}" in path:
            data += expand(path, model=MODELS)
        else:
            data.append(path.format(world=WORLD) if "{world}" in path else path)
    named = {"data": data, "code": code(step.name)}
    if step.per_model:
        named["encodings"] = variant_code
    return named


def step_outputs(step):
    """Positional and named outputs: folders as directory(), the figures with their captions."""
    positional, named = [], {}
    for out in step.outputs:
        path = out.path.format(world=WORLD) if "{world}" in out.path else out.path
        if out.folder:
            path = directory(path)
        elif path.startswith("figures/fig") and path.endswith(".png"):
            caption = Path(out.path).stem.replace("_{world}", "")
            path = report(path, caption=f"../report/{caption}.rst", category="Figures")
        if out.name:
            named[out.name] = path
        else:
            positional.append(path)
    return positional, named


def step_params(step):
    """The params a step reads, by their last key (suite_sizes=config["data"]["suite_sizes"])."""
    values = {}
    for key in step.params:
        if key == "variants.{variant}":
            values["options"] = variant_options
            continue
        value = config
        for part in key.split("."):
            value = value[part]
        values[key.split(".")[-1]] = value
    return values


def step_shell(name):
    """Step `name`'s command as Snakemake fills it in, its output to its log."""
    step = pipeline.step(name)
    outputs = type("Outputs", (), {o.name: f"{{output.{o.name}}}" for o in step.outputs if o.name})
    command = step.command.format(
        params="{PARAMS}",
        variant="{wildcards.variant}",
        seed="{wildcards.seed}",
        threads="{threads}",
        output=outputs,
    )
    return command + " > {log} 2>&1"


def step_resources(step):
    """Memory and minutes: a training's grow with the model and its windows (dtpe/cluster.py)."""
    if step.name == "train":
        return TRAIN_RESOURCES
    return {"mem_mb": step.mem_mb, "runtime": step.runtime}


# The same rule twice, as a directive cannot be left out: validate and report keep no benchmark
# (the report reads the timings, and its own would change them on every rerun).
for _step in pipeline.STEPS:
    _outputs = step_outputs(_step)
    if _step.benchmark:

        rule:
            name:
                _step.name
            input:
                **step_inputs(_step),
            output:
                *_outputs[0],
                **_outputs[1],
            params:
                **step_params(_step),
            log:
                _step.log(),
            benchmark:
                _step.timing()
            threads: THREADS if _step.threads else 1
            priority: _step.priority
            resources:
                **step_resources(_step),
            # Evaluated twice: here, `_step` being this step, and when a job runs, in a function
            # whose local `rule` is the job's rule name (the loop is over by then)
            shell:
                step_shell(rule if "rule" in locals() else _step.name)

    else:

        rule:
            name:
                _step.name
            input:
                **step_inputs(_step),
            output:
                *_outputs[0],
                **_outputs[1],
            params:
                **step_params(_step),
            log:
                _step.log(),
            threads: THREADS if _step.threads else 1
            priority: _step.priority
            resources:
                **step_resources(_step),
            # Evaluated twice: here, `_step` being this step, and when a job runs, in a function
            # whose local `rule` is the job's rule name (the loop is over by then)
            shell:
                step_shell(rule if "rule" in locals() else _step.name)
