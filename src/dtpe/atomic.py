"""Outputs appear whole or not at all: each is written under a temporary name in the same
folder and renamed into place, so an interrupted step never leaves a file that a rerun (or a
workflow tool comparing timestamps) could take for a finished one."""

from __future__ import annotations

import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def output(path: str | Path):
    """Yields a temporary path (file or folder) that replaces `path` when the block succeeds."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", dir=path.parent)) / path.name
    try:
        yield tmp
        readable(tmp)
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        os.replace(tmp, path)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


def write_text(path: str | Path, text: str) -> None:
    with output(path) as tmp:
        tmp.write_text(text)


def readable(path: Path) -> None:
    """Files 0644 and folders 0755, as a plain write would leave them: the writers inside may
    create them private (mkstemp-style 0600), which other users of a shared cache cannot read."""
    paths = [path, *path.rglob("*")] if path.is_dir() else [path]
    for p in paths:
        os.chmod(p, 0o755 if p.is_dir() else 0o644)
