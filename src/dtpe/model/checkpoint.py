"""A trained model on disk: `model.safetensors` (weights, loaded without pickle) and
`config.json` (the ModelConfig it was built from). Loading checks both against what the
caller expects, so a wrong, damaged or mismatched checkpoint fails with a clear message."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from dtpe import atomic
from dtpe.model.config import DEFAULT_WORLD, ModelConfig
from dtpe.model.transformer import DecisionTransformer
from dtpe.world.catalog import vocabulary

FORMAT = "dtpe-decision-transformer-1"


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, damaged, or not the one asked for."""


def save(
    model: DecisionTransformer,
    directory: Path,
    extra: dict | None = None,
    metadata: dict[str, str] | None = None,
) -> None:
    """The weights and config.json in `directory`; `extra` joins config.json, `metadata` (text
    values) the weights file's own metadata, which travels with the weights wherever they go."""
    with atomic.output(directory) as tmp:
        tmp.mkdir()
        state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
        save_file(
            state, str(tmp / "model.safetensors"), metadata={"format": FORMAT, **(metadata or {})}
        )
        config = asdict(model.cfg)
        if config["world"] == DEFAULT_WORLD:  # as before there were worlds: the maze's bytes kept
            del config["world"]
        meta = {"format": FORMAT, "config": config, **(extra or {})}
        (tmp / "config.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")


def load(
    directory: Path, expect: ModelConfig | None = None, device: str | torch.device = "cpu"
) -> DecisionTransformer:
    directory = Path(directory)
    config_path, weights_path = directory / "config.json", directory / "model.safetensors"
    for p in (config_path, weights_path):
        if not p.is_file():
            raise CheckpointError(
                f"checkpoint {directory}: {p.name} is missing (train the model or `dvc pull` it)"
            )
    try:
        meta = json.loads(config_path.read_text())
        if meta.get("format") != FORMAT:
            raise CheckpointError(
                f"checkpoint {directory}: format {meta.get('format')!r}, expected {FORMAT!r}"
            )
        config = {"world": DEFAULT_WORLD, **meta["config"]}
        missing = [f.name for f in fields(ModelConfig) if f.name not in config]
        if missing:
            raise CheckpointError(
                f"checkpoint {directory}: config.json lacks {', '.join(missing)} "
                "(written by another version of dtpe: retrain the model or `dvc pull` it)"
            )
        cfg = ModelConfig(**{f.name: config[f.name] for f in fields(ModelConfig)})
    except (ValueError, KeyError, TypeError) as e:
        raise CheckpointError(f"checkpoint {directory}: config.json is unreadable: {e}") from e
    try:
        vocabulary(cfg.world)  # before any weight is read: the model's sizes come from it
    except ValueError as e:
        raise CheckpointError(
            f"checkpoint {directory}: config.json names a world this dtpe does not know: {e}"
        ) from e
    if expect is not None and cfg != expect:
        diff = {
            f.name: (getattr(cfg, f.name), getattr(expect, f.name))
            for f in fields(ModelConfig)
            if getattr(cfg, f.name) != getattr(expect, f.name)
        }
        raise CheckpointError(
            f"checkpoint {directory} does not match the params: "
            + ", ".join(f"{k} is {have!r}, expected {want!r}" for k, (have, want) in diff.items())
        )
    try:
        state = load_file(str(weights_path))
    except Exception as e:  # safetensors reports damage through several exception types
        raise CheckpointError(
            f"checkpoint {directory}: model.safetensors is corrupt or truncated: {e}"
        ) from e
    model = DecisionTransformer(cfg)
    try:
        model.load_state_dict(state)
    except RuntimeError as e:
        raise CheckpointError(f"checkpoint {directory}: weights do not fit its config: {e}") from e
    return model.to(device).eval()
