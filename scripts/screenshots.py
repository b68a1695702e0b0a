"""Screenshots of every ``hive serve`` view, for docs/serve.md.

Usage::

    .venv/bin/python scripts/screenshots.py            # writes docs/images/serve-*.png

Builds the sample hive of the tests (tests/serve_sample.py) in a scratch
directory, serves it with --allow-write, and photographs each view in the
system's headless Chromium (Debian's ``chromium``; no browser is downloaded).
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from playwright.sync_api import sync_playwright  # noqa: E402
from serve_sample import build_sample, find_chromium, launch_args  # noqa: E402

from hive.serve.app import ServeConfig  # noqa: E402
from hive.serve.runner import BackgroundServer  # noqa: E402

OUT = ROOT / "docs" / "images"


def main() -> None:
    chromium = find_chromium()
    if chromium is None:
        sys.exit("no chromium found: apt-get install -y chromium (or set HIVE_CHROMIUM)")
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hive-shots-") as scratch:
        sample = build_sample(Path(scratch) / "repo")
        views = {
            "board": "/",
            "board-filtered": "/?type=bug&q=login",
            "epic": f"/epics/{sample.epic}",
            "cell": f"/cells/{sample.subtasks[0]}",
            "reservations": "/reservations",
            "mail": f"/mail?thread={sample.thread}",
            "outcomes": "/outcomes",
        }
        config = ServeConfig(root=str(sample.root), actor="Test User", allow_write=True)
        with BackgroundServer(config) as server, sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=launch_args())
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            for name, path in views.items():
                page.goto(server.url + path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(OUT / f"serve-{name}.png"), full_page=True)
                print(f"docs/images/serve-{name}.png")
            browser.close()


if __name__ == "__main__":
    main()
