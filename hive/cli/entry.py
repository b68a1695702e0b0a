"""The ``hive`` console script: the command line parsed once, then the command run.

Global options (``-C DIR``, ``--actor NAME``, ``--json``) may stand before or
after the command; they are resolved once (``hive/cli/__init__.py``), before
anything is looked up: ``-C`` is made absolute (``~`` expanded) and every later
step sees the same directory. Then:

* ``hive``, ``hive --help`` and ``hive --version`` print from a table here, and a
  first word that names no command its usage error (``no_such_command``: click's
  words and suggestions, as the full CLI prints them after building every command);
* ``hive create``, ``update`` and ``close`` in their common forms are written by
  ``hive/cli/lean_write.py`` (same transaction, same results, no typer/pydantic/
  dulwich; in the main worktree or a linked one), which defers to the full CLI
  for anything else;
* ``hive reserve``, ``release``, ``mail send``, ``mail inbox`` and ``mail read`` in
  their common forms likewise by ``hive/cli/lean_coord.py`` (the same conflict test,
  file format and mail log code as the full path);
* ``hive sync [REMOTE]`` by ``hive/cli/lean_sync.py`` (nothing to do: from the refs
  after the same fetch; anything else: the full sync's own rounds, with pydantic only
  where a case needs it), which hands a reservation contest to settle over to the full
  CLI with its fetch, and defers what the full path must check or configure;
* ``hive mcp`` with ``--agent`` / ``--context`` or neither starts the MCP server
  without the full CLI (``hive/cli/mcp_start.py``, the code the full CLI's
  ``hive mcp`` runs too);
* ``hive tools run`` with ``--agent`` / ``--context`` / ``--allow-write`` or none
  runs the JSON tool-call envelope without the full CLI (``hive/cli/tools_start.py``,
  the code the full CLI's ``hive tools run`` runs too);
* ``hive ready``, ``hive list`` and ``hive show ID`` are answered from the state index
  (``hive/store/index.py``) for the state of the commit HEAD points at, read
  from git just before: the answer can never be older than HEAD. These paths
  import neither typer, pydantic, rich nor dulwich;
* ``hive hooks run pre-commit`` and ``hive hooks run commit-msg FILE`` (a person's or
  an agent's commit) are answered by ``hive/cli/leanhook.py`` (pre-commit: without the
  state index) and ``hive/cli/lean.py`` (commit-msg) when nothing can block the commit
  and the cell to attribute is sure, else by the full check in this process
  (``hive/cli/hookrun.py``), without the full CLI;
* everything else (and these two, when the index does not know HEAD's state
  yet, or an option needs the models) goes to the full CLI (``hive/cli/main.py``)
  with the normalized command line.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost)
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import ModuleType
else:
    ModuleType = type(sys)  # without importing ``types`` (~0.3 ms)


def _defer_inspect() -> None:
    """Load ``inspect`` on first use instead of at start-up (a fresh process only).

    ``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``,
    ``tokenize``, ``linecache``: the largest import of a lean command) but uses it
    only to write a signature into a class that has no docstring; hive's classes
    on the lean paths all have one. A stand-in module takes its place until an
    attribute is asked for (typer and pydantic do), which imports the real one."""
    if "inspect" in sys.modules:
        return

    class Deferred(ModuleType):
        def __getattr__(self, name: str) -> object:
            if sys.modules.get("inspect") is self:
                del sys.modules["inspect"]
            import importlib

            real = importlib.import_module("inspect")
            self.__dict__.update(real.__dict__)
            return getattr(real, name)

    stand_in = Deferred("inspect")
    stand_in.__spec__ = None
    sys.modules["inspect"] = stand_in


_defer_inspect()

from hive import __version__  # noqa: E402
from hive.cli import DEFAULT_PAGE as DEFAULT_PAGE  # noqa: E402
from hive.cli import (  # noqa: E402
    HeldInterrupts,
    Invocation,
    answer_stands,
    ending_code,
    internal_error,
    interrupted,
    missing_command,
    no_such_command,
    parse,
    reader_gone,
    say,
)

_PROCESS_EXIT = False  # set by console(): this process is the command


def console() -> None:
    """The ``hive`` console script, ``python -m hive`` and the pre-commit hook: the
    process is the command, so a lean answer ends it at once (see :func:`_exit`)."""
    global _PROCESS_EXIT
    _PROCESS_EXIT = True
    closed = _closed_streams()
    _utf8_output()
    if 1 in closed and parse(sys.argv[1:]).command != "hooks":
        sys.stderr.write(
            "error: standard output is closed: hive would have nowhere to write its answer"
            " (nothing was done; redirect it instead, e.g. >/dev/null)\n"
        )
        _exit(2)
    main()


def _utf8_output() -> None:
    """hive answers in UTF-8 whatever the locale says, as git does: standard output
    declared ASCII or Latin-1 (``PYTHONIOENCODING``, a ``LANG`` of another charset)
    ended a command showing a title in another script in an encoding error, and JSON
    is UTF-8 by its standard."""
    stream = sys.stdout
    encoding = (getattr(stream, "encoding", None) or "utf-8").lower().replace("_", "-")
    if encoding not in ("utf-8", "utf8") and hasattr(stream, "reconfigure"):
        stream.reconfigure(encoding="utf-8")


def _closed_streams() -> list[int]:
    """The standard descriptors (0, 1, 2) this process was started without, each now
    open on /dev/null: else the first file hive opens (a lock, the state index) would
    take that number, and a child (git, a hook, an agent) would read or write it as
    its standard stream. Python leaves ``sys.stdin`` & co. None for a closed one."""
    closed = []
    for number in (0, 1, 2):
        try:
            os.fstat(number)
        except OSError:
            closed.append(number)
    for number in closed:
        null = os.open(os.devnull, os.O_RDWR)
        if null != number:
            os.dup2(null, number)
            os.close(null)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own
    if sys.stdout is None:
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
    if sys.stderr is None:
        sys.stderr = open(  # noqa: SIM115
            2, "w", encoding="utf-8", errors="backslashreplace", buffering=1, closefd=False
        )
    return closed


def main() -> None:
    """The command line of ``sys.argv`` (exits with its code). Ctrl-C is held around
    the imports and the reading of the command line, and answered by the lean answer's
    and the full CLI's own guards; one landing between them (once the first hold has
    put Python's handler back) is answered here: never a traceback."""
    invocation: Invocation | None = None
    try:
        invocation = _read_command_line()
        _answer_and_end(invocation)
    except KeyboardInterrupt:
        answer_stands()  # the answer below is the last word
        if invocation is None:
            invocation = parse(sys.argv[1:])
        sys.exit(interrupted(invocation.command, as_json=invocation.json))


