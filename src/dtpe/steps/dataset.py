"""Training episodes and evaluation suites, and their on-disk format.

Episodes file (safetensors, one per split, `data/{train,val,test}.safetensors`): the episodes'
steps concatenated, with offsets to cut them apart.
  states   (T, H, W) uint8   observation before each action: the full grid (N, N), or the
                             agent's view in a world seen through it (Memory's 7 x 7)
  actions  (T,) uint8        action taken
  expert_actions (T,) uint8  the BFS plan's action in the same state (= actions off detours)
  rewards  (T,) float32
  rtg      (T,) float32      return-to-go: sum of this and all later rewards
  timesteps (T,) int32       t inside the episode, 0..L-1
  offsets  (E+1,) int64      episode e is steps offsets[e]:offsets[e+1]
  layout_id (E,) int64       the layout's index in the generator's output
                             (row e of grid is episode e's layout; with data.layouts below
                             data.episodes a layout recurs, in one split only)
  optimal  (E,) uint8        1 if the episode follows the BFS plan, 0 if it took detours
  success  (E,) uint8        1 if it succeeded (else it failed, or was truncated at the cap)
  grid, start, optimal_steps: the episodes' layouts, as in a suite file
Suite file (`data/suites/N{size}.safetensors`): grid (L, N, N) uint8, start (L, 2) int64,
optimal_steps (L,) int64, layout_id (L,) int64.
A world may save more of a layout (World.layout_arrays: DoorKey's heading (E,) or (L,) int64)
and give its own ids (DoorKey's layout_id is the MiniGrid seed that draws the layout).
`summary.json` names the world (params' `env.world`); a data folder is read only by params of the
same world.

safetensors files are byte-deterministic (no timestamps, sorted header), unlike npz.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file, save_file

from dtpe.params import Params, split_sizes
from dtpe.world import catalog as worlds

SPLITS = ("train", "val", "test")
STEP_ARRAYS = ("states", "actions", "expert_actions", "rewards", "rtg", "timesteps")


class DataError(RuntimeError):
    """A missing or malformed data file."""


def build(params: Params, out_dir: Path) -> dict:
    """Writes the three episode splits and the evaluation suites; returns the summary."""
    d, env = params.data, params.env
    world = worlds.get(env.world)
    rng = np.random.default_rng(d.seed)
    # episode e plays layout e % n: with fewer layouts than episodes (data.layouts, for a world
    # with few distinct layouts at its training size) each recurs with other detours
    n = d.layouts or d.episodes
    try:
        distinct = world.draw(d.train_size, n, rng, env.options)
    except ValueError as e:
        knob = "data.layouts" if d.layouts else "data.episodes (one layout each)"
        raise ValueError(
            f"{knob} asks for {n} layouts of {d.train_size}x{d.train_size}: {e}"
        ) from e
    layout_of = np.arange(d.episodes) % n
    lay = distinct.subset(layout_of)
    optimal = np.zeros(d.episodes, dtype=bool)
    optimal[rng.permutation(d.episodes)[: round(d.optimal_fraction * d.episodes)]] = True
    episodes = world.episodes(lay, optimal, d.detour_prob, env, rng)

    # split by layout, so validation and test layouts are held out from training (one episode
    # per layout: by episode, as before)
    counts = split_sizes(n, d.split)
    order = rng.permutation(n)
    bounds = np.cumsum([0] + [counts[s] for s in SPLITS])
    out_dir.mkdir(parents=True, exist_ok=True)
    # one key only: safetensors writes several in an order that changes from run to run
    metadata = {"size": str(d.train_size)}
    summary = {"world": world.name, "train_size": d.train_size, "splits": {}, "suites": {}}
    for name, lo, hi in zip(SPLITS, bounds[:-1], bounds[1:]):
        part = np.flatnonzero(np.isin(layout_of, order[lo:hi]))
        arrays = select_episodes(episodes, part)
        arrays.update(world.arrays(lay.subset(part)))
        save_file(arrays, str(out_dir / f"{name}.safetensors"), metadata=metadata)
        summary["splits"][name] = describe(arrays)

    # Suites must be new layouts for every model: the exclusion set makes disjointness a
    # property of the generator, and the check below verifies it on the written files.
    seen = set(world.fingerprints(distinct))
    suite_rng = np.random.default_rng(d.suite_seed)
    (out_dir / "suites").mkdir(exist_ok=True)
    for size in d.suite_sizes:
        suite = world.draw(size, d.suite_layouts, suite_rng, env.options, exclude=seen, whole=False)
        seen |= set(world.fingerprints(suite))
        steps = world.optimal_steps(suite)
        save_file(
            {**world.arrays(suite), "optimal_steps": steps},
            str(out_dir / "suites" / f"N{size}.safetensors"),
            metadata={"size": str(size)},
        )
        summary["suites"][str(size)] = {
            "layouts": len(suite),
            "optimal_steps_mean": float(steps.mean()),
            "cap": env.cap(size),
        }
    check_disjoint(out_dir, d.suite_sizes, world)
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    return summary


def select_episodes(episodes: dict, index: np.ndarray) -> dict:
    """The episodes `index` (sorted) of an episodes dict, with offsets rebuilt."""
    off = episodes["offsets"]
    steps = (
        np.concatenate([np.arange(off[i], off[i + 1]) for i in index])
        if len(index)
        else np.zeros(0, np.int64)
    )
    lengths = off[index + 1] - off[index]
    out = {k: episodes[k][steps] for k in STEP_ARRAYS}
    out.update({k: episodes[k][index] for k in ("optimal", "success", "optimal_steps")})
    out["offsets"] = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return out


def describe(arrays: dict) -> dict:
    lengths = np.diff(arrays["offsets"])
    hist = np.bincount(lengths)
    return {
        "episodes": int(len(lengths)),
        "steps": int(lengths.sum()),
        "optimal_episodes": int(arrays["optimal"].sum()),
        "success_rate": float(arrays["success"].mean()),
        "length_mean": float(lengths.mean()),
        "length_max": int(lengths.max()),
        "length_histogram": {int(k): int(v) for k, v in enumerate(hist) if v},
    }


def check_disjoint(data_dir: Path, suite_sizes, world) -> None:
    seen = {}
    for name in [f"{s}.safetensors" for s in SPLITS] + [
        f"suites/N{n}.safetensors" for n in suite_sizes
    ]:
        arrays = load_file(str(data_dir / name))
        for code in set(world.fingerprints(world.layouts(arrays))):
            if code in seen:
                raise DataError(
                    f"layout in {name} repeats one in {seen[code]}: "
                    "suites must be disjoint from training layouts"
                )
            seen[code] = name


def load(path: Path) -> dict:
    """A data file's arrays; a clear error if it is missing or unreadable."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"data file {path} is missing: run `dtpe data` first")
    try:
        return load_file(str(path))
    except Exception as e:  # safetensors raises several kinds on a damaged file
        raise DataError(f"data file {path} is corrupt or truncated: {e}") from e


