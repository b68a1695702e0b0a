"""The CPU time of the work a test times, for a claim about how much work something takes
("the board's first page loads in under a second"): on a loaded machine (CI beside other
jobs, two shared cores) the wall-clock time of the same work is mostly time spent waiting
for a core, and a limit on it fails for reasons that are not the code's. CPU time counts
the work itself, and on an otherwise idle machine the work does not finish sooner than
the CPU time it takes (on one core; more than one working at once only counts more), so a
limit on it holds the code to the wall-clock target it states.

``cpu_clock(pid)`` counts a process and every process it started (live or ended:
Linux adds an ended child's time to its parent's once the parent reaps it);
``run_counted(args)`` runs a command to its end and returns its CPU time with its result.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, CPU ticks of the process and of the children it reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as file:
            text = file.read()
    except OSError:  # ended meanwhile (its parent counts it once it reaps it)
        return None
    fields = text[text.rindex(b")") + 2 :].split()  # after "pid (command)"
    # fields[0] is the state: ppid is field 4 of proc(5), utime..cstime fields 14-17
    return int(fields[1]), sum(int(value) for value in fields[11:15])


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds of process ``root`` and of all its descendants, each with the ended
    children it reaped."""
    stats: dict[int, tuple[int, int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            found = _stat(int(name))
            if found is not None:
                stats[int(name)] = found
    children: dict[int, list[int]] = {}
    for pid, (parent, _) in stats.items():
        children.setdefault(parent, []).append(pid)
    ticks, todo = 0, [root]
    while todo:
        pid = todo.pop()
        if pid in stats:
            ticks += stats[pid][1]
            todo.extend(children.get(pid, []))
    return ticks / TICKS


def cpu_clock(root: int | None = None) -> Callable[[], float]:
    """A stopwatch of CPU time: the CPU seconds process ``root`` (this one when None) and
    its descendants spent from now to each call."""
    pid = os.getpid() if root is None else root
    started = tree_cpu_seconds(pid)
    return lambda: tree_cpu_seconds(pid) - started


def run_counted(
    args: Sequence[str], *, timeout: float = 600, **options: Any
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run ``args`` to its end (output captured as text): its result and the CPU seconds
    it and the processes it waited for took (``os.wait4``)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        process = subprocess.Popen(list(args), stdout=out, stderr=err, **options)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(process.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                process.kill()
                process.wait()
                raise subprocess.TimeoutExpired(list(args), timeout)
            time.sleep(0.005)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        result = subprocess.CompletedProcess(
            list(args), process.returncode, out.read().decode(), err.read().decode()
        )
    return result, usage.ru_utime + usage.ru_stime
