"""The command-line surface. Here: the command line parsed once, global options
(``-C DIR``, ``--actor NAME``, ``--json``) taken out wherever they stand and
resolved, for the console script (``entry.py``), the lean commands (``lean*.py``)
and the full CLI (``main.py``) alike. Standard library only, and in the package's
own module: every process imports it, so it costs no extra module."""

from __future__ import annotations

import _signal  # type: ignore[import-not-found]  # builtin, loaded at start-up (see HeldInterrupts)
import os
import sys

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import TextIO

VALUED_GLOBALS = ("-C", "--actor")
DEFAULT_PAGE = 50  # `hive list` shows this many cells unless --limit or --all


class Invocation:
    """A command line with its global options taken out and resolved (a plain class:
    a dataclass costs a compile at every start-up)."""

    __slots__ = ("actor", "args", "command", "directory", "json", "leading", "unvalued")

    def __init__(self) -> None:
        self.directory: str = "."
        self.actor: str | None = None
        self.json = False
        self.command: str | None = None
        self.args: list[str] = []
        self.leading: list[str] = []  # non-global tokens before the command
        self.unvalued: str | None = None  # a valued global option last, without its value

    def argv(self) -> list[str]:
        """The normalized command line: globals first, then the command as given."""
        front = ["-C", self.directory]
        if self.actor is not None:
            front += ["--actor", self.actor]
        if self.json:
            front.append("--json")
        if self.unvalued is not None:  # the root parser says it needs a value
            return [*front, *self.leading, self.unvalued]
        command = [self.command] if self.command is not None else []
        return [*front, *self.leading, *command, *self.args]


def parse(argv: list[str]) -> Invocation:
    """Take global options out of ``argv``, wherever they stand (not after ``--``)."""
    found = Invocation()
    position = 0
    while position < len(argv):
        token = argv[position]
        if token == "--":
            (found.args if found.command is not None else found.leading).extend(argv[position:])
            break
        taken = _take_global(found, argv, position)
        if taken:
            position += taken
            continue
        if found.command is None and not token.startswith("-"):
            found.command = token
        elif found.command is None:
            found.leading.append(token)
        else:
            found.args.append(token)
        position += 1
    from hive.record import suppress  # not contextlib: a lean command's start-up

    with suppress(FileNotFoundError):  # the current directory was removed: see discover
        found.directory = os.path.abspath(found.directory)
    return found


def _chained(directory: str, value: str) -> str:
    """Where ``-C value`` leads after the ``-C`` options before it, as in git: a relative
    one is taken from the one before (``-C ~/code -C app``), an empty one changes nothing;
    ``~`` is the home directory (also where the shell leaves it, ``-C '~/app'``)."""
    return os.path.join(directory, os.path.expanduser(value))


def _take_global(found: Invocation, argv: list[str], position: int) -> int:
    """How many tokens at ``position`` are a global option (recorded in ``found``)."""
    token = argv[position]
    if token in VALUED_GLOBALS and position + 1 < len(argv):
        value = argv[position + 1]
        if token == "-C":
            found.directory = _chained(found.directory, value)
        else:
            found.actor = value
        return 2
    if token in VALUED_GLOBALS:  # the last token: ``hive list -C`` (no directory given)
        found.unvalued = token
        return 1
    if token.startswith("--actor="):
        found.actor = token.partition("=")[2]
        return 1
    if token.startswith("-C") and token[2:3] not in ("", "-"):
        found.directory = _chained(found.directory, token[2:])
        return 1
    if token == "--json":
        found.json = True
        return 1
    return 0


STOPPED_BY_CTRL_C = ("mcp", "serve")  # servers: Ctrl-C is how they are stopped, not a failure


