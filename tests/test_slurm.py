"""The cluster path for real: a one-node SLURM cluster (slurmctld, slurmd and munged started here
as child processes, stopped by process id afterwards) runs the tiny project through
snakemake-executor-plugin-slurm with the project's own profile, workflow/profiles/slurm, to
completion; then `snakemake -n` has nothing left to do.

Needs root (the daemons, and /etc/slurm/slurm.conf: the plugin's job step drops SLURM_CONF, so the
config must sit at the default path; whatever was there is put back). SLURM comes from the Debian
packages slurm-wlm and munge, installed here with apt-get when missing; where that is impossible
the test is skipped, saying why. The profile's resources are read from a dry run, fast."""

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from conftest import ROOT
from test_pipeline import OUTPUTS, TOOL_ENV, e2e_params, make_project, planned_rules

PROFILE = "workflow/profiles/slurm"
SLURM_CONF = Path("/etc/slurm/slurm.conf")
SBIN = os.pathsep.join(["/usr/sbin", "/sbin", "/usr/bin", "/bin"])
DAEMONS = ["munged", "slurmctld", "slurmd"]
CLIENTS = ["sinfo", "squeue", "sbatch", "srun", "scancel"]
# The SLURM environment of an enclosing job (or a SLURM_CONF elsewhere) must not leak into ours.
ENV = {k: v for k, v in TOOL_ENV.items() if not k.startswith("SLURM_")}
ENV["PATH"] = f"{ENV['PATH']}{os.pathsep}{SBIN}"
RUN_TIMEOUT = 40 * 60  # seconds; the tiny project takes a few minutes


def which(name: str) -> str | None:
    return shutil.which(name, path=ENV["PATH"])


