"""Attention analysis (docs/protocol.md, Evaluations) on BFS-optimal episodes of one suite:
the final layer's attention over a window of up to K timesteps from each episode's start,
averaged over heads and episodes (the heatmap); its mean weight at each token distance
(distance decay); and the translation check on the global timestep t: the same windows of
states replayed with t shifted by `attention.shift` (beyond the timesteps training sees), k
left as it is. Shifting k instead would test nothing for RoPE, whose logits depend on k
differences only (an identity); t is the position a larger grid pushes past its training range.
The check compares the final layer's attention weights and the action distributions of the
two replays: a t encoding `none` gives no change at all, a `learned` t table clamps the
shifted timesteps to its last row (encodings/t_learned.py)."""

from __future__ import annotations

import numpy as np
import torch

from dtpe.steps import dataset


def episode_windows(params, data_dir):
    """Windows (B, L) of the first `attention.episodes` optimal episodes of the suite,
    L = min(K, shortest)."""
    lay, _ = dataset.load_suite(data_dir, params.attention.grid_size, params.env)
    world = dataset.world_of(data_dir, params.env)
    lay = lay.subset(slice(0, params.attention.episodes))
    eps = world.episodes(lay, np.ones(len(lay), bool), 0.0, params.env, np.random.default_rng(0))
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
def replay(model, win, t_shift=0) -> tuple[torch.Tensor, torch.Tensor]:
    """The window's action probabilities (B, L, n_actions) and final-layer attention weights
    (B, H, 3L, 3L), fp32, with every timestep t moved by t_shift (k stays 0..L-1)."""
    logits, weights = model(
        win["rtg"],
        model.encode_states(win["states"]),
        win["actions"],
        win["timesteps"] + t_shift,
        need_attention=True,
    )
    return logits.float().softmax(-1), weights


def t_shift_check(model, win, shift: int) -> dict:
    """How much the final-layer attention (absolute change of each causal weight) and the
    action distribution (total variation distance at each state token) move when t moves by
    `shift`."""
    probs, weights = replay(model, win)
    shifted_probs, shifted_weights = replay(model, win, shift)
    n = weights.shape[-1]
    causal = torch.ones(n, n, dtype=torch.bool, device=weights.device).tril()
    diff = (shifted_weights - weights).abs()[..., causal]
    tv = 0.5 * (shifted_probs - probs).abs().sum(-1)  # (B, L)
    return {
        "applicable": True,
        "axis": "t",
        "shift": shift,
        "mean_abs_diff": float(diff.mean()),
        "max_abs_diff": float(diff.max()),
        "action_tv_mean": float(tv.mean()),
        "action_tv_max": float(tv.max()),
    }


def analyse(model, params, data_dir, variant: str, seed: int) -> dict:
    dev = next(model.parameters()).device  # the windows go where the model is (a GPU's)
    win = {name: x.to(dev) for name, x in episode_windows(params, data_dir).items()}
    _, weights = replay(model, win)
    heatmap = weights.mean((0, 1))  # (3L, 3L)
    n = heatmap.shape[0]
    decay = [float(torch.diagonal(heatmap, -d).mean()) for d in range(n)]
    return {
        "variant": variant,
        "seed": seed,
        "grid_size": params.attention.grid_size,
        "window_timesteps": n // 3,
        "episodes": len(win["rtg"]),
        "distance_decay": decay,
        "heatmap": heatmap.tolist(),
        "translation": t_shift_check(model, win, params.attention.shift),
    }