class HeldInterrupts:
    """Ctrl-C (and with ``terminate``, SIGTERM) recorded instead of raised while start-up
    imports run: a KeyboardInterrupt raised inside an import ends in a traceback, or,
    inside a compiled module's (pydantic-core's), in a Rust panic. ``caught`` says
    whether one came; the caller ends as Ctrl-C ends it (:func:`interrupted`). Only
    around imports and setup: a command that waits (a lock, a server) must stay
    interruptible. ``_signal``: ``signal`` imports ``enum`` (~5 ms of a lean start).

    ``server``: a server starting (``hive mcp``, ``hive serve``), asked to stop: it ends
    at once, exit 0, as it ends when asked while it serves. It has written nothing yet,
    and its imports (~1 s of CPU for the MCP SDK) need not finish first: on a loaded
    machine they took minutes, all that time after Ctrl-C or SIGTERM."""

    __slots__ = ("caught", "numbers", "previous", "server")

    def __init__(self, *, terminate: bool = False, server: bool = False) -> None:
        self.numbers = [_signal.SIGINT, _signal.SIGTERM] if terminate else [_signal.SIGINT]
        self.caught: list[int] = []
        self.previous: list[object] = []
        self.server = server

    def hold(self, signum: int, frame: object) -> None:
        if self.server:
            os._exit(0)  # between two bytecodes, never inside a compiled module's import
        self.caught.append(signum)

    def __enter__(self) -> HeldInterrupts:
        try:
            self.previous = [_signal.signal(number, self.hold) for number in self.numbers]
        except ValueError:  # not the main thread (an in-process caller): nothing to hold
            self.numbers = []
        # The process-start handler (hive/__init__.py) is not put back: from here on
        # the entry point handles Ctrl-C (KeyboardInterrupt, cleanly).
        self.previous = [_taken_over(handler) for handler in self.previous]
        return self

    def __exit__(self, *exc: object) -> None:
        for number, handler in zip(self.numbers, self.previous, strict=True):
            _signal.signal(number, handler)


def _taken_over(handler: object) -> object:
    """``handler``, or Python's own Ctrl-C handler in place of hive's process-start one."""
    import hive  # the package's own module (hive/__init__.py), loaded before this one

    return _signal.default_int_handler if handler is hive._interrupted_at_start else handler


def take_interrupts() -> None:
    """An entry point is ready: Ctrl-C raises KeyboardInterrupt again (which it turns
    into exit code 130), instead of ending the process at once (hive/__init__.py)."""
    import hive

    if _signal.getsignal(_signal.SIGINT) is hive._interrupted_at_start:
        _signal.signal(_signal.SIGINT, _signal.default_int_handler)


def interrupted(command: str | None, *, as_json: bool = False) -> int:
    """The exit code for Ctrl-C: 0 for a server asked to stop, else 130 (and a word;
    under ``--json`` also the error object on standard output, as every error's). A
    Ctrl-C Python swallowed (``hive._SWALLOWED``) is answered by this too."""
    import hive

    hive._SWALLOWED = False
    if command in STOPPED_BY_CTRL_C:
        return 0
    say(sys.stderr, "interrupted\n")
    if as_json:
        json_error("interrupted", "interrupted")
    return 130


def ending_code(code: int) -> int:
    """The exit code a process ends with: ``code``, or Ctrl-C's (130 and its word; a
    server's 0) when a Ctrl-C Python swallowed (``hive._interrupt_again``) was never
    answered, because the command ended, or ignored Ctrl-C once its answer stood,
    before the Ctrl-C was delivered again. Its answer may be written already: only the
    word is said (a second JSON document would spoil the first)."""
    import hive

    if not hive._SWALLOWED:
        return code
    return interrupted(hive._command_word())


def answer_stands() -> None:
    """The command's answer is about to be written (its work, if any, is done): a
    Ctrl-C from here to the process's end changes nothing, so it is ignored. One
    landing as the answer was written (under load: on its flush, or on the return
    to the entry point) ended a command that had answered in 130 and "interrupted",
    under ``--json`` with the error object after the answer's (two documents); one
    on the call into the exit, in a traceback. Only in a process the console script
    started (``hive.cli.entry.console``): an in-process caller (tests) keeps its own
    Ctrl-C handling."""
    entry = sys.modules.get("hive.cli.entry")
    if entry is not None and entry._PROCESS_EXIT:
        _ignore_ctrl_c()


def _ignore_ctrl_c() -> None:
    """SIGINT ignored from here on; a Ctrl-C already pending (``signal.signal`` raises
    it first) is taken as given, and ignored too."""
    for _ in range(3):
        try:
            _signal.signal(_signal.SIGINT, _signal.SIG_IGN)
            return
        except KeyboardInterrupt:
            continue


