"""`dtpe <step>`: one subcommand per pipeline step. Snakemake and DVC run exactly these
commands; every step validates the whole params file before it does any work."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from dtpe import params as params_mod


def model_name(encoding: str, seed: int) -> str:
    return f"{encoding}_s{seed}"


def per_model(params, folder: Path, suffix: str) -> list[Path]:
    """The per-model files of a step, for every encoding and seed in the params."""
    return [
        Path(folder) / f"{model_name(e, s)}{suffix}"
        for e in params.study.encodings
        for s in params.study.seeds
    ]


def cmd_data(args, params):
    from dtpe import atomic, dataset

    started = time.perf_counter()
    with atomic.output(args.out) as tmp:
        summary = dataset.build(params, tmp)
    train = summary["splits"]["train"]
    print(
        f"data: {sum(s['episodes'] for s in summary['splits'].values())} episodes on "
        f"{params.data.train_size}x{params.data.train_size} "
        f"(train {train['episodes']}, mean length {train['length_mean']:.1f}, "
        f"max {train['length_max']}), "
        f"suites {sorted(int(k) for k in summary['suites'])} x "
        f"{params.data.suite_layouts} layouts, "
        f"{time.perf_counter() - started:.1f} s"
    )


def cmd_train(args, params):
    from dtpe import train

    _check_encoding(args.encoding, params)
    metrics = train.train(
        params,
        args.encoding,
        args.seed,
        args.data,
        args.out,
        args.metrics,
        args.resume_dir or Path(".resume") / model_name(args.encoding, args.seed),
        args.threads,
    )
    last = metrics.iloc[-1]
    print(
        f"train {args.encoding} seed {args.seed}: train loss {last.train_loss:.4f}, "
        f"val loss {last.val_loss:.4f}, "
        f"val success {last.val_success:.0%}, {metrics.seconds.sum():.0f} s"
    )


def _load_model(args, params):
    import torch

    from dtpe import checkpoint
    from dtpe.model import ModelConfig, device

    _check_encoding(args.encoding, params)
    torch.set_num_threads(args.threads)
    return checkpoint.load(
        args.model, ModelConfig.from_params(params.model, args.encoding), device()
    )


def cmd_evaluate(args, params):
    import pandas as pd

    from dtpe import atomic, evaluate

    done = None
    if args.reuse is not None:
        if not args.reuse.is_file():
            raise FileNotFoundError(
                f"--reuse {args.reuse}: no such file (run the grid sweep first)"
            )
        done = pd.read_csv(args.reuse)
    model = _load_model(args, params)
    contexts = [params.model.context] if args.sweep == "grid" else params.evaluate.contexts
    rows = evaluate.sweep(model, params, args.data, args.encoding, args.seed, contexts, done)
    with atomic.output(args.out) as tmp:
        rows.to_csv(tmp, index=False)
    summary = rows[rows.applicable].groupby(["context", "grid_size"]).success.mean().unstack()
    print(
        f"evaluate {args.sweep} {args.encoding} seed {args.seed}: "
        f"success by context x grid size\n{summary.round(2)}"
    )


def cmd_attention(args, params):
    from dtpe import atomic, attention

    model = _load_model(args, params)
    result = attention.analyse(model, params, args.data, args.encoding, args.seed)
    atomic.write_text(args.out, json.dumps(result) + "\n")
    print(f"attention {args.encoding} seed {args.seed}: translation {result['translation']}")


def cmd_stats(args, params):
    from dtpe import atomic, stats

    results = Path(args.results)
    with atomic.output(args.out) as tmp:
        tmp.mkdir()
        stats.run(
            params,
            per_model(params, results / "eval" / "grid", ".csv"),
            per_model(params, results / "eval" / "context", ".csv"),
            per_model(params, results / "train", "/metrics.csv"),
            tmp,
        )


def cmd_tables(args, params):
    from dtpe import atomic, tables

    with atomic.output(args.out) as tmp:
        tmp.mkdir()
        tables.write(params, Path(args.stats), tmp)


def cmd_figures(args, params):
    from dtpe import figures

    results = Path(args.results)
    paths = figures.draw(
        params,
        Path(args.data),
        results / "stats",
        per_model(params, results / "train", "/metrics.csv"),
        per_model(params, results / "attention", ".json"),
        Path(args.out),
    )
    print("figures: " + ", ".join(str(p) for p in paths))


def cmd_report(args, params):
    from dtpe import report

    results = Path(args.results)
    report.write(
        Path(args.params),
        results / "tables",
        Path(args.figures),
        per_model(params, results / "attention", ".json"),
        _timings(Path(args.benchmarks)),
        Path(args.out),
    )


def _timings(folder: Path) -> dict[str, float] | None:
    """Wall seconds per step from Snakemake's benchmark files, if this run made them."""
    import pandas as pd

    files = sorted(folder.glob("**/*.tsv")) if folder.is_dir() else []
    return {
        str(f.relative_to(folder).with_suffix("")): float(pd.read_csv(f, sep="\t").s.iloc[0])
        for f in files
    } or None


