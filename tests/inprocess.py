"""Run the ``hive`` command line inside the test process, as a subprocess would run it.

``run_hive(argv, cwd=..., env=..., input=...)`` calls the console script's entry
point (``hive.cli.entry.main``, the very function ``hive`` runs) with the command
line in ``sys.argv`` and returns a ``subprocess.CompletedProcess`` like
``subprocess.run(..., capture_output=True, text=True)`` would: exit code, stdout,
stderr. Everything a separate process would have of its own is set up for the call
and put back afterwards:

* ``os.environ`` is replaced by ``env`` (the whole environment, as ``subprocess.run``
  takes it; the current one when None), so ``HIVE_AGENT_TOKEN`` & co. are read as the
  real command reads them;
* the working directory (``cwd``), ``sys.argv``, ``sys.stdin`` (``input``, else empty,
  like ``/dev/null``), ``sys.stdout`` and ``sys.stderr`` (captured as bytes, decoded as
  UTF-8 like ``text=True``);
* signal handlers a command installs, the CLI's global options and the state index's
  notice sink (module state a fresh process starts without);
* a thread a command leaves running is an error (a process would have ended it).

What needs a real process stays a subprocess: the pre-commit hook run by git,
concurrent writers, SIGKILL crash tests (``HIVE_TEST_KILL_AT`` is refused here),
``hive mcp`` over stdio, servers.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import runpy
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from hive.domain.swarm.forked import ForkedWorker

SIGNALS = tuple(
    getattr(signal, name)
    for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "SIGALRM", "SIGCHLD", "SIGUSR1")
    if hasattr(signal, name)
)


class _Stream(io.TextIOWrapper):
    """A text stream over bytes, as a pipe's: ``.buffer`` works, not a terminal."""

    def __init__(self, data: bytes = b"") -> None:
        super().__init__(io.BytesIO(data), encoding="utf-8", errors="strict", write_through=True)

    def captured(self) -> str:
        self.flush()
        raw = self.buffer
        assert isinstance(raw, io.BytesIO)
        return raw.getvalue().decode("utf-8", errors="replace")


class Outcome(subprocess.CompletedProcess[str]):
    """A finished command: ``returncode``, ``stdout``, ``stderr`` (as ``subprocess.run``
    gives them); also ``exit_code`` and ``output`` (stdout, then stderr), the names of
    typer's test runner."""

    @property
    def exit_code(self) -> int:
        return self.returncode

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_hive(
    argv: Sequence[str],
    *,
    cwd: str | Path | None = None,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    module: str = "hive",
) -> Outcome:
    """``hive *argv`` in this process; the result as ``subprocess.run`` gives it.

    ``module``: as ``python -m MODULE *argv`` (``hive``: the console script's entry
    point; ``hive.cli.main``: the full CLI, without the entry point's lean answers)."""
    environment = dict(os.environ if env is None else env)
    if environment.get("HIVE_TEST_KILL_AT"):
        raise ValueError("HIVE_TEST_KILL_AT kills the process: run such a command as a subprocess")
    args = [str(arg) for arg in argv]
    out, err = _Stream(), _Stream()
    with _process_state(environment, cwd, args, _Stream((input or "").encode()), out, err):
        code = _call_main(module)
    return Outcome(["hive", *args], code, out.captured(), err.captured())


def _call_main(module: str) -> int:
    try:
        if module == "hive":
            from hive.cli.entry import main

            main()
        elif module == "hive.cli.main" and hasattr(importlib.import_module(module), "run"):
            sys.modules[module].run()  # what its ``if __name__ == "__main__":`` does
        else:
            with warnings.catch_warnings():  # "found in sys.modules": it is, and is run again
                warnings.simplefilter("ignore", RuntimeWarning)
                runpy.run_module(module, run_name="__main__", alter_sys=False)
    except SystemExit as exc:
        if exc.code is None:
            return 0
        if isinstance(exc.code, int):
            return exc.code
        sys.stderr.write(f"{exc.code}\n")
        return 1
    return 0


