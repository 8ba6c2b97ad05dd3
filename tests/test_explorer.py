"""`dtpe explore` on tiny trained models: every episode on the page is the grid sweep's (its CSV
row, and the Gymnasium env stepped with its actions ends the same way); the attention is the
model's own; a replay that disagrees with its CSV stops the step; and the page works in a real
browser (Debian's Chromium driven by Playwright)."""

import os
import shutil

import numpy as np
import pandas as pd
import pytest
import torch
from conftest import explored_study, tiny_raw, tmaze_raw
from PIL import Image

from dtpe import cli
from dtpe.explorer import animations, embeddings, traces, window
from dtpe.explorer import build as explorer
from dtpe.explorer import page as explorer_page
from dtpe.model import checkpoint
from dtpe.steps import dataset
from dtpe.world import catalog
from dtpe.world.maze import env as env_mod

# One variant with another t, so that the page has two k and two t to pick from.
VARIANTS = ["rope", "learned-t_learned"]
SEEDS = [1, 2]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A tiny study trained, evaluated (grid sweep) and explored through the CLI."""
    root = tmp_path_factory.mktemp("explore")
    raw = tiny_raw()
    raw["study"] = {"variants": VARIANTS, "seeds": SEEDS}
    raw["stats"]["reference"] = "rope"
    raw["train"]["epochs"] = 1
    raw["explorer"]["layouts_per_suite"] = 3
    params, explore = explored_study(root, raw)
    return root, params, explore


def grid_rows(root, params) -> pd.DataFrame:
    return explorer.read_rows(params, root / "results/eval")


def page_of(root):
    return (root / "figures" / explorer.PAGE).read_text()


def test_every_episode_is_its_csv_row_and_the_env_agrees(built):
    root, params, _ = built
    head, _ = explorer_page.unpack(page_of(root))
    rows = grid_rows(root, params).set_index(["model", "grid_size", "layout_id"])
    assert {m["name"] for m in head["models"]} == set(rows.index.get_level_values(0))
    assert {(m["k"], m["t"]) for m in head["models"]} == {
        ("rope", "sinusoidal"),
        ("learned", "learned"),
    }
    per_size = params.explorer.layouts_per_suite * len(VARIANTS) * len(SEEDS)
    assert len(head["episodes"]) == per_size * len(params.data.suite_sizes)
    for ep in head["episodes"]:
        name = head["models"][ep["m"]]["name"]
        row = rows.loc[(name, ep["size"], ep["layout"])]
        assert (ep["success"], ep["steps"]) == (row.success, row.steps), (name, ep["layout"])
        assert len(ep["actions"]) == ep["steps"] and len(ep["cells"]) == ep["steps"] + 1
        lay, _ = dataset.load_suite(root / "data", ep["size"], params.env)
        one = lay.subset(np.flatnonzero(lay.ids == ep["layout"]))
        env = env_mod.KeyDoorMazeEnv(
            ep["size"], cap_factor=params.env.options["cap_factor"], layout=one
        )
        env.reset()
        for t, a in enumerate(ep["actions"]):
            _, _, terminated, truncated, _ = env.step(int(a))
            assert tuple(env.pos[0]) == divmod(ep["cells"][t + 1], ep["size"])
        assert terminated == bool(ep["success"]) and (terminated or truncated)


def test_layouts_shown_are_the_most_failed_then_the_lowest(built):
    root, params, _ = built
    grid = grid_rows(root, params)
    head, _ = explorer_page.unpack(page_of(root))
    for n in params.data.suite_sizes:
        shown = {ep["layout"] for ep in head["episodes"] if ep["size"] == n}
        assert shown == set(explorer.pick_layouts(grid, n, params.explorer.layouts_per_suite))
    made = pd.DataFrame(
        {
            "grid_size": 8,
            "layout_id": [0, 1, 2, 3, 4, 0, 1, 2, 3, 4],
            "success": [1, 1, 0, 0, 1, 1, 1, 0, 1, 0],
        }
    )  # failures per layout: 2 -> 2, 3 -> 1, 4 -> 1
    assert explorer.pick_layouts(made, 8, 3) == [0, 2, 3]  # 2 most failed, then 3 (lower than 4)
    assert explorer.pick_layouts(made, 8, 5) == [0, 1, 2, 3, 4]


def first_revisit(frames, flags):
    revisits = traces.Revisits()
    for frame, flag in zip(frames, flags):
        revisits.add(frame, flag)
    return revisits.first


def test_the_loop_is_the_first_revisited_state():
    frames = np.zeros((4, 3, 3), np.uint8)
    for t, (r, c) in enumerate([(1, 1), (1, 2), (1, 2), (1, 1)]):
        frames[t, r, c] = 2
    unset = np.zeros(4, bool)
    assert first_revisit(frames, unset) == 2  # a bump into a wall
    turned = frames[[0, 1, 3]].copy()
    turned[2, 1, 1] = 3  # back on the first cell, but another state (a DoorKey heading)
    assert first_revisit(turned, unset[:3]) is None
    assert first_revisit(frames[[0, 1, 3]], unset[:3]) == 2
    # the same grid with a milestone the grid does not show (Memory's cue seen): no loop
    assert first_revisit(frames[[0, 1, 3]], np.array([False, True, True])) is None


def test_a_window_draws_a_short_side_whole_and_a_long_one_over_the_paths():
    paths = [np.array([[1, 40], [1, 41], [1, 42]]), np.array([[1, 39], [0, 39]])]
    assert window.covering((3, 1601), paths, 48) == window.Window(0, 38, 3, 6)
    assert window.covering((3, 1601), [np.array([[1, 0], [1, 1]])], 48) == window.Window(0, 0, 3, 3)
    assert window.covering((20, 20), paths[:1], 48) == window.Window(0, 0, 20, 20)  # whole
    assert window.covering((3, 43), paths, 10) == window.Window(0, 38, 3, 5)  # within the grid
    with pytest.raises(ValueError, match="at least one"):
        window.covering((3, 9), [], 48)
    grid = np.arange(3 * 50).reshape(3, 50)
    win = window.Window(1, 7, 2, 5)
    cells = np.array([[1, 7], [2, 11], [2, 9]])
    crop = win.crop(grid)
    assert crop.shape == (2, 5)
    np.testing.assert_array_equal(crop.ravel()[win.index(cells)], grid[cells[:, 0], cells[:, 1]])
    np.testing.assert_array_equal(crop[tuple(win.cells(cells).T)], grid[tuple(cells.T)])


def test_a_replay_keeps_its_first_steps_and_sees_the_whole_episode(built):
    root, params, _ = built
    model = checkpoint.load(root / "models" / "rope_s1")
    size = params.data.suite_sizes[-1]
    lay, _ = dataset.load_suite(root / "data", size, params.env)
    played = traces.play(model, lay, params, params.env.cap(size), lay.ids)
    world = catalog.get(params.env.world)
    for i, rec in played.items():
        one = lay.subset(np.flatnonzero(lay.ids == i))
        args = (world, one, rec["actions"], params.env, params.evaluate.target_return)
        whole = traces.replay(*args)
        assert len(whole.frames) == rec["steps"] + 1 == len(whole.rtg) + 1
        assert whole.loop == first_revisit(whole.frames, whole.milestone)
        keep = rec["steps"] // 2
        kept = traces.replay(*args, keep=keep)
        for field in ("frames", "views", "cells", "milestone", "ground"):
            np.testing.assert_array_equal(getattr(kept, field), getattr(whole, field)[: keep + 1])
        np.testing.assert_array_equal(kept.rtg, whole.rtg[:keep])
        assert (kept.loop, kept.success, kept.failure) == (whole.loop, whole.success, whole.failure)


def test_an_episode_plays_alone_as_in_its_evaluation_batch(built):
    """traces.play runs only the wanted layouts, together: each of their episodes is the one its
    evaluation batch played, action for action, its probabilities to float rounding."""
    root, params, _ = built
    for name in ("rope_s1", "learned-t_learned_s2"):
        model = checkpoint.load(root / "models" / name)
        for n in params.data.suite_sizes:
            lay, _ = dataset.load_suite(root / "data", n, params.env)
            wanted = lay.ids[[0, len(lay) - 1]]  # from the first and the last batch
            cap = params.env.cap(n)
            alone = traces.play(model, lay, params, cap, wanted)
            batched = traces.play(model, lay, params, cap, wanted, as_evaluated=True)
            for i in wanted:
                assert alone[i]["steps"] == batched[i]["steps"]
                np.testing.assert_array_equal(alone[i]["actions"], batched[i]["actions"])
                # a matrix product's rounding may differ with the batch's size: an ulp
                np.testing.assert_allclose(alone[i]["probs"], batched[i]["probs"], atol=1e-6)


def test_an_outcome_unlike_its_row_is_played_in_the_evaluations_batches(built, monkeypatch):
    """Where the one-batch replay's outcome differs from the CSV row (a near tie that a batch's
    rounding breaks the other way), the explorer plays the evaluation's own batches."""
    root, params, _ = built
    real, calls = traces.play, []

    def tie_broken(model, lay, params, cap, wanted, as_evaluated=False, *args, **kwargs):
        calls.append(as_evaluated)
        out = real(model, lay, params, cap, wanted, as_evaluated, *args, **kwargs)
        if not as_evaluated:
            first = min(out)
            out[first] = {**out[first], "steps": out[first]["steps"] + 1}
        return out

    monkeypatch.setattr(traces, "play", tie_broken)
    grid = grid_rows(root, params)
    models = {m: checkpoint.load(root / "models" / m) for m in set(grid.model)}
    world = catalog.get(params.env.world)
    page, _ = explorer.collect(
        params, world, root / "data", models, grid, explorer.arms(params, grid)
    )
    assert calls.count(True) == calls.count(False) > 0
    rows = grid.set_index(["model", "grid_size", "layout_id"])
    for ep in page:
        row = rows.loc[(ep.model, ep.size, ep.layout)]
        assert (ep.row["success"], ep.row["steps"]) == (row.success, row.steps)


