"""Training learns: a tiny model fits one batch to near-zero loss, and one short epoch of the
real training function beats the untrained model on the 8x8 validation layouts. The other
training tests check what training writes and that it resumes; these check that the labels,
the masks and the optimizer together teach the policy something."""

import dataclasses

import numpy as np
import pytest
import torch

from dtpe import numerics, params
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, train

OVERFIT_STEPS = 200
# Measured after the 200 steps (learned, sinusoidal, rope; init seeds 0-2): 0.003-0.006, from
# 1.4-1.6 at the start.
OVERFIT_LOSS = 0.05


@pytest.fixture
def job_threads(tiny_params):
    """torch's threads as a training job sets them (compute.threads): with torch's default, one
    per core, beside a running job the 200 steps took 20-40 s instead of 3."""
    before = torch.get_num_threads()
    torch.set_num_threads(tiny_params.compute.threads)
    yield
    torch.set_num_threads(before)


@pytest.mark.parametrize("variant", ["learned", "sinusoidal", "rope"])
def test_one_batch_is_fitted_to_near_zero_loss(tiny_data, tiny_params, job_threads, variant):
    # A transformer this size memorises 32 windows whatever the labels, even shifted by a step
    # (measured): this shows that the model, masks and loss can fit every labelled token, not
    # that the labels are the right ones (the epoch test below does).
    torch.manual_seed(0)
    tp, cpu = tiny_params.train, torch.device("cpu")
    episodes = dataset.load(tiny_data / "train.safetensors")
    batch = train.windows(episodes, np.arange(tp.batch_size), tiny_params.model.context, None)
    model = DecisionTransformer(tiny_params.model_config(variant))
    opt = torch.optim.AdamW(model.parameters(), lr=tp.lr, weight_decay=tp.weight_decay)
    # decayed to 0, so the last step does not land on one of Adam's late spikes
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, OVERFIT_STEPS)
    for _ in range(OVERFIT_STEPS):
        loss = train.batch_loss(model, batch, cpu, "fp32", tp.targets)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
    with torch.no_grad():
        fitted = train.batch_loss(model.eval(), batch, cpu, "fp32", tp.targets).item()
    assert fitted < OVERFIT_LOSS


def test_one_short_epoch_beats_the_untrained_model(tmp_path, tiny_raw_params):
    # 4,000 episodes: one epoch of 113 batches, about 2 s. Measured (rope, seeds 1-3, 50
    # layouts): val loss 1.42-1.50 untrained, 0.73-0.74 after the epoch; val success 0 untrained,
    # 0.26-0.30 after it, and 0 after an epoch with the labels shifted by one step.
    tiny_raw_params["data"]["episodes"] = 4000
    tiny_raw_params["train"].update(epochs=1, val_layouts=50)
    p = params.check(tiny_raw_params)
    data = tmp_path / "data"
    dataset.build(p, data)
    untrained = epoch(dataclasses.replace(p, train=dataclasses.replace(p.train, lr=0.0)), data)
    trained = epoch(p, data)
    assert trained.val_loss < untrained.val_loss - 0.3
    assert trained.val_success >= untrained.val_success + 0.1


def epoch(p, data):
    """The metrics row of one epoch of training (rope, seed 1). With lr 0 it measures the
    untrained model: AdamW moves no weight (nor decays any), and validation runs as after any
    epoch, on the same initialisation as the trained run."""
    out = data.parent / f"lr{p.train.lr:g}"
    metrics = train.train(
        p,
        "rope",
        1,
        data,
        out / "model",
        out / "metrics",
        out / "resume",
        1,
        numerics.check(p.compute.numerics, 1),
    )
    return metrics.iloc[-1]
