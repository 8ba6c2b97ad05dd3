"""A submitted encoding, from its registered name to a decided row on the leaderboard (`dtpe
submit`; docs/submit.md). A submission stands on one test of the leaderboard (params
leaderboard.tests) and on that test's confirmatory run, its baseline: the same data and suites,
the same seeds and endpoint, and the baseline's models as fixed arms that are never retrained,
since training is bit-identical across x86 CPUs (the canary checks it on this machine).

Each call goes as far as it can and the next resumes there:
1. a name that is not registered, or is ranked on the test already, is refused;
2. the encoding's contract (steps/contract.py) on the baseline's params and data;
3. the overlay params-submit-<variant>-<baseline>.yaml, written by the first call, which stops:
   hypotheses against RoPE at its best scaling and against the test's best arm on the
   baseline's endpoint, chosen on the test's exploratory run among the arms the baseline holds;
   the preregistration lock holds training until the overlay is committed, and an overlay whose
   declarations differ from what this writes is refused;
4. the canary: the reference's first model retrained from the baseline's params and data, its
   weights compared byte for byte with the committed ones; a mismatch stops the submission, or
   with `retrain` the fixed arms are trained here instead of imported (the looks' plan wants
   them with the first look);
5. the fixed arms' results (every per-model output but the logs) imported from the baseline,
   each file's sha256 in results/imported.json; a file that is there already with other bytes
   is refused, never overwritten; a later call finds them intact and skips 4 and 5;
6. Snakemake once per look (the baseline's seeds_per_interim seeds of the new variant a look,
   Snakemake's cache resuming a stopped one) until every hypothesis is decided or the cap is
   reached, then the run's report;
7. the leaderboard remade: the submission's row in its test's group, its decisions among the
   verdicts."""

from __future__ import annotations

import copy
import datetime
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import pandas as pd
import yaml

from dtpe import names, pipeline, submitted
from dtpe.analysis import sequential
from dtpe.numerics import cpu_name
from dtpe.params import ParamsError, load

IMPORTED = "results/imported.json"
"""a submission's record of the fixed arms' files it imported: path -> sha256, and their run"""


class CanaryMismatch(RuntimeError):
    """The retrained baseline model differs from the committed one."""


@dataclass(frozen=True)
class Run:
    """A run of the repository: its folder and its params file."""

    folder: Path
    """from the repository's root"""
    overlay: Path
    """params-<folder's name>.yaml at the repository's root"""

    @cached_property
    def params(self):
        return load(self.overlay)


def run_of(folder: str, root: Path, what: str) -> Run:
    overlay = root / f"params-{Path(folder).name}.yaml"
    if not overlay.is_file():
        raise FileNotFoundError(f"{overlay}: the params of {folder}, {what}")
    return Run(Path(folder), overlay)


@dataclass(frozen=True)
class Baseline:
    """A leaderboard test's runs: its confirmatory run, on which a submission stands (its data,
    seeds, endpoint and fixed arms), and its exploratory run, from which the arms are chosen."""

    test: str
    confirmatory: Run
    exploratory: Run

    @property
    def run(self) -> Path:
        return self.confirmatory.folder

    @property
    def overlay(self) -> Path:
        return self.confirmatory.overlay

    @property
    def params(self):
        return self.confirmatory.params


def baseline(params, test: str, root: Path) -> Baseline:
    """The runs of leaderboard test `test`; ValueError naming what is missing."""
    tests = {t["name"]: t for t in params.leaderboard.tests}
    if test not in tests:
        raise ValueError(f"no leaderboard test {test!r}; tests: {list(tests)}")
    entry = tests[test]
    if not entry["decided_by"]:
        raise ValueError(
            f"leaderboard test {test!r} has no confirmatory run (decided_by): a submission is "
            "decided against one"
        )
    return Baseline(
        test,
        run_of(entry["decided_by"], root, f"test {test!r}'s confirmatory run"),
        run_of(entry["run"], root, f"test {test!r}'s exploratory run"),
    )


def name(variant: str, base: Baseline) -> str:
    """The submission's name: its run's folder and its overlay's suffix."""
    return f"submit-{variant}-{base.run.name.removeprefix('confirm-')}"


