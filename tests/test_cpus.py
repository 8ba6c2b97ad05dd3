"""The portable mode's promise on CPUs other than CI's own, emulated by qemu-user: the tiny rope
seed-1 model trained, evaluated and analysed (tests/cpu_driver.py) under an Intel and an AMD
CPU has the committed checkpoint hash and the host's bytes; the native mode, the control, has
other bytes there; a CPU without AVX2 is refused. Emulated CPUs report their own vendor,
instruction sets and caches through CPUID, which torch, oneDNN and MKL pick their kernels from.
One driver run per CPU and mode (30-65 s emulated), as many at once as there are cores."""

import json
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, tiny_raw
from test_numerics import TINY_TRAINING_SHA256

from dtpe import numerics

UNSERVED = numerics.unserved_reason()
pytestmark = [
    pytest.mark.slow,
    # the host's runs are the comparison, and qemu-x86_64 runs this venv's x86-64 Python
    pytest.mark.skipif(UNSERVED is not None, reason=f"the portable mode cannot serve: {UNSERVED}"),
]

EMULATED = {"Haswell": "Intel", "EPYC": "AMD (Zen 1)"}
NO_AVX2 = "Westmere"
HOST = "host"
OUTPUTS = ["model", "episodes", "test", "grid", "context", "attention"]


def qemu() -> str:
    found = shutil.which("qemu-x86_64")
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail(
                "CI=true but no `qemu-x86_64` on PATH (.ci/run installs Debian's qemu-user)"
            )
        pytest.skip("no `qemu-x86_64` on PATH: install Debian's qemu-user to emulate other CPUs")
    return found


@pytest.fixture(scope="module")
def runs(tiny_data, tmp_path_factory):
    """(cpu, mode) -> the driver's finished process; the host's runs unemulated, for comparison."""
    emulator = qemu()
    root = tmp_path_factory.mktemp("cpus")
    jobs = [(HOST, m) for m in (numerics.PORTABLE, numerics.NATIVE)]
    jobs += [(c, m) for c in EMULATED for m in (numerics.PORTABLE, numerics.NATIVE)]
    jobs += [(NO_AVX2, numerics.PORTABLE)]

    def run(cpu, mode):
        raw = tiny_raw()
        raw["compute"]["numerics"] = mode
        params = root / f"{cpu}-{mode}.yaml"
        params.write_text(yaml.safe_dump(raw))
        driver = [sys.executable, str(ROOT / "tests/cpu_driver.py"), str(params), str(tiny_data)]
        emulate = [] if cpu == HOST else [emulator, "-cpu", cpu]
        # the pins this process inherited from conftest would make the native runs portable:
        # each run's CLI sets its own
        env = {k: v for k, v in os.environ.items() if k not in numerics.PINS}
        if cpu == NO_AVX2:
            # numpy's OpenBLAS takes the emulated Westmere for a Haswell and dies at import
            # (SIGILL) before dtpe can speak; told the core, it lets the refusal be reached
            env["OPENBLAS_CORETYPE"] = "NEHALEM"
        # the native control needs the weights only: the steps after them would follow suit
        args = [str(root / f"{cpu}-{mode}")] + (["--train-only"] if mode == numerics.NATIVE else [])
        return subprocess.run(
            emulate + driver + args, env=env, capture_output=True, text=True, timeout=600
        )

    with ThreadPoolExecutor(os.cpu_count()) as pool:
        futures = {job: pool.submit(run, *job) for job in jobs}
    return {job: f.result() for job, f in futures.items()}


def hashes(runs, cpu, mode) -> dict:
    done = runs[cpu, mode]
    assert done.returncode == 0, f"{cpu} {mode}: exit {done.returncode}\n{done.stderr[-3000:]}"
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("cpu", EMULATED)
def test_an_emulated_cpu_makes_the_committed_bytes(runs, cpu):
    emulated = hashes(runs, cpu, numerics.PORTABLE)
    assert emulated["model"] == TINY_TRAINING_SHA256, f"{cpu} ({EMULATED[cpu]}) trained other bytes"
    # the evaluation's CSVs alone could not fail: the tiny model fails every episode at the cap,
    # whatever its bytes; `episodes` holds each action's probabilities
    host = hashes(runs, HOST, numerics.PORTABLE)
    assert {k: emulated[k] for k in OUTPUTS} == {k: host[k] for k in OUTPUTS}


def test_the_native_mode_makes_other_bytes_there(runs):
    """The control: without the pins the two emulated CPUs' kernels differ from each other (MKL
    and oneDNN choose by vendor and cache sizes), so the test above compares code paths that
    would have differed; an AVX-512 host differs from both as well. (An AVX2-only host may pick
    what an emulated AVX2 CPU of its vendor picks: its own hash is no control.)"""
    emulated = {cpu: hashes(runs, cpu, numerics.NATIVE)["model"] for cpu in EMULATED}
    assert len(set(emulated.values())) == len(EMULATED), emulated
    assert TINY_TRAINING_SHA256 not in emulated.values()
    if " avx512f" in Path("/proc/cpuinfo").read_text():  # the host's own, never emulated here
        assert hashes(runs, HOST, numerics.NATIVE)["model"] not in emulated.values()


def test_a_cpu_without_avx2_is_refused(runs):
    done = runs[NO_AVX2, numerics.PORTABLE]
    assert done.returncode == 1, (done.returncode, done.stderr[-3000:])
    assert f"dtpe train: compute.numerics portable: {numerics.NO_AVX2}" in done.stderr
    assert not (Path(done.args[-1]) / "model").exists()  # refused before training, no bytes
