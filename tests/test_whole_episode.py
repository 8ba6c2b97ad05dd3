"""Attention over the whole episode at test (issue 60): at a context that holds every step of an
episode the window never slides, so each step runs its own tokens against the key/value cache.
Here the cached rollout plays the same actions with the same logits (to float rounding) as the
rollout that runs the whole window every step, for every registered encoding, rope and xpos
under each inference-time scaling too; an encoding that cannot index the context is N/A, never
a crash; learnedlong's table reaches it and trains only its first rows; and params refuse a
whole-episode context shorter than an episode, before any work."""

import dataclasses

import pytest
import torch
import yaml

from dtpe import cli, params
from dtpe.model import encodings
from dtpe.model.encodings import NotApplicable
from dtpe.model.encodings.rope import SCALINGS
from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.model.transformer import TOKENS_PER_STEP, DecisionTransformer, KVCache
from dtpe.steps import contract, dataset, evaluate, rollout
from dtpe.world import catalog as worlds

torch.set_num_threads(1)
VARIANTS = sorted(encodings.REGISTRY["k"]) + [
    f"rope-t_{t}" for t in sorted(encodings.REGISTRY["t"]) if t != encodings.DEFAULT_T
]
SIZE = 10
"""the tiny suites' largest size: untrained models wander to its cap, 50 steps, 8x the
training context of 6"""


def played(model, lay, env, context: int, cached: bool):
    """`play`'s results, the logits (rows, n_actions) of every step, the tokens each step
    ran through the first block and the timesteps each step was handed."""
    logits, tokens, gathered = [], [], []
    step = model.next_action

    def recorded(*args, **kwargs):
        out = step(*args, **kwargs)
        logits.append(out)
        gathered.append(args[0].shape[1])
        return out

    model.next_action = recorded
    hook = model.blocks[0].register_forward_pre_hook(
        lambda _, args: tokens.append(args[0].shape[1])
    )
    try:
        policy = DecisionTransformerPolicy(model, context, 0.8, cached=cached)
        game = worlds.get(env.world).evaluation_env(lay, env)
        result = rollout.play(game, policy, env.cap(lay.size), trace=True)
    finally:
        del model.next_action
        hook.remove()
    return result, logits, tokens, gathered


def assert_same_rollouts(model, lay, env, context: int) -> list:
    cached, cached_logits, cached_tokens, cached_steps = played(model, lay, env, context, True)
    whole, whole_logits, whole_tokens, _ = played(model, lay, env, context, cached=False)
    for key in ("success", "steps", "actions"):
        assert (cached[key] == whole[key]).all(), key
    assert len(cached_logits) == len(whole_logits) == cached["steps"].max()
    for t, (a, b) in enumerate(zip(cached_logits, whole_logits)):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-5, msg=f"step {t}")
    # a cached step runs its own tokens (the last action, the return-to-go, the state), never
    # the history: its cost grows with the keys alone, linearly in the steps so far
    assert max(cached_tokens) <= TOKENS_PER_STEP and max(whole_tokens) > 10 * TOKENS_PER_STEP
    # nor is it handed the history: only the last step's action and its own
    assert max(cached_steps) <= 2
    return cached_logits


@pytest.fixture(scope="module")
def whole_episode(tiny_params):
    """The tiny params with a whole-episode context: the largest suite's cap."""
    context = tiny_params.env.cap(SIZE)
    return dataclasses.replace(
        tiny_params,
        evaluate=dataclasses.replace(
            tiny_params.evaluate,
            contexts=[tiny_params.model.context, context],
            whole_episode=True,
        ),
    )


@pytest.mark.parametrize("variant", VARIANTS)
def test_cached_and_uncached_rollouts_agree_over_the_whole_episode(
    variant, tiny_data, whole_episode
):
    p = whole_episode
    context = max(p.evaluate.contexts)
    model = contract.model_of(p, variant)
    lay, optimal = dataset.load_suite(tiny_data, SIZE, p.env)
    bound = model.k_encoding.max_position
    if bound is not None and bound < context - 1:
        with pytest.raises(NotApplicable, match=variant):
            DecisionTransformerPolicy(model, context, 0.8)
        rows = evaluate.suite_rows(model, lay, optimal, p.env.cap(SIZE), context, p, variant, 1)
        assert not rows.applicable.any() and rows.success.isna().all()
        return
    assert_same_rollouts(model, lay, p.env, context)


