"""``hive mcp`` stops cleanly: on stdin EOF and on Ctrl-C, exit 0 and no traceback
(a real process: the signal and the pipe are what is tested)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import agent_env, ctrl_c_as_at_a_terminal, script_run

HIVE = [sys.executable, "-m", "hive"]  # the console script's entry point (console)
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


def start(repo: Path, *python_options: str) -> subprocess.Popen[bytes]:
    env = agent_env(repo, "BlueLake")
    python, *command = HIVE
    return subprocess.Popen(
        [python, *python_options, *command, "-C", str(repo), "mcp"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env={**os.environ, **env},
        preexec_fn=ctrl_c_as_at_a_terminal,
    )


def initialized(server: subprocess.Popen[bytes]) -> None:
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    reply = json.loads(server.stdout.readline())
    assert reply["id"] == 1 and "result" in reply


def test_mcp_stops_cleanly_on_stdin_eof(ws: object, repo: Path) -> None:
    server = start(repo)
    initialized(server)
    assert server.stdin is not None
    server.stdin.close()
    assert server.wait(timeout=120) == 0
    assert server.stderr is not None
    assert b"Traceback" not in server.stderr.read()


def test_calls_sent_before_stdin_ends_are_answered(ws: object, repo: Path) -> None:
    """A client that sends its calls and closes stdin (a script piping them in) got no
    answer: at EOF the SDK cancelled the requests under way and dropped their replies,
    though the call had run (the cell was created). Each is answered, then it stops."""
    server = start(repo)
    initialized(server)
    assert server.stdin is not None and server.stdout is not None
    calls = [
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "id": "ready", "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}},
    ]
    calls[0]["params"] = {"name": "hive_create", "arguments": {"title": "piped"}}
    calls[1]["params"] = {"name": "hive_ready", "arguments": {}}
    calls[2]["params"] = {"name": "ctx_wait", "arguments": {"key": "never", "timeout_sec": 1}}
    server.stdin.write(b"".join((json.dumps(call) + "\n").encode() for call in calls))
    server.stdin.close()  # a cancelled request is not waited for (nor, once cancelled,
    # answered); its thread still ends its second before the process exits
    out = server.stdout.read()  # to its end: the server has stopped writing
    assert server.wait(timeout=60) == 0
    assert server.stderr is not None and b"Traceback" not in server.stderr.read()
    replies = {reply["id"]: reply for reply in map(json.loads, out.decode().splitlines())}
    assert {2, "ready"} <= set(replies) <= {2, "ready", 4}
    created = json.loads(replies[2]["result"]["content"][0]["text"])
    assert created["title"] == "piped" and not replies[2]["result"]["isError"]
    assert "ready" in replies and "result" in replies["ready"]


def test_a_cancelled_wait_does_not_hold_the_stop_at_stdin_eof(
    ws: object, repo: Path, tmp_path: Path
) -> None:
    """A client that cancels a long ctx_wait and closes stdin: the server stopped only
    when the wait's five minutes were up (the process waits for the call's thread); a
    cancelled call's waits now end at once, and the server with them."""
    server = serving_a_wait(repo, tmp_path, seconds=300)
    assert server.stdin is not None
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}
    server.stdin.write((json.dumps(cancel) + "\n").encode())
    server.stdin.close()
    try:
        code = server.wait(timeout=90)  # far less than the wait's 300 s
    finally:
        server.kill()
    assert server.stdout is not None and server.stderr is not None
    err = server.stderr.read()
    assert code == 0, err.decode()
    assert b"Traceback" not in err
    assert b'"id":2' not in server.stdout.read().replace(b" ", b"")  # cancelled: no answer


@pytest.mark.parametrize("when", ["serving", "starting"])
def test_mcp_stops_cleanly_on_ctrl_c(ws: object, repo: Path, when: str) -> None:
    if when == "serving":
        server = start(repo)
        initialized(server)
    else:  # still importing (the MCP SDK, the tools) and opening the repository: once
        # `hive mcp`'s own module is imported (-X importtime: a line on stderr as each
        # import ends), not after a fixed sleep, which on a busy machine came before
        # Python had even started hive
        server = start(repo, "-X", "importtime")
        assert server.stderr is not None
        for line in server.stderr:
            if line.rsplit(b"|", 1)[-1].strip() == b"hive.cli.mcp_start":
                break
        else:
            raise AssertionError(f"hive mcp ended before starting (exit {server.wait()})")
    server.send_signal(signal.SIGINT)
    _, err = server.communicate(timeout=120)
    assert server.returncode == 0, err.decode()
    assert b"Traceback" not in err and b"internal error" not in err


