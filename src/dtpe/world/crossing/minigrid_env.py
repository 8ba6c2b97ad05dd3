"""Policies act in MiniGrid itself: a batch of MiniGrid's `CrossingEnv(size=N, num_crossings=k,
obstacle_type=Wall)`, one env per layout, each reset with the layout's seed, seen through
`CrossingView` (world/minigrid_view.py): the full grid in this world's codes, our three actions,
the project's rewards. Success is the goal (`rules.ENDS`), where MiniGrid terminates (the walls
end nothing), within MiniGrid's step limit (`truncated` at max_steps = 4 N^2)."""

from __future__ import annotations

from minigrid.envs import CrossingEnv

from dtpe.world.crossing.layouts import READER, make_env
from dtpe.world.crossing.rules import ENDS, MINIGRID_ACTIONS, Layouts, initial_state, render
from dtpe.world.gym_batch import GymBatch
from dtpe.world.minigrid_view import ProjectView, fully_observed

FullyObservedCrossing = fully_observed(CrossingEnv)


class CrossingView(ProjectView):
    """SimpleCrossing through this world's codes and its actions (left, right, forward): what
    moves is the agent alone."""

    reader, minigrid_actions, ends = READER, MINIGRID_ACTIONS, ENDS


def minigrid_batch(
    layouts: Layouts, num_crossings: int, step_reward: float, goal_reward: float
) -> GymBatch:
    """The layouts as a batch of MiniGrid episodes. Raises ValueError if a layout's seed does
    not draw that layout (a layout not from `reset(seed)`, or another MiniGrid's generator)."""
    size = layouts.size
    return CrossingView.batch(
        lambda: make_env(size, num_crossings, FullyObservedCrossing),
        layouts,
        render(layouts, initial_state(layouts)),
        step_reward,
        goal_reward,
        f"MiniGrid's CrossingEnv({size}, {num_crossings} crossings)",
        "were they made with another num_crossings or minigrid version?",
    )
