"""How a ``hive`` process the full CLI answers ends (``hive/cli/entry.py`` ``_end``): as
a lean answer ends, output flushed and ``os._exit``, after the ``atexit`` handlers; by
the normal exit when another thread still runs; Ctrl-C ignored once the command has
ended. And how a full-CLI write ends when Ctrl-C lands between its commit and its
answer (``hive/cli/build.py``: the answer stands once the write is committed).

Each process is started with ``python -c SCRIPT`` (the script patches a point of the
command to act there, then runs the console script's ``console()``), or forked from
the tests' warm fork server ending as a process ends (``tests/hivefork.py``)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hive.cli import entry
from tests.conftest import copy_repo, git, script_run
from tests.hivefork import hive_command


def _script_run(script: str, repo: Path, *args: str) -> tuple[int, str, str]:
    """``python -c SCRIPT ARGS`` in ``repo`` (a person's environment, Ctrl-C as a
    terminal leaves it): exit code, stdout, stderr."""
    return script_run(script, repo, *args, timeout=120)


@pytest.fixture
def hived(hive_template: Path, tmp_path: Path) -> Path:
    """An initialised hive no connection of this test process has opened."""
    return copy_repo(hive_template, tmp_path / "repo")


def test_a_full_cli_command_ends_without_the_interpreters_teardown(hived: Path) -> None:
    """``hive stats`` (the full CLI) ends as a lean answer ends: its answer whole, its
    exit code, and no teardown, whose SQLite checkpoint-on-close (four fsyncs) removed
    the state index's WAL; a lean answer leaves it too (the WAL is checkpointed by
    SQLite as it grows)."""
    wal = hived / ".git" / "hive" / "index.sqlite3-wal"
    done = subprocess.run(
        hive_command(["-C", str(hived), "stats"], finalize=True),
        capture_output=True,
        text=True,
        env={**os.environ, "HIVE_AGENT": ""},
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("0 cells")
    assert wal.exists()  # the interpreter's teardown would have closed the index: no WAL


def test_the_servers_keep_the_interpreters_exit() -> None:
    assert entry.KEEPS_TEARDOWN == ("serve", "mcp")


# An exit handler that sends the process Ctrl-C: the command has ended (its answer given),
# so it is ignored; the normal exit printed "Exception ignored in atexit callback" and
# a KeyboardInterrupt traceback.
_CTRL_C_IN_AN_EXIT_HANDLER = """
import atexit, os, signal, sys  # hive.cli.entry
import hive.cli.entry as entry
def pressed():
    os.kill(os.getpid(), signal.SIGINT)
    sys.stdout.write("handler ran\\n")
atexit.register(pressed)
sys.argv = ["hive", *sys.argv[1:]]
entry.console()
"""


@pytest.mark.parametrize("argv", [["stats"], ["show", "hv-nope"]], ids=["answer", "error"])
def test_ctrl_c_as_the_full_cli_ends_is_ignored(hived: Path, argv: list[str]) -> None:
    code, out, err = _script_run(_CTRL_C_IN_AN_EXIT_HANDLER, hived, *argv)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    if argv[0] == "stats":
        assert (code, err) == (0, "")
        assert out.startswith("0 cells") and out.endswith("handler ran\n")
    else:
        assert (code, err) == (3, "error: no cell matches id 'hv-nope'\n")
        assert out == "handler ran\n"


# A thread that is not a daemon still running when the command ends: the interpreter
# waits for it (here it writes a file once the command has ended).
_A_THREAD_STILL_RUNNING = """
import sys, threading, time  # hive.cli.entry
import hive.cli.entry as entry
import hive.cli.main as main
real = main.run
def late_write():
    time.sleep(0.2)
    with open("written-late", "w") as handle:
        handle.write("done")
def run(argv):
    try:
        real(argv)
    finally:
        threading.Thread(target=late_write).start()
