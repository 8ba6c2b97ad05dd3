"""Episodes of the evaluation replayed step by step, for the explorer and the animations.

`play` runs the wanted layouts of a suite as `evaluate.suite_rows` does (the same lockstep
rollout) with `trace=True`, so each episode's actions are the evaluation's own. `replay` steps
one layout with those actions in its world's stepper to recover what the model saw:
observations, cells, the key, the return-to-go. `attention` teacher-forces each step's window
through the model and keeps every layer's attention of that step's state token.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from dtpe.model.layer_weights import layer_attention
from dtpe.model.transformer import TOKENS_PER_STEP
from dtpe.steps import rollout


def play(model, lay, params, wanted: np.ndarray, as_evaluated: bool = False) -> dict[int, dict]:
    """Traced episodes of the suite's layouts whose ids are in `wanted`: {layout_id: {success,
    steps, actions (steps,), probs (steps, actions)}}, played together as one batch, or with
    `as_evaluated` in the evaluation's own batches of evaluate.batch_size (each batch holding a
    wanted layout played whole). The model computes each episode's row on its own, so a batch's
    size changes a probability by a float's rounding at most (tests/test_explorer.py): the
    same actions unless the greedy choice is a near tie. One batch spares a DoorKey run a grid
    sweep's time again (its failures run to MiniGrid's 10 N^2 steps); build.collect plays the
    evaluation's batches where an outcome differs from its CSV row."""
    ev = params.evaluate
    if as_evaluated:
        starts = range(0, len(lay), ev.batch_size)
        batches = [lay.subset(slice(i, i + ev.batch_size)) for i in starts]
        batches = [b for b in batches if np.isin(b.ids, wanted).any()]
    else:
        batches = [lay.subset(np.flatnonzero(np.isin(lay.ids, wanted)))]
    out = {}
    for batch in batches:
        run = rollout.rollout(
            model,
            batch,
            params.env,
            params.model.context,
            ev.target_return,
            ev.precision,
            trace=True,
        )
        for j in np.flatnonzero(np.isin(batch.ids, wanted)):
            steps = int(run["steps"][j])
            out[int(batch.ids[j])] = {
                "success": bool(run["success"][j]),
                "steps": steps,
                "actions": run["actions"][j, :steps],
                "probs": run["probs"][j, :steps],
            }
    return out


@dataclass
class Replay:
    """One episode stepped again from its actions. T = steps."""

    frames: np.ndarray
    """(T + 1, N, N) uint8, the full grid before each action and after the last (the stepper's
    `picture`)"""
    views: np.ndarray
    """(T + 1, ...) uint8, what the model was given at those moments (the stepper's `observe`:
    the full grid but in a world whose model sees less, MiniGrid Memory's 7 x 7 view)"""
    cells: np.ndarray
    """(T + 1, 2) int64, the agent's (row, col) at those moments"""
    milestone: np.ndarray
    """(T + 1,) bool, the world's flag of the agent at those moments (Words.milestone: in the
    maze and DoorKey, whether it holds the key)"""
    ground: np.ndarray
    """(T + 1,) uint8, the code of what the agent stands on at those moments (World.ground)"""
    heading: np.ndarray | None
    """(T + 1,) int64, the way the agent faces at those moments; None in a world without"""
    rtg: np.ndarray
    """(T,) float32, the return-to-go the model was given before each action"""
    success: bool
    """whether the last action reached the goal"""
    failure: bool
    """whether the last action ended the episode in failure (its world's `ends`: Memory's other
    object), not at the step cap"""

    @property
    def states(self) -> np.ndarray:
        """(T, ...) uint8, what the model saw: the observation before each action"""
        return self.views[:-1]


