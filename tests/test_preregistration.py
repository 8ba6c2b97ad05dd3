"""A confirmatory run's models record the overlay they were trained under (dtpe/preregistration.py):
training refuses params that git does not hold as they are, each model records its overlay's
commit and content hash, the statistics refuse records of another content unless the overlay
declares the amendment, and a run that predates the record is stated as git orders it."""

import hashlib
import json
import subprocess

import pandas as pd
import pytest
import yaml
from conftest import tiny_raw
from safetensors import safe_open

from dtpe import cli, names, params, preregistration
from dtpe.analysis import verdicts

OVERLAY = {
    "base": "params.yaml",
    "study": {"seeds": [11, 12]},
    "verdict": {
        "hypotheses": [{"a": "rope", "b": "learned", "grids": [10], "margin": 10}],
        "confirmatory": True,
        "reused_layouts": "the tiny data's layouts, for the test",
    },
}


def git(repo, *args) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout.strip()


def commit(repo, message: str, *files: str) -> str:
    git(repo, "add", *(files or ["-A"]))
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def project(root, overlay: dict = OVERLAY):
    """A git repository holding the tiny params.yaml and a confirmatory overlay of it, nothing
    committed yet; returns the overlay's path."""
    git(root.parent, "init", "-q", str(root))
    (root / "params.yaml").write_text(yaml.safe_dump(tiny_raw(), sort_keys=False))
    path = root / "params-confirm.yaml"
    path.write_text(yaml.safe_dump(overlay, sort_keys=False))
    return path


def train(path, data, out, seed: int = 11) -> int:
    name = names.model_name("rope", seed)
    return cli.main(
        ["train", "--params", str(path), "--variant", "rope", "--seed", str(seed)]
        + ["--data", str(data), "--out", str(out / "models" / name)]
        + ["--metrics", str(out / "results/train" / name)]
        + ["--resume-dir", str(out / "resume" / name)]
    )


def test_training_refuses_an_overlay_or_base_git_does_not_hold_as_it_is(tmp_path, capsys):
    repo = tmp_path / "repo"
    path = project(repo)
    base = repo / "params.yaml"
    refusals = []

    def refused(overlay=path) -> str:
        assert train(overlay, tmp_path / "no-data", tmp_path) == 2  # before reading any data
        refusals.append(capsys.readouterr().err)
        return refusals[-1]

    assert f"{path}: a confirmatory run trains only from params committed" in refused()
    assert "is not committed" in refusals[-1]
    commit(repo, "the base alone", "params.yaml")
    assert f"{path}:" in refused() and "is not committed" in refusals[-1]
    commit(repo, "the overlay")
    path.write_text(path.read_text() + "# a comment is a change too\n")
    assert f"{path}:" in refused() and "differs from its last commit" in refusals[-1]
    git(repo, "checkout", "--", path.name)
    base.write_text(base.read_text().replace("epochs: 2", "epochs: 3"))
    assert f"{base}:" in refused() and "differs from its last commit" in refusals[-1]
    git(repo, "checkout", "--", base.name)
    (tmp_path / "elsewhere").mkdir()
    outside = tmp_path / "elsewhere" / path.name
    outside.write_text(path.read_text())
    (tmp_path / "elsewhere" / "params.yaml").write_text(base.read_text())
    assert f"{outside}:" in refused(outside) and "no git repository holding" in refusals[-1]
    assert not (tmp_path / "models").exists() and not (tmp_path / "results").exists()


def test_a_committed_overlay_trains_and_each_model_records_it(tmp_path, tiny_data):
    repo = tmp_path / "repo"
    path = project(repo)
    overlay_commit = commit(repo, "hypotheses declared")
    (repo / "notes.txt").write_text("a later commit that leaves the params alone\n")
    commit(repo, "unrelated")
    assert train(path, tiny_data, tmp_path) == 0
    model = names.model_name("rope", 11)
    record = json.loads((tmp_path / "results/train" / model / preregistration.RECORD).read_text())
    assert record["path"] == "params-confirm.yaml" and record["commit"] == overlay_commit
    assert record["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert record["bases"] == [
        {
            "path": "params.yaml",
            "commit": overlay_commit,
            "sha256": hashlib.sha256((repo / "params.yaml").read_bytes()).hexdigest(),
        }
    ]
    weights = tmp_path / "models" / model / "model.safetensors"
    with safe_open(str(weights), "pt") as f:
        assert json.loads(f.metadata()[preregistration.METADATA_KEY]) == record
    # the stats accept it: every model of the run records the overlay as it is
    p = params.load(path)
    verified = preregistration.verify(
        path, p, {model: tmp_path / "results/train" / model / preregistration.RECORD}, tmp_path
    )
    assert verified.status == preregistration.RECORDED
    assert verified.commits == (overlay_commit,) and verified.sha256 == (record["sha256"],)


