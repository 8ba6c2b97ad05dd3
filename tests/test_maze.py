"""Properties of the Key-Door world over every grid size from the minimum to 30, each size and
wall density with a seed of its own: layouts checked by plain BFS written here (not the
planner), the planner's plans replayed through the Gymnasium env, and the batched stepper and
the env held to the same rules."""

import warnings
from collections import deque

import gymnasium as gym
import numpy as np
import pytest
from conftest import plan
from gymnasium.utils.env_checker import check_env

from dtpe.world.maze import layouts as layout_family
from dtpe.world.maze.env import KeyDoorMazeEnv  # importing dtpe.env registers KeyDoorMaze-v0
from dtpe.world.maze.planner import cost_to_go
from dtpe.world.maze.rules import (
    AGENT,
    DOOR,
    EMPTY,
    GOAL,
    KEY,
    WALL,
    BatchedMaze,
    Layouts,
    State,
    transition,
)

SIZES = range(layout_family.MIN_SIZE, 31)
PER_SIZE = 6
# The default density on every size; no walls and dense walls on a few small sizes only (dense
# large grids are rarely solvable, so the generator's rejection sampling gets slow there).
FAMILY = [(n, 0.2) for n in SIZES] + [(n, d) for n in (5, 8, 13) for d in (0.0, 0.5)]
CAP_FACTOR, STEP_REWARD, GOAL_REWARD = 5, -0.01, 1.0
# The env's documented meaning of each action, restated so that the reference rules below do
# not borrow maze.MOVES from the code under test.
DELTAS = [(-1, 0), (1, 0), (0, -1), (0, 1)]  # up, down, left, right


@pytest.fixture(scope="module")
def family() -> dict:
    return {
        (n, d): layout_family.generate(n, PER_SIZE, np.random.default_rng([n, round(100 * d)]), d)
        for n, d in FAMILY
    }


def reachable(grid, start, blocked) -> set:
    """Cells reachable from `start` by moves that never enter a cell whose code is in `blocked`."""
    n, seen, frontier = len(grid), {tuple(start)}, deque([tuple(start)])
    while frontier:
        r, c = frontier.popleft()
        for dr, dc in DELTAS:
            cell = (r + dr, c + dc)
            if (
                0 <= cell[0] < n
                and 0 <= cell[1] < n
                and grid[cell] not in blocked
                and cell not in seen
            ):
                seen.add(cell)
                frontier.append(cell)
    return seen


def optimal_steps(grid, start):
    """Fewest moves from `start` to the goal over (cell, holds-key) states, or None."""
    n = len(grid)
    first = (tuple(start), False)
    dist, frontier = {first: 0}, deque([first])
    while frontier:
        state = frontier.popleft()
        (r, c), has_key = state
        if grid[r, c] == GOAL:
            return dist[state]
        for dr, dc in DELTAS:
            nr, nc = r + dr, c + dc
            if (
                not (0 <= nr < n and 0 <= nc < n)
                or grid[nr, nc] == WALL
                or (grid[nr, nc] == DOOR and not has_key)
            ):
                continue
            succ = ((nr, nc), has_key or grid[nr, nc] == KEY)
            if succ not in dist:
                dist[succ] = dist[state] + 1
                frontier.append(succ)
    return None


def reference_step(grid, pos, has_key, action):
    """The world's rules for one agent, written out cell by cell."""
    n, (r, c) = len(grid), (pos[0] + DELTAS[action][0], pos[1] + DELTAS[action][1])
    if (
        not (0 <= r < n and 0 <= c < n)
        or grid[r, c] == WALL
        or (grid[r, c] == DOOR and not has_key)
    ):
        return tuple(pos), has_key
    return (r, c), has_key or grid[r, c] == KEY


def mixed_actions(ctg, maze, rng):
    """Random actions, half of them replaced by the planner's so that episodes also reach the
    goal."""
    optimal = ctg.optimal_action(maze.state, np.arange(len(maze.state.pos)))
    return np.where(rng.random(len(optimal)) < 0.5, optimal, rng.integers(0, 4, len(optimal)))


def test_layouts_hold_each_item_once(family):
    for (n, _), lay in family.items():
        assert lay.grid.shape == (PER_SIZE, n, n) and lay.grid.dtype == np.uint8
        for grid, start in zip(lay.grid, lay.start):
            counts = np.bincount(grid.ravel(), minlength=6)
            assert counts[GOAL] == counts[KEY] == counts[DOOR] == 1 and counts[AGENT] == 0
            assert grid[tuple(start)] == EMPTY


