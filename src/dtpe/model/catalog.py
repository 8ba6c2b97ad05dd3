"""What the model's registries hold, read from their modules' source without importing them (so
without torch), and the one place where a model variant's name is read.

Validating a params file needs the registered names; importing the registries loads torch, which
every Snakemake parse and every step would then pay, and which must not run a kernel before
dtpe.numerics has pinned it. An entry is a module-level class decorated with the registry's
`@register(...)` call whose name arguments are string literals; tests/test_model.py checks
that these names are exactly the imported registries'.

Variant names: `<k>` is the study's model with k = <k> and t = sinusoidal (`learned`,
`sinusoidal`, `rope` keep their names and results); `<k>-t_<t>` names another t
(`rope-t_learned`, `nope-t_none`).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

AXES = ("k", "t")
DEFAULT_T = "sinusoidal"
"""the t encoding of a variant named by its k encoding alone (the study's three models)"""
_VARIANT = re.compile(r"^(?P<k>[a-z0-9]+)(?:-t_(?P<t>[a-z0-9]+))?$")
_HERE = Path(__file__).parent


@dataclass(frozen=True)
class Variant:
    """A model variant's two encodings."""

    k: str
    """name in the k registry"""
    t: str
    """name in the t registry"""


def _registered(folder: Path) -> list[tuple[tuple[str, ...], dict[str, int | float]]]:
    """Per class in `folder` decorated with `@register(...)`: the decorator's literal arguments
    and the class's literal `options` (empty where it declares none)."""
    entries = []
    for path in sorted(folder.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if not isinstance(node, ast.ClassDef):
                continue
            for deco in node.decorator_list:
                if (
                    isinstance(deco, ast.Call)
                    and getattr(deco.func, "id", None) == "register"
                    and all(isinstance(a, ast.Constant) for a in deco.args)
                ):
                    entries.append((tuple(a.value for a in deco.args), _options(node, path)))
    return entries


def _options(cls: ast.ClassDef, path: Path) -> dict[str, int | float]:
    """The class's `options`: a literal dict, option name -> smallest value (int or float)."""
    for node in cls.body:
        target = node.target if isinstance(node, ast.AnnAssign) else None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        if isinstance(target, ast.Name) and target.id == "options" and node.value is not None:
            try:
                found = ast.literal_eval(node.value)
            except (ValueError, TypeError):  # not a literal, or an unhashable key
                found = None
            if not isinstance(found, dict) or not all(
                isinstance(k, str) and type(v) in (int, float) for k, v in found.items()
            ):
                raise ValueError(
                    f"{path.name}: {cls.name}.options must be a literal dict of option name -> "
                    "smallest value (an int or a float), read without importing the module"
                )
            return found
    return {}


@cache
def encodings() -> dict[str, frozenset[str]]:
    """Registered encoding names per axis."""
    return {axis: frozenset(names) for axis, names in options().items()}


@cache
def options() -> dict[str, dict[str, dict[str, int | float]]]:
    """Per axis and registered encoding, its options: option name -> smallest allowed value.
    Their values are params (`encodings.<axis>.<name>.<option>`), so that a knob of one encoding
    is read by that encoding alone and reruns only the models that use it."""
    found = _registered(_HERE / "encodings")
    return {axis: {name: opts for (a, name, *_), opts in found if a == axis} for axis in AXES}


@cache
def state_encoders() -> frozenset[str]:
    return frozenset(name for (name, *_), _ in _registered(_HERE / "state_encoders"))


def variant(name: str) -> Variant:
    """Reads a variant name (`rope`, `rope-t_learned`); raises ValueError naming the problem."""
    match = _VARIANT.match(name)
    if match is None:
        raise ValueError(
            f"variant {name!r} is not `<k>` or `<k>-t_<t>` (lowercase letters, digits)"
        )
    parsed = Variant(match["k"], match["t"] or DEFAULT_T)
    for axis in AXES:
        if getattr(parsed, axis) not in encodings()[axis]:
            raise ValueError(
                f"variant {name!r}: unknown {axis} encoding {getattr(parsed, axis)!r}; "
                f"registered: {sorted(encodings()[axis])}"
            )
    return parsed


def options_of(name: str, encoding_params: dict) -> dict[str, dict]:
    """Per axis, the options of variant `name`'s encoding on that axis, taken from params'
    `encodings` group (axis -> encoding -> options); what its model's config holds."""
    parsed = variant(name)
    return {
        axis: dict(encoding_params.get(axis, {}).get(getattr(parsed, axis), {})) for axis in AXES
    }