def refuse_ranked(variant: str, base: Baseline, root: Path) -> None:
    """A variant that the test's runs or another submission already rank is refused."""
    from dtpe.model.catalog import variant as parse

    parse(variant)  # an unregistered name: ValueError naming the registered ones
    for run in (base.confirmatory, base.exploratory):
        if variant in run.params.study.variants:
            raise ValueError(
                f"{variant} is ranked on {base.test!r} already: {run.folder} trained it (submit "
                "an encoding the test does not hold)"
            )
    mine = name(variant, base)
    for other in submitted.runs(root, base.params.leaderboard.submissions):
        if Path(other["run"]).name != mine and (other["variant"], other["test"]) == (
            variant,
            base.test,
        ):
            raise ValueError(f"{variant} is ranked on {base.test!r} already: {other['run']}")


def endpoint(base_params) -> dict:
    """The baseline's one endpoint (its hypotheses' grids, context, minus and margin)."""
    keys = {names.endpoint_key(h) for h in base_params.verdict.declared()}
    if len(keys) != 1:
        raise ValueError(
            f"the baseline decides {len(keys)} endpoints, {sorted(keys)}: one is asked"
        )
    h = base_params.verdict.declared()[0]
    return {k: h[k] for k in ("grids", "context", "minus", "margin") if h.get(k) is not None}


def arm_scores(run: Run, h: dict, root: Path) -> dict[str, pd.Series]:
    """Per arm of `run` (its variants, and each played with a scaling as an arm of its own,
    `rope+yarn`), its score per seed on endpoint `h` (grids, context, minus), in study.seeds'
    order; a ValueError where the run has no evaluation the endpoint reads."""
    p = run.params
    for key in ("grids", "minus"):
        missing = sorted(set(h.get(key) or []) - set(p.data.suite_sizes))
        if missing:
            raise ValueError(f"{run.folder} plays no suites {missing} (the endpoint's {key})")
    rows = sequential.episodes(
        p, root / run.folder / "results" / "eval", whole="context" in h, scaled=True
    )
    scores = sequential.endpoint_scores(rows, [h], p.model.context).set_index("seed")
    if scores.empty:
        raise ValueError(
            f"{root / run.folder / 'results' / 'eval'}: no evaluation the endpoint "
            f"{names.endpoint_key(h)} reads (`dvc pull` {run.folder}, or run its evaluations)"
        )
    arms = list(p.study.variants) + sorted(set(scores.variant) - set(p.study.variants))
    return {
        arm: scores[scores.variant == arm].score_pct.reindex(p.study.seeds).dropna()
        for arm in arms
        if (scores.variant == arm).any()
    }


@dataclass(frozen=True)
class Design:
    """What a submission's overlay declares: its two baselines and their seeds."""

    reference: str
    """the test's reference played at its best scaling on the endpoint (`rope+yarn`), or plain"""
    best: str
    """the test's best arm on the endpoint, the reference's scalings aside"""
    fixed: dict[str, int]
    """each baseline arm -> how many of the baseline's seeds it holds"""
    means: dict[str, float]
    """every arm's mean endpoint score, as chosen from"""


def design(base: Baseline, root: Path) -> Design:
    """The reference at its best scaling and the test's best arm, chosen on the test's
    exploratory run (other seeds and layouts, so that the scores that decide are not the ones
    the arms were chosen on) among the arms the confirmatory run holds, whose seeds are the
    fixed arms'."""
    p = base.params
    h = {"a": p.study.variants[0], "b": p.study.variants[1], **endpoint(p)}
    held = arm_scores(base.confirmatory, h, root)
    means = {
        arm: float(s.mean())
        for arm, s in arm_scores(base.exploratory, h, root).items()
        if arm in held
    }
    ref = p.stats.reference
    family = [a for a in means if names.unscaled(a) == ref]
    others = [a for a in means if a not in family]
    if not family or not others:
        lacking = "reference" if not family else "other"
        raise ValueError(
            f"{base.exploratory.folder} and {base.run} share no {lacking} arm to choose from: "
            f"{sorted(means)}"
        )
    reference = max(family, key=lambda a: (means[a], -family.index(a)))  # ties: the first
    best = max(others, key=lambda a: (means[a], -others.index(a)))
    fixed = {}
    for arm in (reference, best):
        seeds = list(held[arm].index)
        if len(seeds) < 2 or seeds != list(p.study.seeds[: len(seeds)]):
            raise ValueError(
                f"{base.run}: {arm} is scored at seeds {seeds}: a fixed arm holds the first 2 or "
                "more of study.seeds"
            )
        fixed[arm] = len(seeds)
    return Design(reference, best, fixed, means)


