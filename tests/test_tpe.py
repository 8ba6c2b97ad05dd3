"""T-PE, the t encoding inside attention: no public code matches the description the project's
sources give, so its oracle is that description, re-derived here term by term and checked on
the sources' worked example; the model's attention layer is checked against it with timesteps
that differ between the rows of a batch, and under the evaluation's cache."""

import math

import pytest
import torch
from test_encodings import CFG, batch, logits, make
from test_source_encodings import POSITIONS, B, attention_layer, causal_softmax

from dtpe.model.transformer import KVCache

torch.set_num_threads(1)


def tpe_scores(q, k, t_q, t_k, h):
    """Pre-mask scores (B, H, Tq, Tk): q_i . (k_j + h(t_i - t_j)) / sqrt(dh), t_q (B, Tq) and
    t_k (B, Tk) the tokens' timesteps, h mapping intervals (...,) to (..., dh), shared by the
    heads: the key of every pair formed explicitly, as the description writes it."""
    interval = (t_q[:, :, None] - t_k[:, None, :]).to(q.dtype)  # (B, Tq, Tk), t_i - t_j
    keys = k[:, :, None, :, :] + h(interval)[:, None]  # (B, H, Tq, Tk, dh): k_j + r_ij
    return (q[:, :, :, None, :] * keys).sum(-1) / math.sqrt(q.shape[-1])


def test_the_oracle_gives_the_sources_worked_example():
    """q_2 = [.1]*4, k_6 = [.5]*4, t_2 = 10, t_6 = 15, h(-5) = [.1, -.1, .2, -.2]: k_6' = [.6, .4,
    .7, .3] and the score 0.1 . (.6 + .4 + .7 + .3) / sqrt(4) = 0.1."""
    q, k = torch.zeros(1, 1, 8, 4), torch.zeros(1, 1, 8, 4)
    q[0, 0, 2], k[0, 0, 6] = 0.1, 0.5
    t = torch.arange(8)[None] * 5
    t[0, 6] = 15

    def h(interval):  # linear in the interval, h(-5) = [.1, -.1, .2, -.2]
        return interval[..., None] * torch.tensor([-0.02, 0.02, -0.04, 0.04])

    assert torch.allclose(h(torch.tensor(-5.0)), torch.tensor([0.1, -0.1, 0.2, -0.2]))
    assert tpe_scores(q, k, t, t, h)[0, 0, 2, 6].item() == pytest.approx(0.1, abs=1e-7)


def test_the_attention_layer_matches_the_description_with_timesteps_per_row():
    model, run = attention_layer("nope-t_tpe")
    enc = model.t_encoding
    times = torch.stack([POSITIONS * 2 + 3, POSITIONS + 40])  # other timesteps in every row
    assert len(times) == B
    q, k, v, out = run(POSITIONS, times)
    with torch.no_grad():
        scores = tpe_scores(q, k, times, times, lambda d: enc.h((d / CFG["context"])[..., None]))
    torch.testing.assert_close(out, causal_softmax(scores, POSITIONS) @ v, rtol=1e-5, atol=1e-5)


def test_it_reads_intervals_alone():
    """Moving every timestep of a window by the same amount changes nothing; moving one row's
    changes that row's logits."""
    model = make("nope-t_tpe")
    rtg, states, actions, timesteps = batch()
    base = logits(model, rtg, states, actions, timesteps)
    torch.testing.assert_close(logits(model, rtg, states, actions, timesteps + 500), base)
    stretched = timesteps.clone()
    stretched[1] = stretched[1] * 3
    moved = logits(model, rtg, states, actions, stretched)
    torch.testing.assert_close(moved[0], base[0])
    assert not torch.allclose(moved[1], base[1])


def test_the_cache_keeps_each_rows_timesteps():
    """Under the evaluation's cache, with rows whose timesteps differ and a row leaving the
    batch midway, every step equals the full window's pass."""
    model = make("rope-t_tpe")
    rtg, states, actions, _ = batch(t=CFG["context"])
    timesteps = torch.stack([torch.arange(CFG["context"]), torch.arange(CFG["context"]) * 2 + 5])
    full = logits(model, rtg, states, actions, timesteps)
    emb = model.encode_states(states)
    cache = KVCache(len(model.blocks), 2, 3 * CFG["context"])
    with torch.no_grad():
        for n in range(1, CFG["context"] + 1):
            rows = torch.arange(2) if n <= 3 else torch.tensor([1])
            cache.rows = rows
            step = model.next_action(
                rtg[rows, :n], emb[rows, :n], actions[rows, :n], timesteps[rows, :n], cache
            )
            torch.testing.assert_close(step, full[rows, n - 1], rtol=1e-5, atol=1e-5)
