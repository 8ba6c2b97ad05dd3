"""What a valid params file holds: one typed, frozen dataclass per group of params.yaml, and the
few values derived from them (`Params.shown_seeds`, `reach_sizes`, `model_config`). params.py
makes them, from a file it has merged (overlays.py) and validated."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field

from dtpe.model.config import Model, ModelConfig
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
    grid_sizes: list | None = None
    """the suites the grid sweep plays at the training context; None: every one. A whole-episode
    run only, whose context sweep plays the others whole (a submission's evaluation plays only
    what its decision and its row read)"""
    expert_cap: float | None = None
    """None: an evaluated episode plays to the world's step cap; a factor k: to the smaller of
    that and k times the expert's longest episode among the layouts a sweep plays at that size
    (a world whose cap far exceeds its episodes, MiniGrid's 5 N^2, spends its evaluation on
    failures wandering to it)"""


@dataclass(frozen=True)
class Reach:
    contexts: list
    """contexts (timesteps) shorter than the training one at which the reach step plays each
    model: each at least 1 and below model.context"""
    sizes: list | None = None
    """suite sizes it plays them on, each one of data.suite_sizes; None: the training size (if it
    is a suite size) and the largest suite size"""


@dataclass(frozen=True)
class Position:
    scalings: list
    """rope's inference-time scalings (linear, ntk, yarn) the position step plays on every suite
    at the whole-episode context, the longest of evaluate.contexts"""
    ablate: list
    """axes (k, t) whose encoding the position step switches off in turn, at that context"""
    sizes: list
    """suite sizes it plays with an encoding off"""


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
class Report:
    question: str
    """the run's question in one sentence, the first line of its report (a confirmatory run's
    answer is its declared hypotheses' decisions; an exploratory run's, its leads)"""


@dataclass(frozen=True)
class Leaderboard:
    tests: list
    """the leaderboard's column groups (analysis/leaderboard.py), each {name, run, decided_by}:
    the exploratory run whose statistics give each variant's standing there (a folder from the
    repository's root), and the confirmatory run whose decisions are its verdicts (null: none)"""
    submissions: str
    """the folder (from the repository's root) whose runs with a `submission` join the
    leaderboard, each a row in its test's group (dtpe/submission.py)"""


@dataclass(frozen=True)
class Submission:
    variant: str | None
    """the encoding a submission's run submits (its one trained variant), None in any other run"""
    test: str | None
    """the leaderboard test (leaderboard.tests' name) it is submitted to"""


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
    shared_with: list = field(default_factory=list)
    """a confirmatory run: the folders (from its own folder) of the other runs of its world whose
    training and suite layouts its stats step counts as shared with its own, by content
    (analysis/shared_layouts.py); their data/ and results/params.json are its inputs"""
    fixed: list = field(default_factory=list)
    """a sequential design's fixed arms, each {arm, seeds}: a baseline arm that is not retrained
    (a variant, or one played with a scaling, `rope+yarn`) and how many of study.seeds (the
    first) it holds before the first look, its results imported from the run it was made in (a
    submission's)"""
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
    position: Position
    attention: Attention
    explorer: Explorer
    report: Report
    leaderboard: Leaderboard
    submission: Submission
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

    def grid_sizes(self) -> list:
        """The suite sizes the grid sweep plays, in data.suite_sizes' order."""
        chosen = self.evaluate.grid_sizes
        return [n for n in self.data.suite_sizes if chosen is None or n in chosen]

    def reach_sizes(self) -> list:
        """The suite sizes the reach step plays: reach.sizes, or the training size (where it is a
        suite size) and the largest suite size."""
        if self.reach.sizes is not None:
            return sorted(self.reach.sizes)
        suites = self.data.suite_sizes
        return sorted({max(suites), *(n for n in suites if n == self.data.train_size)})

    def evaluation_cap(self, size: int, longest: int) -> int:
        """The step cap of an evaluated episode at side `size`, where `longest` is the expert's
        longest episode among the layouts played there (evaluate.expert_cap)."""
        factor = self.evaluate.expert_cap
        world = self.env.cap(size)
        return world if factor is None else min(world, math.ceil(factor * longest))

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
