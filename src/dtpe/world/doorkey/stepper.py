"""B DoorKey episodes of one size stepped in lockstep by this world's numpy rules (rules.py),
the BatchedEnv of steps/rollout.py: what data generation plays its expert in and what the
explorer replays a model's actions in. Evaluation plays MiniGrid itself (minigrid_env.py); the
two agree step for step (tests/test_doorkey_world.py).

Rewards follow the project's convention, not MiniGrid's: `step_reward` every step plus
`goal_reward` on reaching the goal, so a step costs the same at every grid size and the
return-to-go a model is conditioned on means the same at 16 x 16 as at 8 x 8. MiniGrid's own
reward, 1 - 0.9 steps / max_steps with max_steps = 10 N^2, values a step less the larger the
grid. The step limit is MiniGrid's (`max_steps`)."""

from __future__ import annotations

from dtpe.world.doorkey import rules
from dtpe.world.lockstep import Lockstep


class BatchedDoorKey(Lockstep, rules=rules):
    """B DoorKey episodes of one size stepped in lockstep (world/lockstep.py's rules of an
    episode). The state: rules.State."""


def max_steps(size: int) -> int:
    """MiniGrid DoorKeyEnv's step limit: `max_steps=10 * size * size`"""
    return 10 * size * size