def test_attention_is_the_models_and_the_rollouts_probabilities(built):
    root, params, _ = built
    model = checkpoint.load(root / "models" / "rope_s1")
    lay, _ = dataset.load_suite(root / "data", 10, params.env)
    played = traces.play(model, lay, params, params.env.cap(10), lay.ids)
    long = max(played, key=lambda i: played[i]["steps"])  # a window that slides
    rec = played[long]
    assert rec["steps"] > params.model.context
    one = lay.subset(np.flatnonzero(lay.ids == long))
    world = catalog.get(params.env.world)
    rep = traces.replay(world, one, rec["actions"], params.env, params.evaluate.target_return)
    rows, logits = traces.attention(model, rep, rec["actions"], params.model.context)
    np.testing.assert_allclose(torch.softmax(torch.tensor(logits), -1), rec["probs"], atol=1e-5)
    assert [r.shape for r in rows[:2]] == [(2, 2, 2), (2, 2, 5)]
    assert rows[-1].shape == (2, 2, 3 * params.model.context - 1)
    for r in rows:
        np.testing.assert_allclose(r.sum(-1), 1, atol=1e-5)
    # The final layer's row of the last step is model.forward's own attention map.
    k = params.model.context
    last = rec["steps"] - 1
    window = slice(last - k + 1, last + 1)
    with torch.no_grad():
        _, weights = model(
            torch.from_numpy(rep.rtg[None, window]),
            model.encode_states(torch.from_numpy(rep.states[None, window])),
            torch.from_numpy(rec["actions"][None, window].astype(np.int64)),
            torch.arange(last - k + 1, last + 1)[None],
            need_attention=True,
        )
    q = 3 * (k - 1) + 1
    np.testing.assert_allclose(rows[-1][-1], weights[0, :, q, : q + 1], atol=1e-6)


