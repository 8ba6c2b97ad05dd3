"""The command line: one subcommand per step, and bad input refused with the reason."""

import argparse
import re
import subprocess
import sys

import pytest
import yaml

from dtpe import cli, params, pipeline
from dtpe.world import catalog


def write(tmp_path, raw):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


# the pipeline's steps in their order (explore before the report, which links its outputs)
PIPELINE = [step.subcommand for step in pipeline.STEPS]


def subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction | None:
    found = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return found[0] if found else None


def without_help(parser: argparse.ArgumentParser, prefix: str = "dtpe") -> list[str]:
    """Every subcommand and argument under `parser`, at any depth, that has no help text."""
    missing = [
        f"{prefix} {'/'.join(a.option_strings) or a.dest}"
        for a in parser._actions
        if not isinstance(a, (argparse._HelpAction, argparse._SubParsersAction))
        and (a.help in (None, argparse.SUPPRESS) or not a.help.strip())
    ]
    steps = subcommands(parser)
    if steps is not None:
        helps = {a.dest: a.help for a in steps._choices_actions}
        for name, sub in steps.choices.items():
            if not (helps.get(name) or "").strip():
                missing.append(f"{prefix} {name}")
            missing += without_help(sub, f"{prefix} {name}")
    return missing


def test_help_lists_the_pipeline_steps_first_and_in_order():
    out = subprocess.run(
        [sys.executable, "-m", "dtpe", "--help"], capture_output=True, text=True, check=True
    ).stdout
    listed = re.search(r"\{([\w,-]+)\}", out).group(1).split(",")
    assert listed[: len(PIPELINE)] == PIPELINE
    assert listed == list(subcommands(cli.parser()).choices)
    # Below the usage line, each subcommand's name starts a line of its own, in the same order,
    # with its one-line help beside or under it.
    assert [m.group(1) for m in re.finditer(r"^ {4}([\w-]+)", out, re.M)] == listed


def test_every_pipeline_command_is_what_its_parser_takes():
    """The parser is built from the steps' declared flags: each command, its placeholders
    filled, parses to the values it passes, and each step's options beyond them are few and
    named (cli._EXTRA, the renamed --encoding, argparse's --help)."""
    values = {
        "params": "p.yaml",
        "variant": "rope",
        "seed": 7,
        "threads": 2,
        "runs": "a b",
        "labels": "x y",
        "output": argparse.Namespace(test="t.csv", grid="g.csv", context="c.csv"),
    }
    top = subcommands(cli.parser())
    for step in (*pipeline.STEPS, *pipeline.ACROSS_RUNS):
        argv = step.command.format(**values).split()[1:]
        args = cli.parser().parse_args(argv)
        for flag in step.flags:
            got = getattr(args, flag.name[2:].replace("-", "_"))
            want = flag.value.format(**values).split()
            assert [str(g) for g in (got if flag.nargs else [got])] == want, (step.name, flag)
        options = {o for a in top.choices[step.subcommand]._actions for o in a.option_strings}
        extra = options - {f.name for f in step.flags} - {"-h", "--help"}
        assert extra <= {"--resume-dir", "--encoding", "--no-attention", "--no-evaluation"}


def test_every_subcommand_and_argument_has_help():
    assert without_help(cli.parser()) == []