@pytest.mark.parametrize("scaling", [s for s in SCALINGS if s != "none"])
@pytest.mark.parametrize("variant", ["rope", "xpos"])
def test_rope_scalings_keep_the_cache_exact_beyond_training(
    variant, scaling, tiny_data, whole_episode
):
    p = whole_episode
    context = max(p.evaluate.contexts)
    model = contract.model_of(p, variant)
    lay, _ = dataset.load_suite(tiny_data, SIZE, p.env)
    trained = assert_same_rollouts(model, lay, p.env, context)
    with model.at_context(context, scaling):
        scaled = assert_same_rollouts(model, lay, p.env, context)
    assert any(a.shape != b.shape or not torch.allclose(a, b) for a, b in zip(trained, scaled)), (
        f"{scaling} changed nothing at {context} steps, {context // p.model.context}x training"
    )


@pytest.mark.parametrize("variant", ["rope", "learned"])
def test_a_grid_sweep_of_some_suites_leaves_the_context_sweep_as_it_was(
    variant, tiny_data, whole_episode
):
    """evaluate.grid_sizes: the grid sweep plays those suites alone, and the context sweep plays
    the others whole at the first longer context and taken over from there at the next, to the
    rows it gives when the grid sweep played every suite (scaled and unscaled; learned's table
    cannot index the longer contexts: its rows are N/A either way)."""
    longer = [*whole_episode.evaluate.contexts[:-1], 12, whole_episode.evaluate.contexts[-1]]
    every_suite = dataclasses.replace(
        whole_episode,
        evaluate=dataclasses.replace(
            whole_episode.evaluate, contexts=longer, rope_scaling=["none", "yarn"]
        ),
    )
    some = dataclasses.replace(
        every_suite, evaluate=dataclasses.replace(every_suite.evaluate, grid_sizes=[SIZE])
    )
    model = contract.model_of(every_suite, variant)
    sweeps = []
    for p in (every_suite, some):
        grid = evaluate.grid_sweep(model, p, tiny_data, variant, 1)
        sweeps.append((grid, evaluate.context_sweep(model, p, tiny_data, variant, 1, grid)))
    (grid, context), (some_grid, some_context) = sweeps
    assert some_grid.grid_size.unique().tolist() == [SIZE]
    assert set(grid.grid_size) > {SIZE}
    assert some_grid.to_csv(index=False) == grid[grid.grid_size == SIZE].to_csv(index=False)
    assert some_context.to_csv(index=False) == context.to_csv(index=False)
    assert context.applicable.all() if variant == "rope" else not context.applicable.any()


def test_the_cache_holds_an_episode_at_most(tiny_params):
    model = contract.model_of(tiny_params, "rope")
    policy = DecisionTransformerPolicy(model, 10_000, 0.8)
    policy.start(batch_size=2, cap=40)
    assert policy.cache.max_tokens == TOKENS_PER_STEP * 40
    uncached = DecisionTransformerPolicy(model, 10_000, 0.8, cached=False)
    uncached.start(batch_size=2, cap=40)
    assert uncached.cache is None


def test_rows_leave_the_cache_once_and_never_come_back(tiny_params):
    """Ended episodes' rows are dropped from the cache's tensors at the next step, so that the
    rows that stay attend to views of their keys, not to a copy of the history each step."""
    model = contract.model_of(tiny_params, "rope")
    cache = KVCache(len(model.blocks), 3, 3 * 4)
    g = torch.Generator().manual_seed(0)
    rtg, emb = torch.rand(3, 4, generator=g), torch.randn(3, 4, tiny_params.model.d_model)
    actions, t = torch.zeros(3, 4, dtype=torch.long), torch.arange(4).repeat(3, 1)
    with torch.no_grad():
        for step, rows in enumerate([[0, 1, 2], [0, 2], [2]]):
            cache.rows = torch.tensor(rows)
            w = slice(0, step + 1)
            model.next_action(rtg[rows, w], emb[rows, w], actions[rows, w], t[rows, w], cache)
            assert all(len(x) == len(rows) for x in (*cache.keys, *cache.values, cache.times))
        cache.rows = torch.tensor([0, 2])
        with pytest.raises(ValueError, match="never come back"):
            model.next_action(rtg[[0, 2], :4], emb[[0, 2], :4], actions[[0, 2], :4], t[:2], cache)


