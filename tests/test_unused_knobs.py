"""A knob an overlay values but no part of its run reads is named in a warning, with the run's
variants: DoorKey's and SimpleCrossing's learned t table, where every variant encodes t with
sinusoids."""

import warnings

import pytest
import yaml
from conftest import ROOT

from dtpe import params


@pytest.mark.parametrize("overlay", ["params-doorkey.yaml", "params-crossing.yaml"])
def test_an_option_of_an_encoding_no_variant_uses_is_warned_about(overlay):
    with pytest.warns(params.UnusedKnob) as caught:
        params.load(ROOT / overlay)
    (message,) = {str(w.message) for w in caught}
    assert "encodings.t.learned.table changes nothing" in message
    assert "['learned', 'sinusoidal', 'rope']" in message


def test_an_option_a_variant_uses_is_not(tmp_path):
    overlay = tmp_path / "params-t.yaml"
    raw = {"base": str(ROOT / "params.yaml"), "encodings": {"t": {"learned": {"table": 50}}}}
    raw["study"] = {"variants": ["rope", "rope-t_learned"]}
    overlay.write_text(yaml.safe_dump(raw))
    with warnings.catch_warnings():
        warnings.simplefilter("error", params.UnusedKnob)
        params.load(overlay)
