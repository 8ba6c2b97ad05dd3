"""params.yaml: loading, validation (JSON schema, then the cross-field rules a schema cannot say)
and one typed dataclass per group. Every stage validates the whole file before any work.

A run's params file may be an overlay: `base: params.yaml` and only the keys it changes. Loading
merges it onto its base (overlays.py: relative to the overlay's folder; a base may be an overlay
too), then validates the result; an error names the file that set the key at fault."""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields, replace
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from dtpe import names, overlays
from dtpe.model.config import Model, ModelConfig
from dtpe.overlays import ParamsError, chain, key_path, refuse_renamed, resolve  # noqa: F401
from dtpe.world import catalog as worlds


@dataclass(frozen=True)
class Study:
    variants: list
    """the models compared: each a k x t pair of registered encodings, `<k>` (t sinusoidal) or
    `<k>-t_<t>`; one model per variant per seed"""
    seeds: list
    """training seeds"""


@dataclass(frozen=True)
class Env:
    world: str
    """the world the study runs in: a package of world/ (world/catalog.py)"""
    step_reward: float
    """reward of every step (a penalty, <= 0)"""
    goal_reward: float
    """reward added on reaching the goal"""
    options: dict = field(default_factory=dict)
    """the world's own knobs, params `worlds.<world>` (set from there, not from `env`)"""

    def cap(self, size: int) -> int:
        """The episode's step cap at grid side `size`, as the world sets it."""
        return worlds.get(self.world).cap(size, self.options)


@dataclass(frozen=True)
class Data:
    seed: int
    """seed of the training layouts and episodes"""
    train_size: int
    """grid side of the training mazes"""
    episodes: int
    """episodes in the training data (all splits)"""
    layouts: int | None
    """distinct training layouts, each in several episodes with other detours; None: one per
    episode"""
    optimal_fraction: float
    """share of episodes from the optimal planner; the rest take detours"""
    detour_prob: float
    """sub-optimal episodes: chance per step of a random move instead of the plan"""
    split: dict
    """train/val/test fractions, by layout"""
    suite_sizes: list
    """grid sides of the evaluation suites"""
    suite_layouts: int
    """layouts per evaluation suite"""
    suite_seed: int
    """seed of the evaluation suites"""


@dataclass(frozen=True)
class Train:
    epochs: int
    targets: str
    """the label of each state: "taken" (the protocol's: the action in the data) or "expert" (the
    BFS plan's action there, so detours are seen but never imitated)"""
    batch_size: int
    lr: float
    lr_schedule: str
    """constant (the protocol's), or cosine: decays to 0 over the run's steps"""
    weight_decay: float
    grad_clip: float
    val_every: int
    """validate every this many epochs (and after the last); other epochs record no val metrics"""
    val_layouts: int
    """validation layouts rolled out after every epoch"""
    val_target_return: float
    """return-to-go given at the first step of the validation rollouts"""
    precision: str
    """bf16 (autocast) or fp32"""


@dataclass(frozen=True)
class Evaluate:
    target_return: float
    """return-to-go given to the model at the first step"""
    batch_size: int
    """episodes stepped in lockstep"""
    precision: str
    """bf16 (autocast) or fp32"""
    contexts: list
    """context lengths (timesteps) of the context sweep"""
    whole_episode: bool
    """the longest of `contexts` holds every suite's whole episode (at least the step cap of
    each suite size), so that its window never slides and the model attends to every step
    since the first; validation refuses a shorter one. The test split and the grid sweep keep
    the training context"""
    rope_scaling: list
    """inference-time scalings of rope tried at each context of the context sweep (none: the
    trained rope; linear, ntk, yarn: see encodings/rope.py)"""
    layouts_per_suite: int | None = None
    """the sweeps (and the reach ladder) play at most this many of each suite's layouts, its
    first; None: every one"""


@dataclass(frozen=True)
class Reach:
    contexts: list
    """contexts (timesteps) shorter than the training one at which the reach step plays each
    model: each at least 1 and below model.context"""
    sizes: list | None = None
    """suite sizes it plays them on, each one of data.suite_sizes; None: the training size (if it
    is a suite size) and the largest suite size"""


@dataclass(frozen=True)
class Attention:
    grid_size: int
    """suite whose episodes are analysed"""
    episodes: int
    shift: int
    """translation check: positions 0..L against shift..shift+L"""
    milestone_sizes: list
    """suites whose whole expert episodes are replayed to read the attention of the last step on
    the step where the world's milestone (Words.milestone: the T-Maze's cue) was first reached;
    empty: none"""


