"""Worlds as a registry (world/catalog.py, world/base.py): found by discovery, called through one
interface that every world passes the same checks of, their knobs their own, their data naming
them, and no module outside world/ naming one."""

import ast
import json
import shutil

import numpy as np
import pytest
import yaml
from conftest import ROOT, tiny_raw

from dtpe import cli, params
from dtpe.steps import dataset
from dtpe.world import catalog
from dtpe.world.base import World
from dtpe.world.lockstep import Ends
from dtpe.world.search import UNREACHABLE

SRC = ROOT / "src" / "dtpe"


def test_worlds_are_found_by_their_folders():
    assert catalog.names() == tuple(sorted(p.parent.name for p in SRC.glob("world/*/__init__.py")))
    for name in catalog.names():
        world = catalog.get(name)
        assert isinstance(world, World) and world.name == name
        assert catalog.options(name) == world.options  # read from source as declared
    with pytest.raises(
        ValueError, match=f"world '{catalog.RESERVED}' is not one of {', '.join(catalog.names())}"
    ):
        catalog.get(catalog.RESERVED)


def test_no_package_may_take_the_reserved_name(tmp_path, monkeypatch):
    """The name tests give a world that is not there stays one: a package of that name is
    refused, and every other is found."""
    for name in (catalog.RESERVED, "corridor"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    monkeypatch.setattr(catalog, "_HERE", tmp_path)
    catalog.names.cache_clear()
    try:
        with pytest.raises(ValueError, match=f"world/{catalog.RESERVED}/: .* is reserved"):
            catalog.names()
        (tmp_path / catalog.RESERVED / "__init__.py").unlink()
        (tmp_path / catalog.RESERVED).rmdir()
        assert catalog.names() == ("corridor",)
    finally:
        catalog.names.cache_clear()


def test_no_module_outside_world_names_a_world():
    """Only world/ knows which worlds there are: elsewhere no string is a world's name and no
    import reaches into a world's package."""
    names = set(catalog.names())
    for path in sorted(SRC.rglob("*.py")):
        if path.is_relative_to(SRC / "world"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                assert node.value not in names, f"{path.relative_to(SRC)} names {node.value!r}"
            if isinstance(node, ast.ImportFrom) and node.module:
                parts = node.module.split(".")
                assert not (parts[:2] == ["dtpe", "world"] and set(parts[2:3]) & names), (
                    f"{path.relative_to(SRC)} imports {node.module}"
                )
    for path in [*(ROOT / "workflow").rglob("*.smk"), ROOT / "Snakefile"]:
        for name in names:
            assert f'"{name}"' not in path.read_text(), f"{path.name} names {name}"


def test_a_worlds_code_is_its_package_and_the_shared_modules():
    for name in catalog.names():
        files = catalog.files(name)
        assert f"dtpe/world/{name}/__init__.py" in files and "dtpe/world/base.py" in files
        for other in set(catalog.names()) - {name}:
            assert not [f for f in files if f.startswith(f"dtpe/world/{other}/")], (name, other)


@pytest.fixture(params=catalog.names())
def world(request):
    return catalog.get(request.param)


def env_of(world):
    """The env params of a tiny run in `world` at its smallest sizes: params.yaml's knobs of it,
    or where a world's knobs are valued in its own overlay only, the smallest each allows (the
    first a knob of named values names)."""
    raw = tiny_raw()
    raw["env"]["world"] = world.name
    smallest = {knob: allowed[0] for knob, allowed in world.options.items()}
    raw["worlds"][world.name] = {**smallest, **(raw["worlds"].get(world.name) or {})}
    sizes = [world.min_size, world.min_size + 2]  # sizes every world draws
    raw["data"].update(train_size=sizes[0], suite_sizes=sizes)
    raw["attention"]["grid_size"] = sizes[1]
    return params.check(raw).env


def test_every_world_draws_distinct_new_layouts_of_its_size(world):
    """As many as the world holds at a size allow (`count`): a third of them (two at least), at
    most 12, then half as many new ones."""
    options = env_of(world).options
    for size in (world.min_size, world.min_size + 2):
        held = world.count(size, options)
        first = 12 if held is None else min(12, max(2, held // 3))
        lay = world.draw(size, first, np.random.default_rng(0), options)
        codes = world.fingerprints(lay)
        assert len(lay) == first and lay.size == size and len(set(codes)) == first
        again = world.draw(size, first // 2, np.random.default_rng(0), options, set(codes))
        assert len(again) == first // 2 and not set(codes) & set(world.fingerprints(again))
        back = world.layouts({k: np.asarray(v) for k, v in world.arrays(lay).items()})
        assert world.fingerprints(back) == codes and np.array_equal(back.ids, lay.ids)
    with pytest.raises(ValueError, match="below"):
        world.check_size(world.min_size - 1)


def test_every_worlds_smallest_size_holds_six_layouts(world):
    """A tiny run at the smallest size draws its validation and suite layouts apart (6 each in
    tests/conftest.py's tiny_raw): a world whose smallest size holds fewer sets a larger
    MIN_SIZE (world/minigrid_world.py, the guide)."""
    held = world.count(world.min_size, env_of(world).options)
    assert held is None or held >= 6, f"{world.name} holds {held} layouts at {world.min_size}"


def test_every_world_holds_as_many_layouts_as_it_counts(world):
    """Where a world counts its layouts at its smallest size, drawing one more than that many
    finds exactly that many (as a small suite) and refuses to make a whole split of them."""
    options = env_of(world).options
    held = world.count(world.min_size, options)
    if held is None:
        assert world.count(world.min_size + 2, options) is None
        return
    assert 0 < held <= world.count(world.min_size + 2, options)
    rng = np.random.default_rng(3)
    lay = world.draw(world.min_size, held + 1, rng, options, whole=False)
    assert len(set(world.fingerprints(lay))) == held
    with pytest.raises(ValueError):
        world.draw(world.min_size, held + 1, np.random.default_rng(3), options)


def test_every_worlds_expert_reaches_the_goal_in_its_optimal_steps(world):
    """The planner, the stepper and the episodes agree: optimal episodes end on the goal in
    exactly the planner's steps; every state on the way is one step closer."""
    env = env_of(world)
    lay = world.draw(world.min_size + 2, 8, np.random.default_rng(1), env.options)
    steps = world.optimal_steps(lay)
    assert steps.dtype == np.int64 and (steps > 0).all() and (steps < UNREACHABLE).all()
    eps = world.episodes(lay, np.ones(8, bool), 0.0, env, np.random.default_rng(2))
    assert eps["success"].all() and np.array_equal(np.diff(eps["offsets"]), steps)
    assert np.array_equal(eps["optimal_steps"], steps)
    game = world.replay_env(lay, env)
    first = game.reset()
    assert np.array_equal(first, eps["states"][eps["offsets"][:-1]])
    ctg, which = world.planner(lay), np.arange(len(lay))
    for _ in range(steps.max()):
        before, active = ctg.steps(game.state, which), ~game.done
        game.step(ctg.optimal_action(game.state, which))
        assert (ctg.steps(game.state, which)[active] == before[active] - 1).all()
    assert game.success.all() and np.array_equal(game.t, steps)
    cells, flag = world.agent(game.state)
    assert cells.shape == (8, 2) and flag.shape == (8,)
    # at the end every agent stands on the goal; at the start, on the floor
    assert {world.vocabulary.codes[c] for c in world.ground(lay, game.state)} == {"goal"}
    start = world.initial_state(lay)
    assert {world.vocabulary.codes[c] for c in world.ground(lay, start)} == {"empty"}
    heading = world.heading(start)
    assert heading is None or set(heading) <= {0, 1, 2, 3}


def test_every_world_declares_what_the_steps_and_pictures_read(world):
    assert world.cap(world.min_size, env_of(world).options) > 0
    assert world.colours.shape == (world.vocabulary.n_codes, 3) and world.colours.dtype == np.uint8
    assert set(world.legend) <= set(range(world.vocabulary.n_codes))
    assert world.layout_arrays[:2] == ("grid", "start") and world.words.layouts
    assert (
        isinstance(world.ends, Ends)
        and world.ends
        is world.replay_env(
            world.draw(world.min_size, 1, np.random.default_rng(0), env_of(world).options),
            env_of(world),
        ).ends
    )


def knob_error(raw) -> str:
    with pytest.raises(params.ParamsError) as e:
        params.check(raw)
    return str(e.value)


def test_a_worlds_knobs_are_its_own():
    raw = tiny_raw()
    raw["worlds"]["doorkey"] = {"wall_density": 0.1}
    assert (
        "worlds.doorkey.wall_density: a knob of maze (worlds.maze.wall_density), not of "
        "doorkey" in knob_error(raw)
    )
    raw = tiny_raw()
    raw["worlds"]["maze"]["lava"] = 1
    assert (
        "worlds.maze.lava: maze has no such knob; its knobs: ['cap_factor', 'wall_density']"
        in knob_error(raw)
    )
    raw = tiny_raw()
    raw["worlds"]["maze"]["wall_density"] = 0.5
    assert "worlds.maze.wall_density: 0.5 is not a number >= 0.0 and <= 0.4" in knob_error(raw)
    raw = tiny_raw()
    del raw["worlds"]["maze"]["cap_factor"]
    assert "worlds.maze.cap_factor: missing (the world 'maze' reads it)" in knob_error(raw)
    raw = tiny_raw()
    raw["env"]["cap_factor"] = 5
    assert "env.cap_factor is now worlds.maze.cap_factor" in knob_error(raw)
    raw = tiny_raw()
    raw["env"]["world"] = "doorkey"  # the maze's knobs stay in the file, read by the maze only
    assert params.check(raw).env.options == {}
    assert params.check(tiny_raw()).env.options == {"wall_density": 0.1, "cap_factor": 5}


def test_data_of_one_world_is_refused_with_params_of_another(tiny_data, tiny_params, tmp_path):
    """The data folder names its world; read with another world's params, the loader and every
    step refuse it, naming both, and write nothing."""
    assert json.loads((tiny_data / "summary.json").read_text())["world"] == "maze"
    doorkey = tiny_raw()
    doorkey["env"]["world"] = "doorkey"
    env = params.check(doorkey).env
    message = "holds maze layouts .* but the params' env.world is doorkey"
    with pytest.raises(dataset.DataError, match=message):
        dataset.load_suite(tiny_data, 8, env)
    with pytest.raises(dataset.DataError, match=message):
        dataset.load_split_layouts(tiny_data, "val", env)
    path = tmp_path / "params.yaml"
    path.write_text(json.dumps(doorkey))
    out = tmp_path / "models" / "rope_s1"
    argv = ["train", "--params", str(path), "--variant", "rope", "--seed", "1"]
    argv += ["--data", str(tiny_data), "--out", str(out), "--metrics", str(tmp_path / "m")]
    assert cli.main(argv) != 0 and not out.exists()
    unnamed = tmp_path / "unnamed"
    shutil.copytree(tiny_data, unnamed)
    summary = json.loads((unnamed / "summary.json").read_text())
    del summary["world"]
    (unnamed / "summary.json").write_text(json.dumps(summary))
    with pytest.raises(dataset.DataError, match="holds unnamed layouts"):
        dataset.load_suite(unnamed, 8, tiny_params.env)


def test_an_overlay_may_value_its_worlds_knobs_and_nothing_new_else(tmp_path):
    """A world's knobs may first appear in the overlay of a run in that world (its package
    declares them); any other key its base lacks is still a typo, and so is a world's name."""
    (tmp_path / "base.yaml").write_text(yaml.safe_dump(tiny_raw()))
    overlay = {"base": "base.yaml", "worlds": {"doorkey": {}}}
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(overlay))
    assert params.load(tmp_path / "run.yaml").worlds["doorkey"] == {}
    for wrong, message in (
        ({"worlds": {"doorky": {}}}, "worlds.doorky: no world 'doorky'"),
        ({"data": {"episodez": 3}}, "data.episodez: not in its base"),
    ):
        (tmp_path / "run.yaml").write_text(yaml.safe_dump({"base": "base.yaml", **wrong}))
        with pytest.raises(params.ParamsError, match=message):
            params.load(tmp_path / "run.yaml")


def test_a_minigrid_package_missing_a_member_is_refused_at_load_naming_it(tmp_path):
    """The rules' members, the class's and the MiniGrid modules' functions (read from their
    source, never imported at load) are checked when the class is made."""
    import types

    from dtpe.world.crossing import Crossing, rules
    from dtpe.world.minigrid_world import MiniGridWorld

    (tmp_path / "rules.py").write_text("")
    (tmp_path / "layouts.py").write_text("def from_seeds(size, seeds):\n    pass\n")
    (tmp_path / "minigrid_env.py").write_text("def minigrid_play(layouts):\n    pass\n")
    lacking = types.ModuleType("rules")
    lacking.__dict__.update({k: getattr(rules, k) for k in vars(rules) if k != "ENDS"})
    lacking.__file__ = str(tmp_path / "rules.py")
    declared = {k: v for k, v in vars(Crossing).items() if not k.startswith("__")}
    with pytest.raises(TypeError, match=r"missing rules\.ENDS, minigrid_env\.minigrid_batch"):
        type("Lacking", (MiniGridWorld,), dict(declared), rules=lacking)
    without = {k: v for k, v in declared.items() if k != "minigrid"}
    with pytest.raises(TypeError, match=r"missing minigrid \("):
        type("Nameless", (MiniGridWorld,), without, rules=rules)
