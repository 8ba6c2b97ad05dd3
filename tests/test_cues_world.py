"""The cue corridor (world/cues/): each task's rule, a band that holds what it counts with as many
layouts up as down at every length, and the content-only oracle at chance, on every layout of a
band and on expert episodes with their detours."""

import numpy as np
import pytest
from scipy import stats

from dtpe.world import catalog
from dtpe.world.cues import layouts as family
from dtpe.world.cues import oracle
from dtpe.world.cues.rules import CUE_A, CUE_B, DISTRACTOR, make

WORLD = catalog.get("cues")
KNOBS = {"cues": 4, "distractors": 0, "shortest": 0.5, "slack": 16}
TASKS = [
    {"task": "order"},
    {"task": "recency"},
    {"task": "distance"},
    {"task": "order", "distractors": 1},
    {"task": "recency", "cues": 2, "distractors": 2},
]


def options(**knobs):
    return {**KNOBS, **knobs}


def test_each_task_decides_the_side_by_where_its_cues_lie():
    order = family.Band(10, options(task="order"))
    assert order.placed(8, [2, 5], [CUE_A, CUE_B])[1] == 0  # A first: up
    assert order.placed(8, [5, 2], [CUE_A, CUE_B])[1] == 1
    recency = family.Band(10, options(task="recency"))
    marks, side = recency.placed(8, [0, 3, 6, 1], [CUE_B, CUE_A, CUE_B, CUE_A])
    assert side == 1 and marks[6] == CUE_B  # the last (column 6) is a B: down
    assert recency.placed(8, [0, 3, 6, 7, 2], [CUE_B, CUE_A, CUE_B, CUE_A])[0][2] == DISTRACTOR
    distance = family.Band(10, options(task="distance"))
    assert [distance.placed(12, [c], [CUE_A])[1] for c in (0, 2, 9, 11)] == [0, 0, 1, 1]
    lay = make(10, [8], [{2: CUE_A, 5: CUE_B}], [0])
    assert lay.side[0] == 0 and lay.last[0] == 5 and lay.length[0] == 8


@pytest.mark.parametrize("knobs", TASKS, ids=str)
def test_a_band_lists_what_it_counts_as_many_up_as_down_at_every_length(knobs):
    band = family.Band(12, options(**knobs))
    every = band.listed()
    assert len(every) == band.total == len(set(family.fingerprints(every)))
    for length in band.lengths:
        sides = every.side[every.length == length]
        assert len(sides) == band.count_at(int(length)) and sides.mean() == 0.5
    drawn = band.sample(400, np.random.default_rng(0))
    again = band.listed().subset(np.arange(0))
    assert len(again) == 0 and set(family.fingerprints(drawn)) <= set(family.fingerprints(every))


@pytest.mark.parametrize("knobs", TASKS, ids=str)
def test_the_content_only_oracle_is_at_chance_on_every_layout_of_a_band(knobs):
    every = family.Band(16, options(**knobs)).listed()
    assert oracle.walked(every) == 0.5


@pytest.mark.parametrize("task", family.TASKS)
def test_the_content_only_oracle_learned_on_expert_episodes_stays_at_chance(task):
    """Learned on 250 detoured expert episodes, scored on 250 others: within the 99 % binomial
    interval around one half (distance with a distractor: its size 16 holds 48 layouts alone)."""
    knobs = options(task=task, distractors=int(task == "distance"))
    lay = WORLD.draw(16, 500, np.random.default_rng(5), knobs)
    env = type("Env", (), {"cap": staticmethod(lambda n: n + 16), "step_reward": 0.0})()
    env.goal_reward = 1.0
    eps = WORLD.episodes(lay, np.zeros(500, bool), 0.3, env, np.random.default_rng(6))
    states = np.split(eps["states"], eps["offsets"][1:-1])
    score = oracle.played(states[:250], lay.side[:250], states[250:], lay.side[250:])
    low, high = stats.binom.interval(0.99, 250, 0.5)
    assert low / 250 <= score <= high / 250


def test_a_band_refuses_what_its_corridors_cannot_hold():
    with pytest.raises(ValueError, match="as many A as B"):
        family.Band(10, options(task="recency", cues=3))
    with pytest.raises(ValueError, match="cannot hold 4 cues and 8 distractors"):
        family.Band(10, options(task="recency", distractors=8))
    with pytest.raises(ValueError, match="holds 0 layouts|is not one of"):
        family.Band(10, options(task="nearest"))
