"""dvc.yaml, written from the pipeline's declaration (dtpe/pipeline.py): one stage a step,
its deps the step's inputs and code (dtpe/step_code.py), then the metrics and the training
curves' plots."""

from __future__ import annotations

import sys
from pathlib import Path

from dtpe import step_code
from dtpe.pipeline import ROOT, SHARED_WITH, STEPS, Step

_DVC = {
    "params": "params.yaml",
    "variant": "${item.variant}",
    "seed": "${item.seed}",
    "world": "${env.world}",
}
_HEADER = """\
# Written by `python -m dtpe.dvc_yaml dvc.yaml` from src/dtpe/pipeline.py, the pipeline's one
# declaration, which Snakemake's rules read too: edit that, not this file (tests/test_workflows.py
# fails while they differ). Every stage is a `dtpe` command, lists the package code it imports
# (step_code.code) and reads its params from results/params.json, which the first stage, validate,
# writes from params.yaml: a bad value stops `dvc repro` there, before any stage deletes its
# outputs. A model's encoding files are no deps of its own (dvc.yaml cannot derive files from a
# variant's name): validate records their hashes under variants.<variant>.code, beside its
# encodings' options, a param of the model's stages, so adding or editing an encoding, or changing
# one encoding's option, reruns only the models that use it. A stage that runs the world lists the
# modules every world shares and the running world's package, src/dtpe/world/${env.world}
# (templated from params.yaml), never another world's; its world's knobs reach it as env.options.
"""
_PLOTS = """
# `dvc metrics show`, `dvc exp show`: the statistics stage's headline numbers (8x8 test success,
# each variant's success per grid size); differences, intervals and p-values are in its CSVs.
metrics:
  - results/stats/metrics.json

# `dvc plots show`: every model's training curves, one plot per model. DVC's top-level plots
# take files or whole folders but no globs, and results/train/<model>/ also holds JSON that
# is no data series: so one line per model of params.yaml's study.variants x study.seeds
# (written with the stages: rewrite dvc.yaml when they change).
plots:
"""


def _dvc_deps(s: Step) -> list[str]:
    """A stage's inputs as DVC names them. SHARED_WITH is left out: DVC runs the repository's
    own run, which validation keeps from counting shared layouts unless it is confirmatory, and
    the folders are a list of params that DVC cannot template into deps."""
    return list(dict.fromkeys(_dvc_path(i) for i in s.inputs if i != SHARED_WITH))


def _dvc_path(path: str) -> str:
    """A path as a DVC stage names it: every model's files as their folder."""
    if "{model}" in path:
        path = path[: path.index("{model}")].rstrip("/")
    return path.format(**_DVC)


def _stage(s: Step) -> list[str]:
    values = {
        "threads": "${compute.threads}",
        "output": type("Outputs", (), {o.name: _dvc_path(o.path) for o in s.outputs if o.name}),
        **_DVC,
    }
    lines = [f"  {s.name}:"]
    if s.per_model:
        lines += ["    matrix:", "      variant: ${study.variants}", "      seed: ${study.seeds}"]
    lines += [f"    cmd: {s.command.format(**values)}", "    deps:"]
    lines += [f"      - {d}" for d in _dvc_deps(s)]
    lines += [f"      - {c.rstrip('/').format(**_DVC)}" for c in step_code.code(s.name)]
    if s.params:
        keys = [f"{k.format(**_DVC)}" for k in s.params]
        if s.params_file == "params.yaml":
            lines += ["    params:", *(f"      - {k}" for k in keys)]
        else:
            lines += [
                "    params:",
                f"      - {s.params_file}:",
                *(f"          - {k}" for k in keys),
            ]
    lines += ["    outs:", *(f"      # {c}" for c in s.comments)]
    for o in s.outputs:
        flags = ([] if o.cache else ["cache: false"]) + (["persist: true"] if o.persist else [])
        lines += [f"      - {_dvc_path(o.path)}" + (":" if flags else "")]
        lines += [f"          {f}" for f in flags]
    return lines


def dvc_yaml(study: dict) -> str:
    """dvc.yaml's text: the stages, then the metrics and the plots of params `study`'s
    models."""
    stages = [line for s in STEPS for line in ("", *_stage(s))][1:]
    models = [f"{v}_s{seed}" for v in study["variants"] for seed in study["seeds"]]
    curves = [
        f"  - results/train/{models[0]}/metrics.csv: &training_curves",
        "      x: epoch",
        "      y: [train_loss, val_loss, val_success, overfit_gap]",
        *(f"  - results/train/{m}/metrics.csv: *training_curves" for m in models[1:]),
    ]
    return "\n".join([_HEADER + "stages:", *stages, _PLOTS + "\n".join(curves)]) + "\n"


def main(argv: list[str]) -> int:
    """`python -m dtpe.dvc_yaml [FILE]`: dvc.yaml from the declaration and params.yaml's
    study, printed or written to FILE."""
    import argparse

    import yaml

    cli = argparse.ArgumentParser(prog="python -m dtpe.dvc_yaml", description=main.__doc__)
    cli.add_argument("file", nargs="?", type=Path, help="where to write it (default: print it)")
    args = cli.parse_args(argv)
    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    text = dvc_yaml(study)
    if args.file:
        args.file.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
