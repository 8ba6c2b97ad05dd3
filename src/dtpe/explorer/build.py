"""`dtpe explore`: the episode and attention explorer (figures/explorer.html), the episode
animations and the position-embedding similarity figure, all from the evaluation's own
episodes and the trained checkpoints.

What the page calls a model is an arm (Arm): a checkpoint at the training context, as the grid
sweep played it, and, in a run that plays whole episodes (evaluate.whole_episode), the same
checkpoint at the whole-episode context, unscaled as the context sweep played it and with each
of RoPE's scalings as the position step played it (`rope+yarn_s42 at 1616`).

Which episodes the page shows: per grid size, `explorer.layouts_per_suite` layouts, the same for
every arm so that arms can be compared maze by maze. Half of them (rounded up) are the layouts
the most arms failed (ties: lowest layout id), the rest the lowest layout ids not yet taken,
whatever their outcome. Every shown episode is played again as its sweep played it
(traces.play) and held to its CSV row: a replay that disagrees stops the step, since then the
checkpoint or the data changed after the evaluation.
"""

from __future__ import annotations

import math
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from dtpe.explorer import animations, embeddings, traces, window
from dtpe.explorer import page as explorer_page
from dtpe.model import checkpoint
from dtpe.model.encodings import variant
from dtpe.names import model_name
from dtpe.steps import dataset, episode_csv, evaluate, position

PAGE = "explorer.html"


@dataclass(frozen=True)
class Arm:
    """What the page calls a model: a checkpoint played at a context, with a scaling."""

    variant: str
    seed: int
    context: int
    scaling: str
    name: str
    """the checkpoint's name at the training context; `rope+yarn_s42 at 1616` at another"""

    @property
    def model(self) -> str:
        """the checkpoint's name"""
        return model_name(self.variant, self.seed)

    @property
    def k(self) -> str:
        """its k encoding, with its scaling: `rope+yarn`"""
        k = variant(self.variant).k
        return k if self.scaling == evaluate.NO_SCALING else f"{k}+{self.scaling}"


def arm_of(params, variant_name: str, seed: int, context: int, scaling: str) -> Arm:
    label = variant_name if scaling == evaluate.NO_SCALING else f"{variant_name}+{scaling}"
    name = model_name(label, seed)
    if (context, scaling) != (params.model.context, evaluate.NO_SCALING):
        name = f"{name} at {context}"
    return Arm(variant_name, seed, context, scaling, name)


def sweeps(params) -> list[str]:
    """The evaluations the page plays again: the grid sweep at the training context and, where
    the run plays whole episodes (evaluate.whole_episode), the context sweep and the position
    step's scalings at the whole-episode context."""
    whole = position.whole_episode_context(params)
    return ["grid"] + ["context", "position"] * (
        params.evaluate.whole_episode and whole > params.model.context
    )


def read_rows(params, eval_dir: Path) -> pd.DataFrame:
    """Every shown model's rows of `sweeps` (N/A rows, a switched-off encoding's and other
    contexts' left out), each with its arm: `name` (Arm.name), `variant`, `seed`, `context`,
    `scaling`, its `sweep` and `batched` (whether that sweep played it in its batches: the
    context sweep takes over an episode that ended within the context below, played there). A
    missing file, or an arm lacking a suite, is an error naming it."""
    frames = []
    for e in params.study.variants:
        for s in params.shown_seeds():
            found = {}
            for sweep in sweeps(params):
                path = Path(eval_dir) / sweep / f"{model_name(e, s)}.csv"
                if not path.is_file():
                    raise FileNotFoundError(f"{path}: no {sweep} rows of {e} seed {s}")
                found[sweep] = episode_csv.read([path], params.env.world)
            grid = found["grid"].assign(scaling=evaluate.NO_SCALING)
            parts = [grid[grid.context == params.model.context].assign(batched=True, sweep="grid")]
            if "context" in found:
                parts += at_whole(params, grid, found["context"], found["position"])
            rows = pd.concat(parts, ignore_index=True)
            rows = rows[rows.applicable.astype(bool)]
            for (context, scaling), one in rows.groupby(["context", "scaling"], sort=False):
                arm = arm_of(params, e, s, int(context), scaling)
                # the grid sweep plays evaluate.grid_sizes, the whole-episode sweeps every suite
                every = params.grid_sizes() if context == params.model.context else None
                missing = set(every or params.data.suite_sizes) - set(one.grid_size)
                if missing:
                    raise ValueError(f"{arm.name}: no rows for grid sizes {sorted(missing)}")
                frames.append(one.assign(model=arm.name, variant=e, seed=s))
    rows = pd.concat(frames, ignore_index=True)
    return rows.astype({"success": int, "steps": int, "layout_id": int, "grid_size": int})


