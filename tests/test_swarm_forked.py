"""A forked worker (``hive/domain/swarm/forked.py``) ends as the command a shell would
start ends: what it wrote to stderr is in the log even when it is killed, its other
threads are waited for and its exit handlers run, Ctrl-C kills it by SIGINT, a text
exit status is printed and is 1, ``$PWD`` is its folder, a signal the runner ignores
stays ignored; relative program names are left to the shell; a child the system
reaped reads as exit 0, as with ``subprocess``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from hive.domain.swarm.forked import ForkedWorker, forkable, start_forked


def _start(tmp_path: Path, *flags: str) -> tuple[ForkedWorker, Path, Path]:
    report, log, work = tmp_path / "seen.json", tmp_path / "worker.log", tmp_path / "work"
    work.mkdir(exist_ok=True)
    with open(log, "ab") as handle:
        worker = start_forked(
            "tests.swarm_probe",
            [str(report), *flags],
            cwd=str(work),
            env={**os.environ, "PWD": "/not/its/folder"},
            log_fd=handle.fileno(),
        )
    assert worker is not None
    return worker, report, log


def _until(condition: object, what: str) -> None:
    deadline = time.monotonic() + 60  # a state waited for: a minute, as on a loaded machine
    while not condition():  # type: ignore[operator]
        assert time.monotonic() < deadline, what
        time.sleep(0.01)


def test_a_killed_workers_stderr_lines_are_in_its_log(tmp_path: Path) -> None:
    worker, _report, log = _start(tmp_path, "--stderr-hang")
    _until(lambda: "a line on stderr" in log.read_text(), "the stderr line in the log")
    os.killpg(worker.pid, signal.SIGTERM)
    assert worker.wait(timeout=120) == -signal.SIGTERM
    assert "a line on stderr" in log.read_text()


def test_threads_are_waited_for_and_exit_handlers_run(tmp_path: Path) -> None:
    worker, _report, log = _start(tmp_path, "--thread")
    assert worker.wait(timeout=120) == 7
    text = log.read_text()
    assert "thread finished" in text and "exit handler ran" in text, text


def test_ctrl_c_kills_it_by_sigint_with_the_traceback_in_the_log(tmp_path: Path) -> None:
    worker, _report, log = _start(tmp_path, "--interrupt")
    assert worker.wait(timeout=120) == -signal.SIGINT
    assert "KeyboardInterrupt" in log.read_text()


def test_a_text_exit_status_is_printed_and_is_1(tmp_path: Path) -> None:
    worker, _report, log = _start(tmp_path, "--text")
    assert worker.wait(timeout=120) == 1
    assert "a text as exit status" in log.read_text()


def test_pwd_is_its_folder_and_an_ignored_signal_stays_ignored(tmp_path: Path) -> None:
    previous = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # the runner under nohup
    try:
        worker, report, _log = _start(tmp_path)
    finally:
        signal.signal(signal.SIGHUP, previous)
    assert worker.wait(timeout=120) == 7
    seen = json.loads(report.read_text())
    assert seen["pwd"] == str(tmp_path / "work") == seen["cwd"]
    assert seen["sighup"] == str(signal.SIG_IGN)


def test_relative_program_names_are_left_to_the_shell() -> None:
    relative = os.path.relpath(sys.executable)
    assert forkable(f"{relative} -m hive.agents.example x", dict(os.environ)) is None
    folder = os.path.relpath(os.path.dirname(sys.executable))
    name = os.path.basename(sys.executable)
    assert forkable(f"{name} -m hive.agents.example x", {"PATH": folder}) is None
    absolute = {"PATH": os.path.dirname(sys.executable)}
    assert forkable(f"{name} -m hive.agents.example x", absolute) is not None


def test_a_child_the_system_reaped_reads_as_exit_0() -> None:
    child = subprocess.Popen(["true"])
    child.wait()  # reaped: waitpid on its pid now fails
    assert ForkedWorker(child.pid, ["true"]).poll() == 0
