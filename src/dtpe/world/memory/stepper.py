"""B Memory episodes of one size stepped in lockstep by this world's numpy rules (rules.py): what
data generation plays its expert in and what the explorer replays a model's actions in.
Evaluation plays MiniGrid itself (minigrid_env.py); the two agree step for step
(tests/test_memory_world.py). The model is given the agent's view (`rules.view`); the matching
object ends an episode as a success, the other as a failure (`rules.ENDS`), as in MiniGrid.
Rewards are the project's (`step_reward` every step plus `goal_reward` on the success cell,
world/doorkey/stepper.py says why not MiniGrid's); the step limit is MiniGrid's (`max_steps`)."""

from __future__ import annotations

from dtpe.world.lockstep import Lockstep
from dtpe.world.memory import rules


def max_steps(size: int) -> int:
    """MiniGrid MemoryEnv's step limit: `max_steps = 5 * size**2`"""
    return 5 * size * size


class BatchedMemory(Lockstep, rules=rules):
    """B Memory episodes of one size stepped in lockstep (world/lockstep.py's rules of an
    episode). The state: rules.State."""