def wait_in_a_call(server: subprocess.Popen[bytes], seconds: int) -> None:
    """Send a call that runs for ``seconds`` (a ctx_wait for a key nobody sets)."""
    assert server.stdin is not None
    arguments = {"key": "never", "timeout_sec": seconds}
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {}}
    call["params"] = {"name": "ctx_wait", "arguments": arguments}
    server.stdin.write((json.dumps(call) + "\n").encode())
    server.stdin.flush()


def until(done: Callable[[], bool], what: str, server: subprocess.Popen[bytes]) -> None:
    """Wait until ``done()`` (polled; a minute at most, as on a loaded machine)."""
    deadline = time.monotonic() + 60
    while not done():
        assert server.poll() is None, f"hive mcp ended (exit {server.returncode}) before {what}"
        assert time.monotonic() < deadline, f"no sign of {what} in a minute"
        time.sleep(0.02)


def mark_call_starts(repo: Path, marker: Path) -> None:
    """A pre_tool_use hook of ctx_wait that creates ``marker``: the call has started
    (the hook runs inside the call, just before the tool's handler)."""
    from tests.test_tools import configure

    hook = {"matcher": "ctx_wait", "command": f"touch {shlex.quote(str(marker))}"}
    configure(repo, {"hooks": {"pre_tool_use": [hook]}})


def serving_a_wait(repo: Path, tmp_path: Path, seconds: int) -> subprocess.Popen[bytes]:
    """A server whose call, a ctx_wait of ``seconds``, has started (seen by a hook, not
    a fixed sleep: under load it could end before the server had read the call)."""
    marker = tmp_path / "call-started"
    mark_call_starts(repo, marker)
    server = start(repo)
    initialized(server)
    wait_in_a_call(server, seconds=seconds)
    until(marker.exists, "the call starting", server)
    return server


def call_ended(repo: Path) -> bool:
    """The event log has the ctx_wait call: it returned, and its answer is being sent."""
    log = repo / ".git" / "hive" / "events.jsonl"
    return log.exists() and '"tool":"ctx_wait"' in log.read_text().replace(" ", "")


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_mcp_stops_at_once_on_a_signal_during_a_call(
    ws: object, repo: Path, tmp_path: Path, signum: int
) -> None:
    """A signal while a call runs (here a ctx_wait of five minutes) stops the server at
    once; Ctrl-C only cancelled the call and the server went on serving (a hang)."""
    server = serving_a_wait(repo, tmp_path, seconds=300)
    started = time.monotonic()
    server.send_signal(signum)
    try:
        _, err = server.communicate(timeout=150)
    finally:
        server.kill()
    assert server.returncode == 0, err.decode()
    # not after the call: well under its 300 s, with room for a loaded machine
    assert time.monotonic() - started < 120
    assert b"Traceback" not in err


def test_mcp_stops_cleanly_when_the_client_stops_reading(ws: object, repo: Path) -> None:
    """A client that closes its end of stdout (it went away) ends the session like stdin
    EOF: exit 0 and nothing on stderr; it was exit 70 and 'internal error:
    ExceptionGroup' when the server wrote an answer into the broken pipe."""
    server = start(repo)
    initialized(server)
    assert server.stdin is not None and server.stdout is not None
    wait_in_a_call(server, seconds=1)
    server.stdout.close()  # the answer, in a second, goes into a broken pipe
    until(lambda: call_ended(repo), "the call ending", server)
    # stdin stays open (its EOF ends a session too, and closed before the answer was
    # sent it tested nothing): the server ends the session at the next line it reads
    # after finding the pipe broken, so a ping every 50 ms until it has ended
    try:
        for number in range(3, 1200):
            if server.poll() is not None:
                break
            ping = {"jsonrpc": "2.0", "id": number, "method": "ping"}
            try:
                server.stdin.write((json.dumps(ping) + "\n").encode())
                server.stdin.flush()
            except BrokenPipeError:  # it ended between the poll and the write
                break
            time.sleep(0.05)
        assert server.wait(timeout=120) == 0
    finally:
        server.kill()
    assert server.stderr is not None
    assert server.stderr.read() == b""


