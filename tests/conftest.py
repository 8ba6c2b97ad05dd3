import copy
from pathlib import Path

from dtpe import numerics

# Before anything imports torch: the tests run under the default's numerics (params.yaml), the
# mode whose bytes tests/test_numerics.py pins with a hash.
numerics.pin(numerics.PORTABLE)

import pytest  # noqa: E402
import yaml  # noqa: E402

from dtpe import params  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# ModelConfig fields of a model small enough to build and run in milliseconds (no dropout)
TINY_MODEL = dict(
    d_model=32,
    n_heads=2,
    n_layers=2,
    ffn_mult=4,
    dropout=0.0,
    attention_dropout=0.0,
    context=6,
    state_encoder="cnn",
    item_dim=4,
    encoder_filters=8,
    view_radius=2,
    rtg_scale=1.0,
)
ENCODING_OPTIONS = yaml.safe_load((ROOT / "params.yaml").read_text())["encodings"]


def model_config(variant: str, shape: dict = TINY_MODEL, options: dict | None = None, **fields):
    """A ModelConfig of `shape` (with `fields` changed) for `variant`, its encodings' options
    taken from `options` (as params' `encodings` group; params.yaml's by default)."""
    from dtpe.model.catalog import options_of
    from dtpe.model.config import ModelConfig

    return ModelConfig(
        **{**shape, **fields},
        variant=variant,
        options=options_of(variant, ENCODING_OPTIONS if options is None else options),
    )


def tiny_raw() -> dict:
    """params.yaml shrunk to seconds: a few hundred episodes, a small model, two epochs."""
    raw = yaml.safe_load((ROOT / "params.yaml").read_text())
    raw["study"] = {"variants": ["learned", "sinusoidal", "rope"], "seeds": [1, 2]}
    raw["data"].update(episodes=200, suite_sizes=[8, 10], suite_layouts=6)
    raw["model"].update(d_model=32, n_heads=2, n_layers=2, context=6, item_dim=4, encoder_filters=8)
    raw["train"].update(epochs=2, batch_size=32, val_layouts=6, val_every=1)
    raw["evaluate"].update(contexts=[6, 9], batch_size=4)
    raw["reach"].update(contexts=[1, 2, 4])  # below the tiny context
    raw["attention"].update(grid_size=10, episodes=3, shift=20)
    return raw


def explored_study(root: Path, raw: dict):
    """The study of params `raw` made in `root` through the CLI as far as the explorer: data,
    every model trained and grid-swept (its CSV), in a run that plays whole episodes its context
    sweep and position step too (all the explorer reads), then explored. Returns (params, the
    explore command's arguments)."""
    import torch

    from dtpe import cli, names
    from dtpe.model import checkpoint
    from dtpe.steps import episode_csv, evaluate, position

    torch.set_num_threads(1)
    path = root / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    checked = params.check(raw)
    common = ["--params", str(path), "--data", str(root / "data")]
    assert cli.main(["data", "--params", str(path), "--out", str(root / "data")]) == 0
    for e in checked.study.variants:
        for s in checked.study.seeds:
            name = names.model_name(e, s)
            model = ["--variant", e, "--seed", str(s)]
            assert (
                cli.main(
                    ["train", *common, *model, "--out", str(root / "models" / name)]
                    + ["--metrics", str(root / "results/train" / name)]
                    + ["--resume-dir", str(root / "resume" / name)]
                )
                == 0
            )
            trained = checkpoint.load(root / "models" / name)
            swept = {"grid": evaluate.grid_sweep(trained, checked, root / "data", e, s)}
            if checked.evaluate.whole_episode:
                args = (trained, checked, root / "data", e, s, swept["grid"])
                swept["context"] = evaluate.context_sweep(*args)
                swept["position"] = position.played(*args)
            for sweep, rows in swept.items():
                (root / "results/eval" / sweep).mkdir(parents=True, exist_ok=True)
                episode_csv.write(
                    rows, checked.env.world, root / f"results/eval/{sweep}/{name}.csv"
                )
    explore = [*common, "--models", str(root / "models"), "--results", str(root / "results")]
    assert cli.main(["explore", *explore, "--out", str(root / "figures")]) == 0
    return checked, explore


TMAZE_KNOBS = {"cue": "start", "shortest": 0.5, "slack": 4}
"""the tiny T-Maze's world knobs"""


def tmaze_raw(**worlds) -> dict:
    """tiny_raw in the T-Maze: corridors of 8..16 cells at training, suites of 16 and 32."""
    raw = tiny_raw()
    raw["env"]["world"] = "tmaze"
    raw["worlds"]["tmaze"] = {**TMAZE_KNOBS, **worlds}
    raw["data"].update(train_size=16, episodes=60, layouts=12, suite_sizes=[16, 32])
    raw["data"].update(suite_layouts=4, split={"train": 0.7, "val": 0.15, "test": 0.15})
    raw["attention"]["grid_size"] = 16
    raw["model"].update(state_encoder="view", view_radius=0)
    return raw


@pytest.fixture
def tiny_raw_params() -> dict:
    return copy.deepcopy(tiny_raw())


@pytest.fixture(scope="session")
def tiny_params():
    return params.check(tiny_raw())


@pytest.fixture(scope="session")
def tiny_data(tmp_path_factory, tiny_params):
    from dtpe.steps import dataset

    out = tmp_path_factory.mktemp("data") / "data"
    dataset.build(tiny_params, out)
    return out


def plan(layouts, index: int = 0) -> list[int]:
    """The optimal action sequence from layout `index`'s start (empty if the goal is
    unreachable): the planner's moves, replayed through the maze's rules."""
    import numpy as np

    from dtpe.world.maze.planner import cost_to_go
    from dtpe.world.maze.rules import State, transition
    from dtpe.world.search import UNREACHABLE

    one = layouts.subset([index])
    ctg = cost_to_go(one)
    pos, has_key, zero = one.start.copy(), np.zeros(1, dtype=bool), np.zeros(1, dtype=np.int64)
    if ctg.steps(State(pos, has_key), zero)[0] == UNREACHABLE:
        return []
    actions = []
    while ctg.steps(State(pos, has_key), zero)[0] > 0:
        a = ctg.optimal_action(State(pos, has_key), zero)
        pos, has_key = transition(one.grid, pos, has_key, a)
        actions.append(int(a[0]))
    return actions


def play_alongside(ours, theirs, plan, n_actions: int = 3, planned: float = 0.6) -> None:
    """Steps the world's stepper `ours` and MiniGrid's envs `theirs` with the same actions,
    `plan(state)`'s a `planned` share of the time and random ones otherwise, until every episode
    has ended, asserting each step's observations, rewards and endings equal wherever an episode
    is still running or ends at that step."""
    import numpy as np

    rng, b = np.random.default_rng(0), len(ours.done)
    while not ours.done.all():
        chosen = rng.random(b) < planned
        actions = np.where(chosen, plan(ours.state), rng.integers(0, n_actions, b))
        mine, reference = ours.step(actions), theirs.step(actions)
        active = ~ours.done | mine[2] | mine[3]
        for a, r in zip(mine, reference):
            np.testing.assert_array_equal(np.asarray(a)[active], np.asarray(r)[active])
