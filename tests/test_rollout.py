"""The rollout seam: the same policy on the same layouts plays the same episodes whether the
batch is the maze's own stepper or Gymnasium envs of KeyDoorMaze-v0 (one env per layout), of
which only the unfinished ones step."""

import gymnasium as gym
import numpy as np
import torch
from conftest import plan

from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, rollout
from dtpe.world.gym_batch import GymBatch
from dtpe.world.maze.rules import N_ACTIONS, BatchedMaze


def gym_batch(lay, env) -> GymBatch:
    return GymBatch(
        [
            gym.make(
                "dtpe.world.maze.env:KeyDoorMaze-v0",  # imports the module that registers it
                size=lay.size,
                cap_factor=env.options["cap_factor"],
                step_reward=env.step_reward,
                goal_reward=env.goal_reward,
                layout=lay.subset([i]),
            )
            for i in range(len(lay))
        ]
    )


def test_the_model_plays_the_same_episodes_in_gymnasium_envs(tiny_data, tiny_params):
    torch.manual_seed(0)
    model = DecisionTransformer(tiny_params.model_config("rope")).eval()
    lay, _ = dataset.load_suite(tiny_data, 8, tiny_params.env)
    env, context, target = tiny_params.env, tiny_params.model.context, 0.8
    policy = DecisionTransformerPolicy(model, context, target)
    through_gym = rollout.play(gym_batch(lay, env), policy, env.cap(lay.size), trace=True)
    maze = rollout.rollout(model, lay, env, context, target, trace=True)
    for key in ("success", "steps", "ending", "actions", "probs"):
        np.testing.assert_array_equal(through_gym[key], maze[key], err_msg=key)


class Scripted:
    """Plays each episode's own actions, then action 0; adds up the rewards it observes."""

    n_actions = N_ACTIONS

    def __init__(self, scripts: list[list[int]]):
        self.scripts = scripts

    def start(self, batch_size: int, cap: int) -> None:
        self.t, self.returns = 0, np.zeros(batch_size)

    def act(self, obs, active):
        actions = [s[self.t] if self.t < len(s) else 0 for s in self.scripts]
        self.t += 1
        return np.array(actions), np.zeros((len(actions), N_ACTIONS), np.float32)

    def observe(self, rewards) -> None:
        self.returns += rewards


def test_episodes_that_end_apart_are_the_mazes_in_gymnasium_envs(tiny_data, tiny_params):
    """Half the episodes follow the plan and end early, at different steps; their envs step no
    more, and nothing of theirs reaches the batch's results or rewards after their end."""
    lay, _ = dataset.load_suite(tiny_data, 8, tiny_params.env)
    env, cap = tiny_params.env, tiny_params.env.cap(lay.size)
    scripts = [plan(lay, i) if i % 2 == 0 else [] for i in range(len(lay))]
    played = {}
    for name, batch in (
        ("maze", BatchedMaze(lay, cap, env.step_reward, env.goal_reward)),
        ("gym", gym_batch(lay, env)),
    ):
        policy = Scripted(scripts)
        played[name] = rollout.play(batch, policy, cap, trace=True), policy.returns
    (maze, maze_returns), (through_gym, gym_returns) = played["maze"], played["gym"]
    planned = np.array([len(s) for s in scripts[::2]])
    assert maze["success"][::2].all() and (maze["steps"][::2] == planned).all()
    assert len(set(planned)) > 1 and (planned < cap).all()
    for key in ("success", "steps", "ending", "actions"):
        np.testing.assert_array_equal(through_gym[key], maze[key], err_msg=key)
    assert (maze["ending"][::2] == "success").all() and (maze["ending"][1::2] == "cap").all()
    np.testing.assert_array_equal(gym_returns, maze_returns)
    np.testing.assert_allclose(
        maze_returns, env.step_reward * maze["steps"] + env.goal_reward * maze["success"]
    )


class Ends:
    """A Gymnasium env that terminates at step `at`, in success or not, or never."""

    def __init__(self, at: int | None, success: bool):
        self.at, self.won = at, success

    def reset(self, seed=None):
        self.t = 0
        return np.zeros((1, 1)), {}

    def step(self, action):
        self.t += 1
        over = self.t == self.at
        return np.zeros((1, 1)), 0.0, over, False, {"success": over and self.won}


def test_gymnasium_envs_name_how_each_episode_ended():
    """An env that terminates without success ends in failure, one that never terminates at the
    cap: MiniGrid's wrong object or lava as the evaluation records it."""
    batch = GymBatch([Ends(2, True), Ends(3, False), Ends(None, False)])
    played = rollout.play(batch, Scripted([[], [], []]), cap=5)
    assert played["ending"].tolist() == ["success", "failure", "cap"]
    assert played["steps"].tolist() == [2, 3, 5]
