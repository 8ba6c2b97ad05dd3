"""The name of a trained model, `<variant>_s<seed>` (e.g. `rope-t_learned_s42`): built and read
here only. It names the model's folder, its per-episode CSVs and its Snakemake/DVC jobs."""

from __future__ import annotations

import re
from pathlib import Path

PATTERN = re.compile(r"(?P<variant>.+)_s(?P<seed>\d+)")


def model_name(variant: str, seed: int | str) -> str:
    return f"{variant}_s{seed}"


def parse(name: str) -> tuple[str, int]:
    """(variant, seed) of a model name; ValueError naming the expected form otherwise."""
    match = PATTERN.fullmatch(name)
    if not match:
        raise ValueError(f"{name!r} is not a model name of the form <variant>_s<seed>")
    return match["variant"], int(match["seed"])


def per_model(models, folder: Path, suffix: str) -> list[Path]:
    """The per-model files of a step, for every (variant, seed) in `models`."""
    return [Path(folder) / f"{model_name(v, s)}{suffix}" for v, s in models]
