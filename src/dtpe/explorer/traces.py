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


def play(
    model, lay, params, cap: int, wanted, as_evaluated: bool = False, context=None, played=None
) -> dict[int, dict]:
    """Traced episodes, each to at most `cap` steps, of the suite's layouts whose ids are in
    `wanted`: {layout_id: {success, steps, actions (steps,), probs (steps, actions)}}, played
    together as one batch, or with `as_evaluated` in the evaluation's own batches of
    evaluate.batch_size over the layouts its sweep played (`played`, a mask; None: all), each
    batch holding a wanted layout played whole. `context`: the window's timesteps (None: the
    training context; the caller enters a model into a longer one, `at_context`). The model
    computes each episode's row on its own, so a batch's size changes a probability by a
    float's rounding at most (tests/test_explorer.py): the same actions unless the greedy
    choice is a near tie. One batch spares a DoorKey run a grid sweep's time again (its
    failures run to MiniGrid's 10 N^2 steps); build.collect plays the evaluation's batches
    where an outcome differs from its CSV row."""
    ev = params.evaluate
    context = params.model.context if context is None else context
    if as_evaluated:
        lay = lay if played is None else lay.subset(played)
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
            context,
            ev.target_return,
            ev.precision,
            trace=True,
            cap=cap,
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
    """One episode stepped again from its actions, its first K steps kept (K = the `keep` asked
    for, or every step). T = steps."""

    frames: np.ndarray
    """(K + 1, R, C) uint8, the full grid before each kept action and after it (the stepper's
    `picture`)"""
    views: np.ndarray
    """(K + 1, ...) uint8, what the model was given at those moments (the stepper's `observe`:
    the full grid but in a world whose model sees less, MiniGrid Memory's 7 x 7 view)"""
    cells: np.ndarray
    """(K + 1, 2) int64, the agent's (row, col) at those moments"""
    milestone: np.ndarray
    """(K + 1,) bool, the world's flag of the agent at those moments (Words.milestone: in the
    maze and DoorKey, whether it holds the key)"""
    ground: np.ndarray
    """(K + 1,) uint8, the code of what the agent stands on at those moments (World.ground)"""
    heading: np.ndarray | None
    """(K + 1,) int64, the way the agent faces at those moments; None in a world without"""
    rtg: np.ndarray
    """(K,) float32, the return-to-go the model was given before each kept action"""
    success: bool
    """whether the last action reached the goal"""
    failure: bool
    """whether the last action ended the episode in failure (its world's `ends`: Memory's other
    object), not at the step cap"""
    loop: int | None
    """the first step whose state was already seen, over the whole episode (Revisits)"""

    @property
    def states(self) -> np.ndarray:
        """(K, ...) uint8, what the model saw: the observation before each kept action"""
        return self.views[:-1]


class Revisits:
    """The first step (1-based: after that many actions) whose state was already seen, a bump
    into a wall included; None while the episode never revisits one. The state is the full grid
    (in DoorKey the heading and the door too) and the agent's milestone, which the grid does not
    always show (Memory's cue seen: the expert turns round to see it and back, and has not
    looped); a shortest path never revisits a state, so this is where the agent started to go
    round. Fed one state at a time, so an episode of thousands of steps is never held whole."""

    def __init__(self):
        self.seen: set[tuple[bytes, bool]] = set()
        self.steps = 0
        self.first: int | None = None

    def add(self, frame: np.ndarray, flag: bool) -> None:
        state = (frame.tobytes(), bool(flag))
        if self.first is None and state in self.seen:
            self.first = self.steps
        self.seen.add(state)
        self.steps += 1


def replay(world, lay, actions: np.ndarray, env, target_return: float, keep=None) -> Replay:
    """Steps layout `lay` (one layout of `world`, the run's) with `actions` in the world's
    stepper, keeping the first `keep` steps (None: all; the page shows `explorer.max_steps`,
    and a 1,600-cell T-Maze episode's frames are 2.6 MB); the return-to-go falls by each reward
    in float32, as in the rollout."""
    if len(lay) != 1:
        raise ValueError(f"replay takes one layout, got {len(lay)}")
    keep = len(actions) if keep is None else min(keep, len(actions))
    game = world.replay_env(lay, env)
    view, frame = game.reset()[0], game.picture()[0]
    revisits = Revisits()
    moments: dict[str, list] = {k: [] for k in ("frames", "views", "cells", "flags", "ground")}
    heading, rtg = [], []
    current = torch.tensor([float(target_return)])

    def note(pos, flag) -> None:
        """the moment before the next action (or after the last), kept"""
        for key, value in zip(
            moments,
            (frame, view, pos[0].copy(), bool(flag[0]), world.ground(lay, game.state)[0]),
        ):
            moments[key].append(value)
        heading.append(world.heading(game.state))

    for t, action in enumerate(actions):
        if game.done[0]:
            raise ValueError(f"the episode ended after {t} of {len(actions)} actions")
        pos, flag = world.agent(game.state)
        revisits.add(frame, flag[0])
        if t <= keep:
            note(pos, flag)
        if t < keep:
            rtg.append(float(current[0]))
        obs, reward, _, _ = game.step(np.array([action]))
        view, frame = obs[0], game.picture()[0]
        current -= torch.from_numpy(reward.astype(np.float32))
    pos, flag = world.agent(game.state)
    revisits.add(frame, flag[0])
    if keep == len(actions):
        note(pos, flag)
    return Replay(
        frames=np.stack(moments["frames"]),
        views=np.stack(moments["views"]),
        cells=np.stack(moments["cells"]),
        milestone=np.array(moments["flags"]),
        ground=np.array(moments["ground"], dtype=np.uint8),
        heading=None if heading[0] is None else np.array([h[0] for h in heading], np.int64),
        rtg=np.array(rtg, dtype=np.float32),
        success=bool(game.success[0]),
        failure=bool(game.failure[0]),
        loop=revisits.first,
    )


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
    # each row copied out: a view would keep the whole (windows, L, H, 3K, 3K) map alive, ~35
    # MB an episode at context 32, which took a T-Maze run's explore step past 24 GiB
    for t in range(first):
        q = TOKENS_PER_STEP * t + 1  # step t's state token
        rows.append(w[:, :, q, : q + 1].cpu().numpy().copy())
    if steps > context:
        # Sliding windows: one per later step, each re-indexed from k = 0, run as one batch.
        idx = torch.arange(context, steps, device=dev)[:, None] - context + 1
        idx = idx + torch.arange(context, device=dev)  # (S, K) timesteps of each window
        out, weights = layer_attention(model, rtg[idx], states[idx], acts[idx], times[idx])
        logits.append(out[:, -1])
        w = torch.stack(weights, 1)  # (S, L, H, 3K, 3K)
        q = TOKENS_PER_STEP * (context - 1) + 1
        rows.extend(w[:, :, :, q, : q + 1].cpu().numpy().copy())
    return rows, torch.cat(logits).float().cpu().numpy()