def test_a_replay_that_disagrees_with_the_csv_stops(built, tmp_path, capsys):
    root, params, explore = built
    results = tmp_path / "results"
    shutil.copytree(root / "results", results)
    csv = results / "eval/grid/rope_s1.csv"
    head, _ = explorer_page.unpack(page_of(root))
    ep = next(e for e in head["episodes"] if head["models"][e["m"]]["name"] == "rope_s1")
    rows = pd.read_csv(csv)
    shown = (rows.grid_size == ep["size"]) & (rows.layout_id == ep["layout"])
    rows.loc[shown, "steps"] += 1  # a row the page shows, so the explorer must play it
    rows.to_csv(csv, index=False)
    explore[explore.index("--results") + 1] = str(results)
    assert cli.main(["explore", *explore, "--out", str(tmp_path / "figures")]) == 1
    assert "disagrees with its row in results/eval/grid" in capsys.readouterr().err


def test_animations_and_embedding_figure(built):
    root, params, _ = built
    grid = grid_rows(root, params)
    for n in params.data.suite_sizes:
        gif = Image.open(root / "figures" / animations.FOLDER / animations.gif_name(n))
        reps = animations.representatives(grid, params, n)
        rows = grid[grid.seed == SEEDS[0]].set_index(["variant", "grid_size", "layout_id"])
        longest = max(int(rows.loc[(e, n, v)].steps) for (e, _), v in reps.items() if v is not None)
        # Pillow merges identical frames (an agent bumping a wall): count the time instead, which
        # GIF stores in 10 ms units per stored frame.
        shown = 0
        for i in range(gif.n_frames):
            gif.seek(i)
            shown += gif.info["duration"]
        want = (longest + 1 + animations.HOLD) * int(1000 / animations.FPS)
        assert abs(shown - want) <= 10 * gif.n_frames, (shown, want)
    assert Image.open(root / "figures" / embeddings.FILE).size[0] > 300
    model = checkpoint.load(root / "models" / "learned-t_learned_s1")
    longest = params.env.cap(max(params.data.suite_sizes))
    titles = [t for t, _ in embeddings.panels(params, {"m": model}, longest)]
    assert titles == ["k: learned, m", "t: learned, m"]  # rope and sinusoids are not in it
    rope = checkpoint.load(root / "models" / "rope_s1")
    assert [t for t, _ in embeddings.panels(params, {"a": rope}, longest)] == ["t: sinusoidal, a"]


