"""The name of a trained model, `<variant>_s<seed>` (e.g. `rope-t_learned_s42`): built and read
here only. It names the model's folder, its per-episode CSVs and its Snakemake/DVC jobs. And the
name of a declared hypothesis's endpoint (`endpoint_key`), which params, the sequential test and
the verdicts share."""

from __future__ import annotations

import re
from pathlib import Path

PATTERN = re.compile(r"(?P<variant>.+)_s(?P<seed>\d+)")


def model_name(variant: str, seed: int | str) -> str:
    return f"{variant}_s{seed}"


def unscaled(label: str) -> str:
    """The variant of a label such as `rope+yarn` (RoPE played with an inference-time scaling),
    the label itself where it names none."""
    return label.partition("+")[0]


def parse(name: str) -> tuple[str, int]:
    """(variant, seed) of a model name; ValueError naming the expected form otherwise."""
    match = PATTERN.fullmatch(name)
    if not match:
        raise ValueError(f"{name!r} is not a model name of the form <variant>_s<seed>")
    return match["variant"], int(match["seed"])


def per_model(models, folder: Path, suffix: str) -> list[Path]:
    """The per-model files of a step, for every (variant, seed) in `models`."""
    return [Path(folder) / f"{model_name(v, s)}{suffix}" for v, s in models]


def endpoint_key(h: dict) -> str:
    """The name of a hypothesis's endpoint: its grid sizes, e.g. `10+12+16`, then `@` its
    context where it names one, then `-` its minus grid sizes where it names some."""
    key = "+".join(str(g) for g in sorted(h["grids"]))
    if h.get("context"):
        key += f"@{h['context']}"
    if h.get("minus"):
        key += "-" + "+".join(str(g) for g in sorted(h["minus"]))
    return key


def endpoint_grids(key: str) -> list[int]:
    """The grid sizes an endpoint named by endpoint_key averages over."""
    return [int(g) for g in key.split("-")[0].split("@")[0].split("+")]