def test_a_cached_step_given_only_the_steps_the_cache_lacks_matches_the_whole_history(
    tiny_params,
):
    """policy.act passes a cached step only the timesteps from the first one not wholly cached;
    the logits and the cache are those of the same step given its whole history."""
    model = contract.model_of(tiny_params, "rope")
    g = torch.Generator().manual_seed(1)
    rtg, emb = torch.rand(2, 6, generator=g), torch.randn(2, 6, tiny_params.model.d_model)
    actions = torch.randint(0, model.vocabulary.n_actions, (2, 6), generator=g)
    t = torch.arange(6).repeat(2, 1)
    whole, sliced = (KVCache(len(model.blocks), 2, 3 * 6) for _ in range(2))
    with torch.no_grad():
        for step in range(6):
            w = slice(0, step + 1)
            a = model.next_action(rtg[:, w], emb[:, w], actions[:, w], t[:, w], whole)
            start = sliced.tokens // TOKENS_PER_STEP
            s = slice(start, step + 1)
            b = model.next_action(rtg[:, s], emb[:, s], actions[:, s], t[:, s], sliced, start)
            assert torch.equal(a, b) and whole.tokens == sliced.tokens
        with pytest.raises(ValueError, match="the cache holds only"):
            model.next_action(rtg, emb, actions, t, sliced, start=sliced.tokens)


def test_learnedlong_reaches_its_table_and_trains_only_its_first_rows(tiny_raw_params):
    raw = tiny_raw_params
    raw["encodings"]["k"]["learnedlong"]["table"] = 50
    p = params.check(raw)
    model = DecisionTransformer(p.model_config("learnedlong")).train()
    table = model.k_encoding
    assert "k_encoding.untrained" in model.state_dict()
    assert "k_encoding.untrained" not in dict(model.named_parameters())
    drawn, first = table.untrained.clone(), table.trained.detach().clone()
    assert len(first) == p.model.context and len(first) + len(drawn) == 50
    # AdamW with weight decay, as training: the rows past the training context stay as drawn
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    n, b, t = p.data.train_size, 2, p.model.context
    g = torch.Generator().manual_seed(0)
    states = torch.randint(0, 3, (b, t, n, n), generator=g, dtype=torch.uint8)
    actions = torch.randint(0, model.vocabulary.n_actions, (b, t), generator=g)
    out = model(
        torch.rand(b, t, generator=g),
        model.encode_states(states),
        actions,
        torch.arange(t).repeat(b, 1),
    )
    torch.nn.functional.cross_entropy(out.flatten(0, 1), actions.flatten()).backward()
    optimizer.step()
    assert torch.equal(table.untrained, drawn) and not torch.equal(table.trained, first)
    model.eval()
    DecisionTransformerPolicy(model, 50, 0.8)
    with pytest.raises(NotApplicable, match="learnedlong"):
        DecisionTransformerPolicy(model, 51, 0.8)
    raw["encodings"]["k"]["learnedlong"]["table"] = p.model.context - 1
    with pytest.raises(ValueError, match="encodings.k.learnedlong.table"):
        DecisionTransformer(params.check(raw).model_config("learnedlong"))


