"""Every committed report reads at a glance (issue 75): its first screen holds the run's
question, its answer and its headline figure; it stays under MAX_LINES; no figure of its run is
wider than panels.MAX_PIXELS; and a variant has one colour whatever run draws it."""

import importlib.util
from pathlib import Path

import pytest
from PIL import Image

from dtpe.analysis import palette, panels
from dtpe.analysis.outputs import HEADLINE

ROOT = Path(__file__).resolve().parents[1]
REPORTS = sorted([ROOT / "figures" / "REPORT.md", *ROOT.glob("runs/*/figures/REPORT.md")])
SCREEN = 60
"""lines of Markdown a first screen holds"""
MAX_LINES = 1000


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.parent.name)
def test_a_report_opens_with_its_question_answer_and_headline(path):
    lines = path.read_text().splitlines()
    screen = "\n".join(lines[:SCREEN])
    assert "**Question.**" in screen and "**Answer.**" in screen, path
    assert f"]({HEADLINE}.png)" in screen and "| Variant " in screen, path
    assert screen.index("**Answer.**") < screen.index(f"{HEADLINE}.png")
    assert len(lines) < MAX_LINES, f"{path}: {len(lines)} lines"


@pytest.mark.parametrize("path", REPORTS, ids=lambda p: p.parent.parent.name)
def test_no_figure_of_a_run_is_wider_than_the_bound(path):
    wide = {
        png.name: Image.open(png).size[0]
        for png in path.parent.glob("*.png")
        if Image.open(png).size[0] > panels.MAX_PIXELS
    }
    assert not wide, f"{path.parent}: {wide}"


def test_a_variant_has_one_colour_in_every_run():
    many = ["rope", "learned", "fire", "rope-t_tpe", "rope+yarn", "nope", "xpos+ntk"]
    alone = {v: palette.colours([v])[v] for v in many}
    assert palette.colours(many) == alone
    assert palette.colours(list(reversed(many))) == alone
    assert alone["rope+yarn"] == alone["rope"] and palette.line_style("rope+yarn") != "-"
    assert len({alone[v] for v in ("rope", "learned", "fire", "rope-t_tpe", "nope")}) == 5


def test_an_encoding_added_later_moves_no_committed_colour(monkeypatch):
    """A new encoding (a submission's) takes a colour after the committed runs' encodings: p-RoPE,
    registered after the figures were drawn, sorts between nope and rope yet moves neither."""
    from dtpe.model import catalog

    committed = {v: palette.colours([v])[v] for v in ("nope", "rope", "sinusoidal", "t5")}
    registered = catalog.encodings()
    more = {**registered, "k": registered["k"] | {"aaa", "roper"}}
    monkeypatch.setattr(catalog, "encodings", lambda: more)
    assert {v: palette.colours([v])[v] for v in committed} == committed
    assert palette.colours(["prope"])["prope"] not in committed.values()


def test_the_first_screen_renders_in_a_browser(tmp_path):
    """The T-Maze report as HTML in headless Chromium (scripts/report_picture.py, which made the
    README's picture): its headline figure loads and its question and answer are in the first
    window."""
    from test_explorer import chromium

    chromium()
    spec = importlib.util.spec_from_file_location("pic", ROOT / "scripts/report_picture.py")
    picture = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(picture)
    measured = picture.shoot(ROOT / "runs/tmaze/figures/REPORT.md", tmp_path / "screen.png")
    assert measured["headline"] > 0
    assert 0 < measured["question"] < measured["answer"] < picture.WINDOW["height"]
    assert Image.open(tmp_path / "screen.png").size == tuple(picture.WINDOW.values())