@contextlib.contextmanager
def _process_state(
    env: dict[str, str],
    cwd: str | Path | None,
    args: list[str],
    stdin: _Stream,
    stdout: _Stream,
    stderr: _Stream,
) -> Iterator[None]:
    saved_env = dict(os.environ)
    saved_cwd = os.getcwd()
    saved_streams = (sys.stdin, sys.stdout, sys.stderr)
    saved_argv = sys.argv
    saved_signals = _signal_handlers()
    saved_module_state = _module_state()
    threads_before = set(threading.enumerate())
    try:
        os.environ.clear()
        os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = ["hive", *args]
        sys.stdin, sys.stdout, sys.stderr = stdin, stdout, stderr
        _reset_module_state()
        yield
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        sys.argv = saved_argv
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for signum, handler in saved_signals.items():
            signal.signal(signum, handler)
        _restore_module_state(saved_module_state)
    _no_thread_left(threads_before)


def _signal_handlers() -> dict[int, Any]:
    if threading.current_thread() is not threading.main_thread():
        return {}
    return {signum: signal.getsignal(signum) for signum in SIGNALS}


def _module_state() -> dict[str, Any]:
    """Module globals the CLI sets for its process (absent ones are skipped)."""
    import hive.store

    state: dict[str, Any] = {"notice_sink": hive.store.NOTICE_SINK}
    options = _cli_options()
    if options is not None:
        state["options"] = dict(vars(options))
    return state


def _reset_module_state() -> None:
    options = _cli_options()
    if options is not None:
        fresh = type(options)()
        for name, value in vars(fresh).items():
            setattr(options, name, value)


def _restore_module_state(state: dict[str, Any]) -> None:
    import hive.store

    hive.store.NOTICE_SINK = state["notice_sink"]
    options = _cli_options()
    if options is not None and "options" in state:
        for name, value in state["options"].items():
            setattr(options, name, value)


def _cli_options() -> Any:
    """The CLI's global options object, if it has one and it is loaded."""
    common = sys.modules.get("hive.cli.common")
    options = getattr(common, "OPTIONS", None)
    return options if options is not None and hasattr(options, "__dict__") else None


def _no_thread_left(before: set[threading.Thread]) -> None:
    for thread in set(threading.enumerate()) - before:
        thread.join(timeout=60)  # ending: a minute, as on a loaded machine
        if thread.is_alive():
            raise AssertionError(f"the hive command left a thread running: {thread.name}")


# ------------------------------------------------------------------ forked processes


