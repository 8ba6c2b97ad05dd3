"""The state-encoder registry."""

from __future__ import annotations

STATE_ENCODERS: dict[str, type] = {}


def register(name: str):
    def add(cls):
        cls.name = name
        STATE_ENCODERS[name] = cls
        return cls

    return add


def create(cfg):
    """The encoder cfg.state_encoder, sized by the model config's fields it reads."""
    if cfg.state_encoder not in STATE_ENCODERS:
        raise ValueError(
            f"unknown state encoder {cfg.state_encoder!r}; registered: {sorted(STATE_ENCODERS)}"
        )
    return STATE_ENCODERS[cfg.state_encoder](cfg)
