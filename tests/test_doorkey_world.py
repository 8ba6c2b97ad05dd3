"""The DoorKey world held to MiniGrid itself (minigrid 3.2.0): layouts read from `reset(seed)`,
plans replayed in the real env, their optimality found again by a search that steps copies of
the real env, and the world's rules and codes compared with the env's after every step. The
references here read MiniGrid's objects (`grid.get`, `agent_pos`, `carrying`), not the module's
code tables."""

import copy
from collections import deque

import numpy as np
import pytest
from minigrid.core.world_object import Ball
from minigrid.envs import DoorKeyEnv

from dtpe.world.doorkey import WORLD
from dtpe.world.doorkey import layouts as doorkey_layouts
from dtpe.world.doorkey.planner import cost_to_go, plan
from dtpe.world.doorkey.rules import (
    AGENT,
    DOOR_CLOSED,
    DOOR_LOCKED,
    DOOR_OPEN,
    EMPTY,
    ENDS,
    GOAL,
    KEY,
    MINIGRID_ACTIONS,
    N_ACTIONS,
    N_CODES,
    WALL,
    State,
    initial_state,
    render,
    transition,
)
from dtpe.world.grids import new_distinct

PLAN_SIZES = (5, 6, 8, 10, 12, 16)
MINIGRID_ALL_ACTIONS = range(7)  # drop and done too: the search checks they never shorten a path


def reference_observation(env) -> np.ndarray:
    """The env's full state in the world's codes, read object by object."""
    n = env.width
    obs = np.empty((n, n), dtype=np.uint8)
    for x in range(n):
        for y in range(n):
            cell = env.grid.get(x, y)
            if cell is None:
                obs[y, x] = EMPTY
            elif cell.type == "door":
                obs[y, x] = (
                    DOOR_OPEN if cell.is_open else (DOOR_LOCKED if cell.is_locked else DOOR_CLOSED)
                )
            else:
                obs[y, x] = {"wall": WALL, "goal": GOAL, "key": KEY}[cell.type]
    x, y = env.agent_pos
    obs[y, x] = AGENT + env.agent_dir + 4 * (env.carrying is not None)
    return obs


def env_state_key(env) -> tuple:
    return (
        tuple(int(v) for v in env.agent_pos),
        int(env.agent_dir),
        env.carrying is not None,
        env.grid.encode().tobytes(),
    )


def search_steps(env, actions) -> int | None:
    """Fewest MiniGrid steps from the env's state to the goal, by breadth-first search over deep
    copies of the env stepped with `actions` (MiniGrid's numbers)."""
    seen, frontier = {env_state_key(env)}, deque([(env, 0)])
    while frontier:
        state, steps = frontier.popleft()
        for action in actions:
            child = copy.deepcopy(state)
            _, _, terminated, _, _ = child.step(action)
            if terminated:
                return steps + 1
            key = env_state_key(child)
            if key not in seen:
                seen.add(key)
                frontier.append((child, steps + 1))
    return None


def mixed_walk(size, seed, rng, length):
    """Replays up to `length` of our actions in a reset DoorKeyEnv, half of them the expert's
    and half uniform (so that walks both wander and reach the goal), simulating them alongside;
    yields (env, layouts, cost-to-go, simulated state, terminated, at_goal) after every step,
    the reset first."""
    lay = doorkey_layouts.from_seeds(size, [seed])
    ctg, env, which = cost_to_go(lay), DoorKeyEnv(size=size), np.zeros(1, dtype=np.int64)
    env.reset(seed=seed)
    state = initial_state(lay)
    yield env, lay, ctg, state, False, np.zeros(1, dtype=bool)
    for _ in range(length):
        optimal = ctg.optimal_action(state, which)
        action = optimal if rng.random() < 0.5 else rng.integers(0, N_ACTIONS, 1)
        _, _, terminated, truncated, _ = env.step(MINIGRID_ACTIONS[action[0]])
        assert not truncated
        state = transition(lay, state, action)
        at_goal, _ = ENDS.at(lay, state.pos)
        yield env, lay, ctg, state, terminated, at_goal
        if terminated:
            return


def stack(states: list[State]) -> State:
    return State(
        *(np.concatenate([getattr(s, f) for s in states]) for f in State.__dataclass_fields__)
    )


