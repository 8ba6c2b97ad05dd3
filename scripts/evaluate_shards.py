"""Models' evaluate steps split over processes that run at once (issue 77): on the GPU one
`dtpe evaluate` of a study-size rope model takes about 200 s, one process stepping its episodes
in turn while the GPU idles, which a 15-minute device lease cannot give after two trainings.

Each process is the pipeline's own `dtpe evaluate` with the run's params (scripts/study_gpu.py
writes them to --work/params.yaml) cut to one of `evaluate.rope_scaling` and one group of
`data.suite_sizes`. Every process plays the test split and its group's grid sweep (the same
episodes in each, which must come out the same: the check that the processes agree); the
unscaled shard plays the contexts in ascending order, taking rows over as one step does, and
each scaled one replays every episode at every longer context. The three CSVs are then put
together line by line in the order one `dtpe evaluate` writes them (context ascending, then the
params' scalings, then suite size) at the step's own outputs in --work, so the runner, run
again with the same --work, keeps them and goes on with the steps that read them (reach). On
the CPU the merged CSVs are byte for byte one step's (tests/test_evaluate_shards.py). Under
CUDA's multi-process service where it starts, as the runner's trainings.

    python3 scripts/evaluate_shards.py --work /tmp/study --variant rope --seeds 789,1011 \\
        --groups '20;8,10,12,15'
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))  # the device runs the working tree, not an installed copy

import gpu_machine  # noqa: E402  (beside this script, as the runner)
from study_gpu import dtpe_argv, tree_env  # noqa: E402

from dtpe import atomic, pipeline  # noqa: E402
from dtpe import params as params_mod  # noqa: E402

NO_SCALING = "none"
SWEEPS = ("test", "grid", "context")


def keyed(path: Path, keys: list[str]) -> tuple[str, dict[tuple, list[str]]]:
    """A CSV's header and its lines grouped by the values of `keys`, in file order."""
    text = path.read_text()
    header, *rows = text.splitlines(keepends=True)
    groups: dict[tuple, list[str]] = {}
    table = pd.read_csv(io.StringIO(text), usecols=keys)[keys]
    for i, key in enumerate(table.itertuples(index=False)):
        groups.setdefault(tuple(key), []).append(rows[i])
    return header, groups