def replay(world, lay, actions: np.ndarray, env, target_return: float) -> Replay:
    """Steps layout `lay` (one layout of `world`, the run's) with `actions` in the world's
    stepper; the return-to-go falls by each reward in float32, as in the rollout."""
    if len(lay) != 1:
        raise ValueError(f"replay takes one layout, got {len(lay)}")
    game = world.replay_env(lay, env)
    views = [game.reset()[0]]
    frames = [game.picture()[0]]
    cells, flags, ground, heading, rtg = [], [], [], [], []
    current = torch.tensor([float(target_return)])
    for action in actions:
        if game.done[0]:
            raise ValueError(f"the episode ended after {len(rtg)} of {len(actions)} actions")
        pos, flag = world.agent(game.state)
        cells.append(pos[0].copy())
        flags.append(bool(flag[0]))
        ground.append(world.ground(lay, game.state)[0])
        heading.append(world.heading(game.state))
        rtg.append(float(current[0]))
        obs, reward, _, _ = game.step(np.array([action]))
        views.append(obs[0])
        frames.append(game.picture()[0])
        current -= torch.from_numpy(reward.astype(np.float32))
    pos, flag = world.agent(game.state)
    ground.append(world.ground(lay, game.state)[0])
    heading.append(world.heading(game.state))
    return Replay(
        frames=np.stack(frames),
        views=np.stack(views),
        cells=np.stack([*cells, pos[0].copy()]),
        milestone=np.array([*flags, bool(flag[0])]),
        ground=np.array(ground, dtype=np.uint8),
        heading=None if heading[0] is None else np.array([h[0] for h in heading], np.int64),
        rtg=np.array(rtg, dtype=np.float32),
        success=bool(game.success[0]),
        failure=bool(game.failure[0]),
    )


def loop_step(frames: np.ndarray, milestone: np.ndarray) -> int | None:
    """The first step (1-based: after that many actions) whose state was already seen, a bump
    into a wall included; None if the episode never revisits one. The state is the full grid
    (in DoorKey the heading and the door too) and the agent's milestone, which the grid does not
    always show (Memory's cue seen: the expert turns round to see it and back, and has not
    looped); a shortest path never revisits a state, so this is where the agent started to go
    round."""
    seen = set()
    for t, (frame, flag) in enumerate(zip(frames, milestone)):
        state = (frame.tobytes(), bool(flag))
        if state in seen:
            return t
        seen.add(state)
    return None


@torch.no_grad()
def attention(model, rep: Replay, actions: np.ndarray, context: int):
    """Teacher-forces the episode's first len(actions) steps: returns (rows, logits). rows[t]
    (L, H, 3w - 1) float32 is the attention of step t's state token over the tokens of its
    window (w = min(t + 1, context) timesteps, from R of its first step to itself) in every
    layer and head; logits (T, actions) are the model's at each step's state token.

    The window is what the rollout gave the model at step t: the last `context` timesteps,
    k = 0..w-1. While the window grows (t < context) it is a prefix of the first window, and a
    causal model's rows for its state tokens are those of that window: one pass gives them all.
    """
    steps = len(actions)
    dev = next(model.parameters()).device
    states = model.encode_states(torch.from_numpy(rep.states[:steps]).to(dev))  # (T, D)
    rtg = torch.from_numpy(rep.rtg[:steps]).to(dev)
    acts = torch.from_numpy(np.asarray(actions, dtype=np.int64)).to(dev)
    times = torch.arange(steps, device=dev)
    rows, logits = [], []
    first = min(steps, context)
    out, weights = layer_attention(
        model, rtg[None, :first], states[None, :first], acts[None, :first], times[None, :first]
    )
    logits.append(out[0])
    w = torch.stack(weights, 1)[0]  # (L, H, 3F, 3F)
    for t in range(first):
        q = TOKENS_PER_STEP * t + 1  # step t's state token
        rows.append(w[:, :, q, : q + 1].cpu().numpy())
    if steps > context:
        # Sliding windows: one per later step, each re-indexed from k = 0, run as one batch.
        idx = torch.arange(context, steps, device=dev)[:, None] - context + 1
        idx = idx + torch.arange(context, device=dev)  # (S, K) timesteps of each window
        out, weights = layer_attention(model, rtg[idx], states[idx], acts[idx], times[idx])
        logits.append(out[:, -1])
        w = torch.stack(weights, 1)  # (S, L, H, 3K, 3K)
        q = TOKENS_PER_STEP * (context - 1) + 1
        rows.extend(w[:, :, :, q, : q + 1].cpu().numpy())
    return rows, torch.cat(logits).float().cpu().numpy()
