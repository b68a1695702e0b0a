"""Starting one of hive's own Python agents as a forked worker process.

An agent command that is nothing but ``PYTHON -m hive.agents.NAME ARGS...``, with
``PYTHON`` the interpreter the runner itself runs on (by path, or by a name the
worker's ``PATH`` resolves to it), needs no shell and no new interpreter: the
runner imports the agent module once (and whatever its ``preload()`` imports)
and forks a child per worker that calls the module's ``main(args)``. The child
is a process of its own exactly as the started command would be: a new session
and process group (``os.setsid``), the worker's environment and working
directory, stdin from ``/dev/null``, stdout and stderr to the worker's log, none
of the runner's other files (each inherited descriptor is pointed at
``/dev/null``: no lock or pipe of the runner is held by a worker), default signal
handlers, and its exit code or signal as the command's. What it saves is the
interpreter start-up and hive's imports: ~0.3-0.4 s of CPU per worker.

Any other command (shell syntax, another interpreter, interpreter options, a
module outside ``hive.agents``), and every command on a system without
``fork`` and ``/proc/self/fd``, is started by the shell as written.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import NoReturn

AGENT_MODULE = re.compile(r"hive\.agents\.[a-z_][a-z0-9_]*")
# a command of plain words: unquoted characters the shell gives no meaning to, or
# single-quoted text (what shlex.quote writes), separated by blanks
_WORD = r"(?:[A-Za-z0-9_./:=@%+,-]|'[^']*')+"
_PLAIN_COMMAND = re.compile(rf"[ \t]*{_WORD}(?:[ \t]+{_WORD})*[ \t]*")
_DEFAULT_SIGNALS = ("SIGTERM", "SIGHUP", "SIGQUIT", "SIGCHLD", "SIGALRM", "SIGUSR1", "SIGUSR2")


def forkable(command: str, env: Mapping[str, str]) -> tuple[str, list[str]] | None:
    """``(module, args)`` when ``command`` runs one of hive's agents on this very
    interpreter with no shell syntax; else None (the shell starts it)."""
    if not hasattr(os, "fork") or not os.path.isdir("/proc/self/fd"):
        return None
    if _PLAIN_COMMAND.fullmatch(command) is None:
        return None
    words = shlex.split(command)
    if len(words) < 3 or words[1] != "-m" or AGENT_MODULE.fullmatch(words[2]) is None:
        return None
    program = words[0]
    if "/" not in program:
        program = shutil.which(program, path=env.get("PATH", os.defpath)) or ""
    if os.path.abspath(program) != sys.executable:
        return None
    return words[2], words[3:]


class ForkedWorker:
    """A forked worker, watched as a ``subprocess.Popen`` is: ``pid``, ``poll()``,
    ``wait(timeout)``, ``returncode`` (negative: killed by that signal)."""

    def __init__(self, pid: int, args: list[str]) -> None:
        self.pid = pid
        self.args = args
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0.0)
            time.sleep(0.01)
        assert self.returncode is not None
        return self.returncode


def start_forked(
    module_name: str, args: list[str], *, cwd: str, env: Mapping[str, str], log_fd: int
) -> ForkedWorker | None:
    """Fork a worker that runs ``module_name``'s ``main(args)`` (see the module doc);
    None if the module cannot be loaded here (the shell then runs the command and its
    log says why)."""
    try:
        module = _loaded(module_name)
    except Exception:
        return None
    main = getattr(module, "main", None)
    if not callable(main):
        return None
    ready_r, ready_w = os.pipe()
    freeze = gc.get_freeze_count() == 0  # (a process that froze its objects keeps them so)
    if freeze:
        gc.freeze()  # the child's collector leaves the runner's objects alone: fewer copies
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            os.close(ready_r)
            _child(module, main, args, cwd, env, log_fd, ready_w)
    finally:
        if freeze:
            gc.unfreeze()
    os.close(ready_w)
    try:
        os.read(ready_r, 1)  # its own session exists: its group can be signalled
    finally:
        os.close(ready_r)
    return ForkedWorker(pid, [sys.executable, "-m", module_name, *args])


def _loaded(module_name: str) -> ModuleType:
    already = module_name in sys.modules
    module = importlib.import_module(module_name)
    preload = getattr(module, "preload", None)
    if not already and callable(preload):
        preload()
    return module


def _child(
    module: ModuleType,
    main: Callable[[list[str]], object],
    args: list[str],
    cwd: str,
    env: Mapping[str, str],
    log_fd: int,
    ready_fd: int,
) -> NoReturn:  # pragma: no cover - runs in the forked child
    code = 1
    try:
        os.setsid()
        _own_files(log_fd, ready_fd)
        _default_signals()
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", closefd=False
        )
        sys.argv = [str(getattr(module, "__file__", module.__name__)), *args]
        try:
            returned = main(list(args))
            code = returned if isinstance(returned, int) else 0
        except SystemExit as exc:
            if exc.code is None or isinstance(exc.code, int):
                code = exc.code or 0
            else:
                print(exc.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            code = 128 + signal.SIGINT
        except BaseException:
            traceback.print_exc()
            code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(code)


def _own_files(log_fd: int, ready_fd: int) -> None:
    """stdin /dev/null, stdout and stderr the log; every other descriptor inherited
    from the runner pointed at /dev/null (its number stays taken, so a runner object
    that still refers to it can never close a file of the worker's)."""
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(log_fd, 1)
    os.dup2(log_fd, 2)
    os.write(ready_fd, b"1")
    for name in os.listdir("/proc/self/fd"):
        number = int(name)
        if number > 2 and number != null:
            with contextlib.suppress(OSError):
                os.dup2(null, number)
    os.close(null)


def _default_signals() -> None:
    """The handlers a new interpreter starts with, not the runner's."""
    signal.set_wakeup_fd(-1)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    for name in _DEFAULT_SIGNALS:
        signum = getattr(signal, name, None)
        if signum is not None:
            signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
