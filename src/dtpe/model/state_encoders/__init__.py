"""Registry of state encoders: grid (..., N, N) of item codes -> (..., d_model), for any N.

A new encoder is one module here decorated with `@register("name")`, named in
params.yaml's model.state_encoder; it is built from the model config and reads the fields it
needs (d_model, item_dim, encoder_filters, view_radius)."""

from dtpe.model.state_encoders import cnn, cnn_coord, cnn_ego, view  # noqa: F401  (registration)
from dtpe.model.state_encoders.base import STATE_ENCODERS, create, register

__all__ = ["STATE_ENCODERS", "create", "register"]