def json_error(message: str, code: str) -> None:
    """``{"error": message, "code": code}`` on standard output, as ``--json`` prints
    every error (a last line of defence: nothing is imported for it)."""
    from json import dumps

    from hive.record import suppress  # not contextlib: a lean command's start-up

    with suppress(OSError):  # the reader may be gone already
        sys.stdout.write(dumps({"error": message, "code": code}, indent=2) + "\n")
        sys.stdout.flush()


def reader_gone(stream: TextIO | None = None) -> None:
    """The reader of standard output (or of ``stream``: standard error) went away
    (``hive show A B C | head -1``): the rest of the output is dropped, and the command
    ends as it would have (not exit 1)."""
    from hive.record import suppress  # not contextlib: a lean command's start-up

    with suppress(OSError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), (stream or sys.stdout).fileno())


def say(stream: TextIO, text: str) -> None:
    """``text`` written to ``stream`` and flushed, where a reader that went away
    (``hive show X 2>&1 | head -0``) is :func:`reader_gone`: what reports an error says
    it with this, so that its exit code stands whether or not its words were read (a
    refusal ended 0, a success under ``set -o pipefail``)."""
    try:
        stream.write(text)
        stream.flush()
    except BrokenPipeError:
        reader_gone(stream)


def internal_error(exc: Exception, *, as_json: bool = False) -> int:
    """The last line of defence of a lean command, as the full CLI's (``cli/main.py
    run``): one line and exit code 70 (under ``--json`` also the error object, code
    ``internal_error`` as the tools say it); raised again (a traceback) with HIVE_DEBUG
    set."""
    if os.environ.get("HIVE_DEBUG"):
        raise exc
    from hive.errors import not_a_bug

    known = not_a_bug(exc)  # a full disk, a damaged repository
    if known is not None:
        say(sys.stderr, f"error: {known.message}\n")
        if as_json:
            json_error(known.message, known.code)
        return known.exit_code
    name = type(exc).__name__
    from hive.text import shown_lines

    said = f"internal error: {shown_lines(f'{name}: {exc}')} (set HIVE_DEBUG=1 for details)"
    say(sys.stderr, said + "\n")
    if as_json:
        json_error(said, "internal_error")
    return 70


# Commands other tools have that hive spells as options: what to type instead.
OPTION_WORDS = {
    "help": "'hive --help' lists the commands, 'hive COMMAND --help' explains one",
    "version": "'hive --version' prints it",
}


def no_such_command(word: str, known: Iterable[str]) -> str:
    """The usage error of a first word that names no command, as the full CLI says it
    (``cli/main.py _usage_error`` of typer's ``TyperGroup.resolve_command``: click's
    message, difflib's close matches, the help to see; ``help`` and ``version`` said as
    what to type)."""
    if word in OPTION_WORDS:
        return f"No such command '{word}': {OPTION_WORDS[word]}"
    from difflib import get_close_matches

    message = f"No such command {word!r}."
    matches = get_close_matches(word, list(known))
    if matches:
        message = f"{message.rstrip('.')}. Did you mean {', '.join(repr(m) for m in matches)}?"
    return " ".join(message.split()) + " (see 'hive --help')"


def missing_command(path: str, names: list[str]) -> str:
    """The usage error of a command group given no command (``hive --json dep``): a
    program asked for JSON, so it gets an error, not the help text."""
    listed = ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)
    takes = f": '{path}' takes {listed}" if listed and len(names) <= 12 else ""
    return f"missing command{takes} (see '{path} --help')"


def stdin_text() -> str:
    """Standard input as UTF-8 text (InvalidInput naming the first byte that is not:
    decoded as the console's text stream does, such bytes became lone surrogates, which
    no store and no JSON encoder takes); a byte order mark opening it (Notepad's,
    PowerShell's) is the encoding's mark, not text, and is dropped."""
    return read_text(sys.stdin.buffer.read(), "standard input")


def read_text(data: bytes, source: str) -> str:
    """``data`` read from ``source`` as text (``hive.text.utf8_text``: a byte order mark
    dropped); InvalidInput naming ``source`` and the first byte that is not UTF-8."""
    from hive.errors import InvalidInput
    from hive.text import utf8_text

    try:
        return utf8_text(data)
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{source}: not UTF-8 text (byte {exc.start + 1})") from None
