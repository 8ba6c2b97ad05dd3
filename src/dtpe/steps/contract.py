"""An encoding's contract with the evaluation, checked on an untrained model before a submission
trains one (`dtpe contract`). Each check is named; the first that fails stops the submission:

- options: the encoding declares its knobs (`Encoding.options`) and each has a value in params
  (`encodings.<axis>.<name>`), so the model builds from params alone;
- not_applicable: at every context the evaluation plays, a step at the window's far end runs or
  raises NotApplicable (the sweeps' N/A rows), never another error;
- cache: at a whole-episode context beyond training, the cached rollout plays the actions of the
  one that runs the whole window every step, its logits within LOGIT_TOLERANCE;
- linear: a cached step's work grows linearly with the steps before it: the elements its
  operations write (counted, not timed, so the check is the same on every machine) grow by the
  same amount per step of history from 1x to 2x as from 2x to 4x LINEAR_HISTORY steps.

The model is the params' shape with the variant's encodings, drawn from a fixed seed, its
encodings' parameters perturbed so that a bias that starts at zero still counts."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from dtpe.model import encodings
from dtpe.model.catalog import AXES
from dtpe.model.catalog import variant as parse_variant
from dtpe.model.encodings import NotApplicable
from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.model.transformer import TOKENS_PER_STEP, DecisionTransformer
from dtpe.steps import evaluate, rollout
from dtpe.world import catalog as worlds

CHECKS = ("options", "not_applicable", "cache", "linear")
LOGIT_TOLERANCE = 1e-5
"""the largest difference allowed between a cached and an uncached step's logits"""
LINEAR_HISTORY = 64
"""steps of history of the linear check's first length (then 2x and 4x)"""
LINEAR_SLACK = 1.05
"""how much more the work per step of history may grow from the second span to the third"""


class ContractError(ValueError):
    """A check of the contract failed; `check` names it."""

    def __init__(self, check: str, variant: str, why: str):
        super().__init__(f"{variant}: the contract's check {check!r} fails: {why}")
        self.check = check


@dataclass(frozen=True)
class Passed:
    check: str
    detail: str


def model_of(params, variant: str) -> DecisionTransformer:
    """An untrained model of `variant`, the same on every call."""
    torch.manual_seed(0)
    model = DecisionTransformer(params.model_config(variant)).eval()
    with torch.no_grad():  # biases start at 0 or 1: perturb them so that they matter
        for name, w in model.named_parameters():
            if "encoding" in name:
                w.add_(torch.randn_like(w) * 0.5)
    return model


def check(params, variant: str, data_dir) -> list[Passed]:
    """Every check in CHECKS order; raises ContractError at the first that fails."""
    done = [options(params, variant)]
    model = model_of(params, variant)
    done.append(not_applicable(model, params, variant))
    done.append(cache(model, params, variant, data_dir))
    done.append(linear(model, params, variant))
    return done


def options(params, variant: str) -> Passed:
    parsed = parse_variant(variant)
    for axis in AXES:
        name = getattr(parsed, axis)
        cls = encodings.REGISTRY[axis][name]
        valued = (params.encodings.get(axis) or {}).get(name) or {}
        missing = sorted(set(cls.options) - set(valued))
        if missing:
            raise ContractError(
                "options",
                variant,
                f"{axis} encoding {name!r} declares {missing} without a value in params "
                f"(encodings.{axis}.{name})",
            )
    try:
        DecisionTransformer(params.model_config(variant))
    except KeyError as e:
        raise ContractError(
            "options", variant, f"building the model reads an undeclared option {e}"
        ) from None
    return Passed("options", "declared and valued")


def far_step(model, context: int, t: int, batch: int = 1, seed: int = 0):
    """One policy step at step t (0-based) of `batch` episodes played at `context`, the steps
    before it random states and actions and, where the window has not slid, random keys and
    values in the cache (what a step costs does not depend on what the cache holds)."""
    policy = DecisionTransformerPolicy(model, context, target_return=0.9)
    policy.start(batch, t + 1)
    brought_to(policy, t, batch, torch.Generator().manual_seed(seed))
    side = 2 * model.cfg.view_radius + 1
    obs = np.random.default_rng(seed).integers(0, model.vocabulary.n_codes, (batch, side, side))
    return policy.act(obs.astype(np.uint8), np.ones(batch, bool))


def brought_to(policy: DecisionTransformerPolicy, t: int, batch: int, g) -> None:
    """`policy` as after t steps (at most its context) of `batch` episodes: random states and
    actions and, where it caches, random keys and values (the last action's token is not yet
    run, as after a real step)."""
    model, cache = policy.model, policy.cache
    policy.state_emb[:, :t] = torch.randn(batch, t, model.cfg.d_model, generator=g)
    policy.actions[:, :t] = torch.randint(0, policy.n_actions, (batch, t), generator=g)
    policy.t = t
    if cache is None:
        return
    tokens = TOKENS_PER_STEP * t - 1
    steps = torch.arange(t).repeat_interleave(TOKENS_PER_STEP)[:tokens]  # k and t of each token
    cache.rows = torch.arange(batch)
    cache.place(steps, steps.expand(batch, -1))
    heads, head_dim = model.cfg.n_heads, model.cfg.d_model // model.cfg.n_heads
    for i in range(len(model.blocks)):
        keys, values = torch.randn(2, batch, heads, tokens, head_dim, generator=g)
        cache.layer(i).extend(keys, values)
    cache.tokens = tokens


