"""Rotary position embedding (Su et al. 2021): each head's queries and keys rotated by
k * theta_i, theta_i = 10000^(-2i/d_head), so a score depends on positions only through m - n.
Pairs are (x_i, x_{i + d_head/2}) (the rotate-half layout)."""

from __future__ import annotations

import torch

from dtpe.encodings.base import Encoding, register


def rope_angles(positions: torch.Tensor, head_dim: int) -> torch.Tensor:
    """(T,) -> (T, head_dim/2) angles k * theta_i."""
    theta = 10000.0 ** (
        -torch.arange(0, head_dim, 2, device=positions.device, dtype=torch.float32) / head_dim
    )
    return positions.to(torch.float32)[:, None] * theta


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, -1)
    return torch.cat([-second, first], -1)


def apply_rope(x: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
    """x (B, H, T, dh) rotated by its tokens' positions (T,)."""
    angle = rope_angles(positions, x.shape[-1]).repeat(1, 2)  # (T, dh)
    return (x.float() * angle.cos() + rotate_half(x.float()) * angle.sin()).to(x.dtype)


@register("rope")
class Rope(Encoding):
    def rotate(self, q, k, positions):
        return apply_rope(q, positions), apply_rope(k, positions)
