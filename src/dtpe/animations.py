"""Episode animations: per grid size one GIF (figures/episodes/N{size}.gif), a row per encoding,
its representative success beside its representative failure, all from the first seed's model.

Representative: the success is the solved layout whose step count is the (lower) median of that
model's solved layouts (a typical solution, lowest layout id on ties); the failure is its failed
layout with the lowest id: the suite's layouts are independent random draws, so that is a random
failure, not one picked for how it looks. A panel says so where the model has none.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.animation import PillowWriter
from matplotlib.figure import Figure

from dtpe import dataset, env
from dtpe.cli import model_name
from dtpe.maze import render

KINDS = ("success", "failure")
FPS = 6
HOLD = 2 * FPS
"""frames the last state stays on screen before the GIF loops"""


FOLDER = "episodes"


def gif_name(size: int) -> str:
    return f"N{size}.gif"


def representatives(grid: pd.DataFrame, params, size: int) -> dict[tuple[str, str], int | None]:
    """{(encoding, "success" | "failure"): layout id, or None where the first seed's model has
    no such episode on this grid size}. grid: explorer.read_grid's rows."""
    seed = params.study.seeds[0]
    picked = {}
    for e in params.study.encodings:
        rows = grid[(grid.model == model_name(e, seed)) & (grid.grid_size == size)]
        won = rows[rows.success == 1].sort_values(["steps", "layout_id"])
        lost = rows[rows.success == 0].sort_values("layout_id")
        picked[e, "success"] = int(won.layout_id.iloc[(len(won) - 1) // 2]) if len(won) else None
        picked[e, "failure"] = int(lost.layout_id.iloc[0]) if len(lost) else None
    return picked


def frame(grid: np.ndarray, ep, t: int) -> np.ndarray:
    """The rgb picture after t actions (the agent where the replay puts it)."""
    obs = render(grid[None], ep.replay.cells[t][None], ep.replay.has_key[t : t + 1])[0]
    return env.rgb(obs)


def title(ep, encoding: str, kind: str) -> str:
    if ep is None:
        return f"{encoding}: no {kind}"
    if ep.row["success"]:
        return f"{encoding}: {ep.row['steps']} steps (opt. {ep.row['optimal']})"
    loop = "" if ep.loop is None else f", loops at {ep.loop}"
    return f"{encoding}: fails{loop}"


def write(params, data_dir: Path, picked: dict, size: int, out: Path) -> Path:
    """One grid size's GIF. picked: {(size, encoding, kind): explorer.Episode or None}."""
    lay, _ = dataset.load_suite(data_dir, size)
    encodings = params.study.encodings
    fig = Figure(figsize=(2 * 1.7, 1.85 * len(encodings)), layout="constrained")
    axes = np.asarray(fig.subplots(len(encodings), 2, squeeze=False))
    panels = []
    for i, e in enumerate(encodings):
        for j, kind in enumerate(KINDS):
            ax, ep = axes[i, j], picked[size, e, kind]
            ax.set_xticks([])
            ax.set_yticks([])
            ax.set_title(title(ep, e, kind), fontsize=6)
            if ep is None:
                ax.imshow(np.full((size, size, 3), 235, np.uint8))
                continue
            (k,) = np.flatnonzero(lay.ids == ep.layout)
            px = env.CELL_PIXELS
            image = ax.imshow(frame(lay.grid[k], ep, 0), extent=(0, size * px, size * px, 0))
            (path,) = ax.plot([], [], color="#d62728", linewidth=1)
            panels.append((ep, lay.grid[k], image, path))
    fig.suptitle(f"{size}×{size}, seed {params.study.seeds[0]}: success | failure", fontsize=7)
    frames = max((ep.row["steps"] for ep, *_ in panels), default=0) + 1
    path = out / FOLDER / gif_name(size)
    writer = PillowWriter(fps=FPS)
    with writer.saving(fig, str(path), dpi=80):
        for f in range(frames + HOLD):
            for ep, grid, image, line in panels:
                t = min(f, ep.row["steps"])
                image.set_data(frame(grid, ep, t))
                centre = (ep.replay.cells[: t + 1] + 0.5) * env.CELL_PIXELS  # (t + 1, 2) row, col
                line.set_data(centre[:, 1], centre[:, 0])
            writer.grab_frame()
    return path


def write_all(params, data_dir: Path, picked: dict, out: Path) -> list[Path]:
    (out / FOLDER).mkdir(parents=True, exist_ok=True)
    return [write(params, data_dir, picked, n, out) for n in params.data.suite_sizes]
