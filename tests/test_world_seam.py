"""The world seam: a model takes its cell codes and actions from its world's vocabulary
(world/catalog.py), not from the maze's constants. The maze's checkpoints name no world, as
before there were others, so their bytes stay; another world's name theirs."""

import json

import numpy as np
import pytest
import torch
from conftest import model_config

from dtpe.model import checkpoint
from dtpe.model.policy import DecisionTransformerPolicy
from dtpe.model.transformer import DecisionTransformer
from dtpe.world import catalog, maze
from dtpe.world.vocabulary import Vocabulary

# nine codes, the agent's cell coded three ways (as a world that codes its heading), five actions
TOY = Vocabulary(
    codes=tuple(f"code{i}" for i in range(9)),
    actions=("a", "b", "c", "d", "e"),
    agent=(6, 7, 8),
    wall=1,
)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(catalog.WORLDS, "toy", TOY)
    return DecisionTransformer(model_config("rope", state_encoder="cnn_ego", world="toy"))


def test_the_maze_vocabulary_is_its_constants():
    vocab = catalog.vocabulary("maze")
    assert (vocab.n_codes, vocab.n_actions) == (maze.N_CODES, maze.N_ACTIONS)
    assert vocab.codes[maze.AGENT] == "agent" and vocab.agent == (maze.AGENT,)
    assert vocab.codes[vocab.wall] == "wall" and vocab.actions == maze.ACTION_NAMES
    with pytest.raises(ValueError, match="world 'grid' is not one of maze"):
        catalog.vocabulary("grid")


def test_a_model_takes_its_worlds_codes_and_actions(toy):
    assert toy.action.num_embeddings == 5 and toy.head.out_features == 5
    assert toy.state_encoder.items.num_embeddings == 9
    assert toy.state_encoder.view.num_embeddings == 5 * 5 * 9  # view_radius 2: 5 x 5 cells


def test_the_egocentric_view_centres_on_any_agent_code(toy):
    """The view's cells, read from the indices it embeds: the agent's cell at the centre, the
    grid's cells around it, the world's wall code beyond the border."""
    n, r = 7, 2
    rng = np.random.default_rng(0)
    grids = rng.integers(0, 6, (3, n, n))  # no agent code yet
    cells = [(0, 0), (3, 4), (6, 5)]
    for g, (cell, code) in enumerate(zip(cells, TOY.agent)):
        grids[g][cell] = code
    seen = []
    toy.state_encoder.view.register_forward_hook(lambda m, args, out: seen.append(args[0]))
    toy.state_encoder(torch.from_numpy(grids))
    view = (seen[0] % 9).reshape(3, 2 * r + 1, 2 * r + 1)
    padded = np.pad(grids, ((0, 0), (r, r), (r, r)), constant_values=TOY.wall)
    for g, (row, col) in enumerate(cells):
        assert view[g, r, r] == TOY.agent[g]
        np.testing.assert_array_equal(
            view[g], padded[g, row : row + 2 * r + 1, col : col + 2 * r + 1]
        )


def test_the_policy_chooses_among_the_worlds_actions(toy):
    policy = DecisionTransformerPolicy(toy.eval(), context=6, target_return=1.0)
    policy.start(batch_size=2, cap=4)
    grids = np.zeros((2, 6, 6), np.int64)
    grids[:, 2, 3] = 7
    actions, probs = policy.act(grids, np.array([True, False]))
    assert probs.shape == (2, 5) and probs[0].sum() == pytest.approx(1) and not probs[1].any()
    assert 0 <= actions[0] < 5


def test_checkpoints_name_their_world_except_the_mazes(toy, tmp_path, monkeypatch):
    maze_model = DecisionTransformer(model_config("rope"))
    checkpoint.save(maze_model, tmp_path / "maze")
    assert "world" not in json.loads((tmp_path / "maze" / "config.json").read_text())["config"]
    assert checkpoint.load(tmp_path / "maze", maze_model.cfg).cfg.world == "maze"
    checkpoint.save(toy, tmp_path / "toy")
    assert json.loads((tmp_path / "toy" / "config.json").read_text())["config"]["world"] == "toy"
    loaded = checkpoint.load(tmp_path / "toy", toy.cfg)
    assert loaded.head.out_features == 5
    for name, value in toy.state_dict().items():
        assert torch.equal(loaded.state_dict()[name], value)
    with pytest.raises(checkpoint.CheckpointError, match="world is 'toy', expected 'maze'"):
        checkpoint.load(tmp_path / "toy", maze_model.cfg)
    monkeypatch.delitem(catalog.WORLDS, "toy")
    with pytest.raises(checkpoint.CheckpointError, match="world 'toy' is not one of maze"):
        checkpoint.load(tmp_path / "toy")