def at_whole(params, grid, swept, altered) -> list[pd.DataFrame]:
    """A model's rows at the whole-episode context (read_rows' columns but `model`): its context
    sweep's `swept`, played again there where they outlasted the context below (in the grid
    sweep `grid` or the context sweep), and its position step's `altered` with a scaling."""
    whole = position.whole_episode_context(params)
    below = max(c for c in [params.model.context, *params.evaluate.contexts] if c < whole)
    swept = swept.rename(columns={"rope_scaling": "scaling"})
    source = pd.concat([grid, swept])
    source = source[(source.context == below) & (source.scaling == evaluate.NO_SCALING)]
    outlasted = source.set_index(["grid_size", "layout_id"]).steps > below
    at = swept[swept.context == whole]
    again = outlasted.reindex(pd.MultiIndex.from_frame(at[["grid_size", "layout_id"]]))
    scaled = at.scaling != evaluate.NO_SCALING
    altered = altered[altered.altered.isin(params.position.scalings)]
    return [
        # a suite the grid sweep left out (evaluate.grid_sizes) was played whole: in a batch
        at.assign(batched=scaled.to_numpy() | again.fillna(True).to_numpy(bool), sweep="context"),
        altered.rename(columns={"altered": "scaling"}).assign(batched=True, sweep="position"),
    ]


def arms(params, rows: pd.DataFrame) -> list[Arm]:
    """The page's models in order: every shown model at the training context, then at the
    whole-episode context, unscaled before its scalings."""
    keys = rows[["variant", "seed", "context", "scaling"]].drop_duplicates()
    found = [arm_of(params, e, int(s), int(c), x) for e, s, c, x in keys.itertuples(index=False)]
    order = {e: i for i, e in enumerate(params.study.variants)}
    return sorted(
        found,
        key=lambda a: (a.context, a.scaling != evaluate.NO_SCALING, order[a.variant], a.seed),
    )


def training(params, rows: pd.DataFrame) -> pd.DataFrame:
    """The rows of the training context, unscaled: what the animations pick from."""
    return rows[(rows.context == params.model.context) & (rows.scaling == evaluate.NO_SCALING)]


def pick_layouts(rows: pd.DataFrame, size: int, count: int) -> list[int]:
    """`count` layout ids of one grid size: half (rounded up) the most failed, then the lowest."""
    rows = rows[rows.grid_size == size]
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
    ) + whole_text(params)


def whole_text(params) -> str:
    if sweeps(params) == ["grid"]:
        return ""
    scalings = ", ".join(params.position.scalings) or "none"
    return (
        f" At context {position.whole_episode_context(params)}, the whole episode, each model "
        f"plays the context sweep's episodes, and RoPE's the position step's with each of its "
        f"scalings ({scalings}), each scaling a k encoding of its own (rope+yarn)."
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


def checked(arm: Arm, lay, layout, rows, played, params, world) -> Episode:
    """The played episode of `arm` on `layout`, replayed, and held to its CSV row
    `rows.loc[layout]`."""
    if layout not in rows.index:
        raise ValueError(f"{arm.name}: no row for {lay.size}x{lay.size} layout {layout}")
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
            f"{arm.name} on {lay.size}x{lay.size} layout {layout}: the replay "
            f"({'success' if rec['success'] else 'failure'} in {rec['steps']} steps) disagrees "
            f"with its row in results/eval/{row.sweep} "
            f"({'success' if row.success else 'failure'} in {int(row.steps)} steps): "
            f"the checkpoint or the data changed since the evaluation; "
            f"run it again"
        )
    outcome = {"success": int(row.success), "steps": int(row.steps)}
    return Episode(
        arm.name,
        arm.variant,
        arm.seed,
        lay.size,
        layout,
        {**outcome, "optimal": int(row.optimal_steps)},
        rec,
        rep,
    )