def test_the_help_walk_finds_what_lacks_help():
    """The walk above must see a missing help at any depth, or its empty list proves nothing."""
    top = argparse.ArgumentParser(prog="x")
    steps = top.add_subparsers()
    run = steps.add_parser("run", help="run it")
    run.add_argument("--fast", help="")
    inner = run.add_subparsers().add_parser("deep")
    inner.add_argument("path")
    assert without_help(top, "x") == ["x run --fast", "x run deep", "x run deep path"]


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda r: r["study"].update(variants=["rope", "alibitypo"]),
            "study.variants: variant 'alibitypo': unknown k encoding 'alibitypo'; registered: [",
        ),
        (
            lambda r: r["study"].update(variants=["rope-t_typo"]),
            "unknown t encoding 'typo'; registered: [",
        ),
        (
            lambda r: r["study"].update(variants=["alibi-typo"]),
            "variant 'alibi-typo' is not `<k>` or `<k>-t_<t>`",
        ),
        (lambda r: r["train"].update(epochs="ten"), "train.epochs: 'ten' is not of type 'integer'"),
        (
            lambda r: r["train"].update(lr=-1),
            "train.lr: -1 is less than or equal to the minimum of 0",
        ),
        (
            lambda r: r["model"].update(colour="red"),
            "Additional properties are not allowed ('colour' was unexpected)",
        ),
        (
            lambda r: r["data"].update(train_size=4),
            "data.train_size: grid size 4 is below the minimum of 5",
        ),
        (lambda r: r["data"]["split"].update(train=0.7), "data.split: fractions sum to 0.8"),
        (lambda r: r["model"].update(n_heads=3), "model.n_heads"),
        (
            lambda r: r["env"].update(world=catalog.RESERVED),
            f"env.world: no world '{catalog.RESERVED}'; worlds: {', '.join(catalog.names())}",
        ),
        (lambda r: r["stats"].update(reference="nope"), "stats.reference"),
        (
            lambda r: r["study"].update(encodings=r["study"].pop("variants")),
            "params key study.encodings is now study.variants",
        ),
        (
            lambda r: r["model"].update(t_table=40),
            "params key model.t_table is now encodings.t.learned.table",
        ),
        (
            lambda r: r["encodings"]["t"]["learned"].update(table=0),
            "encodings.t.learned.table: 0 is not an integer >= 1",
        ),
        (
            lambda r: r["encodings"]["t"]["learned"].update(table=2.5),
            "encodings.t.learned.table: 2.5 is not an integer >= 1",
        ),
        (
            lambda r: r["encodings"]["t"]["learned"].update(rows=3),
            "encodings.t.learned.rows: the t encoding 'learned' has no such option; "
            "its options: ['table']",
        ),
        (
            lambda r: r["encodings"]["t"].pop("randomized"),
            "encodings.t.randomized.max_offset: missing (the t encoding 'randomized' reads it)",
        ),
        (
            lambda r: r["encodings"].setdefault("k", {}).update(rope={"base": 10000}),
            "encodings.k.rope.base: the k encoding 'rope' has no such option",
        ),
        (
            lambda r: r["encodings"]["t"].update(lerned={"table": 4}),
            "encodings.t.lerned: no t encoding 'lerned'; registered: [",
        ),
    ],
)
def test_bad_params_name_key_and_reason(tmp_path, tiny_raw_params, change, message, capsys):
    change(tiny_raw_params)
    out = tmp_path / "data"
    assert (
        cli.main(["data", "--params", str(write(tmp_path, tiny_raw_params)), "--out", str(out)])
        == 2
    )
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_missing_params_file(tmp_path, capsys):
    assert (
        cli.main(["data", "--params", str(tmp_path / "nope.yaml"), "--out", str(tmp_path / "d")])
        == 2
    )
    assert "does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("given", [["--encoding", "rope"], ["--encoding"]])
def test_an_earlier_option_is_refused_with_its_new_name(capsys, given):
    with pytest.raises(SystemExit) as stop:
        cli.main(["train", *given, "--seed", "1", "--out", "m", "--metrics", "x"])
    assert stop.value.code == 2
    assert "--encoding is now --variant (a k x t pair of encodings)" in capsys.readouterr().err


def test_encoding_not_in_study_and_missing_model(tmp_path, tiny_raw_params, capsys):
    path = write(tmp_path, tiny_raw_params)
    outs = [f"--out-{s}" for s in ("test", "grid", "context")]

    def evaluate(variant):
        args = ["evaluate", "--params", str(path), "--variant", variant, "--seed", "1"]
        args += ["--model", str(tmp_path / "m")]
        for flag in outs:
            args += [flag, str(tmp_path / f"{flag}.csv")]
        return cli.main(args)

    assert evaluate("nope") == 2
    assert "'nope' is not in study.variants" in capsys.readouterr().err
    assert evaluate("rope") == 1
    assert "config.json is missing" in capsys.readouterr().err
    assert not any((tmp_path / f"{flag}.csv").exists() for flag in outs)


def test_evaluate_with_no_other_context_says_so(tmp_path, tiny_raw_params, tiny_data, capsys):
    import torch

    from dtpe.model import checkpoint
    from dtpe.model.transformer import DecisionTransformer

    tiny_raw_params["evaluate"]["contexts"] = [tiny_raw_params["model"]["context"]]
    path = write(tmp_path, tiny_raw_params)
    torch.manual_seed(0)
    model = DecisionTransformer(params.check(tiny_raw_params).model_config("rope")).eval()
    checkpoint.save(model, tmp_path / "m")
    args = ["evaluate", "--params", str(path), "--variant", "rope", "--seed", "1"]
    args += ["--data", str(tiny_data), "--model", str(tmp_path / "m")]
    for part in ("test", "grid", "context"):
        args += [f"--out-{part}", str(tmp_path / f"{part}.csv")]
    assert cli.main(args) == 0
    out = capsys.readouterr().out
    assert "no other context played" in out and "Empty DataFrame" not in out
