"""The T-Maze (world/tmaze/): the view shows the cue only where the cue knob puts it; the expert
never turns before it has seen the cue and a swapped cue changes only its turn; either arm ends
the episode, the cap is the size plus the slack; a size holds the layouts its band says, each
one layout at every size; bad knobs, sizes and another world's data are refused; the Gymnasium
env steps as the stepper."""

import gymnasium as gym
import numpy as np
import pytest
from conftest import TMAZE_KNOBS, model_config, play_alongside, tiny_raw, tmaze_raw

from dtpe import params
from dtpe.steps import dataset
from dtpe.world import catalog, search
from dtpe.world.gym_batch import GymBatch
from dtpe.world.search import UNREACHABLE, CostToGo
from dtpe.world.tmaze import env as tmaze_env
from dtpe.world.tmaze import layouts as family
from dtpe.world.tmaze.planner import cost_to_go
from dtpe.world.tmaze.rules import (
    CUE_DOWN,
    CUE_UP,
    DOWN,
    EMPTY,
    ENDS,
    JUNCTION,
    LEFT,
    N_ACTIONS,
    RIGHT,
    UP,
    WALL,
    BatchedTMaze,
    State,
    initial_state,
    make,
    transition,
)

WORLD = catalog.get("tmaze")
CUES = {CUE_UP, CUE_DOWN}


def knobs(cue="start", shortest=0.5, slack=4) -> dict:
    return {**TMAZE_KNOBS, "cue": cue, "shortest": shortest, "slack": slack}


class Env:
    """The `env` params a stepper reads."""

    def __init__(self, options: dict):
        self.options, self.step_reward, self.goal_reward = options, -0.01, 1.0

    def cap(self, size: int) -> int:
        return WORLD.cap(size, self.options)


def refusal(raw) -> str:
    with pytest.raises(params.ParamsError) as e:
        params.check(raw)
    return str(e.value)


def swapped_cue(lay):
    """The same layouts with the cue pointing to the other arm: goal and trap trade places."""
    return make(lay.size, lay.length, lay.cue, 1 - lay.side, lay.once)


@pytest.mark.parametrize("cue", family.CUES)
def test_the_view_shows_the_cue_only_where_the_knob_puts_it(cue):
    """Random walks (pauses, steps back to the start, back over the cue): at `start` the cue is
    in the view at the first step only, at `anywhere` exactly while the agent stands on its
    cell; every other view is the corridor or the junction."""
    lay = WORLD.draw(24, 40, np.random.default_rng(0), knobs(cue, shortest=0.0))
    game = BatchedTMaze(lay, 200, -0.01, 1.0)
    obs, rng, shown = game.reset(), np.random.default_rng(1), 0
    for t in range(200):
        active = ~game.done
        on_cue = (game.state.pos[:, 0] == 1) & (game.state.pos[:, 1] == lay.cue)
        want = np.full(len(lay), t == 0) if cue == "start" else on_cue
        code = obs[:, 0, 0]
        assert obs.shape == (len(lay), 1, 1)
        assert np.array_equal(np.isin(code, list(CUES))[active], want[active]), t
        assert set(code[active & ~want]) <= {EMPTY, JUNCTION}
        cue_code = lay.grid[np.arange(len(lay)), 1, lay.cue]
        assert np.array_equal(code[active & want], cue_code[active & want])
        shown += int((active & want).sum())
        # mostly steps back and pauses, so that agents return to the cue and the start
        obs = game.step(rng.choice(N_ACTIONS, len(lay), p=[0.3, 0.4, 0.15, 0.15]))[0]
    assert shown == 40 if cue == "start" else shown > 80


