"""Attention analysis (PROTOCOL §5.3) on BFS-optimal episodes of one evaluation suite:
the final layer's attention over a window of up to K timesteps from each episode's start,
averaged over heads and episodes (the heatmap); its mean weight at each token distance
(distance decay); and the translation check: the same window indexed k = 0..L-1 and again
k = shift..shift+L-1, compared weight by weight. An encoding that only sees relative positions
(RoPE) gives equal maps; one that cannot index that far (the learned table) is not applicable."""

from __future__ import annotations

import numpy as np
import torch

from dtpe import dataset
from dtpe.encodings import NotApplicable


def episode_windows(params, data_dir):
    """Windows (B, L) of the first `attention.episodes` optimal episodes of the suite,
    L = min(K, shortest)."""
    lay, _ = dataset.load_suite(data_dir, params.attention.grid_size)
    lay = lay.subset(slice(0, params.attention.episodes))
    eps = dataset.rollout_episodes(
        lay, np.ones(len(lay), bool), 0.0, params.env, np.random.default_rng(0)
    )
    off = eps["offsets"]
    width = int(min(params.model.context, np.diff(off).min()))
    steps = off[:-1, None] + np.arange(width)  # (B, L)
    return {
        "rtg": torch.from_numpy(eps["rtg"][steps]),
        "states": torch.from_numpy(eps["states"][steps]),
        "actions": torch.from_numpy(eps["actions"][steps].astype(np.int64)),
        "timesteps": torch.from_numpy(eps["timesteps"][steps].astype(np.int64)),
    }


@torch.no_grad()
def final_layer(model, win, k_offset=0) -> torch.Tensor:
    """(B, H, 3L, 3L) final-layer attention weights, fp32."""
    _, weights = model(
        win["rtg"],
        model.encode_states(win["states"]),
        win["actions"],
        win["timesteps"],
        k_offset=k_offset,
        need_attention=True,
    )
    return weights


def analyse(model, params, data_dir, encoding: str, seed: int) -> dict:
    win = episode_windows(params, data_dir)
    weights = final_layer(model, win)
    heatmap = weights.mean((0, 1))  # (3L, 3L)
    n = heatmap.shape[0]
    decay = [float(torch.diagonal(heatmap, -d).mean()) for d in range(n)]
    causal = torch.ones(n, n, dtype=torch.bool).tril()
    translation = {"applicable": True, "shift": params.attention.shift}
    try:
        shifted = final_layer(model, win, k_offset=params.attention.shift)
        diff = (shifted - weights).abs()[..., causal]
        translation.update(mean_abs_diff=float(diff.mean()), max_abs_diff=float(diff.max()))
    except NotApplicable as e:
        translation.update(applicable=False, mean_abs_diff=None, max_abs_diff=None, reason=str(e))
    return {
        "encoding": encoding,
        "seed": seed,
        "grid_size": params.attention.grid_size,
        "window_timesteps": n // 3,
        "episodes": len(win["rtg"]),
        "distance_decay": decay,
        "heatmap": heatmap.tolist(),
        "translation": translation,
    }
