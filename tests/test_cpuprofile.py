"""tests/cpuprofile.py, the plugin that shows where the suite's CPU time goes: each child
a test starts is counted when reaped, by the kind of work its command line does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import cpuprofile


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (["git", "-C", "repo", "status"], "git"),
        ([sys.executable, "-m", "hive", "list"], "hive"),
        ([sys.executable, "-I", "-S", "/x/tests/hivefork.py", "/sock", "mcp"], "hive"),
        (["/x/.venv/bin/hive", "doctor"], "hive"),
        ([sys.executable, "-m", "pip", "install", "x"], "pip"),
        ([sys.executable, "/x/benchmarks/bench_sync.py", "--runs", "1"], "benchmark"),
        (["/root/.cache/ms-playwright/chromium-1/chrome-linux/headless_shell"], "chromium"),
        (["bash", "-c", "true"], "shell"),
        ([sys.executable, "-c", "pass"], "python"),
        ([], "fork"),
    ],
)
def test_a_childs_kind_is_read_from_its_command_line(args: list[str], kind: str) -> None:
    assert cpuprofile.kind_of(args) == kind


def test_a_reaped_child_is_counted_with_its_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("waitpid", "wait4"):
        monkeypatch.setattr(os, name, getattr(os, name))  # put back after the test
    execute = subprocess.Popen._execute_child  # type: ignore[attr-defined]
    monkeypatch.setattr(subprocess.Popen, "_execute_child", execute)
    monkeypatch.setattr(cpuprofile, "_reaped", [])
    monkeypatch.setattr(cpuprofile, "_installed", cpuprofile._installed)  # as it was after
    cpuprofile._install()  # (done already in a profiled run: once is enough)
    cpuprofile._install()
    spin = "import time\nend = time.process_time() + 0.05\nwhile time.process_time() < end: pass"
    assert subprocess.run(["git", "--version"], capture_output=True, check=False).returncode == 0
    subprocess.run([sys.executable, "-S", "-c", spin], check=True)
    (git_kind, _), (python_kind, seconds) = cpuprofile._reaped
    assert (git_kind, python_kind) == ("git", "python")
    assert seconds >= 0.05


def test_the_table_sums_each_module_by_kind(tmp_path: Path) -> None:
    lines = [
        {"test": "tests/test_a.py::one", "wall": 1.0, "kinds": {"in-process": 1.0, "git": 0.5}},
        {"test": "tests/test_a.py::two", "wall": 1.0, "kinds": {"hypothesis": 2.0}},
        {"test": "tests/test_b.py::one", "wall": 1.0, "kinds": {"git": 0.25}, "counts": {"git": 3}},
    ]
    (tmp_path / "1.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    forked = {"test": "tests/test_b.py::one", "kinds": {"hive-forked": 4.0}}
    (tmp_path / "forked-2.jsonl").write_text(json.dumps(forked) + "\n")
    rows = cpuprofile.table(tmp_path).splitlines()
    assert rows[1].split() == ["ALL", "3", "7.8", "1.0", "2.0", "4.0", "0.8"]
    assert rows[2].split()[:3] == ["tests/test_b.py", "1", "4.2"]  # the costlier first
    assert rows[3].split()[:3] == ["tests/test_a.py", "2", "3.5"]
    assert "git 3" in cpuprofile.table(tmp_path)
