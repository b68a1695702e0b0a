"""Running an external command with a timeout that also kills its children."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from dataclasses import dataclass
from typing import IO

# After the command exits, how long its output may still take to reach EOF: longer
# means something it left in the background holds the pipe (``notify &``).
OUTPUT_GRACE_SECONDS = 0.5


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

    The command is done when it exits: its exit code counts, and what it left
    running that still holds its output (``sleep 60 &``) is killed with the group,
    as everything is on timeout, so grandchildren do not outlive the call.
    Raises ``OSError`` when it cannot start.
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
    chunks: dict[str, list[bytes]] = {"stdout": [], "stderr": []}
    workers = [_reader(process.stdout, chunks["stdout"])]
    if process.stderr is not None:
        workers.append(_reader(process.stderr, chunks["stderr"]))
    if process.stdin is not None:
        workers.append(_writer(process.stdin, stdin_data or b""))
    code: int | None
    try:
        code = process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        code = None
    if code is not None:
        for worker in workers:
            worker.join(OUTPUT_GRACE_SECONDS)
    if code is None or any(worker.is_alive() for worker in workers):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    for worker in workers:  # bounded: a process that left the group may hold a pipe still
        worker.join(OUTPUT_GRACE_SECONDS)
    return CommandRun(
        exit_code=code, stdout=b"".join(chunks["stdout"]), stderr=b"".join(chunks["stderr"])
    )


def _reader(stream: IO[bytes] | None, into: list[bytes]) -> threading.Thread:
    assert stream is not None

    def read() -> None:
        with contextlib.suppress(OSError, ValueError):
            while chunk := os.read(stream.fileno(), 65536):
                into.append(chunk)
        with contextlib.suppress(OSError):
            stream.close()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return thread


def _writer(stream: IO[bytes], data: bytes) -> threading.Thread:
    def write() -> None:
        with contextlib.suppress(BrokenPipeError, OSError), stream:
            stream.write(data)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread
