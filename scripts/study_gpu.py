"""The study's own scale (params-study.yaml) on one GPU in one command (issue 36): the data,
then learned, sinusoidal and rope trained, evaluated and analysed at the study's seeds first
(42, 123, 456) and at more seeds while a time budget allows, several models at once; then what
finished, packed into three small files. Checkpoints are not packed (about 40 MB each):
`dtpe train` with the same params, variant and seed remakes one.

Every step is the pipeline's own, as dtpe/pipeline.py declares it for Snakemake and DVC: its
command (run in its own process in --work, `python -m dtpe` for `dtpe`) and its outputs: `dtpe
data` and `dtpe check` once, then per model the declared per-model steps, `dtpe train`, `dtpe
evaluate` and `dtpe attention` (the statistics read the attention files, and they need the
checkpoint, so they are made here too). The outputs keep the pipeline's layout, so
results.tar.gz unpacks into a run folder (runs/study/results/...) where `dtpe stats`, `tables`,
`figures` and `report` run on them. Why this scheduler and not Snakemake on the GPU machine:
docs/design.md, "The study's scale on one GPU".

What --out receives (three files, none in a folder; each well under 16 MiB):
- results.tar.gz: results/params.json, results/train/<model>/ (metrics.csv, the training curve;
  numerics.json; positions.json), results/eval/<sweep>/<model>.csv (test, grid, context, seen,
  reach, position: one row per episode), results/attention/<model>.json, and results/timings/
  (each finished step's wall time, as Snakemake records it, which the report reads): every step
  that finished;
- logs.tar.gz: every step's log, also of the steps the budget stopped (a training's log has a
  line per finished epoch; each log is cut to its last 1 MiB);
- study.json: the device, the code version, the params, the numerics, the data's summary and
  md5s (DVC's hash: the data is not packed, `dtpe data` remakes it), the budget, every step's
  outcome and wall time, GPU use over time, and which models and seeds finished.
The pack is rewritten after every step that ends and once more at the end: when the budget runs
out the running steps are stopped and what finished is packed; SIGTERM or SIGINT does the same.

Numerics: the params' `compute.numerics: portable` turns on torch's deterministic algorithms,
and CUDA has no deterministic backward of AdaptiveAvgPool2d (the study's `cnn` state encoder),
so on a GPU every training would stop at its first step. `--numerics auto` (the default) runs
`native` where torch sees a GPU and the params' own mode elsewhere; the overlay that says so is
in study.json and the results' params.json.

Speed (measured on an H200, 2026-11-26; runs/study/attempts/): nine study-size models at once
in fp32, sharing the GPU in turns, took 7.4 s an epoch each (65 of 100 epochs in 524 s, no
model finished): the fp32 arithmetic bounds them (one step is ~340 GFLOP; nine models' epoch
~170 TFLOP). So on a GPU `--precision auto` (the default) trains and evaluates under bf16
autocast (the weights and AdamW's state stay fp32) and `--mps auto` starts CUDA's
multi-process service, which let nine trainings' kernels run at once (2 epochs: 28 s in turns,
20 s under MPS). Both are in study.json and, the precision, in params.json. If a command still
cannot finish the study's nine models, `--seeds` splits the run by seed over commands (e.g.
`--seeds 42,123 --more-seeds ''`, then `--seeds 456`): each command's results.tar.gz unpacks
into the same run folder, and the data is the same bytes everywhere (study.json's data_md5).

On the GPU machine, in the repository root there (its python3 has CUDA torch; the wheels in
.whl, carried, add what it lacks: jsonschema and gymnasium with their dependencies), with
`carry: [".whl"]` and `timeout_s: 600`. .whl (ignored by git: `/.whl/` in .git/info/exclude) is
made here by `pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation
cp --platform manylinux_2_17_x86_64 -d .whl` of requirements.lock's jsonschema,
jsonschema-specifications, referencing, rpds-py, gymnasium and Farama-Notifications (1 MB).

    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
--target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit; PYTHONUNBUFFERED=1 \
python3 scripts/study_gpu.py --params params-study.yaml --work /tmp/study --out $OUT \
--budget-s 530 --jobs 9

(one line, without the backslashes: 282 characters). The budget counts from the first step; the
checks before it take seconds, stopping the running steps up to 10 s and the pack a few: all
within the command's 600 s. The same command again on the still-warm machine goes on where the
first stopped: finished steps in --work are kept, and a stopped training resumes from its last
epoch (`dtpe train`'s own resume).

What travels there is the checkout's tracked and untracked-not-ignored files, at most 64 MiB:
`dvc-store/` (the DVC remote) and `runs/` (the committed runs' results; this command reads none
of it) are tracked, each far over that and growing with every run, so before the call untrack
and ignore both (`git rm -r -q --cached dvc-store runs && printf
'/dvc-store/\n/runs/\n' >> .git/info/exclude`; the tree is then ~8 MB and .whl 1 MB) and after
it undo both (`git reset -q -- dvc-store runs` and drop the two exclude lines).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[1]
if not (ROOT / "src" / "dtpe").is_dir():
    raise SystemExit(f"{__file__}: expected the package at {ROOT / 'src' / 'dtpe'}")
sys.path.insert(0, str(ROOT / "src"))  # the device runs the working tree, not an installed copy

# the runner's other two jobs, beside it in scripts/ (on sys.path: the script's own folder)
import gpu_machine  # noqa: E402
from study_pack import code_version, json_or_none, md5s, replace, write_tar  # noqa: E402

from dtpe import names, pipeline  # noqa: E402
from dtpe import params as params_mod  # noqa: E402

# the protocol run's seeds after the study's three (params-protocol.yaml): the runs pair by seed
MORE_SEEDS = "789,1011,1213,1415,1617,1819,2021"
MAX_FILE = 16 * 2**20  # what the device returns: at most 8 files of 16 MiB
LOG_TAIL = 2**20  # bytes of each log kept in the pack
POLL_S = 1.0
GPU_SAMPLE_S = 15.0
PACKED = ("results.tar.gz", "logs.tar.gz", "study.json")
# a model's steps that need its checkpoint and are quick come right after its training: the
# checkpoint does not come back, so a budget that runs out later loses only the long sweeps
FIRST = ("train", "attention", "seen")
PER_MODEL = [s.name for s in pipeline.STEPS if s.per_model]
"""a model's steps, as the pipeline declares them"""
# exit codes: all done (extra seeds may be cut), a step failed, bad usage, study seeds cut
OK, FAILED, USAGE, CUT = 0, 1, 2, 3


