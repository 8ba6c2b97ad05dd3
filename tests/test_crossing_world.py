"""The SimpleCrossing world held to MiniGrid itself (minigrid 3.2.0): layouts read from
`reset(seed)`, the world's rules and codes compared with the env's after every step of walks
that both wander and reach the goal, plans replayed in the real env, their length found again by
a search that steps copies of the real env, and the evaluation's envs against the world's
own stepper. The references read MiniGrid's objects (`grid.get`, `agent_pos`, `agent_dir`)."""

import copy
from collections import deque

import numpy as np
import pytest
from conftest import play_alongside
from minigrid.core.world_object import Lava, Wall
from minigrid.envs import CrossingEnv

from dtpe.world import catalog, minigrid_view
from dtpe.world.crossing import layouts as crossing_layouts
from dtpe.world.crossing.minigrid_env import minigrid_batch
from dtpe.world.crossing.planner import cost_to_go
from dtpe.world.crossing.rules import (
    AGENT,
    EMPTY,
    ENDS,
    GOAL,
    MINIGRID_ACTIONS,
    N_ACTIONS,
    WALL,
    Layouts,
    check_size,
    initial_state,
    render,
    transition,
)
from dtpe.world.crossing.stepper import BatchedCrossing, max_steps

CROSSINGS = 3


def reference_observation(env) -> np.ndarray:
    """The env's full state in the world's codes, read object by object."""
    n = env.width
    obs = np.empty((n, n), dtype=np.uint8)
    for x in range(n):
        for y in range(n):
            cell = env.grid.get(x, y)
            obs[y, x] = EMPTY if cell is None else {"wall": WALL, "goal": GOAL}[cell.type]
    x, y = env.agent_pos
    obs[y, x] = AGENT + env.agent_dir
    return obs


def real_env(size: int, seed: int) -> CrossingEnv:
    env = CrossingEnv(size=size, num_crossings=CROSSINGS, obstacle_type=Wall)
    env.reset(seed=seed)
    return env


@pytest.mark.parametrize("size", [7, 9, 11, 15])
def test_rules_and_codes_match_minigrid_after_every_step(size):
    """Half the actions the expert's, half uniform: the simulated state is the env's, and the
    goal ends the episode in both."""
    rng = np.random.default_rng(size)
    for seed in range(6):
        lay = crossing_layouts.from_seeds(size, [seed], CROSSINGS)
        env, ctg, which = real_env(size, seed), cost_to_go(lay), np.zeros(1, dtype=np.int64)
        state = initial_state(lay)
        np.testing.assert_array_equal(render(lay, state)[0], reference_observation(env))
        for t in range(4 * size * size):
            optimal = ctg.optimal_action(state, which)
            action = optimal if rng.random() < 0.5 else rng.integers(0, N_ACTIONS, 1)
            _, reward, terminated, truncated, _ = env.step(MINIGRID_ACTIONS[action[0]])
            state = transition(lay, state, action)
            at_goal, _ = ENDS.at(lay, state.pos)
            np.testing.assert_array_equal(render(lay, state)[0], reference_observation(env))
            assert terminated == at_goal[0], (seed, t)
            if terminated:
                assert reward > 0
                break
        assert terminated, f"size {size} seed {seed}: the walk never reached the goal"


def plan(lay) -> list[np.ndarray]:
    """The lowest-index optimal actions from each layout's start to its goal."""
    ctg, which = cost_to_go(lay), np.arange(len(lay))
    state, length = initial_state(lay), ctg.steps(initial_state(lay), which)
    actions = np.zeros((len(lay), length.max()), dtype=np.int64)
    for t in range(actions.shape[1]):
        actions[:, t] = ctg.optimal_action(state, which)
        state = transition(lay, state, actions[:, t])
    return [actions[i, : length[i]] for i in which]


@pytest.mark.parametrize("size", [7, 9, 13])
def test_plans_end_in_minigrid_at_their_last_step_with_its_reward(size):
    lay = crossing_layouts.from_seeds(size, range(10), CROSSINGS)
    for seed, actions in zip(lay.seeds, plan(lay)):
        env = real_env(size, int(seed))
        for t, a in enumerate(actions):
            _, reward, terminated, _, _ = env.step(MINIGRID_ACTIONS[a])
            assert terminated == (t == len(actions) - 1), f"seed {seed}: ended at {t}"
        assert reward == pytest.approx(1 - 0.9 * len(actions) / max_steps(size), abs=1e-12)