def _read_command_line() -> Invocation:
    """The command line, read with Ctrl-C held (in-process, or ``-m hive.cli.main``:
    Python's handler is in force). Notices of the state index go to stderr, each once (a
    lean answer may defer to the full CLI)."""
    said: set[str] = set()

    def notice(message: str) -> None:
        if message not in said:
            from hive.text import shown_lines  # a path quoted may hold control characters

            said.add(message)
            sys.stderr.write(shown_lines(message) + "\n")

    with HeldInterrupts() as held:
        import hive.store  # the sink alone: the index (sqlite3) is imported where used

        invocation = _help_of_the_command(parse(sys.argv[1:]))
        hive.store.NOTICE_SINK = notice
    if held.caught:
        raise KeyboardInterrupt
    return invocation


def _answer_and_end(invocation: Invocation) -> None:
    """The lean answer, else the full CLI; the process ends (see :func:`_exit`)."""
    code = answer(invocation)
    if code is not None:
        _exit(code)
    with HeldInterrupts() as held:  # Ctrl-C while the full CLI is imported
        from hive.cli.main import run
    if held.caught:
        raise KeyboardInterrupt
    if not _PROCESS_EXIT or invocation.command in KEEPS_TEARDOWN:
        run(invocation.argv())  # in-process (tests) or a server: the normal exit
        return
    _end(_full_cli(run, invocation))


def _help_of_the_command(invocation: Invocation) -> Invocation:
    """``hive --help COMMAND`` (or ``-h``) is ``hive COMMAND --help``, as ``git --help
    commit`` is commit's help: it printed hive's own help, the command ignored."""
    if invocation.leading in (["--help"], ["-h"]) and invocation.command is not None:
        invocation.leading = []
        invocation.args = [*invocation.args, "--help"]
    return invocation


def answer(invocation: Invocation) -> int | None:
    """The lean answer's exit code, or None for the full CLI; what stops a lean answer
    is worded as the full CLI words it (``cli/main.py run``): never a traceback."""
    try:
        if invocation.unvalued is not None:
            return None  # the full CLI says which option needs a value
        code = dispatch(invocation)
        if code is None and invocation.command == "hooks":
            from hive.cli.hookrun import hook

            code = hook(invocation)  # what the quick check could not decide
        if code is not None:
            answer_stands()  # one that wrote nothing (a hook's silent pass) has answered too
        return code
    except BrokenPipeError:  # `hive list | head`: the reader went away
        reader_gone()
        return 0
    except KeyboardInterrupt:
        return interrupted(invocation.command, as_json=invocation.json)
    except Exception as exc:  # the last line of defence, as the full CLI's
        return internal_error(exc, as_json=invocation.json)


