"""hive benchmarks: medians, and ratios against ``git add && git commit`` measured in the same run.

Usage::

    python benchmarks/run.py                 # 1,000 and 10,000 cells, prints a table
    python benchmarks/run.py --sizes 1000    # just one size
    python benchmarks/run.py --write-docs    # also rewrite docs/performance.md
    python benchmarks/run.py --sizes 20 --runs 1 --process-runs 1  # a smoke run (seconds)

Each size builds a scratch repository with 2,000 source files plus N cells
(sharded under .hive/cells/), then measures, on the same repository:

* baseline: ``git add <file> && git commit`` of a one-file change (the git CLI);
* hive create / update / close of one cell, in-process, each one commit;
* ``ready`` in-process, warm (the process has read the hive before);
* ``hive ready --json`` as a fresh process (Python start-up included): asked
  again with nothing changed, right after a ``hive update`` process, and right
  after a write made in-process (as the MCP server makes them);
* ``hive update`` as a fresh process, for information.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hive.domain.cells import close_cell, create_cell, ready, update_cell  # noqa: E402
from hive.domain.setup import init_hive  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402
from hive.git.repo import Change, Plan  # noqa: E402
from hive.models import Cell, utc_now  # noqa: E402
from hive.store.cells import encode_cell  # noqa: E402
from hive.store.ids import new_root_id  # noqa: E402
from hive.store.layout import cell_path  # noqa: E402

SOURCE_FILES = 2000
SOURCE_FILES_HELP = f"committed source files in the repository (default {SOURCE_FILES:,})"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


@dataclass
class Row:
    size: int
    operation: str
    median_ms: float
    baseline_ms: float | None
    target: str

    @property
    def ratio(self) -> float | None:
        return None if self.baseline_ms is None else self.median_ms / self.baseline_ms


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-C", str(repo), *args],
        check=True,
        capture_output=True,
        env={**os.environ, **GIT_ENV},
    )


def git_baseline_ms(repo: Path, runs: int) -> float:
    """Median of ``git add <file> && git commit`` of a one-file change (the baseline)."""
    counter = iter(range(10**6, 10**7))

    def git_change() -> None:
        path = repo / "src" / "pkg00" / "mod0.py"
        path.write_text(f"VALUE = {next(counter)}\n")
        git(repo, "add", str(path))
        git(repo, "commit", "-q", "-m", "baseline")

    return median_ms(git_change, runs)


def median_ms(action: Callable[[], object], runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def build_repo(base: Path, cells: int, source_files: int = SOURCE_FILES) -> Path:
    """``source_files`` (2,000) committed source files plus ``cells`` cells committed in
    one hive commit."""
    repo = base / f"repo-{cells}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for number in range(source_files):
        package = repo / "src" / f"pkg{number % 40:02d}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{number}.py").write_text(f"VALUE = {number}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "source files")
    ws = Workspace(str(repo), actor="bench")
    init_hive(ws, prefix="bn")
    _bulk_cells(ws, cells)
    return repo


def synthetic_cells(count: int, prefix: str = "bn", author: str = "bench") -> list[Cell]:
    """``count`` benchmark cells with fresh root ids (every third closed, priorities cycling)."""
    taken: set[str] = set()
    now = utc_now()
    cells = []
    for number in range(count):
        cell_id = new_root_id(prefix, 6, taken.__contains__)
        taken.add(cell_id)
        cells.append(
            Cell(
                id=cell_id,
                title=f"benchmark cell {number}",
                description=f"Synthetic cell number {number}.\nSecond line.",
                priority=number % 5,
                status="closed" if number % 3 == 0 else "open",
                labels=["bench"],
                created_at=now,
                updated_at=now,
                created_by=author,
            )
        )
    return cells


def _bulk_cells(ws: Workspace, count: int) -> None:
    changes = [Change(cell_path(cell.id), encode_cell(cell)) for cell in synthetic_cells(count)]

    def plan(snap: object) -> Plan:
        return Plan(changes=changes, message=f"bench: {count} cells\n\nHive-Event: import\n")

    ws.git.transact(plan, author=ws.identity())


def measure_size(
    base: Path,
    size: int,
    runs: int,
    process_runs: int | None = None,
    source_files: int = SOURCE_FILES,
) -> list[Row]:
    repo = build_repo(base, size, source_files)
    baseline = git_baseline_ms(repo, runs)
    ws = Workspace(str(repo), actor="bench")
    created: list[str] = []
    create = median_ms(lambda: created.append(create_cell(ws, title="bench create").id), runs)
    targets = iter(created)
    update = median_ms(lambda: update_cell(ws, cell_id=next(targets), priority=1), runs)
    targets = iter(created)
    close = median_ms(lambda: close_cell(ws, cell_id=next(targets), reason="bench"), runs)
    ready(ws)
    warm = median_ms(lambda: ready(ws), runs)
    after_write = _after_each(lambda: _library_write(ws, created), lambda: ready(ws), runs)
    fresh_runs = max(5, runs // 2) if process_runs is None else process_runs
    fresh_ready = lambda: _hive_process(repo, "ready", "--json")  # noqa: E731
    ready_cli = median_ms(fresh_ready, fresh_runs)
    after_cli_write = _after_each(lambda: _cli_write(repo, created), fresh_ready, fresh_runs)
    after_library_write = _after_each(lambda: _library_write(ws, created), fresh_ready, fresh_runs)
    cli_write = median_ms(lambda: _cli_write(repo, created), fresh_runs)
    fresh = "<= 400 ms"
    return [
        Row(size, "baseline: git add + git commit", baseline, None, ""),
        Row(size, "create (commit)", create, baseline, "<= 0.5x"),
        Row(size, "update (commit)", update, baseline, "<= 0.5x"),
        Row(size, "close (commit)", close, baseline, "<= 0.5x"),
        Row(size, "ready, in-process warm", warm, None, "<= 30 ms"),
        Row(size, "ready, in-process, first after a write", after_write, None, "<= 30 ms"),
        Row(size, "hive ready --json, fresh process, asked again", ready_cli, None, fresh),
        Row(size, "hive ready --json, fresh, after a CLI write", after_cli_write, None, fresh),
        Row(
            size,
            "hive ready --json, fresh, right after an MCP-server write",
            after_library_write,
            None,
            fresh,
        ),
        Row(size, "hive update, fresh process (info)", cli_write, baseline, ""),
    ]


def _hive_process(repo: Path, *args: str) -> None:
    hive = shutil.which("hive", path=str(Path(sys.executable).parent)) or "hive"
    subprocess.run([hive, "-C", str(repo), *args], check=True, capture_output=True)


def _cli_write(repo: Path, cells: list[str]) -> None:
    _hive_process(repo, "update", cells[0], "--append-notes", "benchmark note")


def _library_write(ws: Workspace, cells: list[str]) -> None:
    update_cell(ws, cell_id=cells[0], append_notes="benchmark note")


def _after_each(write: Callable[[], object], action: Callable[[], object], runs: int) -> float:
    """Median time of ``action`` right after each (untimed) ``write``."""
    samples = []
    for _ in range(runs):
        write()
        samples.append(median_ms(action, 1))
    return statistics.median(samples)


def render(rows: list[Row], first_column: str = "cells") -> str:
    lines = [
        f"| {first_column} | operation | median | vs git | target |",
        "|---:|---|---:|---:|---|",
    ]
    for row in rows:
        ratio = f"{row.ratio:.2f}x" if row.ratio is not None else ""
        lines.append(
            f"| {row.size:,} | {row.operation} | {row.median_ms:.1f} ms | {ratio} | {row.target} |"
        )
    return "\n".join(lines)


def machine() -> str:
    system = f"{platform.system()} {platform.machine()}"
    return f"{system}, {os.cpu_count()} cores, Python {platform.python_version()}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=21, help="runs per row (default 21)")
    parser.add_argument(
        "--process-runs",
        type=int,
        help="fresh processes per fresh-process row (default: runs / 2, at least 5)",
    )
    parser.add_argument("--source-files", type=int, default=SOURCE_FILES, help=SOURCE_FILES_HELP)
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    base = Path(tempfile.mkdtemp(prefix="hive-bench-"))
    try:
        rows: list[Row] = []
        for size in args.sizes:
            files = args.source_files
            print(f"building {size:,} cells + {files:,} source files ...", file=sys.stderr)
            rows += measure_size(base, size, args.runs, args.process_runs, files)
        table = render(rows)
        print(table)
        if args.write_docs:
            write_docs(table)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def run_single(
    doc: str,
    measure: Callable[[Path, argparse.Namespace], list[Row]],
    *,
    marker: str,
    first_column: str = "cells",
    options: Callable[[argparse.ArgumentParser], object] | None = None,
) -> None:
    """Command line of a one-repository benchmark: --runs, --source-files, --write-docs and
    the script's own ``options`` (its sizes, so that a smoke run can be tiny); prints the
    table."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--runs", type=int, default=21, help="runs per row (default 21)")
    parser.add_argument("--source-files", type=int, default=SOURCE_FILES, help=SOURCE_FILES_HELP)
    parser.add_argument("--write-docs", action="store_true")
    if options is not None:
        options(parser)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix=f"hive-bench-{marker}-") as base:
        rows = measure(Path(base), args)
    table = render(rows, first_column=first_column)
    print(table)
    if args.write_docs:
        write_docs(table, marker=marker)


def write_docs(table: str, marker: str = "bench") -> None:
    """Replace the ``<!-- marker:start -->`` block of docs/performance.md with ``table``."""
    path = ROOT / "docs" / "performance.md"
    text = path.read_text() if path.exists() else "# Performance\n"
    start, end = f"<!-- {marker}:start -->", f"<!-- {marker}:end -->"
    block = f"{start}\nMeasured {time.strftime('%Y-%m-%d')} on {machine()}.\n\n{table}\n{end}"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        text = head + block + rest.split(end, 1)[1]
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    path.write_text(text)


if __name__ == "__main__":
    main()
