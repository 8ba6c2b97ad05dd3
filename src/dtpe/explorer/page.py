"""The explorer's page: page.html (vanilla JS, no library, no network) with the episodes
embedded as one gzip + base64 blob that the browser unpacks with its own DecompressionStream.

The blob is a 4-byte little-endian length, that many bytes of JSON (models, layouts, episodes),
then the binary part: per episode, at its `off`, the action probabilities (shown steps x
actions bytes, p * 255) and then, step by step, the attention of the step's state token over
its window's 3w - 1 tokens, layer by layer and head by head, one byte each holding
round(sqrt(a) * 15):
16 levels whose square root scale keeps weights as small as 1/225 visible.
"""

from __future__ import annotations

import base64
import gzip
import json
import struct
from importlib import resources

import numpy as np

from dtpe.steps import dataset
from dtpe.world import pictures

DATA_MARK = "@@EPISODES@@"
TEXT_MARK = "@@SELECTION@@"
ATTENTION_LEVELS = 15
"""attention bytes run 0..ATTENTION_LEVELS on a square-root scale"""


def quantize_attention(rows: list[np.ndarray]) -> np.ndarray:
    """Per-step (L, H, 3w - 1) attention rows -> one uint8 array, step by step."""
    if not rows:
        return np.zeros(0, np.uint8)
    flat = np.concatenate([r.ravel() for r in rows]).clip(0, 1)
    return np.round(np.sqrt(flat) * ATTENTION_LEVELS).astype(np.uint8)


def episode_record(ep, model_index: int, offset: int, grid: np.ndarray, shown: int, win):
    """(the episode's JSON record, its binary part) for an explorer.Episode of layout `grid`
    (R, C), of which the first `shown` steps are kept, its cells as indices in window `win`."""
    rep, drawn = ep.replay, win.crop(grid)
    reached = np.flatnonzero(rep.milestone[: shown + 1])
    probs = np.round(np.asarray(ep.played["probs"][:shown]).clip(0, 1) * 255).astype(np.uint8)
    binary = probs.tobytes() + quantize_attention(ep.attention[:shown]).tobytes()
    record = {
        "m": model_index,
        "size": ep.size,
        "layout": ep.layout,
        "success": ep.row["success"],
        "failed": ep.replay.failure,
        "steps": ep.row["steps"],
        "shown": shown,
        "optimal": ep.row["optimal"],
        "loop": rep.loop,
        "milestone": int(reached[0]) if len(reached) else None,
        "ground": rep.ground[: shown + 1].tolist(),
        "heading": None if rep.heading is None else rep.heading[: shown + 1].tolist(),
        "actions": "".join(str(int(a)) for a in ep.played["actions"][:shown]),
        "rtg": np.round(rep.rtg[:shown].astype(float), 4).tolist(),
        "cells": win.index(rep.cells[: shown + 1]).tolist(),
        "changes": [changes(win.crop(f), drawn) for f in rep.frames[: shown + 1]],
        "off": offset,
    }
    return record, binary


def changes(frame: np.ndarray, grid: np.ndarray) -> list[list[int]]:
    """[cell (row-major index), code] of each cell where observation `frame` differs from its
    layout's `grid`: the agent, and whatever it has moved (the key, the door)."""
    return [[int(i), int(frame.flat[i])] for i in np.flatnonzero(frame.ravel() != grid.ravel())]


def layouts_json(suites: dict, episodes, windows: dict) -> dict:
    """{size: {layout id: {grid: row-major codes of its window as one string of base-36 digits,
    start: its index in the window}}} of the layouts the episodes play. suites: {size:
    Layouts}; windows: {size: window.Window}."""
    out = {}
    for n in sorted({ep.size for ep in episodes}):
        lay, win = suites[n], windows[n]
        out[str(n)] = {}
        for i in sorted({ep.layout for ep in episodes if ep.size == n}):
            (j,) = np.flatnonzero(lay.ids == i)
            codes = win.crop(lay.grid[j]).ravel()
            out[str(n)][str(i)] = {
                "grid": "".join(np.base_repr(c, 36).lower() for c in codes),
                "start": int(win.index(lay.start[j])),
            }
    return out


def blob(params, world, data_dir, models: list[dict], episodes, shape, windows, caps) -> bytes:
    """The page's data, uncompressed: `world` the run's; models: [{name, k, t, seed}]; shape:
    (layers, heads); windows: {size: window.Window}, what is drawn of each size's grids; caps:
    {size: the step cap its episodes played to}."""
    suites = {
        n: dataset.load_suite(data_dir, n, params.env)[0]
        for n in sorted({ep.size for ep in episodes})
    }
    index = {m["name"]: i for i, m in enumerate(models)}
    records, parts, offset = [], [], 0
    for ep in episodes:
        lay = suites[ep.size]
        grid = lay.grid[np.flatnonzero(lay.ids == ep.layout)[0]]
        shown = min(ep.row["steps"], params.explorer.max_steps)
        record, binary = episode_record(ep, index[ep.model], offset, grid, shown, windows[ep.size])
        records.append(record)
        parts.append(binary)
        offset += len(binary)
    head = {
        "models": models,
        "sizes": list(params.data.suite_sizes),
        "caps": {str(n): caps[n] for n in params.data.suite_sizes},
        "context": params.model.context,
        "target_return": params.evaluate.target_return,
        "layers": shape[0],
        "heads": shape[1],
        "levels": ATTENTION_LEVELS,
        "actions": list(world.vocabulary.actions),
        "milestone": world.words.milestone,
        "failure": world.ends.failure_words,
        "colours": pictures.hex_colours(world.colours),
        "names": {str(c): name for c, name in world.legend.items()},
        "windows": {str(n): w.as_list() for n, w in sorted(windows.items())},
        "layouts": layouts_json(suites, episodes, windows),
        "episodes": records,
    }
    text = json.dumps(head, separators=(",", ":")).encode()
    return struct.pack("<I", len(text)) + text + b"".join(parts)


def pack(raw: bytes) -> str:
    """gzip (no timestamp, so a rerun writes the same bytes) then base64."""
    return base64.b64encode(gzip.compress(raw, compresslevel=9, mtime=0)).decode()


def unpack(page: str) -> tuple[dict, bytes]:
    """(JSON part, binary part) of the data embedded in a written page: what the browser reads."""
    start = page.index('id="episodes">') + len('id="episodes">')
    raw = gzip.decompress(base64.b64decode(page[start : page.index("</script>", start)].strip()))
    (length,) = struct.unpack("<I", raw[:4])
    return json.loads(raw[4 : 4 + length]), raw[4 + length :]


def write(path, selection: str, raw: bytes) -> int:
    """Writes the page with its selection note and data; returns its size in bytes."""
    template = resources.files("dtpe").joinpath("explorer", "page.html").read_text()
    page = template.replace(TEXT_MARK, selection).replace(DATA_MARK, pack(raw))
    path.write_text(page)
    return len(page.encode())
