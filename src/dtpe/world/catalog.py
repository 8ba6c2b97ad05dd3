"""The worlds, by the name params' `env.world` and a model's config give."""

from __future__ import annotations

from dtpe.world import maze
from dtpe.world.doorkey import rules as doorkey
from dtpe.world.vocabulary import Vocabulary

WORLDS = {"maze": maze.VOCABULARY, "doorkey": doorkey.VOCABULARY}


def vocabulary(world: str) -> Vocabulary:
    """Raises ValueError naming the worlds there are."""
    if world not in WORLDS:
        raise ValueError(f"world {world!r} is not one of {', '.join(sorted(WORLDS))}")
    return WORLDS[world]
