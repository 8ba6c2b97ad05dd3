"""The world seam: a model takes its cell codes and actions from its world's vocabulary
(world/catalog.py), not from the maze's constants. The maze's checkpoints name no world, as
before there were others, so their bytes stay; another world's name theirs."""

import dataclasses
import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch
from conftest import model_config

from dtpe.model import checkpoint
from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.model.transformer import DecisionTransformer
from dtpe.world import catalog
from dtpe.world.doorkey import rules as doorkey
from dtpe.world.maze import rules as maze
from dtpe.world.vocabulary import Vocabulary


@pytest.fixture
def doorkey_model():
    """a model of MiniGrid's DoorKey: 15 codes, the agent's cell coded 8 ways (heading and
    whether it carries the key), 5 actions"""
    return DecisionTransformer(model_config("rope", state_encoder="cnn_ego", world="doorkey"))


def test_each_worlds_vocabulary_is_its_constants():
    vocab = catalog.vocabulary("maze")
    assert (vocab.n_codes, vocab.n_actions) == (maze.N_CODES, maze.N_ACTIONS)
    assert vocab.codes[maze.AGENT] == "agent" and vocab.agent == (maze.AGENT,)
    assert vocab.codes[vocab.wall] == "wall" and vocab.actions == maze.ACTION_NAMES
    vocab = catalog.vocabulary("doorkey")
    assert (vocab.n_codes, vocab.n_actions) == (doorkey.N_CODES, doorkey.N_ACTIONS)
    assert [vocab.codes[c] for c in vocab.agent] == list(doorkey.CODE_NAMES[7:])
    assert vocab.codes[vocab.wall] == "wall" and vocab.actions[doorkey.TOGGLE] == "toggle"
    with pytest.raises(
        ValueError, match=f"world '{catalog.RESERVED}' is not one of {', '.join(catalog.names())}"
    ):
        catalog.vocabulary(catalog.RESERVED)


def test_a_model_takes_its_worlds_codes_and_actions(doorkey_model):
    assert doorkey_model.action.num_embeddings == 5 and doorkey_model.head.out_features == 5
    assert doorkey_model.state_encoder.items.num_embeddings == 15
    assert (
        doorkey_model.state_encoder.view.num_embeddings == 5 * 5 * 15
    )  # view_radius 2: 5 x 5 cells


# a world unlike both: its agent codes apart and out of order, its wall code not the maze's
ODD = Vocabulary(codes=tuple("abcdefg"), actions=("x", "y", "z"), agent=(5, 2), wall=4)


def test_the_egocentric_view_centres_on_any_agent_code(monkeypatch):
    """The view's cells, read from the indices it embeds: the agent's cell at the centre, the
    grid's cells around it, the world's wall code beyond the border."""
    real = catalog.get
    monkeypatch.setattr(
        catalog,
        "get",
        lambda name: SimpleNamespace(vocabulary=ODD) if name == catalog.RESERVED else real(name),
    )
    model = DecisionTransformer(
        model_config("rope", state_encoder="cnn_ego", world=catalog.RESERVED)
    )
    n, r = 7, 2
    rng = np.random.default_rng(0)
    grids = rng.choice([0, 1, 3, 4, 6], (3, n, n))  # no agent code yet
    cells, codes = [(0, 0), (3, 4), (6, 5)], [5, 2, 5]
    for g, (cell, code) in enumerate(zip(cells, codes)):
        grids[g][cell] = code
    seen = []
    model.state_encoder.view.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    model.state_encoder(torch.from_numpy(grids))
    view = (seen[0] % ODD.n_codes).reshape(3, 2 * r + 1, 2 * r + 1)
    padded = np.pad(grids, ((0, 0), (r, r), (r, r)), constant_values=ODD.wall)
    for g, (row, col) in enumerate(cells):
        assert view[g, r, r] == codes[g]
        np.testing.assert_array_equal(
            view[g], padded[g, row : row + 2 * r + 1, col : col + 2 * r + 1]
        )


def test_the_policy_chooses_among_the_worlds_actions(doorkey_model):
    policy = DecisionTransformerPolicy(doorkey_model.eval(), context=6, target_return=1.0)
    policy.start(batch_size=2, cap=4)
    grids = np.zeros((2, 6, 6), np.int64)
    grids[:, 2, 3] = doorkey.AGENT
    actions, probs = policy.act(grids, np.array([True, False]))
    assert probs.shape == (2, 5) and probs[0].sum() == pytest.approx(1) and not probs[1].any()
    assert 0 <= actions[0] < 5


def test_checkpoints_name_their_world_except_the_mazes(doorkey_model, tmp_path, monkeypatch):
    maze_model = DecisionTransformer(model_config("rope"))
    checkpoint.save(maze_model, tmp_path / "maze")
    assert "world" not in json.loads((tmp_path / "maze" / "config.json").read_text())["config"]
    assert checkpoint.load(tmp_path / "maze", maze_model.cfg).cfg.world == "maze"
    checkpoint.save(doorkey_model, tmp_path / "dk")
    assert json.loads((tmp_path / "dk" / "config.json").read_text())["config"]["world"] == "doorkey"
    loaded = checkpoint.load(tmp_path / "dk", doorkey_model.cfg)
    assert loaded.head.out_features == 5
    for name, value in doorkey_model.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value)
    with pytest.raises(checkpoint.CheckpointError, match="world is 'doorkey', expected 'maze'"):
        checkpoint.load(tmp_path / "dk", maze_model.cfg)
    monkeypatch.setattr(catalog, "names", lambda: ("maze",))  # a dtpe without DoorKey
    with pytest.raises(checkpoint.CheckpointError, match="world 'doorkey' is not one of maze"):
        checkpoint.load(tmp_path / "dk")


def test_params_give_the_model_its_world(tiny_params):
    assert tiny_params.model_config("rope").world == "maze"
    doorkey_env = dataclasses.replace(tiny_params.env, world="doorkey")
    params = dataclasses.replace(tiny_params, env=doorkey_env)
    assert params.model_config("rope").world == "doorkey"


def test_a_vocabulary_refuses_codes_it_lacks():
    with pytest.raises(ValueError, match=r"agent \(7,\) and wall 1 must be among the codes"):
        Vocabulary(codes=("empty", "wall"), actions=("go",), agent=(7,), wall=1)
