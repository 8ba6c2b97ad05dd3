"""`dtpe explore`: the episode and attention explorer (figures/explorer.html), the episode
animations and the position-embedding similarity figure, all from the evaluation's own
episodes and the trained checkpoints.

Which episodes the page shows: per grid size, `explorer.layouts_per_suite` layouts, the same for
every model so that models can be compared maze by maze. Half of them (rounded up) are the
layouts the most models failed (ties: lowest layout id), the rest the lowest layout ids not yet
taken, whatever their outcome. Every shown episode is played again as the grid sweep played it
(traces.play) and held to its CSV row: a replay that disagrees stops the step, since then the
checkpoint or the data changed after the evaluation.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dtpe.explorer import animations, embeddings, traces, window
from dtpe.explorer import page as explorer_page
from dtpe.model import checkpoint
from dtpe.model.encodings import variant
from dtpe.names import model_name
from dtpe.steps import dataset, episode_csv, evaluate

PAGE = "explorer.html"


def read_grid(params, grid_dir: Path) -> pd.DataFrame:
    """Every model's grid-sweep rows at the training context, with a `model` column; a missing
    file or suite is an error naming it."""
    frames = []
    for e in params.study.variants:
        for s in params.shown_seeds():
            path = Path(grid_dir) / f"{model_name(e, s)}.csv"
            if not path.is_file():
                raise FileNotFoundError(f"{path}: no grid sweep of {e} seed {s} (run evaluate)")
            rows = episode_csv.read([path], params.env.world)
            rows = rows[(rows.context == params.model.context) & rows.applicable.astype(bool)]
            missing = set(params.data.suite_sizes) - set(rows.grid_size)
            if missing:
                raise ValueError(f"{path}: no rows for grid sizes {sorted(missing)}")
            frames.append(rows.assign(model=model_name(e, s), variant=e, seed=s))
    grid = pd.concat(frames, ignore_index=True)
    return grid.astype({"success": int, "steps": int, "layout_id": int, "grid_size": int})


def pick_layouts(grid: pd.DataFrame, size: int, count: int) -> list[int]:
    """`count` layout ids of one grid size: half (rounded up) the most failed, then the lowest."""
    rows = grid[grid.grid_size == size]
    failures = (1 - rows.success).groupby(rows.layout_id).sum()
    failed = failures[failures > 0].reset_index(name="failures")
    chosen = list(
        failed.sort_values(["failures", "layout_id"], ascending=[False, True])
        .layout_id.head(math.ceil(count / 2))
        .astype(int)
    )
    for layout in sorted(failures.index):
        if len(chosen) >= count:
            break
        if layout not in chosen:
            chosen.append(int(layout))
    return sorted(chosen)


def selection_text(params) -> str:
    n = params.explorer.layouts_per_suite
    return (
        f"Per grid size, {n} layouts of the evaluation suite, the same for every model: up to "
        f"{math.ceil(n / 2)} of them the layouts the most models failed (ties: lowest layout id), "
        f"the rest the lowest layout ids not yet taken, whatever their outcome. Each episode is "
        f"the grid sweep's own (context {params.model.context}, target return "
        f"{params.evaluate.target_return}), played again and checked against its CSV row."
    )


@dataclass
class Episode:
    """One played episode, checked against its CSV row."""

    model: str
    variant: str
    seed: int
    size: int
    layout: int
    row: dict
    """its grid-sweep CSV row: success, steps, optimal"""
    played: dict
    """traces.play's record: success, steps, actions, probs"""
    replay: traces.Replay
    attention: list = field(default_factory=list)
    """per step, (L, H, 3w - 1) attention of its state token (the page's episodes only)"""


def disagrees(record: dict, rows: pd.DataFrame, layout: int) -> bool:
    """Whether a played episode's outcome differs from its CSV row (or it has none)."""
    if layout not in rows.index:
        return True
    row = rows.loc[layout]
    return (record["success"], record["steps"]) != (bool(row.success), int(row.steps))


def checked(name, variant, seed, lay, layout, rows, played, params, world) -> Episode:
    """The played episode of `layout`, replayed, and held to its CSV row `rows.loc[layout]`."""
    if layout not in rows.index:
        raise ValueError(f"{name}: no grid-sweep row for {lay.size}x{lay.size} layout {layout}")
    row, rec = rows.loc[layout], played[layout]
    one = lay.subset(np.flatnonzero(lay.ids == layout))
    rep = traces.replay(
        world,
        one,
        rec["actions"],
        params.env,
        params.evaluate.target_return,
        keep=params.explorer.max_steps,
    )
    said = (bool(row.success), int(row.steps))
    if (rec["success"], rec["steps"]) != said or rep.success != said[0]:
        raise ValueError(
            f"{name} on {lay.size}x{lay.size} layout {layout}: the replay "
            f"({'success' if rec['success'] else 'failure'} in {rec['steps']} steps) disagrees "
            f"with the grid sweep's CSV ({'success' if row.success else 'failure'} in "
            f"{int(row.steps)} steps): the checkpoint or the data changed since the evaluation; "
            f"run it again"
        )
    outcome = {"success": int(row.success), "steps": int(row.steps)}
    return Episode(
        name,
        variant,
        seed,
        lay.size,
        layout,
        {**outcome, "optimal": int(row.optimal_steps)},
        rec,
        rep,
    )


