"""The GPU machine for scripts/study_gpu.py: what the device is (`probe_device`), its use over
time (`sample`), and CUDA's multi-process service (`start_mps`, `stop_mps`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, os, platform, sys, torch
cuda = torch.cuda.is_available()
cpu = platform.processor()
if os.path.exists("/proc/cpuinfo"):
    found = [l.split(":", 1)[1] for l in open("/proc/cpuinfo") if l.startswith("model name")]
    cpu = found[0].strip() if found else cpu
print(json.dumps({
    "name": torch.cuda.get_device_name(0) if cuda else "cpu: " + cpu,
    "cuda": cuda, "gpus": torch.cuda.device_count(), "cuda_version": torch.version.cuda,
    "torch": torch.__version__, "python": sys.version.split()[0], "cpu": cpu,
    "cpu_cores": os.cpu_count(), "host": platform.node()}))
"""


def probe_device() -> dict:
    """The device as the steps' python sees it (a separate process: this one keeps no CUDA
    context), with nvidia-smi's name, memory and driver where there is one."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"study_gpu: the device probe failed:\n{done.stderr[-2000:]}")
    info = json.loads(done.stdout)
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(
            ["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
        )
        info["nvidia_smi"] = smi.stdout.strip() or smi.stderr.strip()
    return info


def sample() -> dict | None:
    """nvidia-smi's GPU use and memory now; None where it cannot say (no GPU, no tool)."""
    query = "--query-gpu=utilization.gpu,memory.used,memory.total"
    try:
        out = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader,nounits"],
            capture_output=True,
            text=True,
            timeout=10,
        ).stdout.split("\n")[0]
        util, used, total = (float(v) for v in out.split(","))
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return {"util_pct": util, "mem_used_mib": used, "mem_total_mib": total}


MPS_CONTROL = "nvidia-cuda-mps-control"


def start_mps(folder: Path) -> dict:
    """CUDA's multi-process service for the steps this process starts (they inherit its
    environment), kept only if a CUDA context then opens: where it cannot, the steps share the
    GPU in turns as without it. Measured on an H200, nine study-size trainings of two epochs:
    28 s in turns, 20 s under MPS (a first start of each included)."""
    if not shutil.which(MPS_CONTROL):
        return {"status": f"not started: no {MPS_CONTROL}"}
    env = {
        "CUDA_MPS_PIPE_DIRECTORY": str(folder / "pipe"),
        "CUDA_MPS_LOG_DIRECTORY": str(folder / "log"),
    }
    for path in env.values():
        Path(path).mkdir(parents=True, exist_ok=True)
    os.environ.update(env)
    check = "import torch; torch.zeros(1, device='cuda')"
    try:
        subprocess.run([MPS_CONTROL, "-d"], check=True, capture_output=True, timeout=30)
        subprocess.run([sys.executable, "-c", check], check=True, capture_output=True, timeout=90)
        return {"status": "started", **env}
    except (OSError, subprocess.SubprocessError) as e:
        stop_mps()
        for name in env:
            os.environ.pop(name)
        return {"status": f"not started: {type(e).__name__}: {str(e)[-300:]}"}


def stop_mps() -> None:
    try:
        subprocess.run([MPS_CONTROL], input="quit\n", text=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pass  # the machine is handed back after the command anyway
