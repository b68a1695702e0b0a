"""What every CLI command shares: global options, the workspace, error rendering."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar

import typer

from hive.cli import output
from hive.cli.opening import default_session as default_session
from hive.cli.opening import open_workspace

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

T = TypeVar("T")


@dataclass
class Options:
    """Global options given before the command (``-C``, ``--actor``, ``--json``)."""

    directory: str = "."
    actor: str | None = None
    json: bool = False


OPTIONS = Options()


def _click_class(name: str) -> type[Exception]:
    """click's exception class ``name``, reached through typer's public
    ``BadParameter`` (typer vendors its own click; its module is private)."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


UsageError: Any = _click_class("UsageError")
ClickException: Any = _click_class("ClickException")


def usage_error(message: str) -> NoReturn:
    """A usage error (exit 2, code ``usage``), reported like click's own."""
    raise UsageError(message)


def is_no_args_help(exc: BaseException) -> bool:
    """click's "no arguments: show the help" signal (a UsageError subclass)."""
    return any(c.__name__ == "NoArgsIsHelpError" for c in type(exc).__mro__)


JsonFlag = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ForceFlag = Annotated[
    bool,
    typer.Option(
        "--force", help="Override another's ownership (coordinators and people; needs --reason)."
    ),
]
ReasonOption = Annotated[
    str | None, typer.Option("--reason", help="Why (required for an override; recorded).")
]


def workspace(*, claim: bool = True) -> Workspace:
    """The repository of ``-C`` (see :func:`hive.cli.opening.open_workspace`), as
    whoever this process proves to be; ``claim=False``: registration commands, where
    the name asked for is the one to register, not who is acting."""
    return open_workspace(OPTIONS.directory, OPTIONS.actor, claim=claim)


def read_source(source: str, what: str = "the input") -> str:
    """The text of file ``source`` (``~`` expanded: the shell leaves ``--from=~/x``
    alone), or of standard input for ``-`` (InvalidInput when it cannot be read), a
    byte order mark opening it dropped; at a terminal, ``-`` first says it is reading
    ``what`` (else a person sees nothing happen)."""
    import sys

    from hive.errors import InvalidInput

    if source == "-":
        from hive.cli import stdin_text

        if sys.stdin.isatty():
            output.err(f"reading {what} from standard input (Ctrl-D ends)")
        return stdin_text()
    from hive.cli import read_text

    try:
        with open(os.path.expanduser(source), "rb") as handle:
            data = handle.read()
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror or exc}") from None
    return read_text(data, source)


def run_op(operation: Callable[[], T]) -> T:
    """Run a domain call; HiveErrors become a one-line message and an exit code."""
    from hive.errors import HiveError

    try:
        return operation()
    except HiveError as exc:
        if OPTIONS.json:
            with output.to_reader():  # the error's code stands though its reader is gone
                output.emit_json(exc.to_dict())
        output.err(f"error: {exc.message}")
        raise typer.Exit(exc.exit_code) from None


def show(value: Any, json_flag: bool, render: Callable[[], None]) -> None:
    """Print ``value`` as JSON when asked, else call ``render``."""
    if json_flag or OPTIONS.json:
        output.emit_json(value)
    else:
        render()


def use_json(flag: bool) -> None:
    if flag:
        OPTIONS.json = True
