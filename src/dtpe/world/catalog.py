"""The worlds, found by discovery: each package of world/ is one, named by its folder (params'
`env.world`, a model's config) and holding its `WORLD` (world/base.py's interface). A world is
imported only when asked for, so a run pays for and depends on its own world alone; validating
params reads every world's knobs from its source, importing none."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from functools import cache
from pathlib import Path

from dtpe.world.base import World
from dtpe.world.vocabulary import Vocabulary

_HERE = Path(__file__).parent


RESERVED = "nowhere"
"""the one name no world's package may take: what tests ask for to name a world that is not
there, so that no new world turns such a test into a test of itself"""


@cache
def names() -> tuple[str, ...]:
    """Every world's name, sorted; a ValueError where a package takes the RESERVED name."""
    found = tuple(sorted(m.name for m in pkgutil.iter_modules([str(_HERE)]) if m.ispkg))
    if RESERVED in found:
        raise ValueError(
            f"world/{RESERVED}/: {RESERVED!r} is reserved for a world that is not there"
        )
    return found


UNNAMED = "maze"
"""the world of files written before worlds were recorded (the maze's checkpoints name none, so
that their bytes stay)"""


@cache
def options(name: str) -> dict[str, tuple]:
    """World `name`'s knobs as its class declares them (World.options, a literal in its
    package's __init__.py): knob -> (smallest, largest or None), or the strings it may be."""
    source = _HERE / name / "__init__.py"
    for node in ast.walk(ast.parse(source.read_text())):
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == [
            "options"
        ]:
            found = ast.literal_eval(node.value)
            if not isinstance(found, dict) or not all(
                isinstance(v, tuple)
                and (is_choice(v) or (len(v) == 2 and not any(isinstance(x, str) for x in v)))
                for v in found.values()
            ):
                raise ValueError(
                    f"{source}: options must be a literal dict of knob -> (least, most) or a "
                    "tuple of the strings it may be"
                )
            return found
    raise ValueError(f"{source}: declares no `options` (an empty dict if the world has no knobs)")


def is_choice(allowed: tuple) -> bool:
    """Whether a knob's declaration names the strings it may be (else its least and most)."""
    return bool(allowed) and all(isinstance(v, str) for v in allowed)


def get(name: str) -> World:
    """The world called `name`; a ValueError naming the worlds there are if none is."""
    if name not in names():
        raise ValueError(f"world {name!r} is not one of {', '.join(names())}")
    world = importlib.import_module(f"dtpe.world.{name}").WORLD
    if world.name != name:
        raise ValueError(f"world/{name}/ declares a world named {world.name!r}")
    return world


def vocabulary(name: str) -> Vocabulary:
    """The cell codes and actions of world `name`."""
    return get(name).vocabulary


def files(name: str) -> list[str]:
    """The package files a step of world `name` runs, relative to src/: this module, the modules
    every world shares and the world's own package (never another world's), so that editing one
    world reruns no step of another."""
    shared = sorted(p for p in _HERE.glob("*.py"))
    own = sorted((_HERE / name).glob("*.py"))
    return [str(p.relative_to(_HERE.parents[1])) for p in shared + own]
