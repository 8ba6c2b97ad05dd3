"""Registry of state encoders: grid (..., N, N) of item codes -> (..., d_model), for any N.

A new encoder is one module here decorated with `@register("name")`, named in
params.yaml's model.state_encoder."""
from dtpe.state_encoders.base import STATE_ENCODERS, create, register
from dtpe.state_encoders import cnn, cnn_coord  # noqa: F401  (registration)

__all__ = ["STATE_ENCODERS", "create", "register"]
