"""Portable numerics: the same bytes on every x86-64 CPU with AVX2 (params `compute.numerics`).

The CPU build of torch takes its kernels from three sources, and each picks its code path from
the CPU it runs on, so one commit, data and seed trained other weights on every CPU type it met.
The portable mode caps each source at a path every such CPU has:

- ATen's vectorised kernels at AVX2 (`ATEN_CPU_CAPABILITY`);
- oneDNN (convolutions) at AVX2 (`ONEDNN_MAX_CPU_ISA`);
- MKL (GEMM) on its COMPATIBLE branch (`MKL_CBWR`). MKL's AVX2 branch would be cheaper, but MKL
  does not honour it on AMD CPUs: it falls back to AUTO there (measured on an AMD EPYC, MKL
  2024.2: `MKL_CBWR=AVX2` ran as AUTO, the bytes of no pin), so only COMPATIBLE is the same
  branch on every vendor.

Each variable is read once, when its library runs its first kernel, so `pin` runs before torch
is imported (the CLI's `main`, the tests' conftest) and `check` confirms that they took; it
refuses a CPU without AVX2 (tests/test_cpus.py runs emulated ones).
MKL's reproducibility also needs a fixed thread count: the record names it.
"""

from __future__ import annotations

import os
import platform
import warnings
from pathlib import Path

PORTABLE, NATIVE = "portable", "native"
PINS = {"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2", "MKL_CBWR": "COMPATIBLE"}
MKL_COMPATIBLE = 3  # MKL_CBWR_COMPATIBLE in mkl_cbwr.h
THIS_MACHINE = "this machine only"
EVERY_CPU = "every x86-64 CPU with AVX2, at the same thread count and torch build"
NO_AVX2 = "the CPU lacks AVX2"


class NumericsError(RuntimeError):
    """The portable mode was asked for but its pins did not take effect, or cannot (no AVX2)."""


def unserved_reason(torch=None) -> str | None:
    """Why this CPU cannot run the portable mode, or None if it can. With torch loaded, AVX2 is
    asked of the CPU itself (CPUID): under an emulator (qemu-user) /proc/cpuinfo is the host's."""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return f"the CPU is {platform.machine()}, not x86-64"
    if torch is not None:
        return None if torch.cpu._is_avx2_supported() else NO_AVX2
    cpuinfo = Path("/proc/cpuinfo")
    return NO_AVX2 if cpuinfo.is_file() and " avx2" not in cpuinfo.read_text() else None


def pin(mode: str) -> None:
    """Sets the portable mode's variables for the torch about to load; does nothing in the
    native mode or on a CPU the mode cannot serve (`check` then warns, or refuses: no AVX2)."""
    if mode != PORTABLE or unserved_reason():
        return
    os.environ.update(PINS)


def check(mode: str, threads: int) -> dict:
    """Confirms, once torch has loaded, that the mode's pins took effect, and returns what the
    run's metadata records of its numerics. Raises NumericsError naming the pin that failed, or
    AVX2 where the CPU lacks it."""
    import torch

    reason = unserved_reason(torch)
    if mode == PORTABLE and reason == NO_AVX2:
        # refused, not run as native: these would be other bytes than every AVX2 CPU's, and ATen
        # takes ATEN_CPU_CAPABILITY=avx2 on trust, so a pinned CPU without AVX2 dies at its first
        # kernel (SIGILL)
        raise NumericsError(
            f"compute.numerics portable: {NO_AVX2}, the least the mode's bytes are made on; "
            "`compute.numerics: native` runs here, its results reproducing on this machine only"
        )
    if mode == PORTABLE and reason:
        warnings.warn(
            f"compute.numerics portable: {reason}; the results reproduce on {THIS_MACHINE}",
            stacklevel=2,
        )
    capability = torch.backends.cpu.get_cpu_capability()
    mkl_branch = _mkl_branch(torch)
    if mode == PORTABLE and not reason:
        if capability != "AVX2":
            raise NumericsError(
                f"compute.numerics portable: torch's kernels run at {capability}, not AVX2: torch "
                "chose them before dtpe.numerics.pin set ATEN_CPU_CAPABILITY (it is read once, "
                "at the first vectorised kernel)"
            )
        if mkl_branch not in (None, MKL_COMPATIBLE):
            raise NumericsError(
                f"compute.numerics portable: MKL runs on branch {mkl_branch}, not COMPATIBLE "
                f"({MKL_COMPATIBLE}): MKL ran before dtpe.numerics.pin set MKL_CBWR"
            )
    portable = mode == PORTABLE and not reason
    # an op without a deterministic kernel fails instead of varying from run to run
    torch.use_deterministic_algorithms(portable)
    return {
        "numerics": mode if portable or mode == NATIVE else f"{mode} (unserved: {reason})",
        "reproducible_on": EVERY_CPU if portable else THIS_MACHINE,
        "aten_capability": capability,
        "onednn_max_cpu_isa": os.environ.get("ONEDNN_MAX_CPU_ISA", "unset"),
        "mkl_cbwr": os.environ.get("MKL_CBWR", "unset"),
        "threads": threads,
        "torch": torch.__version__,
        "cpu": cpu_name(),
    }


def _mkl_branch(torch) -> int | None:
    """MKL's active reproducibility branch, read from MKL itself; None where this torch build
    does not expose MKL's service symbols (the check then rests on the variables alone)."""
    import ctypes

    if not torch.backends.mkl.is_available():
        return None
    try:
        lib = ctypes.CDLL(str(Path(torch.__file__).parent / "lib" / "libtorch_cpu.so"))
        return int(lib.mkl_serv_cbwr_get(ctypes.c_int(1)))
    except (OSError, AttributeError):
        return None


def cpu_name() -> str:
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.is_file():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()
