"""Attention analysis (docs/protocol.md, Evaluations) on BFS-optimal episodes of one suite:
the final layer's attention over a window of up to K timesteps from each episode's start,
averaged over heads and episodes (the heatmap); its mean weight at each token distance
(distance decay); and the translation check on the global timestep t: the same windows of
states replayed with t shifted by `attention.shift` (beyond the timesteps training sees), k
left as it is. Shifting k instead would test nothing for RoPE, whose logits depend on k
differences only (an identity); t is the position a larger grid pushes past its training range.
The check compares the final layer's attention weights and the action distributions of the
two replays: a t encoding `none` gives no change at all, a `learned` t table clamps the
shifted timesteps to its last row (encodings/t_learned.py).

Where the params list attention.milestone_sizes, the step also replays whole expert episodes of
those suites and reads the weight the last step's state token (whose
output chooses the episode's last action: the T-Maze's turn) puts on the state token of the step
where the world's milestone was first reached (the T-Maze's cue), in every layer and head (a
model can carry the cue up through earlier layers and heads): where attention goes explains
where success stops. A k encoding that cannot index an episode's length gives N/A there."""

from __future__ import annotations

import numpy as np
import torch

from dtpe.model.encodings import NotApplicable
from dtpe.model.layer_weights import layer_attention
from dtpe.model.transformer import TOKENS_PER_STEP
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


def milestone_steps(world, lay, actions: np.ndarray, lengths: np.ndarray, env) -> np.ndarray:
    """(B,) the first step whose observation comes with the world's milestone reached (the
    agent's flag, World.agent), in episodes of `actions` (B, longest) played in lockstep; -1
    where it never is."""
    game = world.replay_env(lay, env)
    game.reset()
    first = np.full(len(lay), -1, np.int64)
    for t in range(int(lengths.max())):
        flag = world.agent(game.state)[1] & (first < 0) & (t < lengths)
        first[flag] = t
        game.step(actions[:, t])
    return first


@torch.no_grad()
def milestone_attention(model, params, data_dir, size: int) -> dict:
    """At suite `size`: per expert episode (its first attention.episodes layouts), its steps,
    the step of its milestone, and every layer's and head's weight (L, H) from the last step's
    state token to that step's state token, beside the uniform weight over the tokens the query
    sees; each episode played whole, alone."""
    world = dataset.world_of(data_dir, params.env)
    lay, _ = dataset.load_suite(data_dir, size, params.env)
    lay = lay.subset(slice(0, params.attention.episodes))
    eps = world.episodes(lay, np.ones(len(lay), bool), 0.0, params.env, np.random.default_rng(0))
    off = eps["offsets"]
    lengths = np.diff(off)
    padded = np.zeros((len(lay), lengths.max()), np.int64)
    for i, (a, n) in enumerate(zip(off[:-1], lengths)):
        padded[i, :n] = eps["actions"][a : a + n]
    at = milestone_steps(world, lay, padded, lengths, params.env)
    dev = next(model.parameters()).device

    def episode(name, a, b, dtype=None):
        x = eps[name][None, a:b]
        return torch.from_numpy(x if dtype is None else x.astype(dtype)).to(dev)

    weight = []
    try:
        for i, (a, b) in enumerate(zip(off[:-1], off[1:])):
            if at[i] < 0:
                weight.append(None)
                continue
            with model.at_context(int(b - a)):
                _, layers = layer_attention(
                    model,
                    episode("rtg", a, b),
                    model.encode_states(episode("states", a, b)),
                    episode("actions", a, b, np.int64),
                    episode("timesteps", a, b, np.int64),
                )
            query = TOKENS_PER_STEP * (b - a - 1) + 1  # the last state token
            key = TOKENS_PER_STEP * at[i] + 1
            weight.append([w[0, :, query, key].float().tolist() for w in layers])
    except NotApplicable:
        weight = None
    return {
        "size": size,
        "applicable": weight is not None,
        "steps": lengths.tolist(),
        "milestone_step": at.tolist(),
        "weight": weight,
        "uniform": [1.0 / (TOKENS_PER_STEP * (n - 1) + 2) for n in lengths.tolist()],
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
        **(
            {
                "milestone": [
                    milestone_attention(model, params, data_dir, size)
                    for size in params.attention.milestone_sizes
                ]
            }
            if params.attention.milestone_sizes
            else {}
        ),
    }