@pytest.mark.parametrize("cue", family.CUES)
def test_the_expert_never_turns_before_it_has_seen_the_cue(cue):
    """Along the expert's episodes with detours, its turns come only at the junction, after the
    cue has shown; at `anywhere` from every state of the corridor that has not seen the cue its
    way leads to the cue's cell, never into an arm (at the junction, back left)."""
    lay = WORLD.draw(40, 60, np.random.default_rng(2), knobs(cue, shortest=0.0))
    ctg, which, rng = cost_to_go(lay), np.arange(len(lay)), np.random.default_rng(3)
    game, turns = WORLD.replay_env(lay, Env(knobs(cue))), 0
    game.reset()
    while not game.done.all():
        best, active = ctg.optimal_action(game.state, which, rng), ~game.done
        turn = active & np.isin(best, (UP, DOWN))
        assert game.state.seen[turn].all()
        assert (game.state.pos[turn, 1] == lay.length[turn]).all()
        turns += int(turn.sum())
        detour = rng.random(len(lay)) < 0.3
        game.step(np.where(detour, rng.integers(0, N_ACTIONS, len(lay)), best))
    assert turns > len(lay) // 2 and 0 < game.success.mean() < 1
    if cue == "anywhere":
        b, col = np.meshgrid(which, np.arange(lay.size + 1), indexing="ij")
        b, col = b.ravel(), col.ravel()
        corridor = col <= lay.length[b]
        b, col = b[corridor], col[corridor]
        state = State(
            np.stack([np.ones_like(col), col], 1), np.zeros(len(b), bool), np.zeros(len(b), bool)
        )
        for seed in range(4):  # ties drawn: every optimal action of each state
            action = ctg.optimal_action(state, b, np.random.default_rng(seed))
            after = transition(lay, state, action, b)
            assert (after.pos[:, 0] == 1).all()  # up or down in the corridor is a pause
            assert (action[col == lay.length[b]] == LEFT).all()
        assert (ctg.steps(state, b) < UNREACHABLE).all()


@pytest.mark.parametrize("cue", family.CUES)
def test_a_swapped_cue_changes_only_the_turn(cue):
    """The cue swapped in every layout: the expert's episodes, detours included and the same
    generator, see the same views but the cue's code, take the same actions but the expert's
    turn, which goes the other way, and last as long."""
    lay = WORLD.draw(40, 50, np.random.default_rng(5), knobs(cue, shortest=0.0))
    other, env = swapped_cue(lay), Env(knobs(cue))
    optimal = np.arange(50) % 2 == 0
    mine = WORLD.episodes(lay, optimal, 0.3, env, np.random.default_rng(6))
    theirs = WORLD.episodes(other, optimal, 0.3, env, np.random.default_rng(6))
    assert np.array_equal(mine["offsets"], theirs["offsets"])
    flip = np.arange(N_ACTIONS)
    flip[[UP, DOWN]] = [DOWN, UP]
    codes = np.arange(256)
    codes[[CUE_UP, CUE_DOWN]] = [CUE_DOWN, CUE_UP]
    assert np.array_equal(codes[mine["states"]], theirs["states"])
    assert np.array_equal(flip[mine["expert_actions"]], theirs["expert_actions"])
    turned = np.isin(mine["expert_actions"], (UP, DOWN))
    assert turned.sum() >= 50 * 0.8  # detours at the junction may turn first
    # a detour that draws the expert's turn in one draws the same move in the other
    differs = mine["actions"] != theirs["actions"]
    expert = (mine["actions"] == mine["expert_actions"]) & (
        theirs["actions"] == theirs["expert_actions"]
    )
    assert differs.any() and (turned & expert)[differs].all()
    assert np.array_equal(mine["optimal_steps"], theirs["optimal_steps"])


def test_either_arm_ends_the_episode_the_cues_as_a_success_the_other_as_a_failure():
    """Up or down at the junction ends the episode: in the cue's arm a success, its reward the
    goal's, in the other a failure of the world, well before the cap."""
    lay = make(12, [12, 9], [0, 0], [0, 1], True)  # the cue: up in the first, down in the second
    for arm, won in ((UP, [True, False]), (DOWN, [False, True])):
        game = BatchedTMaze(lay, WORLD.cap(12, knobs(slack=4)), -0.01, 1.0)
        game.reset()
        for _ in range(12):
            game.step(np.full(2, RIGHT))
        _, reward, terminated, truncated = game.step(np.full(2, arm))
        # the shorter corridor reached its junction earlier and bumped into the wall beyond it
        assert terminated.all() and not truncated.any() and (game.t == 13).all()
        assert np.array_equal(game.success, won)
        np.testing.assert_allclose(reward, np.where(won, 0.99, -0.01))
        assert game.done.all() and np.array_equal(game.failure, ~np.array(won))


