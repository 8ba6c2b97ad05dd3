"""The command line: one subcommand per step, and bad input refused with the reason."""

import subprocess
import sys

import pytest
import yaml

from dtpe import cli


def write(tmp_path, raw):
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def test_python_dash_m_lists_every_step():
    out = subprocess.run(
        [sys.executable, "-m", "dtpe", "--help"], capture_output=True, text=True, check=True
    ).stdout
    for step in ("data", "train", "evaluate", "attention", "stats", "tables", "figures", "report"):
        assert step in out


@pytest.mark.parametrize(
    "change, message",
    [
        (
            lambda r: r["study"].update(encodings=["rope", "alibi-typo"]),
            "unknown encoding 'alibi-typo'; registered: ['learned', 'rope', 'sinusoidal']",
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
            "data.train_size: 4 is less than the minimum of 5",
        ),
        (lambda r: r["data"]["split"].update(train=0.5), "data.split: fractions sum to 0.8"),
        (lambda r: r["model"].update(n_heads=3), "model.n_heads"),
        (lambda r: r["stats"].update(reference="nope"), "stats.reference"),
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


def test_encoding_not_in_study_and_missing_model(tmp_path, tiny_raw_params, capsys):
    path = write(tmp_path, tiny_raw_params)
    assert (
        cli.main(
            [
                "evaluate",
                "--params",
                str(path),
                "--sweep",
                "grid",
                "--encoding",
                "nope",
                "--seed",
                "1",
                "--model",
                str(tmp_path / "m"),
                "--out",
                str(tmp_path / "o.csv"),
            ]
        )
        == 2
    )
    assert "'nope' is not in study.encodings" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "evaluate",
                "--params",
                str(path),
                "--sweep",
                "grid",
                "--encoding",
                "rope",
                "--seed",
                "1",
                "--model",
                str(tmp_path / "m"),
                "--out",
                str(tmp_path / "o.csv"),
            ]
        )
        == 1
    )
    assert "config.json is missing" in capsys.readouterr().err
    assert (
        cli.main(
            [
                "evaluate",
                "--params",
                str(path),
                "--sweep",
                "context",
                "--encoding",
                "rope",
                "--seed",
                "1",
                "--model",
                str(tmp_path / "m"),
                "--out",
                str(tmp_path / "o.csv"),
                "--reuse",
                str(tmp_path / "g.csv"),
            ]
        )
        == 1
    )
    assert f"--reuse {tmp_path / 'g.csv'}: no such file" in capsys.readouterr().err
    assert not (tmp_path / "o.csv").exists()