def _exit(code: int) -> None:
    """End a process the lean path answered (and the full CLI's, :func:`_end`): output
    flushed, then ``os._exit``.

    Everything the command did is already on disk (git objects, refs, the index,
    committed SQLite transactions); skipping the interpreter's teardown also
    skips SQLite's checkpoint-on-close, which would fsync the state index's WAL
    and database and delete the WAL (~4 fsyncs, ~30 ms on this kind of disk) in
    every process. The WAL is checkpointed by SQLite itself as it grows, and emptied
    by a write once large (``index.restart_wal``: the next process would read all of
    it); a WAL left behind is a normal, consistent state."""
    code = ending_code(code)  # a Ctrl-C Python swallowed: 130
    if not _PROCESS_EXIT:
        sys.exit(code)  # called in-process (tests): a normal exit
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BrokenPipeError:
        code = code or 0
    except OSError as exc:  # a full disk (``> /dev/full``): worded as a failed write is
        code = code or internal_error(exc)
    os._exit(code)


# Full-CLI commands that end by the interpreter's teardown: the servers (``hive serve``,
# ``hive mcp``), which end once per session and hold an event loop, its threads and
# the web app's or MCP SDK's resources until then.
KEEPS_TEARDOWN = ("serve", "mcp")


def _full_cli(run: Callable[[list[str]], None], invocation: Invocation) -> int:
    """The full CLI's exit code, Ctrl-C ignored from the moment it is known: what the
    command did stands (as :func:`hive.cli.answer_stands` says of a lean answer). A
    Ctrl-C that escapes ``run`` (one landing in its own ``except`` blocks, before its
    ``sys.exit``) is the interrupt it was, 130 and its word, never a traceback."""
    code: int | None = None
    try:
        try:
            run(invocation.argv())
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc.code)
        answer_stands()
    except KeyboardInterrupt:
        answer_stands()
        if code is None:
            code = interrupted(invocation.command, as_json=invocation.json)
    return code


def _exit_code(value: object) -> int:
    """The exit code ``sys.exit(value)`` gives: None 0, an int itself, else 1 (the
    value said on stderr, as the interpreter says it)."""
    if value is None or isinstance(value, int):
        return value or 0
    sys.stderr.write(f"{value}\n")
    return 1


def _end(code: int) -> None:
    """End a process the full CLI answered as a lean answer ends (:func:`_exit`): the
    interpreter's teardown (~30-50 ms of CPU once typer, pydantic and the commands are
    loaded: every module and object freed, SQLite's checkpoint-on-close) skipped. What
    the normal exit does that matters is done here first: the ``atexit`` handlers run
    (``logging``'s flush, ``weakref.finalize``'s: temporary directories, dulwich's
    pack files; filelock's), with Ctrl-C ignored (the command has ended). A process
    with another thread still running that is not a daemon (the interpreter would wait
    for it, and a thread pool's exit hook would wake it) ends by the normal exit."""
    import threading

    code = ending_code(code)
    main_thread = threading.main_thread()
    if any(t is not main_thread and not t.daemon for t in threading.enumerate()):
        import _signal  # type: ignore[import-not-found]  # builtin (signal imports enum)

        _signal.signal(_signal.SIGINT, _signal.default_int_handler)  # Ctrl-C ends the wait
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    _exit(code)


def dispatch(invocation: Invocation) -> int | None:
    """Answer here when possible (an exit code), else None for the full CLI."""
    if invocation.command is None:
        if invocation.json and not invocation.leading:  # a program gets JSON, not the help
            import json

            message = missing_command("hive", [])
            answer_stands()
            say(sys.stdout, json.dumps({"error": message, "code": "usage"}, indent=2) + "\n")
            say(sys.stderr, f"error: {message}\n")
            return 2
        if invocation.leading in ([], ["--help"], ["-h"]):
            _write(usage())
            return 0
        if invocation.leading == ["--version"]:
            json_line = f'{{"version": "{__version__}"}}\n'
            _write(json_line if invocation.json else f"hive {__version__}\n")
            return 0
        return None
    handler = LEAN_COMMANDS.get(invocation.command)
    if invocation.leading or not _text_arguments(invocation):
        return None  # leading tokens (``hive --version list``): the full CLI's to judge
    if handler is None:
        return _unknown(invocation)
    if _autocommit_off():
        return None
    try:
        return handler(invocation)
    except Exception as exc:
        if _index_damaged(exc):
            return None  # the full CLI rebuilds the index and answers
        raise


def _index_damaged(exc: Exception) -> bool:
    """Whether ``exc`` is SQLite's ``DatabaseError`` (a state index the full CLI
    rebuilds). Only a command that opened SQLite can raise it, so ``sqlite3`` is not
    imported for the others (the pre-commit hook's quick check)."""
    sqlite3 = sys.modules.get("_sqlite3")  # the classes ``sqlerrors`` and ``sqlite3`` give
    return sqlite3 is not None and isinstance(exc, sqlite3.DatabaseError)


