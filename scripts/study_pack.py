"""What scripts/study_gpu.py packs and how: files replaced whole, folders as tar.gz, md5s as
DVC hashes them, and the code version that ties a device's results to a commit."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def replace(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.part")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def write_tar(path: Path, base: Path, folder: Path, tail: int | None) -> None:
    """The files under `folder` (not dtpe's half-written `.name.*` temporaries), named
    relative to `base`; with `tail`, each cut to its last `tail` bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for f in sorted(folder.rglob("*")) if folder.is_dir() else []:
            rel = f.relative_to(base)
            if not f.is_file() or any(part.startswith(".") for part in rel.parts):
                continue
            data = f.read_bytes()
            if tail is not None and len(data) > tail:
                data = f"[first {len(data) - tail} bytes cut]\n".encode() + data[-tail:]
            info = tarfile.TarInfo(rel.as_posix())
            info.size, info.mtime, info.mode = len(data), int(f.stat().st_mtime), 0o644
            tar.addfile(info, io.BytesIO(data))
    replace(path, buf.getvalue())


def md5s(folder: Path) -> dict[str, str]:
    return {
        f.relative_to(folder).as_posix(): hashlib.md5(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


def json_or_none(path: Path):
    return json.loads(path.read_text()) if path.is_file() else None


def code_version() -> dict:
    """The git commit (and whether src/ or the params differ from it) where .git is there, and
    always the sha256 of src/dtpe's files, each as `path NUL bytes` in path order: the device
    gets the working tree without .git, so the hash is what ties its results to a commit (the
    same function run in a checkout of that commit gives the same hash)."""
    h = hashlib.sha256()
    package = ROOT / "src" / "dtpe"
    for f in sorted(package.rglob("*")):
        rel = f.relative_to(package)
        if f.is_file() and "__pycache__" not in rel.parts and f.suffix != ".pyc":
            h.update(rel.as_posix().encode() + b"\0" + f.read_bytes())
    version = {"src_sha256": h.hexdigest(), "git_commit": None, "git_dirty": None}
    if (ROOT / ".git").exists() and shutil.which("git"):
        git = ["git", "-C", str(ROOT)]
        head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True)
        if head.returncode == 0:
            dirty = subprocess.run(
                [*git, "status", "--porcelain", "--", "src", "params*.yaml"],
                capture_output=True,
                text=True,
            ).stdout.strip()
            version.update(git_commit=head.stdout.strip(), git_dirty=bool(dirty))
    return version