def test_ctrl_c_while_starting_up_is_held_until_the_imports_are_done() -> None:
    """A KeyboardInterrupt raised inside an import of a compiled module (pydantic-core's)
    ends in a Rust panic's traceback, and one in any import in a traceback: the console
    script and ``hive mcp`` hold Ctrl-C (and the server SIGTERM) over their imports and
    end as asked once they are done (``hive mcp``: exit 0; a command: 130)."""
    from hive.cli import HeldInterrupts

    # Python's own Ctrl-C handler, as in a process started from a terminal (a test run
    # started in the background by a shell without job control has SIGINT ignored)
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with HeldInterrupts(terminate=True) as held:
            os.kill(os.getpid(), signal.SIGINT)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.01)  # delivered: the interpreter runs handlers between bytecodes
        assert held.caught == [signal.SIGINT, signal.SIGTERM]
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
        with HeldInterrupts() as held:
            pass
        assert held.caught == []
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(1)
    finally:
        signal.signal(signal.SIGINT, before)


def test_the_stop_is_not_reported_as_an_unhandled_error(caplog: pytest.LogCaptureFixture) -> None:
    """serve_stdio stops the server by raising KeyboardInterrupt wherever the loop is: a
    task that ended with it was reported at shutdown, traceback and all ("unhandled
    exception during asyncio.run() shutdown"; test_mcp_stops_cleanly_on_ctrl_c[serving]
    failed 3 runs in 30). Any other unhandled error is still reported."""
    import asyncio

    from hive.tools.mcp_server import _unless_stopped

    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level("ERROR", logger="asyncio"):
            _unless_stopped(loop, {"message": "stopped", "exception": KeyboardInterrupt()})
            assert caplog.records == []
            _unless_stopped(loop, {"message": "broken", "exception": ValueError("x")})
            assert [record.getMessage() for record in caplog.records] == ["broken"]
    finally:
        loop.close()


def test_ctrl_c_inside_a_start_up_import_stops_hive_mcp_cleanly(
    ws: object, repo: Path, tmp_path: Path
) -> None:
    """Ctrl-C while `hive mcp` imported its own modules (pydantic-core's among them,
    which the console script's hold did not cover) ended in a Rust panic and a
    traceback, exit 1 (test_mcp_stops_cleanly_on_ctrl_c[starting] failed now and then).
    Here the signal comes while pydantic-core's extension imports ``datetime`` (made to
    import it afresh), the moment that panicked, on every run."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, signal, sys\n"
        "class Interrupt:\n"
        "    armed = False\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name == 'pydantic_core._pydantic_core':\n"
        "            for module in ('datetime', '_datetime'):\n"
        "                sys.modules.pop(module, None)\n"
        "            self.armed = True\n"
        "        elif name == 'datetime' and self.armed:\n"
        "            sys.meta_path.remove(self)\n"
        "            os.kill(os.getpid(), signal.SIGINT)\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    env = {**os.environ, **agent_env(repo, "BlueLake")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [*HIVE, "-C", str(repo), "mcp"], input=b"", capture_output=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr.decode()
    assert b"Traceback" not in done.stderr and b"panicked" not in done.stderr


@pytest.mark.parametrize(
    ("command", "module"),
    [(["mcp"], "hive.tools.mcp_server"), (["serve", "--port", "0"], "hive.serve.app")],
    ids=["mcp", "serve"],
)
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_server_asked_to_stop_while_it_imports_stops_at_once(
    ws: object, repo: Path, tmp_path: Path, command: list[str], module: str, signum: int
) -> None:
    """A server (``hive mcp``, ``hive serve``) asked to stop during its start-up imports
    finished them first (~1 s of CPU for the MCP SDK; on a loaded machine a test found it
    still importing minutes after Ctrl-C): it ends at once, exit 0, nothing said. The
    signal comes as the import of ``module``, the first the server holds signals over,
    begins; Python's import-time report shows that import never finished."""
    (tmp_path / "sitecustomize.py").write_text(
        "import os, sys\n"
        "class Interrupt:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        f"        if name == {module!r}:\n"
        "            sys.meta_path.remove(self)\n"
        f"            os.kill(os.getpid(), {int(signum)})\n"
        "        return None\n"
        "sys.meta_path.insert(0, Interrupt())\n"
    )
    env = {**os.environ, "HIVE_AGENT": "", "PYTHONPROFILEIMPORTTIME": "1"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tmp_path), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [*HIVE, "-C", str(repo), *command],
        input=b"",
        capture_output=True,
        env=env,
        timeout=120,
        preexec_fn=ctrl_c_as_at_a_terminal,
    )
    lines = done.stderr.decode().splitlines()
    assert done.returncode == 0, done.stderr.decode()
    assert [line for line in lines if not line.startswith("import time:")] == []
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines}
    assert "hive.cli" in imported and module not in imported