READ_ONLY = ("evaluate", "position", "attention")
"""the groups read_only writes"""


def read_only(p, chosen: Design) -> dict:
    """The overlay's evaluation groups: a submission plays what its decision and its row read
    (analysis/sequential.py, analysis/standing.py), not every sweep of the baseline's. Its grid
    sweep, where the endpoint is the whole episode, plays the suites the reach step reads and
    the training size; its position step plays the fixed arms' own scalings (and every
    ablation); it plays no milestone attention."""
    groups = {
        "position": {"scalings": sorted({a.partition("+")[2] for a in chosen.fixed} - {""})},
        "attention": {"milestone_sizes": []},
    }
    whole = p.evaluate.whole_episode and max(p.evaluate.contexts)
    if endpoint(p).get("context") == whole:
        train = [n for n in p.data.suite_sizes if n == p.data.train_size]
        groups["evaluate"] = {"grid_sizes": sorted({*p.reach_sizes(), *train})}
    return groups


def as_declared(wanted: dict, found: dict) -> dict:
    """`wanted` as an overlay written before read_only's groups declares it: without the groups
    that `found` (the overlay on disk) lacks wholly, so that a committed submission stays as it
    was played."""
    return {k: v for k, v in wanted.items() if k in found or k not in READ_ONLY}


def overlay_text(variant: str, base: Baseline, chosen: Design) -> str:
    """The submission's overlay, its choices explained in its comments."""
    p = base.params
    seq = p.verdict.sequential
    listed = ", ".join(f"{arm} {chosen.means[arm]:+.1f}" for arm in chosen.means)
    why = (
        f"Submission of {variant} to the leaderboard's test {base.test!r}, written on "
        f"{datetime.date.today().isoformat()} by `dtpe submit` (docs/submit.md). It stands on "
        f"{base.run}: the same data, suites, seeds and endpoint, and that run's models as fixed "
        "arms, never retrained here (the canary retrains one and compares its bytes); only "
        f"{variant} trains, {seq['seeds_per_interim']} seeds a look. The hypotheses were chosen "
        f"by dtpe/submission.py from {base.exploratory.folder}'s committed evaluations, not the "
        f"scores that decide (each arm's mean endpoint "
        f"score over its seeds: {listed}): against {chosen.reference}, the reference "
        f"{p.stats.reference} at its best scaling on the endpoint, and against {chosen.best}, "
        "the test's best arm, the reference's scalings aside. Commit this file as written: the "
        "preregistration lock refuses to train from it otherwise."
    )
    body = {
        "base": base.overlay.name,
        "study": {"variants": list(dict.fromkeys([variant, *map(names.unscaled, chosen.fixed)]))},
        "verdict": {
            "hypotheses": [
                {"a": variant, "b": arm, **copy.deepcopy(endpoint(p))}  # no YAML anchors
                for arm in (chosen.reference, chosen.best)
            ],
            "sequential": dict(seq),
            "fixed": [{"arm": arm, "seeds": n} for arm, n in chosen.fixed.items()],
            "amendments": [],
            "shared_with": [],
        },
        **read_only(p, chosen),
        "submission": {"variant": variant, "test": base.test},
    }
    header = "".join(f"# {line}\n" for line in textwrap.wrap(why, 98))
    return header + yaml.safe_dump(body, sort_keys=False, default_flow_style=None, width=100)


def write_overlay(variant: str, base: Baseline, root: Path) -> Path:
    """The overlay at the repository's root, written and validated where it is missing; an
    existing one is kept (it may be committed) and must declare what this command writes, its
    comments aside: an edited overlay is refused, naming the first key that differs."""
    path = root / f"params-{name(variant, base)}.yaml"
    text = overlay_text(variant, base, design(base, root))
    if not path.exists():
        path.write_text(text)
        try:
            load(path)
        except ParamsError:
            path.unlink()  # this call's own file, never committed
            raise
        return path
    found = yaml.safe_load(path.read_text())
    differs = difference(as_declared(yaml.safe_load(text), found), found)
    if differs:
        at, wanted, found = differs
        raise ParamsError(
            f"{path}: params key {'.'.join(map(str, at))}: {found!r}, where dtpe submit declares "
            f"{wanted!r} for {variant} on {base.test!r}: a submission's overlay is committed as "
            "written (move this one away to write it again)"
        )
    return path


