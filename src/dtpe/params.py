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
from dataclasses import fields, replace
from importlib import resources
from pathlib import Path

import jsonschema
import yaml

from dtpe import names, overlays, settings
from dtpe.overlays import ParamsError, chain, key_path, refuse_renamed, resolve  # noqa: F401
from dtpe.settings import ALL_PAIRS, Env, Params  # noqa: F401
from dtpe.world import catalog as worlds


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
    _check_position(p, key)
    _check_submission(p, key)
    _check_whole_episode(p, key)
    _check_grid_sizes(p, key)
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
            _check_side(p, h, f"{at}[{i}].{side}", h[side])
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
    if v.shared_with and not v.confirmatory:
        raise ParamsError(
            f"{key(('verdict', 'shared_with'))}: counts the layouts a confirmatory run shares; "
            "this run is not one (verdict.confirmatory false)"
        )
    if v.fixed and not v.sequential:
        raise ParamsError(
            f"{key(('verdict', 'fixed'))}: fixed arms are held through the looks of a sequential "
            "design (verdict.sequential), which this run has not"
        )
    if v.sequential:
        _check_fixed(p, key)
        cap = v.sequential["interims"] * v.sequential["seeds_per_interim"]
        if len(p.study.seeds) != cap:
            raise ParamsError(
                f"{key(('study', 'seeds'))}: {len(p.study.seeds)} seeds, but verdict.sequential "
                f"caps the run at {v.sequential['interims']} interims x "
                f"{v.sequential['seeds_per_interim']} = {cap}: list the cap's seeds in order"
            )


def _check_side(p: Params, h: dict, at: str, side: str) -> None:
    """A hypothesis compares a variant of the study, or one played with a scaling of
    position.scalings (`rope+yarn`), which the position step plays at the whole episode only."""
    variant, _, scaling = side.partition("+")
    if variant not in p.study.variants:
        raise ParamsError(f"{at}: {side!r} is not in study.variants")
    if not scaling:
        return
    if scaling not in p.position.scalings:
        raise ParamsError(
            f"{at}: {side!r} names the scaling {scaling!r}, not one of position.scalings "
            f"{list(p.position.scalings)}"
        )
    if p.verdict.sequential and side not in fixed_arms(p.verdict):
        raise ParamsError(
            f"{at}: {side!r} is no model that trains, so a sequential design holds it as a fixed "
            "arm (verdict.fixed) or not at all"
        )
    if h.get("context") != max(p.evaluate.contexts):
        raise ParamsError(
            f"{at}: {side!r} is played only at the whole-episode context "
            f"{max(p.evaluate.contexts)} (the position step): the hypothesis's context must be it"
        )


def _check_fixed(p: Params, key: Callable[[tuple], str]) -> None:
    """A fixed arm is compared by some hypothesis, never with another fixed arm, and holds no
    more seeds than study.seeds lists."""
    held = fixed_arms(p.verdict)
    at = key(("verdict", "fixed"))
    named = {h[side] for h in p.verdict.declared() for side in "ab"}
    if len(held) != len(p.verdict.fixed):
        raise ParamsError(f"{at}: an arm is listed twice")
    for arm, seeds in held.items():
        if arm not in named:
            raise ParamsError(f"{at}.{arm}: no declared hypothesis compares it")
        if seeds > len(p.study.seeds):
            raise ParamsError(
                f"{at}.{arm}: {seeds} seeds, but study.seeds lists {len(p.study.seeds)}"
            )
    for i, h in enumerate(p.verdict.declared()):
        if h["a"] in held and h["b"] in held:
            raise ParamsError(
                f"{key(('verdict', 'hypotheses'))}[{i}]: both {h['a']} and {h['b']} are fixed "
                "arms: one side must gain seeds at each look"
            )