main.run = run
sys.argv = ["hive", "stats"]
entry.console()
"""


def test_a_thread_still_running_at_the_end_is_waited_for(hived: Path) -> None:
    code, out, err = _script_run(_A_THREAD_STILL_RUNNING, hived)
    assert (code, err) == (0, ""), out
    assert (hived / "written-late").read_text() == "done"


# A Ctrl-C landing after a full-CLI write committed, before its plain-text answer is
# written (here: on the call that presents it): it was 130 and "interrupted" for a
# comment that was made. (`hive comment` is the full CLI's: no lean path writes it.)
_CTRL_C_AFTER_THE_COMMIT = """
import os, signal, sys  # hive.cli.entry
import hive.cli.entry as entry
import hive.cli.build as build
real = build.show
def show(*args, **options):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **options)
build.show = show
sys.argv = ["hive", *sys.argv[1:]]
entry.console()
"""


def test_ctrl_c_after_a_full_cli_write_commits_ends_it_as_answered(hived: Path) -> None:
    created = subprocess.run(
        hive_command(["-C", str(hived), "--json", "create", "one"]),
        capture_output=True,
        text=True,
        env={**os.environ, "HIVE_AGENT": ""},
        timeout=120,
    )
    cell = json.loads(created.stdout)["id"]
    code, out, err = _script_run(_CTRL_C_AFTER_THE_COMMIT, hived, "comment", cell, "noted")
    assert (code, err) == (0, ""), out
    assert out == f"commented on {cell}  one\n"
    assert git(hived, "log", "-1", "--format=%s").strip() == f"hive: comment {cell} one"


def test_ctrl_c_before_a_full_cli_write_commits_is_an_interrupt(hived: Path) -> None:
    """A read (nothing committed) is interrupted as before."""
    code, out, err = _script_run(_CTRL_C_AFTER_THE_COMMIT, hived, "stats")
    assert (code, out, err) == (130, "", "interrupted\n")


# Output left in standard output's buffer when the command ends, on a full disk: the
# last flush fails (the interpreter's exit said "Exception ignored" and exit 120).
_UNFLUSHED_ON_A_FULL_DISK = """
import sys  # hive.cli.entry
import hive.cli.entry as entry
import hive.cli.main as main
real = main.run
def run(argv):
    try:
        real(argv)
    finally:
        sys.stdout = open("/dev/full", "w")
        sys.stdout.write("left in the buffer")
main.run = run
sys.argv = ["hive", "stats"]
entry.console()
"""


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_last_flush_that_fails_is_an_error_not_a_traceback(hived: Path) -> None:
    code, out, err = _script_run(_UNFLUSHED_ON_A_FULL_DISK, hived)
    assert out.startswith("0 cells")  # the answer, written before
    assert code == 8  # a full disk is no bug of hive's: named, not an internal error
    assert err.startswith("error: a write failed: No space left on device (the disk is full")


# A Ctrl-C whose KeyboardInterrupt Python swallows (here: raised in a ``__del__``, as in
# importlib's module-lock callback) before the command runs, which ends before the
# Ctrl-C is delivered again (here that never comes: ``hive._interrupt_main_soon`` made
# a no-op stands for a thread not scheduled before the end, on a loaded machine): it
# ran on to exit 0.
_CTRL_C_SWALLOWED = """
import sys  # hive.cli.entry
import hive
import hive.cli.entry as entry
hive._interrupt_main_soon = lambda: None
class Dropped:
    def __del__(self):
        raise KeyboardInterrupt
Dropped()
sys.argv = ["hive", *sys.argv[1:]]
entry.console()
"""


@pytest.mark.parametrize(
    ("argv", "answer"),
    [(["list"], "no cells\n"), (["stats"], "0 cells"), (["show", "hv-nope"], "")],
    ids=["lean", "full", "error"],
)
def test_a_swallowed_ctrl_c_ends_the_command_in_130(
    hived: Path, argv: list[str], answer: str
) -> None:
    code, out, err = _script_run(_CTRL_C_SWALLOWED, hived, *argv)
    assert out.startswith(answer)  # the answer was made before the end
    assert code == 130, (out, err)
    assert err.endswith("interrupted\n") and "Traceback" not in err, err