def difference(wanted, found, at: tuple = ()):
    """The first (key path, wanted, found) where `found` differs from `wanted`, or None."""
    if isinstance(wanted, dict) and isinstance(found, dict):
        for key in [*wanted, *(k for k in found if k not in wanted)]:
            inner = difference(wanted.get(key), found.get(key), (*at, key))
            if inner:
                return inner
        return None
    if isinstance(wanted, list) and isinstance(found, list) and len(wanted) == len(found):
        for i, (w, f) in enumerate(zip(wanted, found)):
            inner = difference(w, f, (*at, i))
            if inner:
                return inner
        return None
    return None if wanted == found else (at, wanted, found)


def model_files(run: Path, models) -> list[Path]:
    """Every per-model output of `models` (variant, seed) in `run` (logs and timings aside),
    relative, a folder's files one by one; FileNotFoundError naming the outputs it lacks."""
    missing = [out for out in model_outputs(models) if not (run / out).exists()]
    if missing:
        raise FileNotFoundError(
            f"{run}: {len(missing)} outputs of the fixed arms' models are missing, e.g. "
            f"{', '.join(missing[:3])} (`dvc pull` the run, or run its steps)"
        )
    found = []
    for out in model_outputs(models):
        path = run / out
        files = sorted(path.rglob("*")) if path.is_dir() else [path]
        found += [f.relative_to(run) for f in files if f.is_file()]
    return found


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def import_fixed(base: Baseline, run: Path, models, root: Path) -> int:
    """Copies the fixed arms' model files from the baseline into `run`, recording each in
    IMPORTED; returns how many were copied. Checks every file before copying any: one that
    exists with other bytes is refused, never overwritten."""
    source = root / base.run
    files = model_files(source, models)
    record = {"from": str(base.run), "files": {}}
    for rel in files:
        record["files"][str(rel)] = digest = sha256(source / rel)
        if (run / rel).exists() and sha256(run / rel) != digest:
            raise ValueError(
                f"{run / rel} exists with other bytes than {source / rel}: left as it is; "
                "move it away to import the baseline's"
            )
    copied = 0
    for rel in files:
        if not (run / rel).exists():
            (run / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source / rel, run / rel)
            copied += 1
    (run / IMPORTED).parent.mkdir(parents=True, exist_ok=True)
    (run / IMPORTED).write_text(json.dumps(record, indent=1, sort_keys=True) + "\n")
    return copied


def intact(run: Path) -> bool:
    """Whether an earlier call imported the fixed arms into `run` and every file is as then."""
    record = run / IMPORTED
    if not record.is_file():
        return False
    files = json.loads(record.read_text())["files"]
    return all((run / f).is_file() and sha256(run / f) == digest for f, digest in files.items())