def reachable_states(lay, i) -> State:
    """Every state reached from layout i's start under the world's own rules, the goal's too."""
    one = lay.subset([i])
    start = initial_state(one)

    def key(s):
        return (*s.pos[0], s.heading[0], s.carrying[0], s.door[0])

    seen, frontier, states = {key(start)}, deque([start]), [start]
    while frontier:
        state = frontier.popleft()
        for action in range(N_ACTIONS):
            child = transition(one, state, [action])
            if key(child) not in seen:
                seen.add(key(child))
                states.append(child)
                if not ENDS.at(one, child.pos)[0][0]:  # the episode ends there
                    frontier.append(child)
    return stack(states)


@pytest.fixture(scope="module")
def reached_8x8():
    """Layouts, and every state reached in each with its layout index."""
    lay = doorkey_layouts.from_seeds(8, range(6))
    per_layout = [reachable_states(lay, i) for i in range(len(lay))]
    states = stack(per_layout)
    which = np.repeat(np.arange(len(lay)), [len(s.pos) for s in per_layout])
    return lay, states, which


@pytest.mark.parametrize("size", PLAN_SIZES)
def test_plans_end_in_minigrid_at_their_last_step_with_its_reward(size):
    seeds = np.arange(12) + 1000 * size
    lay = doorkey_layouts.from_seeds(size, seeds)
    plans = plan(lay)
    np.testing.assert_array_equal(
        [len(p) for p in plans], cost_to_go(lay).steps(initial_state(lay), np.arange(len(lay)))
    )
    env, max_steps = DoorKeyEnv(size=size), 10 * size**2
    for seed, actions in zip(seeds, plans):
        env.reset(seed=int(seed))
        for t, action in enumerate(actions, start=1):
            _, reward, terminated, truncated, _ = env.step(MINIGRID_ACTIONS[action])
            assert not truncated
            if t < len(actions):
                assert not terminated and reward == 0, f"size {size} seed {seed}: ended at {t}"
        assert terminated, f"size {size} seed {seed}: not at the goal after {len(actions)}"
        assert reward == pytest.approx(1 - 0.9 * len(actions) / max_steps, abs=1e-12)


def test_plans_are_as_short_as_a_search_over_copies_of_the_real_env():
    drawn = doorkey_layouts.from_seeds(5, range(300))
    every_5x5 = drawn.subset(new_distinct(WORLD.fingerprints(drawn), set(), len(drawn)))
    some_6x6 = doorkey_layouts.from_seeds(6, [3, 14, 15])
    for lay in (every_5x5, some_6x6):
        size, env = lay.size, DoorKeyEnv(size=lay.size)
        for seed, actions in zip(lay.seeds, plan(lay)):
            env.reset(seed=int(seed))
            assert search_steps(env, MINIGRID_ALL_ACTIONS) == len(actions), (
                f"size {size} seed {seed}"
            )


def test_cost_to_go_of_states_along_walks_matches_the_search():
    rng, checked, doors = np.random.default_rng(3), 0, set()
    for size, seed in [(5, s) for s in range(6)] + [(6, s) for s in range(2)]:
        for t, (env, _, ctg, state, terminated, _) in enumerate(mixed_walk(size, seed, rng, 40)):
            if t % 3 == 1 and not terminated:
                expected = search_steps(env, MINIGRID_ACTIONS)
                assert ctg.steps(state, np.zeros(1, np.int64))[0] == expected, (
                    f"size {size} seed {seed} step {t}"
                )
                checked += 1
                doors.add((int(state.door[0]), bool(state.carrying[0])))
    assert checked >= 30
    assert doors == {
        (DOOR_LOCKED, False),
        (DOOR_LOCKED, True),
        (DOOR_OPEN, True),
        (DOOR_CLOSED, True),
    }


def test_rules_and_codes_match_minigrid_after_every_step():
    rng, seen = np.random.default_rng(0), np.zeros(N_CODES, dtype=bool)
    for size, seed in [(n, s) for n in (5, 6, 8, 10) for s in range(10)]:
        for t, (env, lay, _, state, terminated, at_goal) in enumerate(
            mixed_walk(size, seed, rng, 4 * size**2)
        ):
            where = f"size {size} seed {seed} step {t}"
            expected = reference_observation(env)
            np.testing.assert_array_equal(render(lay, state), expected[None], err_msg=where)
            np.testing.assert_array_equal(doorkey_layouts.observe(env), expected, err_msg=where)
            assert at_goal[0] == terminated, where
            seen[expected.ravel()] = True
    assert seen.all(), f"codes never reached: {np.flatnonzero(~seen)}"


