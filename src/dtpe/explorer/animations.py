"""Episode animations: per grid size one GIF (figures/episodes/N{size}.gif), a row per variant,
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
from PIL import Image, ImageDraw, ImageFont

from dtpe.names import model_name
from dtpe.world import pictures

KINDS = ("success", "failure")
FPS = 6
HOLD = 2 * FPS
"""frames the last state stays on screen before the GIF loops"""


FOLDER = "episodes"
MARGIN, TITLE, HEADER, FONT_SIZE, MIN_SIDE = 6, 26, 16, 10, 120
"""pixels: between panels, above each panel (its two-line title), above all (the heading); font
size; the least side of a panel (small grids are scaled up by whole cells so titles fit)"""
BACKGROUND, INK, PATH, EMPTY_PANEL = (255, 255, 255), (0, 0, 0), (214, 39, 40), (235, 235, 235)


def palette(cells: np.ndarray) -> Image.Image:
    """Every colour a frame holds (the world's cells, text, path, an empty panel): frames map
    onto it exactly."""
    image = Image.new("P", (1, 1))
    colours = [*map(tuple, cells), INK, PATH, EMPTY_PANEL]
    image.putpalette([int(c) for rgb in colours for c in rgb])
    return image


def gif_name(size: int) -> str:
    return f"N{size}.gif"


def representatives(grid: pd.DataFrame, params, size: int) -> dict[tuple[str, str], int | None]:
    """{(variant, "success" | "failure"): layout id, or None where the first seed's model has
    no such episode on this grid size}; no keys for a variant that did not play it at the
    training context (evaluate.grid_sizes). grid: explorer.training's rows."""
    seed = params.shown_seeds()[0]
    picked = {}
    for e in params.study.variants:
        rows = grid[(grid.model == model_name(e, seed)) & (grid.grid_size == size)]
        if rows.empty:
            continue
        won = rows[rows.success == 1].sort_values(["steps", "layout_id"])
        lost = rows[rows.success == 0].sort_values("layout_id")
        picked[e, "success"] = int(won.layout_id.iloc[(len(won) - 1) // 2]) if len(won) else None
        picked[e, "failure"] = int(lost.layout_id.iloc[0]) if len(lost) else None
    return picked


def frame(ep, t: int, cells: np.ndarray, win) -> np.ndarray:
    """The rgb picture of window `win` after t actions."""
    return pictures.rgb(win.crop(ep.replay.frames[t]), cells)


def title(ep, variant: str, kind: str, failure_words: str | None) -> str:
    """Two lines: the variant, then what the episode does (`failure_words`: how its world's
    episodes end in failure, World.ends)."""
    if ep is None:
        return f"{variant}\nno {kind}"
    if ep.row["success"]:
        return f"{variant}\n{ep.row['steps']} steps (opt. {ep.row['optimal']})"
    if ep.replay.failure:
        return f"{variant}\nends {failure_words}"
    loop = "" if ep.replay.loop is None else f", loops at {ep.replay.loop}"
    return f"{variant}\nfails{loop}"


def draw_panel(image, panel, t: int, scale: int, cells: np.ndarray, win) -> None:
    """One episode's window `win` after step t, with its path so far, at the panel's corner."""
    ep, (x, y), _ = panel
    picture = frame(ep, t, cells, win).repeat(scale, 0).repeat(scale, 1)
    image.paste(Image.fromarray(picture), (x, y))
    # (t + 1, 2) row, col
    centre = (win.cells(ep.replay.cells[: t + 1]) + 0.5) * pictures.CELL_PIXELS * scale
    if t:
        ImageDraw.Draw(image).line([(x + c, y + r) for r, c in centre], fill=PATH, width=1)


def write(params, world, picked: dict, size: int, win, out: Path) -> Path:
    """One grid size's GIF of `world` (the run's), drawing window `win` of its grids. picked:
    {(size, variant, kind): explorer.Episode or None}, without the variants that did not play
    this size.
    Frames are composed as arrays and written by Pillow: redrawing a matplotlib figure per frame
    cost ~0.3 s a frame, most of the explore step."""
    cells = world.colours
    variants = [e for e in params.study.variants if (size, e, KINDS[0]) in picked]
    scale = -(-MIN_SIDE // (win.side * pictures.CELL_PIXELS))
    high, wide = (n_cells * pictures.CELL_PIXELS * scale for n_cells in (win.rows, win.cols))
    font = ImageFont.load_default(size=FONT_SIZE)
    panels = []
    for i, e in enumerate(variants):
        for j, kind in enumerate(KINDS):
            ep = picked[size, e, kind]
            corner = (MARGIN + j * (wide + MARGIN), HEADER + i * (high + TITLE) + TITLE)
            panels.append((ep, corner, title(ep, e, kind, world.ends.failure_words)))
    width = MARGIN + 2 * (wide + MARGIN)
    canvas = Image.new("RGB", (width, HEADER + len(variants) * (high + TITLE) + MARGIN), BACKGROUND)
    draw = ImageDraw.Draw(canvas)
    draw.fontmode = "1"  # no antialiasing: the GIF's palette stays the few colours drawn
    draw.text(
        (MARGIN, 2),
        f"{size}x{size}, seed {params.shown_seeds()[0]}: success | failure",
        fill=INK,
        font=font,
    )
    for ep, (x, y), text in panels:
        draw.text((x, y - TITLE + 1), text, fill=INK, font=font, spacing=1)
        # the frame marks the maze's border, whose cells are as white as the page
        draw.rectangle((x - 1, y - 1, x + wide, y + high), fill=EMPTY_PANEL, outline=INK)
    live = [p for p in panels if p[0] is not None]
    last = {id(p): min(p[0].row["steps"], params.explorer.max_steps) for p in live}
    steps = max(last.values(), default=0)
    frames, colours = [], palette(cells)
    for f in range(steps + 1):
        image = canvas.copy()
        for panel in live:
            draw_panel(image, panel, f, scale, cells, win)
        # a finished episode's panel stays as it is: drawn once into the canvas, then left
        for panel in [p for p in live if last[id(p)] == f]:
            draw_panel(canvas, panel, f, scale, cells, win)
        live = [p for p in live if last[id(p)] > f]
        frames.append(image.quantize(palette=colours, dither=Image.Dither.NONE))
    frames += [frames[-1]] * HOLD
    path = out / FOLDER / gif_name(size)
    frames[0].save(
        path, save_all=True, append_images=frames[1:], duration=1000 // FPS, loop=0, optimize=False
    )
    return path


def write_all(params, world, picked: dict, windows: dict, out: Path) -> list[Path]:
    """Every grid size's GIF; windows: {size: window.Window}."""
    (out / FOLDER).mkdir(parents=True, exist_ok=True)
    return [write(params, world, picked, n, windows[n], out) for n in params.data.suite_sizes]