def not_applicable(model, params, variant: str) -> Passed:
    contexts = sorted({params.model.context, *params.evaluate.contexts})
    ran, na = [], []
    for context in contexts:
        try:
            with model.at_context(context):
                far_step(model, context, context - 1)
        except NotApplicable:
            na.append(context)
            continue
        except Exception as e:  # noqa: BLE001 (any other error breaks the contract)
            raise ContractError(
                "not_applicable",
                variant,
                f"a step at context {context}, k = {context - 1}, raised {type(e).__name__}: "
                f"{e} (an encoding that cannot index a context raises NotApplicable)",
            ) from e
        ran.append(context)
    return Passed("not_applicable", f"runs at {ran}, N/A at {na}")


def whole_episode_suite(params, data_dir):
    """The smallest suite whose cap is at least twice the training context: its layouts,
    optimal steps and cap (the whole-episode context it is played at)."""
    for size in sorted(params.data.suite_sizes):
        lay, optimal_steps, cap = evaluate.played_suite(data_dir, size, params)
        if cap >= 2 * params.model.context:
            return lay, optimal_steps, cap
    raise ValueError(
        f"no suite of data.suite_sizes has a cap of twice model.context "
        f"{params.model.context} or more: the cache check plays beyond training"
    )


def cache(model, params, variant: str, data_dir) -> Passed:
    lay, _, cap = whole_episode_suite(params, data_dir)
    try:
        with model.at_context(cap):  # as the evaluation plays it
            played = {c: played_logits(model, lay, params, cap, c) for c in (True, False)}
    except NotApplicable:
        return Passed("cache", f"N/A: the encoding cannot index {cap} steps")
    (cached, cached_logits), (whole, whole_logits) = played[True], played[False]
    for key in ("success", "steps", "actions"):
        if not np.array_equal(cached[key], whole[key]):
            raise ContractError(
                "cache",
                variant,
                f"on the {lay.size} suite at context {cap}, cached and uncached rollouts differ "
                f"in their {key}",
            )
    worst = max(float((a - b).abs().max()) for a, b in zip(cached_logits, whole_logits))
    if worst > LOGIT_TOLERANCE:
        raise ContractError(
            "cache",
            variant,
            f"on the {lay.size} suite at context {cap}, a cached step's logits differ from the "
            f"whole window's by {worst:.2g} (> {LOGIT_TOLERANCE:g})",
        )
    return Passed("cache", f"{int(cached['steps'].sum())} steps alike, logits within {worst:.1g}")


def played_logits(model, lay, params, context: int, cached: bool):
    """`rollout.play`'s results at `context` with or without the cache, and each step's logits."""
    logits, step = [], model.next_action

    def recorded(*args, **kwargs):
        out = step(*args, **kwargs)
        logits.append(out)
        return out

    model.next_action = recorded
    try:
        policy = DecisionTransformerPolicy(
            model, context, params.evaluate.target_return, cached=cached
        )
        game = worlds.get(params.env.world).evaluation_env(lay, params.env)
        return rollout.play(game, policy, context, trace=True), logits
    finally:
        del model.next_action


class _Written(TorchDispatchMode):
    """Counts the elements every operation writes."""

    def __init__(self):
        super().__init__()
        self.elements = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for x in out if isinstance(out, (tuple, list)) else [out]:
            if isinstance(x, torch.Tensor):
                self.elements += x.numel()
        return out


def step_work(model, t: int) -> int:
    """The elements one cached step at step t writes."""
    with _Written() as counted:
        far_step(model, 4 * LINEAR_HISTORY + 1, t)
    return counted.elements


def linear(model, params, variant: str) -> Passed:
    n = LINEAR_HISTORY
    try:
        with model.at_context(4 * n + 1):
            work = [step_work(model, t) for t in (n, 2 * n, 4 * n)]
    except NotApplicable:
        return Passed("linear", f"N/A: the encoding cannot index {4 * n + 1} steps")
    first, second = (work[1] - work[0]) / n, (work[2] - work[1]) / (2 * n)
    if second > LINEAR_SLACK * first + 1:
        raise ContractError(
            "linear",
            variant,
            f"a cached step's work per step of history grows from {first:.0f} elements "
            f"({n}-{2 * n} steps) to {second:.0f} ({2 * n}-{4 * n}): more than linear",
        )
    return Passed("linear", f"{first:.0f} then {second:.0f} elements per step of history")