class Forked(ForkedWorker):
    """A child process forked from this one (real: its own pid, memory and file
    descriptors, running at the same time as its siblings), without a new
    interpreter's start-up and imports. ``communicate`` as ``subprocess.Popen``'s;
    ``poll`` as a worker forked by ``hive swarm run``."""

    def __init__(self, pid: int, out: Path, err: Path) -> None:
        super().__init__(pid, [f"forked {pid}"])
        self._out, self._err = out, err

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        out, err = self._out.read_text(errors="replace"), self._err.read_text(errors="replace")
        for path in self._out.parent.iterdir():
            path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            self._out.parent.rmdir()
        return out, err

    def stdout_so_far(self) -> str:
        """What it has written to stdout until now (it may still be running)."""
        try:
            return self._out.read_text(errors="replace")
        except FileNotFoundError:  # not opened by the child yet
            return ""

    def __del__(self) -> None:
        """Its output files go with it once it has ended (a test that only waits for it
        would otherwise leave them in TMPDIR)."""
        if self.returncode is not None:
            shutil.rmtree(self._out.parent, ignore_errors=True)

    def wait(self, timeout: float | None = None) -> int:
        """As ``ForkedWorker.wait``, but a child still running at the timeout is killed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif deadline is not None and time.monotonic() > deadline:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
                raise subprocess.TimeoutExpired(f"forked {self.pid}", timeout or 0)
            else:
                time.sleep(0.01)
        return self.returncode


def fork_call(
    target: Callable[[], object],
    *,
    argv: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
) -> Forked:
    """Run ``target()`` in a forked child with ``sys.argv[1:] = argv``, the environment
    ``env`` (whole), working directory ``cwd`` and ``input`` on stdin (else empty); its
    stdout and stderr are kept (``communicate``). Its exit code: 0, SystemExit's code,
    or 1 with the traceback."""
    folder = Path(tempfile.mkdtemp(prefix="hive-fork-"))
    out, err, given = folder / "out", folder / "err", folder / "in"
    given.write_text(input or "")
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os._exit(_child(target, list(argv), env, cwd, (given, out, err)))
    return Forked(pid, out, err)


def fork_hive(
    argv: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    input: str | None = None,
    module: str = "hive",
) -> Forked:
    """``hive *argv`` as a forked process (at the same time as others), as
    ``subprocess.Popen([python, "-m", module, *argv])`` would run it."""
    return fork_call(lambda: _call_main(module), argv=argv, env=env, input=input)


def fork_on_terminal(argv: Sequence[str], *, module: str = "hive.cli.main") -> tuple[int, bytes]:
    """``hive *argv`` as a forked process whose stdout and stderr are a pseudo-terminal
    (stdin empty), as ``tests.conftest.on_terminal`` runs ``python -m MODULE *argv``:
    (exit code, everything it wrote to the terminal)."""
    import pty

    leader, follower = pty.openpty()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(leader)
        files = (Path(os.devnull), follower, follower)
        os._exit(_child(lambda: _call_main(module), [str(a) for a in argv], None, None, files))
    os.close(follower)
    seen = read_terminal(leader)
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), seen


def read_terminal(leader: int) -> bytes:
    """Everything written to a pseudo-terminal until its last writer closes it (then
    ``leader`` is closed)."""
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    return seen


def console_probe(
    repo: Path, args: Sequence[str], watched: Sequence[str], *, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``hive -C REPO *args`` through the console script's entry point in a new
    interpreter, ended as the console script ends it (no teardown); its last stdout
    line is ``CODE [the modules of watched it loaded]``."""
    probe = (
        "import sys\n"
        "from hive.cli.entry import main\n"
        f"sys.argv = ['hive', '-C', sys.argv[1], *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    code = exc.code\n"
        f"print(code, sorted(m for m in {tuple(watched)!r} if m in sys.modules))\n"
        "sys.stdout.flush()\n"
        "import os; os._exit(0)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", probe, str(repo)],
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
        capture_output=True,
        text=True,
        check=False,
    )


def _child(
    target: Callable[[], object],
    argv: list[str],
    env: Mapping[str, str] | None,
    cwd: str | Path | None,
    files: tuple[Path | int, Path | int, Path | int],
) -> int:
    """The forked child: ``files`` (paths, or descriptors to take over) become its
    stdin, stdout and stderr."""
    code = 1
    try:
        for number, path in enumerate(files):
            if isinstance(path, int):
                os.dup2(path, number)
                continue
            flags = os.O_RDONLY if number == 0 else os.O_WRONLY | os.O_CREAT | os.O_TRUNC
            handle = os.open(path, flags, 0o600)
            os.dup2(handle, number)
            os.close(handle)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115 - the child's own until it exits
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        if env is not None:
            os.environ.clear()
            os.environ.update(env)
        if cwd is not None:
            os.chdir(cwd)
        sys.argv = [sys.argv[0], *argv]
        try:
            returned = target()
            code = returned if isinstance(returned, int) else 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            traceback.print_exc()
    finally:
        with contextlib.suppress(Exception):
            sys.stdout.flush()
            sys.stderr.flush()
    return code