@dataclass(frozen=True)
class Explorer:
    layouts_per_suite: int
    """layouts per grid size on the explorer page, the same for every model: up to half of them
    (rounded up) the most failed, the rest the lowest layout ids"""
    max_steps: int
    """an episode's steps the page and the animations show: a longer one is shown up to here"""
    max_cells: int
    """a grid side longer than this is drawn over the span the shown steps reach, not whole
    (explorer/window.py)"""
    seeds: int | None
    """the first this many of the seeds every variant has are shown (None: all)"""


@dataclass(frozen=True)
class Stats:
    reference: str
    """the variant compared against each other one"""
    alpha: float
    """significance level; intervals are at confidence 1 - alpha"""
    bootstrap_resamples: int
    """resamples of the two-level (seeds, layouts) bootstrap"""
    seed: int
    """seed of the bootstrap's and the sampled permutation tests' generator"""
    floor_pct: float
    """success % the best variant of a grid size must reach for it to tell variants apart"""
    study_seeds: int
    """seeds per variant of the study reproduced: power.csv gives the gap that many seeds show
    between two equal variants by chance"""
    horizon_pct: float
    """success % a seed must hold at every suite size up to its success horizon
    (analysis/horizon.py)"""


@dataclass(frozen=True)
class Verdict:
    hypotheses: str | list
    """the primary family that the correction for multiple tests covers: `all_pairs` (every
    pair of variants at every grid size at the training context: an exploratory run's), or a
    list of declared hypotheses, each {a, b, grids, margin, context, minus}: variants a and b
    compared on their per-seed success averaged over the suite sizes `grids`, equivalent where
    |a - b| stays within `margin` points (optional); played at `context` (optional: the training
    context's grid sweep by default; another of evaluate.contexts, e.g. the whole episode), less
    the same average over the suite sizes `minus` (optional: a reach endpoint)"""
    confirmatory: bool
    """the run tests declared hypotheses on fresh seeds: its seeds may overlap no other params
    file's beside it, and a design that cannot reject is refused"""
    sequential: dict | None
    """seeds added in interims by a group-sequential test (analysis/sequential.py): {interims,
    seeds_per_interim, spending}, spending a Lan-DeMets function (analysis/group_sequential.py's
    SPENDING); study.seeds lists the cap's seeds in the order they are used. None: every seed
    trains at once and the family is Holm-adjusted"""
    reused_layouts: str | None = None
    """why a confirmatory run draws its data or suites from an exploratory run's seeds of the
    same world (its report prints it); None: it may not, and a reuse is refused"""
    amendments: list = field(default_factory=list)
    """changes to a confirmatory run's overlay after some of its models trained, each
    {from_sha256, why}: the sha256 of the overlay's content that it changed (what those models
    record, dtpe/preregistration.py) and why; `dtpe stats` refuses models that record any content
    but the overlay's now and these (its report prints them)"""
    split_alpha: bool = True
    """a declared family that claims equivalence as well as differences spends alpha / 2 on each
    kind of claim (its rejections: the looks' boundaries or Holm; its equivalence tests), so that
    all its claims together err at most alpha (bench/sequential.py); False: each kind at alpha,
    the rule the first three confirmatory runs were decided under"""

    def declared(self) -> list[dict]:
        """The declared hypotheses, margin None where none is given; [] under all_pairs."""
        if self.hypotheses == ALL_PAIRS:
            return []
        return [{"margin": None, **h} for h in self.hypotheses]

    def claim_alpha(self, alpha: float) -> float:
        """The alpha each kind of claim spends, of the run's `alpha` (split_alpha)."""
        both = any(h["margin"] is not None for h in self.declared())
        return alpha / 2 if self.split_alpha and both else alpha


ALL_PAIRS = "all_pairs"


@dataclass(frozen=True)
class Compute:
    threads: int
    """torch threads per job"""
    numerics: str
    """portable: the same bytes on every x86-64 CPU with AVX2 (dtpe/numerics.py); native: each
    CPU's fastest kernels, results reproducible on the machine that made them only"""


