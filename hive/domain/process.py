"""Running an external command with a timeout that also kills its children."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass


@dataclass(frozen=True)
class CommandRun:
    """What a command did: exit code (None: timed out and killed) and its output."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes


def run_killable(
    command: str | list[str],
    *,
    cwd: str | None,
    timeout: float,
    merge_stderr: bool = False,
    stdin_data: bytes | None = None,
    env: dict[str, str] | None = None,
) -> CommandRun:
    """Run ``command`` (a shell string or an argv list) in its own process group.

    On timeout the whole group is killed, so grandchildren (``sleep`` in a
    script) do not outlive the call. Raises ``OSError`` when it cannot start.
    """
    process = subprocess.Popen(
        command,
        shell=isinstance(command, str),
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
        stdin=subprocess.DEVNULL if stdin_data is None else subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(stdin_data, timeout=timeout)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
    return CommandRun(exit_code=code, stdout=out or b"", stderr=err or b"")
