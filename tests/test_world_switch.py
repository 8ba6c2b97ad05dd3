"""Both tools track the running world's own package, whichever world it is (dtpe/pipeline.py's
`code`; dvc.yaml templates it from params.yaml's env.world): in a tiny project built in DoorKey,
editing the maze's or SimpleCrossing's code plans nothing in either tool, and editing DoorKey's
plans its models again in both."""

import json
from pathlib import Path

import pytest
from test_pipeline import e2e_params, make_project, planned_rules, run

pytestmark = pytest.mark.slow


def edit(project: Path, world: str) -> None:
    """A change to `world`'s own code (its goal's colour)."""
    picture = project / "src/dtpe/world" / world / "picture.py"
    text = picture.read_text()
    assert "# goal" in text, picture
    picture.write_text(text.replace("# goal", "# the goal", 1))


def test_switching_the_world_tracks_its_package_in_both_tools(tmp_path):
    raw = e2e_params()
    raw["env"]["world"] = "doorkey"
    raw["data"].update(suite_sizes=[5, 6], suite_layouts=4)
    raw["attention"]["grid_size"] = 6
    raw["explorer"]["max_steps"] = 20
    raw["evaluate"]["contexts"] = [raw["model"]["context"]]  # as params-doorkey.yaml
    project = make_project(tmp_path / "project", raw)
    run(project, "dvc", "repro", "-q")
    run(project, "snakemake", "--touch", "--forceall", "--cores", "1")
    assert (project / "figures/fig1_doorkey.png").is_file()
    assert planned_rules(project) == set()
    assert json.loads(run(project, "dvc", "status", "--json").stdout) == {}

    for other in ("maze", "crossing"):
        edit(project, other)
    assert planned_rules(project) == set()
    assert json.loads(run(project, "dvc", "status", "--json").stdout) == {}

    edit(project, "doorkey")
    assert {"data", "train", "evaluate", "figures"} <= planned_rules(project)
    changed = set(json.loads(run(project, "dvc", "status", "--json").stdout))
    assert {"data", "train@learned-1", "train@rope-1", "figures"} <= changed, changed
