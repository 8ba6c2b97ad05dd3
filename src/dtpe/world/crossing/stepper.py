"""B SimpleCrossing episodes of one size stepped in lockstep by this world's numpy rules
(rules.py): what data generation plays its expert in and what the explorer replays a model's
actions in. Evaluation plays MiniGrid itself (minigrid_env.py); the two agree step for step
(tests/test_crossing_world.py). Rewards are the project's (`step_reward` every step plus
`goal_reward` on the goal, world/doorkey/stepper.py says why not MiniGrid's); the step limit is
MiniGrid's (`max_steps`)."""

from __future__ import annotations

from dtpe.world.crossing import rules
from dtpe.world.lockstep import Lockstep


def max_steps(size: int) -> int:
    """MiniGrid CrossingEnv's step limit: `max_steps = 4 * size**2`"""
    return 4 * size * size


class BatchedCrossing(Lockstep, rules=rules):
    """B SimpleCrossing episodes of one size stepped in lockstep (world/lockstep.py's rules of
    an episode). The state: rules.State."""
