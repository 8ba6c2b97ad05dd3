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


def _registered(folder: Path) -> list[tuple[str, ...]]:
    """The literal arguments of every `@register(...)` decorating a class in `folder`."""
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
                    entries.append(tuple(a.value for a in deco.args))
    return entries


@cache
def encodings() -> dict[str, frozenset[str]]:
    """Registered encoding names per axis."""
    found = _registered(_HERE / "encodings")
    return {axis: frozenset(name for a, name, *_ in found if a == axis) for axis in AXES}


@cache
def state_encoders() -> frozenset[str]:
    return frozenset(name for name, *_ in _registered(_HERE / "state_encoders"))


def variant(name: str) -> Variant:
    """Reads a variant name (`rope`, `rope-t_learned`); raises ValueError naming the problem."""
    match = _VARIANT.match(name)
    if match is None:
        raise ValueError(
            f"encoding variant {name!r} is not `<k>` or `<k>-t_<t>` (lowercase letters, digits)"
        )
    parsed = Variant(match["k"], match["t"] or DEFAULT_T)
    for axis in AXES:
        if getattr(parsed, axis) not in encodings()[axis]:
            raise ValueError(
                f"encoding variant {name!r}: unknown {axis} encoding {getattr(parsed, axis)!r}; "
                f"registered: {sorted(encodings()[axis])}"
            )
    return parsed