def collect(params, world, data_dir: Path, models: dict, rows: pd.DataFrame, page_arms: list[Arm]):
    """Plays every arm of `page_arms` (arms') on the layouts of `world` (the run's) the page and
    the animations show, as its sweep played them. models: {checkpoint name:
    DecisionTransformer}; rows: read_rows'.
    Returns (page episodes, {(size, variant, kind): Episode or None})."""
    first_seed = params.shown_seeds()[0]
    shown = {
        n: pick_layouts(rows, n, params.explorer.layouts_per_suite) for n in params.data.suite_sizes
    }
    reps = {
        n: animations.representatives(training(params, rows), params, n)
        for n in params.data.suite_sizes
    }
    page, picked = [], {}
    for n in params.data.suite_sizes:
        lay, _, cap = evaluate.played_suite(data_dir, n, params)
        for arm in page_arms:
            trained = arm.name == arm.model
            for_gif = {
                kind: v
                for (enc, kind), v in reps[n].items()
                if trained and enc == arm.variant and arm.seed == first_seed
            }
            mine = rows[(rows.model == arm.name) & (rows.grid_size == n)].set_index("layout_id")
            if mine.empty:  # not played at this size (evaluate.grid_sizes): the page says so
                continue
            wanted = sorted(set(shown[n]) | {v for v in for_gif.values() if v is not None})
            model = models[arm.model]
            with ExitStack() as scaled:
                if not trained:
                    scaled.enter_context(model.at_context(arm.context, arm.scaling))
                played = traces.play(model, lay, params, cap, wanted, context=arm.context)
                if any(disagrees(played[i], mine, i) for i in wanted):
                    batched = mine.batched.reindex(lay.ids).fillna(False).to_numpy(bool)
                    played = traces.play(
                        model, lay, params, cap, wanted, True, arm.context, batched
                    )
                for layout in wanted:
                    ep = checked(arm, lay, layout, mine, played, params, world)
                    if layout in shown[n]:
                        first = ep.played["actions"][: params.explorer.max_steps]
                        ep.attention, _ = traces.attention(model, ep.replay, first, arm.context)
                        page.append(ep)
                    for kind, v in for_gif.items():
                        if v == layout:
                            picked[n, arm.variant, kind] = ep
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


def model_table(arms: list[Arm]) -> list[dict]:
    """The page's models: name, its k (with its scaling) and t encodings, seed, context."""
    return [
        {"name": a.name, "k": a.k, "t": variant(a.variant).t, "seed": a.seed, "context": a.context}
        for a in arms
    ]


def run(params, data_dir: Path, models_dir: Path, eval_dir: Path, out: Path) -> list[Path]:
    """Writes the explorer, the animations and the embedding figure into `out`; returns their
    paths. The run's world is looked up once, here (its data folder checked to hold it), and
    handed down."""
    world = dataset.world_of(data_dir, params.env)
    rows = read_rows(params, eval_dir)
    page_arms = arms(params, rows)
    models = {
        name: checkpoint.load(Path(models_dir) / name)
        for name in dict.fromkeys(a.model for a in page_arms)
    }
    page, picked = collect(params, world, data_dir, models, rows, page_arms)
    windows = drawn(params, page + [ep for ep in picked.values() if ep is not None])
    cfg = next(iter(models.values())).cfg
    caps = evaluate.suite_caps(data_dir, params)
    shape = (cfg.n_layers, cfg.n_heads)
    raw = explorer_page.blob(
        params, world, data_dir, model_table(page_arms), page, shape, windows, caps
    )
    out.mkdir(parents=True, exist_ok=True)
    explorer_page.write(out / PAGE, selection_text(params), raw)
    paths = [out / PAGE]
    paths += animations.write_all(params, world, picked, windows, out)
    paths.append(embeddings.draw(params, models, out, max(caps.values())))
    return paths
