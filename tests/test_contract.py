"""The contract a submitted encoding must keep before any training (steps/contract.py): every
check passes on encodings that keep it and names itself on one that breaks it: an option without
a value, an error other than N/A beyond its table, a cache that changes the logits, a step whose
work grows with the square of the history. And p-RoPE, the worked example's encoding, against
its defining property."""

import pytest
import torch

from dtpe import cli
from dtpe.model import encodings
from dtpe.model.encodings.alibi import ALiBi
from dtpe.model.encodings.learned import Learned
from dtpe.model.encodings.rope import Rope, rope_angles
from dtpe.steps import contract

torch.set_num_threads(1)


@pytest.mark.parametrize("variant", ["rope", "learned", "fire", "nope-t_none", "prope"])
def test_encodings_that_keep_the_contract_pass_every_check(variant, tiny_params, tiny_data):
    passed = contract.check(tiny_params, variant, tiny_data)
    assert [p.check for p in passed] == list(contract.CHECKS)
    if variant == "learned":  # its table stops at the training context: N/A beyond, no crash
        assert "N/A at [9]" in passed[1].detail and passed[2].detail.startswith("N/A")


class ForgetsTheCache(ALiBi):
    """Distances counted from the first query of the forward pass, not its position: right
    when the whole window runs, wrong for a cached step's one query."""

    def bias(self, q_positions, k_positions):
        q = torch.arange(len(q_positions), device=q_positions.device)
        return super().bias(q, k_positions)


class Quadratic(ALiBi):
    """Builds every key against every key at each step, then keeps the queries' rows."""

    def bias(self, q_positions, k_positions):
        every = super().bias(k_positions, k_positions)
        return every[:, -len(q_positions) :]


class Crashes(Learned):
    """A table that raises IndexError past its rows instead of NotApplicable."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.max_position = None  # never declared: the policy cannot refuse beforehand

    def add_to_input(self, x, positions):
        if int(positions.max()) >= self.table.num_embeddings:
            raise IndexError("index out of range in self")
        return x + self.table(positions)


class Undeclared(Rope):
    """Reads an option it never declares."""

    def __init__(self, cfg):
        super().__init__(cfg)
        self.base = cfg.options["k"]["base"]


@pytest.mark.parametrize(
    "name, broken, check",
    [
        ("alibi", ForgetsTheCache, "cache"),
        ("alibi", Quadratic, "linear"),
        ("learned", Crashes, "not_applicable"),
        ("rope", Undeclared, "options"),
    ],
)
def test_a_broken_encoding_is_refused_naming_the_check(
    name, broken, check, tiny_params, tiny_data, monkeypatch, capsys
):
    for attr in ("name", "axis", "reference"):
        setattr(broken, attr, getattr(encodings.REGISTRY["k"][name], attr))
    monkeypatch.setitem(encodings.REGISTRY["k"], name, broken)
    with pytest.raises(contract.ContractError, match=f"check '{check}' fails") as e:
        contract.check(tiny_params, name, tiny_data)
    assert e.value.check == check


def test_dtpe_contract_says_which_check_failed(
    tmp_path, tiny_raw_params, tiny_data, monkeypatch, capsys
):
    import yaml

    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(tiny_raw_params))
    argv = ["contract", "--params", str(path), "--data", str(tiny_data), "--variant"]
    assert cli.main([*argv, "prope"]) == 0
    assert "contract: prope: linear: passed" in capsys.readouterr().out
    assert cli.main([*argv, "nosuch"]) == 1
    assert "unknown k encoding 'nosuch'" in capsys.readouterr().err
    monkeypatch.setitem(encodings.REGISTRY["k"], "alibi", Quadratic)
    for attr in ("name", "axis", "reference"):
        setattr(Quadratic, attr, getattr(ALiBi, attr))
    assert cli.main([*argv, "alibi"]) == 1
    assert "alibi: the contract's check 'linear' fails" in capsys.readouterr().err


@pytest.mark.parametrize("p", [0.0, 0.25, 0.5, 1.0])
def test_prope_rotates_only_its_fastest_fraction(p, tiny_params):
    """p-RoPE is RoPE on the fastest round(p d/2) frequency pairs and no rotation on the rest:
    p = 1 is rope, p = 0 rotates nothing, and a score depends on positions only through their
    offset whatever p."""
    cfg = tiny_params.model_config("rope")
    cfg = type(cfg)(**{**cfg.__dict__, "options": {"k": {"p": p}, "t": {}}})
    prope = encodings.REGISTRY["k"]["prope"](cfg)
    dh = prope.head_dim
    positions = torch.arange(40)
    angle, factor = prope.angles(positions)
    kept = round(p * dh / 2)
    torch.testing.assert_close(angle[:, :kept], rope_angles(positions, dh)[:, :kept])
    assert (angle[:, kept:] == 0).all() and factor == 1.0
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(2, 1, 1, 1, dh, generator=g)

    def score(m, n):
        rq, _ = prope.rotate(q, q, torch.tensor([m]))
        _, rk = prope.rotate(k, k, torch.tensor([n]))
        return float((rq * rk).sum())

    assert score(7, 3) == pytest.approx(score(30, 26), abs=1e-5)
    if p == 0:
        assert score(7, 3) == pytest.approx(float((q * k).sum()), abs=1e-5)
