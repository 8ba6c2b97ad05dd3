"""`dtpe <step>`: one subcommand per pipeline step. Snakemake and DVC run exactly these
commands; every step validates the whole params file before it does any work."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dtpe import names, numerics, pipeline
from dtpe import params as params_mod


def run_models(params, results: Path) -> list[tuple[str, int]]:
    """(variant, seed) of the run's models: every variant at every seed, or in a sequential run
    the models of its finished interims, replayed from the evaluations in `results`, and of its
    fixed arms (a submission's baseline, imported, not trained here)."""
    if params.verdict.sequential:
        from dtpe.analysis import sequential

        return sequential.plan(params, results / "eval").read
    return [(v, s) for v in params.study.variants for s in params.study.seeds]


def per_model(models, results: Path, folder: str, suffix: str) -> list[Path]:
    """The per-model files of a step under `results`/`folder`, for every model in `models`."""
    return names.per_model(models, results / folder, suffix)


def cmd_check(args, params):
    """The validated params, plus per variant what its models run besides the shared params:
    the hashes of its encodings' files and its encodings' options. DVC's stages read their
    params from this file (so a bad value stops the run here, before any stage deletes its
    outputs) and a model's stages its variant's entry (so adding or editing an encoding, or
    changing one encoding's option, reruns only the models that use it: dvc.yaml cannot derive
    files from a name)."""
    import dataclasses
    import hashlib

    from dtpe import atomic
    from dtpe.analysis import design
    from dtpe.model.catalog import options_of
    from dtpe.model.encodings import sources

    root = Path(__file__).resolve().parents[1]  # the folder holding the package
    validated = dataclasses.asdict(params)
    validated["variants"] = {
        name: {
            "code": {f: hashlib.md5((root / f).read_bytes()).hexdigest() for f in sources(name)},
            "options": options_of(name, params.encodings),
        }
        for name in params.study.variants
    }
    verdict = design.require(params, args.params)
    validated["design"] = verdict.as_dict()
    atomic.write_text(args.out, json.dumps(validated, indent=1) + "\n")
    print(f"check: {args.params} is valid; wrote {args.out}")
    print(f"check: {verdict.sentence()}")


def cmd_data(args, params):
    from dtpe import atomic
    from dtpe.steps import dataset

    started = time.perf_counter()
    with atomic.output(args.out) as tmp:
        summary = dataset.build(params, tmp)
    train = summary["splits"]["train"]
    print(
        f"data: {sum(s['episodes'] for s in summary['splits'].values())} episodes on "
        f"{params.data.train_size}x{params.data.train_size} "
        f"(train {train['episodes']}, mean length {train['length_mean']:.1f}, "
        f"max {train['length_max']}), "
        "suites "
        + ", ".join(f"{n}x{n}: {s['layouts']}" for n, s in summary["suites"].items())
        + f" layouts, {time.perf_counter() - started:.1f} s"
    )


def cmd_train(args, params):
    from dtpe import preregistration
    from dtpe.steps import train

    _check_variant(args.variant, params)
    # before any work: a confirmatory model trains only from committed, unchanged params
    locked = preregistration.lock(Path(args.params)) if params.verdict.confirmatory else None
    metrics = train.train(
        params,
        args.variant,
        args.seed,
        args.data,
        args.out,
        args.metrics,
        args.resume_dir or Path(".resume") / names.model_name(args.variant, args.seed),
        args.threads,
        args.numerics,
        locked,
    )
    last = metrics.iloc[-1]
    print(
        f"train {args.variant} seed {args.seed}: train loss {last.train_loss:.4f}, "
        f"val loss {last.val_loss:.4f}, "
        f"val success {last.val_success:.0%}, {metrics.seconds.sum():.0f} s"
    )


def _load_model(args, params):
    import torch

    from dtpe.model import checkpoint
    from dtpe.model.transformer import device

    _check_variant(args.variant, params)
    torch.set_num_threads(args.threads)
    return checkpoint.load(args.model, params.model_config(args.variant), device())


def cmd_evaluate(args, params):
    from dtpe.steps import episode_csv, evaluate

    evaluate.check_whole_episode(params, args.data)
    model = _load_model(args, params)
    test = evaluate.test_split(model, params, args.data, args.variant, args.seed)
    grid = evaluate.grid_sweep(model, params, args.data, args.variant, args.seed)
    context = evaluate.context_sweep(model, params, args.data, args.variant, args.seed, grid)
    for rows, out in ((test, args.out_test), (grid, args.out_grid), (context, args.out_context)):
        episode_csv.write(rows, params.env.world, out)
    played = context[context.applicable.astype(bool)]
    summary = played.groupby(["context", "rope_scaling", "grid_size"]).success.mean().unstack()
    by_context = (
        f"by context, scaling x grid size\n{summary.round(2)}"
        if len(summary)
        else "no other context played (evaluate.contexts holds only the training one, "
        "or this variant's k encoding indexes none of them)"
    )
    n = params.data.train_size
    print(
        f"evaluate {args.variant} seed {args.seed}: {n}x{n} test split "
        f"{test.success.mean():.1%}; success by grid size\n"
        f"{grid.groupby('grid_size').success.mean().round(3).to_string()}\n{by_context}"
    )


def cmd_seen(args, params):
    from dtpe.steps import episode_csv, evaluate

    model = _load_model(args, params)
    rows = evaluate.seen_split(model, params, args.data, args.variant, args.seed)
    episode_csv.write(rows, params.env.world, args.out)
    n = params.data.train_size
    print(
        f"seen {args.variant} seed {args.seed}: {n}x{n} training layouts "
        f"{rows.success.mean():.1%} ({len(rows)} layouts)"
    )


def cmd_reach(args, params):
    import pandas as pd

    from dtpe.steps import episode_csv, reach

    model = _load_model(args, params)
    grid = episode_csv.read([args.grid], params.env.world)
    rows = reach.ladder(model, params, args.data, args.variant, args.seed, grid)
    episode_csv.write(rows, params.env.world, args.out)
    trained = grid[grid.grid_size.isin(rows.grid_size)]
    success = pd.concat([rows, trained]).groupby(["context", "grid_size"]).success.mean()
    print(
        f"reach {args.variant} seed {args.seed}: success by context x grid size "
        f"(context {params.model.context}: the grid sweep's)\n{success.unstack().round(2)}"
    )


def cmd_position(args, params):
    from dtpe.steps import episode_csv, position

    model = _load_model(args, params)
    grid = episode_csv.read([args.grid], params.env.world)
    rows = position.played(model, params, args.data, args.variant, args.seed, grid)
    episode_csv.write(rows, params.env.world, args.out)
    done = rows[rows.applicable.astype(bool)] if len(rows) else rows
    summary = (
        done.groupby(["altered", "grid_size"]).success.mean().unstack().round(2)
        if len(done)
        else "nothing played (position.scalings and position.ablate empty, or nothing applies)"
    )
    print(
        f"position {args.variant} seed {args.seed}: success at context "
        f"{position.whole_episode_context(params)}, altered x grid size\n{summary}"
    )


def cmd_attention(args, params):
    from dtpe import atomic
    from dtpe.steps import attention

    model = _load_model(args, params)
    result = attention.analyse(model, params, args.data, args.variant, args.seed)
    atomic.write_text(args.out, json.dumps(result) + "\n")
    print(f"attention {args.variant} seed {args.seed}: translation {result['translation']}")


def cmd_stats(args, params):
    from dtpe import atomic, preregistration
    from dtpe.analysis import sequential, shared_layouts, stats

    results = Path(args.results)
    models = run_models(params, results)
    held = set(sequential.fixed_models(params)) if params.verdict.sequential else set()
    trained = [m for m in models if m not in held]
    records = per_model(trained, results, "train", f"/{preregistration.RECORD}")
    # before any statistic: decisions only on models trained under the overlay as declared (a
    # fixed arm's models record their own run's overlay, checked by that run's stats)
    preregistered = preregistration.verify(
        Path(args.params),
        params,
        {names.model_name(*m): path for m, path in zip(trained, records)},
        results,
    )
    shared = shared_layouts.against(results.parent, params.verdict.shared_with)
    with atomic.output(args.out) as tmp:
        tmp.mkdir()
        evaluated = evaluated_models(models, results, args.no_evaluation)
        stats.run(
            params,
            per_model(evaluated, results, "eval/test", ".csv"),
            per_model(evaluated, results, "eval/grid", ".csv"),
            per_model(evaluated, results, "eval/context", ".csv"),
            per_model(models, results, "train", "/metrics.csv"),
            attention_jsons(models, results, args.no_attention),
            tmp,
            optional_csvs(evaluated, results, "reach"),
            [p for p in per_model(models, results, "eval/seen", ".csv") if p.is_file()],
            preregistered,
            shared,
            optional_csvs(evaluated, results, "position"),
        )


def evaluated_models(models, results: Path, lacking: list[str]) -> list[tuple[str, int]]:
    """`models` less those named in `lacking` (--no-evaluation): trained, their evaluation
    never finished and their checkpoints gone, as where scripts/study_gpu.py's budget ran out.
    A named model must be one of the run's and lack its grid sweep."""
    named = {names.model_name(v, s): (v, s) for v, s in models}
    unknown = sorted(set(lacking) - set(named))
    if unknown:
        raise ValueError(f"--no-evaluation: {unknown} are not models of this run ({sorted(named)})")
    grid = results / "eval" / "grid"
    present = sorted(name for name in lacking if (grid / f"{name}.csv").is_file())
    if present:
        raise ValueError(f"--no-evaluation: {present} have their grid sweep; drop them")
    return [m for m in models if names.model_name(*m) not in lacking]


def attention_jsons(models, results: Path, lacking: list[str]) -> list[Path]:
    """The attention step's JSONs of `models`, less those of the models named in `lacking`
    (--no-attention): a run whose checkpoints were gone before the step could run, as where
    scripts/study_gpu.py's budget ran out. A named model must be one of the run's and lack its
    file; any other missing file is an error, as before."""
    paths = {
        names.model_name(v, s): path
        for (v, s), path in zip(models, per_model(models, results, "attention", ".json"))
    }
    unknown = sorted(set(lacking) - set(paths))
    if unknown:
        raise ValueError(f"--no-attention: {unknown} are not models of this run ({sorted(paths)})")
    present = sorted(name for name in lacking if paths[name].is_file())
    if present:
        raise ValueError(f"--no-attention: {present} have their attention file; drop them")
    kept = [path for name, path in paths.items() if name not in lacking]
    missing = [path for path in kept if not path.is_file()]
    if missing:
        raise FileNotFoundError(
            f"attention: {len(missing)} models lack their JSON, e.g. {missing[0]} (a model whose "
            "checkpoint is gone is named with --no-attention)"
        )
    return kept


def optional_csvs(models, results: Path, step: str) -> list[Path]:
    """A step's CSVs of `models` (reach, position): every one, or none in a run that predates
    the step; a run that has some lacks the others by mistake."""
    paths = per_model(models, results, f"eval/{step}", ".csv")
    missing = [p for p in paths if not p.is_file()]
    if missing and len(missing) < len(paths):
        raise FileNotFoundError(f"{step}: {len(missing)} models lack their CSV, e.g. {missing[0]}")
    return [] if missing else paths


def cmd_tables(args, params):
    from dtpe import atomic
    from dtpe.analysis import tables

    with atomic.output(args.out) as tmp:
        tmp.mkdir()
        tables.write(params, Path(args.stats), tmp)


def cmd_figures(args, params):
    from dtpe.analysis import figures

    results = Path(args.results)
    paths = figures.draw(
        params,
        Path(args.data),
        results / "stats",
        attention_jsons(run_models(params, results), results, args.no_attention),
        Path(args.out),
    )
    print("figures: " + ", ".join(str(p) for p in paths))


def cmd_report(args, params):
    from dtpe.analysis import report

    results = Path(args.results)
    models = run_models(params, results)
    evaluated_models(models, results, args.no_evaluation)  # a wrong name is refused
    report.write(
        Path(args.params),
        results / "stats",
        results / "tables",
        Path(args.figures),
        attention_jsons(models, results, args.no_attention),
        args.no_attention,
        args.no_evaluation,
        _timings(Path(args.benchmarks)),
        Path(args.out),
    )


def cmd_explore(args, params):
    import torch

    from dtpe.explorer import build as explorer

    torch.set_num_threads(args.threads)
    paths = explorer.run(
        params, Path(args.data), Path(args.models), Path(args.results) / "eval", args.out
    )
    sizes = ", ".join(f"{p.name} {p.stat().st_size / 1e6:.2f} MB" for p in paths)
    print(f"explore: {sizes}")


def cmd_compare(args, params):
    from dtpe import atomic
    from dtpe.analysis import compare

    table, confidence = compare.read(args.runs, args.labels)  # all of it, before writing
    decided = compare.leaderboard(args.runs, args.labels)
    shared = compare.shared(args.runs, args.labels, decided)
    with atomic.output(args.out) as tmp:
        tmp.mkdir()
        paths = compare.write(table, confidence, decided, shared, tmp)
    print(f"compare {', '.join(args.labels)}: " + ", ".join(p.name for p in paths))


def cmd_leaderboard(args, params):
    from dtpe.analysis import leaderboard

    paths = leaderboard.make(params, Path.cwd(), Path(args.out))
    print(f"leaderboard: {len(params.leaderboard.tests)} tests, " + ", ".join(map(str, paths)))


def _timings(folder: Path) -> dict[str, float] | None:
    """Wall seconds per step from Snakemake's benchmark files, if this run made them."""
    import pandas as pd

    files = sorted(folder.glob("**/*.tsv")) if folder.is_dir() else []
    return {
        str(f.relative_to(folder).with_suffix("")): float(pd.read_csv(f, sep="\t").s.iloc[0])
        for f in files
    } or None


def cmd_encodings(args, params):
    from dtpe.model.encodings import table

    rows = table()
    widths = {key: max(len(key), *(len(r[key]) for r in rows)) for key in rows[0]}
    print("  ".join(key.ljust(w) for key, w in widths.items()).rstrip())
    for r in rows:
        print("  ".join(r[key].ljust(w) for key, w in widths.items()).rstrip())
    print(
        "variants: `<k>` (t = sinusoidal, the study's three models) or `<k>-t_<t>`, "
        "e.g. rope-t_learned"
    )


def cmd_contract(args, params):
    from dtpe.model.catalog import variant
    from dtpe.steps import contract

    variant(args.variant)  # an unregistered name is refused before any model is built
    for passed in contract.check(params, args.variant, args.data):
        print(f"contract: {args.variant}: {passed.check}: passed ({passed.detail})")


def cmd_submit(args, params):
    from dtpe import submission

    said = submission.submit(
        params,
        args.variant,
        args.test,
        Path.cwd(),
        args.cores,
        args.on_mismatch == "retrain",
        lambda line: print(f"submit: {line}", flush=True),
    )
    print(f"submit: {said}")


def _check_variant(name: str, params) -> None:
    if name not in params.study.variants:
        raise params_mod.ParamsError(
            f"--variant {name!r} is not in study.variants {params.study.variants}"
        )


class _Renamed(argparse.Action):
    """An option of earlier versions, refused with the one that replaced it (argparse alone
    would say only that it is unrecognised); with or without a value."""

    def __init__(self, option_strings, dest, now, why, **kwargs):
        super().__init__(option_strings, dest, nargs="?", help=f"earlier name of {now}", **kwargs)
        self.now, self.why = now, why

    def __call__(self, parser, namespace, values, option_string=None):
        parser.error(f"{option_string} is now {self.now} ({self.why})")


def no_attention(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-attention",
        action="append",
        default=[],
        metavar="MODEL",
        help="a model (<variant>_s<seed>) whose attention step never ran, its checkpoint gone; "
        "left out of the attention results and named in the report (repeatable)",
    )


def no_evaluation(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--no-evaluation",
        action="append",
        default=[],
        metavar="MODEL",
        help="a model (<variant>_s<seed>) whose evaluation never finished, its checkpoint gone; "
        "left out of the evaluations' results (its training and attention kept) and named in the "
        "report (repeatable)",
    )


# what a step's parser takes beyond its pipeline command's flags (pipeline.STEPS)
_EXTRA = {
    "train": lambda p: p.add_argument(
        "--resume-dir", type=Path, help="epoch checkpoints (default .resume/<model>)"
    ),
    "stats": lambda p: (no_attention(p), no_evaluation(p)),
    "figures": no_attention,
    "report": lambda p: (no_attention(p), no_evaluation(p)),
}


def parser() -> argparse.ArgumentParser:
    """One subparser per pipeline step, in pipeline order, its options the step's declared
    flags (pipeline.Flag) and its _EXTRA; then `compare`, `leaderboard`, and the tools that are
    no step: `encodings`, `contract`, `submit`."""
    top = argparse.ArgumentParser(prog="dtpe", description=__doc__)
    steps = top.add_subparsers(dest="step", required=True)
    for step in (*pipeline.STEPS, *pipeline.ACROSS_RUNS):
        p = steps.add_parser(step.subcommand, help=step.summary)
        p.set_defaults(func=globals()[f"cmd_{step.subcommand}"])
        for flag in step.flags:
            p.add_argument(
                flag.name,
                type=flag.type,
                required=flag.default is None,
                default=flag.default,
                nargs=flag.nargs,
                help=flag.help,
            )
        if step.per_model:
            p.add_argument(
                "--encoding", action=_Renamed, now="--variant", why="a k x t pair of encodings"
            )
        _EXTRA.get(step.subcommand, lambda p: None)(p)
    tool(steps, "encodings", "list the registered k and t encodings (not a pipeline step)")
    p = tool(
        steps,
        "contract",
        "check a variant's encodings against the evaluation's contract on an untrained model: "
        "options, N/A, cache, linear cost (steps/contract.py; not a pipeline step)",
    )
    p.add_argument("--variant", required=True, help="a registered variant, e.g. prope")
    p.add_argument("--data", type=Path, default=Path("data"), help="data folder (its suites)")
    p = tool(
        steps,
        "submit",
        "take a registered encoding to a decided row on the leaderboard, from the repository's "
        "root: contract, overlay, canary, looks, leaderboard (dtpe/submission.py)",
    )
    p.add_argument("--variant", required=True, help="the registered variant submitted")
    p.add_argument("--test", required=True, help="the leaderboard test (leaderboard.tests' name)")
    p.add_argument("--cores", type=int, default=2, help="Snakemake's cores (default 2)")
    p.add_argument(
        "--on-mismatch",
        choices=("stop", "retrain"),
        default="stop",
        help="when the canary's bytes differ: stop (default), or train the fixed arms here",
    )
    return top


def tool(steps, name: str, summary: str) -> argparse.ArgumentParser:
    """A subcommand that is no pipeline step, `cmd_<name>`, reading --params."""
    p = steps.add_parser(name, help=summary)
    p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
    p.set_defaults(func=globals()[f"cmd_{name}"])
    return p


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        # before anything imports torch (validation does): its kernels pick their code path
        # when it loads
        compute = params_mod.resolve(args.params).get("compute")
        numerics.pin(compute.get("numerics") if isinstance(compute, dict) else None)
        params = params_mod.load(args.params)
        if pipeline.runs_model(args.step):
            threads = getattr(args, "threads", params.compute.threads)
            args.numerics = numerics.check(params.compute.numerics, threads)
        args.func(args, params)
    except params_mod.ParamsError as e:
        print(f"dtpe {args.step}: bad params: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, ValueError, FileNotFoundError) as e:
        print(f"dtpe {args.step}: {e}", file=sys.stderr)
        return 1
    return 0
