"""The package code each pipeline step runs, read from the source without importing it: the
modules `dtpe <step>`'s cli function imports, and theirs, transitively (`imports`), as the files
Snakemake and DVC list as the step's dependencies (`code`, `files`), so that editing one reruns
the steps that use it."""

from __future__ import annotations

import ast
from pathlib import Path

from dtpe import pipeline
from dtpe.pipeline import PACKAGE, ROOT
from dtpe.world import catalog as worlds


def module_file(name: str) -> Path:
    path = PACKAGE.parent / name.replace(".", "/")
    return path / "__init__.py" if path.is_dir() else path.with_suffix(".py")


def _imported(module: str, name: str) -> str:
    """The module `from <module> import <name>` loads: the submodule if `name` is one."""
    sub = f"{module}.{name}"
    return sub if module_file(sub).exists() else module


LOADING = ("dtpe.params", "dtpe.settings")
"""modules every step runs whose own imports (validation's, the types' model and world) count
for `check` alone"""


def imports(subcommand: str) -> set[str]:
    """The dtpe modules `dtpe <subcommand>` imports, read from the source (nothing imported):
    those its cli function and the cli helpers it calls import, and theirs, transitively. Every
    step loads the params; their validation's own imports count for `check` alone."""
    tree = ast.parse((PACKAGE / "cli.py").read_text())
    cli = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    # every step loads the params: their types (settings) are read by all, their validation
    # and the overlays' merge by `check` alone (their result is the validated file)
    todo, seen, modules = [f"cmd_{subcommand}"], set(), {"dtpe.cli", "dtpe.params", "dtpe.settings"}
    if pipeline.runs_model(subcommand):
        modules.add("dtpe.numerics")  # main pins and checks the kernels of these steps
    while todo:
        func = todo.pop()
        seen.add(func)
        for node in ast.walk(cli[func]):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                modules |= {_imported(node.module, a.name) for a in node.names}
            elif isinstance(node, ast.Call) and getattr(node.func, "id", None) in cli:
                todo += [node.func.id] if node.func.id not in seen else []
    found, todo = set(), list(modules)
    while todo:
        name = todo.pop()
        if name in found:
            continue
        found.add(name)
        if name == "dtpe.cli" or (name in LOADING and subcommand != "check"):
            continue
        for node in ast.walk(ast.parse(module_file(name).read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("dtpe"):
                todo += [_imported(node.module, a.name) for a in node.names]
            elif isinstance(node, ast.Import):
                todo += [a.name for a in node.names if a.name.startswith("dtpe")]
    return {m for m in found if module_file(m).exists()}


# Packages whose modules are found at run time (pkgutil), so that their imports do not show
# them: a step that reaches one depends on all of it. The encodings are a model's own: a model's
# step depends on its variant's files alone (`model.encodings.sources`).
REGISTRIES = ("dtpe.model.state_encoders", "dtpe.model.encodings")
WORLD = "src/dtpe/world/{world}/"
"""the running world's package (params env.world)"""


def code(name: str) -> list[str]:
    """The package files step `name` runs, relative to the repository, from its imports: a
    folder ends in /, a registry the step reaches is its whole folder (a model's step: not the
    encodings, which are its variant's), and a step that reaches the world depends on
    world/catalog.py's `files`: the modules every world shares and the running world's package
    (`WORLD`), never another world's."""
    s = pipeline.step(name)
    files, world = set(), False
    for module in imports(s.subcommand):
        registry = next((r for r in REGISTRIES if module.startswith(f"{r}.") or module == r), "")
        if module.startswith("dtpe.world"):
            world = True
        elif registry == "dtpe.model.encodings" and s.per_model:
            continue  # the variant's files: encodings.sources
        elif registry:
            files.add(f"src/{registry.replace('.', '/')}/")
        else:
            files.add(str(module_file(module).relative_to(ROOT)))
    files |= {f"src/dtpe/{r}" for r in s.reads}
    if world:
        files |= {f"src/{f}" for f in _shared_world_files()} | {WORLD}
    return sorted(files)


def _shared_world_files() -> list[str]:
    own = f"dtpe/world/{worlds.UNNAMED}/"
    return [f for f in worlds.files(worlds.UNNAMED) if not f.startswith(own)]


def files(name: str, world: str) -> list[str]:
    """`code(name)` as files, for the run's world: each folder's *.py (page.html and the
    schema are named as files)."""
    found = []
    for entry in code(name):
        entry = entry.format(world=world)
        if entry.endswith("/"):
            found += sorted(str(p.relative_to(ROOT)) for p in (ROOT / entry).glob("*.py"))
        else:
            found.append(entry)
    return found
