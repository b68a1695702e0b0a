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

``hive_command(args, finalize=True)`` is for a test of how the process ends (a reader
that closes the pipe: tests/test_cli_fits.py, tests/test_cli.py): the child runs what
the console script runs (``hive.cli.entry.console``) on standard streams made as a new
interpreter makes them, and ends as that process ends (``sys.exit`` out of the server's
frames into the interpreter's own finalization: threads joined, ``atexit``, the last
flush of stdout, "Exception ignored" and status 120 when it fails); the server sends
the launcher the exit status it reaped. Checked against ``python -m hive`` with
hive's reader handling broken on purpose: both fail alike.
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
FINALIZE = "--finalize"  # the launcher's first argument: the child ends as a process ends


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


def hive_command(args: list[str], *, finalize: bool = False) -> list[str]:
    """The command line of ``hive ARGS`` (e.g. ``-C REPO mcp``), a forked process.

    ``finalize``: the child runs what the console script runs (``hive.cli.entry.
    console``) and ends as that process ends (``os._exit``, for the full CLI's answer
    after its ``atexit`` handlers; a server's ``sys.exit``: the interpreter waits for
    threads, runs ``atexit``, flushes stdout and stderr); the
    launcher exits with the status the server reaped (by the same signal, if a signal
    ended it). Without it the child runs ``hive.cli.entry.main``, flushes what it can,
    ignoring errors, and ``os._exit``s with its code."""
    launcher = [sys.executable, "-I", "-S", os.path.abspath(__file__), _socket_path()]
    return [*launcher, *([FINALIZE] if finalize else []), *args]


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
    import gc
    import importlib

    for name in WARM:
        importlib.import_module(name)
    sys.modules["hive.agents.example"].preload()  # as hive swarm run does before it forks
    # What the server imported lives as long as any child (the modules, their classes
    # and tables): out of the cyclic collector's sight (gc.freeze), a child's collections
    # do not traverse it, and so do not touch (copy-on-write: copy) every page of the
    # server's heap. A forked `hive tools list` cost ~0.12 s of CPU before, ~0.04 s
    # after; one ending as a process ends (finalize) ~0.47 s, ~0.09 s (a fresh
    # interpreter: ~0.33 s). hive swarm run's forked workers do the same.
    gc.collect()
    gc.freeze()

    exiting: dict[int, socket.socket] = {}  # a child whose exit status its launcher awaits
    profiled: dict[int, dict[str, str]] = {}  # tests/cpuprofile.py: a child's environment

    def reap(signum: int, frame: object) -> None:
        while True:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if not pid:
                return
            if pid in profiled:
                from tests.cpuprofile import forked_child

                forked_child(profiled.pop(pid), usage)
            told = exiting.pop(pid, None)
            if told is not None:
                with told, contextlib.suppress(OSError):
                    told.sendall(f"{os.waitstatus_to_exitcode(status)}\n".encode())

    signal.signal(signal.SIGCHLD, reap)  # reaped (their CPU time counts as children's)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(f"{path}.new")
    listener.listen(64)
    os.rename(f"{path}.new", path)  # there once it accepts
    while True:
        connection, _ = listener.accept()
        request, fds = _receive(connection)
        # SIGCHLD held until a child that exits at once is known to the handler
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGCHLD})
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            listener.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})
            code = _run_child(connection, request, fds)
            if request.get("exit") == "interpreter":
                sys.exit(code)  # ends as a fresh process ends: threads, atexit, flushes
            os._exit(code)
        for fd in fds:
            os.close(fd)
        if os.environ.get("HIVE_TEST_PROFILE"):
            profiled[pid] = dict(request["env"])  # type: ignore[call-overload]
        if request.get("exit") == "interpreter":
            exiting[pid] = connection  # told its exit status when reaped
        else:
            connection.close()
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGCHLD})


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
    if request.get("exit") == "interpreter":
        _interpreters_stdio(env)
    else:
        stdout_buffering = 1 if env.get("PYTHONUNBUFFERED") else -1
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's own until it exits
        sys.stdout = open(1, "w", buffering=stdout_buffering, closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
    os.environ.clear()
    os.environ.update(env)
    os.chdir(str(request["cwd"]))
    sys.argv = ["hive" if module == "hive" else module, *args]
    connection.sendall(f"{os.getpid()}\n".encode())
    if request.get("exit") == "interpreter":  # the server tells the exit status
        if module != "hive":
            return _call_main(module)
        from hive.cli.entry import console

        console()  # as the console script: a lean answer ends the process (os._exit)
        return 0
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


def _interpreters_stdio(env: dict[str, str]) -> None:
    """``sys.stdin``, ``stdout`` and ``stderr`` on descriptors 0, 1 and 2 as a new
    interpreter makes them (CPython's ``create_stdio``): buffered unless
    ``PYTHONUNBUFFERED`` (stdout and stderr then write through), line-buffered at a
    terminal (stderr always), newline ``\n``, named ``<stdin>`` & co., in the
    encoding and error handler the server's interpreter chose for this machine's
    locale (stderr: ``backslashreplace``), or those ``PYTHONIOENCODING`` names."""
    import codecs
    import io
    from typing import Any  # (not at the top: the launcher starts without it)

    buffered = not env.get("PYTHONUNBUFFERED")
    template = sys.__stdout__
    encoding = template.encoding if template else "utf-8"
    errors = template.errors if template else "strict"
    if env.get("PYTHONIOENCODING"):
        named, _, handler = env["PYTHONIOENCODING"].partition(":")
        encoding = codecs.lookup(named).name if named else encoding
        errors = handler or errors  # unnamed, the locale's (as the server's own)
    streams = []
    for number, name in enumerate(("<stdin>", "<stdout>", "<stderr>")):
        writes = number > 0
        unbuffered = writes and not buffered
        mode = "wb" if writes else "rb"
        binary = open(number, mode, buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
        raw: Any = getattr(binary, "raw", binary)
        raw.name = name
        terminal = os.isatty(number)
        stream: Any = io.TextIOWrapper(
            binary,
            encoding=encoding,
            errors="backslashreplace" if number == 2 else errors,
            newline="\n",
            line_buffering=buffered and (terminal or number == 2),
            write_through=not buffered,
        )
        stream.mode = "w" if writes else "r"
        streams.append(stream)
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams  # type: ignore[misc]


# ------------------------------------------------------------------ the launcher


def launch(path: str, args: list[str]) -> int:
    """Hand this process's stdio to a forked ``hive ARGS``; its exit code (with
    ``FINALIZE`` first, its exit status: ended by a signal, this process ends by it)."""
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    request: dict[str, object] = {"env": dict(os.environ), "cwd": os.getcwd()}
    if args[:1] == [FINALIZE]:
        request["exit"], args = "interpreter", args[1:]
    request["args"] = args
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
    code = int(replies.readline().strip() or 1)
    if code < 0:  # the child died by signal -code
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(sys.argv[2])
    else:
        sys.exit(launch(sys.argv[1], sys.argv[2:]))
