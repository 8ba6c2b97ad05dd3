"""The state-encoder registry."""
from __future__ import annotations

STATE_ENCODERS: dict[str, type] = {}


def register(name: str):
    def add(cls):
        cls.name = name
        STATE_ENCODERS[name] = cls
        return cls
    return add


def create(name: str, d_model: int, item_dim: int, filters: int):
    if name not in STATE_ENCODERS:
        raise ValueError(f"unknown state encoder {name!r}; registered: {sorted(STATE_ENCODERS)}")
    return STATE_ENCODERS[name](d_model, item_dim, filters)
