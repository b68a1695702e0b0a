"""``hive`` processes for the tests (``hive mcp``, ``hive serve``, the commands the
browser tests run beside the page), forked from one warm process instead of each
starting a new interpreter (which spends ~1.5 s of CPU importing the MCP SDK,
pydantic and hive before ``hive mcp`` serves, ~0.5 s before ``hive serve`` does,
~0.35 s before a command the lean entry point leaves to the full CLI runs).

``hive_command(args)`` is the command line of ``hive ARGS`` for a test that starts
the process itself (``subprocess.Popen``), ``mcp_server(args, env=...)`` the
``StdioServerParameters`` the official MCP client (``mcp.client.stdio.stdio_client``)
spawns. The command is this file run as a tiny launcher (``python -I -S``: the
standard library only, ~10 ms): it hands its standard input, output and error, its
environment, working directory and the ``hive`` arguments over a Unix socket to the
fork server, a process of this test session that has imported what the servers
import (one per test process; under pytest-xdist one for all the workers, started
by the process that starts them: tests/conftest.py). The fork server forks a
child that takes those three descriptors as its own 0, 1 and 2 and runs ``hive
ARGS`` (the console script's entry point, as ``tests/inprocess.py`` runs it; stderr
line-buffered, stdout too when ``PYTHONUNBUFFERED`` is set, as in a new
interpreter). So each server is a real
process of its own (its own pid, session and state) on real pipes; the launcher
forwards SIGINT, SIGTERM and SIGHUP to it and exits with its exit code. Start-up
and stopping of a freshly executed ``hive mcp`` are tested with real ``hive``
processes (tests/test_mcp_stop.py, the end-to-end test of tests/test_tools.py).

``module_command(module, args)`` is the command line of ``python -m MODULE ARGS`` run
the same way (the module's ``__main__`` code in a forked child): the example agent
(``hive.agents.example``, whose modules and models the server has ready, as ``hive
swarm run`` readies them before it forks a worker) as the ordinary worker of a
tests/test_swarm_run.py run whose agent command is a shell script (which the runner
cannot fork itself): each a process of its own doing what the agent does, without
the ~0.25 s of CPU a fresh interpreter spends importing hive first. A worker the
runner kills (SIGKILL to its process group) is the launcher only: such a worker is
not started this way.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
WARM = (
    "hive.cli.entry",
    "hive.cli.mcp_start",
    "hive.cli.main",
    "hive.tools.mcp_server",
    "hive.serve.runner",
    "hive.agents.example",
)
MODULE = "--module="  # the launcher's first argument for ``python -m MODULE``


# ------------------------------------------------------------------ in the test process

_SERVER: dict[str, object] = {}


def server_path() -> str:
    """Where a fork server's socket goes: a new folder, removed when this process exits."""
    import atexit
    import shutil
    import tempfile

    folder = tempfile.mkdtemp(prefix="hive-fork-")
    atexit.register(shutil.rmtree, folder, True)  # after the server stops (atexit: LIFO)
    return os.path.join(folder, "socket")


def start_server(path: str | None = None) -> str:
    """Start a fork server at ``path`` (a new one when None), stopped when this process
    exits; the path of its socket, which exists once the server accepts (it imports
    for about a second first)."""
    import atexit
    import subprocess

    path = path or server_path()
    started = subprocess.Popen(
        [sys.executable, "-m", "tests.hivefork", "--serve", path],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
    )
    _SERVER.update(path=path, process=started)

    def stop() -> None:
        started.terminate()
        started.wait(timeout=10)

    atexit.register(stop)
    return path


def share_server(path: str) -> None:
    """Use the fork server at ``path``, started by another process of the test session
    (conftest: the process that starts pytest-xdist's workers starts one for all)."""
    _SERVER.update(path=path, process=None)


def _socket_path() -> str:
    """The fork server's socket: a shared one, else this process's, started on first
    use."""
    import subprocess
    import time

    path = _SERVER.get("path")
    process = _SERVER.get("process")
    if not isinstance(path, str) or (
        isinstance(process, subprocess.Popen) and process.poll() is not None
    ):
        path, process = start_server(), _SERVER["process"]
    deadline = time.monotonic() + 120  # a second of imports, many on a loaded machine
    while not os.path.exists(path):
        running = not isinstance(process, subprocess.Popen) or process.poll() is None
        if not running or time.monotonic() > deadline:
            shared = "" if process else " (tests/conftest.py starts it for a module naming it)"
            raise RuntimeError(f"the fork server did not start ({path}){shared}")
        time.sleep(0.01)
    return path


