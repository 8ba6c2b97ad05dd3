"""The cosine-similarity matrices of the position embeddings (figures/embeddings.png): what a
model adds to its tokens for each k (in-window index) and each t (global timestep).

An encoding's embedding is read through its own hook, `add_to_input` on zeros, so the figure
needs no knowledge of any one encoding; encodings that add nothing to the input (rotary, bias
and no-position encodings) have no embedding and no panel. An embedding that is the same in
every model (a fixed function such as the sinusoids) gets one panel; a learned one gets a panel
per model. k runs over the training context; t over every timestep an evaluation episode
reaches, with the training episodes' range marked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch
from matplotlib.figure import Figure

from dtpe.model.encodings import Encoding
from dtpe.world import catalog as worlds

FILE = "embeddings.png"


def positions(params, axis: str, longest: int) -> int:
    """How many positions of `axis` the figure shows: a k encoding's trained context, a t
    encoding's `longest` timesteps (the evaluation's longest cap)."""
    if axis == "k":
        return params.model.context
    return longest


@torch.no_grad()
def embedding(encoding, count: int) -> np.ndarray | None:
    """(count, D) vectors the encoding adds at positions 0..count-1, None if it adds nothing.
    Positions take the shape the model gives each axis: (T,) for k, (B, T, 1) for t."""
    at = torch.arange(count)
    if encoding.axis == "t":
        at = at[None, :, None]
    zeros = torch.zeros(*at.shape, encoding.d_model)
    added = encoding.add_to_input(zeros, at).reshape(count, -1).float().numpy()
    return None if not np.any(added) else added


def cosine(vectors: np.ndarray) -> np.ndarray:
    unit = vectors / np.linalg.norm(vectors, axis=1, keepdims=True).clip(1e-12)
    return unit @ unit.T


def panels(params, models: dict, longest: int) -> list[tuple[str, np.ndarray]]:
    """[(title, similarity matrix)] over every model's encodings that have an embedding."""
    groups: dict[tuple[str, str], list[tuple[str, np.ndarray]]] = {}
    for name, model in models.items():
        for enc in (m for m in model.modules() if isinstance(m, Encoding)):
            vectors = embedding(enc, positions(params, enc.axis, longest))
            if vectors is not None:
                groups.setdefault((enc.axis, enc.name), []).append((name, cosine(vectors)))
    out = []
    for (axis, enc), found in groups.items():
        if len(found) > 1 and all(np.allclose(found[0][1], m, atol=1e-6) for _, m in found):
            out.append((f"{axis}: {enc} (the same in {len(found)} models)", found[0][1]))
        else:
            out += [(f"{axis}: {enc}, {name}", m) for name, m in found]
    return out


def draw(params, models: dict, out: Path, longest: int) -> Path:
    """Writes the figure, t encodings over `longest` timesteps; a configuration with no
    embedding at all says so on the figure."""
    shown = panels(params, models, longest)
    cols = min(4, max(1, len(shown)))
    rows = max(1, -(-len(shown) // cols))
    fig = Figure(figsize=(3 * cols, 2.9 * rows), layout="constrained")
    axes = np.asarray(fig.subplots(rows, cols, squeeze=False)).ravel()
    image = None
    trained_t = params.env.cap(params.data.train_size)
    for ax, (label, sim) in zip(axes, shown):
        image = ax.imshow(sim, vmin=-1, vmax=1, cmap="RdBu_r")
        ax.set_title(label, fontsize=8)
        axis = label.split(":")[0]
        ax.set_xlabel(f"{axis} position", fontsize=7)
        ax.set_ylabel(f"{axis} position", fontsize=7)
        ax.tick_params(labelsize=6)
        if axis == "t" and trained_t < len(sim):
            for draw_line in (ax.axvline, ax.axhline):
                draw_line(trained_t - 0.5, color="black", linewidth=0.6, linestyle="--")
    for ax in axes[len(shown) :]:
        ax.set_axis_off()
    if image is None:
        axes[0].text(0.5, 0.5, "no encoding adds an embedding", ha="center", va="center")
    else:
        fig.colorbar(image, ax=list(axes), shrink=0.8, label="cosine similarity")
    trained = worlds.get(params.env.world).words.size.format(n=params.data.train_size)
    fig.suptitle(
        "Cosine similarity of the position embeddings\n"
        f"(t: dashed at {trained_t}, the end of the {trained} training episodes)",
        fontsize=9,
    )
    path = out / FILE
    fig.savefig(path, dpi=110)
    return path
