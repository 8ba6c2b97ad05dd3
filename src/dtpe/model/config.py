"""A model's configuration: the `model` params group (what every variant shares) and the variant
it builds with its encodings' options. The model owns it; dtpe.params reads the group into it
and builds a variant's config (`Params.model_config`). No torch: validating params imports it."""

from __future__ import annotations

from dataclasses import dataclass

from dtpe.world.catalog import UNNAMED as DEFAULT_WORLD


@dataclass(frozen=True)
class Model:
    d_model: int
    n_heads: int
    n_layers: int
    ffn_mult: int
    """FFN hidden = ffn_mult * d_model"""
    dropout: float
    """on the embeddings, the attention output and the feed-forward output"""
    attention_dropout: float
    """on the attention weights; 0 lets the attention run as one fused kernel on the CPU"""
    context: int
    """K, the training context in timesteps (3K tokens)"""
    state_encoder: str
    """name from the state-encoder registry"""
    item_dim: int
    """embedding size of the grid's item codes"""
    encoder_filters: int
    """filters of each conv layer of the state encoder"""
    view_radius: int
    """cells the egocentric view reaches from the agent in each direction (cnn_ego)"""
    rtg_scale: float
    """RTG is divided by this before its projection"""


@dataclass(frozen=True)
class ModelConfig(Model):
    """The `model` params and the variant they build."""

    variant: str
    """`<k>` or `<k>-t_<t>` (catalog.variant reads it)"""
    options: dict
    """per axis, the options of the variant's encoding on that axis (params `encodings`)"""
    world: str = DEFAULT_WORLD
    """the world whose cell codes and actions the model takes (params `env.world`)"""