def search_length(env: CrossingEnv) -> int:
    """Breadth-first search over copies of the real env under all seven MiniGrid actions: the
    shortest number of steps to the goal."""
    start = (tuple(env.agent_pos), env.agent_dir)
    frontier, seen = deque([(env, 0)]), {start}
    while frontier:
        current, depth = frontier.popleft()
        for action in range(7):
            nxt = copy.deepcopy(current)
            _, _, terminated, _, _ = nxt.step(action)
            if terminated:
                return depth + 1
            key = (tuple(nxt.agent_pos), nxt.agent_dir)
            if key not in seen:
                seen.add(key)
                frontier.append((nxt, depth + 1))
    raise AssertionError("no path to the goal")


def test_plans_are_as_short_as_a_search_over_copies_of_the_real_env():
    lay = crossing_layouts.from_seeds(7, range(12), CROSSINGS)
    for seed, actions in zip(lay.seeds, plan(lay)):
        assert len(actions) == search_length(real_env(7, int(seed))), seed


def test_the_evaluation_is_minigrid_and_agrees_with_the_stepper():
    """The same random actions in MiniGrid's envs and in the world's stepper: the same
    observations, rewards and endings, the project's rewards, MiniGrid's step limit."""
    lay = crossing_layouts.from_seeds(9, range(8), CROSSINGS)
    ours = BatchedCrossing(lay, max_steps(9), -0.01, 1.0)
    theirs = minigrid_batch(lay, CROSSINGS, -0.01, 1.0)
    np.testing.assert_array_equal(ours.reset(), theirs.reset())
    ctg, which = cost_to_go(lay), np.arange(len(lay))
    play_alongside(ours, theirs, lambda state: ctg.optimal_action(state, which))
    np.testing.assert_array_equal(ours.success, theirs.success)
    np.testing.assert_array_equal(ours.t, theirs.t)
    assert ours.success.any()


def test_vector_env_refuses_layouts_its_seeds_do_not_draw():
    lay = crossing_layouts.from_seeds(9, [3, 4], CROSSINGS)
    with pytest.raises(ValueError, match=r"draws other layouts than these for seeds \[3, 4\]"):
        minigrid_batch(lay, 1, -0.01, 1.0)  # one crossing: other walls for the same seeds


@pytest.mark.parametrize("size", [8, 5, 3, 9.0, True, "9", None])
def test_bad_size_is_refused_by_name(size):
    with pytest.raises(ValueError, match="grid size"):
        check_size(size)
    with pytest.raises(ValueError, match="grid size"):
        catalog.get("crossing").check_size(size)


def test_same_seed_gives_the_same_bytes_and_seeds_differ():
    first = crossing_layouts.from_seeds(9, [7, 8, 7], CROSSINGS)
    again = crossing_layouts.from_seeds(9, [7, 8, 7], CROSSINGS)
    assert first.grid.tobytes() == again.grid.tobytes()
    assert first.grid[0].tobytes() == first.grid[2].tobytes() != first.grid[1].tobytes()


def test_draw_keeps_distinct_new_layouts_and_settles_for_fewer_where_there_are_few():
    rng = np.random.default_rng(0)
    world, knobs = catalog.get("crossing"), {"num_crossings": CROSSINGS}
    every = world.draw(7, 100, rng, knobs, whole=False)
    assert len(every) == 52 == len(set(world.fingerprints(every)))  # 7 x 7 has 52
    with pytest.raises(
        ValueError, match=r"7x7 holds \d+ distinct layouts .*: 0 new ones, 5 wanted"
    ):
        world.draw(7, 5, rng, knobs, set(world.fingerprints(every)))


def test_observe_refuses_objects_simple_crossing_lacks():
    env = CrossingEnv(size=9, num_crossings=1, obstacle_type=Lava)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="objects other than SimpleCrossing's"):
        crossing_layouts.observe(env)


def test_layouts_without_a_heading_refuse_an_agent_not_facing_right():
    """SimpleCrossing's layouts keep no heading: reading one whose agent starts facing
    elsewhere would start the world's own episodes wrong, so it is refused, naming the seed."""

    class Turned(CrossingEnv):
        def reset(self, **kwargs):
            out = super().reset(**kwargs)
            self.agent_dir = 1
            return out

    env = Turned(size=9, num_crossings=CROSSINGS, obstacle_type=Wall)
    with pytest.raises(ValueError, match="seed 4: the agent starts facing 1, not right"):
        minigrid_view.from_seeds(env, [4], crossing_layouts.READER, Layouts)
