"""Outputs of freshly built models of the study's three encodings on a fixed batch, a cached
step-by-step pass and a short greedy rollout: run at commit 86a615c (before the encodings had
two axes) to write tests/data/study_encodings_86a615c.pt, and by tests/test_encodings.py with
the current code, which must reproduce them: the same actions, the same floats to
float32 rounding (bit for bit on a CPU whose kernels sum in the same order).

    PYTHONPATH=<worktree at 86a615c>/src python tests/reference_outputs.py OUT.pt
"""

import dataclasses
import sys

import numpy as np
import torch

from dtpe.model.config import ModelConfig
from dtpe.model.transformer import DecisionTransformer, KVCache
from dtpe.params import Env
from dtpe.steps.rollout import rollout

try:
    from dtpe.world.maze import layouts
except ImportError:  # 86a615c, before each world was a package
    from dtpe.world import layouts

STUDY = ("learned", "sinusoidal", "rope")
SHAPE = dict(
    d_model=32, n_heads=2, n_layers=2, ffn_mult=2, dropout=0.1, attention_dropout=0.1, context=6,
    state_encoder="cnn_coord", item_dim=8, encoder_filters=8, view_radius=2, rtg_scale=1.0,
    t_table=40, t_max_offset=60,  # fields of the model at 86a615c, options of encodings since
)  # fmt: skip
ENV = Env(
    **{
        k: v
        for k, v in dict(
            world="maze",
            wall_density=0.1,
            cap_factor=2,
            step_reward=-0.01,
            goal_reward=1.0,
            options=dict(wall_density=0.1, cap_factor=2),
        ).items()
        # 86a615c's Env has no world and holds the maze's knobs, which are options since
        if k in {f.name for f in dataclasses.fields(Env)}
    }
)


def build(variant: str) -> DecisionTransformer:
    names = {f.name for f in dataclasses.fields(ModelConfig)}
    torch.manual_seed(0)
    # the variant's field was `encoding` at 86a615c; the study's three read no options
    given = {**SHAPE, "encoding": variant, "variant": variant, "options": {"k": {}, "t": {}}}
    cfg = ModelConfig(**{k: v for k, v in given.items() if k in names})
    return DecisionTransformer(cfg).eval()


def outputs(encoding: str) -> dict[str, torch.Tensor]:
    model = build(encoding)
    lay = layouts.generate(8, 3, np.random.default_rng(0), 0.1)
    g = torch.Generator().manual_seed(1)
    b, t = 3, SHAPE["context"]
    states = torch.from_numpy(np.repeat(lay.grid[:, None], t, 1))
    rtg = torch.rand(b, t, generator=g)
    actions = torch.randint(0, 4, (b, t), generator=g)
    timesteps = torch.arange(t)[None] + torch.tensor([[0], [5], [30]])
    with torch.no_grad():
        emb = model.encode_states(states)
        logits, weights = model(rtg, emb, actions, timesteps, need_attention=True)
        cache = KVCache(len(model.blocks), b, 3 * t)
        steps = torch.stack(
            [
                model.next_action(rtg[:, :n], emb[:, :n], actions[:, :n], timesteps[:, :n], cache)
                for n in range(1, t + 1)
            ],
            1,
        )
    played = rollout(model, lay, ENV, SHAPE["context"], 0.8)
    return {
        "logits": logits,
        "attention": weights,
        "cached_steps": steps,
        "rollout_success": torch.as_tensor(np.asarray(played["success"])),
        "rollout_steps": torch.as_tensor(np.asarray(played["steps"])),
    }


if __name__ == "__main__":
    torch.save({e: outputs(e) for e in STUDY}, sys.argv[1])
