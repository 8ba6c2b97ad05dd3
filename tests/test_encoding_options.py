"""An encoding's options live with it: declared in its module, valued in params' `encodings`
group, read by that encoding alone, so changing one reruns only the models that use it."""

import json
import math

import pytest
import yaml
from conftest import tiny_raw

from dtpe import cli, params
from dtpe.model import catalog, encodings
from dtpe.model.transformer import DecisionTransformer
from dtpe.steps import train

VARIANTS = ["rope", "learned", "rope-t_learned", "alibi-t_learned", "rope-t_randomized"]


def checked(tmp_path, raw) -> dict:
    """What `dtpe check` writes for DVC's stages (results/params.json)."""
    path, out = tmp_path / "params.yaml", tmp_path / "params.json"
    path.write_text(yaml.safe_dump(raw))
    assert cli.main(["check", "--params", str(path), "--out", str(out)]) == 0
    return json.loads(out.read_text())


def test_an_option_change_reaches_only_the_variants_whose_encoding_reads_it(tmp_path):
    raw = tiny_raw()
    raw["study"]["variants"] = VARIANTS
    before = checked(tmp_path, raw)
    raw["encodings"]["t"]["learned"]["table"] += 1
    after = checked(tmp_path, raw)
    changed = {v for v in VARIANTS if before["variants"][v] != after["variants"][v]}
    assert changed == {"rope-t_learned", "alibi-t_learned"}
    # the groups every model's stages read are untouched: only those models rerun
    assert all(before[g] == after[g] for g in ("model", "train", "env", "compute"))
    assert after["variants"]["rope-t_learned"]["options"] == {
        "k": {},
        "t": {"table": raw["encodings"]["t"]["learned"]["table"]},
    }


def test_a_models_config_and_resume_key_hold_its_own_encodings_options_only(tiny_data):
    raw = tiny_raw()
    p = params.check(raw)
    raw["encodings"]["t"]["learned"]["table"] = 7
    q = params.check(raw)
    assert p.model_config("rope") == q.model_config("rope")
    assert train.run_key(p, "rope", 1, tiny_data) == train.run_key(q, "rope", 1, tiny_data)
    assert train.run_key(p, "rope-t_learned", 1, tiny_data) != train.run_key(
        q, "rope-t_learned", 1, tiny_data
    )
    model = DecisionTransformer(q.model_config("rope-t_learned"))
    assert model.t_encoding.table.num_embeddings == 7


def test_the_catalog_reads_the_options_the_modules_declare():
    """The catalog reads the modules' source (no torch); it must agree with the classes."""
    for axis in catalog.AXES:
        assert catalog.options()[axis] == {
            name: cls.options for name, cls in encodings.REGISTRY[axis].items()
        }
    assert catalog.options()["t"]["learned"] == {"table": 1}


def test_params_yaml_values_every_declared_option_once():
    raw = yaml.safe_load(open(params.Path(__file__).parents[1] / "params.yaml"))
    declared = {
        (axis, name, option)
        for axis, entries in catalog.options().items()
        for name, opts in entries.items()
        for option in opts
    }
    given = {
        (axis, name, option)
        for axis, entries in raw["encodings"].items()
        for name, opts in entries.items()
        for option in opts
    }
    assert given == declared


def test_an_option_takes_the_type_of_its_smallest_value(monkeypatch):
    monkeypatch.setattr(
        catalog, "options", lambda: {"k": {}, "t": {"demo": {"scale": 0.5, "n": 2}}}
    )
    key = ".".join
    params._check_options({"t": {"demo": {"scale": 1, "n": 2}}}, key)  # an int is a number
    params._check_options({"t": {"demo": {"scale": 0.75, "n": 3}}}, key)
    with pytest.raises(
        params.ParamsError, match=r"^encodings\.t\.demo\.n: 2\.5 is not an integer >= 2$"
    ):
        params._check_options({"t": {"demo": {"scale": 1.0, "n": 2.5}}}, key)
    with pytest.raises(
        params.ParamsError, match=r"^encodings\.t\.demo\.scale: 0\.25 is not a number >= 0\.5$"
    ):
        params._check_options({"t": {"demo": {"scale": 0.25, "n": 2}}}, key)
    for bad in (True, math.nan, math.inf):
        with pytest.raises(params.ParamsError, match=f"{bad!r} is not a number"):
            params._check_options({"t": {"demo": {"scale": bad, "n": 2}}}, key)


@pytest.mark.parametrize(
    "declaration",
    ["options = dict(table=1)", "options = {'a': True}", "options = {'a': '1'}", "options = 3"],
)
def test_options_that_are_not_a_literal_dict_of_numbers_are_named_with_their_class(
    tmp_path, declaration
):
    (tmp_path / "demo.py").write_text(
        f"@register('k', 'demo', 'none')\nclass Demo(Encoding):\n    {declaration}\n"
    )
    with pytest.raises(ValueError, match=r"demo\.py: Demo\.options must be a literal dict"):
        catalog._registered(tmp_path)


def test_options_may_be_annotated_and_float(tmp_path):
    (tmp_path / "demo.py").write_text(
        "@register('k', 'demo', 'none')\nclass Demo(Encoding):\n"
        "    options: dict = {'scale': 0.5, 'n': 2}\n"
    )
    assert catalog._registered(tmp_path) == [(("k", "demo", "none"), {"scale": 0.5, "n": 2})]


def test_options_inherited_from_another_class_are_refused(monkeypatch):
    """The catalog reads the registered class's own body: an inherited dict would go unread."""
    monkeypatch.setitem(encodings.REGISTRY, "t", dict(encodings.REGISTRY["t"]))

    class Parent(encodings.Encoding):
        options = {"table": 1}

    with pytest.raises(TypeError, match="'inherited' inherits `options`: declare them in Child"):
        encodings.register("t", "inherited", "none")(type("Child", (Parent,), {}))
    assert "inherited" not in encodings.REGISTRY["t"]
