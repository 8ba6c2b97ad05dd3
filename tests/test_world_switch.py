"""Both tools track the running world's own package, whichever world it is (dtpe/pipeline.py's
`code`; dvc.yaml templates it from params.yaml's env.world): in a tiny project built in DoorKey,
editing the maze's or SimpleCrossing's code plans nothing in either tool, and editing DoorKey's
plans its models again in both. That builds for minutes (marked slow); the first test reads the
same wiring from both tools' plans in seconds."""

import json
import re
from pathlib import Path

import pytest
from test_pipeline import e2e_params, make_project, planned_rules, run

from dtpe.world import catalog


def edit(project: Path, world: str) -> None:
    """A change to `world`'s own code (its goal's colour)."""
    picture = project / "src/dtpe/world" / world / "picture.py"
    text = picture.read_text()
    assert "# goal" in text, picture
    picture.write_text(text.replace("# goal", "# the goal", 1))


def doorkey_project(path: Path) -> Path:
    raw = e2e_params()
    raw["env"]["world"] = "doorkey"
    raw["data"].update(suite_sizes=[5, 6], suite_layouts=4)
    raw["attention"]["grid_size"] = 6
    raw["explorer"]["max_steps"] = 20
    raw["evaluate"]["contexts"] = [raw["model"]["context"]]  # as params-doorkey.yaml
    return make_project(path, raw)


def worlds_read(paths) -> set:
    """The world packages among `paths`: files in src/dtpe/world/<name>/, or the folder."""
    found = (re.search(r"src/dtpe/world/(\w+)(/|$)", str(p).strip()) for p in paths)
    return {m.group(1) for m in found if m}


def test_a_models_steps_read_the_running_worlds_package_alone_in_both_plans(tmp_path):
    """In a DoorKey project, the training job Snakemake plans and the training stage DVC resolves
    from dvc.yaml's ${env.world} both read DoorKey's package and no other world's."""
    from dvc.repo import Repo

    project = doorkey_project(tmp_path / "project")
    plan = run(project, "snakemake", "-n", "--cores", "1", "models/rope_s1").stdout
    block = plan[plan.index("rule train:") :]
    inputs = block[block.index("input:") : block.index("\n", block.index("input:"))]
    assert worlds_read(inputs.split(", ")) == {"doorkey"}
    with Repo(str(project)) as repo:
        stage = next(s for s in repo.index.stages if s.name == "train@rope-1")
        assert worlds_read(d.def_path for d in stage.deps) == {"doorkey"}
    assert {"maze", "crossing"} <= set(catalog.names())  # there were others to leave out


@pytest.mark.slow
def test_switching_the_world_tracks_its_package_in_both_tools(tmp_path):
    project = doorkey_project(tmp_path / "project")
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