def merge(
    shards: dict[tuple[str, tuple[int, ...]], Path], scalings, sizes
) -> tuple[dict[str, str], list[str]]:
    """The three CSVs one `dtpe evaluate` with every scaling and suite size would write, from
    the shards' (each ran one scaling on one group of suite sizes). Where two shards disagree
    on rows they both played, those are listed and the first shard's rows kept (the list tests
    the GPU's own determinism; one process is no more right than another)."""
    merged, differ = {}, []
    for sweep, keys, order in (
        ("test", [], [()]),
        ("grid", ["grid_size"], [(n,) for n in sizes]),
        (
            "context",
            ["context", "rope_scaling", "grid_size"],
            None,  # from the rows: every context the sweep played, ascending
        ),
    ):
        header, rows = None, {}
        for shard, folder in shards.items():
            path = folder / f"{sweep}.csv"
            if keys:
                head, groups = keyed(path, keys)
            else:
                head, *body = path.read_text().splitlines(keepends=True)
                groups = {(): body}
            if header not in (None, head):
                raise SystemExit(f"shard {shard}'s {sweep} CSV has another header")
            header = head
            for key, body in groups.items():
                if rows.setdefault(key, body) != body:
                    differ.append(f"{sweep} {dict(zip(keys, key))}: {shard} against the first")
        if order is None:
            contexts = sorted({key[0] for key in rows})
            order = [(c, s, n) for c in contexts for s in scalings for n in sizes]
        if missing := [key for key in order if key not in rows]:
            raise SystemExit(f"no shard played the {sweep} rows {missing[:3]}")
        merged[sweep] = header + "".join(line for key in order for line in rows[key])
    return merged, differ


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--work", type=Path, required=True, help="the GPU runner's --work folder")
    p.add_argument("--variant", required=True)
    p.add_argument(
        "--seeds",
        type=lambda text: [int(x) for x in text.split(",")],
        required=True,
        help="the models' seeds, comma-separated: all their shards run at once",
    )
    p.add_argument("--threads", type=int, default=1, help="torch threads per process")
    p.add_argument(
        "--groups",
        help="suite sizes played together, e.g. '20;15;8,10,12' (default: each size alone)",
    )
    args = p.parse_args(argv)
    work = args.work.resolve()
    params_file = work / "params.yaml"
    params = params_mod.load(params_file)
    scalings, sizes = list(params.evaluate.rope_scaling), list(params.data.suite_sizes)
    if params.evaluate.grid_sizes is not None:
        raise SystemExit(
            f"evaluate.grid_sizes is {params.evaluate.grid_sizes}: shards split the suites, which "
            "a grid sweep of some suites does not; run `dtpe evaluate` itself"
        )
    if scalings[:1] != [NO_SCALING] or len(scalings) < 2:
        raise SystemExit(
            f"evaluate.rope_scaling is {scalings}: shards need `none` first and a scaling or "
            "more; run `dtpe evaluate` itself"
        )
    groups = (
        [tuple(int(n) for n in g.split(",")) for g in args.groups.split(";")]
        if args.groups
        else [(n,) for n in sizes]
    )
    if sorted(n for g in groups for n in g) != sorted(sizes):
        raise SystemExit(f"--groups {args.groups} must hold each of data.suite_sizes {sizes} once")
    models = {}
    for seed in args.seeds:
        model = pipeline.MODEL.format(variant=args.variant, seed=seed)
        targets = {
            o.name: work / o.path.format(variant=args.variant, seed=seed)
            for o in pipeline.step("evaluate").outputs
        }
        if all(t.exists() for t in targets.values()):
            print(f"evaluate_shards: {model}'s evaluation exists, kept")
        else:
            models[seed, model] = targets
    mps = gpu_machine.start_mps(work / "mps-shards")
    env = tree_env()  # as the runner's steps: the device has no installed package
    started, procs = time.monotonic(), {}
    try:
        for seed, model in models:
            for scaling in scalings:
                for group in groups:
                    folder = work / "shards" / model / f"{scaling}_{'-'.join(map(str, group))}"
                    folder.mkdir(parents=True, exist_ok=True)
                    overlay = folder / "params.yaml"
                    overlay.write_text(
                        f"base: {json.dumps(str(params_file))}\n"
                        f"evaluate:\n  rope_scaling: {json.dumps([scaling])}\n"
                        f"data:\n  suite_sizes: {json.dumps(list(group))}\n"
                    )
                    values = {
                        "params": shlex.quote(str(overlay)),
                        "threads": args.threads,
                        "variant": args.variant,
                        "seed": seed,
                    }
                    outputs = {s: str(folder / f"{s}.csv") for s in SWEEPS}
                    cmd = dtpe_argv(pipeline.step("evaluate"), values, outputs)
                    with (folder / "log").open("w") as log:
                        proc = subprocess.Popen(
                            cmd, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT
                        )
                    procs[model, scaling, group] = (folder, proc)
        failed = [key for key, (_, proc) in procs.items() if proc.wait() != 0]
    finally:
        if mps["status"] == "started":
            gpu_machine.stop_mps()
    wall = time.monotonic() - started
    if failed:
        raise SystemExit(f"the shards {failed} failed: see {work / 'shards'}/*/*/log")
    for (seed, model), targets in models.items():
        shards = {(s, g): folder for (m, s, g), (folder, _) in procs.items() if m == model}
        merged, differ = merge(shards, scalings, sizes)
        for sweep, text in merged.items():
            with atomic.output(targets[sweep]) as tmp:
                Path(tmp).write_text(text)
        print(
            f"evaluate_shards: {model} in {len(shards)} processes, {wall:.0f} s for all "
            f"(MPS {mps['status']}); rows two shards played differently: {len(differ)}"
            + "".join(f"\n  {d}" for d in differ[:20])
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
