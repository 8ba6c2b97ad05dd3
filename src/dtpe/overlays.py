"""Params files as layers: an overlay (`base: params.yaml` and only the keys it changes) merged
onto its base, a base that may be an overlay too, each key traced to the file that set it; keys
of earlier params files refused with where their value lives now. What the merged mapping must
hold is params.py's (the schema, the cross-field rules, the typed groups)."""

from __future__ import annotations

from pathlib import Path

import yaml

from dtpe.world import catalog as worlds


class ParamsError(ValueError):
    """A params file that cannot run; the message names the key and the reason."""


def key_path(path) -> str:
    return ".".join(str(p) for p in path) or "<top level>"


def resolve(path: str | Path) -> dict:
    """The params mapping a file stands for, its bases merged under it; not yet validated."""
    return merged(layers(Path(path)))


def chain(path: str | Path) -> list[Path]:
    """The params file and every file it builds on: its base, its base's base, ..."""
    return [file for file, _ in layers(Path(path))]


BASE = "base"
"""the key by which an overlay names the params file it changes"""


def layers(path: Path) -> list[tuple[Path, dict]]:
    """The file and its bases, the file first, each with its own keys (`base` taken out)."""
    layers, seen = [], []
    while True:
        if not path.is_file():
            of = f" (the base of {layers[-1][0]})" if layers else ""
            raise ParamsError(f"params file {path} does not exist{of}")
        if path.resolve() in seen:
            cycle = " -> ".join(str(file) for file, _ in layers)
            raise ParamsError(f"params file {layers[0][0]}: base cycle {cycle} -> {path}")
        seen.append(path.resolve())
        try:
            raw = yaml.safe_load(path.read_text())
        except yaml.YAMLError as e:
            raise ParamsError(f"params file {path} is not valid YAML: {e}") from e
        if not isinstance(raw, dict):
            raise ParamsError(f"params file {path}: expected a mapping of groups")
        refuse_renamed(raw, f"{path}: ")
        base = raw.pop(BASE, None)
        layers.append((path, raw))
        if base is None:
            return layers
        if not isinstance(base, str):
            raise ParamsError(f"{path}: params key {BASE}: {base!r} is not a file name")
        path = path.parent / base


def merged(layers: list[tuple[Path, dict]]) -> dict:
    merged = layers[-1][1]
    for (file, overlay), (base_file, _) in zip(reversed(layers[:-1]), reversed(layers[1:])):
        merged = merge(merged, overlay, file, base_file)
    return merged


def merge(base: dict, overlay: dict, file: Path, base_file: Path, at: tuple = ()) -> dict:
    """`overlay` on `base`: mappings merge key by key, any other value (a list too) replaces the
    base's. A key the base lacks (a typo) is refused here, where the overlay can be named; the
    schema would only name the merged group. A world's knobs (`worlds.<world>`) may first appear
    in the overlay of a run in that world; validation checks them against the knobs it declares."""
    merged = dict(base)
    for key, value in overlay.items():
        path = (*at, key)
        if key not in base and at == ("worlds",):
            merged[key] = value
            continue
        if key not in base:
            raise ParamsError(f"{file}: params key {key_path(path)}: not in its base {base_file}")
        both = isinstance(value, dict) and isinstance(base[key], dict)
        merged[key] = merge(base[key], value, file, base_file, path) if both else value
    return merged


def origin(layers: list[tuple[Path, dict]], path: tuple) -> Path:
    """The file a key's value comes from: the first overlay that sets the key, a key above it
    (a list it replaces) or one under it (a group it changes part of), else the root file."""
    for file, raw in layers[:-1]:
        for leaf in leaves(raw):
            n = min(len(leaf), len(path))
            if leaf[:n] == path[:n]:
                return file
    return layers[-1][0]


def leaves(raw: dict, at: tuple = ()):
    """The key paths a mapping sets: down to each value that is not a non-empty mapping."""
    for key, value in raw.items():
        if isinstance(value, dict) and value:
            yield from leaves(value, (*at, key))
        else:
            yield (*at, key)


RENAMED = {
    ("study", "encodings"): "study.variants (a variant is a k x t pair of encodings)",
    ("model", "t_table"): "encodings.t.learned.table",
    ("model", "t_max_offset"): "encodings.t.randomized.max_offset",
    **{
        ("env", knob): f"worlds.{world}.{knob} (each world's knobs are its own)"
        for world in worlds.names()
        for knob in worlds.options(world)
        if knob in ("wall_density", "cap_factor")  # env's keys before worlds had their own
    },
}
"""keys of earlier params files -> where their value lives now (a world's knob: the world that
declares it, read from its source)"""


def refuse_renamed(raw: dict, where: str) -> None:
    for path, now in RENAMED.items():
        group = raw.get(path[0])
        if isinstance(group, dict) and path[1] in group:
            raise ParamsError(f"{where}params key {key_path(path)} is now {now}: rename it there")
