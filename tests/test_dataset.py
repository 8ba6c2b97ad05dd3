"""The data step on params.yaml shrunk to 300 episodes and 10 layouts per suite: byte-identical
reruns, seeds that matter, suites disjoint from training, the split by episode, RTG, and bad
params or data files refused with errors that name the cause."""

import json
import re

import numpy as np
import pytest
import yaml
from conftest import ROOT
from safetensors.numpy import load_file, save_file

from dtpe import cli, params
from dtpe.steps import dataset
from dtpe.world.maze import WORLD
from dtpe.world.maze import layouts as layout_family
from dtpe.world.maze.rules import AGENT, render

EPISODES, SUITE_LAYOUTS = 300, 10


def small_raw() -> dict:
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["data"].update(episodes=EPISODES, suite_layouts=SUITE_LAYOUTS)
    return raw


def build(tmp_path_factory, raw):
    out = tmp_path_factory.mktemp("data") / "data"
    dataset.build(params.check(raw), out)
    return out


def written(folder) -> dict:
    """Every file under `folder`, by relative path, as bytes."""
    return {
        str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()
    }


def episodes(arrays):
    """(start, stop) of each episode of a split file."""
    return zip(arrays["offsets"][:-1], arrays["offsets"][1:])


@pytest.fixture(scope="module")
def small_params():
    return params.check(small_raw())


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory):
    return build(tmp_path_factory, small_raw())


@pytest.fixture(scope="module")
def splits(data_dir):
    return {name: load_file(str(data_dir / f"{name}.safetensors")) for name in dataset.SPLITS}


def test_same_seed_writes_identical_bytes(data_dir, small_params, tmp_path_factory):
    first, again = written(data_dir), written(build(tmp_path_factory, small_raw()))
    expected = {f"{s}.safetensors" for s in dataset.SPLITS} | {
        f"suites/N{n}.safetensors" for n in small_params.data.suite_sizes
    }
    assert set(first) == expected | {"summary.json"}
    assert set(again) == set(first)
    for name in first:
        assert first[name] == again[name], name


@pytest.mark.parametrize(
    "seed_key, changed", [("seed", dataset.SPLITS), ("suite_seed", ("suites",))]
)
def test_other_seed_writes_other_bytes(data_dir, tmp_path_factory, seed_key, changed):
    """Each seed moves its own files and leaves the other's alone: the suites stay the same for
    every training seed, so models stay comparable maze by maze."""
    raw = small_raw()
    raw["data"][seed_key] += 1
    first, other = written(data_dir), written(build(tmp_path_factory, raw))
    data_files = [name for name in first if name.endswith(".safetensors")]
    moved = [name for name in data_files if name.startswith(changed)]
    assert moved
    for name in data_files:
        assert (first[name] != other[name]) == (name in moved), name


def test_suites_are_disjoint_from_training_layouts(data_dir, small_params, splits):
    training = {
        code for arrays in splits.values() for code in WORLD.fingerprints(WORLD.layouts(arrays))
    }
    assert len(training) == EPISODES
    for size in small_params.data.suite_sizes:
        lay, optimal_steps = dataset.load_suite(data_dir, size, small_params.env)
        assert lay.grid.shape == (SUITE_LAYOUTS, size, size) and (optimal_steps > 0).all()
        assert not training & set(WORLD.fingerprints(lay)), size


def test_exclusion_is_what_keeps_suites_new():
    """Without `exclude` the same seed repeats its layouts; with it, none comes back."""
    first = layout_family.generate(8, 10, np.random.default_rng(5), 0.2)
    seen = set(layout_family.fingerprints(first))
    repeat = layout_family.generate(8, 10, np.random.default_rng(5), 0.2)
    fresh = layout_family.generate(8, 10, np.random.default_rng(5), 0.2, exclude=seen)
    assert set(layout_family.fingerprints(repeat)) == seen
    assert not seen & set(layout_family.fingerprints(fresh))


def test_check_disjoint_catches_a_training_layout_in_a_suite(
    data_dir, small_params, splits, tmp_path
):
    for name, content in written(data_dir).items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    suite = load_file(str(tmp_path / "suites/N8.safetensors"))
    suite["grid"][3], suite["start"][3] = splits["val"]["grid"][0], splits["val"]["start"][0]
    save_file(suite, str(tmp_path / "suites/N8.safetensors"))
    with pytest.raises(
        dataset.DataError, match="suites/N8.safetensors repeats one in val.safetensors"
    ):
        dataset.check_disjoint(tmp_path, small_params.data.suite_sizes, WORLD)


