"""Portable numerics (dtpe/numerics.py): the pins take effect, a torch loaded before them is
refused, and a tiny training has the same checkpoint bytes on every x86-64 CPU with AVX2."""

import hashlib
import os
import subprocess
import sys

import pytest

from dtpe import numerics
from dtpe.steps import train

# sha256 of model.safetensors from the tiny training below under the portable mode. A change
# to what training computes changes it: the commit that changes it updates it and says why.
# A CPU that gives another hash at an unchanged commit is one the mode does not serve.
TINY_TRAINING_SHA256 = "266b6eb0b19cb7474fc0e3483ff1fddb06cdfd2ecc586044cc6cca2681f4aa30"

UNSERVED = numerics.unserved_reason()


@pytest.mark.skipif(UNSERVED is not None, reason=f"the portable mode cannot serve: {UNSERVED}")
def test_the_pins_took_effect():
    record = numerics.check(numerics.PORTABLE, 1)
    assert record["aten_capability"] == "AVX2"
    assert (record["onednn_max_cpu_isa"], record["mkl_cbwr"]) == ("AVX2", "COMPATIBLE")
    assert record["reproducible_on"] == numerics.EVERY_CPU
    assert numerics._mkl_branch(__import__("torch")) in (None, numerics.MKL_COMPATIBLE)


def test_native_mode_reproduces_on_this_machine_only():
    assert numerics.check(numerics.NATIVE, 1)["reproducible_on"] == numerics.THIS_MACHINE


@pytest.mark.skipif(UNSERVED is not None, reason=f"the portable mode cannot serve: {UNSERVED}")
def test_kernels_chosen_before_the_pins_are_refused():
    env = {k: v for k, v in os.environ.items() if k not in numerics.PINS}
    code = (
        "import torch\n"
        "torch.ones(3).exp()\n"  # ATen fixes its code path at its first vectorised kernel
        "from dtpe import numerics\n"
        "numerics.pin(numerics.PORTABLE)\n"
        "numerics.check(numerics.PORTABLE, 1)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**env, "ATEN_CPU_CAPABILITY": "default"},
        capture_output=True,
        text=True,
    )
    assert out.returncode != 0, (out.stdout, out.stderr)
    assert "NumericsError" in out.stderr and "before dtpe.numerics.pin" in out.stderr


@pytest.mark.skipif(UNSERVED is not None, reason=f"the portable mode cannot serve: {UNSERVED}")
def test_tiny_training_has_the_committed_bytes(tiny_data, tiny_params, tmp_path):
    record = numerics.check(tiny_params.compute.numerics, 1)
    train.train(
        tiny_params,
        "rope",
        1,
        tiny_data,
        tmp_path / "m",
        tmp_path / "mm",
        tmp_path / "r",
        1,
        record,
    )
    digest = hashlib.sha256((tmp_path / "m" / "model.safetensors").read_bytes()).hexdigest()
    assert digest == TINY_TRAINING_SHA256, (
        f"this CPU ({record['cpu']}) trained other bytes under the portable mode: {digest}"
    )
