"""The house as it is, for docs/design.md: the package's layers (their modules, lines to the
hundred and which layers they import, read from the source), the registered worlds and the
registered encodings. `python scripts/house.py` rewrites the block between its markers;
tests/test_house.py fails while the committed block differs."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from dtpe.model import catalog as encodings
from dtpe.world import catalog as worlds
from dtpe.world.minigrid_world import MiniGridWorld

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src/dtpe"
DOC = ROOT / "docs/design.md"
BEGIN = "<!-- house: written by scripts/house.py, do not edit -->"
END = "<!-- /house -->"
LAYERS = {
    "world, utilities": (
        "world/",
        "names.py",
        "numerics.py",
        "atomic.py",
        "submitted.py",
        "__init__.py",
    ),
    "model": ("model/",),
    "params": ("params.py", "settings.py", "overlays.py", "preregistration.py", "cluster.py"),
    "steps": ("steps/",),
    "analysis, explorer": ("analysis/", "explorer/"),
    "workflow": ("pipeline.py", "step_code.py", "dvc_yaml.py", "submission.py"),
    "cli": ("cli.py", "__main__.py"),
}
"""bottom to top: a layer imports only those below it (tests/test_layers.py)"""


def layer_of(path: Path) -> str | None:
    rel = path.relative_to(PACKAGE).as_posix()
    return next((n for n, parts in LAYERS.items() if any(rel.startswith(p) for p in parts)), None)


def module_path(name: str) -> Path | None:
    base = PACKAGE.parent / name.replace(".", "/")
    for path in (base.with_suffix(".py"), base / "__init__.py"):
        if path.is_file():
            return path
    return None


def imported_layers(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names = []
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names if a.name.startswith("dtpe")]
        found |= {layer_of(p) for n in names if n != "dtpe" and (p := module_path(n))}
    return found - {None}


def layers_table() -> list[str]:
    order = list(LAYERS)
    rows = ["| layer | modules | lines | imports |", "|:--|--:|--:|:--|"]
    for name in order:
        files = [p for p in sorted(PACKAGE.rglob("*.py")) if layer_of(p) == name]
        lines = sum(len(p.read_text().splitlines()) for p in files)
        below = set().union(*(imported_layers(p) for p in files)) - {name}
        shown = ", ".join(n for n in order if n in below) or "nothing of the package"
        rows.append(f"| {name} | {len(files)} | ~{round(lines, -2):,} | {shown} |")
    return rows


def worlds_table() -> list[str]:
    rows = ["| world | played in | ends in failure |", "|:--|:--|:--|"]
    for name in worlds.names():
        world = worlds.get(name)
        played = "MiniGrid" if isinstance(world, MiniGridWorld) else "its own stepper"
        rows.append(f"| `{name}` | {played} | {world.ends.failure_words or 'never'} |")
    return rows


def block() -> str:
    registered = encodings.encodings()
    lines = [
        BEGIN,
        "",
        *layers_table(),
        "",
        *worlds_table(),
        "",
        f"Encodings of k ({len(registered['k'])}): "
        + ", ".join(f"`{e}`" for e in sorted(registered["k"]))
        + f". Of t ({len(registered['t'])}): "
        + ", ".join(f"`{e}`" for e in sorted(registered["t"]))
        + ". State encoders: "
        + ", ".join(f"`{e}`" for e in sorted(encodings.state_encoders()))
        + ".",
        "",
        END,
    ]
    return "\n".join(lines)


def written(text: str) -> str:
    """`text` with its block replaced by today's."""
    head, rest = text.split(BEGIN, 1)
    return head + block() + rest.split(END, 1)[1]


if __name__ == "__main__":
    DOC.write_text(written(DOC.read_text()))
    sys.stdout.write(block() + "\n")
