"""The ``hive`` console script: the command line parsed once, then the command run.

Global options (``-C DIR``, ``--actor NAME``, ``--json``) may stand before or
after the command; they are resolved here, once, before anything is looked
up: ``-C`` is made absolute (``~`` expanded) and every later step sees the
same directory. Then:

* ``hive``, ``hive --help`` and ``hive --version`` print from a table here;
* ``hive ready`` and ``hive list`` are answered from the state index
  (``hive/store/index.py``) for the state of the commit HEAD points at, read
  from git just before: the answer can never be older than HEAD. These paths
  import neither typer, pydantic, rich nor dulwich;
* everything else (and these two, when the index does not know HEAD's state
  yet, or an option needs the models) goes to the full CLI (``hive/cli/main.py``)
  with the normalized command line.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from hive import __version__

VALUED_GLOBALS = ("-C", "--actor")
DEFAULT_PAGE = 50  # `hive list` shows this many cells unless --limit or --all


@dataclass
class Invocation:
    """A command line with its global options taken out and resolved."""

    directory: str = "."
    actor: str | None = None
    json: bool = False
    command: str | None = None
    args: list[str] = field(default_factory=list)
    leading: list[str] = field(default_factory=list)  # non-global tokens before the command

    def argv(self) -> list[str]:
        """The normalized command line: globals first, then the command as given."""
        front = ["-C", self.directory]
        if self.actor is not None:
            front += ["--actor", self.actor]
        if self.json:
            front.append("--json")
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
    found.directory = os.path.abspath(os.path.expanduser(found.directory))
    return found


def _take_global(found: Invocation, argv: list[str], position: int) -> int:
    """How many tokens at ``position`` are a global option (recorded in ``found``)."""
    token = argv[position]
    if token in VALUED_GLOBALS and position + 1 < len(argv):
        value = argv[position + 1]
        if token == "-C":
            found.directory = value
        else:
            found.actor = value
        return 2
    if token.startswith("--actor="):
        found.actor = token.partition("=")[2]
        return 1
    if token.startswith("-C") and token[2:3] not in ("", "-"):
        found.directory = token[2:]
        return 1
    if token == "--json":
        found.json = True
        return 1
    return 0


def main() -> None:
    """Console-script entry point."""
    from hive.store import index

    index.NOTICE_SINK = _notice
    invocation = parse(sys.argv[1:])
    try:
        code = dispatch(invocation)
    except BrokenPipeError:  # `hive list | head`: the reader went away
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 0
    except KeyboardInterrupt:
        code = interrupted(invocation.command)
    if code is not None:
        sys.exit(code)
    try:
        from hive.cli.main import run
    except KeyboardInterrupt:  # Ctrl-C while starting up
        sys.exit(interrupted(invocation.command))
    run(invocation.argv())


STOPPED_BY_CTRL_C = ("mcp", "serve")  # servers: Ctrl-C is how they are stopped, not a failure


def interrupted(command: str | None) -> int:
    """The exit code for Ctrl-C: 0 for a server asked to stop, else 130 (and a word)."""
    if command in STOPPED_BY_CTRL_C:
        return 0
    sys.stderr.write("interrupted\n")
    return 130


def dispatch(invocation: Invocation) -> int | None:
    """Answer here when possible (an exit code), else None for the full CLI."""
    if invocation.command is None:
        if invocation.leading in ([], ["--help"], ["-h"]):
            _write(usage())
            return 0
        if invocation.leading == ["--version"]:
            _write(f"hive {__version__}\n")
            return 0
        return None
    handler = LEAN_COMMANDS.get(invocation.command)
    if handler is None or _autocommit_off():
        return None
    import sqlite3

    from hive.cli import lean

    try:
        return handler(lean, invocation)
    except sqlite3.DatabaseError:
        return None  # the full CLI rebuilds the index and answers


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
        "  --actor NAME  Who is acting (default: $HIVE_AGENT, git user.name).",
        "  --json        Print machine-readable JSON.",
        "  --version     Print hive's version.",
        "  -h, --help    Show this message.",
        "",
        "Commands:",
        *(f"  {name.ljust(width)}  {text}" for name, text in COMMANDS),
        "",
        "Run 'hive COMMAND --help' for a command's options.",
    ]
    return "\n".join(lines) + "\n"


def _notice(message: str) -> None:
    sys.stderr.write(message + "\n")


def _autocommit_off() -> bool:
    value = os.environ.get("HIVE_AUTOCOMMIT", "").strip().lower()
    return value in ("0", "false", "no", "off")


def _write(text: str) -> None:
    sys.stdout.write(text)
    sys.stdout.flush()


LEAN_COMMANDS: dict[str, Callable[..., int | None]] = {
    "ready": lambda lean, inv: lean.ready(inv),
    "list": lambda lean, inv: lean.list_cells(inv),
    "hooks": lambda lean, inv: lean.precommit(inv),
}