def dtpe_argv(declared: pipeline.Step, values: dict, outputs: dict) -> list[str]:
    """A declared step's command with `values` and its named `outputs`, run by this interpreter
    as `python -m dtpe` (the device has no `dtpe` on its PATH)."""
    argv = shlex.split(declared.command.format(**values, output=SimpleNamespace(**outputs)))
    return [sys.executable, "-m", "dtpe", *argv[1:]]


def tree_env() -> dict:
    """A step's environment: the working tree's package first (the device has no installed
    copy), its output unbuffered so that a stopped step's log holds what it printed."""
    path = os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "PYTHONPATH": path, "PYTHONUNBUFFERED": "1"}


class Clock:
    """Seconds since the first step and left of the budget; `stop` ends the budget at once."""

    def __init__(self, budget_s: float):
        self.started = time.monotonic()
        self.deadline = self.started + budget_s
        self.hit = False

    def now(self) -> float:
        return round(time.monotonic() - self.started, 2)

    def remaining(self) -> float:
        return self.deadline - time.monotonic()

    def stop(self) -> None:
        self.deadline = min(self.deadline, time.monotonic())


@dataclass
class Step:
    """One `dtpe` subcommand: its outputs (all present: the step is done; dtpe writes each
    whole or not at all) and what became of it."""

    name: str
    argv: list[str]
    outputs: list[Path]
    log: Path
    timing: Path | None
    """where its wall time is recorded as Snakemake would (pipeline.Step.timing), None: not kept"""
    status: str = "not started"  # running, done, kept (an earlier command's), stopped, failed
    rc: int | None = None
    start_s: float | None = None
    end_s: float | None = None

    def record(self) -> dict:
        wall = None if self.end_s is None else round(self.end_s - self.start_s, 2)
        return {
            "status": self.status,
            "rc": self.rc,
            "start_s": self.start_s,
            "end_s": self.end_s,
            "wall_s": wall,
        }


