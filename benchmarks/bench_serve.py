"""hive serve benchmark: the board of a 10,000-cell hive.

Usage::

    python benchmarks/bench_serve.py               # prints a table
    python benchmarks/bench_serve.py --write-docs  # also updates docs/performance.md
    python benchmarks/bench_serve.py --runs 1 --cells 20 --commit-runs 1 \
        --source-files 100 --no-browser  # a smoke run

Builds a scratch repository (2,000 source files, 10,000 cells), starts the web
app on loopback (uvicorn in a thread, as ``hive serve`` runs it) and measures
medians of: the board's first page over HTTP (whole HTML), a text search, the
first board request right after a commit made by another process (``hive
update``), and, when a Chromium is installed (and not ``--no-browser``), the
browser loading the board (navigation until the load event) and a change made
through the CLI appearing on an open board without reload.
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests"))

from run import Row, _hive_process, build_repo, median_ms, run_single  # noqa: E402
from serve_sample import find_chromium, launch_args  # noqa: E402

from hive.domain.cells import list_cells  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402
from hive.serve.app import ServeConfig  # noqa: E402
from hive.serve.runner import BackgroundServer  # noqa: E402

SIZE = 10_000
# How long the browser rows wait for a page or a change before giving up: a loaded machine
# (a smoke run in CI beside other jobs) only makes the numbers larger, never a failure
WAIT_MS = 120_000
CARD = re.compile(rb'<a class="card ')


def fetch(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=60) as answer:
        body: bytes = answer.read()
        return body


def measure(base: Path, args: argparse.Namespace) -> list[Row]:
    size, runs = args.cells, args.runs
    commit_runs = max(5, runs // 3) if args.commit_runs is None else args.commit_runs
    repo = build_repo(base, size, args.source_files)
    cells = [c.id for c in list_cells(Workspace(str(repo), actor="bench"), status="open")]
    started = time.perf_counter()
    with BackgroundServer(ServeConfig(root=str(repo))) as server:
        startup = (time.perf_counter() - started) * 1000
        cards = len(CARD.findall(fetch(server.url + "/")))
        board = median_ms(lambda: fetch(server.url + "/"), runs)
        query = f"/?q=cell+{size - 1}"  # the title of the last cell built
        search = median_ms(lambda: fetch(server.url + query), runs)
        after = []
        for number in range(commit_runs):
            _hive_process(repo, "update", cells[number % len(cells)], "--append-notes", "bench")
            after.append(median_ms(lambda: fetch(server.url + "/"), 1))
        first_page = f"board first page, HTTP ({cards:,} cards of {size:,})"
        rows = [
            Row(size, "server start (opens and reads the hive)", startup, None, ""),
            Row(size, first_page, board, None, "< 1000 ms"),
            Row(size, "board text search, HTTP", search, None, "< 1000 ms"),
            Row(
                size,
                "board right after another process's commit",
                statistics.median(after),
                None,
                "< 1000 ms",
            ),
        ]
        if args.no_browser:
            print("--no-browser: browser rows skipped", file=sys.stderr)
        else:
            rows += _browser_rows(server, repo, size, runs, commit_runs)
    return rows


def _browser_rows(
    server: BackgroundServer, repo: Path, size: int, runs: int, commit_runs: int
) -> list[Row]:
    chromium = find_chromium()
    if chromium is None:
        print("no chromium: browser rows skipped", file=sys.stderr)
        return []
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=launch_args())
        page = browser.new_page()
        page.set_default_timeout(WAIT_MS)
        load = median_ms(lambda: page.goto(server.url + "/", wait_until="load"), runs)
        page.wait_for_function("document.body.dataset.live === '1'")
        live = [_live_once(page, repo, number) for number in range(commit_runs)]
        browser.close()
    return [
        Row(size, "browser: board loaded (navigation to load event)", load, None, "< 1000 ms"),
        Row(
            size,
            "browser: CLI commit shown on an open board",
            statistics.median(live),
            None,
            "~1 s",
        ),
    ]


def _live_once(page: Any, repo: Path, number: int) -> float:
    title = f"live bench {number}"
    _hive_process(repo, "create", title, "-p", "0")
    committed = time.perf_counter()
    page.wait_for_selector(f".card >> text={title}")
    return (time.perf_counter() - committed) * 1000


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=int, default=SIZE, help="cells in the repository")
    parser.add_argument(
        "--commit-runs",
        type=int,
        help="commits by another process timed per row (default: runs / 3, at least 5)",
    )
    parser.add_argument("--no-browser", action="store_true", help="skip the browser rows")


if __name__ == "__main__":
    run_single(__doc__ or "", measure, marker="serve", options=options)
