"""The report's figures and tables, named once: the figures stage draws these names, the
tables stage writes these tables, the report shows them in this order with these captions, and
the workflow (Snakemake's FIGURES; dvc.yaml, checked by tests/test_dvc_declarations.py) declares
these files. Figure 1 is named for the run's world (`fig1_{world}`: `figure_names`)."""

from __future__ import annotations

FIGURES = (
    (
        "fig1_{world}",
        "Figure 1. A layout from the largest evaluation suite, the agent at its start.",
    ),
    (
        "fig2_training",
        "Figure 2. Training dynamics per variant: train and validation loss, validation success, "
        "overfitting gap; mean over seeds, band ±1 std.",
    ),
    (
        "fig3_success_by_grid",
        "Figure 3. Success against grid size per variant; bars: {level} bootstrap CI of the mean "
        "over seeds and layouts.",
    ),
    (
        "fig4_attention",
        "Figure 4. Final-layer attention: distance decay (left) and mean attention maps per "
        "variant; where the run measures it, the strongest head's weight on the milestone's "
        "token (the T-Maze's cue) from the last step, against the suite size (right).",
    ),
    (
        "fig5_effect_sizes",
        "Figure 5. Difference of mean success for every pair of variants per grid size at the "
        "training context, with its {level} bootstrap CI; * Holm-adjusted p < {alpha:g} where "
        "the pairs are the run's primary family, exploratory and unadjusted where it declares "
        "its hypotheses.",
    ),
    (
        "fig6_t_shift",
        "Figure 6. The same windows replayed with every global timestep t shifted beyond the "
        "training range, k unchanged: change of the final-layer attention and of the action "
        "distribution, one point per seed.",
    ),
    (
        "fig7_aggregates",
        "Figure 7. The grid sizes beyond training taken as tasks (rliable): the performance "
        "profile, the share of seed × grid scores above each success threshold (left), and the "
        "IQM of those scores (right); bands and bars: {level} stratified bootstrap CI.",
    ),
    (
        "fig8_reach",
        "Figure 8. How far back each variant looks: success against the context it is played "
        "at (log scale; dashed: the training context), one panel per grid size; bars: {level} "
        "bootstrap CI of the mean over seeds and layouts; open markers: each variant's effective "
        "context.",
    ),
)
HEADLINE = "headline"
"""the first screen's figure (analysis/headline.py), its caption chosen by what the run measures"""
FIGURE_TEMPLATES = (HEADLINE, *(name for name, _ in FIGURES))
"""the figures' names, the run's world as `{world}`"""


def figure_names(world: str) -> tuple[str, ...]:
    """The figures' names in a run of `world` (params env.world)."""
    return tuple(name.format(world=world) for name in FIGURE_TEMPLATES)


TABLES = (
    ("decisions", "Declared hypotheses"),
    ("training", "Training"),
    ("success_by_grid", "Success by grid size"),
    ("iqm", "IQM across grid sizes"),
    ("steps_by_grid", "Steps by grid size"),
    ("context", "Success by context length"),
    ("comparisons", "Pairwise comparisons"),
    ("power", "Power"),
    ("ranking", "Ranking"),
    ("reach", "How far back each variant looks"),
    ("seen", "Layouts seen in training"),
    ("horizon", "Success horizon"),
    ("endings", "How episodes ended"),
    ("position_use", "Does the model use position?"),
)
TABLE_NAMES = tuple(name for name, _ in TABLES)


def table_number(name: str) -> int:
    """A table's number in the report (1-based, in TABLES' order)."""
    return TABLE_NAMES.index(name) + 1
