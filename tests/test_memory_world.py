"""The Memory world held to MiniGrid itself (minigrid 3.2.0, `MemoryEnv(size, random_length=True)`):
what the model is given is MiniGrid's `obs["image"]` byte for byte along walks, in the data's
stepper and in the evaluation's envs; the rules end an episode where MiniGrid does (either
object, the step limit); the expert acts only on a cue it has seen; bad sizes and another world's
data are refused."""

import json

import numpy as np
import pytest
from conftest import play_alongside, tiny_raw

from dtpe import params
from dtpe.steps import dataset
from dtpe.world import catalog
from dtpe.world.memory import layouts as memory_layouts
from dtpe.world.memory.minigrid_env import image_codes, image_of, minigrid_batch
from dtpe.world.memory.planner import cost_to_go
from dtpe.world.memory.rules import (
    BALL,
    ENDS,
    KEY,
    MINIGRID_ACTIONS,
    Layouts,
    check_size,
    initial_state,
    render,
    transition,
    view,
)
from dtpe.world.memory.stepper import BatchedMemory, max_steps

WORLD = catalog.get("memory")


def walk(lay, rng, expert_share: float):
    """Actions of one layout's walk: the expert's of `lay` with `expert_share` chance, else
    uniform."""
    ctg, which = cost_to_go(lay), np.zeros(1, dtype=np.int64)

    def act(state):
        best = ctg.optimal_action(state, which)
        return best if rng.random() < expert_share else rng.integers(0, 3, 1)

    return act


@pytest.mark.parametrize("size", [9, 13, 21, 33])
def test_the_view_is_minigrids_image_byte_for_byte_and_the_endings_its_own(size):
    """Along walks that wander and that end at either object: the world's view, written back in
    MiniGrid's (object, colour, state), is `obs["image"]` byte for byte; MiniGrid terminates
    exactly where the rules reach the goal or the other object, with its reward on the goal."""
    rng = np.random.default_rng(size)
    ends = {"goal": 0, "other": 0}
    for seed in range(12):
        lay = memory_layouts.from_seeds(size, [seed])
        env = memory_layouts.make_env(size)
        obs, _ = env.reset(seed=seed)
        # a third of the walks head for the wrong object: the expert of the cue swapped
        planned = swapped_cue(lay) if seed % 3 == 0 else lay
        state, act = initial_state(lay), walk(planned, rng, 0.8 if seed % 2 else 0.3)
        for t in range(300):
            mine = view(lay, state)[0]
            assert image_of(mine).tobytes() == obs["image"].tobytes(), (seed, t)
            assert np.array_equal(image_codes(obs["image"]), mine)
            action = act(state)
            obs, reward, terminated, _, _ = env.step(MINIGRID_ACTIONS[action[0]])
            state = transition(lay, state, action)
            at_goal, wrong = ENDS.at(lay, state.pos)
            assert terminated == (at_goal[0] or wrong[0]), (seed, t)
            assert (reward > 0) == at_goal[0]
            if terminated:
                ends["goal" if at_goal[0] else "other"] += 1
                break
    assert ends["goal"] and ends["other"], ends


def test_the_evaluation_is_minigrid_and_agrees_with_the_stepper():
    """The same actions in MiniGrid's envs and in the world's stepper: the same views,
    rewards, endings and successes (a wrong object ends an episode, not as a success)."""
    lay = memory_layouts.from_seeds(11, range(16))
    ours = BatchedMemory(lay, max_steps(11), -0.01, 1.0)
    theirs = minigrid_batch(lay, -0.01, 1.0)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    which = np.arange(len(lay))
    # the odd layouts' actions head for the wrong object: the expert of the cue swapped
    ctg, wrong = cost_to_go(lay), cost_to_go(swapped_cue(lay))
    play_alongside(
        ours,
        theirs,
        lambda state: np.where(
            which % 2 == 0, ctg.optimal_action(state, which), wrong.optimal_action(state, which)
        ),
    )
    np.testing.assert_array_equal(ours.success, theirs.success)
    np.testing.assert_array_equal(ours.t, theirs.t)
    assert ours.success.any() and not ours.success.all()


def test_the_step_limit_is_minigrids():
    """An agent that only turns is truncated at MiniGrid's 5 N^2 steps, in both."""
    lay = memory_layouts.from_seeds(9, [3])
    ours = BatchedMemory(lay, max_steps(9), -0.01, 1.0)
    theirs = minigrid_batch(lay, -0.01, 1.0)
    ours.reset(), theirs.reset()
    for t in range(max_steps(9)):
        a, b = ours.step(np.zeros(1, np.int64)), theirs.step(np.zeros(1, np.int64))
        assert bool(a[3][0]) == bool(b[3][0]) == (t == max_steps(9) - 1)
    assert ours.done.all() and theirs.done.all() and not ours.success.any()
    assert max_steps(9) == memory_layouts.make_env(9).max_steps == 405


