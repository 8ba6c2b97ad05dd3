"""The runs submitted to the leaderboard (`dtpe submit`), found by their validated params: a run
whose results/params.json names a `submission`. Read by the leaderboard and by Snakemake's
`leaderboard` rule, which parses it on every call, so nothing heavier than json is imported."""

from __future__ import annotations

import json
from pathlib import Path


def runs(root: Path, folder: str) -> list[dict]:
    """The submitted runs under `folder` (params leaderboard.submissions, from `root`), each
    {run, variant, test}, `run` from `root`."""
    found = []
    for path in sorted((Path(root) / folder).glob("*/results/params.json")):
        sub = json.loads(path.read_text()).get("submission") or {}
        if sub.get("variant"):
            run = path.parents[1].relative_to(root).as_posix()
            found.append({"run": run, "variant": sub["variant"], "test": sub["test"]})
    return found
