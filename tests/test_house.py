"""docs/design.md states the house as it is: its block of layers, worlds and encodings is what
scripts/house.py reads from the source and the registries today."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def house():
    spec = importlib.util.spec_from_file_location("house", ROOT / "scripts/house.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_design_states_the_layers_worlds_and_encodings_as_they_are():
    script, doc = house(), (ROOT / "docs/design.md").read_text()
    assert script.written(doc) == doc, "docs/design.md's house is stale: run scripts/house.py"


def test_every_world_and_encoding_is_listed_and_every_module_has_a_layer():
    script = house()
    text = script.block()
    from dtpe.model import catalog
    from dtpe.world import catalog as worlds

    assert all(f"| `{w}` |" in text for w in worlds.names())
    assert all(f"`{e}`" in text for axis in catalog.encodings().values() for e in axis)
    unplaced = [p for p in script.PACKAGE.rglob("*.py") if script.layer_of(p) is None]
    assert unplaced == []
