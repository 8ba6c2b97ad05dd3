"""Preregistration in the artifacts: a confirmatory run (params `verdict.confirmatory`) declares
its hypotheses in its params overlay, and each of its models records the overlay it was trained
under, so that the results alone show which hypotheses the models were trained to test.

- Training (`lock`): the overlay and every file of its base chain must be committed in git and
  unchanged in the working tree, else `dtpe train` refuses naming the file. Each model records
  the overlay's last commit and the sha256 of its content, and the same of each base, in
  results/train/<model>/preregistration.json (committed with the results) and in its
  checkpoint's metadata.
- Deciding (`verify`, `dtpe stats`): every model must record the overlay's content as it is now,
  or a content that `verdict.amendments` declares it changed from (with why); a record of any
  other content, or a run whose models are only partly recorded, is refused. Only the overlay is
  compared: the hypotheses, their endpoints, margins and seeds are its keys, while params.yaml,
  the base of every run, gains a knob with most features; the bases' records are for a reviewer.
- A run whose models record nothing predates the lock (the three confirmatory runs made before
  it). Git shows only the order of commits for it, and that is what is stated: the overlay's
  last commit before the first commit that added a result of the run, that first result commit,
  and the commits that changed the overlay from it on."""

from __future__ import annotations

import hashlib
import json
import subprocess
from dataclasses import dataclass
from pathlib import Path

from dtpe.params import ParamsError, chain

RECORD = "preregistration.json"
"""a confirmatory model's record, beside its metrics in results/train/<model>/"""
METADATA_KEY = "preregistration"
"""the record's key in the checkpoint's safetensors metadata (JSON)"""
RECORDED, AMENDED = "recorded", "recorded, amended"
PREDATES = "not recorded: predates the lock"
COLUMNS = (
    "preregistration",
    "overlay_commit",
    "overlay_sha256",
    "first_result_commit",
    "overlay_changed_at",
)
"""decisions.csv's columns of it (Preregistration.columns); several commits or hashes are
joined by spaces"""
RESULT_FOLDERS = ("train", "eval")
"""the folders of a run's results whose first committed file counts as its first result"""


def sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _git(top: Path, *args: str, binary: bool = False) -> str | bytes | None:
    """git's output in `top` (stripped text, or bytes), or None where it fails or is missing."""
    try:
        done = subprocess.run(
            ["git", "-C", str(top), *args], capture_output=True, text=not binary, timeout=60
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout if binary else done.stdout.strip()


def _toplevel(path: Path) -> Path | None:
    top = _git(Path(path).resolve().parent, "rev-parse", "--show-toplevel")
    return Path(top) if top else None


def _relative(path: Path, top: Path) -> str | None:
    try:
        return Path(path).resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return None


def lock(params_path: Path) -> dict:
    """The record a confirmatory model keeps: {path, commit, sha256} of the overlay and, under
    `bases`, of each file it builds on. Raises ParamsError naming the first file of the chain
    that is not committed or differs from its commit."""
    why = "a confirmatory run trains only from params committed before it"
    entries = []
    for file in chain(params_path):
        top = _toplevel(file)
        rel = _relative(file, top) if top else None
        if rel is None:
            raise ParamsError(f"{file}: {why}, and no git repository holding {file} can be read")
        committed = _git(top, "rev-parse", "--verify", "--quiet", f"HEAD:{rel}")
        if not committed:
            raise ParamsError(f"{file}: {why}, and {file} is not committed: commit it first")
        if _git(top, "hash-object", "--", rel) != committed:
            raise ParamsError(
                f"{file}: {why}, and {file} differs from its last commit: commit the change "
                "(an amendment, if the run has models already: verdict.amendments) or undo it"
            )
        commit = _git(top, "log", "-1", "--format=%H", "--", rel)
        entries.append({"path": rel, "commit": commit, "sha256": sha256(file)})
    overlay, *bases = entries
    return {**overlay, "bases": bases}


@dataclass(frozen=True)
class Preregistration:
    """What a confirmatory run's models show of the overlay they were trained under."""

    status: str
    """RECORDED (every model records the overlay as it is now), AMENDED (some record a content
    that verdict.amendments declares changed), or PREDATES"""
    commits: tuple[str, ...]
    """the overlay's commits the models record, in the run's model order; before the lock, the
    overlay's last commit before the run's first result (none where git cannot tell)"""
    sha256: tuple[str, ...]
    """the overlay's contents the models record; before the lock, its content at that commit"""
    first_result: str | None = None
    """before the lock: the first commit that added a result of the run"""
    changed_at: tuple[str, ...] = ()
    """before the lock: the commits that changed the overlay from the first result on"""

    def columns(self) -> dict:
        """Its COLUMNS' values."""
        values = (
            self.status,
            " ".join(self.commits),
            " ".join(self.sha256),
            self.first_result or "",
            " ".join(self.changed_at),
        )
        return dict(zip(COLUMNS, values))


def verify(params_path: Path, params, records: dict[str, Path], results: Path):
    """The run's preregistration from its models' records (model name -> its RECORD path), or
    None where the run is not confirmatory. Raises ParamsError where some models have a record
    and others not, or where a record's overlay content is neither the overlay's now nor one
    that verdict.amendments declares."""
    if not params.verdict.confirmatory:
        return None
    found = {name: json.loads(path.read_text()) for name, path in records.items() if path.is_file()}
    if not found:
        return predating(params_path, results)
    lacking = [name for name in records if name not in found]
    if lacking:
        raise ParamsError(
            f"{params_path}: {len(found)} of the run's models record the overlay they were "
            f"trained under ({RECORD}) and {len(lacking)} do not ({', '.join(lacking[:4])}"
            f"{', ...' if len(lacking) > 4 else ''}): a run is preregistered whole or not at all"
        )
    now = sha256(params_path)
    amended = {a["from_sha256"] for a in params.verdict.amendments}
    for name, record in found.items():
        if record["sha256"] not in amended | {now}:
            raise ParamsError(
                f"{params_path}: params key verdict.amendments: model {name} was trained under "
                f"the overlay's content {record['sha256']} (commit {record['commit']}), not its "
                f"content now ({now}): declare the change there ({{from_sha256: "
                f"{record['sha256']}, why: ...}}) or retrain the model"
            )
    recorded = list(found.values())
    return Preregistration(
        status=AMENDED if any(r["sha256"] != now for r in recorded) else RECORDED,
        commits=tuple(dict.fromkeys(r["commit"] for r in recorded)),
        sha256=tuple(dict.fromkeys(r["sha256"] for r in recorded)),
    )


def predating(params_path: Path, results: Path) -> Preregistration:
    """A run whose models predate the lock, as git orders it: the overlay's last commit before
    the first commit that added a file under the run's results/train or results/eval, that
    commit, and the overlay's commits from it on."""
    top = _toplevel(params_path)
    rel = _relative(params_path, top) if top else None
    folders = [_relative(Path(results) / f, top) for f in RESULT_FOLDERS] if rel else []
    if rel is None or None in folders:
        return Preregistration(PREDATES, (), ())
    added = _git(top, "log", "--diff-filter=A", "--format=%H", "--", *folders)
    if not added:
        return Preregistration(PREDATES, (), ())
    first = added.splitlines()[-1]
    touched = (_git(top, "log", "--format=%H", "--", rel) or "").splitlines()  # newest first
    before = [
        c
        for c in touched
        if c != first and _git(top, "merge-base", "--is-ancestor", c, first) is not None
    ]
    changed = tuple(reversed([c for c in touched if c not in before]))
    if not before:
        return Preregistration(PREDATES, (), (), first, changed)
    content = _git(top, "show", f"{before[0]}:{rel}", binary=True)
    return Preregistration(
        PREDATES, (before[0],), (hashlib.sha256(content).hexdigest(),), first, changed
    )


def describe(values) -> str:
    """A decisions row's preregistration (its COLUMNS, as read back from the CSV) in words, for
    the report and the verdicts table; "" where the run is not confirmatory."""

    def commits(column) -> str:
        given = values.get(column)
        return ", ".join(f"`{c[:7]}`" for c in given.split()) if isinstance(given, str) else ""

    def hashes() -> str:
        given = values.get("overlay_sha256")
        return ", ".join(f"`{h[:12]}`" for h in given.split()) if isinstance(given, str) else ""

    status = values.get("preregistration")
    if not isinstance(status, str):
        return ""
    if status != PREDATES:
        which = "its content now" if status == RECORDED else "amended since, as declared"
        return f"{status}: overlay at {commits('overlay_commit')} (sha256 {hashes()}), {which}"
    if not commits("first_result_commit"):
        return f"{status}; git holds no result of the run to order it by"
    order = (
        f"git shows only the order of commits: the overlay's {commits('overlay_commit')} "
        f"(sha256 {hashes()}) before the run's first result {commits('first_result_commit')}"
        if commits("overlay_commit")
        else f"git holds no commit of the overlay before the run's first result "
        f"{commits('first_result_commit')}"
    )
    changed = commits("overlay_changed_at")
    return f"{status}; {order}" + (f"; the overlay changed since, at {changed}" if changed else "")
