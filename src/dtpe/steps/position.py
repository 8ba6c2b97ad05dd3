"""Does a model carry position beyond training? One model at the whole-episode context (the
longest of evaluate.contexts) with its positions altered at inference, never retrained
(docs/protocol.md, Evaluations):

- RoPE's scalings (position.scalings) on every suite, so that they have curves and horizons of
  their own: evaluate.context_sweep at that context with those scalings; an encoding without
  them plays none (no rows).
- each encoding switched off (position.ablate) on the suites position.sizes, the layouts its own
  context sweep played, so that each episode pairs with its own: a model whose success does not
  move uses no position there. N/A where the trained model cannot index the context; no rows for
  an encoding with nothing to switch off (NoPE, t `none`)."""

from __future__ import annotations

from dataclasses import replace

import pandas as pd

from dtpe.model.encodings import NotApplicable, carries_position
from dtpe.steps import evaluate

COLUMNS = [*evaluate.COLUMNS, "altered"]
"""`altered`: a scaling's name, or `k off` / `t off`"""


def whole_episode_context(params) -> int:
    return max(params.evaluate.contexts)


def played(model, params, data_dir, variant, seed, grid: pd.DataFrame) -> pd.DataFrame:
    """Every altered episode of the model (COLUMNS); `grid` is its grid sweep."""
    frames = [
        scaled(model, params, data_dir, variant, seed, grid),
        switched_off(model, params, data_dir, variant, seed),
    ]
    frames = [f for f in frames if len(f)]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)


def scaled(model, params, data_dir, variant, seed, grid: pd.DataFrame) -> pd.DataFrame:
    """Every suite at the whole-episode context with each of position.scalings."""
    if not params.position.scalings:
        return pd.DataFrame(columns=COLUMNS)
    ev = replace(
        params.evaluate,
        contexts=[whole_episode_context(params)],
        rope_scaling=list(params.position.scalings),
    )
    rows = evaluate.context_sweep(
        model, replace(params, evaluate=ev), data_dir, variant, seed, grid
    )
    return rows.rename(columns={"rope_scaling": "altered"})[COLUMNS]


def switched_off(model, params, data_dir, variant, seed) -> pd.DataFrame:
    """The suites position.sizes at the whole-episode context with each of position.ablate switched
    off in turn."""
    context, frames = whole_episode_context(params), []
    for axis in params.position.ablate:
        if not carries_position(getattr(model, f"{axis}_encoding")):
            continue
        for size in params.position.sizes:
            lay, optimal_steps, cap = evaluate.played_suite(data_dir, size, params)
            try:
                with model.at_context(context), model.switched_off(axis):
                    rows = evaluate.suite_rows(
                        model, lay, optimal_steps, cap, context, params, variant, seed
                    )
            except NotApplicable:  # the trained model cannot index the context: nor its own rows
                rows = evaluate.not_applicable(
                    evaluate.unplayed(lay, optimal_steps, context, variant, seed)
                )
            frames.append(rows.assign(altered=f"{axis} off"))
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(columns=COLUMNS)