def records(root, p, sha: dict[str, str], commit_of: str = "a" * 40) -> dict:
    """Every model of the run with a record of overlay content `sha[model]` where given."""
    paths = {}
    for v in p.study.variants:
        for s in p.study.seeds:
            name = names.model_name(v, s)
            paths[name] = root / "results/train" / name / preregistration.RECORD
            if name in sha:
                paths[name].parent.mkdir(parents=True, exist_ok=True)
                record = {"path": "params-confirm.yaml", "commit": commit_of, "sha256": sha[name]}
                paths[name].write_text(json.dumps({**record, "bases": []}))
    return paths


def test_the_stats_refuse_records_of_another_overlay_unless_it_declares_the_amendment(
    tmp_path, capsys
):
    path = project(tmp_path / "repo")
    p = params.load(path)
    before = preregistration.sha256(path)
    models = [names.model_name(v, s) for v in p.study.variants for s in p.study.seeds]
    run = tmp_path / "run"
    same = records(run, p, dict.fromkeys(models, before))
    assert preregistration.verify(path, p, same, run / "results").status == "recorded"
    # the overlay changed after its models trained: refused, naming the knob that would allow it
    changed = {**OVERLAY, "verdict": {**OVERLAY["verdict"], "reused_layouts": "reworded"}}
    path.write_text(yaml.safe_dump(changed, sort_keys=False))
    p = params.load(path)
    with pytest.raises(params.ParamsError, match="verdict.amendments: model learned_s11"):
        preregistration.verify(path, p, same, run / "results")
    # ... by `dtpe stats` before any statistic, exiting as bad params do
    out = ["--results", str(run / "results"), "--out", str(run / "stats")]
    assert cli.main(["stats", "--params", str(path), *out]) == 2
    assert "verdict.amendments" in capsys.readouterr().err and not (run / "stats").exists()
    # declared: the models of either content decide together, and the report says so
    amended = {
        **changed,
        "verdict": {
            **changed["verdict"],
            "amendments": [{"from_sha256": before, "why": "the layouts' reason reworded"}],
        },
    }
    path.write_text(yaml.safe_dump(amended, sort_keys=False))
    now = preregistration.sha256(path)
    p = params.load(path)
    mixed = records(run, p, {m: before if i < 3 else now for i, m in enumerate(models)})
    verified = preregistration.verify(path, p, mixed, run / "results")
    assert verified.status == preregistration.AMENDED and verified.sha256 == (before, now)
    assert preregistration.verify(path, p, records(run, p, dict.fromkeys(models, now)), run)
    # a record of a content the amendment does not name is refused still
    other = records(run, p, {**dict.fromkeys(models, now), models[0]: "f" * 64})
    with pytest.raises(params.ParamsError, match=f"model {models[0]} was trained under"):
        preregistration.verify(path, p, other, run / "results")
    # a run partly recorded is neither locked nor before the lock
    for name in models[:2]:
        mixed[name].unlink()
    with pytest.raises(params.ParamsError, match="4 of the run's models record .* 2 do not"):
        preregistration.verify(path, p, mixed, run / "results")
    # an exploratory run has nothing to verify
    assert preregistration.verify(path, params.check(tiny_raw()), mixed, run) is None


def test_a_run_that_predates_the_lock_is_stated_as_git_orders_it(tmp_path):
    repo = tmp_path / "repo"
    path = project(repo)
    declared = commit(repo, "hypotheses declared")
    declared_sha = preregistration.sha256(path)
    p = params.load(path)
    results = repo / "runs/confirm/results"
    metrics = results / "train" / names.model_name("rope", 11) / "metrics.csv"
    metrics.parent.mkdir(parents=True)
    metrics.write_text("epoch\n1\n")
    first = commit(repo, "the first result")
    path.write_text(path.read_text() + "# the test changed, the hypotheses did not\n")
    changed = commit(repo, "overlay changed after the run began")
    model_records = records(results.parent, p, {})
    found = preregistration.verify(path, p, model_records, results)
    assert found == preregistration.Preregistration(
        preregistration.PREDATES, (declared,), (declared_sha,), first, (changed,)
    )
    words = preregistration.describe(found.columns())
    assert words.startswith("not recorded: predates the lock; git shows only the order of commits")
    assert f"`{declared[:7]}`" in words and f"first result `{first[:7]}`" in words
    assert f"changed since, at `{changed[:7]}`" in words
    # every decision carries it
    scores = pd.DataFrame(
        [
            {"variant": v, "seed": s, "endpoint": "10", "score_pct": 50.0 + 10 * (v == "rope") + s}
            for v in p.study.variants
            for s in p.study.seeds
        ]
    )
    decided = verdicts.decide(p, scores, preregistered=found)
    assert decided.preregistration.tolist() == [preregistration.PREDATES]
    assert decided.overlay_commit.tolist() == [declared]
    assert decided.first_result_commit.tolist() == [first]
    # outside git nothing can be ordered, and that is said
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    for name in ("params.yaml", path.name):
        (outside / name).write_text((repo / name).read_text())
    alone = preregistration.verify(outside / path.name, p, model_records, outside / "results")
    assert alone == preregistration.Preregistration(preregistration.PREDATES, (), ())
    assert preregistration.describe(alone.columns()).endswith("no result of the run to order it by")