@dataclass
class Model:
    variant: str
    seed: int
    study_seed: bool
    steps: list[Step] = field(default_factory=list)

    @property
    def name(self) -> str:
        return names.model_name(self.variant, self.seed)

    @property
    def finished(self) -> bool:
        return all(s.status in ("done", "kept") for s in self.steps)

    def wall_s(self) -> float | None:
        """Seconds of this command's run of the whole model, if it ran every step here."""
        if any(s.status != "done" for s in self.steps):
            return None
        return sum(s.end_s - s.start_s for s in self.steps)


class Study:
    """The run: the steps, the processes running them, the pack."""

    def __init__(self, args, overlay: Path, probe: dict):
        self.args, self.overlay, self.probe = args, overlay, probe
        self.work, self.out = args.work, args.out
        self.clock = Clock(args.budget_s)
        self.lock = threading.Lock()  # the queue and the pack
        self.gpu_samples: list[dict] = []
        self.ended = threading.Event()  # every step over: the GPU sampler stops
        self.mps: dict = {"status": "off"}
        self.signal: int | None = None
        self.started_at = datetime.now(timezone.utc).isoformat(timespec="seconds")
        self.code = code_version()
        # the run's steps that are no model's and that the models need, then each model's
        self.setup = [self.step(pipeline.step(name)) for name in ("data", "validate")]
        self.models = [
            self.model(variant, seed, seed in args.study_seeds)
            for seed in args.study_seeds + args.more_seeds
            for variant in args.variants
        ]
        self.queue = list(self.models)

    def step(self, declared: pipeline.Step, variant: str = "", seed: int | None = None) -> Step:
        """A declared step's command and outputs, in --work (its folder: the command's relative
        paths are the pipeline's layout), with this run's params and threads."""
        values = {"params": shlex.quote(str(self.overlay)), "threads": self.args.threads}
        values.update(variant=variant, seed=seed)
        named = {o.name: o.path.format(**values) for o in declared.outputs if o.name}
        argv = dtpe_argv(declared, values, named)
        name = declared.subcommand
        model = names.model_name(variant, seed) if declared.per_model else ""
        log = self.work / "logs" / (f"{name}_{model}.log" if model else f"{name}.log")
        return Step(
            name,
            argv,
            [self.work / o.path.format(**values) for o in declared.outputs],
            log,
            self.work / declared.timing().format(**values) if declared.benchmark else None,
        )

    def model(self, variant: str, seed: int, study_seed: bool) -> Model:
        m = Model(variant, seed, study_seed)
        declared = [s for s in pipeline.STEPS if s.per_model and s.name in self.args.steps]
        declared.sort(key=lambda s: FIRST.index(s.name) if s.name in FIRST else len(FIRST))
        m.steps = [self.step(s, variant, seed) for s in declared]
        return m

    # ---- running ----

    def run_step(self, step: Step) -> bool:
        """Runs a step unless its outputs exist; stops it when the budget ends. True if done."""
        if all(p.exists() for p in step.outputs):
            step.status = "kept"
            return True
        if self.clock.remaining() <= 0:
            self.clock.hit = True
            return False
        step.log.parent.mkdir(parents=True, exist_ok=True)
        env = tree_env()
        with step.log.open("ab") as log:  # a resumed training's log goes on after the first's
            log.write(f"# {' '.join(step.argv)}\n".encode())
            log.flush()
            step.start_s, step.status = self.clock.now(), "running"
            proc = subprocess.Popen(
                step.argv,
                cwd=self.work,  # the declared commands' paths are relative to the run's folder
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: stopped with its children
            )
            while True:
                try:
                    step.rc = proc.wait(timeout=POLL_S)
                    break
                except subprocess.TimeoutExpired:
                    if self.clock.remaining() <= 0:
                        self.clock.hit = True
                        step.rc = stop(proc)
                        step.status = "stopped"
                        break
        step.end_s = self.clock.now()
        if step.status == "running":
            step.status = "done" if step.rc == 0 else "failed"
        wall = step.end_s - step.start_s
        if step.status == "done" and step.timing is not None:
            # the one column of Snakemake's benchmark file that the report reads
            step.timing.parent.mkdir(parents=True, exist_ok=True)
            replace(step.timing, f"s\n{wall:.4f}\n".encode())
        print(f"{step.end_s:6.0f} s  {step.log.stem} {step.status} ({wall:.0f} s)", flush=True)
        self.pack()
        return step.status == "done"

    def next_model(self) -> Model | None:
        """The next model to run: the study's seeds always; a further seed only while the
        budget left holds a model's wall time as measured so far in this command. None once a
        step has failed: a failure is usually every model's (its log says), so no new model
        starts; the running ones go on."""
        with self.lock:
            if not self.queue or any(s.status == "failed" for s in self.all_steps()):
                return None
            walls = [w for m in self.models if (w := m.wall_s()) is not None]
            head = self.queue[0]
            if head.study_seed or not walls or self.clock.remaining() >= statistics.median(walls):
                return self.queue.pop(0)
            return None

    def worker(self) -> None:
        while (m := self.next_model()) is not None:
            for step in m.steps:
                if not self.run_step(step):
                    break

    def sample_gpu(self) -> None:
        """GPU use every GPU_SAMPLE_S while the steps run: whether more jobs would fit."""
        while self.clock.remaining() > 0 and not self.ended.is_set():
            if (sample := gpu_machine.sample()) is None:
                return
            self.gpu_samples.append({"t_s": self.clock.now(), **sample})
            self.ended.wait(GPU_SAMPLE_S)

    def run(self) -> int:
        if shutil.which("nvidia-smi"):
            threading.Thread(target=self.sample_gpu, daemon=True).start()
        if self.args.mps == "auto" and self.probe["cuda"]:
            self.mps = gpu_machine.start_mps(self.work / "mps")
            print(f"study_gpu: MPS {self.mps['status']}", flush=True)
        try:
            return self.run_steps()
        finally:
            if self.mps["status"] == "started":
                gpu_machine.stop_mps()

    def run_steps(self) -> int:
        for step in self.setup:
            if not self.run_step(step):
                break
        if all(s.status in ("done", "kept") for s in self.setup):
            threads = [
                threading.Thread(target=self.worker, daemon=True) for _ in range(self.args.jobs)
            ]
            for t in threads:
                t.start()
            for t in threads:
                while t.is_alive():  # a bare join() would hold signals off
                    t.join(POLL_S)
        self.ended.set()
        self.pack(final=True)
        return self.report()

    def interrupt(self, signum, frame) -> None:
        print(f"study_gpu: signal {signum}: stopping the steps, packing", flush=True)
        self.signal = signum
        self.clock.stop()

    # ---- packing ----

    def manifest(self, final: bool) -> dict:
        failed = [s for s in self.all_steps() if s.status == "failed"]
        return {
            "script": "scripts/study_gpu.py",
            "argv": sys.argv[1:],
            "complete": final,
            "started_utc": self.started_at,
            "wall_s": self.clock.now(),
            "budget_s": self.args.budget_s,
            "budget_hit": self.clock.hit,
            "stopped_by_signal": self.signal,
            "jobs": self.args.jobs,
            "threads_per_job": self.args.threads,
            "device": self.probe,
            "gpu_samples": self.gpu_samples,
            "code": self.code,
            "params": {
                "file": str(self.args.params),
                "overlay": self.overlay.read_text(),
                "resolved": params_mod.resolve(self.overlay),
            },
            "numerics": self.args.numerics_used,
            "precision": self.args.precision_used,
            "mps": self.mps,
            "data": json_or_none(self.work / "data" / "summary.json"),
            # as DVC hashes them: the same data made elsewhere (`dtpe data`) shows it is this
            "data_md5": md5s(self.work / "data"),
            "setup": {s.name: s.record() for s in self.setup},
            "models": {
                m.name: {
                    "variant": m.variant,
                    "seed": m.seed,
                    "study_seed": m.study_seed,
                    "finished": m.finished,
                    "wall_s": m.wall_s(),
                    **{s.name: s.record() for s in m.steps},
                }
                for m in self.models
            },
            "finished": [m.name for m in self.models if m.finished],
            "finished_earlier": [
                m.name for m in self.models if all(s.status == "kept" for s in m.steps)
            ],
            "complete_seeds": [
                seed
                for seed in dict.fromkeys(m.seed for m in self.models)
                if all(m.finished for m in self.models if m.seed == seed)
            ],
            "unfinished": [m.name for m in self.models if not m.finished],
            "failed_steps": [f"{s.name} {s.log.stem}" for s in failed],
            "checkpoints": "not packed: `dtpe train --params <params> --variant V --seed S` "
            "remakes one",
        }

    def all_steps(self) -> list[Step]:
        return self.setup + [s for m in self.models for s in m.steps]

    def pack(self, final: bool = False) -> None:
        """results.tar.gz, logs.tar.gz and study.json in --out, each replaced whole."""
        with self.lock:
            self.out.mkdir(parents=True, exist_ok=True)
            write_tar(self.out / PACKED[0], self.work, self.work / "results", None)
            write_tar(self.out / PACKED[1], self.work, self.work / "logs", LOG_TAIL)
            replace(self.out / PACKED[2], json.dumps(self.manifest(final), indent=1).encode())

    def report(self) -> int:
        print(
            f"\nstudy_gpu: {self.clock.now():.0f} s, budget {self.args.budget_s:.0f} s"
            f"{' (hit)' if self.clock.hit else ''}; device {self.probe.get('name')}"
        )
        for m in self.models:
            steps = ", ".join(
                f"{s.name} {s.status}"
                + (f" {s.end_s - s.start_s:.0f} s" if s.end_s is not None else "")
                for s in m.steps
            )
            print(f"  {m.name:<24} {'finished' if m.finished else 'unfinished':<11} {steps}")
        for s in self.setup:
            if s.status not in ("done", "kept"):
                print(f"  {s.name}: {s.status} (log {s.log})")
        failed = [s for s in self.all_steps() if s.status == "failed"]
        if failed:  # the first one's error, where the device's output tail shows it
            tail = failed[0].log.read_text(errors="replace").splitlines()[-25:]
            print(f"{len(failed)} steps failed; the end of {failed[0].log.name}:", *tail, sep="\n")
        sizes = ", ".join(
            f"{p.name} {p.stat().st_size / 1e6:.2f} MB" for p in map(self.out.joinpath, PACKED)
        )
        print(f"packed in {self.out}: {sizes}")
        over = [p for p in map(self.out.joinpath, PACKED) if p.stat().st_size > MAX_FILE]
        if over:
            print(f"study_gpu: over {MAX_FILE >> 20} MiB, will not come back: {over}")
        if failed or over:
            return FAILED
        if not all(m.finished for m in self.models if m.study_seed):
            return CUT
        return OK