def test_split_follows_the_fractions_by_episode(data_dir, splits, small_params):
    counts = {name: len(arrays["offsets"]) - 1 for name, arrays in splits.items()}
    assert counts == {"train": 270, "val": 15, "test": 15}  # 300 episodes at 90/5/5
    for name, arrays in splits.items():
        for key in ("layout_id", "optimal", "success", "optimal_steps", "grid", "start"):
            assert len(arrays[key]) == counts[name], (name, key)
        assert (
            arrays["offsets"][-1]
            == len(arrays["states"])
            == len(arrays["actions"])
            == len(arrays["rtg"])
        )
    ids = np.concatenate([arrays["layout_id"] for arrays in splits.values()])
    np.testing.assert_array_equal(np.sort(ids), np.arange(EPISODES))
    assert sum(int(arrays["optimal"].sum()) for arrays in splits.values()) == round(
        small_params.data.optimal_fraction * EPISODES
    )
    summary = json.loads((data_dir / "summary.json").read_text())
    assert {name: s["episodes"] for name, s in summary["splits"].items()} == counts


def test_rtg_is_reverse_cumulative_reward(splits, small_params):
    env = small_params.env
    for name, arrays in splits.items():
        for e, (lo, hi) in enumerate(episodes(arrays)):
            rewards = arrays["rewards"][lo:hi].astype(np.float64)
            np.testing.assert_allclose(
                arrays["rtg"][lo:hi], np.cumsum(rewards[::-1])[::-1], rtol=1e-6, atol=1e-6
            )
            np.testing.assert_array_equal(arrays["timesteps"][lo:hi], np.arange(hi - lo))
            success = bool(arrays["success"][e])
            assert arrays["rewards"][hi - 1] == pytest.approx(
                env.step_reward + env.goal_reward * success
            )
            assert np.all(arrays["rewards"][lo : hi - 1] == np.float32(env.step_reward))
            assert success or hi - lo == env.cap(small_params.data.train_size)


def test_episodes_start_at_their_layout_and_optimal_ones_are_shortest(splits):
    for name, arrays in splits.items():
        for e, (lo, hi) in enumerate(episodes(arrays)):
            first = render(arrays["grid"][e][None], arrays["start"][e][None], np.zeros(1, bool))[0]
            np.testing.assert_array_equal(arrays["states"][lo], first)
            assert (arrays["states"][lo:hi] == AGENT).sum() == hi - lo
            if arrays["optimal"][e]:
                assert arrays["success"][e] and hi - lo == arrays["optimal_steps"][e], (name, e)
            else:
                assert hi - lo >= arrays["optimal_steps"][e], (name, e)


def test_expert_actions_are_optimal_in_every_state_and_ties_are_drawn(splits):
    """On optimal episodes the action taken is the plan's; on detours, replaying the taken
    actions from the start, the recorded expert action is one step closer to the goal from each
    state reached. Where several actions are, the plan draws among them: it does not always
    take the first."""
    from dtpe.world.maze.planner import cost_to_go
    from dtpe.world.maze.rules import BatchedMaze, Layouts, State, transition

    arrays = splits["train"]
    steps = [(e, lo, hi) for e, (lo, hi) in enumerate(episodes(arrays))]
    for e, lo, hi in steps:
        if arrays["optimal"][e]:
            np.testing.assert_array_equal(arrays["actions"][lo:hi], arrays["expert_actions"][lo:hi])
    detours = [(e, lo, hi) for e, lo, hi in steps if not arrays["optimal"][e]][:20]
    differ, not_first = 0, 0
    zero = np.zeros(1, int)
    for e, lo, hi in detours:
        lay = Layouts(arrays["grid"][e][None], arrays["start"][e][None], np.array([e]))
        ctg, maze = cost_to_go(lay), BatchedMaze(lay, hi - lo + 1, -0.01, 1.0)
        maze.reset()
        for i in range(lo, hi):
            expert = arrays["expert_actions"][i : i + 1].astype(np.int64)
            now = ctg.steps(maze.state, zero)[0]
            after, key_after = transition(lay.grid, maze.state.pos, maze.state.has_key, expert)
            assert ctg.steps(State(after, key_after), zero)[0] == now - 1, (e, i - lo)
            not_first += expert[0] != ctg.optimal_action(maze.state, zero)[0]
            differ += arrays["actions"][i] != expert[0]
            maze.step(arrays["actions"][i : i + 1].astype(np.int64))
    assert differ > 0  # the detours do leave the plan
    assert not_first > 0  # ties are drawn, not always broken towards the lowest action


