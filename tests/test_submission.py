"""`dtpe submit` (dtpe/submission.py): a registered encoding taken to a decided row on the
leaderboard against a confirmatory baseline whose models are fixed arms. End to end on a tiny
project with the real tools (slow): the first call writes the overlay and stops until it is
committed; the next retrains a canary, imports the baseline's models, trains only the new
variant look by look and adds its row; a tampered baseline model is a canary mismatch that stops
it, a deleted evaluation is made again without retraining. And the bad inputs each refused with
their reason before any work (fast)."""

import json
import shutil

import pandas as pd
import pytest
import yaml
from test_pipeline import e2e_params, make_project, run

from dtpe import params, submission

TEST = "tiny maze"


def baseline_raw(raw: dict) -> dict:
    """A confirmatory sequential run of rope against learned, 2 looks of 2 seeds."""
    base = {**raw, "study": {"variants": ["rope", "learned"], "seeds": [11, 12, 13, 14]}}
    base["verdict"] = {
        **raw["verdict"],
        "hypotheses": [{"a": "rope", "b": "learned", "grids": [10], "margin": 50}],
        "confirmatory": True,
        "sequential": {"interims": 2, "seeds_per_interim": 2, "spending": "obrien_fleming"},
        "reused_layouts": "a test: the tiny project's one layout seed",
    }
    return base


