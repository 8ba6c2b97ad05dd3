"""The Gymnasium env as a user meets it: made by its module:id name from a fresh interpreter,
its defaults those of params.yaml, its two render modes drawing the state it is in, and
Gymnasium's checker passing with each render mode."""

import inspect
import subprocess
import sys
import warnings

import gymnasium as gym
import numpy as np
import pytest
import yaml
from conftest import ROOT
from gymnasium.utils.env_checker import check_env
from safetensors.numpy import save_file

from dtpe.world import pictures
from dtpe.world.maze import WORLD
from dtpe.world.maze import env as env_mod
from dtpe.world.maze import layouts as layout_family
from dtpe.world.maze.picture import COLOURS
from dtpe.world.maze.rules import AGENT, GOAL, KEY, render


def one_layout(size=7, seed=0):
    return layout_family.generate(size, 1, np.random.default_rng(seed), 0.1)


def test_defaults_are_the_params_files():
    env_params = yaml.safe_load((ROOT / "params.yaml").read_text())["env"]
    assert env_params.pop("world") == "maze"  # the world this env is
    defaults = {
        name: p.default
        for name, p in inspect.signature(env_mod.KeyDoorMazeEnv).parameters.items()
        if name in env_params
    }
    assert defaults == env_params


def test_module_id_form_works_from_a_fresh_interpreter():
    code = (
        "import gymnasium as gym; e = gym.make('dtpe.world.maze.env:KeyDoorMaze-v0', size=12); "
        "print(e.reset(seed=0)[0].shape)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "(12, 12)"


def test_rgb_array_draws_the_observation():
    env = gym.make("KeyDoorMaze-v0", size=7, layout=one_layout(), render_mode="rgb_array")
    obs, _ = env.reset()
    image = env.render()
    px = pictures.CELL_PIXELS
    assert image.shape == (7 * px, 7 * px, 3) and image.dtype == np.uint8
    for code in (AGENT, GOAL, KEY):
        r, c = np.argwhere(obs == code)[0]
        cell = image[r * px : (r + 1) * px, c * px : (c + 1) * px]
        assert (cell == COLOURS[code]).all(), code
    for action in range(4):  # some move leaves the start cell: the picture follows it
        env.reset()
        if not np.array_equal(env.step(action)[0], obs):
            assert not np.array_equal(env.render(), image), f"action {action} moved, image did not"
            return
    raise AssertionError("no action moved the agent")


def test_ansi_is_one_character_per_cell():
    env = gym.make("KeyDoorMaze-v0", size=7, layout=one_layout(), render_mode="ansi")
    obs, _ = env.reset()
    lines = env.render().splitlines()
    assert [len(line) for line in lines] == [7] * 7
    symbol = {v: k for k, v in env_mod.SYMBOLS.items()}
    np.testing.assert_array_equal([[symbol[ch] for ch in line] for line in lines], obs)


def test_no_render_mode_renders_nothing_and_a_bad_one_is_named():
    env = gym.make("KeyDoorMaze-v0", size=7)
    env.reset(seed=0)
    assert env.render() is None
    with pytest.raises(ValueError, match="render_mode 'human' is not one of"):
        env_mod.KeyDoorMazeEnv(size=7, render_mode="human")


def test_figure_one_draws_the_observation_in_the_pictures_colours(tmp_path):
    """Figure 1's cells are the rgb picture's colours of the layout as the agent first sees it."""
    from dtpe.analysis.figures import layout_picture as figure_one
    from dtpe.params import load

    params = load(ROOT / "params.yaml")
    lay = one_layout(6)
    (tmp_path / "suites").mkdir()
    steps = np.array([1], dtype=np.int64)  # drawn in the title only
    save_file(
        {**WORLD.arrays(lay), "optimal_steps": steps}, str(tmp_path / "suites" / "N6.safetensors")
    )
    (tmp_path / "summary.json").write_text('{"world": "maze"}')
    image = figure_one(tmp_path, 6, params.env).axes[0].images[0]
    drawn = image.cmap(image.norm(image.get_array()))[..., :3]
    picture = pictures.rgb(render(lay.grid, lay.start, np.zeros(1, bool))[0], COLOURS)
    cells = picture[:: pictures.CELL_PIXELS, :: pictures.CELL_PIXELS] / 255
    np.testing.assert_allclose(drawn, cells, atol=1 / 255)


@pytest.mark.parametrize("mode", ["rgb_array", "ansi"])
def test_checker_passes_with_each_render_mode(mode):
    env = gym.make("KeyDoorMaze-v0", size=6, layout=one_layout(6), render_mode=mode)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_env(env.unwrapped)
    assert not caught, [str(w.message) for w in caught]