def test_a_layouts_seed_draws_it_in_the_evaluation():
    lay = memory_layouts.from_seeds(11, [3, 4])
    moved = Layouts(lay.grid, lay.start, np.array([4, 3]))
    with pytest.raises(ValueError, match=r"draws other layouts than these for seeds \[4, 3\]"):
        minigrid_batch(moved, -0.01, 1.0)


def test_a_layout_beyond_its_first_view_is_checked_in_the_evaluation():
    """The same first view, a wall added out of it: the seed draws another layout."""
    lay = memory_layouts.from_seeds(15, [3, 4])
    grid = lay.grid.copy()
    grid[0, 1, 5] = grid[0, 0, 5]  # a wall in the empty room above the hallway, out of view
    other = Layouts(grid, lay.start, lay.seeds)
    assert (grid != lay.grid).any()
    np.testing.assert_array_equal(view(other, initial_state(other)), view(lay, initial_state(lay)))
    with pytest.raises(ValueError, match=r"other grids or starts than these for seeds \[3\]"):
        minigrid_batch(other, -0.01, 1.0)


def swapped_cue(lay: Layouts) -> Layouts:
    """The same layouts with the cue a ball where it was a key and back: the other object
    matches, so the goal and the other end cell trade places."""
    grid = lay.grid.copy()
    b = np.arange(len(lay))
    cue = grid[b, lay.cue[:, 0], lay.cue[:, 1]]
    grid[b, lay.cue[:, 0], lay.cue[:, 1]] = np.where(cue == KEY, BALL, KEY)
    grid[b, lay.goal[:, 0], lay.goal[:, 1]] = grid[b, lay.fail[:, 0], lay.fail[:, 1]]
    grid[b, lay.fail[:, 0], lay.fail[:, 1]] = lay.grid[b, lay.goal[:, 0], lay.goal[:, 1]]
    return Layouts(grid, lay.start, lay.seeds)


@pytest.mark.parametrize("size", [9, 17, 33])
def test_the_expert_never_acts_on_a_cue_it_has_not_seen(size):
    """The cue swapped (key <-> ball) in every layout: the expert's episodes, detours included
    and the same generator, take the same actions up to the step at which the cue comes into
    view, and then go their own ways to the matching object."""
    lay = WORLD.draw(size, 40, np.random.default_rng(size), {})
    other = swapped_cue(lay)
    assert WORLD.fingerprints(other) != WORLD.fingerprints(lay)
    env = params.check(memory_raw()).env
    optimal = np.arange(40) % 2 == 0
    for detour in (0.0, 0.3):
        runs = []
        for layouts in (lay, other):
            game = BatchedMemory(layouts, max_steps(size), -0.01, 1.0)
            ctg, which, rng = cost_to_go(layouts), np.arange(40), np.random.default_rng(7)
            actions, seen = [], []
            while not game.done.all():
                seen.append(game.state.seen.copy())
                best = ctg.optimal_action(game.state, which, rng)
                wander = ~optimal & (rng.random(40) < detour)
                action = np.where(wander, rng.integers(0, 3, 40), best)
                actions.append(np.where(game.done, -1, action))
                game.step(action)
            runs.append((np.array(actions), np.array(seen), game.success))
        (a1, s1, won1), (a2, s2, won2) = runs
        steps = min(len(a1), len(a2))
        blind = ~s1[:steps] & ~s2[:steps]  # (T, B): before the cue came into view
        np.testing.assert_array_equal(s1[:steps], s2[:steps])  # views show the cue alike
        np.testing.assert_array_equal(a1[:steps][blind], a2[:steps][blind])
        assert blind.any() and (~blind).any()
        if detour == 0.0:
            assert won1.all() and won2.all()
    eps = WORLD.episodes(lay, optimal, 0.3, env, np.random.default_rng(0))
    assert eps["success"][optimal].all()


def test_expert_episodes_are_its_plans_labelled_and_fit_the_sizes_context():
    """Optimal episodes end at the matching object in the expert's steps; the data's labels are
    the expert's actions; at 17 x 17 the longest is at most 21 steps."""
    lay = WORLD.draw(17, 200, np.random.default_rng(0), {})
    steps = WORLD.optimal_steps(lay)
    eps = WORLD.episodes(
        lay, np.ones(200, bool), 0.0, params.check(memory_raw()).env, np.random.default_rng(1)
    )
    assert eps["success"].all() and np.array_equal(np.diff(eps["offsets"]), steps)
    assert np.array_equal(eps["actions"], eps["expert_actions"]) and steps.max() <= 21
    assert eps["states"].shape[1:] == (7, 7)