def test_a_whole_episode_context_shorter_than_an_episode_is_refused(
    tmp_path, tiny_raw_params, capsys
):
    raw = tiny_raw_params
    cap = params.check(raw).env.cap(SIZE)
    raw["evaluate"].update(whole_episode=True, contexts=[6, cap - 1])
    with pytest.raises(params.ParamsError, match=rf"evaluate.whole_episode.*at least {cap}"):
        params.check(raw)
    raw["evaluate"]["whole_episode"] = False
    params.check(raw)  # the same contexts, the whole episode not asked for
    raw["evaluate"].update(whole_episode=True, contexts=[6, cap])
    assert params.check(raw).evaluate.whole_episode
    # through the CLI: refused before any work (no model, no data, no output needed)
    raw["evaluate"]["contexts"] = [6, cap - 1]
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    outs = [tmp_path / f"{name}.csv" for name in ("test", "grid", "context")]
    argv = ["evaluate", "--params", str(path), "--variant", "rope", "--seed", "1"]
    argv += ["--data", str(tmp_path / "none"), "--model", str(tmp_path / "none")]
    argv += [
        a
        for flag, out in zip(("--out-test", "--out-grid", "--out-context"), outs)
        for a in (flag, str(out))
    ]
    assert cli.main(argv) == 2
    assert "evaluate.whole_episode" in capsys.readouterr().err
    assert not any(out.exists() for out in outs)


def test_a_whole_episode_context_shorter_than_an_expert_cap_is_refused_before_any_work(
    tmp_path, tiny_raw_params, tiny_data, capsys
):
    """With evaluate.expert_cap the caps come from the suites' expert episodes: validation
    cannot know them, so the evaluate step checks the longest context against every played
    suite's cap before it loads the model."""
    raw = tiny_raw_params
    raw["evaluate"].update(whole_episode=True, expert_cap=1.0, contexts=[6, 7])
    p = params.check(raw)  # shorter than the world's caps, accepted here
    caps = evaluate.suite_caps(tiny_data, p)
    longest = max(caps.values())
    assert longest < p.env.cap(max(caps))
    with pytest.raises(
        ValueError, match=rf"evaluate.whole_episode.*expert_cap.*at least {longest}"
    ):
        evaluate.check_whole_episode(p, tiny_data)
    at = dataclasses.replace(p.evaluate, contexts=[6, longest])
    evaluate.check_whole_episode(dataclasses.replace(p, evaluate=at), tiny_data)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(raw))
    outs = [tmp_path / f"{name}.csv" for name in ("test", "grid", "context")]
    argv = ["evaluate", "--params", str(path), "--variant", "rope", "--seed", "1"]
    argv += ["--data", str(tiny_data), "--model", str(tmp_path / "none")]
    argv += [
        a
        for flag, out in zip(("--out-test", "--out-grid", "--out-context"), outs)
        for a in (flag, str(out))
    ]
    assert cli.main(argv) == 1
    assert "evaluate.whole_episode" in capsys.readouterr().err  # not the missing model
    assert not any(out.exists() for out in outs)


@pytest.mark.parametrize(
    "change, message",
    [
        ({}, r"evaluate.grid_sizes: .*evaluate.whole_episode is false"),
        ({"whole_episode": True, "grid_sizes": [9]}, r"evaluate.grid_sizes.0: 9 is not a suite"),
        ({"whole_episode": True}, r"leaves out \[8\], which the reach step reads"),
        (
            {"whole_episode": True, "reach": [10], "all_pairs": True},
            r"leaves out \[8\], which verdict.hypotheses all_pairs reads",
        ),
        (
            {"whole_episode": True, "reach": [10], "grids": [8, 10]},
            r"leaves out \[8\], which verdict.hypotheses\[0\] reads at the training context",
        ),
    ],
)
def test_a_grid_sweep_of_some_suites_holds_every_suite_read_at_the_training_context(
    tiny_raw_params, change, message
):
    raw = tiny_raw_params
    cap = params.check(raw).env.cap(SIZE)
    raw["evaluate"].update(contexts=[6, cap], grid_sizes=change.get("grid_sizes", [SIZE]))
    raw["evaluate"]["whole_episode"] = change.get("whole_episode", False)
    raw["reach"]["sizes"] = change.get("reach")
    if not change.get("all_pairs"):
        grids = change.get("grids", [SIZE])
        raw["verdict"]["hypotheses"] = [{"a": "rope", "b": "learned", "grids": grids}]
    with pytest.raises(params.ParamsError, match=message):
        params.check(raw)
    if change.get("grids"):  # the same endpoint at the whole episode reads the context sweep
        raw["verdict"]["hypotheses"][0]["context"] = cap
        assert params.check(raw).grid_sizes() == [SIZE]
