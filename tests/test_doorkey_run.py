"""The study in MiniGrid's DoorKey on a tiny configuration: the same seeds give the same data
bytes; the expert's episodes replay in MiniGrid itself, observation for observation; the
evaluation's episodes are MiniGrid's (each replayed in a fresh env ends as its CSV row says);
the explorer's page draws MiniGrid's observations; and a bad world or size is refused naming
its key. The references step MiniGrid's own `DoorKeyEnv` and read its objects."""

import hashlib

import numpy as np
import pytest
from conftest import explored_study, tiny_raw
from minigrid.envs import DoorKeyEnv
from test_doorkey_world import reference_observation

from dtpe import names
from dtpe import params as params_mod
from dtpe.explorer import build as explorer
from dtpe.explorer import page as explorer_page
from dtpe.explorer import traces
from dtpe.model import checkpoint
from dtpe.steps import dataset, rollout
from dtpe.world.doorkey import WORLD, rules
from dtpe.world.doorkey.rules import MINIGRID_ACTIONS

SIZES = [5, 6]


def doorkey_raw() -> dict:
    raw = tiny_raw()
    raw["env"]["world"] = "doorkey"
    raw["data"].update(episodes=120, suite_sizes=SIZES, suite_layouts=60)
    raw["study"] = {"variants": ["learned", "rope"], "seeds": [1]}
    raw["train"].update(epochs=1, val_layouts=4)
    raw["evaluate"].update(contexts=[6, 9], batch_size=16)
    raw["attention"].update(grid_size=6, episodes=3, shift=20)
    raw["explorer"].update(layouts_per_suite=2, max_steps=40)
    return raw


def replay_in_minigrid(size, seed, actions):
    """(observations before each action and after the last, terminated, truncated) of MiniGrid's
    DoorKeyEnv reset with `seed` and stepped with our `actions`."""
    env = DoorKeyEnv(size=size)
    env.reset(seed=int(seed))
    frames, terminated, truncated = [reference_observation(env)], False, False
    for a in actions:
        assert not (terminated or truncated), "actions after the episode's end"
        _, _, terminated, truncated, _ = env.step(int(MINIGRID_ACTIONS[int(a)]))
        frames.append(reference_observation(env))
    return np.stack(frames), terminated, truncated


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A tiny DoorKey study: data, two models trained, grid-swept and explored, by the CLI."""
    root = tmp_path_factory.mktemp("doorkey")
    params, _ = explored_study(root, doorkey_raw())
    return root, params


def digest(folder) -> dict:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*.safetensors"))
    }


def test_same_seeds_give_the_same_bytes_and_suites_are_new_layouts(built, tmp_path):
    root, params = built
    dataset.build(params, tmp_path / "again")
    assert digest(tmp_path / "again") == digest(root / "data")
    seen = set()
    for name in ["train", "val", "test"]:
        lay, _ = dataset.load_split_layouts(root / "data", name, params.env)
        seen |= set(WORLD.fingerprints(lay))
    assert len(seen) == params.data.episodes  # every episode a layout of its own
    for n in SIZES:
        lay, steps = dataset.load_suite(root / "data", n, params.env)
        codes = set(WORLD.fingerprints(lay))
        assert not codes & seen and len(codes) == len(lay)
        seen |= codes
    # MiniGrid draws 48 layouts at 5 x 5 in all: the suite holds every one, not 60
    assert len(dataset.load_suite(root / "data", 5, params.env)[0]) == 48
    assert len(dataset.load_suite(root / "data", 6, params.env)[0]) == 60


def test_expert_episodes_are_minigrids_own(built):
    """Every training episode, stepped in MiniGrid from its seed with its actions, shows the
    same observations; the optimal ones end on the goal in the planned number of steps; the
    rewards are the project's per step, and the return-to-go sums them."""
    root, params = built
    arrays = dataset.load(root / "data" / "train.safetensors")
    off = arrays["offsets"]
    for e in range(len(off) - 1):
        lo, hi = off[e], off[e + 1]
        frames, terminated, _ = replay_in_minigrid(
            params.data.train_size, arrays["layout_id"][e], arrays["actions"][lo:hi]
        )
        np.testing.assert_array_equal(frames[:-1], arrays["states"][lo:hi])
        assert terminated == bool(arrays["success"][e])
        if arrays["optimal"][e]:
            assert terminated and hi - lo == arrays["optimal_steps"][e]
        want = np.full(hi - lo, params.env.step_reward, np.float32)
        want[-1] += params.env.goal_reward * terminated
        np.testing.assert_allclose(arrays["rewards"][lo:hi], want, atol=1e-6)
        np.testing.assert_allclose(arrays["rtg"][lo:hi], np.cumsum(want[::-1])[::-1], atol=1e-5)


