"""Renders a report's first screen in headless Chromium: the report's Markdown as HTML
(markdown-it-py, with GitHub's tables) written beside it, so that its figure links resolve, and a
screenshot of the first WINDOW of it. Makes docs/report-first-screen.png, the README's picture
of a report:

    python scripts/report_picture.py runs/tmaze/figures/REPORT.md docs/report-first-screen.png
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
from pathlib import Path

from markdown_it import MarkdownIt

WINDOW = {"width": 1280, "height": 1400}
STYLE = (
    "body{font:15px/1.45 sans-serif;max-width:1180px;margin:24px auto;color:#1f2328}"
    "img{max-width:100%}table{border-collapse:collapse;font-size:13px}"
    "td,th{border:1px solid #d0d7de;padding:2px 8px}"
)


def html(report: Path) -> str:
    body = MarkdownIt("commonmark").enable("table").render(report.read_text())
    return f"<!doctype html><meta charset=utf-8><style>{STYLE}</style>{body}"


def shoot(report: Path, out: Path) -> dict:
    """Writes the screenshot to `out`; returns what the browser measured: the headline image's
    natural width (0: not loaded) and the top of the Question and Answer paragraphs (px)."""
    from playwright.sync_api import sync_playwright

    browser_path = shutil.which("chromium")
    if browser_path is None:
        raise SystemExit("no `chromium` on PATH: install Debian's chromium package")
    with tempfile.NamedTemporaryFile("w", suffix=".html", dir=report.parent) as page_file:
        page_file.write(html(report))
        page_file.flush()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=browser_path)
            page = browser.new_page(viewport=WINDOW)
            page.goto(Path(page_file.name).as_uri())
            page.wait_for_load_state("load")
            measured = page.evaluate(
                """() => {
                const top = (word) => [...document.querySelectorAll('p')]
                    .find(p => p.textContent.startsWith(word)).getBoundingClientRect().top;
                const img = document.querySelector('img[src="headline.png"]');
                return {headline: img ? img.naturalWidth : 0,
                        question: top('Question.'), answer: top('Answer.')};
            }"""
            )
            page.screenshot(path=str(out))
            browser.close()
    return measured


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="a run's figures/REPORT.md")
    parser.add_argument("out", type=Path, help="the PNG to write")
    args = parser.parse_args()
    print(shoot(args.report, args.out))


if __name__ == "__main__":
    main()