def _check_encoding(name: str, params) -> None:
    if name not in params.study.encodings:
        raise params_mod.ParamsError(
            f"--encoding {name!r} is not in study.encodings {params.study.encodings}"
        )


def parser() -> argparse.ArgumentParser:
    top = argparse.ArgumentParser(prog="dtpe", description=__doc__)
    steps = top.add_subparsers(dest="step", required=True)

    def step(name, func, help):
        p = steps.add_parser(name, help=help)
        p.add_argument("--params", default="params.yaml", help="params file (default: params.yaml)")
        p.set_defaults(func=func)
        return p

    p = step("data", cmd_data, "generate the training episodes and evaluation suites")
    p.add_argument("--out", type=Path, default=Path("data"))
    for name, func, help in (
        ("train", cmd_train, "train one model"),
        ("evaluate", cmd_evaluate, "grid or context sweep of one model"),
        ("attention", cmd_attention, "attention analysis of one model"),
    ):
        p = step(name, func, help)
        p.add_argument("--encoding", required=True)
        p.add_argument("--seed", type=int, required=True)
        p.add_argument("--data", type=Path, default=Path("data"))
        p.add_argument(
            "--threads", type=int, default=1, help="torch threads (Snakemake passes its `threads`)"
        )
        p.add_argument("--out", type=Path, required=True)
        if name == "train":
            p.add_argument(
                "--metrics",
                type=Path,
                required=True,
                help="folder for metrics.csv and positions.json",
            )
            p.add_argument(
                "--resume-dir", type=Path, help="epoch checkpoints (default .resume/<model>)"
            )
        else:
            p.add_argument("--model", type=Path, required=True)
        if name == "evaluate":
            p.add_argument("--sweep", choices=["grid", "context"], required=True)
            p.add_argument(
                "--reuse",
                type=Path,
                help="CSV of an earlier sweep of this model (the grid sweep's): "
                "the suites and contexts it holds are not played again",
            )
    p = step("stats", cmd_stats, "statistics over seeds and encodings")
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--out", type=Path, required=True)
    p = step("tables", cmd_tables, "the study's tables as CSV, Markdown and LaTeX")
    p.add_argument("--stats", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p = step("figures", cmd_figures, "Figures 1-5 as PNG and PDF")
    p.add_argument("--data", type=Path, default=Path("data"))
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--out", type=Path, required=True)
    p = step("report", cmd_report, "figures/REPORT.md")
    p.add_argument("--results", type=Path, default=Path("results"))
    p.add_argument("--figures", type=Path, default=Path("figures"))
    p.add_argument("--benchmarks", type=Path, default=Path("benchmarks"))
    p.add_argument("--out", type=Path, required=True)
    return top


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        params = params_mod.load(args.params)
        args.func(args, params)
    except params_mod.ParamsError as e:
        print(f"dtpe {args.step}: bad params: {e}", file=sys.stderr)
        return 2
    except (RuntimeError, ValueError, FileNotFoundError) as e:
        print(f"dtpe {args.step}: {e}", file=sys.stderr)
        return 1
    return 0