def test_evaluation_episodes_are_minigrids_own(built):
    """The rollout the evaluation runs, replayed in a fresh MiniGrid env per layout, ends as
    its CSV row says, within MiniGrid's step limit."""
    root, params = built
    model = checkpoint.load(root / "models" / names.model_name("rope", 1))
    for n in SIZES:
        lay, _ = dataset.load_suite(root / "data", n, params.env)
        some = lay.subset(slice(0, 8))
        run = rollout.rollout(
            model,
            some,
            params.env,
            params.model.context,
            params.evaluate.target_return,
            trace=True,
        )
        assert params.env.cap(n) == 10 * n * n  # MiniGrid's max_steps
        for i in range(len(some)):
            steps = int(run["steps"][i])
            _, terminated, truncated = replay_in_minigrid(
                n, some.seeds[i], run["actions"][i, :steps]
            )
            assert terminated == bool(run["success"][i])
            assert terminated or (truncated and steps == params.env.cap(n))


def test_an_episode_plays_alone_as_in_its_evaluation_batch(built):
    root, params = built
    model = checkpoint.load(root / "models" / names.model_name("learned", 1))
    for n in SIZES:
        lay, _ = dataset.load_suite(root / "data", n, params.env)
        wanted = lay.ids[[1, len(lay) - 2]]
        cap = params.env.cap(n)
        alone = traces.play(model, lay, params, cap, wanted)
        batched = traces.play(model, lay, params, cap, wanted, as_evaluated=True)
        for i in wanted:
            assert alone[i]["steps"] == batched[i]["steps"]
            np.testing.assert_array_equal(alone[i]["actions"], batched[i]["actions"])


def test_explorer_page_draws_minigrids_observations(built):
    root, params = built
    head, _ = explorer_page.unpack((root / "figures" / explorer.PAGE).read_text())
    assert head["actions"] == ["left", "right", "forward", "pickup", "toggle"]
    assert len(head["colours"]) == 15
    for ep in head["episodes"]:
        n = ep["size"]
        lay = head["layouts"][str(n)][str(ep["layout"])]
        grid = np.array([int(c, 36) for c in lay["grid"]], dtype=np.uint8)
        frames, _, _ = replay_in_minigrid(n, ep["layout"], ep["actions"])
        assert ep["shown"] == min(ep["steps"], params.explorer.max_steps) == len(ep["actions"])
        for t, changed in enumerate(ep["changes"]):
            drawn = grid.copy()
            for cell, code in changed:
                drawn[cell] = code
            np.testing.assert_array_equal(drawn.reshape(n, n), frames[t])
            # the agent's triangle points where MiniGrid's agent faces; beneath it is what it
            # stands on: the open door on the door's cell, the goal at the end, else the floor
            agent = frames[t].flat[ep["cells"][t]]
            assert ep["heading"][t] == (agent - rules.AGENT) % 4
            on_door = lay["grid"][ep["cells"][t]] == np.base_repr(rules.DOOR_LOCKED, 36)
            on_goal = ep["success"] and t == ep["steps"]
            want = rules.DOOR_OPEN if on_door else rules.GOAL if on_goal else rules.EMPTY
            assert ep["ground"][t] == want, (ep["layout"], t)


@pytest.mark.parametrize(
    ("group", "key", "value", "named"),
    [
        ("env", "world", "minigrid", "env.world"),
        ("data", "suite_sizes", [4, 6], "data.suite_sizes"),
    ],
)
def test_a_bad_world_or_size_is_refused_naming_its_key(group, key, value, named):
    raw = doorkey_raw()
    raw[group][key] = value
    with pytest.raises(params_mod.ParamsError, match=named.replace(".", r"\.")):
        params_mod.check(raw)
