"""A world's terminal states, declared once (world/lockstep.py): on a corridor world that can fail,
written for this test against the contract alone (its rules move the agent and declare its
ends, nothing more), the search never routes through a failure and the lockstep stepper ends an
episode there as a failure; every registered world, played by its expert and at random, ends
its episodes in its evaluation where its stepper does (MiniGrid held to the declaration); and a
failure forgotten in a world's rules is refused by its data step."""

from dataclasses import dataclass

import numpy as np
import pytest

from dtpe.world import catalog, grids, search
from dtpe.world.lockstep import Ends, Lockstep, on_fail
from dtpe.world.search import UNREACHABLE

FLOOR, GOAL, PIT = range(3)
LEFT, RIGHT = range(2)


@dataclass
class Corridor(grids.Layouts):
    """B corridors (B, 1, N): the agent starts at column `start`, the goal and a pit lie on it."""

    grid: np.ndarray
    start: np.ndarray

    def __post_init__(self):
        self.goal = grids.locate(self.grid, GOAL)
        self.fail = grids.locate(self.grid, PIT)

    @property
    def size(self) -> int:
        return self.grid.shape[2]


@dataclass
class State:
    pos: np.ndarray


def corridor(goal: int, pit: int, start: int, n: int = 7) -> Corridor:
    grid = np.full((1, 1, n), FLOOR, dtype=np.uint8)
    grid[0, 0, goal], grid[0, 0, pit] = GOAL, PIT
    return Corridor(grid, np.array([[0, start]]))


def transition(layouts, state, action, layout_index=None) -> State:
    """Left or right along the corridor; nothing here ends an episode."""
    step = np.where(np.asarray(action) == RIGHT, 1, -1)
    col = np.clip(state.pos[:, 1] + step, 0, layouts.size - 1)
    return State(np.stack([state.pos[:, 0], col], 1))


def initial_state(layouts) -> State:
    return State(layouts.start.copy())


ENDS = Ends(failure=on_fail, failure_words="in the pit")


class BatchedCorridor(Lockstep):
    initial_state = staticmethod(initial_state)
    transition = staticmethod(transition)
    render = staticmethod(lambda layouts, state: layouts.grid)
    ends = ENDS


def cost_to_go(layouts) -> search.CostToGo:
    n = layouts.size
    layout, col = np.divmod(np.arange(len(layouts) * n), n)
    every = State(np.stack([np.zeros_like(col), col], 1))
    return search.cost_to_go(
        transition, ENDS, layouts, every, layout, lambda s, which: which * n + s.pos[:, 1], 2
    )


def test_the_search_never_routes_through_a_failure():
    """A pit between the start and the goal cuts the only way: the goal is unreachable, though
    the rules walk through the pit's cell; with the pit behind, the way is the walk."""
    blocked, open_ = corridor(goal=6, pit=3, start=1), corridor(goal=6, pit=0, start=1)
    first = np.zeros(1, dtype=np.int64)
    assert cost_to_go(blocked).steps(initial_state(blocked), first)[0] == UNREACHABLE
    assert cost_to_go(open_).steps(initial_state(open_), first)[0] == 5
    # the pit's own state is a dead end: no action leaves it
    pit = State(np.array([[0, 3]]))
    ctg = cost_to_go(blocked)
    assert (ctg.successors[:, 3] == 3).all() and ctg.steps(pit, first)[0] == UNREACHABLE


def test_the_stepper_ends_an_episode_in_failure_where_the_world_declares_it():
    """Into the pit: terminated, not truncated, no success, a failure, only the step's reward;
    the episode frozen after. Into the goal: a success with its reward."""
    lay = Corridor.join([corridor(goal=6, pit=3, start=2), corridor(goal=3, pit=0, start=2)])
    game = BatchedCorridor(lay, cap=20, step_reward=-0.01, goal_reward=1.0)
    game.reset()
    _, reward, terminated, truncated = game.step(np.array([RIGHT, RIGHT]))
    assert terminated.tolist() == [True, True] and not truncated.any()
    assert game.success.tolist() == [False, True] and game.failure.tolist() == [True, False]
    np.testing.assert_allclose(reward, [-0.01, 0.99])
    _, reward, terminated, _ = game.step(np.array([LEFT, LEFT]))
    assert not terminated.any() and (reward == 0).all() and game.t.tolist() == [1, 1]


def test_a_declaration_names_its_failure_with_its_words():
    with pytest.raises(ValueError, match="come together"):
        Ends(failure=on_fail)
    with pytest.raises(ValueError, match="come together"):
        Ends(failure_words="in the pit")
    won, lost = Ends().at(corridor(goal=6, pit=3, start=1), np.array([[0, 6]]))
    assert won.tolist() == [True] and lost.tolist() == [False]