def stop(proc: subprocess.Popen) -> int:
    """SIGTERM to the step's process group, SIGKILL if it is still there after 10 s."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, None)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            pass
        try:
            return proc.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue
    return proc.wait()


def numerics(args, params_mode: str, cuda: bool) -> dict:
    """The numerics the steps run: --numerics, `auto` being native on a GPU (see the top)."""
    if args.numerics == "native" or (args.numerics == "auto" and cuda):
        if params_mode != "native":
            why = "torch sees a GPU: the portable mode's deterministic algorithms stop training"
            return {"mode": "native", "params_mode": params_mode, "why": why}
    return {"mode": params_mode}


def write_overlay(args, cuda: bool) -> Path:
    """The params the steps read, --work/params.yaml: --params with the numerics this device
    runs. Refuses a --work folder that an earlier command filled with other params or code."""
    raw = params_mod.resolve(args.params)
    args.numerics_used = numerics(args, raw["compute"]["numerics"], cuda)
    args.precision_used = precision(args, raw, cuda)
    stamp = {
        "params": raw,
        "numerics": args.numerics_used["mode"],
        "precision": args.precision_used["mode"],
        "src_sha256": code_version()["src_sha256"],
    }
    stamp_file = args.work / "stamp.json"
    if stamp_file.is_file() and json.loads(stamp_file.read_text()) != stamp:
        raise params_mod.ParamsError(
            f"--work {args.work} holds a run of other params, numerics, precision or code: "
            "remove it or pick another folder"
        )
    args.work.mkdir(parents=True, exist_ok=True)
    stamp_file.write_text(json.dumps(stamp, indent=1) + "\n")
    overlay = args.work / "params.yaml"
    overlay.write_text(
        "# written by scripts/study_gpu.py: the params its steps read\n"
        f"base: {json.dumps(str(args.params))}\n"
        f"compute:\n  numerics: {args.numerics_used['mode']}\n"
        + "".join(
            f"{group}:\n  precision: {args.precision_used['mode']}\n"
            for group in ("train", "evaluate")
            if args.precision_used["mode"] != "params"
        )
    )
    params_mod.load(overlay)  # valid as the steps will read it
    return overlay


def precision(args, raw: dict, cuda: bool) -> dict:
    """The precision of training and evaluation: --precision, `auto` being bf16 autocast on a
    GPU. In fp32 the study's nine models at once were bound by the GPU's fp32 arithmetic (about
    170 TFLOP an epoch for nine: 7.4 s, the command too short for 100 epochs); autocast puts
    the matrix products on the tensor cores, the weights and AdamW's state staying fp32."""
    own = {group: raw[group]["precision"] for group in ("train", "evaluate")}
    if args.precision == "bf16" or (args.precision == "auto" and cuda):
        if set(own.values()) != {"bf16"}:
            return {"mode": "bf16", "params_modes": own, "why": "a GPU: tensor cores"}
    return {"mode": "params", "params_modes": own}


