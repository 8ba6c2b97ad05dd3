"""Registries of the encodings of the two positions, k (in-window index) and t (global timestep).

A new encoding is one module in this package whose class subclasses `Encoding` and is decorated
with `@register(axis, name, reference)`: modules are discovered here, so adding one edits no
other module (one with options also values them in params.yaml, `encodings.<axis>.<name>`).
`sources(variant)` lists the files a variant's model runs (the workflows' code dependencies),
so adding an encoding reruns only the models that use it.
"""

import importlib
import inspect
import pkgutil
import sys
from pathlib import Path

from dtpe.model.catalog import AXES, DEFAULT_T, Variant, variant
from dtpe.model.encodings.base import (
    REGISTRY,
    Attending,
    Encoding,
    NotApplicable,
    PositionBias,
    Span,
    SwitchedOff,
    carries_position,
    create,
    register,
)

for _module in pkgutil.iter_modules(__path__):
    importlib.import_module(f"{__name__}.{_module.name}")


def _package_imports(module) -> set[str]:
    """The modules of this package that `module` uses, itself included, transitively."""
    found, todo = set(), [module.__name__]
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        for value in vars(sys.modules[name]).values():
            owner = value.__name__ if inspect.ismodule(value) else getattr(value, "__module__", "")
            if isinstance(owner, str) and owner.startswith(f"{__name__}."):
                todo.append(owner)
    return found


def sources(name: str) -> list[str]:
    """The package files variant `name` runs, relative to the folder that holds the package
    (`dtpe/model/encodings/rope.py`, wherever it is installed): this file, base.py, and the
    modules of its k and t encodings with the modules they import."""
    parsed = variant(name)
    modules = {__name__}
    for axis in AXES:
        modules |= _package_imports(sys.modules[REGISTRY[axis][getattr(parsed, axis)].__module__])
    root = Path(sys.modules["dtpe"].__file__).resolve().parents[1]
    return sorted(
        str(Path(inspect.getsourcefile(sys.modules[m])).resolve().relative_to(root))
        for m in modules
    )


def table() -> list[dict[str, str]]:
    """One row per registered encoding: name, axis, the params keys it reads (its options
    first), its reference."""
    return [
        {
            "name": name,
            "axis": axis,
            "parameters": ", ".join(
                [*(f"encodings.{axis}.{name}.{o}" for o in cls.options), *cls.params]
            )
            or "-",
            "reference": cls.reference,
        }
        for axis in AXES
        for name, cls in sorted(REGISTRY[axis].items())
    ]


__all__ = [
    "AXES",
    "DEFAULT_T",
    "REGISTRY",
    "Attending",
    "Encoding",
    "NotApplicable",
    "PositionBias",
    "Span",
    "SwitchedOff",
    "carries_position",
    "Variant",
    "create",
    "register",
    "sources",
    "table",
    "variant",
]