def project_raw() -> dict:
    raw = e2e_params()
    raw["leaderboard"] = {
        "tests": [{"name": TEST, "run": "runs/confirm-tiny", "decided_by": "runs/confirm-tiny"}],
        "submissions": "runs",
    }
    return raw


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A tiny project whose confirmatory baseline ran to its end."""
    raw = project_raw()
    project = make_project(tmp_path_factory.mktemp("submit") / "project", raw)
    (project / "params-confirm-tiny.yaml").write_text(
        yaml.safe_dump(baseline_raw(raw), sort_keys=False)
    )
    run(project, "git", "add", "-A")
    run(project, "git", "commit", "-q", "-m", "baseline overlay")
    command = ["snakemake", "--cores", "2", "--configfile", "params-confirm-tiny.yaml"]
    for _ in range(3):
        done = run(project, *command, "--directory", "runs/confirm-tiny")
        if "sequential run finished" in done.stderr:
            break
    assert (project / "runs/confirm-tiny/figures/REPORT.md").is_file()
    return project


def submit(project, *extra, check=True):
    return run(project, "dtpe", "submit", "--variant", "alibi", "--test", TEST, *extra, check=check)


@pytest.mark.slow
def test_a_submission_goes_from_its_name_to_a_decided_row(built, tmp_path):
    project = tmp_path / "project"
    shutil.copytree(built, project, symlinks=True)
    first = submit(project)
    overlay = project / "params-submit-alibi-tiny.yaml"
    assert "commit it as written" in first.stdout and overlay.is_file()
    for check in ("options", "not_applicable", "cache", "linear"):
        assert f"contract: {check}: passed" in first.stdout
    assert not (project / "runs/submit-alibi-tiny").exists()  # nothing trains before the commit
    written = params.load(overlay)
    assert written.submission.variant == "alibi" and written.submission.test == TEST
    assert [(h["a"], h["b"]) for h in written.verdict.declared()] == [
        ("alibi", "rope"),
        ("alibi", "learned"),
    ]
    held = params.fixed_arms(written.verdict)
    assert set(held) == {"rope", "learned"} and all(n >= 2 for n in held.values())
    run(project, "git", "add", overlay.name)
    run(project, "git", "commit", "-q", "-m", "submission overlay")

    # an overlay edited and committed: refused, naming the key, and nothing trains
    written_text = overlay.read_text()
    overlay.write_text(written_text.replace("margin: 50", "margin: 40"))
    run(project, "git", "commit", "-q", "-am", "edited")
    edited = submit(project, check=False)
    assert edited.returncode == 2 and "params key verdict" in edited.stderr
    assert "committed as written" in edited.stderr
    assert not (project / "runs/submit-alibi-tiny").exists()
    overlay.write_text(written_text)
    run(project, "git", "commit", "-q", "-am", "as written")

    # a tampered baseline model: the canary's bytes differ, and the submission stops
    weights = project / "runs/confirm-tiny/models/rope_s11/model.safetensors"
    kept = weights.read_bytes()
    tampered = bytearray(kept)
    tampered[-1] ^= 1
    weights.write_bytes(bytes(tampered))
    stopped = submit(project, check=False)
    assert stopped.returncode == 1 and "differs from the committed model" in stopped.stderr
    assert not (project / "runs/submit-alibi-tiny/results/imported.json").exists()
    weights.write_bytes(kept)

    done = submit(project)
    assert "canary: rope_s11:" in done.stdout and "identical" in done.stdout
    sub = project / "runs/submit-alibi-tiny"
    trained = json.loads((sub / submission.IMPORTED).read_text())
    assert trained["from"] == "runs/confirm-tiny"
    models = sorted(p.name for p in (sub / "models").iterdir())
    assert {m for m in models if m.startswith("alibi")} <= {f"alibi_s{s}" for s in (11, 12, 13, 14)}
    assert {"rope_s11", "learned_s11"} <= set(models)  # imported, never trained here
    assert not (sub / "logs/train/rope_s11.log").exists()
    decisions = pd.read_csv(sub / "results/stats/decisions.csv")
    assert decisions.b.tolist() == ["rope", "learned"]
    assert (sub / "figures/REPORT.md").is_file()
    board = pd.read_csv(project / "results/leaderboard.csv")
    mine = board[board.variant == "alibi"]
    assert mine.run.tolist() == ["runs/submit-alibi-tiny"] and mine.test.tolist() == [TEST]
    assert "### tiny maze: submitted" in (project / "results/leaderboard.md").read_text()

    # stopped mid-look: an evaluation deleted is made again, its model not retrained
    model = sub / "models/alibi_s11/model.safetensors"
    mtime = model.stat().st_mtime_ns
    (sub / "results/eval/grid/alibi_s11.csv").unlink()
    again = submit(project)
    assert "imported by an earlier call, unchanged" in again.stdout  # no canary again
    assert (sub / "results/eval/grid/alibi_s11.csv").is_file()
    assert model.stat().st_mtime_ns == mtime


@pytest.fixture
def fake(tmp_path, tiny_data):
    """A project root with a leaderboard test whose baseline is a params file and its data."""
    raw = project_raw()
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    base = baseline_raw(raw)
    (tmp_path / "params-confirm-tiny.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    shutil.copytree(tiny_data, tmp_path / "runs/confirm-tiny/data")
    return tmp_path


def test_a_name_not_registered_or_ranked_already_is_refused(fake, monkeypatch):
    monkeypatch.chdir(fake)
    p = params.load(fake / "params.yaml")
    with pytest.raises(ValueError, match="unknown k encoding 'nosuch'"):
        submission.submit(p, "nosuch", TEST, fake, 1, False, print)
    with pytest.raises(ValueError, match="learned is ranked on 'tiny maze' already"):
        submission.submit(p, "learned", TEST, fake, 1, False, print)
    with pytest.raises(ValueError, match="no leaderboard test 'other'"):
        submission.submit(p, "alibi", "other", fake, 1, False, print)
    other = fake / "runs/submit-alibi-elsewhere/results"
    other.mkdir(parents=True)
    (other / "params.json").write_text(
        json.dumps({"submission": {"variant": "alibi", "test": TEST}})
    )
    with pytest.raises(ValueError, match="alibi is ranked on 'tiny maze' already"):
        submission.submit(p, "alibi", TEST, fake, 1, False, print)


def test_a_module_that_breaks_the_contract_stops_before_the_overlay(fake, monkeypatch):
    from test_contract import Quadratic

    from dtpe.model import encodings
    from dtpe.model.encodings.alibi import ALiBi
    from dtpe.steps.contract import ContractError

    for attr in ("name", "axis", "reference"):
        setattr(Quadratic, attr, getattr(ALiBi, attr))
    monkeypatch.setitem(encodings.REGISTRY["k"], "alibi", Quadratic)
    p = params.load(fake / "params.yaml")
    with pytest.raises(ContractError, match="check 'linear' fails"):
        submission.submit(p, "alibi", TEST, fake, 1, False, print)
    assert not (fake / "params-submit-alibi-tiny.yaml").exists()


def test_importing_takes_whole_models_and_never_overwrites_a_file_with_other_bytes(tmp_path):
    base = submission.Baseline(
        TEST,
        submission.Run(tmp_path / "b", tmp_path / "p.yaml"),
        submission.Run(tmp_path / "x", tmp_path / "q.yaml"),
    )
    source = tmp_path / "b"
    for out in submission.model_outputs([("rope", 1)]):
        path = source / out
        if path.suffix:  # a file
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"baseline {out}\n")
        else:  # a folder
            path.mkdir(parents=True)
            (path / "weights").write_text("baseline\n")
    (source / "results/eval/grid/rope_s10.csv").write_text("another model\n")
    run_dir = tmp_path / "mine"
    (run_dir / "results/eval/grid").mkdir(parents=True)
    (run_dir / "results/eval/grid/rope_s1.csv").write_text("mine\n")
    with pytest.raises(ValueError, match="exists with other bytes"):
        submission.import_fixed(base, run_dir, [("rope", 1)], tmp_path)
    assert (run_dir / "results/eval/grid/rope_s1.csv").read_text() == "mine\n"
    assert not (run_dir / "models").exists()  # nothing copied before every file was checked
    (run_dir / "results/eval/grid/rope_s1.csv").unlink()
    copied = submission.import_fixed(base, run_dir, [("rope", 1)], tmp_path)
    record = json.loads((run_dir / submission.IMPORTED).read_text())
    assert copied == len(record["files"]) == len(submission.model_outputs([("rope", 1)]))
    assert "results/eval/grid/rope_s10.csv" not in record["files"]
    (source / "results/eval/position/rope_s1.csv").unlink()  # a model partly pulled
    with pytest.raises(FileNotFoundError, match="results/eval/position/rope_s1.csv"):
        submission.import_fixed(base, tmp_path / "other", [("rope", 1)], tmp_path)


def test_a_submission_plays_what_its_decision_and_its_row_read(tiny_raw_params):
    """At a whole-episode endpoint the grid sweep plays the reach step's suites and the training
    size only; the position step the fixed arms' scalings; no milestone attention. An overlay
    written before these groups is still the one declared; one whose group was edited is not."""
    raw = tiny_raw_params
    raw["data"]["suite_sizes"] = [8, 10, 12]
    raw["reach"]["sizes"] = [12]
    cap = params.check(raw).env.cap(12)
    raw["evaluate"].update(whole_episode=True, contexts=[6, cap])
    raw["verdict"]["hypotheses"] = [{"a": "rope", "b": "learned", "grids": [10], "context": cap}]
    chosen = submission.Design("rope+yarn", "learned", {"rope+yarn": 4, "learned": 4}, {})
    groups = submission.read_only(params.check(raw), chosen)
    assert groups == {
        "position": {"scalings": ["yarn"]},
        "attention": {"milestone_sizes": []},
        "evaluate": {"grid_sizes": [8, 12]},
    }
    raw["verdict"]["hypotheses"][0].pop("context")  # the endpoint at the training context
    assert "evaluate" not in submission.read_only(params.check(raw), chosen)

    wanted = {"base": "b.yaml", **groups, "submission": {"variant": "alibi"}}
    before = {"base": "b.yaml", "submission": {"variant": "alibi"}}
    assert submission.difference(submission.as_declared(wanted, before), before) is None
    edited = {**wanted, "position": {"scalings": []}}
    assert submission.difference(submission.as_declared(wanted, edited), edited) == (
        ("position", "scalings"),
        ["yarn"],
        [],
    )