def test_the_stop_of_a_task_group_is_not_reported_as_an_unhandled_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Ctrl-C while serving can end the server's task group, whose KeyboardInterrupt then
    reaches the event loop wrapped in an exception group: asyncio printed it as
    "unhandled exception during asyncio.run() shutdown" with a traceback."""
    import asyncio

    from hive.tools.mcp_server import _unless_stopped

    loop = asyncio.new_event_loop()
    try:
        with caplog.at_level("ERROR", logger="asyncio"):
            group = BaseExceptionGroup("tasks", [KeyboardInterrupt()])
            _unless_stopped(loop, {"message": "stopped", "exception": group})
            assert caplog.records == []
            _unless_stopped(loop, {"message": "a real error", "exception": ValueError("x")})
            assert [r.getMessage() for r in caplog.records] == ["a real error"]
    finally:
        loop.close()


def test_an_abandoned_call_stops_waiting_for_hives_write_lock(tmp_path: Path) -> None:
    """hive's write lock (``flock``) was polled with a plain sleep: a call the MCP client
    cancelled waited out the whole lock wait (30 s by default) before its thread, and
    with it the server's stop at stdin EOF, could end. Every lock wait pauses through
    ``hive.waits.pause``, which an abandoned call's flag cuts short."""
    import contextvars
    import threading

    from hive import waits
    from hive.git.flock import try_lock

    lock = str(tmp_path / "write.lock")
    held = try_lock(lock, 0)
    assert held is not None
    abandoned = threading.Event()
    got: list[object] = []

    def call() -> None:
        waits.abandoned_when(abandoned)  # as the MCP server's worker thread does
        got.append(try_lock(lock, 3600))

    worker = threading.Thread(target=contextvars.copy_context().run, args=(call,), daemon=True)
    worker.start()
    abandoned.set()
    worker.join(timeout=60)
    held.release()
    assert not worker.is_alive(), "the abandoned call still waits for the lock"
    assert got == [None]


# ``hive mcp`` with a stop landing as its session is opened (the handlers in force
# printed first), or while it serves, turned on its way out into another error, as
# importlib's module lock turns a KeyboardInterrupt landing in an import ("cannot
# release un-acquired lock": exit 70 under load, seen once for hive serve).
_STOP_AS_THE_SESSION_OPENS = """
import os, signal, sys
import hive.cli.entry as entry
import hive.cli.mcp_start as start
real = start.open_session
def open_session(*args):
    print(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT), flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    return real(*args)
start.open_session = open_session
sys.argv = ["hive", "mcp"]
entry.console()
"""

_STOP_BROKEN_ON_ITS_WAY_OUT = """
import os, signal, sys, time
import hive.cli.entry as entry
import hive.tools.mcp_server as server
def serving(ctx):
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(60)
    except KeyboardInterrupt:
        raise RuntimeError("cannot release un-acquired lock") from None
server._serve = serving
sys.argv = ["hive", "mcp"]
entry.console()
"""


def _script(script: str, repo: Path) -> tuple[int, str, str]:
    """``python -c SCRIPT`` in ``repo`` as BlueLake: (exit code, stdout, stderr)."""
    env = {**os.environ, **agent_env(repo, "BlueLake")}
    return script_run(script, repo, env=env, timeout=120, stdin=subprocess.DEVNULL)


def test_a_stop_as_the_mcp_session_opens_waits_for_it_then_stops(ws: object, repo: Path) -> None:
    """Opening the session (a registration's commit and the imports it makes) holds
    Ctrl-C and SIGTERM, as the start-up imports do: one landing in an import there was
    not a stop but importlib's error. The session opened, the server stops: exit 0,
    nothing said."""
    code, out, err = _script(_STOP_AS_THE_SESSION_OPENS, repo)
    handlers = out.splitlines()[0]
    assert handlers.count("HeldInterrupts.hold") == 2, handlers
    assert (code, err, out.splitlines()[1:]) == (0, "", []), (code, err, out)


def test_a_stop_that_breaks_something_on_its_way_out_is_still_a_stop(
    ws: object, repo: Path
) -> None:
    """Once a stop was asked for, whatever error its KeyboardInterrupt turned into on
    its way out of the serving code is the stop: exit 0, nothing said (it was a
    traceback and exit 70)."""
    assert _script(_STOP_BROKEN_ON_ITS_WAY_OUT, repo)[::2] == (0, "")
