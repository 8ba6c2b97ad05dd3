"""Training: windows aligned at k = 0, the recorded positions, resuming, the fast path against
the plain fp32 fully padded reference, and batched evaluation against one episode at a time."""

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch

from dtpe import numerics
from dtpe.model import checkpoint
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import dataset, rollout, train

RECORD = numerics.check(numerics.PORTABLE, 1)


def test_windows_start_at_k0_and_mask_padding(tiny_data, tiny_params):
    eps = dataset.load(tiny_data / "train.safetensors")
    lengths = np.diff(eps["offsets"])
    index = np.arange(10)
    win = train.windows(eps, index, 6, None)
    width = np.minimum(lengths[index], 6)
    assert win["valid"].shape[1] == width.max()
    assert (win["valid"].sum(1).numpy() == width).all()
    assert (win["timesteps"][:, 0] == 0).all()  # start 0 without rng
    full = train.windows(eps, index, 6, None, full_padding=True)
    assert full["valid"].shape[1] == 6
    rng = np.random.default_rng(0)
    t = train.windows(eps, np.arange(len(lengths)), 6, rng)["timesteps"]
    assert t.max() > 5  # random starts reach past the first K steps of long episodes


def test_training_writes_metrics_positions_and_resumes_exactly(tiny_data, tiny_params, tmp_path):
    p = dataclasses.replace(
        tiny_params, train=dataclasses.replace(tiny_params.train, precision="fp32")
    )
    full = train.train(
        p, "rope", 1, tiny_data, tmp_path / "a", tmp_path / "am", tmp_path / "ar", 1, RECORD
    )
    assert list(full.columns) == [
        "epoch",
        "train_loss",
        "val_loss",
        "val_success",
        "overfit_gap",
        "seconds",
    ]
    assert np.allclose(full.overfit_gap, full.val_loss - full.train_loss)
    positions = json.loads((tmp_path / "am" / "positions.json").read_text())
    assert positions["context"] == 6 and len(positions["k_histogram"]) == 6
    assert positions["k_histogram"][0] >= positions["k_histogram"][-1]
    assert not (tmp_path / "ar").exists()  # no empty resume folder left behind
    assert sorted(f.name for f in (tmp_path / "am").iterdir()) == [
        "metrics.csv",
        "numerics.json",
        "positions.json",
    ]
    recorded = json.loads((tmp_path / "am" / "numerics.json").read_text())
    assert recorded == RECORD and recorded["reproducible_on"] == numerics.EVERY_CPU
    saved = json.loads((tmp_path / "a" / "config.json").read_text())["numerics"]
    assert saved == {k: v for k, v in RECORD.items() if k != "cpu"}
    assert all(f.stat().st_mode & 0o777 == 0o644 for f in (tmp_path / "a").iterdir())

    # An interrupted run: killed during epoch 2's validation, after epoch 1's checkpoint.
    resume = tmp_path / "br" / "last.pt"
    calls = {"n": 0}
    real_rollout = rollout.rollout

    def interrupt(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real_rollout(*a, **k)

    rollout.rollout = interrupt
    try:
        with pytest.raises(KeyboardInterrupt):
            train.train(
                p, "rope", 1, tiny_data, tmp_path / "b", tmp_path / "bm", tmp_path / "br", 1, RECORD
            )
    finally:
        rollout.rollout = real_rollout
    assert resume.exists() and not (tmp_path / "b").exists()
    resumed = train.train(
        p, "rope", 1, tiny_data, tmp_path / "b", tmp_path / "bm", tmp_path / "br", 1, RECORD
    )
    a = checkpoint.load(tmp_path / "a").state_dict()
    b = checkpoint.load(tmp_path / "b").state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    pd.testing.assert_frame_equal(full.drop(columns="seconds"), resumed.drop(columns="seconds"))


def test_resume_key_covers_params_data_and_code(tiny_data, tiny_params, tmp_path, monkeypatch):
    """A resume checkpoint of other params, a seed, or an older version of any module is ignored."""
    key = train.run_key(tiny_params, "rope", 1, tiny_data)
    assert train.run_key(tiny_params, "rope", 2, tiny_data) != key
    assert (
        train.run_key(
            dataclasses.replace(tiny_params, train=dataclasses.replace(tiny_params.train, lr=0.5)),
            "rope",
            1,
            tiny_data,
        )
        != key
    )
    package = tmp_path / "dtpe"
    shutil.copytree(
        Path(train.__file__).parents[1], package, ignore=shutil.ignore_patterns("__pycache__")
    )
    monkeypatch.setattr(train, "__file__", str(package / "steps" / "train.py"))
    assert train.run_key(tiny_params, "rope", 1, tiny_data) == key
    rope = package / "model" / "encodings" / "rope.py"
    rope.write_text(rope.read_text() + "# an edit\n")
    assert train.run_key(tiny_params, "rope", 1, tiny_data) != key


def test_fast_path_loss_tracks_plain_fp32(tiny_data, tiny_params):
    eps = dataset.load(tiny_data / "train.safetensors")
    cfg = tiny_params.model_config("rope")
    losses = {}
    for name, precision, full in (("plain", "fp32", True), ("fast", "bf16", False)):
        torch.manual_seed(0)
        model = DecisionTransformer(dataclasses.replace(cfg, dropout=0.0))
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        rng = np.random.default_rng(0)
        losses[name] = []
        for _ in range(30):
            loss = train.batch_loss(
                model,
                train.windows(eps, rng.integers(0, 100, 32), 6, rng, full),
                torch.device("cpu"),
                precision,
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            losses[name].append(loss.item())
    # bf16 rounds activations to 8 bits of mantissa: the curves must agree to 2 %.
    assert np.allclose(losses["fast"], losses["plain"], rtol=0.02)


def test_validation_loss_is_the_mean_over_every_action(tiny_data, tiny_params):
    """Batched by length, weighted by each batch's actions: the same as one fully padded batch.
    At context 20 most windows are shorter than the context, so an unweighted mean of batch
    means would differ."""
    eps = dataset.load(tiny_data / "val.safetensors")
    assert (np.diff(eps["offsets"]) < 20).mean() > 0.5
    torch.manual_seed(0)
    model = DecisionTransformer(
        dataclasses.replace(tiny_params.model_config("rope"), context=20)
    ).eval()
    everything = train.windows(eps, np.arange(len(eps["offsets"]) - 1), 20, None, full_padding=True)
    with torch.no_grad():
        expected = train.batch_loss(model, everything, torch.device("cpu"), "fp32").item()
    assert train.validation_loss(model, eps, 20, 4, torch.device("cpu"), "fp32") == pytest.approx(
        expected, rel=1e-6
    )


def test_batched_evaluation_equals_one_episode_at_a_time(tiny_data, tiny_params):
    torch.manual_seed(0)
    model = DecisionTransformer(tiny_params.model_config("sinusoidal")).eval()
    lay, _ = dataset.load_suite(tiny_data, 10, tiny_params.env)
    batched = rollout.rollout(model, lay, tiny_params.env, 6, 1.0)
    single = [
        rollout.rollout(model, lay.subset([i]), tiny_params.env, 6, 1.0) for i in range(len(lay))
    ]
    assert (batched["steps"] == np.concatenate([s["steps"] for s in single])).all()
    assert (batched["success"] == np.concatenate([s["success"] for s in single])).all()
    assert (batched["steps"] <= tiny_params.env.cap(10)).all()


@pytest.mark.parametrize("episodes,batch_size", [(3500, 16), (513, 32), (17, 7), (5000, 64)])
def test_batches_per_epoch_counts_length_buckets(episodes, batch_size):
    rng = np.random.default_rng(0)
    buckets = train.length_buckets(rng.integers(1, 30, episodes), batch_size, rng)
    assert train.batches_per_epoch(episodes, batch_size) == len(buckets)
    assert sorted(np.concatenate(buckets)) == list(range(episodes))


def test_cosine_schedule_decays_to_zero_and_constant_stays():
    cosine, constant = train.lr_factor("cosine", 100), train.lr_factor("constant", 100)
    assert (
        cosine(0) == 1.0 and cosine(50) == pytest.approx(0.5) and cosine(100) == pytest.approx(0.0)
    )
    assert all(np.diff([cosine(s) for s in range(101)]) <= 0)
    assert {constant(s) for s in (0, 50, 100)} == {1.0}


def test_expert_targets_label_states_with_the_plans_action(tiny_data, tiny_params):
    """The input's action tokens are the actions taken either way; only the labels change."""
    eps = dataset.load(tiny_data / "train.safetensors")
    batch = train.windows(eps, np.arange(64), 6, None)
    valid = batch["valid"]
    assert (batch["expert_actions"][valid] != batch["actions"][valid]).any()
    torch.manual_seed(0)
    model = DecisionTransformer(tiny_params.model_config("rope")).eval()
    with torch.no_grad():
        logits = model(
            batch["rtg"], model.encode_states(batch["states"]), batch["actions"], batch["timesteps"]
        )[valid]
        for targets, labels in (("taken", "actions"), ("expert", "expert_actions")):
            loss = train.batch_loss(model, batch, torch.device("cpu"), "fp32", targets)
            expected = torch.nn.functional.cross_entropy(logits, batch[labels][valid])
            assert loss.item() == pytest.approx(expected.item(), rel=1e-6)


def test_validation_every_n_epochs_and_after_the_last(tiny_data, tiny_params, tmp_path):
    p = dataclasses.replace(
        tiny_params, train=dataclasses.replace(tiny_params.train, epochs=3, val_every=2)
    )
    rows = train.train(
        p, "rope", 1, tiny_data, tmp_path / "m", tmp_path / "mm", tmp_path / "r", 1, RECORD
    )
    assert rows.val_success.notna().tolist() == [False, True, True]
    assert rows.train_loss.notna().all()