def test_every_layout_is_solvable_and_forces_key_door_goal(family):
    for (n, d), lay in family.items():
        for i, (grid, start) in enumerate(zip(lay.grid, lay.start)):
            where = f"size {n} density {d} layout {i}"
            assert optimal_steps(grid, start) is not None, where
            without_door = reachable(grid, start, blocked={WALL, DOOR})
            assert tuple(lay.goal[i]) not in without_door, (
                f"{where}: goal reachable without the door"
            )
            key = tuple(np.argwhere(grid == KEY)[0])
            assert key in without_door, f"{where}: key needs the door"


def test_drawn_optimal_actions_are_every_optimal_action_and_only_those(family):
    lay = family[(8, 0.0)]  # open layouts: most first moves tie
    ctg, rng = cost_to_go(lay), np.random.default_rng(0)
    which, has_key = np.arange(len(lay)), np.zeros(len(lay), bool)
    after = np.stack(
        [
            ctg.steps(State(*transition(lay.grid, lay.start, has_key, np.full(len(lay), a))), which)
            for a in range(4)
        ]
    )  # (actions, layouts): cost-to-go after each first move
    optimal = after == after.min(0)
    drawn = np.zeros_like(optimal)
    for _ in range(50):
        drawn[ctg.optimal_action(State(lay.start, has_key), which, rng), which] = True
    np.testing.assert_array_equal(drawn, optimal)
    assert (optimal.sum(0) > 1).any()  # the family has ties to draw among
    first = ctg.optimal_action(State(lay.start, has_key), which)  # without a generator: the lowest
    np.testing.assert_array_equal(first, optimal.argmax(0))


def test_plan_replayed_in_env_reaches_goal_in_optimal_steps(family):
    for (n, d), lay in family.items():
        for i in range(len(lay)):
            actions = plan(lay, i)
            assert len(actions) == optimal_steps(lay.grid[i], lay.start[i]), (
                f"size {n} density {d} layout {i}"
            )
            env = gym.make("KeyDoorMaze-v0", size=n, layout=lay.subset([i]))
            env.reset(seed=0)
            total = 0.0
            for t, a in enumerate(actions):
                _, reward, terminated, truncated, _ = env.step(a)
                total += reward
                assert not truncated
                assert terminated == (t == len(actions) - 1), (
                    f"size {n} layout {i}: terminated at step {t}"
                )
            assert total == pytest.approx(STEP_REWARD * len(actions) + GOAL_REWARD)


def test_batched_stepper_matches_gym_env(family):
    rng = np.random.default_rng(7)
    outcomes = {"terminated": 0, "truncated": 0}
    for (n, _), lay in family.items():
        maze = BatchedMaze(lay, CAP_FACTOR * n, STEP_REWARD, GOAL_REWARD)
        envs = [
            KeyDoorMazeEnv(
                size=n,
                cap_factor=CAP_FACTOR,
                step_reward=STEP_REWARD,
                goal_reward=GOAL_REWARD,
                layout=lay.subset([i]),
            )
            for i in range(len(lay))
        ]
        obs = maze.reset()
        for i, env in enumerate(envs):
            np.testing.assert_array_equal(env.reset()[0], obs[i])
        ctg = cost_to_go(lay)
        while not maze.done.all():
            active = ~maze.done
            frozen = obs.copy()
            actions = mixed_actions(ctg, maze, rng)
            obs, reward, terminated, truncated = maze.step(actions)
            for i in np.flatnonzero(active):
                env_obs, env_reward, env_terminated, env_truncated, _ = envs[i].step(actions[i])
                np.testing.assert_array_equal(env_obs, obs[i])
                assert (env_reward, env_terminated, env_truncated) == (
                    reward[i],
                    terminated[i],
                    truncated[i],
                )
            finished = ~active
            np.testing.assert_array_equal(obs[finished], frozen[finished])
            assert (
                not reward[finished].any()
                and not terminated[finished].any()
                and not truncated[finished].any()
            )
            outcomes["terminated"] += int(terminated.sum())
            outcomes["truncated"] += int(truncated.sum())
    assert outcomes["terminated"] and outcomes["truncated"], outcomes


