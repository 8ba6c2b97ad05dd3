"""dvc.yaml's top-level metrics and plots: what `dvc metrics show`, `dvc exp show` and
`dvc plots show` read. DVC's top-level plots take no globs, so the training curves are one line
per model: this test keeps those lines equal to params.yaml's variants x seeds."""

import csv

import yaml
from conftest import ROOT


def declarations() -> dict:
    return yaml.safe_load((ROOT / "dvc.yaml").read_text())


def test_every_model_has_its_training_curves_and_no_other():
    study = yaml.safe_load((ROOT / "params.yaml").read_text())["study"]
    wanted = {
        f"results/train/{e}_s{s}/metrics.csv" for e in study["variants"] for s in study["seeds"]
    }
    declared = {path: props for plot in declarations()["plots"] for path, props in plot.items()}
    missing, extra = sorted(wanted - set(declared)), sorted(set(declared) - wanted)
    assert not missing and not extra, (
        "dvc.yaml plots: add "
        + ", ".join(f"`- {p}: *training_curves`" for p in missing)
        + f"; remove {extra}"
    )
    # The columns plotted are the ones training writes: the committed reference run's files.
    written = sorted((ROOT / "results" / "train").glob("*/metrics.csv"))
    assert written, "no results/train/*/metrics.csv to read training's columns from"
    with open(written[0]) as f:
        header = next(csv.reader(f))
    for path, props in declared.items():
        assert props["x"] == "epoch" and set(props["y"]) <= set(header), path


def test_metrics_are_a_stage_output():
    dvc = declarations()
    outs = [
        next(iter(out)) if isinstance(out, dict) else out
        for stage in dvc["stages"].values()
        for out in stage.get("outs", [])
    ]
    for metrics in dvc["metrics"]:
        assert any(metrics == o or metrics.startswith(o.rstrip("/") + "/") for o in outs), metrics