BAD_DATA = [
    ("train_size below the minimum", {"train_size": 4}, "data.train_size"),
    ("fractional train_size", {"train_size": 8.5}, "data.train_size"),
    ("float train_size", {"train_size": 8.0}, "data.train_size"),
    ("suite size below the minimum", {"suite_sizes": [8, 3]}, "data.suite_sizes.1"),
    ("split not summing to 1", {"split": {"train": 0.7, "val": 0.2, "test": 0.15}}, "data.split"),
    ("negative episodes", {"episodes": -5}, "data.episodes"),
    ("more layouts than episodes", {"layouts": 301}, "data.layouts"),
    ("layouts leaving a split empty", {"layouts": 5}, "data.layouts"),
    ("fractional layouts", {"layouts": 20.5}, "data.layouts"),
    (
        "unknown key",
        {"episode": 300},
        "data: Additional properties are not allowed ('episode' was unexpected)",
    ),
]


@pytest.mark.parametrize(
    "change, key", [(c, k) for _, c, k in BAD_DATA], ids=[name for name, _, _ in BAD_DATA]
)
def test_bad_data_params_are_refused_before_anything_is_written(change, key, tmp_path, capsys):
    raw = small_raw()
    raw["data"].update(change)
    with pytest.raises(params.ParamsError, match=re.escape(f"params key {key}")):
        params.check(raw)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    assert cli.main(["data", "--params", str(path), "--out", str(tmp_path / "data")]) == 2
    assert key in capsys.readouterr().err
    assert [p.name for p in tmp_path.iterdir()] == ["params.yaml"]


def test_missing_or_corrupt_data_file_is_a_data_error(data_dir, small_params, tmp_path):
    with pytest.raises(dataset.DataError, match="missing"):
        dataset.load(tmp_path / "train.safetensors")
    with pytest.raises(dataset.DataError, match="missing"):
        dataset.load_suite(tmp_path, 8, small_params.env)
    content = (data_dir / "train.safetensors").read_bytes()
    for name, damaged in (
        ("truncated", content[: len(content) // 2]),
        ("garbage", b"not a safetensors file"),
        ("empty", b""),
    ):
        (tmp_path / f"{name}.safetensors").write_bytes(damaged)
        with pytest.raises(dataset.DataError, match="corrupt or truncated"):
            dataset.load(tmp_path / f"{name}.safetensors")


def test_recurring_layouts_keep_their_split_and_play_once_in_it(tmp_path_factory, small_params):
    """data.layouts below data.episodes: each layout recurs in several episodes with other
    detours, every episode of a layout in one split (split by layout, at the fractions), the
    suites still disjoint; the steps that play a split's layouts play each once."""
    raw = small_raw()
    raw["data"]["layouts"] = 40
    folder = build(tmp_path_factory, raw)
    arrays = {name: load_file(str(folder / f"{name}.safetensors")) for name in dataset.SPLITS}
    ids = {name: set(a["layout_id"].tolist()) for name, a in arrays.items()}
    counts = params.split_sizes(40, small_params.data.split)
    assert [len(ids[name]) for name in dataset.SPLITS] == [counts[s] for s in dataset.SPLITS]
    assert not (ids["train"] & ids["val"]) and not (ids["train"] & ids["test"])
    assert sum(len(a["layout_id"]) for a in arrays.values()) == EPISODES
    repeats = np.unique(arrays["train"]["layout_id"], return_counts=True)[1]
    assert set(repeats) <= {EPISODES // 40, EPISODES // 40 + 1}  # 300 episodes over 40 layouts
    # one layout's episodes: the same grid, not all the same actions (their own detours)
    first = arrays["train"]["layout_id"] == arrays["train"]["layout_id"][0]
    assert (arrays["train"]["grid"][first] == arrays["train"]["grid"][first][0]).all()
    starts = arrays["train"]["offsets"][:-1][first]
    stops = arrays["train"]["offsets"][1:][first]
    plays = {tuple(arrays["train"]["actions"][a:b]) for a, b in zip(starts, stops)}
    assert len(plays) > 1
    lay, steps = dataset.load_split_layouts(folder, "test", small_params.env)
    assert len(set(WORLD.fingerprints(lay))) == len(steps) == counts["test"]
    dataset.check_disjoint(folder, small_params.data.suite_sizes, WORLD)


def test_one_layout_an_episode_writes_what_no_layouts_knob_wrote(data_dir, tmp_path_factory):
    """data.layouts equal to data.episodes is the null default's data, byte for byte."""
    raw = small_raw()
    raw["data"]["layouts"] = EPISODES
    assert written(build(tmp_path_factory, raw)) == written(data_dir)