def canary(base: Baseline, model: tuple[str, int], root: Path, work: Path) -> str:
    """Retrains `model` of the baseline from its params and data in `work` and compares its
    weights and config with the committed ones; returns what matched, raises CanaryMismatch."""
    from safetensors.torch import load_file

    run = root / base.run
    committed = run / "models" / names.model_name(*model)
    if not (committed / "model.safetensors").is_file():
        raise FileNotFoundError(
            f"{committed}: the canary's committed model (`dvc pull` {base.run})"
        )
    numerics = json.loads(
        (run / "results/train" / names.model_name(*model) / "numerics.json").read_text()
    )
    out = work / "models" / names.model_name(*model)
    command = [
        sys.executable, "-m", "dtpe", "train", "--params", str(base.overlay.resolve()),
        "--variant", model[0], "--seed", str(model[1]), "--threads", str(numerics["threads"]),
        "--data", str((run / "data").resolve()), "--out", str(out),
        "--metrics", str(work / "train" / names.model_name(*model)),
        "--resume-dir", str(work / "resume"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, cwd=run)
    if done.returncode != 0:
        raise RuntimeError(f"the canary's training failed: {done.stderr.strip()[-2000:]}")
    mine, theirs = load_file(out / "model.safetensors"), load_file(committed / "model.safetensors")
    differ = sorted(
        k
        for k in theirs
        if k not in mine or mine[k].numpy().tobytes() != theirs[k].numpy().tobytes()
    )
    same_config = json.loads((out / "config.json").read_text()) == json.loads(
        (committed / "config.json").read_text()
    )
    if differ or not same_config or set(mine) != set(theirs):
        raise CanaryMismatch(
            f"the canary {names.model_name(*model)}, retrained here from {base.run}'s params and "
            f"data, differs from the committed model: {len(differ)} of {len(theirs)} weight "
            f"tensors{'' if same_config else ' and its config'} (first: {differ[:3]}). This "
            f"machine ({cpu_name()}) does not reproduce the baseline's bytes (trained on "
            f"{numerics['cpu']}, {numerics['numerics']}): stop, or pass --on-mismatch retrain "
            "to train the fixed arms here too"
        )
    return f"{names.model_name(*model)}: {len(theirs)} weight tensors and config identical"


def snakemake(overlay: Path, run: Path, cores: int) -> list[str]:
    """The workflow's command for the submission's run (the repository's Snakefile)."""
    return [
        "snakemake", "--cores", str(cores), "--configfile", str(overlay.resolve()),
        "--directory", str(run.resolve()),
        "--snakefile", str((overlay.parent / "Snakefile").resolve()), "--rerun-incomplete",
    ]  # fmt: skip


def interims(params, overlay: Path, run: Path, cores: int, log) -> None:
    """Snakemake once per look of the submission's run (`params`, from `overlay`) until the plan
    says it is finished (each call trains the next look's models, the cache skipping what a
    stopped call finished), then its report (the explorer's page too)."""
    command = snakemake(overlay, run, cores)
    for _ in range(params.verdict.sequential["interims"] + 1):
        replayed = sequential.plan(params, run / "results" / "eval")
        log(replayed.summary())
        if replayed.next_interim is None:
            break
        _run([*command, "--omit-from", "stats", "explore"], run)
    _run(command, run)


def model_outputs(models) -> list[str]:
    """Every per-model output of `models` (variant, seed): what a model's steps make."""
    return [
        out.path.format(variant=v, seed=s)
        for step in pipeline.STEPS
        if step.per_model
        for out in step.outputs
        for v, s in models
    ]


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd)
    if done.returncode != 0:
        raise RuntimeError(
            f"{command[0]} stopped (exit {done.returncode}): its log is above; the same command "
            "resumes where it stopped"
        )


def submit(params, variant: str, test: str, root: Path, cores: int, retrain: bool, log) -> str:
    """Takes `variant` as far as it can on leaderboard test `test` (the module docstring's
    order); returns what the caller reports last."""
    from dtpe import preregistration
    from dtpe.analysis import leaderboard
    from dtpe.steps import contract

    base = baseline(params, test, root)
    refuse_ranked(variant, base, root)
    data = root / base.run / "data"
    if not data.is_dir():
        raise FileNotFoundError(f"{data}: the baseline's data (`dvc pull` {base.run})")
    for passed in contract.check(base.params, variant, data):
        log(f"contract: {passed.check}: passed ({passed.detail})")
    overlay = write_overlay(variant, base, root)
    try:
        preregistration.lock(overlay)
    except ParamsError as e:
        return f"{e}\nRead {overlay}, commit it as written, then run the same command again."
    mine = load(overlay)
    run = root / mine.leaderboard.submissions / name(variant, base)
    run.mkdir(parents=True, exist_ok=True)
    held = sequential.fixed_models(mine)
    if intact(run):
        log(f"the fixed arms' {len(held)} models were imported by an earlier call, unchanged")
    else:
        with tempfile.TemporaryDirectory() as work:
            try:
                log(f"canary: {canary(base, held[0], root, Path(work))}")
                imported = import_fixed(base, run, held, root)
                log(f"imported {imported} files of {len(held)} fixed-arm models")
            except CanaryMismatch as e:
                if not retrain:
                    raise
                # the looks' plan wants the fixed arms' models first (sequential.replay)
                log(f"canary: {e}\n--on-mismatch retrain: the fixed arms train here")
    interims(mine, overlay, run, cores, log)
    paths = leaderboard.make(params, root, root / "results")
    return f"{variant} on {test!r}: decided in {run}; leaderboard: " + ", ".join(map(str, paths))
