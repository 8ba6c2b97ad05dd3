"""k: rotary position embedding (Su et al. 2021): each head's queries and keys rotated by
k * theta_i, theta_i = 10000^(-2i/d_head), so a score depends on positions only through m - n.
Pairs are (x_i, x_{i + d_head/2}) (the rotate-half layout, as transformers' Llama).

Inference-time scaling for contexts beyond the training context C, set per evaluation context by
`for_context(context, scaling)` with factor s = context / C (at context <= C, or scaling
"none", rope is the trained one, computed exactly as without scaling):
- linear: position interpolation (Chen et al. 2023), theta_i / s;
- ntk: NTK-aware base, 10000 * s^(d/(d-2)) (transformers' "dynamic" at seq_len = context);
- yarn: YaRN (Peng et al. 2023): per-frequency blend of the two by a ramp over the rotations a
  frequency makes in C (beta_fast 32, beta_slow 1), cos and sin scaled by 0.1 ln s + 1.
Positions are in timesteps (a step's three tokens share k).
"""

from __future__ import annotations

import math

import torch

from dtpe.model.encodings.base import Encoding, NotApplicable, register

THETA = 10000.0
"""RoPE's base"""
SCALINGS = ("none", "linear", "ntk", "yarn")
"""the inference-time scalings `for_context` accepts"""
YARN_BETA_FAST, YARN_BETA_SLOW = 32, 1
"""YaRN's ramp bounds in rotations over the training context (the paper's and transformers')"""


def rope_angles(positions: torch.Tensor, head_dim: int) -> torch.Tensor:
    """(T,) -> (T, head_dim/2) angles k * theta_i."""
    theta = THETA ** (
        -torch.arange(0, head_dim, 2, device=positions.device, dtype=torch.float32) / head_dim
    )
    return positions.to(torch.float32)[:, None] * theta


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    first, second = x.chunk(2, -1)
    return torch.cat([-second, first], -1)


def apply_rope(x: torch.Tensor, angle: torch.Tensor, factor: float = 1.0) -> torch.Tensor:
    """x (B, H, T, dh) rotated by angles (T, dh/2); cos and sin scaled by `factor` (YaRN's)."""
    angle = angle.repeat(1, 2)  # (T, dh)
    cos, sin = angle.cos(), angle.sin()
    if factor != 1.0:
        cos, sin = cos * factor, sin * factor
    return (x.float() * cos + rotate_half(x.float()) * sin).to(x.dtype)


def scaled_inv_freq(scaling: str, factor: float, head_dim: int, context: int):
    """(inv_freq (head_dim/2,), attention factor) of `scaling` at factor s = new / training
    context `context`; the oracle is transformers' ROPE_INIT_FUNCTIONS (tests)."""
    exponent = torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim
    if scaling == "linear":
        return 1.0 / THETA**exponent / factor, 1.0
    if scaling == "ntk":
        return 1.0 / (THETA * factor ** (head_dim / (head_dim - 2))) ** exponent, 1.0
    if scaling == "yarn":

        def correction_dim(rotations):
            return head_dim * math.log(context / (rotations * 2 * math.pi)) / (2 * math.log(THETA))

        low = max(math.floor(correction_dim(YARN_BETA_FAST)), 0)
        high = min(math.ceil(correction_dim(YARN_BETA_SLOW)), head_dim - 1)
        high = high + 0.001 if low == high else high
        ramp = ((torch.arange(head_dim // 2, dtype=torch.float32) - low) / (high - low)).clamp(0, 1)
        extrapolated = 1.0 / THETA**exponent
        blend = 1 - ramp  # 1: keep the frequency (fast ones), 0: interpolate it (slow ones)
        inv_freq = extrapolated / factor * (1 - blend) + extrapolated * blend
        return inv_freq, 0.1 * math.log(factor) + 1.0
    raise NotApplicable(f"rope has no scaling {scaling!r}; scalings: {SCALINGS}")


@register("k", "rope", "closed form; scalings vs transformers 5.23 ROPE_INIT_FUNCTIONS")
class Rope(Encoding):
    params = ("evaluate.rope_scaling",)

    def __init__(self, cfg):
        super().__init__(cfg)
        self.scaling: tuple[torch.Tensor, float] | None = None
        """(inv_freq, attention factor) set by `for_context`; None: the trained rope"""

    def for_context(self, context, scaling="none"):
        if scaling not in SCALINGS:
            raise NotApplicable(f"rope has no scaling {scaling!r}; scalings: {SCALINGS}")
        self.scaling = None
        if scaling != "none" and context > self.context:
            self.scaling = scaled_inv_freq(
                scaling, context / self.context, self.head_dim, self.context
            )

    def angles(self, positions: torch.Tensor) -> tuple[torch.Tensor, float]:
        if self.scaling is None:
            return rope_angles(positions, self.head_dim), 1.0
        inv_freq, factor = self.scaling
        return positions.to(torch.float32)[:, None] * inv_freq.to(positions.device), factor

    def rotate(self, q, k, positions):
        angle, factor = self.angles(positions)
        return apply_rope(q, angle, factor), apply_rope(k, angle, factor)