def chromium() -> str:
    found = shutil.which("chromium")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("CI=true but no `chromium` on PATH (.ci/run installs Debian's package)")
        pytest.skip("no `chromium` on PATH: install Debian's chromium to run the browser test")
    return found


def test_page_in_a_real_browser(built, tmp_path):
    root, params, _ = built
    browser_path = chromium()
    from playwright.sync_api import sync_playwright

    head, _ = explorer_page.unpack(page_of(root))
    csv = grid_rows(root, params).set_index(["model", "grid_size", "layout_id"])
    errors = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path)
        page = browser.new_page(viewport={"width": 1250, "height": 1000})
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((root / "figures" / explorer.PAGE).as_uri())
        page.wait_for_selector("body[data-ready]")
        assert page.get_attribute("body", "data-ready") == "true", errors

        def shown():
            o = page.locator("#outcome")
            name, size, layout = (o.get_attribute(f"data-{a}") for a in ("model", "size", "layout"))
            row = csv.loc[(name, int(size), int(layout))]
            assert o.get_attribute("data-success") == str(row.success)
            assert o.get_attribute("data-steps") == str(row.steps)
            ep = next(
                e
                for e in head["episodes"]
                if head["models"][e["m"]]["name"] == name
                and e["size"] == int(size)
                and e["layout"] == int(layout)
            )
            step = int(page.get_attribute("#maze", "data-step"))
            assert page.get_attribute("#maze", "data-heading") == ""  # the maze's agent: a disc
            assert page.get_attribute("#maze", "data-agent") == "%d,%d" % divmod(
                ep["cells"][step], ep["size"]
            )
            return name, int(size), int(layout), step, page.text_content("#stepText")

        first = shown()
        page.select_option("#k", "learned")
        page.select_option("#seed", str(SEEDS[1]))
        page.select_option("#size", str(params.data.suite_sizes[-1]))
        page.check("#failed")
        after = shown()
        assert after[:3] != first[:3] and after[0] == "learned-t_learned_s2"
        assert csv.loc[after[:3]].success == 0  # the filter keeps failures only
        page.click("#next")
        page.click("#next")
        stepped = shown()
        assert stepped[3] == 2 and stepped[4] != after[4]
        assert page.locator("#probs tr").count() == 4
        page.screenshot(path=str(tmp_path / "explorer.png"), full_page=True)
        browser.close()
    assert not errors, errors
    assert (tmp_path / "explorer.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def whole(tmp_path_factory):
    """A tiny T-Maze run that plays whole episodes (context 40) with RoPE's YaRN, explored."""
    root = tmp_path_factory.mktemp("whole")
    raw = tmaze_raw()
    raw["study"] = {"variants": ["rope", "nope"], "seeds": [1]}
    raw["stats"]["reference"] = "rope"
    raw["train"]["epochs"] = 1
    raw["evaluate"].update(contexts=[6, 40], whole_episode=True)
    raw["position"] = {"scalings": ["yarn"], "ablate": ["k"], "sizes": [16]}
    raw["explorer"]["layouts_per_suite"] = 2
    params, _ = explored_study(root, raw)
    return root, params


def test_a_whole_episode_run_shows_each_model_at_that_context_and_ropes_scalings(whole):
    root, params = whole
    head, binary = explorer_page.unpack(page_of(root))
    assert [(m["name"], m["k"], m["context"]) for m in head["models"]] == [
        ("rope_s1", "rope", 6),
        ("nope_s1", "nope", 6),
        ("rope_s1 at 40", "rope", 40),
        ("nope_s1 at 40", "nope", 40),
        ("rope+yarn_s1 at 40", "rope+yarn", 40),  # the switched-off suites are not arms
    ]
    # each episode is its own sweep's row: the scaled arm's the position step's
    csv = {
        sweep: pd.read_csv(root / f"results/eval/{sweep}/rope_s1.csv")
        for sweep in ("grid", "context", "position")
    }
    source = {
        "rope_s1": csv["grid"],
        "rope_s1 at 40": csv["context"][csv["context"].context == 40],
        "rope+yarn_s1 at 40": csv["position"][csv["position"].altered == "yarn"],
    }
    # an unscaled episode the context sweep took over from the grid sweep was played there
    rows = explorer.read_rows(params, root / "results/eval")
    at_40 = rows[rows.model == "rope_s1 at 40"].set_index(["grid_size", "layout_id"])
    grid = csv["grid"].set_index(["grid_size", "layout_id"]).steps.reindex(at_40.index)
    assert (at_40.batched == (grid > 6)).all()
    assert rows[rows.model == "rope+yarn_s1 at 40"].batched.all()
    layers, heads, per = head["layers"], head["heads"], len(head["actions"])
    end = 0
    for ep in head["episodes"]:
        m = head["models"][ep["m"]]
        if m["name"] in source:
            rows = source[m["name"]].set_index(["grid_size", "layout_id"])
            row = rows.loc[(ep["size"], ep["layout"])]
            assert (ep["success"], ep["steps"]) == (row.success, row.steps), m["name"]
        # the attention bytes of a step cover its window at its model's context
        windows = [min(t + 1, m["context"]) for t in range(ep["shown"])]
        assert ep["off"] == end
        end += per * ep["shown"] + layers * heads * sum(3 * w - 1 for w in windows)
    assert end == len(binary)
    assert any(ep["shown"] > 6 for ep in head["episodes"])  # windows past the training one


def test_a_scaled_arms_attention_is_the_scaled_models(whole):
    root, params = whole
    model = checkpoint.load(root / "models" / "rope_s1")
    lay, _ = dataset.load_suite(root / "data", 32, params.env)
    world = catalog.get(params.env.world)
    with model.at_context(40, "yarn"):
        played = traces.play(model, lay, params, params.env.cap(32), lay.ids[:2], context=40)
        i = lay.ids[0]
        rep = traces.replay(
            world,
            lay.subset([0]),
            played[i]["actions"],
            params.env,
            params.evaluate.target_return,
        )
        rows, logits = traces.attention(model, rep, played[i]["actions"], 40)
    probs = torch.softmax(torch.tensor(logits), -1)
    np.testing.assert_allclose(probs, played[i]["probs"], atol=1e-5)
    assert rows[-1].shape[-1] == 3 * len(played[i]["actions"]) - 1  # one window, never slid
    unscaled = traces.play(model, lay, params, params.env.cap(32), lay.ids[:2], context=40)
    assert not np.allclose(unscaled[i]["probs"], played[i]["probs"])


def test_a_whole_episode_page_in_a_real_browser(whole):
    root, _ = whole
    browser_path = chromium()
    from playwright.sync_api import sync_playwright

    errors = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=browser_path)
        page = browser.new_page()
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto((root / "figures" / explorer.PAGE).as_uri())
        page.wait_for_selector("body[data-ready]")
        assert page.get_attribute("body", "data-ready") == "true", errors
        assert page.locator("#k option").all_text_contents() == ["rope", "nope"]
        page.select_option("#context", "40")
        assert page.locator("#k option").all_text_contents() == ["rope", "nope", "rope+yarn"]
        page.select_option("#k", "rope+yarn")
        assert page.get_attribute("#outcome", "data-model") == "rope+yarn_s1 at 40"
        assert page.text_content("#ctx") == "40"
        page.select_option("#size", "32")
        for _ in range(8):
            page.click("#next")
        assert page.get_attribute("#maze", "data-step") == "8"
        browser.close()
    assert not errors, errors