def _unknown(invocation: Invocation) -> int | None:
    """A first word that names no command: its usage error, as the full CLI words it
    (which builds every command to say so); None for a command the full CLI runs."""
    from hive.ops.commandindex import WORDS

    word = invocation.command or ""
    if word in WORDS or (word and not word[:1].isalnum()):
        return None  # click reads a word starting with another character as an option
    message = no_such_command(word, WORDS)
    if invocation.json:
        from hive.jsontext import dumps

        text = dumps({"error": message, "code": "usage"}, indent=2)
        answer_stands()
        say(sys.stdout, text + "\n")
    from hive.text import shown_lines

    say(sys.stderr, f"error: {shown_lines(message)}\n")
    return 2


def usage() -> str:
    from hive.cli.commands import COMMANDS

    width = max(len(name) for name, _ in COMMANDS)
    lines = [
        "Usage: hive [-C DIR] [--actor NAME] [--json] COMMAND [ARGS]...",
        "",
        "Git-backed issue tracking and coordination for swarms of coding agents.",
        "",
        "Options (before or after the command):",
        "  -C DIR        Run as if started in DIR.",
        "  --actor NAME  Who you claim to be (default: $HIVE_AGENT); an agent proves",
        "                it with $HIVE_AGENT_TOKEN, a person is git's user.name.",
        "  --json        Print machine-readable JSON.",
        "  -h, --help    Show this message (after a command: the command's help).",
        "  --version     Print hive's version (before any command).",
        "",
        "Commands:",
        *(f"  {name.ljust(width)}  {text}" for name, text in COMMANDS),
        "",
        "Run 'hive COMMAND --help' for a command's options.",
    ]
    return "\n".join(lines) + "\n"


def _text_arguments(invocation: Invocation) -> bool:
    """Every argument is text (bytes that are not UTF-8 reach Python as lone
    surrogates, which neither SQLite nor a commit can take): else the full CLI
    names the bad value."""
    try:
        "\0".join([*invocation.args, invocation.actor or ""]).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _autocommit_off() -> bool:
    """Whether the lean paths must leave the command to the full CLI: staging mode, or
    a value the full CLI refuses (``domain/workspace.py _autocommit``)."""
    value = os.environ.get("HIVE_AUTOCOMMIT", "").strip().lower()
    return value not in ("", "1", "true", "yes", "on")


def _write(text: str) -> None:
    answer_stands()
    sys.stdout.write(text)
    sys.stdout.flush()


def _lean(module: str, name: str) -> Callable[[Invocation], int | None]:
    """``name`` of ``hive/cli/<module>.py``, imported only when that command runs."""

    def run(inv: Invocation) -> int | None:
        qualified = f"hive.cli.{module}"
        with HeldInterrupts() as held:  # Ctrl-C inside an import (pydantic-core's: a panic)
            __import__(qualified)  # not importlib: it imports warnings, for nothing here
        if held.caught:
            return interrupted(inv.command, as_json=inv.json)
        handler: Callable[[Invocation], int | None] = getattr(sys.modules[qualified], name)
        code = None
        try:
            code = handler(inv)
        finally:
            logged = sys.modules.get("hive.cli.leanlog")  # imported by a call to log
            if logged is not None:
                logged.finish(code)  # an agent's call, as the full path logs it
        return code

    return run


_PRECOMMIT = _lean("leanhook", "precommit")
_COMMIT_MSG = _lean("lean", "commit_msg_hook")


def _hooks(invocation: Invocation) -> int | None:
    """``hive hooks run pre-commit`` by the quick check of ``hive/cli/leanhook.py``,
    which imports neither the state index nor ``cli/lean.py`` (every agent's ``git
    commit`` starts it); ``hive hooks run commit-msg FILE`` (and any other form) by
    ``cli/lean.py``, whose answer reads the state index."""
    return (_PRECOMMIT if invocation.args == ["run", "pre-commit"] else _COMMIT_MSG)(invocation)


LEAN_COMMANDS: dict[str, Callable[[Invocation], int | None]] = {
    "ready": _lean("lean", "ready"),
    "list": _lean("lean", "list_cells"),
    "show": _lean("lean", "show"),
    "hooks": _hooks,
    "create": _lean("lean_write", "create"),
    "update": _lean("lean_write", "update"),
    "close": _lean("lean_write", "close"),
    "reserve": _lean("lean_coord", "reserve"),
    "release": _lean("lean_coord", "release"),
    "mail": _lean("lean_coord", "mail"),
    "mcp": _lean("mcp_start", "lean"),
    "tools": _lean("tools_start", "lean"),
    "sync": _lean("lean_sync", "sync"),
}