@pytest.mark.parametrize("size", [10, 8, 7, 3, 9.0, True, "9", None])
def test_bad_size_is_refused_by_name(size):
    with pytest.raises(ValueError, match="grid size"):
        check_size(size)
    with pytest.raises(ValueError, match="grid size"):
        WORLD.check_size(size)


def test_params_refuse_an_even_size_naming_the_knob_and_minigrids_rule():
    raw = memory_raw()
    raw["data"]["suite_sizes"] = [9, 12]
    with pytest.raises(
        params.ParamsError,
        match=r"data.suite_sizes.1: grid size 12 is even: "
        "MiniGrid's MemoryEnv takes odd sizes only",
    ):
        params.check(raw)
    raw = memory_raw()
    raw["data"]["train_size"] = 7
    with pytest.raises(params.ParamsError, match="data.train_size: grid size 7 is below"):
        params.check(raw)


def memory_raw() -> dict:
    raw = tiny_raw()
    raw["env"]["world"] = "memory"
    raw["worlds"]["memory"] = {}
    raw["data"].update(train_size=11, episodes=40, suite_sizes=[9, 13], suite_layouts=6)
    raw["attention"]["grid_size"] = 13
    raw["model"].update(state_encoder="view", view_radius=3)
    return raw


def test_memory_data_is_views_and_is_refused_with_another_worlds_params(tmp_path):
    """The data's states are 7 x 7 views, its suites disjoint from its training layouts; read
    with the maze's params, every loader refuses it naming both worlds."""
    summary = dataset.build(params.check(memory_raw()), tmp_path)
    assert summary["world"] == "memory"
    arrays = dataset.load(tmp_path / "train.safetensors")
    assert arrays["states"].shape[1:] == (7, 7) and arrays["grid"].shape[1:] == (11, 11)
    assert json.loads((tmp_path / "summary.json").read_text())["suites"]["9"]["layouts"] == 6
    maze = params.check(tiny_raw()).env
    with pytest.raises(dataset.DataError, match="holds memory layouts .* env.world is maze"):
        dataset.load_suite(tmp_path, 9, maze)
    with pytest.raises(dataset.DataError, match="holds memory layouts .* env.world is maze"):
        dataset.load_split_layouts(tmp_path, "val", maze)


def test_more_layouts_than_the_training_size_holds_are_refused_naming_the_knob(tmp_path):
    raw = memory_raw()
    raw["data"].update(layouts=130, episodes=260)
    with pytest.raises(
        ValueError, match="data.layouts asks for 130 layouts of 11x11: Memory 11x11 holds 120 "
    ):
        dataset.build(params.check(raw), tmp_path / "data")
    assert not (tmp_path / "data").exists()


def test_figure_one_draws_the_whole_layout_not_the_view(tmp_path):
    """The model is given a 7 x 7 view, but Figure 1 shows the largest suite's first layout
    whole, the agent at its start."""
    from dtpe.analysis.figures import layout_picture

    memory = params.check(memory_raw())
    dataset.build(memory, tmp_path)
    image = layout_picture(tmp_path, 13, memory.env).axes[0].images[0]
    lay, _ = dataset.load_suite(tmp_path, 13, memory.env)
    assert image.get_array().shape == (13, 13)
    first = lay.subset([0])
    np.testing.assert_array_equal(image.get_array(), render(first, initial_state(first))[0])


def test_a_replay_at_the_other_object_ends_in_failure_and_says_so():
    """The explorer reads the world's failure (World.ends): an episode replayed to the other
    object ended there, not at the step cap, and its animation's title says how."""
    from types import SimpleNamespace

    from dtpe.explorer import animations, traces

    lay = memory_layouts.from_seeds(11, [1])
    wrong, which = cost_to_go(swapped_cue(lay)), np.zeros(1, dtype=np.int64)
    state, actions = initial_state(lay), []
    for _ in range(wrong.steps(state, which)[0]):
        actions.append(int(wrong.optimal_action(state, which)[0]))
        state = transition(lay, state, np.array(actions[-1:]))
    rep = traces.replay(WORLD, lay, np.array(actions), params.check(memory_raw()).env, 1.0)
    assert rep.failure and not rep.success and len(rep.rtg) < max_steps(11)
    ep = SimpleNamespace(row={"success": 0}, replay=rep, loop=None)
    assert animations.title(ep, "rope", "failure", WORLD.ends.failure_words) == (
        "rope\nends beside the other object"
    )
