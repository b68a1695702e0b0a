"""Where the suite's CPU time goes: per test, the CPU seconds of the test process and of
every process it started, by kind of work (a pytest plugin, off unless asked for).

    HIVE_TEST_PROFILE=/tmp/prof .venv/bin/python -m pytest -p tests.cpuprofile
    .venv/bin/python -m tests.cpuprofile /tmp/prof > table.txt

Each test process (pytest-xdist worker) writes one line per test to
``$HIVE_TEST_PROFILE/<pid>.jsonl``: its own CPU seconds over the test's setup, call and
teardown (``in-process``; ``hypothesis`` for a property test), and its children's, each
counted when it is reaped (``os.wait4``'s usage: the child and every process it reaped)
and classed by its command line (``git``, ``hive`` for a ``hive``/``python -m hive``
process, ``chromium``, ``pip``, ``shell``, ``python``, ``fork`` for a child forked
without a command). The fork server of tests/hivefork.py appends its children's
(``hive-forked``) under the test named in the environment they were started with
(``PYTEST_CURRENT_TEST``). What else the test process's reaped children spent (reaped
by another call, e.g. Chromium's processes when Playwright's driver ends) is ``other``.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROFILE = "HIVE_TEST_PROFILE"
KINDS = (
    "in-process",
    "hypothesis",
    "hive",
    "hive-forked",
    "git",
    "chromium",
    "pip",
    "benchmark",
    "shell",
    "python",
    "fork",
    "other",
)
_commands: dict[int, list[str]] = {}
_reaped: list[tuple[str, float]] = []
_installed = False


def kind_of(args: list[str]) -> str:
    """The kind of work a child's command line ``args`` does."""
    words = [os.path.basename(str(arg)) for arg in args[:4]]
    text = " ".join(str(arg) for arg in args[:6])
    if not words:
        return "fork"
    if words[0] == "git":
        return "git"
    if "hivefork.py" in text or words[0] == "hive" or " -m hive" in text:
        return "hive"
    if any(name in text for name in ("chrom", "playwright", "node")):
        return "chromium"
    if "pip" in words or " -m pip" in text or " -m venv" in text or "wheel" in text:
        return "pip"
    if "benchmarks/" in text:
        return "benchmark"
    if words[0] in ("sh", "bash", "dash") or text.endswith(".sh"):
        return "shell"
    if words[0].startswith("python"):
        return "python"
    return "other"


def _record(pid: int, usage: Any) -> None:
    if pid > 0:
        args = _commands.pop(pid, [])
        _reaped.append((kind_of(args), usage.ru_utime + usage.ru_stime))


def _install() -> None:
    """Count each child as it is reaped (``os.waitpid`` becomes ``os.wait4``), classed by
    the command ``subprocess.Popen`` started it with (once a process)."""
    global _installed
    if _installed:
        return
    _installed = True
    wait4 = os.wait4

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        found, status, usage = wait4(pid, options)
        _record(found, usage)
        return found, status

    def counted_wait4(pid: int, options: int) -> Any:
        result = wait4(pid, options)
        _record(result[0], result[2])
        return result

    execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def execute_child(self: subprocess.Popen[Any], args: Any, *rest: Any) -> None:
        execute(self, args, *rest)
        listed = [args] if isinstance(args, (str, bytes, os.PathLike)) else list(args)
        _commands[self.pid] = [os.fsdecode(arg) for arg in listed]

    os.waitpid = waitpid
    os.wait4 = counted_wait4
    subprocess.Popen._execute_child = execute_child  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    if os.environ.get(PROFILE):
        _install()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
    folder = os.environ.get(PROFILE)
    if not folder:
        yield
        return
    _reaped.clear()
    started, own, wall = _children_seconds(), time.process_time(), time.monotonic()
    yield
    own = time.process_time() - own
    children = _children_seconds() - started
    kinds: dict[str, float] = defaultdict(float)
    property_test = getattr(getattr(item, "obj", None), "is_hypothesis_test", False)
    kinds["hypothesis" if property_test else "in-process"] += own
    counts: dict[str, int] = defaultdict(int)
    for kind, seconds in _reaped:
        kinds[kind] += seconds
        counts[kind] += 1
    kinds["other"] += max(0.0, children - sum(seconds for _, seconds in _reaped))
    line = {"test": item.nodeid, "wall": time.monotonic() - wall, "kinds": kinds, "counts": counts}
    with open(Path(folder) / f"{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(line) + "\n")


def _children_seconds() -> float:
    """CPU seconds of the children this process has reaped so far (with theirs)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def forked_child(env: dict[str, str], usage: Any) -> None:
    """For the fork server: a child it reaped, counted under the test that started it."""
    folder = os.environ.get(PROFILE)
    if folder:
        test = env.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]
        line = {"test": test, "kinds": {"hive-forked": usage.ru_utime + usage.ru_stime}}
        with open(Path(folder) / f"forked-{os.getpid()}.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


# ------------------------------------------------------------------ the table


def table(folder: Path, top: int = 40) -> str:
    """Per module (slowest first), the CPU seconds of each kind of work; then the tests
    that took the most."""
    modules: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    tests: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    processes: dict[str, int] = defaultdict(int)
    for path in sorted(folder.glob("*.jsonl")):
        for text in path.read_text(encoding="utf-8").splitlines():
            line = json.loads(text)
            module = line["test"].split("::")[0]
            if "wall" in line:
                counts[module] += 1
            for kind, number in line.get("counts", {}).items():
                processes[kind] += number
            for kind, seconds in line["kinds"].items():
                modules[module][kind] += seconds
                tests[line["test"]] += seconds
    totals: dict[str, float] = defaultdict(float)
    for kinds in modules.values():
        for kind, seconds in kinds.items():
            totals[kind] += seconds
    used = [kind for kind in KINDS if totals[kind] >= 0.05]
    header = f"{'module':44} {'tests':>5} {'total':>7} " + " ".join(f"{k[:10]:>10}" for k in used)
    rows = [header]

    def row(name: str, count: int, kinds: dict[str, float]) -> str:
        cells = " ".join(f"{kinds.get(kind, 0.0):10.1f}" for kind in used)
        return f"{name[:44]:44} {count:5} {sum(kinds.values()):7.1f} {cells}"

    rows.append(row("ALL", sum(counts.values()), totals))
    for module, kinds in sorted(modules.items(), key=lambda pair: -sum(pair[1].values())):
        rows.append(row(module, counts[module], kinds))
    started = ", ".join(f"{kind} {number}" for kind, number in sorted(processes.items()))
    rows += ["", f"processes the test processes started and reaped: {started}"]
    rows += ["", f"the {top} tests that took the most CPU seconds:"]
    for test, seconds in sorted(tests.items(), key=lambda pair: -pair[1])[:top]:
        rows.append(f"{seconds:7.2f}  {test}")
    return "\n".join(rows) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table(Path(sys.argv[1])))
