"""What stops a lean answer of the console script (``hive/cli/entry.py``) is worded as
the full CLI words it: an unexpected error is one line and exit 70 (never a
traceback), Ctrl-C is "interrupted" and 130, and tokens before the command are the
full CLI's to judge (``hive --version mcp`` prints the version, it starts no server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive import __version__
from hive.cli import hookrun, mcp_start
from hive.domain.workspace import Workspace
from tests.inprocess import run_hive


def test_an_unexpected_error_of_a_lean_start_is_one_line_and_exit_70(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> int:
        raise PermissionError(13, "Permission denied", "/somewhere")

    monkeypatch.setattr(mcp_start, "serve", broken)  # a fault injected where serving starts
    done = run_hive(["-C", str(repo), "mcp"], env={"HIVE_AGENT": ""}, input="")
    assert done.returncode == 70, done.stderr
    assert done.stderr.startswith("internal error: PermissionError:")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1
    with pytest.raises(PermissionError):  # HIVE_DEBUG: the traceback, as the full CLI
        run_hive(["-C", str(repo), "mcp"], env={"HIVE_AGENT": "", "HIVE_DEBUG": "1"})


def test_an_unexpected_error_of_the_full_cli_is_worded_alike(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hive.cli import main

    def broken(*args: object, **kwargs: object) -> object:
        raise PermissionError(13, "Permission denied", "/somewhere")

    monkeypatch.setattr(main, "focused_app", broken)  # a fault where the command is built
    done = run_hive(["-C", str(repo), "stats"], env={"HIVE_AGENT": ""}, module="hive.cli.main")
    assert done.returncode == 70, done.stderr
    assert done.stderr == (
        "internal error: PermissionError: [Errno 13] Permission denied: '/somewhere'"
        " (set HIVE_DEBUG=1 for details)\n"
    )
    with pytest.raises(PermissionError):
        run_hive(
            ["-C", str(repo), "stats"],
            env={"HIVE_AGENT": "", "HIVE_DEBUG": "1"},
            module="hive.cli.main",
        )


def test_ctrl_c_in_the_hooks_full_check_is_interrupted_not_a_traceback(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def pressed(*args: object, **kwargs: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(hookrun, "hook", pressed)
    agent = {"HIVE_AGENT": "", "HIVE_AGENT_TOKEN": "x"}  # an agent's commit: the full check
    done = run_hive(["-C", str(repo), "hooks", "run", "pre-commit"], env=agent)
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


@pytest.mark.parametrize("command", [["mcp"], ["list"], ["tools", "run"]])
def test_tokens_before_the_command_go_to_the_full_cli(
    ws: Workspace, repo: Path, command: list[str]
) -> None:
    done = run_hive(["-C", str(repo), "--version", *command], env={"HIVE_AGENT": ""}, input="")
    assert (done.returncode, done.stdout) == (0, f"hive {__version__}\n"), done.stderr