def test_moves_follow_the_rules(family):
    rng = np.random.default_rng(11)
    for (n, _), lay in family.items():
        maze = BatchedMaze(lay, CAP_FACTOR * n, STEP_REWARD, GOAL_REWARD)
        maze.reset()
        ctg = cost_to_go(lay)
        while not maze.done.all():
            active = np.flatnonzero(~maze.done)
            before = [(tuple(maze.state.pos[i]), bool(maze.state.has_key[i])) for i in active]
            actions = mixed_actions(ctg, maze, rng)
            obs, *_ = maze.step(actions)
            for i, (pos, has_key) in zip(active, before):
                expected_pos, expected_key = reference_step(lay.grid[i], pos, has_key, actions[i])
                assert (tuple(maze.state.pos[i]), bool(maze.state.has_key[i])) == (
                    expected_pos,
                    expected_key,
                )
                assert obs[i][expected_pos] == AGENT and (obs[i] == AGENT).sum() == 1
                assert (obs[i] == KEY).any() != expected_key  # the key leaves the grid once held


def test_walls_border_and_closed_door_block_until_key_is_held():
    grid = np.array(
        [
            [EMPTY, EMPTY, WALL, EMPTY, EMPTY],
            [EMPTY, KEY, WALL, EMPTY, GOAL],
            [EMPTY, EMPTY, DOOR, EMPTY, EMPTY],
            [EMPTY, WALL, WALL, EMPTY, EMPTY],
            [EMPTY, EMPTY, WALL, EMPTY, EMPTY],
        ],
        dtype=np.uint8,
    )
    lay = Layouts(grid[None], np.array([[2, 0]]), np.array([0]))
    up, down, left, right = range(4)
    script = [
        (left, (2, 0), False),  # border
        (right, (2, 1), False),
        (down, (2, 1), False),  # wall
        (right, (2, 1), False),  # closed door
        (up, (1, 1), True),  # picks up the key
        (up, (0, 1), True),
        (down, (1, 1), True),  # the key's cell is empty now
        (down, (2, 1), True),
        (right, (2, 2), True),  # the door opens for the key holder
        (right, (2, 3), True),
        (up, (1, 3), True),
        (right, (1, 4), True),
    ]  # goal
    env = gym.make("KeyDoorMaze-v0", size=5, layout=lay)
    obs, _ = env.reset()
    assert obs[2, 0] == AGENT and obs[1, 1] == KEY
    for t, (action, pos, has_key) in enumerate(script):
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs[pos] == AGENT and (obs == AGENT).sum() == 1, f"step {t}"
        assert info["has_key"] == has_key and (obs == KEY).any() != has_key, f"step {t}"
        assert terminated == (t == len(script) - 1) and not truncated
    assert obs[2, 2] == DOOR  # the door stays on the grid after the agent has passed it
    assert reward == pytest.approx(STEP_REWARD + GOAL_REWARD)


# A drawn layout costs a batch of BFS per reset, and the checker resets often: large sizes run
# fixed.
@pytest.mark.parametrize(
    "size, fixed", [(5, False), (8, False), (13, False), (5, True), (30, True)]
)
def test_gymnasium_env_checker_passes(size, fixed):
    layout = layout_family.generate(size, 1, np.random.default_rng(size), 0.2) if fixed else None
    env = gym.make("KeyDoorMaze-v0", size=size, layout=layout)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")  # the checker reports most problems as warnings, not errors
        check_env(env.unwrapped)
    assert not caught, [str(w.message) for w in caught]


def test_reset_seed_decides_the_layout():
    env = gym.make("KeyDoorMaze-v0", size=9)
    first, again, other = env.reset(seed=3)[0], env.reset(seed=3)[0], env.reset(seed=4)[0]
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize("size", [4, 0, -3])
def test_sizes_below_minimum_are_rejected(size):
    with pytest.raises(ValueError, match=f"grid size {size} is below the minimum of 5"):
        gym.make("KeyDoorMaze-v0", size=size)
    with pytest.raises(ValueError, match="below the minimum"):
        layout_family.generate(size, 1, np.random.default_rng(0), 0.2)


@pytest.mark.parametrize("size", [8.0, 8.5, "8", True, None])
def test_non_integer_sizes_are_rejected(size):
    with pytest.raises(ValueError, match="grid size must be an integer"):
        gym.make("KeyDoorMaze-v0", size=size)
    with pytest.raises(ValueError, match="grid size must be an integer"):
        layout_family.generate(size, 1, np.random.default_rng(0), 0.2)


def test_numpy_integer_size_is_accepted():
    assert layout_family.generate(np.int64(6), 2, np.random.default_rng(0), 0.2).size == 6


def test_env_rejects_a_layout_that_does_not_fit(family):
    with pytest.raises(ValueError, match="one layout of side 8"):
        KeyDoorMazeEnv(size=8, layout=family[6, 0.2].subset([0]))
    with pytest.raises(ValueError, match="one layout of side 6"):
        KeyDoorMazeEnv(size=6, layout=family[6, 0.2])