def test_a_grid_of_codes_determines_the_state(reached_8x8):
    lay, states, which = reached_8x8
    grids = render(lay, states, which)
    for i in range(len(lay)):
        mine = grids[which == i]
        assert len({g.tobytes() for g in mine}) == len(mine), f"layout {i}"


def test_cost_to_go_is_one_more_than_the_best_successor_in_every_reached_state(reached_8x8):
    lay, states, which = reached_8x8
    ctg = cost_to_go(lay)
    steps = ctg.steps(states, which)
    after = np.stack(
        [
            ctg.steps(transition(lay, states, np.full(len(which), a), which), which)
            for a in range(N_ACTIONS)
        ]
    )  # (actions, states)
    goal = (states.pos == lay.goal[which]).all(1)
    assert (steps[goal] == 0).all() and goal.any()
    np.testing.assert_array_equal(steps[~goal], after.min(0)[~goal] + 1)
    drawn = ctg.optimal_action(states, which, np.random.default_rng(0))
    lowest = ctg.optimal_action(states, which)
    for expert in (drawn, lowest):
        np.testing.assert_array_equal(after[expert, np.arange(len(which))], after.min(0))
    assert (drawn != lowest).any()  # ties exist, and the generator draws among them


def test_same_seed_gives_the_same_bytes_and_seeds_differ():
    first = doorkey_layouts.from_seeds(8, [7, 8, 7])
    again = doorkey_layouts.from_seeds(8, [7, 8, 7])
    grids = render(first, initial_state(first))
    assert grids.tobytes() == render(again, initial_state(again)).tobytes()
    assert grids[0].tobytes() == grids[2].tobytes() != grids[1].tobytes()


def test_new_distinct_leaves_out_repeats_and_excluded_layouts():
    lay = doorkey_layouts.from_seeds(5, range(300))
    codes = WORLD.fingerprints(lay)
    every = lay.subset(new_distinct(codes, set(), len(lay)))
    # the wall column is x = 2, leaving the agent 3 cells, 4 headings, the door 2 rows and the
    # key the agent's 2 other cells: 48 layouts in all
    assert len(every) == 48 and len(set(WORLD.fingerprints(every))) == 48
    assert list(every.seeds) == sorted(every.seeds)  # the first draw of each
    train = every.subset(np.arange(20))
    held_out = lay.subset(new_distinct(codes, set(WORLD.fingerprints(train)), len(lay)))
    np.testing.assert_array_equal(held_out.seeds, every.seeds[20:])
    room = lay.subset(new_distinct(codes, set(WORLD.fingerprints(train)), 5))
    np.testing.assert_array_equal(room.seeds, every.seeds[20:25])  # the first five new ones


def test_asking_for_more_layouts_than_a_size_holds_names_the_size_and_its_count():
    """DoorKey 5 x 5 holds 48 layouts: the data asking for 60 is told so, not handed fewer."""
    with pytest.raises(ValueError, match="DoorKey 5x5 holds 48 distinct layouts .*60 wanted"):
        WORLD.draw(5, 60, np.random.default_rng(0), {})
    taken = WORLD.fingerprints(WORLD.draw(5, 20, np.random.default_rng(1), {}))
    with pytest.raises(ValueError, match="holds 48 distinct layouts .*, 20 of them taken already"):
        WORLD.draw(5, 40, np.random.default_rng(2), {}, exclude=set(taken))


@pytest.mark.parametrize("size", [4, 0, -8, 5.0, True, "8", None])
def test_bad_size_is_refused_by_name(size):
    with pytest.raises(ValueError, match="size"):
        doorkey_layouts.from_seeds(size, [0])


@pytest.mark.parametrize("seeds", [[-1], [0.5], [[0, 1]], 3])
def test_bad_seeds_are_refused_by_name(seeds):
    with pytest.raises(ValueError, match="seeds"):
        doorkey_layouts.from_seeds(8, seeds)


def test_observe_refuses_objects_doorkey_lacks():
    env = DoorKeyEnv(size=6)
    env.reset(seed=0)
    env.grid.set(4, 1, Ball())
    with pytest.raises(ValueError, match="DoorKey"):
        doorkey_layouts.observe(env)