def ensure_slurm_installed() -> None:
    """Install slurm-wlm and munge with apt-get when missing and possible, else skip."""
    if all(which(name) for name in DAEMONS + CLIENTS):
        return
    if os.geteuid() != 0 or not which("apt-get"):
        pytest.skip(
            "SLURM is not installed (Debian packages slurm-wlm, munge) "
            "and cannot be installed here: "
            "that needs root and apt-get"
        )
    apt_env = {**ENV, "DEBIAN_FRONTEND": "noninteractive"}
    for cmd, timeout in (
        (["apt-get", "update", "-q"], 300),
        (["apt-get", "install", "-y", "-q", "slurm-wlm", "munge"], 900),
    ):
        try:
            done = subprocess.run(cmd, env=apt_env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            pytest.skip(f"`{' '.join(cmd)}` took longer than {timeout} s")
        if done.returncode:
            pytest.skip(
                f"`{' '.join(cmd)}` failed ({done.returncode}): "
                f"{(done.stdout + done.stderr)[-500:]}"
            )
    missing = [name for name in DAEMONS + CLIENTS if not which(name)]
    if missing:
        pytest.skip(f"slurm-wlm and munge installed, yet {missing} are not on PATH")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def real_memory_mb() -> int:
    """90 % of MemTotal: slurmd drains a node that has less memory than slurm.conf says."""
    kib = int(re.search(r"MemTotal:\s+(\d+) kB", Path("/proc/meminfo").read_text()).group(1))
    return int(kib / 1024 * 0.9)


def slurm_conf(base: Path, host: str, partition: str) -> str:
    """One node that is also the controller; no accounting (so no slurmdbd, and no sacct);
    no cgroups (proctrack/linuxproc, task/none). MinJobAge keeps finished jobs visible to squeue,
    the profile's status command, for the whole run."""
    return f"""\
ClusterName=dtpe-test
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={free_port()}
SlurmdPort={free_port()}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={base}/munge/munge.socket
StateSaveLocation={base}/state
SlurmdSpoolDir={base}/spool
SlurmctldPidFile={base}/run/slurmctld.pid
SlurmdPidFile={base}/run/slurmd.pid
SlurmctldLogFile={base}/log/slurmctld.log
SlurmdLogFile={base}/log/slurmd.log
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=3600
NodeName={host} NodeAddr=127.0.0.1 CPUs={os.cpu_count()} RealMemory={real_memory_mb()} State=UNKNOWN
PartitionName={partition} Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


def slurm(*cmd: str, timeout: float = 30) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, env=ENV, capture_output=True, text=True, timeout=timeout)


def wait_until_idle(node: str, daemons: dict, logs: Path, timeout: float = 90) -> None:
    deadline, state = time.monotonic() + timeout, ""
    while time.monotonic() < deadline and all(p.poll() is None for p in daemons.values()):
        try:
            state = slurm(
                "sinfo", "--noheader", "--nodes", node, "--format", "%T", timeout=10
            ).stdout.strip()
        except subprocess.TimeoutExpired:
            state = "(sinfo timed out)"
        if state == "idle":
            return
        time.sleep(1)
    exited = {name: p.returncode for name, p in daemons.items() if p.poll() is not None}
    tails = "\n".join(f"--- {f.name}\n{f.read_text()[-1500:]}" for f in sorted(logs.glob("*")))
    raise AssertionError(
        f"node {node} not idle (state {state!r}, daemons exited: {exited}):\n{tails}"
    )


def controller_running() -> bool:
    try:
        return slurm("scontrol", "ping", timeout=20).returncode == 0
    except subprocess.TimeoutExpired:
        return False


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=30)


@pytest.fixture(scope="module")
def slurm_cluster(tmp_path_factory):
    """A running one-node cluster whose single partition is the one the profile asks for by default.
    Yields that partition's name."""
    if sys.platform != "linux":
        pytest.skip("the one-node SLURM cluster needs Linux")
    ensure_slurm_installed()
    if os.geteuid() != 0:
        pytest.skip("starting slurmctld/slurmd and writing /etc/slurm/slurm.conf needs root")
    if SLURM_CONF.exists() and controller_running():
        pytest.skip(
            f"a SLURM controller configured by {SLURM_CONF} is running here; "
            "the test leaves it alone"
        )

    partition = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())["default-resources"][
        "slurm_partition"
    ]
    host = socket.gethostname().split(".")[0]
    base = tmp_path_factory.mktemp("slurm")
    for sub in ["munge", "state", "spool", "run", "log"]:
        (base / sub).mkdir()
    (base / "munge").chmod(0o755)  # clients reach munged's socket through it
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o600)
    logs = base / "log"

    backup = SLURM_CONF.read_bytes() if SLURM_CONF.exists() else None
    made_dir = not SLURM_CONF.parent.exists()
    daemons: dict[str, subprocess.Popen] = {}
    try:
        SLURM_CONF.parent.mkdir(parents=True, exist_ok=True)
        SLURM_CONF.write_text(slurm_conf(base, host, partition))
        commands = {
            "munged": [
                which("munged"),
                "--foreground",
                "--force",
                f"--key-file={key}",
                f"--socket={base}/munge/munge.socket",
                f"--pid-file={base}/run/munged.pid",
                f"--seed-file={base}/munge/munged.seed",
                f"--log-file={logs}/munged.log",
            ],
            "slurmctld": [which("slurmctld"), "-D"],
            "slurmd": [which("slurmd"), "-D", "-N", host],
        }
        for name, cmd in commands.items():
            with open(logs / f"{name}.out", "w") as out:
                daemons[name] = subprocess.Popen(
                    cmd, env=ENV, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
                )
            if name == "munged":
                for _ in range(50):
                    if (base / "munge" / "munge.socket").exists():
                        break
                    time.sleep(0.1)
        wait_until_idle(host, daemons, logs)
        yield partition
    finally:
        if "slurmctld" in daemons and daemons["slurmctld"].poll() is None:
            slurm("scancel", "--partition", partition)  # jobs a failed run left behind
            time.sleep(2)
        for name in reversed(list(daemons)):
            stop(daemons[name])
        if backup is not None:
            SLURM_CONF.write_bytes(backup)
        else:
            SLURM_CONF.unlink(missing_ok=True)
            if made_dir:
                shutil.rmtree(SLURM_CONF.parent, ignore_errors=True)


