"""What stops a lean answer of the console script (``hive/cli/entry.py``) is worded as
the full CLI words it: an unexpected error is one line and exit 70 (never a
traceback), Ctrl-C is "interrupted" and 130, and tokens before the command are the
full CLI's to judge (``hive --version mcp`` prints the version, it starts no server)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import hive
from hive import __version__
from hive.cli import hookrun, mcp_start
from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from tests.conftest import agent_env, ctrl_c_as_at_a_terminal, git, script_run
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
    config = repo / ".hive" / "config.yaml"
    config.write_text(config.read_text() + "# staged\n")
    git(repo, "add", str(config))  # a .hive/ file staged: the full check validates it
    done = run_hive(["-C", str(repo), "hooks", "run", "pre-commit"], env={"HIVE_AGENT": ""})
    assert (done.returncode, done.stderr) == (130, "interrupted\n")


@pytest.mark.parametrize("command", [["mcp"], ["list"], ["tools", "run"]])
def test_tokens_before_the_command_go_to_the_full_cli(
    ws: Workspace, repo: Path, command: list[str]
) -> None:
    done = run_hive(["-C", str(repo), "--version", *command], env={"HIVE_AGENT": ""}, input="")
    assert (done.returncode, done.stdout) == (0, f"hive {__version__}\n"), done.stderr


# ------------------------------------------------------------------ Ctrl-C at start-up

CONSOLE = str(Path(sys.executable).with_name("hive"))  # the console script of this venv
# How long a process may take to end once signalled: a failure, not a wait, and long,
# for a test run at nice 19 on a loaded machine gets the CPU rarely (a 0.8 s CPU server
# start took minutes there, an interpreter >5 s to reach its site imports)
STOP_WAIT = 180


def _sigint_after(
    argv: list[str], repo: Path, imports: int | str, signum: int = signal.SIGINT
) -> tuple[int, str]:
    """Start ``argv`` (a real process), send it SIGINT (or ``signum``) as soon as it has
    imported ``imports`` of hive's modules, or the module named ``imports`` (Python's
    import-time report on stderr says when): (exit code, stderr without that report)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1", "PYTHONFAULTHANDLER": "1"}
    env["HIVE_AGENT"] = ""
    child = subprocess.Popen(
        argv,
        cwd=repo,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    assert child.stderr is not None
    try:
        seen, rest = 0, []
        for line in child.stderr:
            if not line.startswith("import time:"):
                rest.append(line)
            elif line.rstrip().endswith(f" {imports}") or (
                isinstance(imports, int) and re.search(r"\|\s+hive(\.|$)", line.rstrip())
            ):
                seen += 1
                if seen == imports or isinstance(imports, str):
                    child.send_signal(signum)
                    break
        try:
            _, tail = child.communicate(timeout=STOP_WAIT)
        except subprocess.TimeoutExpired:  # it missed the signal: say where it is
            child.send_signal(signal.SIGABRT)  # PYTHONFAULTHANDLER: each thread's stack
            stacks = child.communicate()[1]
            raise AssertionError(f"running after the signal ({imports}):\n{stacks}") from None
    finally:
        _never_left_running(child)
    rest += [line + "\n" for line in tail.splitlines() if not line.startswith("import time:")]
    return child.returncode, "".join(rest)


def _never_left_running(child: subprocess.Popen[str]) -> None:
    """Whatever ended the test (a failed assertion, a timeout), the process it started
    is not left behind (a server that missed its signal would run on)."""
    if child.poll() is None:
        child.kill()
        child.communicate()


def _landed_sigint(argv: list[str], repo: Path, imports: int | str, code: int) -> tuple[int, str]:
    """:func:`_sigint_after` until the signal lands before the command is done: a short
    command (``list`` on the lean path takes a few ms) may finish, exit 0 and say
    nothing, between the import line this test reads and the signal, when a loaded
    machine keeps the test from running; such a run tests nothing and is made again
    (at most five times: a signal that never lands fails)."""
    for _ in range(5):
        returned, stderr = _sigint_after(argv, repo, imports)
        if code == 0 or (returned, stderr) != (0, ""):
            break
    return returned, stderr


@pytest.mark.parametrize(
    ("argv", "points", "code"),
    [
        ([CONSOLE, "list"], (1, 2, 3, 6, 10), 130),  # the lean path
        ([CONSOLE, "doctor"], (2, 12, 40), 130),  # the full CLI
        ([sys.executable, "-m", "hive", "list"], (1, 3), 130),
        ([sys.executable, "-m", "hive.cli.main", "stats"], (1, 8), 130),
        # a server: Ctrl-C stops it, exit 0; "_datetime": inside pydantic-core's start,
        # where an interrupt was a Rust panic's traceback
        ([CONSOLE, "mcp"], (1, 4, 11, 12, 20, "_datetime"), 0),
    ],
    ids=["console-lean", "console-full", "python-m-hive", "python-m-main", "mcp"],
)
def test_ctrl_c_while_hive_starts_is_a_quiet_interrupt(
    ws: Workspace, repo: Path, argv: list[str], points: tuple[int | str, ...], code: int
) -> None:
    """SIGINT anywhere in hive's own start-up (its first module on) ends the process
    as Ctrl-C does (130 and "interrupted"; a server 0 and nothing): a KeyboardInterrupt
    inside an import was a traceback."""
    from hive import _STOPPED_AT_START, _interrupted_at_start  # noqa: F401  (they exist)
    from hive.cli import STOPPED_BY_CTRL_C

    assert STOPPED_BY_CTRL_C == ("mcp", "serve")  # hive/__init__.py names them too
    quiet = "interrupted\n" if code == 130 else ""
    answers = [_landed_sigint(argv, repo, at, code) for at in points]
    for at, (returned, stderr) in zip(points, answers, strict=True):
        assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, (at, stderr)
        assert (returned, stderr) == (code, quiet), (at, returned, stderr)


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_a_signal_while_hive_serve_starts_stops_it_cleanly(
    ws: Workspace, repo: Path, signum: int
) -> None:
    """SIGTERM (``kill``, a service manager) at any moment of ``hive serve``'s start-up
    stops it as Ctrl-C does, exit 0 and nothing said, as it does once the server runs:
    it killed the process (exit 143) until serve's own handler was set, and inside the
    web app's imports it raised KeyboardInterrupt there."""
    argv = [CONSOLE, "serve", "--port", "0"]
    points: tuple[int | str, ...] = (1, 12, "hive.cli.main", "hive.cli.serve_cmd")
    points += ("hive.serve", "starlette", "hive.serve.app", "uvicorn", "uvicorn.loops.asyncio")
    points += ("hive.cli.lean", "uvicorn.protocols.http.h11_impl")  # the app made, served
    answers = [_sigint_after(argv, repo, at, signum) for at in points]
    for at, answer in zip(points, answers, strict=True):
        assert answer == (0, ""), (at, answer)


# ``hive serve`` with a signal landing while its app is made and its socket bound: the
# handler in force there (printed), then SIGTERM to itself; the import it then makes
# (``hive.cli.lean``, as making the app does) took a KeyboardInterrupt inside importlib
# under load ("cannot release un-acquired lock", exit 70) until the start was held to
# the point where the server's own handlers are set.
_SIGNAL_WHILE_THE_APP_IS_MADE = """
import os, signal, sys
import hive.cli.entry as entry
import hive.serve.app as app
real = app.create_app
def create_app(config):
    print(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    import hive.cli.lean
    return real(config)
app.create_app = create_app
sys.argv = ["hive", "serve", "--port", "0"]
entry.console()
"""


def test_a_signal_while_hive_serve_makes_its_app_stops_it_at_once(repo: Path) -> None:
    """From its imports to its own handlers, hive serve's start holds Ctrl-C and
    SIGTERM (an import taking a KeyboardInterrupt is a traceback or importlib's
    "cannot release un-acquired lock"); one that comes stops it at once, exit 0,
    nothing said, its address never printed."""
    code, out, err = _script_run(_SIGNAL_WHILE_THE_APP_IS_MADE, repo)
    handlers = out.splitlines()[0]
    assert handlers.count("HeldInterrupts.hold") == 2, handlers
    assert (code, err, out.splitlines()[1:]) == (0, "", []), (code, err, out)


# A real Ctrl-C (SIGINT to the process itself) while the entry point reads its command
# line, after the first held imports put Python's own handler back.
_CTRL_C_IN_PARSE = """
import os, signal, sys
import hive.cli.entry as entry  # (hive.cli.entry: hive takes Ctrl-C over at start)
real = entry.parse
def parse(argv):
    os.kill(os.getpid(), signal.SIGINT)
    return real(argv)
entry.parse = parse
sys.argv = ["hive", "list"]
entry.console()
"""


# The same for the full CLI started as itself (``python -m hive.cli.main``): its run()
# reads the command line after giving Python its own Ctrl-C handler back.
_CTRL_C_IN_FULL_PARSE = """
import os, signal, sys
import hive.cli  # (hive.cli.entry: hive takes Ctrl-C over at start)
import hive.cli.main as main
real = hive.cli.parse
def parse(argv):
    hive.cli.parse = real
    os.kill(os.getpid(), signal.SIGINT)
    return real(argv)
hive.cli.parse = parse
sys.argv = ["hive", "stats"]
main.run()
"""


def _run_script(script: str, repo: Path, *args: str) -> tuple[int, str]:
    """``python -c SCRIPT ARGS`` in ``repo`` with Ctrl-C as a terminal leaves it: its
    exit code and standard error."""
    code, _out, err = _script_run(script, repo, *args)
    return code, err


def _script_run(
    script: str, repo: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """As :func:`_run_script`, standard output too (``env``: else a person's)."""
    return script_run(script, repo, *args, env=env, timeout=60)


@pytest.mark.parametrize(
    "script", [_CTRL_C_IN_PARSE, _CTRL_C_IN_FULL_PARSE], ids=["entry-point", "full-cli"]
)
def test_ctrl_c_while_the_command_line_is_read_is_a_quiet_interrupt(
    ws: Workspace, repo: Path, script: str
) -> None:
    """The entry point reads its command line between the imports it holds Ctrl-C
    around and the lean answer's own guard, the full CLI (``python -m hive.cli.main``)
    before its try block's: a Ctrl-C landing there (a test sending one 20 ms after the
    start hit it) was a KeyboardInterrupt traceback through hive's frames."""
    assert _run_script(script, repo) == (130, "interrupted\n")


# Ctrl-C after the lean answer is given, as the process calls into its exit.
_CTRL_C_AT_EXIT = """
import os, signal, sys
import hive.cli.entry as entry
real = entry._exit
def _exit(code):
    os.kill(os.getpid(), signal.SIGINT)
    real(code)
entry._exit = _exit
sys.argv = ["hive", "list"]
entry.console()
"""


# A KeyboardInterrupt raised where Python cannot let it through: a weakref callback (as
# importlib's that drops a module lock after an import, where a Ctrl-C during the full
# CLI's imports landed). The script names hive.cli.entry: hive takes it for a command.
_CTRL_C_IN_A_CALLBACK = """
import os, signal, weakref  # hive.cli.entry
import hive
signal.signal(signal.SIGINT, signal.default_int_handler)  # as the full CLI runs
class Thing: pass
thing = Thing()
def dropped(ref):
    os.kill(os.getpid(), signal.SIGINT)
kept = weakref.ref(thing, dropped)
try:
    del thing
    for _ in range(10**8): pass
    print("lost")
except KeyboardInterrupt:
    print("delivered")
"""


def test_a_ctrl_c_raised_where_python_swallows_it_is_delivered_again(repo: Path) -> None:
    """Ctrl-C during the full CLI's imports once landed in importlib's module-lock
    callback: Python printed "Exception ignored in: ... KeyboardInterrupt" and dropped
    it, and the command ran on to exit 0. A hive command delivers it again."""
    child = subprocess.run(
        [sys.executable, "-c", _CTRL_C_IN_A_CALLBACK],
        cwd=repo,
        capture_output=True,
        text=True,
        preexec_fn=ctrl_c_as_at_a_terminal,
        check=False,
        timeout=120,
    )
    assert (child.returncode, child.stdout, child.stderr) == (0, "delivered\n", "")


def test_ctrl_c_after_the_answer_is_given_ends_it_as_answered(ws: Workspace, repo: Path) -> None:
    """A Ctrl-C landing after a lean answer had done its work, on the call into its exit
    (seen under load: a test sending it 78 ms after the start), was a KeyboardInterrupt
    traceback through hive's frames; the answer stands: its output and exit code."""
    assert _run_script(_CTRL_C_AT_EXIT, repo) == (0, "")


# A Ctrl-C landing as the answer is written (here: on standard output's flush, which
# the lean path calls right after writing it): seen under load as `hive --json list`
# printing its whole list, then the interrupt's error object after it (two JSON
# documents, exit 130) for a command that had answered.
_CTRL_C_AS_THE_ANSWER_IS_WRITTEN = """
import os, signal, sys
import hive.cli.entry as entry
class Stdout:
    def __init__(self, real):
        self.real, self.buffer, self.sent = real, real.buffer, False
    def __getattr__(self, name):
        return getattr(self.real, name)
    def write(self, text):
        return self.real.write(text)
    def flush(self):
        self.real.flush()
        if not self.sent:
            self.sent = True
            os.kill(os.getpid(), signal.SIGINT)
sys.stdout = Stdout(sys.stdout)
sys.argv = ["hive", *sys.argv[1:]]
entry.console()
"""


@pytest.mark.parametrize(
    "argv",
    [
        ["--json", "list"],
        ["list"],
        ["--json", "show", "{cell}"],
        ["--json", "create", "made"],
        ["--json", "stats"],  # the full CLI's answer
    ],
    ids=["list-json", "list", "show-json", "create-json", "full-cli-json"],
)
def test_ctrl_c_as_the_answer_is_written_ends_it_as_answered(
    ws: Workspace, repo: Path, argv: list[str]
) -> None:
    """The answer stands once it is being written: all of it, once, and exit 0."""
    cell = create_cell(ws, title="one").id
    argv = [arg.replace("{cell}", cell) for arg in argv]
    code, out, err = _script_run(_CTRL_C_AS_THE_ANSWER_IS_WRITTEN, repo, *argv)
    assert (code, err) == (0, ""), out
    if argv[0] == "--json":
        json.loads(out)  # one document: the answer's
    else:
        assert cell in out


# A Ctrl-C landing after a lean coordination write committed, before its answer (here:
# on the call that prints it): it was 130 and "interrupted" for a reservation granted or
# a message sent (and the reservation's bookkeeping after the commit skipped).
_CTRL_C_AFTER_THE_COMMIT = """
import os, signal, sys
import hive.cli.entry as entry
import hive.cli.lean_coord as coord
real = coord.emit
def emit(*args, **options):
    os.kill(os.getpid(), signal.SIGINT)
    return real(*args, **options)
coord.emit = emit
sys.argv = ["hive", *sys.argv[1:]]
entry.console()
"""


@pytest.mark.parametrize(
    "argv",
    [["--json", "reserve", "src/a.py"], ["mail", "send", "bob", "-s", "hi", "-b", "x"]],
    ids=["reserve", "mail-send"],
)
def test_ctrl_c_after_a_coordination_write_commits_ends_it_as_answered(
    ws: Workspace, repo: Path, argv: list[str]
) -> None:
    alice = agent_env(repo, "alice")
    agent_env(repo, "bob")  # registered: a recipient
    before = git(repo, "rev-parse", "HEAD")
    code, out, err = _script_run(_CTRL_C_AFTER_THE_COMMIT, repo, *argv, env=alice)
    assert (code, err) == (0, ""), out
    assert "granted" in out or "sent #" in out
    if argv[1] == "reserve":
        assert git(repo, "rev-parse", "HEAD") != before  # the reservation's commit


# A Ctrl-C while hive starts (its imports): hive/__init__.py's own handler answers it.
_CTRL_C_AT_START = """
import os, signal, time  # hive.cli.entry
import hive
os.kill(os.getpid(), signal.SIGINT)
time.sleep(60)
"""


@pytest.mark.parametrize(
    ("argv", "out"),
    [
        (["--json", "list"], {"error": "interrupted", "code": "interrupted"}),
        (["list", "--json"], {"error": "interrupted", "code": "interrupted"}),
        (["list"], None),
        (["create", "--", "--json"], None),  # a title
    ],
    ids=["json", "json-after", "text", "a-title"],
)
def test_ctrl_c_while_hive_starts_under_json_is_a_json_error_too(
    repo: Path, argv: list[str], out: dict[str, str] | None
) -> None:
    """Under ``--json`` every error is also its object on stdout: one while hive was
    starting (seen under load) was the word on stderr only, stdout empty."""
    code, stdout, stderr = _script_run(_CTRL_C_AT_START, repo, *argv)
    assert (code, stderr) == (130, "interrupted\n")
    assert (json.loads(stdout) if out else stdout) == (out or "")


# A Ctrl-C at the first instruction of hive's function AT (a trace function delivers it
# there, as a signal arriving just before is delivered): the points where one landed
# outside every guard. The script names hive.cli.entry: hive takes it for a command.
_CTRL_C_AT_A_FUNCTION = """
import sys, _thread  # hive.cli.entry
AT = sys.argv.pop(1)
def at_the_start_of(frame, event, arg):
    if frame.f_code.co_name == AT and frame.f_globals["__name__"].startswith("hive"):
        sys.settrace(None)
        _thread.interrupt_main()
sys.settrace(at_the_start_of)
from hive.cli.entry import console
console()
"""


@pytest.mark.parametrize(
    ("at", "argv"),
    [
        ("_started_as_a_command", ["list"]),  # hive/__init__.py, before its handler is in
        ("_command_word", ["--json", "list"]),
        ("answer", ["list"]),  # entry.py: after the first hold, before the lean answer's
        ("answer", ["--json", "list"]),
        ("_full_cli", ["stats"]),  # entry.py: after the full CLI's imports, before its guard
    ],
    ids=["start", "start-json", "lean", "lean-json", "full-cli"],
)
def test_ctrl_c_between_the_start_up_guards_is_a_quiet_interrupt(
    repo: Path, at: str, argv: list[str]
) -> None:
    """Each was a KeyboardInterrupt traceback through hive's frames (and exit -2): the
    delay sweep below hit the first under load."""
    code, out, err = _script_run(_CTRL_C_AT_A_FUNCTION, repo, at, *argv)
    assert (code, err) == (130, "interrupted\n")
    expected = {"error": "interrupted", "code": "interrupted"}
    assert (json.loads(out) if "--json" in argv else out) == (expected if "--json" in argv else "")


def test_ctrl_c_while_a_program_imports_hive_is_its_own_keyboard_interrupt(repo: Path) -> None:
    """Only a process started as a hive command answers a Ctrl-C at start-up itself:
    a program importing hive gets its KeyboardInterrupt (not an exit from hive)."""
    script = _CTRL_C_AT_A_FUNCTION.replace("# hive.cli.entry", "").replace(
        "from hive.cli.entry import console\nconsole()",
        "try:\n    import hive\nexcept KeyboardInterrupt:\n    print('raised')",
    )
    assert _script_run(script, repo, "_started_as_a_command") == (0, "raised\n", "")


@pytest.mark.parametrize("delay", [0.0, 0.005, 0.01, 0.02, 0.03, 0.05])
def test_ctrl_c_at_early_delays_never_shows_a_traceback_of_hive(repo: Path, delay: float) -> None:
    """Ctrl-C sent a few ms after the console script starts: before hive's first line
    runs, Python itself may end the process by the signal (a shell shows 130), report
    its own start-up as interrupted (its KeyboardInterrupt, with no frame of hive's; or
    one at hive/__init__.py's first instruction, line 0, a window of a few instructions
    that no code of hive's can reach), or report it where it goes on and run the command
    (below); from then on it is 130 and "interrupted", or the answer (0) when the Ctrl-C
    came after it. The points it hit by chance under load are tested one by one
    (test_ctrl_c_between_the_start_up_guards_is_a_quiet_interrupt,
    test_ctrl_c_where_python_goes_on_is_pythons_until_hive_starts)."""
    init = subprocess.run([CONSOLE, "init"], cwd=repo, capture_output=True, check=False)
    assert init.returncode == 0, init.stderr
    child = subprocess.Popen(
        [CONSOLE, "list"],
        cwd=repo,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "HIVE_AGENT": ""},
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    time.sleep(delay)
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=STOP_WAIT)
    _assert_an_interrupted_start(child.returncode, stderr)


def _assert_an_interrupted_start(code: int, stderr: str) -> None:
    """What a Ctrl-C at some moment of ``hive list``'s start-up may end in: never a
    frame of hive's; from hive's first instruction on, 130 and "interrupted" (or the
    answer, 0 and nothing said, when the Ctrl-C came after it); before it, Python's own
    ending: by the signal, its start-up reported interrupted (exit 1), or the Ctrl-C
    reported and lost where Python goes on after an error (``_PYTHON_LOST_IT``), and
    the answer."""
    assert not _HIVE_FRAME.search(stderr), stderr
    if code == 130:
        assert stderr == "interrupted\n"
    elif code == 0:
        assert stderr == "" or _PYTHON_LOST_IT.fullmatch(stderr), stderr
    else:
        assert code in (-signal.SIGINT, 1), (code, stderr)


# A line of a traceback in hive's package other than its first instruction (line 0: the
# interpreter's, see above).
_HIVE_FRAME = re.compile(
    r'File "' + re.escape(str(Path(hive.__file__).parent)) + r'/[^"]*", line [1-9]'
)
# A Ctrl-C Python raised where it reports an error and goes on, before the console
# script imports ``hive`` (no code of hive's is there to answer it; from
# ``hive/__init__.py`` on, hive's handler and ``hive._interrupt_again`` do): importlib's
# callback that drops a module lock once an import of ``site``'s is done (a weakref
# callback: "Exception ignored"), or its look at whether the script is a zip archive
# (``sys.path[0]``'s importer: "Failed checking ...", seen under load with the sweep's
# delays made longer).
_PYTHON_LOST_IT = re.compile(
    r"(?:Exception ignored in: <function _get_module_lock\.<locals>\.cb at 0x[0-9a-f]+>\n"
    r"Traceback \(most recent call last\):\n"
    r'  File "<frozen importlib\._bootstrap>", line \d+, in cb\n'
    r"|Failed checking if argv\[0\] is an import path entry\n(?:.*\n)*"
    r"Traceback \(most recent call last\):\n"
    r'  File "<frozen zipimport>", line \d+, in __init__\n)'
    r"(?:  .*\n)*"
    r"KeyboardInterrupt(?:: ?)?\n"
)

# Ctrl-C at the first instruction of a function of Python's start-up, as WHERE says:
# importlib's callback that drops a module lock (the next: this module's own, a
# ``sitecustomize``, the last import of ``site``; or the first once ``hive/__init__.py``
# has run: its own lock's), or zipimport's look at the script. A trace function
# delivers it there, as one arriving just before is delivered.
_CTRL_C_IN_PYTHONS_START = """
import sys, _thread
def at_the_start_of(frame, event, arg):
    if WHERE:
        sys.settrace(None)
        _thread.interrupt_main()
sys.settrace(at_the_start_of)
"""
_CALLBACK = 'frame.f_code.co_name == "cb"'


@pytest.mark.parametrize(
    ("where", "code"),
    [
        (_CALLBACK, 0),
        ('frame.f_code.co_filename == "<frozen zipimport>"', 0),
        (f'{_CALLBACK} and "hive" in sys.modules', 130),
    ],
    ids=["site-callback", "script-importer", "hive-callback"],
)
def test_ctrl_c_where_python_goes_on_is_pythons_until_hive_starts(
    repo: Path, tmp_path: Path, where: str, code: int
) -> None:
    """The delay sweep above once ended in exit 0, the list, and Python's "Exception
    ignored in: <function _get_module_lock.<locals>.cb ...> ... KeyboardInterrupt":
    the Ctrl-C came while ``site`` imported its modules, in the callback importlib runs
    as an import's module lock is dropped, where Python can only report an exception and
    go on (as it does when one lands in its look at the script, before running it).
    That is before the console script imports ``hive``: no code of hive's runs there to
    answer it, so no exit 130 either; the sweep takes it for what it is
    (docs/architecture.md, "How the tests run"). Once ``hive/__init__.py`` has run, the
    same Ctrl-C is hive's: 130 and "interrupted"."""
    init = subprocess.run([CONSOLE, "init"], cwd=repo, capture_output=True, check=False)
    assert init.returncode == 0, init.stderr
    injected = _CTRL_C_IN_PYTHONS_START.replace("WHERE", where)
    (tmp_path / "sitecustomize.py").write_text(injected)
    done = subprocess.run(
        [CONSOLE, "list"],
        cwd=repo,
        capture_output=True,
        text=True,
        env={**os.environ, "HIVE_AGENT": "", "PYTHONPATH": str(tmp_path)},
        preexec_fn=ctrl_c_as_at_a_terminal,
        check=False,
        timeout=STOP_WAIT,
    )
    lost = _PYTHON_LOST_IT.fullmatch(done.stderr)
    assert (done.returncode, bool(lost)) == (code, code == 0), done.stderr
    _assert_an_interrupted_start(done.returncode, done.stderr)
