"""Every script in benchmarks/ run end to end as a user runs it, at tiny sizes (a smoke
test): bench_swarm.py and bench_serve.py once crashed for weeks (identity refusals) and
nobody noticed, because nothing ran them. The numbers of a smoke run mean nothing; what is
checked is that each script exits 0, prints every row it should with numbers that parse
(medians positive, the git baseline beside them, ratios that agree with the medians) and
leaves nothing behind: no docs/performance.md write, no scratch directory.

A new script in benchmarks/ needs its entry in SMOKE (and a check of its output below):
``test_every_benchmark_script_has_a_smoke_run`` fails until it has one."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.serve_sample import find_chromium

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
NOT_SCRIPTS = {"results", "__pycache__"}  # bench_process.py's built repositories; bytecode
DOCS = ROOT / "docs" / "performance.md"
TINY = "20"  # cells
# source files in a script's repository (a full run's: 2,000, which cost ~0.3 s of CPU to
# write, add and commit in each of seven scripts; 100 take the same code paths)
FILES = ["--source-files", "100"]

# The command line of each script's smoke run: the smallest sizes and runs it accepts.
SMOKE: dict[str, list[str]] = {
    "run.py": ["--sizes", TINY, "--runs", "1", "--process-runs", "1", *FILES],
    "bench_coord.py": ["--runs", "1", "--cells", TINY, "--agents", "2", "--messages", TINY, *FILES],
    "bench_swarm.py": ["--runs", "1", "--cells", TINY, *FILES],
    "bench_serve.py": ["--runs", "1", "--cells", TINY, "--commit-runs", "1", *FILES],
    "bench_merge.py": [
        "--size",
        TINY,
        *FILES,
        "--commits",
        "3",
        "--cells",
        "1",
        "--runs",
        "1",
        "--agents",
        "1",
    ],
    "bench_parse.py": ["--cells", TINY],
    "bench_process.py": [
        "--sizes",
        TINY,
        "--runs",
        "1",
        "--cold-runs",
        "1",
        "--no-warm-up",
        *FILES,
    ],
    # --no-warm-up (bench_process.py, bench_startup.py): no untimed round before the timed
    # one; a smoke run's numbers mean nothing, and every row still runs its processes once
    "bench_startup.py": ["--runs", "1", "--cells", "2", "--no-warm-up"],
    "bench_sync.py": ["--quick"],  # 20 cells, 1 run, 2 rounds of history, no warm-up
    "bench_index_growth.py": ["--sizes", TINY, "--writes", "4", "--every", "2", *FILES],
}
# the scripts that build their repositories once under --repos (a scratch one here)
BUILT_REPOS = ("bench_process.py", "bench_index_growth.py")
BASELINE = "baseline: git add + git commit"


@pytest.fixture(scope="module")
def scratch() -> Iterator[Path]:
    """One scratch directory for every script of this module: each gets a TMPDIR of its own
    inside (where its scratch repositories go) and must leave it empty. A short path: Chromium
    (bench_serve.py's browser rows) puts a socket in TMPDIR, and a socket's path has at most
    107 bytes (pytest's tmp_path is too deep for it)."""
    base = Path(tempfile.mkdtemp(prefix="hb"))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def docs_before() -> bytes:
    return DOCS.read_bytes()


def run_script(name: str, scratch: Path, *extra: str) -> str:
    """``python benchmarks/NAME`` with its smoke arguments, as a user runs it: the venv's
    Python (whose ``hive`` console script the scripts start), another directory."""
    tmp = scratch / Path(name).stem
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp)}
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / name), *SMOKE[name], *extra],
        cwd=scratch,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"{name} exited {done.returncode}:\n{done.stderr[-4000:]}"
    assert "Traceback" not in done.stderr, done.stderr
    assert list(tmp.iterdir()) == [], f"{name} left its scratch files behind"
    return done.stdout


# ------------------------------------------------------------------------- parsing output


def duration_ms(text: str) -> float:
    """``12.3 ms`` / ``1.23 s`` / ``+26.2 ms`` (an added cost) in milliseconds."""
    found = re.fullmatch(r"\+?(-?\d[\d,]*\.\d+) (ms|s)", text)
    assert found, f"not a duration: {text!r}"
    value = float(found.group(1).replace(",", ""))
    return value * 1000 if found.group(2) == "s" else value


def ratio(text: str) -> float:
    found = re.fullmatch(r"(\d+\.\d\d)x", text)
    assert found, f"not a ratio: {text!r}"
    return float(found.group(1))