def seeds(text: str) -> list[int]:
    try:
        return [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of seeds")


def model_steps(text: str) -> list[str]:
    wanted = [s.strip() for s in text.split(",") if s.strip()]
    known = PER_MODEL
    if unknown := [s for s in wanted if s not in known]:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown)}: not a per-model step (those are {', '.join(known)})"
        )
    if "train" not in wanted:
        raise argparse.ArgumentTypeError("the steps need train: the others read its checkpoint")
    return wanted


def positive(kind):
    def parse(text: str):
        value = kind(text)
        if value <= 0:
            raise argparse.ArgumentTypeError(f"{text} is not > 0")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="study_gpu.py",
        description=__doc__.split("\n\n")[0],
        epilog="See the module's docstring for the device command.",
    )
    p.add_argument(
        "--params",
        type=Path,
        default=Path("params-study.yaml"),
        help="params file or overlay (default: params-study.yaml)",
    )
    p.add_argument(
        "--out", type=Path, help="folder for the packed files (the device's $OUT); required"
    )
    p.add_argument(
        "--work",
        type=Path,
        help="folder for the data, checkpoints, results and logs (kept: a second "
        "command with the same folder goes on where the first stopped); required",
    )
    p.add_argument(
        "--budget-s",
        type=positive(float),
        default=530.0,
        help="seconds for the steps, from the first; then the running ones are "
        "stopped and what finished is packed (default: 530, for a 600 s command)",
    )
    p.add_argument(
        "--jobs",
        type=positive(int),
        help="models at once on the one GPU (default: the study seeds' models)",
    )
    p.add_argument(
        "--threads",
        type=positive(int),
        help="torch threads per job (default: (CPU cores - 1) / jobs, at least 1)",
    )
    p.add_argument(
        "--seeds",
        type=seeds,
        help="the seeds this command runs first, comma-separated (default: the params' "
        "study.seeds); a run split over commands gives each its own",
    )
    p.add_argument(
        "--more-seeds",
        type=seeds,
        default=seeds(MORE_SEEDS),
        help="seeds after the study's, run while the budget allows, "
        f"comma-separated (default: {MORE_SEEDS}; '' for none)",
    )
    p.add_argument(
        "--steps",
        type=model_steps,
        default=list(PER_MODEL),
        help="each model's steps, comma-separated (default: all the per-model steps); "
        "a model whose other steps an earlier command made runs only what it lacks, which "
        "fits a short device budget",
    )
    p.add_argument(
        "--numerics",
        choices=["auto", "params", "native"],
        default="auto",
        help="auto (default): native where torch sees a GPU, else the params' own",
    )
    p.add_argument(
        "--precision",
        choices=["auto", "params", "bf16"],
        default="auto",
        help="auto (default): bf16 autocast where torch sees a GPU, else the params' own",
    )
    p.add_argument(
        "--mps",
        choices=["auto", "off"],
        default="auto",
        help="auto (default): on a GPU, start CUDA's multi-process service (the models' "
        "kernels then share the GPU at once, not in turns) where nvidia-cuda-mps-control is",
    )
    p.add_argument(
        "--code-version",
        action="store_true",
        help="print the code version this checkout records, and exit",
    )
    return p


