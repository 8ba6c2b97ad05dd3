"""k: fixed sinusoids of k added to the input (Vaswani et al. 2017). `sinusoids` is also the
study's encoding of the global timestep t (t_sinusoidal.py)."""

from __future__ import annotations

import math

import torch

from dtpe.model.encodings.base import Encoding, register


def sinusoids(positions: torch.Tensor, dim: int) -> torch.Tensor:
    """(...,) positions -> (..., dim): sin on even channels, cos on odd,
    wavelengths 2pi..10000*2pi."""
    freq = torch.exp(
        torch.arange(0, dim, 2, device=positions.device, dtype=torch.float32)
        * (-math.log(10000.0) / dim)
    )
    angle = positions.to(torch.float32)[..., None] * freq  # (..., dim/2)
    return torch.stack([angle.sin(), angle.cos()], -1).flatten(-2)


@register("k", "sinusoidal", "closed form (Vaswani et al. 2017); shared checks")
class Sinusoidal(Encoding):
    def add_to_input(self, x, positions):
        return x + sinusoids(positions, self.d_model).to(x.dtype)