def recorded_world(data_dir: Path) -> str | None:
    """The world data folder `data_dir` holds, as its summary.json names it."""
    summary = Path(data_dir) / "summary.json"
    if not summary.is_file():
        raise DataError(f"data file {summary} is missing: run `dtpe data` first")
    try:
        return json.loads(summary.read_text()).get("world")
    except (json.JSONDecodeError, AttributeError) as e:
        raise DataError(f"{summary} is corrupt: {e}") from e


def world_of(data_dir: Path, env):
    """The world of params `env`, once data folder `data_dir` is known to hold its layouts (its
    summary.json names the world): a DataError naming both if it holds another world's."""
    summary = Path(data_dir) / "summary.json"
    recorded = recorded_world(data_dir)
    if recorded != env.world:
        raise DataError(
            f"data folder {data_dir} holds {recorded or 'unnamed'} layouts ({summary}), but the "
            f"params' env.world is {env.world}: make the data with these params (`dtpe data`) or "
            f"use the params it was made with"
        )
    return worlds.get(env.world)


def load_suite(data_dir: Path, size: int, env) -> tuple:
    """A suite's layouts (the world's Layouts) and their optimal steps."""
    world = world_of(data_dir, env)
    arrays = load(Path(data_dir) / "suites" / f"N{size}.safetensors")
    return world.layouts(arrays), arrays["optimal_steps"]


def load_split_layouts(data_dir: Path, split: str, env):
    """A split's distinct layouts, in the order of their first episode, and their optimal
    steps (a layout recurs in several episodes where data.layouts is below data.episodes)."""
    world = world_of(data_dir, env)
    arrays = load(Path(data_dir) / f"{split}.safetensors")
    first = np.sort(np.unique(arrays["layout_id"], return_index=True)[1])
    return world.layouts(arrays).subset(first), arrays["optimal_steps"][first]