def hive_command(args: list[str]) -> list[str]:
    """The command line of ``hive ARGS`` (e.g. ``-C REPO mcp``), a forked process."""
    return [sys.executable, "-I", "-S", os.path.abspath(__file__), _socket_path(), *args]


def module_command(module: str, args: list[str]) -> list[str]:
    """The command line of ``python -m MODULE ARGS``, a forked process (a module of
    ``WARM``)."""
    return hive_command([f"{MODULE}{module}", *args])


def mcp_server(args: list[str], *, env: dict[str, str] | None = None) -> object:
    """``StdioServerParameters`` for the official MCP client: ``hive ARGS`` served
    by a forked process (``env``: its environment, as the client merges it)."""
    from mcp.client.stdio import StdioServerParameters

    command, *rest = hive_command(args)
    return StdioServerParameters(command=command, args=rest, env=env)


# ------------------------------------------------------------------ the fork server


def serve(path: str) -> None:
    """Accept launch requests on ``path`` until terminated; fork a server for each."""
    import importlib

    for name in WARM:
        importlib.import_module(name)
    sys.modules["hive.agents.example"].preload()  # as hive swarm run does before it forks

    def reap(signum: int, frame: object) -> None:
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return

    signal.signal(signal.SIGCHLD, reap)  # reaped (their CPU time counts as children's)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{path}.new")
    listener.listen(64)
    os.rename(f"{path}.new", path)  # there once it accepts
    while True:
        connection, _ = listener.accept()
        with connection:
            request, fds = _receive(connection)
            if os.fork() == 0:  # pragma: no cover - the child
                listener.close()
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os._exit(_run_child(connection, request, fds))
            for fd in fds:
                os.close(fd)


def _receive(connection: socket.socket) -> tuple[dict[str, object], list[int]]:
    data, fds, _, _ = socket.recv_fds(connection, 1 << 16, 3)
    while not data.endswith(b"\n"):
        more = connection.recv(1 << 16)
        if not more:
            break
        data += more
    return json.loads(data), fds


def _run_child(connection: socket.socket, request: dict[str, object], fds: list[int]) -> int:
    """In the forked child: become ``hive ARGS`` on the launcher's descriptors; report
    the pid, then the exit code."""
    from tests.inprocess import _call_main

    for number, fd in enumerate(fds):
        os.dup2(fd, number)
        os.close(fd)
    env = request["env"]
    args = request["args"]
    assert isinstance(env, dict) and isinstance(args, list)
    module = "hive"  # the console script's entry point
    if args and str(args[0]).startswith(MODULE):
        module, args = str(args[0]).removeprefix(MODULE), args[1:]
    stdout_buffering = 1 if env.get("PYTHONUNBUFFERED") else -1
    sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's own until it exits
    sys.stdout = open(1, "w", buffering=stdout_buffering, closefd=False)  # noqa: SIM115
    sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.chdir(str(request["cwd"]))
    sys.argv = ["hive" if module == "hive" else module, *args]
    connection.sendall(f"{os.getpid()}\n".encode())
    code = 1
    try:
        code = _call_main(module)
    finally:
        with contextlib.suppress(OSError):
            sys.stdout.flush()
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            connection.sendall(f"{code}\n".encode())
    return code


# ------------------------------------------------------------------ the launcher


def launch(path: str, args: list[str]) -> int:
    """Hand this process's stdio to a forked ``hive ARGS``; its exit code."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    request = {"args": args, "env": dict(os.environ), "cwd": os.getcwd()}
    socket.send_fds(connection, [json.dumps(request).encode() + b"\n"], [0, 1, 2])
    quiet = os.open(os.devnull, os.O_RDWR)
    for number in (0, 1, 2):  # the pipes are the server's now: EOF reaches each side
        os.dup2(quiet, number)
    replies = connection.makefile("rb")
    pid = int(replies.readline())

    def forward(signum: int, frame: object) -> None:
        os.kill(pid, signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    code = replies.readline().strip()
    return int(code) if code else 1


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        sys.exit(launch(sys.argv[1], sys.argv[2:]))