def shown_half(text: str) -> float:
    """Half a unit of the last digit ``text`` (a duration) is printed with, in ms:
    0.05 for ``35.5 ms``, 5 for ``1.64 s`` (a loaded machine's tiny run)."""
    found = re.fullmatch(r"\+?-?\d[\d,]*\.(\d+) (ms|s)", text)
    assert found, f"not a duration: {text!r}"
    half = 0.5 * 10.0 ** -len(found.group(1))
    return half * 1000 if found.group(2) == "s" else half


def agrees(
    shown: float,
    numerator: float,
    denominator: float,
    *,
    digits: int = 2,
    halves: tuple[float, float] = (0.05, 0.05),
) -> bool:
    """A ratio printed with ``digits`` decimals can be ``numerator / denominator``, both
    printed with one unless ``halves`` says otherwise (half a unit of each one's last
    digit: every figure a script prints is rounded on its own)."""
    over, under = halves
    low = max(numerator - over, 0.0) / (denominator + under)
    high = (numerator + over) / max(denominator - under, 1e-9)
    slack = 0.5 * 10.0**-digits
    return low - slack <= shown <= high + slack


def table(output: str, header: list[str]) -> list[list[str]]:
    """The rows of the markdown table whose header is ``header``."""
    lines = [line for line in output.splitlines() if line.startswith("|")]
    assert lines[:1] == ["| " + " | ".join(header) + " |"], output
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in lines[2:]]
    assert rows and all(len(row) == len(header) for row in rows), output
    return rows


def check_run_table(
    output: str, size: str, operations: list[str], *, first: str = "cells", tiny: set[str]
) -> None:
    """A table of ``benchmarks/run.py``'s ``render``: the operations in order, each median
    positive (``tiny`` ones, sub-millisecond reads, may round to 0.0 ms), the baseline
    first and every ratio its median over the baseline's."""
    rows = table(output, [first, "operation", "median", "vs git", "target"])
    assert [row[1] for row in rows] == [BASELINE, *operations]
    assert {row[0] for row in rows} == {size}
    baseline = duration_ms(rows[0][2])
    assert baseline > 0
    for _, operation, median, versus, _ in rows[1:]:
        value = duration_ms(median)
        assert value > 0 or (operation in tiny and value == 0), operation
        if versus:
            halves = (shown_half(median), shown_half(rows[0][2]))
            assert agrees(ratio(versus), value, baseline, halves=halves), operation


def check_run(output: str) -> None:
    fresh = "hive ready --json, fresh"
    check_run_table(
        output,
        TINY,
        [
            "create (commit)",
            "update (commit)",
            "close (commit)",
            "ready, in-process warm",
            "ready, in-process, first after a write",
            f"{fresh} process, asked again",
            f"{fresh}, after a CLI write",
            f"{fresh}, right after an MCP-server write",
            "hive update, fresh process (info)",
        ],
        tiny={"ready, in-process warm", "ready, in-process, first after a write"},
    )


def check_coord(output: str) -> None:
    check_run_table(
        output,
        TINY,  # 2 agents, 10 reservations each
        [
            f"reserve (vs {TINY} held, commit)",
            "release (commit)",
            f"send ({TINY} messages in log)",
            f"inbox ({TINY} messages in log)",
            f"send on an epic's thread ({int(TINY) + 7} cells)",
            f"send to coordinator ({int(TINY) + 7} cells)",
        ],
        first="reservations",
        tiny={f"inbox ({TINY} messages in log)"},
    )


def check_swarm(output: str) -> None:
    check_run_table(output, TINY, ["swarm_complete (3 released + outcome)"], tiny=set())


def check_serve(output: str) -> None:
    operations = [
        "server start (opens and reads the hive)",
        # the synthetic cells are open or closed: every one on the first page at 20
        f"board first page, HTTP ({TINY} cards of {TINY})",
        "board text search, HTTP",
        "board right after another process's commit",
    ]
    if find_chromium() is not None:
        operations += [
            "browser: board loaded (navigation to load event)",
            "browser: CLI commit shown on an open board",
        ]
    rows = table(output, ["cells", "operation", "median", "vs git", "target"])
    assert [row[1] for row in rows] == operations  # no git baseline: absolute targets
    for _, _, median, versus, _ in rows:
        assert duration_ms(median) > 0 and versus == ""


def check_merge(output: str) -> None:
    number = r"(\d+\.\d) ms"
    merge = re.search(rf"git merge with hive's driver +{number} +\((\d+\.\d)x baseline\)", output)
    per_cell = re.search(rf"per cell both sides changed +{number}", output)
    baseline = re.search(rf"git add && git commit \(baseline\) +{number}", output)
    by_log = re.search(rf"history search, git log +{number}", output)
    by_reading = re.search(rf"history search, object by object +{number}", output)
    cpu = re.search(rf"CPU per cell \(all processes\) +{number}", output)
    driver = re.search(rf"one driver run, CPU \(with its git\) +{number}", output)
    assert merge and per_cell and baseline and by_log and by_reading, output
    assert cpu and driver and float(cpu.group(1)) > 0 and float(driver.group(1)) > 0, output
    assert "history: 3 hive commits, packed; 1 cells changed on both sides" in output
    merged, git_ms = float(merge.group(1)), float(baseline.group(1))
    assert merged > 0 and git_ms > 0 and float(per_cell.group(1)) == merged  # one cell
    assert agrees(float(merge.group(2)), merged, git_ms, digits=1)
    assert float(by_log.group(1)) > 0 and float(by_reading.group(1)) > 0
    assert "1 agents' reservation files and the context changed on both sides" in output
    for row in (
        r"CPU per file of that git merge \(all processes\)",
        r"one driver run on a reservation file, CPU \(with its git\)",
        r"one driver run on the context, CPU \(with its git\)",
    ):
        found = re.search(rf"{row} +{number}", output)
        assert found and float(found.group(1)) > 0, (row, output)


def check_parse(output: str) -> None:
    assert re.search(rf"^{TINY} cells, mean \d+ bytes, {TINY} in canonical form$", output, re.M)
    medians = []
    for path in ("old: ruamel \\+ pydantic", "new: decode_cell"):
        found = re.search(rf"^{path} +(\d+\.\d) +(\d+\.\d) +(\d+\.\d\d)$", output, re.M)
        assert found, output
        medians.append(float(found.group(1)))
    speed_up = re.search(r"^speed-up \(median\): (\d+\.\d)x$", output, re.M)
    assert speed_up and all(median > 0 for median in medians), output
    assert agrees(float(speed_up.group(1)), medians[0], medians[1], digits=1)


PROCESS_ROWS = [
    "`hive ready --json`, fresh clone",
    "`hive list`, fresh clone",
    "pre-commit hook, fresh clone: added to `git commit` (git: without the hook)",
    "`hive create`",
    "`hive update ID -p 1`",
    "`hive close ID`",
    "`hive reserve PATTERN` (as an agent)",
    "`hive release PATTERN`",
    "`hive mail send`",
    "`hive mail send --thread ID`",
    "`hive ready --json`, first after a write",
    "`hive ready --json`",
    "`hive list`",
    "`hive show ID`",
    "`hive --help`",
    "pre-commit hook: added to `git commit` (git: without the hook)",
    "pre-commit hook, agent: added to `git commit` (git: without the hook)",
    "commit-msg hook, agent: added to `git commit` (git: without the hook)",
    "first command with no index (`hive ready --json`, index deleted)",
    "in-process: create",
    "in-process: reserve",
    "in-process: release",
    "in-process: mail send",
    "in-process: swarm_complete (3 released + outcome)",
]


def check_process(output: str) -> None:
    header = ["cells", "operation", "hive", "git", "vs git (paired)", "hive peak RSS"]
    rows = table(output, [*header, "target", "met"])
    assert [row[1] for row in rows] == PROCESS_ROWS
    for size, operation, hive, git, versus, peak, target, met in rows:
        assert size == TINY
        assert duration_ms(git) > 0, operation  # the paired baseline, on every row
        # 0.00x only where hive took under half a hundredth of git's time (an in-process
        # call beside a git process, which a loaded machine slows most): rounded to 0
        rounds_to_zero = duration_ms(hive) - 0.05 < 0.005 * (duration_ms(git) + 0.05)
        assert ratio(versus) > 0 or rounds_to_zero, operation
        if " hook" in operation and "added to `git commit`" in operation:
            duration_ms(hive)  # what the hook adds: a difference (noise may make it < 0)
        else:
            assert duration_ms(hive) > 0, operation
            # one pair: the ratio is this pair's
            halves = (shown_half(hive), shown_half(git))
            assert agrees(ratio(versus), duration_ms(hive), duration_ms(git), halves=halves), (
                operation
            )
        in_process = operation.startswith("in-process")
        assert (peak == "") == in_process, operation
        if not in_process:
            assert re.fullmatch(r"[1-9]\d* MB", peak), operation
        assert (met in ("yes", "**no**")) == bool(target), operation
    assert "1 pairs per row (1 for the no-index row); the built repository's objects " in output


STARTUP_ROWS = [
    "hive list (lean)",
    "hive show ID (lean)",
    "hive show ID (comments)",
    "hive comment ID TEXT",
    "hive stats",
    "hive blocked",
    "hive log",
    "hive mail inbox",
    "hive doctor",
    "hive show --help",
    "hive --version (lean)",
]