def job_counts(log: str) -> dict:
    """Jobs per rule from the first job-stats table Snakemake prints."""
    table = log[log.index("Job stats:") :].split("\n\n")[0].splitlines()[3:]
    return {row.split()[0]: int(row.split()[1]) for row in table if len(row.split()) == 2}


def planned_resources(*args: str) -> dict:
    """rule -> the resources of its first job, from a dry run with the SLURM profile."""
    out = subprocess.run(
        ["snakemake", "-n", "--forceall", "--profile", PROFILE, *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    ).stdout
    planned = {}
    for rule, resources in re.findall(
        r"^rule (\w+):\n(?:    .*\n)*?    resources: (.*)$", out, re.M
    ):
        planned.setdefault(rule, dict(item.split("=", 1) for item in resources.split(", ")))
    return planned


def test_profile_asks_a_gpu_for_training_only_and_scales_it_with_the_model():
    gpu_partition = yaml.safe_load((ROOT / PROFILE / "config.yaml").read_text())["set-resources"][
        "train"
    ]["slurm_partition"]
    default, study = planned_resources(), planned_resources("--configfile", "params-study.yaml")
    assert study["train"]["gpu"] == "1" and study["train"]["slurm_partition"] == gpu_partition
    assert [rule for rule, resources in study.items() if "gpu" in resources] == ["train"]
    for resource in ("mem_mb", "runtime"):
        assert int(study["train"][resource]) > int(default["train"][resource]), resource


@pytest.mark.slow
def test_srun_runs_on_the_cluster(slurm_cluster):
    done = slurm("srun", "--partition", slurm_cluster, "--ntasks", "1", "hostname", timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == socket.gethostname().split(".")[0], done


@pytest.mark.slow
def test_tiny_project_runs_through_the_slurm_executor(slurm_cluster, tmp_path):
    project = make_project(tmp_path / "project", e2e_params())
    # The profile as shipped, but no GPU (the node has none; this --set-resources replaces the
    # profile's block, so training also lands in the one partition) and a first status check
    # after 5 s instead of 40: the tiny project's jobs last seconds.
    cmd = [
        "snakemake",
        "--profile",
        PROFILE,
        "--set-resources",
        "train:gpu=0",
        "--jobs",
        "2",
        "--slurm-init-seconds-before-status-checks",
        "5",
    ]
    started = time.monotonic()
    try:
        done = subprocess.run(
            cmd, cwd=project, env=ENV, capture_output=True, text=True, timeout=RUN_TIMEOUT
        )
    except subprocess.TimeoutExpired as timeout:
        raise AssertionError(
            f"snakemake on SLURM took over {RUN_TIMEOUT} s:\n{str(timeout.stderr)[-3000:]}"
        )
    log = done.stdout + done.stderr
    if done.returncode:
        slurm_logs = "\n".join(
            f"--- {f}\n{f.read_text()[-1500:]}"
            for f in sorted((project / ".snakemake/slurm_logs").rglob("*.log"))
        )
        raise AssertionError(
            f"snakemake on SLURM failed ({done.returncode}):\n{log[-4000:]}\n{slurm_logs}"
        )
    print(f"tiny project on SLURM: {time.monotonic() - started:.0f} s")

    for out in OUTPUTS:
        assert (project / out).is_file(), out
    assert planned_rules(project) == set()

    # Every job but the target rule ran as a SLURM job of this run, and each one completed.
    run_id = re.search(r"SLURM run ID: (\S+)", log).group(1)
    jobs = slurm(
        "squeue", "--states=all", "--noheader", "--name", run_id, "--format", "%i|%T"
    ).stdout.split()
    expected = sum(n for rule, n in job_counts(log).items() if rule not in ("all", "total"))
    assert expected and len(jobs) == expected, (expected, jobs)
    assert all(job.endswith("|COMPLETED") for job in jobs), jobs
    print(f"{len(jobs)} SLURM jobs")
