"""What a model takes from a world: the codes its grids hold and the actions it can take. Each
world declares its own (World.vocabulary, world/base.py); world/catalog.py finds it by name."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Vocabulary:
    """A world's cell codes 0..n_codes-1 and actions 0..n_actions-1, by name."""

    codes: tuple[str, ...]
    """each cell code's name, by code"""
    actions: tuple[str, ...]
    """each action's name, by the index the model emits"""
    agent: tuple[int, ...]
    """the codes of a cell that holds the agent (a world may code its heading or load there)"""
    wall: int
    """the code an egocentric view reads beyond the grid's border"""

    def __post_init__(self):
        if not all(0 <= c < len(self.codes) for c in (*self.agent, self.wall)):
            raise ValueError(f"agent {self.agent} and wall {self.wall} must be among the codes")

    @property
    def n_codes(self) -> int:
        return len(self.codes)

    @property
    def n_actions(self) -> int:
        return len(self.actions)
