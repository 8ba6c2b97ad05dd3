"""The package's layers hold by its imports (read from the source, nothing imported): the world
imports neither torch nor the params module, nothing but `__main__` imports the CLI, and no
modules import each other in a cycle."""

import ast
from pathlib import Path

from conftest import ROOT

PACKAGE = ROOT / "src" / "dtpe"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports(name: str) -> set[str]:
    """Every module `name` imports, absolute names (`from a import b` counts a.b if a module)."""
    found = set()
    for node in ast.walk(ast.parse(MODULES[name].read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{a.name}" for a in node.names}
    return found


def package_imports(name: str) -> set[str]:
    return {m for m in imports(name) if m in MODULES and m != name}


def test_the_world_imports_neither_torch_nor_params():
    world = [m for m in MODULES if m.startswith("dtpe.world")]
    assert len(world) >= 4
    for m in world:
        bad = {i for i in imports(m) if i.split(".")[0] == "torch" or i == "dtpe.params"}
        assert not bad, f"{m} imports {bad}"


def test_nothing_imports_the_cli():
    for m in MODULES:
        if m != "dtpe.__main__":
            assert "dtpe.cli" not in package_imports(m), f"{m} imports the CLI"


def test_no_import_cycle():
    """Depth-first search for a back edge; a package's edges to its own __init__ (re-exports)
    do not count."""
    graph = {
        m: {d for d in package_imports(m) if not (d.startswith(m + ".") or m.startswith(d + "."))}
        for m in MODULES
    }
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for d in graph[m]:
            assert state.get(d) != "open", "import cycle: " + " -> ".join(path + [d])
            if d not in state:
                visit(d)
        state[m] = "done"
        path.pop()

    for m in sorted(graph):
        if m not in state:
            visit(m)
