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

import atexit
import contextlib
import gc
import importlib
import io
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
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
# held back from the moment of the fork until the child has its own handlers (a Ctrl-C
# in between would run the runner's code in the child)
_HELD_AT_FORK = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}


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
    if not os.path.isabs(program) or program != sys.executable:
        return None  # a relative name resolves against the worker's folder: the shell's
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
            try:
                pid, status = os.waitpid(self.pid, os.WNOHANG)
            except ChildProcessError:  # reaped by the system (SIGCHLD ignored): as Popen
                self.returncode = 0
                return 0
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
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_AT_FORK)
    try:
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child
            try:
                os.close(ready_r)
                _child(module, main, args, cwd, env, log_fd, ready_w)
            finally:
                os._exit(1)
    except OSError:
        os.close(ready_r)
        os.close(ready_w)
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
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
        atexit._clear()  # the runner's exit handlers are not the worker's
        os.setsid()
        _own_files(log_fd, ready_fd)
        _default_signals()
        os.chdir(cwd)
        os.environ.clear()
        os.environ.update(env)
        os.environ["PWD"] = cwd  # as the shell that would have started it sets it
        _new_streams(unbuffered=bool(env.get("PYTHONUNBUFFERED")))
        sys.argv = [str(getattr(module, "__file__", module.__name__)), *args]
        try:
            code = _exit_code(main(list(args)))
        except SystemExit as exc:
            code = _exit_code(exc.code)
        except KeyboardInterrupt:
            traceback.print_exc()
            _flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)  # dies by SIGINT, as the interpreter would
        except BaseException:
            traceback.print_exc()
            code = 1
        _interpreter_exit()
    finally:
        _flush()
        os._exit(code)


def _exit_code(value: object) -> int:
    """The exit code ``sys.exit(value)`` gives: None 0, an int itself, else printed and 1."""
    if value is None or isinstance(value, int):
        return value or 0
    print(value, file=sys.stderr)
    return 1


def _new_streams(*, unbuffered: bool) -> None:
    """stdin, stdout and stderr as a new interpreter makes them: stderr line-buffered,
    both unbuffered with PYTHONUNBUFFERED."""
    sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115
    sys.stdout = _text_stream(1, unbuffered=unbuffered, line_buffering=False, errors="strict")
    sys.stderr = _text_stream(
        2, unbuffered=unbuffered, line_buffering=True, errors="backslashreplace"
    )


def _text_stream(
    descriptor: int, *, unbuffered: bool, line_buffering: bool, errors: str
) -> io.TextIOWrapper:
    raw = open(descriptor, "wb", buffering=0 if unbuffered else -1, closefd=False)  # noqa: SIM115
    return io.TextIOWrapper(
        raw,
        encoding="utf-8",
        errors=errors,
        line_buffering=line_buffering,
        write_through=unbuffered,
    )


def _interpreter_exit() -> None:
    """What a new interpreter does when its main module returns: wait for its other
    threads that are not daemons, then run its exit handlers."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()


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
    """The handlers a new interpreter starts with, not the runner's: every signal the
    runner handles in Python back to its default, one it ignores still ignored (as
    across ``exec``), then Python's own: SIGINT raises KeyboardInterrupt (unless
    ignored), SIGPIPE ignored."""
    signal.set_wakeup_fd(-1)
    for signum in signal.valid_signals():
        with contextlib.suppress(OSError, ValueError):  # SIGKILL, SIGSTOP, ...
            if callable(signal.getsignal(signum)):
                signal.signal(signum, signal.SIG_DFL)
    if signal.getsignal(signal.SIGINT) != signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