def test_the_minigrid_view_holds_minigrid_to_the_declaration(monkeypatch):
    """Where a world's declaration and MiniGrid disagree (here SimpleCrossing's goal declared no
    end), the evaluation refuses the episode MiniGrid ends, naming the cell."""
    from dtpe.world.crossing import layouts as crossing_layouts
    from dtpe.world.crossing import rules
    from dtpe.world.crossing.minigrid_env import CrossingView, minigrid_batch
    from dtpe.world.crossing.planner import cost_to_go as crossing_cost_to_go

    monkeypatch.setattr(CrossingView, "ends", Ends(success=lambda lay, cells, which: which < 0))
    lay, which = crossing_layouts.from_seeds(7, [0], 1), np.zeros(1, dtype=np.int64)
    ctg, batch = crossing_cost_to_go(lay), minigrid_batch(lay, 1, -0.01, 1.0)
    batch.reset()
    state = rules.initial_state(lay)
    with pytest.raises(ValueError, match=r"ended at cell \(5, 5\), where the world's rules go on"):
        for _ in range(ctg.steps(state, which)[0]):
            action = ctg.optimal_action(state, which)
            batch.step(action)
            state = rules.transition(lay, state, action)


def test_the_rollout_names_each_episodes_ending_as_the_stepper_ends_it():
    """Into the pit: failure; into the goal: success; walking against the wall: the cap."""
    from dtpe.steps import rollout

    class Walk:
        n_actions = 2

        def start(self, batch_size, cap):
            pass

        def act(self, obs, active):
            return np.array([RIGHT, RIGHT, LEFT]), np.zeros((3, 2), np.float32)

        def observe(self, rewards):
            pass

    lay = Corridor.join(
        [
            corridor(goal=6, pit=3, start=2),
            corridor(goal=3, pit=0, start=2),
            corridor(goal=6, pit=5, start=2),
        ]
    )
    played = rollout.play(BatchedCorridor(lay, 4, -0.01, 1.0), Walk(), cap=4)
    assert played["ending"].tolist() == ["failure", "success", "cap"]
    assert played["steps"].tolist() == [1, 1, 4]


@pytest.fixture(params=catalog.names())
def world(request):
    return catalog.get(request.param)


@pytest.mark.parametrize("planned", [1.0, 0.0], ids=["expert", "random"])
def test_every_world_ends_its_episodes_in_its_evaluation_where_its_stepper_does(world, planned):
    """Every registered world, its expert's actions or random ones, 16 layouts: its stepper and
    its evaluation (MiniGrid for a MiniGrid world) step alike to every episode's end, and no
    episode ends where the rules declare no ending."""
    from conftest import play_alongside
    from test_world_registry import env_of

    env = env_of(world)
    size = world.min_size + 2
    lay = world.draw(size, 16, np.random.default_rng(5), env.options, whole=False)
    ctg, which = world.planner(lay), np.arange(len(lay))
    ours, theirs = world.replay_env(lay, env), world.evaluation_env(lay, env)
    theirs.reset()
    play_alongside(
        ours, theirs, lambda state: ctg.optimal_action(state, which), world.vocabulary.n_actions,
        planned,
    )  # fmt: skip
    won, lost = world.ends.at(lay, world.agent(ours.state)[0])
    ended = ours.done & (ours.t < env.cap(size))
    assert (won | lost)[ended].all() and (ours.success == won).all()


def test_a_failure_forgotten_in_a_worlds_rules_is_refused_by_its_data_step(monkeypatch):
    """Memory with `ENDS = Ends()` in its rules (the wrong object forgotten): detoured expert
    episodes that reach the wrong object go on in its stepper, MiniGrid ends them, and the data
    step refuses them, naming the world; declared, the same episodes are written."""
    from test_world_registry import env_of

    from dtpe.world.memory import minigrid_env, planner, stepper

    world = catalog.get("memory")
    env = env_of(world)
    lay = world.draw(world.min_size, 30, np.random.default_rng(0), env.options, whole=False)
    detoured = np.zeros(len(lay), bool)
    written = world.episodes(lay, detoured, 0.5, env, np.random.default_rng(1))
    assert not written["success"].all()  # some reached the wrong object, declared a failure
    for place, name in ((stepper.BatchedMemory, "ends"), (planner, "ENDS"), (minigrid_env, "ENDS")):
        monkeypatch.setattr(place, name, Ends())
    with pytest.raises(ValueError, match="memory's expert, replayed in its evaluation: MiniGrid"):
        world.episodes(lay, detoured, 0.5, env, np.random.default_rng(1))
    # and the shared test of every world's endings fails on it, its random episodes first
    with pytest.raises(ValueError, match="where the world's rules go on"):
        test_every_world_ends_its_episodes_in_its_evaluation_where_its_stepper_does(world, 0.0)