def main(argv=None) -> int:
    cli = parser()
    args = cli.parse_args(argv)
    if args.code_version:
        print(json.dumps(code_version(), indent=1))
        return OK
    if args.out is None or args.work is None:
        cli.error("--out and --work are required")
    args.params, args.work, args.out = (p.resolve() for p in (args.params, args.work, args.out))
    try:
        params = params_mod.load(args.params)
    except params_mod.ParamsError as e:
        print(f"study_gpu: {e}", file=sys.stderr)
        return USAGE
    args.variants = list(params.study.variants)
    args.study_seeds = args.seeds or list(params.study.seeds)
    args.more_seeds = [s for s in args.more_seeds if s not in args.study_seeds]
    args.jobs = args.jobs or len(args.variants) * len(args.study_seeds)
    args.threads = args.threads or max(1, ((os.cpu_count() or 1) - 1) // args.jobs)
    if args.out.exists() and any(
        f.name not in PACKED and not f.name.startswith(".") for f in args.out.iterdir()
    ):
        print(f"study_gpu: --out {args.out} holds other files", file=sys.stderr)
        return USAGE
    probe = gpu_machine.probe_device()
    try:
        overlay = write_overlay(args, probe["cuda"])
    except params_mod.ParamsError as e:
        print(f"study_gpu: {e}", file=sys.stderr)
        return USAGE
    study = Study(args, overlay, probe)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, study.interrupt)
    print(
        f"study_gpu: {len(study.models)} models ({', '.join(args.variants)} x seeds "
        f"{args.study_seeds} then {args.more_seeds} as the budget allows), {args.jobs} at once, "
        f"{args.threads} threads each, budget {args.budget_s:.0f} s, on {probe['name']}, "
        f"numerics {args.numerics_used['mode']}, precision {args.precision_used['mode']}",
        flush=True,
    )
    return study.run()


if __name__ == "__main__":
    sys.exit(main())