@dataclass(frozen=True)
class Params:
    study: Study
    encodings: dict
    """axis -> encoding -> its options (the knobs each encoding module declares): kept out of
    `model` so that a change reruns only the models whose variant uses that encoding"""
    env: Env
    worlds: dict
    """world -> its knobs (the options each world package declares), read by that world alone"""
    data: Data
    model: Model
    train: Train
    evaluate: Evaluate
    reach: Reach
    attention: Attention
    explorer: Explorer
    stats: Stats
    verdict: Verdict
    compute: Compute

    def shown_seeds(self) -> list:
        """The seeds the explorer shows: of the seeds every variant has (all of study.seeds, or
        a sequential run's first interim: later ones train only the undecided variants), the
        first `explorer.seeds` (None: all)."""
        seeds = list(self.study.seeds)
        if self.verdict.sequential:
            seeds = seeds[: self.verdict.sequential["seeds_per_interim"]]
        return seeds[: self.explorer.seeds]

    def reach_sizes(self) -> list:
        """The suite sizes the reach step plays: reach.sizes, or the training size (where it is a
        suite size) and the largest suite size."""
        if self.reach.sizes is not None:
            return sorted(self.reach.sizes)
        suites = self.data.suite_sizes
        return sorted({max(suites), *(n for n in suites if n == self.data.train_size)})

    def model_config(self, variant: str) -> ModelConfig:
        """The config of variant `variant`'s model: the `model` group and the options of the
        variant's encodings."""
        from dtpe.model.catalog import options_of

        return ModelConfig(
            **asdict(self.model),
            variant=variant,
            options=options_of(variant, self.encodings),
            world=self.env.world,
        )


def schema() -> dict:
    return yaml.safe_load(resources.files("dtpe").joinpath("params.schema.yaml").read_text())


# JSON Schema counts 8.0 as an integer; a YAML float in a count or size would pass validation
# and fail later, inside a step, far from the key that caused it.
_Validator = jsonschema.validators.extend(
    jsonschema.Draft202012Validator,
    type_checker=jsonschema.Draft202012Validator.TYPE_CHECKER.redefine(
        "integer", lambda _, value: isinstance(value, int) and not isinstance(value, bool)
    ),
)


def check(raw: dict, origin: Callable[[tuple], Path] | None = None) -> Params:
    """Validates a params mapping and returns it typed; raises ParamsError naming the failing
    key, and the file that set it when `origin` (key path -> file, as `load` passes) is given."""

    def key(path) -> str:
        named = f"params key {key_path(path)}"
        return f"{origin(tuple(path))}: {named}" if origin else named

    if not isinstance(raw, dict):
        raise ParamsError("params: expected a mapping of groups")
    refuse_renamed(raw, "")
    errors = sorted(_Validator(schema()).iter_errors(raw), key=lambda e: list(e.path))
    if errors:
        raise ParamsError("; ".join(f"{key(e.path)}: {e.message}" for e in errors))
    # a copy: the typed params must not change with the mapping they were read from
    raw = copy.deepcopy(raw)
    p = Params(**{name: group(**raw[name]) for name, group in _GROUPS.items()})
    _check_world(p, key)
    p = replace(p, env=replace(p.env, options=dict(p.worlds.get(p.env.world, {}))))
    _check_semantics(p, key)
    return p