def test_the_cap_is_the_size_plus_the_slack():
    """An agent that never reaches an arm is truncated at size + slack, whatever its corridor."""
    for size, slack in ((10, 1), (16, 7)):
        lay = WORLD.draw(size, 8, np.random.default_rng(size), knobs(shortest=0.0, slack=slack))
        assert len(set(lay.length)) > 1
        cap = WORLD.cap(size, knobs(slack=slack))
        assert cap == size + slack and params.check(tmaze_raw(slack=slack)).env.cap(size) == cap
        game = WORLD.replay_env(lay, Env(knobs(slack=slack)))
        game.reset()
        for t in range(cap):
            _, _, terminated, truncated = game.step(np.full(8, RIGHT))
            assert not terminated.any() and truncated.all() == (t == cap - 1)
        assert game.done.all() and not game.success.any()


@pytest.mark.parametrize("cue", family.CUES)
def test_a_size_holds_its_bands_layouts_each_one_at_every_size(cue):
    """A size's band holds two layouts a length at `start`, 2 (L // 2) at `anywhere`; drawn
    whole they are all distinct, one more is refused naming the band; a corridor drawn at two
    sizes is one layout (one id, one fingerprint), so one size's layouts are left out of
    another's."""
    band = family.Band(16, cue, 0.5)
    lengths = np.arange(8, 17)
    assert band.total == (2 * len(lengths) if cue == "start" else 2 * (lengths // 2).sum())
    every = WORLD.draw(16, band.total, np.random.default_rng(0), knobs(cue))
    assert len(set(WORLD.fingerprints(every))) == len(set(every.ids)) == band.total
    assert (
        set(every.length) == set(lengths) and (every.cue < np.maximum(every.length // 2, 1)).all()
    )
    with pytest.raises(
        ValueError, match=f"size 16 \\(corridors 8..16, cue {cue}\\) holds {band.total}"
    ):
        WORLD.draw(16, band.total + 1, np.random.default_rng(0), knobs(cue))
    wider = WORLD.draw(32, 400, np.random.default_rng(1), knobs(cue, 0.25), whole=False)
    at_16 = wider.subset(np.flatnonzero(wider.length <= 16))
    assert len(at_16) and set(WORLD.fingerprints(at_16)) <= set(WORLD.fingerprints(every))
    assert set(at_16.ids) <= set(every.ids)
    rest = WORLD.draw(
        32,
        400,
        np.random.default_rng(2),
        knobs(cue, 0.25),
        set(WORLD.fingerprints(every)),
        whole=False,
    )
    assert len(rest) == family.Band(32, cue, 0.25).total - band.total
    assert not set(rest.ids) & set(every.ids)
    taken = set(
        WORLD.fingerprints(WORLD.draw(24, 46, np.random.default_rng(3), knobs(shortest=0.0)))
    )
    with pytest.raises(ValueError, match="holds 46 layouts, 46 of them taken already: 0 new"):
        WORLD.draw(24, 3, np.random.default_rng(4), knobs(shortest=0.0), taken, whole=False)
    back = WORLD.layouts({k: np.asarray(v) for k, v in WORLD.arrays(every).items()})
    assert WORLD.fingerprints(back) == WORLD.fingerprints(every)
    assert np.array_equal(back.ids, every.ids) and np.array_equal(back.length, every.length)


@pytest.mark.parametrize("cue", family.CUES)
def test_the_experts_closed_form_is_the_shared_search(cue):
    """Over every state (first, seen, row, col) off the walls of every layout, the expert's steps
    are world/search.py's breadth-first search on the rules' own transition."""
    lay = WORLD.draw(12, 20, np.random.default_rng(6), knobs(cue, shortest=0.0))
    shape = (len(lay), 2, 2, 3, lay.size + 1)
    layout, first, seen, row, col = np.unravel_index(np.arange(np.prod(shape)), shape)
    every = State(np.stack([row, col], 1), seen.astype(bool), first.astype(bool))

    def index(state, which):
        parts = (which, state.first.astype(int), state.seen.astype(int), *state.pos.T)
        return np.ravel_multi_index(parts, shape)

    # the shared search's successors, both arms dead ends; its goal the expert's: the cue's arm
    # with the cue seen
    ends = search.cost_to_go(transition, ENDS, lay, every, layout, index, N_ACTIONS)
    goal = every.seen & (every.pos == lay.goal[layout]).all(1)
    search_ = CostToGo(ends.successors, goal, index)
    # a wall's cell is no state of an episode (the search would walk out of it)
    real = lay.grid[layout, every.pos[:, 0], every.pos[:, 1]] != WALL
    np.testing.assert_array_equal(cost_to_go(lay).steps(every, layout)[real], search_.dist[real])
    start = initial_state(lay)
    np.testing.assert_array_equal(WORLD.optimal_steps(lay), lay.length + 1)
    assert start.seen.all() == (cue == "start")


def test_bad_knobs_and_sizes_are_refused_naming_them():
    assert params.check(tmaze_raw()).env.options == knobs()
    for change, message in (
        ({"cue": "middle"}, "worlds.tmaze.cue: 'middle' is not one of start, anywhere"),
        ({"cue": 1}, "worlds.tmaze.cue: 1 is not one of start, anywhere"),
        ({"shortest": 1.5}, "worlds.tmaze.shortest: 1.5 is not a number >= 0.0 and <= 1.0"),
        ({"slack": 0}, "worlds.tmaze.slack: 0 is not an integer >= 1"),
        ({"slack": 2.5}, "worlds.tmaze.slack: 2.5 is not an integer >= 1"),
    ):
        assert message in refusal(tmaze_raw(**change))
    raw = tmaze_raw()
    del raw["worlds"]["tmaze"]["cue"]
    assert "worlds.tmaze.cue: missing (the world 'tmaze' reads it)" in refusal(raw)
    raw = tmaze_raw()
    raw["data"]["train_size"] = 6
    assert "data.train_size: corridor length 6 is below the T-Maze's minimum of 10" in refusal(raw)
    raw = tmaze_raw()
    raw["data"]["suite_sizes"] = [16, 10**6]
    assert "data.suite_sizes.1: corridor length 1000000 is above the T-Maze's most" in refusal(raw)
    with pytest.raises(ValueError, match="cue 'middle' is not one of start, anywhere"):
        WORLD.draw(16, 2, np.random.default_rng(0), knobs("middle"))
    with pytest.raises(ValueError, match="corridor length 9 is below"):
        gym.make("TMaze-v0", size=9)
    with pytest.raises(ValueError, match="slack must be an integer >= 1, got 0"):
        tmaze_env.TMazeEnv(size=12, slack=0)


def test_a_knob_declared_neither_as_bounds_nor_as_names_is_refused(tmp_path, monkeypatch):
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "__init__.py").write_text('options = {"cue": ("start", 1)}\n')
    monkeypatch.setattr(catalog, "_HERE", tmp_path)
    with pytest.raises(ValueError, match="knob -> \\(least, most\\) or a tuple of the strings"):
        catalog.options("odd")
    assert catalog.is_choice(("start", "anywhere", "end")) and not catalog.is_choice((0, 1))


def test_tmaze_data_is_refused_with_another_worlds_params(tmp_path):
    """A T-Maze data folder read with the maze's params is refused naming both; read with its
    own, its states are the 1 x 1 views and its suites the bands' layouts."""
    data = tmp_path / "data"
    summary = dataset.build(params.check(tmaze_raw()), data)
    assert summary["world"] == "tmaze" and summary["suites"]["16"]["layouts"] == 4
    maze = params.check(tiny_raw()).env
    with pytest.raises(dataset.DataError, match="holds tmaze layouts .* env.world is maze"):
        dataset.load_suite(data, 16, maze)
    with pytest.raises(dataset.DataError, match="holds tmaze layouts .* env.world is maze"):
        dataset.load_split_layouts(data, "val", maze)
    env = params.check(tmaze_raw()).env
    lay, steps = dataset.load_suite(data, 32, env)
    assert lay.size == 32 and (16 <= lay.length).all() and np.array_equal(steps, lay.length + 1)
    assert dataset.load(data / "train.safetensors")["states"].shape[1:] == (1, 1)


def test_the_view_encoder_reads_the_one_cell_view():
    import torch

    from dtpe.model.state_encoders.base import create

    cfg = model_config("rope", state_encoder="view", view_radius=0, world="tmaze")
    views = torch.randint(0, WORLD.vocabulary.n_codes, (2, 5, 1, 1), dtype=torch.uint8)
    assert create(cfg)(views).shape == (2, 5, cfg.d_model)


def test_the_gymnasium_env_steps_as_the_stepper():
    """TMaze-v0 with a fixed layout each, one env per layout, and the world's stepper take the
    same actions (the expert's or random ones, the other arm included) to the same views,
    rewards, endings and successes."""
    lay = WORLD.draw(12, 16, np.random.default_rng(7), knobs("anywhere"))
    ours = BatchedTMaze(lay, WORLD.cap(12, knobs()), -0.01, 1.0)
    envs = [
        gym.make("TMaze-v0", size=12, cue="anywhere", slack=4, layout=lay.subset([i]))
        for i in range(len(lay))
    ]
    theirs = GymBatch(envs)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    ctg, which = cost_to_go(lay), np.arange(len(lay))
    play_alongside(ours, theirs, lambda state: ctg.optimal_action(state, which), N_ACTIONS)
    np.testing.assert_array_equal(ours.success, theirs.success)
    assert ours.success.any() and not ours.success.all()
    with pytest.raises(ValueError, match=r"at cue start, got 1 of size 12 at cue \['anywhere'\]"):
        gym.make("TMaze-v0", size=12, layout=lay.subset([0]))
    env = gym.make("TMaze-v0", size=12, render_mode="ansi")
    obs, _ = env.reset(seed=0)
    assert obs.shape == (1, 1) and obs[0, 0] in CUES
    text = env.render()
    assert len(text.splitlines()) == 3 and "A" in text and "+" in text
    rgb = gym.make("TMaze-v0", size=12, render_mode="rgb_array")
    rgb.reset(seed=0)
    assert rgb.render().shape == (24, 104, 3)


def test_the_explorer_draws_a_long_corridor_over_the_steps_it_shows(tmp_path):
    """A corridor longer than explorer.max_cells is drawn over the span the shown steps reach:
    the page's cells are the agent's own, indexed in that window, and the GIF is as wide as
    the window, not the corridor."""
    from conftest import explored_study
    from PIL import Image

    from dtpe.explorer import animations
    from dtpe.explorer import page as explorer_page

    raw = tmaze_raw()
    raw["study"] = {"variants": ["rope"], "seeds": [1]}
    raw["train"]["epochs"] = 1
    raw["explorer"].update(layouts_per_suite=2, max_steps=10, max_cells=12)
    checked, _ = explored_study(tmp_path, raw)
    head, _ = explorer_page.unpack((tmp_path / "figures/explorer.html").read_text())
    for n in checked.data.suite_sizes:
        top, left, rows, cols = head["windows"][str(n)]
        assert (top, rows) == (0, 3) and cols < n  # 3 rows: whole; n + 1 columns: cut
        lay, _ = dataset.load_suite(tmp_path / "data", n, checked.env)
        for i, drawn in head["layouts"][str(n)].items():
            (j,) = np.flatnonzero(lay.ids == int(i))
            whole = lay.grid[j][:, left : left + cols].ravel()
            assert [int(c, 36) for c in drawn["grid"]] == whole.tolist()
        episodes = [ep for ep in head["episodes"] if ep["size"] == n]
        assert episodes and all(ep["shown"] == min(ep["steps"], 10) for ep in episodes)
        for ep in episodes:
            one = lay.subset(np.flatnonzero(lay.ids == ep["layout"]))
            game = WORLD.replay_env(one, checked.env)
            game.reset()
            for t, action in enumerate(ep["actions"]):
                pos, _ = WORLD.agent(game.state)
                assert divmod(ep["cells"][t], cols) == (pos[0][0] - top, pos[0][1] - left)
                game.step(np.array([int(action)]))
        gif = Image.open(tmp_path / "figures" / animations.FOLDER / animations.gif_name(n))
        scale = -(-animations.MIN_SIDE // (cols * 8))
        assert gif.size[0] == animations.MARGIN + 2 * (cols * 8 * scale + animations.MARGIN)