def _check_submission(p: Params, key: Callable[[tuple], str]) -> None:
    """A submission trains its one variant against fixed arms (the other variants' models are
    its baseline's) on a test of the leaderboard."""
    sub = p.submission
    if sub.variant is None and sub.test is None:
        return
    at = key(("submission",))
    if sub.variant is None or sub.test is None:
        raise ParamsError(f"{at}: a submission names both its variant and its test")
    if sub.variant not in p.study.variants:
        raise ParamsError(f"{at}.variant: {sub.variant!r} is not in study.variants")
    tests = [t["name"] for t in p.leaderboard.tests]
    if sub.test not in tests:
        raise ParamsError(f"{at}.test: {sub.test!r} is not a leaderboard test: {tests}")
    fixed = {names.unscaled(arm) for arm in fixed_arms(p.verdict)}
    if not fixed:
        raise ParamsError(
            f"{at}: a submission is decided against fixed arms (verdict.fixed), its "
            "baseline's models, which it does not train"
        )
    for i, h in enumerate(p.verdict.declared()):
        if (h["a"], h["b"] in fixed_arms(p.verdict)) != (sub.variant, True):
            raise ParamsError(
                f"{key(('verdict', 'hypotheses'))}[{i}]: a submission compares {sub.variant} "
                f"(a) with a fixed arm (b), not {h['a']} with {h['b']}"
            )
    trained = sorted(set(p.study.variants) - fixed - {sub.variant})
    if trained:
        raise ParamsError(
            f"{key(('study', 'variants'))}: a submission trains {sub.variant} alone, but "
            f"{trained} are neither it nor a fixed arm's variant"
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


def _check_position(p: Params, key: Callable[[tuple], str]) -> None:
    """The position step plays the whole episode: it needs one, its sizes are suite sizes, and
    a scaling the context sweep plays already would give that context's rows twice."""
    pos = p.position
    if (pos.scalings or pos.ablate) and not p.evaluate.whole_episode:
        at = ("position", "scalings") if pos.scalings else ("position", "ablate")
        raise ParamsError(
            f"{key(at)}: the position step plays the whole-episode context, but "
            "evaluate.whole_episode is false"
        )
    if pos.ablate and not pos.sizes:
        raise ParamsError(f"{key(('position', 'sizes'))}: empty, but position.ablate asks for play")
    _suite_sizes_only(p, key, ("position", "sizes"), pos.sizes)
    twice = sorted(set(pos.scalings) & set(p.evaluate.rope_scaling))
    if twice:
        raise ParamsError(
            f"{key(('position', 'scalings'))}: {twice} are in evaluate.rope_scaling too, which "
            "plays them at every context already"
        )


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
    episode of every suite, its step cap; caps drawn from the suites (evaluate.expert_cap) are
    checked by the evaluate step, before it plays (steps/evaluate.check_whole_episode)."""
    if not p.evaluate.whole_episode or p.evaluate.expert_cap is not None:
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


def _check_grid_sizes(p: Params, key: Callable[[tuple], str]) -> None:
    """A grid sweep of some suites only is a whole-episode run's (its context sweep plays the
    others whole), and holds every suite that is read at the training context: the reach
    step's, and those of an endpoint declared there (all of them for every pair's tests)."""
    chosen = p.evaluate.grid_sizes
    if chosen is None:
        return
    at = ("evaluate", "grid_sizes")
    _suite_sizes_only(p, key, at, chosen)
    if not p.evaluate.whole_episode:
        raise ParamsError(
            f"{key(at)}: the grid sweep plays some suites only in a whole-episode run, whose "
            "context sweep plays the others; evaluate.whole_episode is false"
        )
    needs = {"the reach step": set(p.reach_sizes())}
    declared = p.verdict.declared()
    if not declared:
        needs[f"verdict.hypotheses {ALL_PAIRS}"] = set(p.data.suite_sizes)
    for i, h in enumerate(declared):
        if h.get("context") in (None, p.model.context):
            needs[f"verdict.hypotheses[{i}]"] = {*h["grids"], *(h.get("minus") or [])}
    for who, sizes in needs.items():
        missing = sorted(sizes - set(chosen))
        if missing:
            raise ParamsError(
                f"{key(at)}: {sorted(chosen)} leaves out {missing}, which {who} reads at the "
                f"training context"
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


def fixed_arms(verdict) -> dict:
    """A sequential design's fixed arms (verdict.fixed), arm -> seeds, from a Verdict or its raw
    mapping."""
    held = verdict.get("fixed") if isinstance(verdict, dict) else verdict.fixed
    return {entry["arm"]: entry["seeds"] for entry in held or []}


def fresh_seeds(path: Path, p: Params) -> None:
    """A confirmatory run's model seeds overlap no seeds of the other params files in its folder
    (the repository's runs), and its layout seeds (LAYOUT_SEEDS) none of an exploratory run of
    the same world, unless verdict.reused_layouts declares why: refused naming both files and
    the seeds. Each file is read as resolved, so an overlay that inherits its base's seeds counts
    them. A run with fixed arms (a submission, verdict.fixed) holds its base's models as those
    arms, so it shares its base's seeds, and those of the other submissions on the same base: only
    its new variant trains, and no model of it existed before."""
    if not p.verdict.confirmatory:
        return
    mine = set(p.study.seeds)
    base = [f.resolve() for f in chain(path)][1:2]
    submission = bool(fixed_arms(p.verdict))
    for other in sorted(path.parent.glob("params*.yaml")):
        if other.resolve() == path.resolve() or (submission and [other.resolve()] == base):
            continue
        try:
            theirs = resolve(other)
        except ParamsError as e:
            raise ParamsError(f"{path}: cannot read the seeds of {other}: {e}") from None
        theirs_base = [f.resolve() for f in chain(other)][1:2]
        if fixed_arms(theirs.get("verdict") or {}) and (
            theirs_base == [path.resolve()] or (submission and theirs_base == base)
        ):
            continue  # a submission on this run, or another on the same base
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


_GROUPS = {f.name: {"dict": dict}.get(f.type) or vars(settings)[f.type] for f in fields(Params)}