def collect(params, world, data_dir: Path, models: dict, grid: pd.DataFrame):
    """Plays every model on the layouts of `world` (the run's) the page and the animations show,
    as the sweep played them. models: {name: DecisionTransformer}. Returns (page episodes,
    {(size, variant, kind): Episode or None})."""
    context, first_seed = params.model.context, params.shown_seeds()[0]
    shown = {
        n: pick_layouts(grid, n, params.explorer.layouts_per_suite) for n in params.data.suite_sizes
    }
    reps = {n: animations.representatives(grid, params, n) for n in params.data.suite_sizes}
    page, picked = [], {}
    for n in params.data.suite_sizes:
        lay, _, cap = evaluate.played_suite(data_dir, n, params)
        for e in params.study.variants:
            for s in params.shown_seeds():
                name = model_name(e, s)
                for_gif = {
                    kind: v for (enc, kind), v in reps[n].items() if enc == e and s == first_seed
                }
                wanted = sorted(set(shown[n]) | {v for v in for_gif.values() if v is not None})
                played = traces.play(models[name], lay, params, cap, np.array(wanted))
                rows = grid[(grid.model == name) & (grid.grid_size == n)].set_index("layout_id")
                if any(disagrees(played[i], rows, i) for i in wanted):
                    played = traces.play(models[name], lay, params, cap, wanted, as_evaluated=True)
                for layout in wanted:
                    ep = checked(name, e, s, lay, layout, rows, played, params, world)
                    if layout in shown[n]:
                        first = ep.played["actions"][: params.explorer.max_steps]
                        ep.attention, _ = traces.attention(models[name], ep.replay, first, context)
                        page.append(ep)
                    for kind, v in for_gif.items():
                        if v == layout:
                            picked[n, e, kind] = ep
        for (e, kind), v in reps[n].items():
            picked.setdefault((n, e, kind), None)
    return page, picked


def drawn(params, episodes: list[Episode]) -> dict[int, window.Window]:
    """{grid size: the window of its grids that the page and the animations draw}, covering
    the shown steps of every episode of that size (each replay keeps only those)."""
    paths: dict[int, list] = {}
    for ep in episodes:
        paths.setdefault(ep.size, []).append(ep.replay.cells)
    shapes = {ep.size: ep.replay.frames.shape[1:] for ep in episodes}
    return {
        n: window.covering(shapes[n], paths[n], params.explorer.max_cells) for n in sorted(paths)
    }


def model_table(params) -> list[dict]:
    """The page's models: name, its k and t encodings (parsed from the variant name), seed."""
    out = []
    for e in params.study.variants:
        parsed = variant(e)
        out += [
            {"name": model_name(e, s), "k": parsed.k, "t": parsed.t, "seed": s}
            for s in params.shown_seeds()
        ]
    return out


def run(params, data_dir: Path, models_dir: Path, grid_dir: Path, out: Path) -> list[Path]:
    """Writes the explorer, the animations and the embedding figure into `out`; returns their
    paths. The run's world is looked up once, here (its data folder checked to hold it), and
    handed down."""
    world = dataset.world_of(data_dir, params.env)
    grid = read_grid(params, grid_dir)
    models = {
        name: checkpoint.load(Path(models_dir) / name)
        for name in (m["name"] for m in model_table(params))
    }
    page, picked = collect(params, world, data_dir, models, grid)
    windows = drawn(params, page + [ep for ep in picked.values() if ep is not None])
    cfg = next(iter(models.values())).cfg
    caps = evaluate.suite_caps(data_dir, params)
    shape = (cfg.n_layers, cfg.n_heads)
    raw = explorer_page.blob(
        params, world, data_dir, model_table(params), page, shape, windows, caps
    )
    out.mkdir(parents=True, exist_ok=True)
    explorer_page.write(out / PAGE, selection_text(params), raw)
    paths = [out / PAGE]
    paths += animations.write_all(params, world, picked, windows, out)
    paths.append(embeddings.draw(params, models, out, max(caps.values())))
    return paths