def check_startup(output: str) -> None:
    rows = table(output, ["command", "CPU (user+sys)", "wall"])
    assert [row[0] for row in rows] == STARTUP_ROWS
    for command, cpu, wall in rows:
        assert duration_ms(cpu) > 0, command
        assert duration_ms(wall) > 0, command
    assert "median of 1 fresh processes" in output


def check_sync(output: str) -> None:
    rows = table(output, ["cells", "operation", "hive", "git", "vs git (paired)", "hive CPU"])
    assert [row[1] for row in rows] == [
        "no-op: nothing changed anywhere",
        "one `hive create` in a: a's sync (sends it)",
        "... then b's sync (receives it)",
        "one change on each side, different cells: b's sync after a's",
        "the same cell changed on both sides: b's sync after a's",
        "first sync of a fresh clone",
        "sync that sends one create, after 2 earlier rounds of syncs",
    ]
    for size, operation, hive, git, versus, cpu in rows:
        assert size == TINY and duration_ms(git) > 0 and duration_ms(cpu) > 0, operation
        halves = (shown_half(hive), shown_half(git))  # one pair: the ratio is this pair's
        assert agrees(ratio(versus), duration_ms(hive), duration_ms(git), halves=halves)
    assert "1 pairs per row; git: `git pull --rebase && git push`." in output


GROWTH_TABLES = ["blobs", "dirs", "dependents", "states", "commits", "ready", "ready_done"]


def check_index_growth(output: str) -> None:
    tables = [*GROWTH_TABLES, "ready_delta", "path_rules", "mail_state"]
    header = ["cells", "writes", "file MB", "WAL MB", *tables]
    rows = table(output, [*header, "ready CPU ms (mean)", "ready CPU ms (max)"])
    assert [(row[0], row[1]) for row in rows] == [(TINY, "2"), (TINY, "4")]
    for row in rows:
        counts = [int(value) for value in row[4:14]]
        assert counts[0] >= int(TINY) and all(count >= 0 for count in counts), row
        assert float(row[2]) + float(row[3]) > 0 and 0 < float(row[14]) <= float(row[15]), row


CHECKS: dict[str, Callable[[str], None]] = {
    "run.py": check_run,
    "bench_coord.py": check_coord,
    "bench_swarm.py": check_swarm,
    "bench_serve.py": check_serve,
    "bench_merge.py": check_merge,
    "bench_parse.py": check_parse,
    "bench_process.py": check_process,
    "bench_startup.py": check_startup,
    "bench_sync.py": check_sync,
    "bench_index_growth.py": check_index_growth,
}


def benchmark_scripts() -> Iterator[str]:
    """Every Python file under benchmarks/ (its repositories and bytecode aside)."""
    for folder, folders, files in os.walk(BENCHMARKS):
        folders[:] = [name for name in folders if name not in NOT_SCRIPTS]
        for name in files:
            if name.endswith(".py"):
                yield str((Path(folder) / name).relative_to(BENCHMARKS))


def test_every_benchmark_script_has_a_smoke_run() -> None:
    scripts = set(benchmark_scripts())
    missing = sorted(scripts - set(SMOKE))
    assert not missing, f"benchmarks without a smoke run in {__file__}: {missing}"
    assert set(SMOKE) == scripts == set(CHECKS)


def test_performance_doc_runs_each_script_with_options_it_has() -> None:
    """docs/performance.md gives every script's command, its smoke run among them, and
    names only options the script defines (its own or run.py's ``run_single``'s)."""
    text = DOCS.read_text(encoding="utf-8").replace("\\\n", " ")
    commands = re.findall(r"^\.venv/bin/python benchmarks/(\S+\.py)(.*)$", text, re.M)
    assert {name for name, _ in commands} == set(SMOKE)
    shared = (BENCHMARKS / "run.py").read_text(encoding="utf-8")
    for name, rest in commands:
        source = (BENCHMARKS / name).read_text(encoding="utf-8") + shared
        for option in re.findall(r"--[a-z][a-z-]*", rest):
            assert f'"{option}"' in source, f"{name} has no option {option}"
    for name, arguments in SMOKE.items():
        assert f".venv/bin/python benchmarks/{name} {' '.join(arguments)}" in text, name


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_benchmark_script_runs(name: str, scratch: Path, docs_before: bytes) -> None:
    extra = ["--repos", str(scratch / "process")] if name in BUILT_REPOS else []
    output = run_script(name, scratch, *extra)
    CHECKS[name](output)
    assert DOCS.read_bytes() == docs_before, "a smoke run wrote docs/performance.md"