def _check_semantics(p: Params, key: Callable[[tuple], str]) -> None:
    from dtpe.model.catalog import state_encoders, variant

    total = sum(p.data.split.values())
    if not math.isclose(total, 1.0, abs_tol=1e-9):
        raise ParamsError(f"{key(('data', 'split'))}: fractions sum to {total}, not 1")
    for name in p.study.variants:
        try:
            variant(name)
        except ValueError as e:
            raise ParamsError(f"{key(('study', 'variants'))}: {e}") from None
    if p.stats.reference not in p.study.variants:
        raise ParamsError(
            f"{key(('stats', 'reference'))}: {p.stats.reference!r} is not in study.variants"
        )
    _check_options(p.encodings, key)
    if p.model.state_encoder not in state_encoders():
        raise ParamsError(
            f"{key(('model', 'state_encoder'))}: unknown {p.model.state_encoder!r}; "
            f"registered: {sorted(state_encoders())}"
        )
    if p.model.d_model % p.model.n_heads or (p.model.d_model // p.model.n_heads) % 2:
        raise ParamsError(
            f"{key(('model', 'n_heads'))}: d_model {p.model.d_model} must split into "
            f"{p.model.n_heads} heads of even size"
        )
    if p.model.d_model % 2:
        raise ParamsError(
            f"{key(('model', 'd_model'))}: must be even (sinusoidal encodings pair sin and cos)"
        )
    _check_verdict(p, key)
    _check_reach(p, key)
    _check_whole_episode(p, key)
    _check_milestone(p, key)
    if p.data.layouts is not None and p.data.layouts > p.data.episodes:
        raise ParamsError(
            f"{key(('data', 'layouts'))}: {p.data.layouts} layouts for {p.data.episodes} "
            "episodes: at most one layout an episode"
        )
    counted = ("layouts", p.data.layouts) if p.data.layouts else ("episodes", p.data.episodes)
    split_counts = split_sizes(counted[1], p.data.split)
    if min(split_counts.values()) < 1:
        raise ParamsError(
            f"{key(('data', counted[0]))}: {counted[1]} {counted[0]} leave a split empty: "
            f"{split_counts}"
        )


def _check_verdict(p: Params, key: Callable[[tuple], str]) -> None:
    """Declared hypotheses name variants of the study and suite sizes it plays; a sequential or
    confirmatory run declares its family; a sequential run lists the cap's seeds, interim by
    interim."""
    v = p.verdict
    at = key(("verdict", "hypotheses"))
    seen = set()
    for i, h in enumerate(v.declared()):
        for side in "ab":
            if h[side] not in p.study.variants:
                raise ParamsError(f"{at}[{i}].{side}: {h[side]!r} is not in study.variants")
        if h["a"] == h["b"]:
            raise ParamsError(f"{at}[{i}]: compares {h['a']!r} with itself")
        for field_ in ("grids", "minus"):
            missing = sorted(set(h.get(field_) or []) - set(p.data.suite_sizes))
            if missing:
                raise ParamsError(f"{at}[{i}].{field_}: {missing} not in data.suite_sizes")
        both = sorted(set(h["grids"]) & set(h.get("minus") or []))
        if both:
            raise ParamsError(f"{at}[{i}].minus: {both} are in its grids too")
        played = {p.model.context, *p.evaluate.contexts}
        if h.get("context") and h["context"] not in played:
            raise ParamsError(
                f"{at}[{i}].context: {h['context']} is not a context the evaluation plays "
                f"(model.context {p.model.context}, evaluate.contexts {p.evaluate.contexts})"
            )
        pair = (frozenset((h["a"], h["b"])), names.endpoint_key(h))
        if pair in seen:
            raise ParamsError(
                f"{at}[{i}]: {h['a']} against {h['b']} on {names.endpoint_key(h)} twice"
            )
        seen.add(pair)
    if (v.confirmatory or v.sequential) and not v.declared():
        what = "a confirmatory" if v.confirmatory else "a sequential"
        raise ParamsError(f"{at}: {what} run declares its hypotheses, not {ALL_PAIRS}")
    if v.sequential:
        cap = v.sequential["interims"] * v.sequential["seeds_per_interim"]
        if len(p.study.seeds) != cap:
            raise ParamsError(
                f"{key(('study', 'seeds'))}: {len(p.study.seeds)} seeds, but verdict.sequential "
                f"caps the run at {v.sequential['interims']} interims x "
                f"{v.sequential['seeds_per_interim']} = {cap}: list the cap's seeds in order"
            )


def _check_reach(p: Params, key: Callable[[tuple], str]) -> None:
    """The reach step's contexts lie below the training context (it reads the training
    context's episodes from the grid sweep) and its sizes are suite sizes."""
    for i, context in enumerate(p.reach.contexts):
        if context >= p.model.context:
            raise ParamsError(
                f"{key(('reach', 'contexts', i))}: {context} is not below the training context "
                f"model.context {p.model.context} (the grid sweep plays that one)"
            )
    _suite_sizes_only(p, key, ("reach", "sizes"), p.reach.sizes or [])


def _suite_sizes_only(p: Params, key: Callable[[tuple], str], at: tuple, sizes) -> None:
    """Each of `sizes` (params key `at`) is a suite size."""
    for i, size in enumerate(sizes):
        if size not in p.data.suite_sizes:
            raise ParamsError(
                f"{key((*at, i))}: {size} is not a suite size "
                f"(data.suite_sizes {p.data.suite_sizes})"
            )


def _check_whole_episode(p: Params, key: Callable[[tuple], str]) -> None:
    """Where the whole episode is asked for, the longest evaluation context holds the longest
    episode of every suite, its step cap."""
    if not p.evaluate.whole_episode:
        return
    longest = max(p.evaluate.contexts)
    size = max(p.data.suite_sizes, key=p.env.cap)
    if longest < p.env.cap(size):
        raise ParamsError(
            f"{key(('evaluate', 'whole_episode'))}: the whole episode is asked for, but the "
            f"longest of evaluate.contexts {list(p.evaluate.contexts)} is {longest} steps, "
            f"shorter than the episodes of suite size {size} (up to its cap, "
            f"{p.env.cap(size)} steps): make it at least {p.env.cap(size)}"
        )


def _check_milestone(p: Params, key: Callable[[tuple], str]) -> None:
    """The milestone attention plays suites of a world that has a milestone."""
    sizes = p.attention.milestone_sizes
    _suite_sizes_only(p, key, ("attention", "milestone_sizes"), sizes)
    if sizes and worlds.get(p.env.world).words.milestone is None:
        raise ParamsError(
            f"{key(('attention', 'milestone_sizes'))}: world {p.env.world!r} has no milestone "
            "to attend to: leave the list empty"
        )


LAYOUT_SEEDS = (("data", "seed"), ("data", "suite_seed"))
"""the seeds that draw a run's layouts: its training data's and its evaluation suites'"""


def fresh_seeds(path: Path, p: Params) -> None:
    """A confirmatory run's model seeds overlap no seeds of the other params files in its folder
    (the repository's runs), and its layout seeds (LAYOUT_SEEDS) none of an exploratory run of
    the same world, unless verdict.reused_layouts declares why: refused naming both files and
    the seeds. Each file is read as resolved, so an overlay that inherits its base's seeds counts
    them."""
    if not p.verdict.confirmatory:
        return
    mine = set(p.study.seeds)
    for other in sorted(path.parent.glob("params*.yaml")):
        if other.resolve() == path.resolve():
            continue
        try:
            theirs = resolve(other)
        except ParamsError as e:
            raise ParamsError(f"{path}: cannot read the seeds of {other}: {e}") from None
        shared = sorted(mine & set(theirs.get("study", {}).get("seeds", [])))
        if shared:
            raise ParamsError(
                f"{path}: params key study.seeds: a confirmatory run needs fresh seeds, but "
                f"{shared} are also seeds of {other}"
            )
        exploratory = not theirs.get("verdict", {}).get("confirmatory", False)
        same_world = theirs.get("env", {}).get("world") == p.env.world
        if not (exploratory and same_world) or p.verdict.reused_layouts:
            continue
        for group, name in LAYOUT_SEEDS:
            value = getattr(getattr(p, group), name)
            if theirs.get(group, {}).get(name) == value:
                raise ParamsError(
                    f"{path}: params key {group}.{name}: a confirmatory run needs fresh layouts, "
                    f"but {group}.{name} {value} also draws the layouts of {other}, an "
                    f"exploratory run of {p.env.world}: choose a seed no exploratory run uses, or "
                    "say why in verdict.reused_layouts"
                )


def _check_world(p: Params, key: Callable[[tuple], str]) -> None:
    """The world is one of world/'s packages; `worlds` holds only worlds and each world's own
    knobs (a knob of another world named as such), the running world's all given, within the
    bounds it declares or one of the values it names; every grid size is one the world draws."""
    if p.env.world not in worlds.names():
        known = ", ".join(worlds.names())
        raise ParamsError(f"{key(('env', 'world'))}: no world {p.env.world!r}; worlds: {known}")
    declared = {name: worlds.options(name) for name in worlds.names()}
    for name, knobs in p.worlds.items():
        if name not in declared:
            raise ParamsError(
                f"{key(('worlds', name))}: no world {name!r}; worlds: {', '.join(worlds.names())}"
            )
        for knob in knobs or {}:
            if knob in declared[name]:
                continue
            owners = [w for w, opts in declared.items() if knob in opts]
            raise ParamsError(
                f"{key(('worlds', name, knob))}: "
                + (
                    f"a knob of {' and '.join(owners)} (worlds.{owners[0]}.{knob}), not of {name}"
                    if owners
                    else f"{name} has no such knob; its knobs: {sorted(declared[name]) or 'none'}"
                )
            )
    given = p.worlds.get(p.env.world) or {}
    for knob, allowed in declared[p.env.world].items():
        at = key(("worlds", p.env.world, knob))
        if knob not in given:
            raise ParamsError(f"{at}: missing (the world {p.env.world!r} reads it)")
        if worlds.is_choice(allowed):
            if given[knob] not in allowed:
                raise ParamsError(f"{at}: {given[knob]!r} is not one of {', '.join(allowed)}")
        else:
            _check_number(at, given[knob], *allowed)
    world = worlds.get(p.env.world)
    sizes = [
        (("data", "train_size"), p.data.train_size),
        (("attention", "grid_size"), p.attention.grid_size),
    ]
    sizes += [(("data", "suite_sizes", i), n) for i, n in enumerate(p.data.suite_sizes)]
    for path, size in sizes:
        try:
            world.check_size(size)
        except ValueError as e:
            raise ParamsError(f"{key(path)}: {e}") from None


def _check_options(given: dict, key: Callable[[tuple], str]) -> None:
    """Every option each registered encoding declares, given once, of the type of the smallest
    value it allows (an integer, or any number for a float) and at or above it; nothing else."""
    from dtpe.model.catalog import options

    for axis, declared in options().items():
        for name in set(given.get(axis, {})) - set(declared):
            raise ParamsError(
                f"{key(('encodings', axis, name))}: no {axis} encoding {name!r}; "
                f"registered: {sorted(declared)}"
            )
        for name, wanted in declared.items():
            have = given.get(axis, {}).get(name, {})
            for option in set(wanted) | set(have):
                at = key(("encodings", axis, name, option))
                if option not in wanted:
                    raise ParamsError(
                        f"{at}: the {axis} encoding {name!r} has no such option; "
                        f"its options: {sorted(wanted) or 'none'}"
                    )
                if option not in have:
                    raise ParamsError(f"{at}: missing (the {axis} encoding {name!r} reads it)")
                _check_number(at, have[option], wanted[option])


def _check_number(at: str, value, least, most=None) -> None:
    """`value` is of the type of `least` (an integer, or any number for a float), finite, at or
    above it and, where `most` is given, at or below that; else a ParamsError at key `at`."""
    kind = (int,) if isinstance(least, int) else (int, float)
    if (
        not isinstance(value, kind)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < least
        or (most is not None and value > most)
    ):
        what = "an integer" if isinstance(least, int) else "a number"
        bounds = f">= {least}" + (f" and <= {most}" if most is not None else "")
        raise ParamsError(f"{at}: {value!r} is not {what} {bounds}")


def split_sizes(episodes: int, split: dict) -> dict:
    """Episodes per split; rounding goes to train so the counts add up."""
    val = round(episodes * split["val"])
    test = round(episodes * split["test"])
    return {"train": episodes - val - test, "val": val, "test": test}


def load(path: str | Path = "params.yaml") -> Params:
    """The params a file stands for (an overlay merged onto its bases), validated and typed; an
    error names the key at fault and the file that set it."""
    layers = overlays.layers(Path(path))
    p = check(overlays.merged(layers), lambda key: overlays.origin(layers, key))
    fresh_seeds(Path(path), p)
    for message in _unused_options(layers, p):
        warnings.warn(message, UnusedKnob, stacklevel=2)
    return p


class UnusedKnob(UserWarning):
    """An overlay values a knob that no part of its run reads."""


def _unused_options(layers: list[tuple[Path, dict]], p: Params) -> list[str]:
    """The encodings' options an overlay sets (`encodings.<axis>.<name>`) for an encoding that
    none of the run's variants uses on that axis: valid (params.yaml values every registered
    encoding's options), but they change nothing in this run."""
    from dtpe.model.catalog import AXES, variant

    used = {(axis, getattr(variant(v), axis)) for v in p.study.variants for axis in AXES}
    return [
        f"{file}: params key encodings.{axis}.{name}.{option} changes nothing in this run: no "
        f"variant of study.variants {list(p.study.variants)} encodes {axis} with {name!r}"
        for file, raw in layers[:-1]
        for axis, named in (raw.get("encodings") or {}).items()
        for name, options in (named or {}).items()
        if (axis, name) not in used
        for option in options or {}
    ]


_GROUPS = {f.name: {"dict": dict}.get(f.type) or globals()[f.type] for f in fields(Params)}
