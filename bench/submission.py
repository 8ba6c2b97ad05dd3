"""A submission end to end (issue 74): `dtpe submit` timed from the contract to the leaderboard's
row, in this checkout, on its committed overlay (the first call, which writes the overlay, is
timed too when the overlay is not there yet, and the bench stops for the commit as the command
does). Wall and core time (the children's user + system CPU, resource.getrusage) of the whole
and of each phase the command reports (contract, canary, import, each look, the report and the
leaderboard), the models it trained, and per model its steps' recorded seconds. The peer, in
the same run: the evaluate step of the submission's first model and of the canary's (the
reference's first baseline model, the same world, suites and sweeps), played side by side into
a scratch folder and timed, their CSVs compared with the committed ones byte for byte; the
baseline's own step records come from the CPU that made them and are printed as that.

Usage: python bench/submission.py --variant prope --test "T-Maze, cue at start" [--cores 2]
Prints figures, then one JSON line. Goal (issue 74): at most 60 minutes on 2 cores at the
confirmatory cap."""

from __future__ import annotations

import argparse
import filecmp
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from dtpe import names, params, pipeline, submission  # noqa: E402
from dtpe.analysis import sequential  # noqa: E402
from dtpe.numerics import cpu_name  # noqa: E402


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str]) -> tuple[list[tuple[float, str]], float, float, int, bool]:
    """The command's `submit:` lines with the seconds since its start at which each came, its
    wall and core seconds, its exit status, and whether it stopped for the overlay's commit
    (that request is the line after the `submit:` one); its output is passed through."""
    started, cpu = time.perf_counter(), children_cpu()
    lines, asks_commit = [], False
    with subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    ) as proc:
        for line in proc.stdout:
            sys.stdout.write(line)
            asks_commit |= "commit it as written" in line
            if line.startswith("submit:"):
                lines.append((time.perf_counter() - started, line.strip()))
    wall, core = time.perf_counter() - started, children_cpu() - cpu
    return lines, wall, core, proc.returncode, asks_commit


def model_seconds(run: Path, models: list[str]) -> float:
    """The median over `models` of their steps' recorded seconds (Snakemake's benchmarks)."""
    totals = []
    for model in models:
        files = list((run / "results" / "timings").glob(f"*/{model}.tsv"))
        if files:
            totals.append(sum(float(pd.read_csv(f, sep="\t").s.iloc[0]) for f in files))
    return float(pd.Series(totals).median()) if totals else float("nan")


def evaluated_side_by_side(run: Path, overlay: Path, models: list[tuple[str, int]]) -> dict:
    """Each model's evaluate step as Snakemake runs it (pipeline's command), all at once, one
    thread each, into a scratch folder: {model: (wall s, sweeps whose CSV equals the committed
    one)}."""
    step = pipeline.step("evaluate")
    sweeps = [out.name for out in step.outputs]
    with tempfile.TemporaryDirectory() as scratch:
        procs = {}
        for variant, seed in models:
            model = names.model_name(variant, seed)
            output = SimpleNamespace(**{w: f"{scratch}/{w}_{model}.csv" for w in sweeps})
            command = step.command.format(
                params=overlay, variant=variant, seed=seed, threads=1, output=output
            )
            argv = [sys.executable, "-m", *command.split()]  # `dtpe ...` as this Python runs it
            procs[model] = (time.perf_counter(), subprocess.Popen(argv, cwd=run))
        done = {}
        for model, (started, proc) in procs.items():
            if proc.wait() != 0:
                sys.exit(f"the peer's evaluate of {model} stopped (exit {proc.returncode})")
            same = [
                w
                for w in sweeps
                if filecmp.cmp(
                    f"{scratch}/{w}_{model}.csv", run / f"results/eval/{w}/{model}.csv", False
                )
            ]
            done[model] = (time.perf_counter() - started, same)
    return done


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--variant", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--cores", type=int, default=2)
    args = ap.parse_args()
    p = params.load(ROOT / "params.yaml")
    base = submission.baseline(p, args.test, ROOT)
    command = [
        sys.executable, "-m", "dtpe", "submit", "--variant", args.variant, "--test", args.test,
        "--cores", str(args.cores),
    ]  # fmt: skip
    lines, wall, cpu, status, asks_commit = timed(command)
    if status != 0:
        sys.exit(f"dtpe submit stopped (exit {status})")
    overlay = ROOT / f"params-{submission.name(args.variant, base)}.yaml"
    if asks_commit:
        print(
            f"\nthe overlay {overlay.name} is written ({wall:.0f} s wall, {cpu:.0f} core-s): "
            "commit it, then run the bench again"
        )
        return
    run = ROOT / p.leaderboard.submissions / submission.name(args.variant, base)
    mine_params = params.load(overlay)
    fixed = sequential.fixed_models(mine_params)
    held = {names.model_name(*m) for m in fixed}
    trained = sorted(
        m.name for m in (run / "models").iterdir() if m.is_dir() and m.name not in held
    )
    mine = model_seconds(run, trained)
    peer = model_seconds(ROOT / base.run, sorted(held))
    print(f"\nsubmission of {args.variant} on {args.test!r}, {args.cores} cores:")
    print(f"  end to end: {wall / 60:.1f} min wall, {cpu / 3600:.2f} core-h, status {status}")
    previous = 0.0
    for at, line in lines:
        print(f"  {at / 60:6.1f} min (+{(at - previous) / 60:4.1f})  {line[8:][:90]}")
        previous = at
    print(f"  models trained: {len(trained)}; the fixed arms' {len(held)} imported, not trained")
    print(
        f"  per model, its steps' seconds (median): {mine:.0f} s; the baseline's own models, as "
        f"recorded on the CPU that made them: {peer:.0f} s; retraining the fixed arms too would "
        f"add about {len(held) * peer / args.cores / 60:.0f} min at {args.cores} jobs"
    )
    first = (args.variant, mine_params.study.seeds[0])
    side = evaluated_side_by_side(run, overlay.resolve(), [first, fixed[0]])  # fixed[0]: the canary
    (a, (wall_a, same_a)), (b, (wall_b, same_b)) = side.items()
    print(
        f"  peer, evaluate side by side in this run: {a} {wall_a:.0f} s, {b} {wall_b:.0f} s "
        f"(ratio {wall_a / wall_b:.2f}); CSVs equal to the committed: {a} {same_a}, {b} {same_b}"
    )
    print(f"  goal: 60 min; {'met' if wall <= 3600 else 'not met'} ({wall / 60:.1f} min)")
    record = {
        "bench": "submission",
        "variant": args.variant,
        "test": args.test,
        "cores": args.cores,
        "wall_s": wall,
        "core_s": cpu,
        "models_trained": len(trained),
        "models_imported": len(held),
        "model_s_median": mine,
        "baseline_model_s_median_recorded": peer,
        "peer_evaluate_s": {m: wall for m, (wall, _) in side.items()},
        "peer_evaluate_identical": {m: same for m, (_, same) in side.items()},
        "phases": [{"at_s": at, "line": line} for at, line in lines],
        "cpu": cpu_name(),
    }
    print(json.dumps(record))


if __name__ == "__main__":
    main()
