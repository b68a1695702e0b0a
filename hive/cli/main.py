"""The ``hive`` command line: a thin adapter over the domain functions.

Every command builds a Workspace, calls one domain function and renders the
returned model (a table/text for people, ``--json`` for programs). Errors are
``HiveError``s rendered as one line on stderr with the class's exit code.
"""

import copy
import functools
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from hive.cli import groups, internal_error, missing_command, output, reader_gone
from hive.cli.build import add_commands
from hive.cli.common import (
    OPTIONS,
    ClickException,
    JsonFlag,
    UsageError,
    is_no_args_help,
    run_op,
    use_json,
)
from hive.ops.commandindex import COMMAND_MODULES
from hive.ops.commandindex import WORDS as WORDS

HELP = "Git-backed issue tracking and coordination for swarms of coding agents."


def _version(value: bool) -> None:
    if value:
        from hive import __version__

        output.say(f"hive {__version__}")
        raise typer.Exit(0)


def main(
    directory: Annotated[
        str, typer.Option("-C", help="Run as if started in DIR.", metavar="DIR")
    ] = ".",
    actor: Annotated[
        str | None,
        typer.Option(
            "--actor",
            help="Who you claim to be (default: $HIVE_AGENT); an agent proves it with"
            " $HIVE_AGENT_TOKEN, a person is their git user.name.",
        ),
    ] = None,
    json_output: Annotated[
        bool, typer.Option("--json", help="Print machine-readable JSON.")
    ] = False,
    version: Annotated[
        bool,
        typer.Option("--version", help="Print hive's version.", is_eager=True, callback=_version),
    ] = False,
) -> None:
    OPTIONS.directory = directory
    OPTIONS.actor = actor
    OPTIONS.json = json_output


def demo(
    keep: Annotated[
        str | None,
        typer.Option(
            "--keep", "--dir", help="Make the scratch repository here and leave it to explore."
        ),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Run a real swarm of example agents in a scratch repository and show the result.

    With --json: JSON lines, one {"event": ...} object per step, as 'hive swarm run --json'."""
    from hive.cli.demo import run_demo

    use_json(json_flag)
    try:
        result = run_op(lambda: run_demo(keep, json_mode=OPTIONS.json))
    except BrokenPipeError:  # `hive demo | head`: the reader went away (the scratch
        reader_gone()  # repository is removed all the same)
        return
    if not result.finished:
        raise typer.Exit(1)


# Cells (hive/ops/cells.py) first, so that `hive --help` lists them first; each command is
# generated from its operation's description (hive/cli/build.py), its presentation in
# hive/cli/present.py.
CELL_COMMANDS = {"create", "show", "list", "ready", "update", "start", "close", "reopen"}
CELL_COMMANDS |= {"delete", "comment", "resolve", "dep", "log"}
LATE_COMMANDS = {"blocked", "stats", "reserve", "release", "reservations"}


@functools.cache
def build(only: str | None = None) -> typer.Typer:
    """The app: every command (``only`` None), or only the command or group whose first
    word is ``only`` (one of ``WORDS``), built the same way and importing only the
    operation modules, presenters and hand-written commands it needs.

    Every app gets new groups: the steps below run in the same order either way, so a
    group lists its commands in the same order, and ``hive --help`` lists commands as
    they are registered. Built once per process (tests run many commands in one)."""
    app = _AppBuilder(only)
    _add_cell_commands(app)
    _add_late_commands(app)
    _add_coordination_commands(app)
    _short_help_everywhere(app.root)
    return app.root


class _AppBuilder:
    """An app being built: its groups so far and the operations it declares (``only``:
    the command or group wanted, None for every one)."""

    def __init__(self, only: str | None) -> None:
        from hive.cli.present import PRESENTERS
        from hive.ops.catalog import operations

        self.only = only
        self.presenters = PRESENTERS
        self.root = _root()
        self.apps: dict[tuple[str, ...], typer.Typer] = {(): self.root}
        self.declared = operations() if only is None else operations(COMMAND_MODULES.get(only, ()))

    def wanted(self, *words: str) -> bool:
        return self.only is None or self.only in words

    def group(self, name: str, made: Callable[[], typer.Typer] | None = None) -> None:
        """Add group ``name`` (``made``, else an empty one) when it is wanted."""
        if self.wanted(name):
            self.apps[(name,)] = made() if made is not None else groups.group(name)
            self.root.add_typer(self.apps[(name,)], name=name)

    def generated(self, words: set[str] | tuple[str, ...]) -> None:
        """Add the commands generated from the operations whose first word is wanted."""
        chosen = set(words) if self.only is None else set(words) & {self.only}
        if chosen:
            add_commands(self.apps, self.declared, self.presenters, chosen)


def _add_cell_commands(app: _AppBuilder) -> None:
    """The cell commands first, with the dep, epic, mail, hooks and agent groups, doctor,
    gc and demo."""
    for name in ("dep", "epic", "mail", "hooks", "agent"):
        app.group(name)
    app.generated({"init"})
    app.generated(CELL_COMMANDS)
    app.generated({"mail", "hooks", "agent"})
    if app.wanted("hooks"):
        from hive.cli.coord_cmd import hooks_run_cmd

        app.apps[("hooks",)].command("run")(hooks_run_cmd)  # git's hook entry: not an operation
    app.generated({"epic"})
    app.generated({"doctor", "gc"})
    if app.wanted("demo"):
        app.root.command()(demo)


def _add_late_commands(app: _AppBuilder) -> None:
    """Registered after the cell commands so `hive --help` lists those first: the
    reservations and stats, swarm, review, tools and mcp."""
    app.generated(LATE_COMMANDS)
    app.group("swarm", lambda: _fresh(_swarm_app()))
    app.generated({"swarm", "review"})
    app.group("tools", lambda: _fresh(_tools_app()))
    if app.wanted("mcp"):
        from hive.cli.tools_cmd import mcp_cmd

        app.root.command("mcp")(mcp_cmd)


def _add_coordination_commands(app: _AppBuilder) -> None:
    """Proposals and events, ctx and queue, the seed's groups, delegate and search,
    sync, import, export and serve."""
    app.group("proposals")
    app.generated({"proposals", "events"})
    app.group("ctx")
    app.group("queue")
    app.generated({"ctx", "queue"})
    for name in groups.SEED_GROUPS:
        app.group(name)
    app.generated({*groups.SEED_GROUPS, "delegate", "search"})
    app.group("import")
    app.group("export")
    app.generated({"sync", "import", "export"})
    if app.wanted("serve"):
        from hive.cli.serve_cmd import serve_cmd

        app.root.command("serve")(serve_cmd)


HELP_NAMES = {"help_option_names": ["-h", "--help"]}


def _short_help_everywhere(app: typer.Typer) -> None:
    """``-h`` is ``--help`` for every command and group, as git's: in each one's own
    context settings, so that any context made for it knows it (click keeps the first
    help option it makes for a command, so inheriting it from the root's is not enough:
    a subcommand's context made without a parent left it --help only)."""
    app.info.context_settings = {**(app.info.context_settings or {}), **HELP_NAMES}
    for command in app.registered_commands:
        command.context_settings = {**(command.context_settings or {}), **HELP_NAMES}
    for group in app.registered_groups:
        group.context_settings = {**(group.context_settings or {}), **HELP_NAMES}
        if group.typer_instance is not None:
            _short_help_everywhere(group.typer_instance)


def _root() -> typer.Typer:
    root = typer.Typer(
        rich_markup_mode=None,
        name="hive",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
    )
    root.callback()(main)
    return root


def _swarm_app() -> typer.Typer:
    from hive.cli.swarm_cmd import swarm_app

    return swarm_app


def _tools_app() -> typer.Typer:
    from hive.cli.tools_cmd import tools_app

    return tools_app


def _fresh(group: typer.Typer) -> typer.Typer:
    """A copy of a hand-written group (its commands registered where it is defined) that
    the commands generated from operations can be added to, leaving the original as it is."""
    made = copy.copy(group)
    made.registered_commands = list(group.registered_commands)
    made.registered_groups = list(group.registered_groups)
    return made


def __getattr__(name: str) -> typer.Typer:
    """``app``: the whole CLI (help, docs and tests), built on first use."""
    if name == "app":
        return build()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def focused_app(argv: list[str]) -> typer.Typer:
    """The app with only the command ``argv`` names (the whole app for help or typos).

    typer builds a click command for every registered function on each run (~1.5 ms
    each), and the whole app imports every operation module with its models; a
    one-command app starts faster and behaves the same."""
    name = _command_name(argv)
    if name is None or name not in WORDS:
        return build()
    return build(name)


@functools.cache
def _click_command(app: typer.Typer) -> Any:
    """The click command of ``app`` (one of ``build``'s, themselves built once): typer
    makes it anew from the registered functions on each call (0.3-4 ms: every
    parameter's signature and type hints), the same tree each time; a process that
    runs several commands (the tests run thousands in one) makes it once."""
    return typer.main.get_command(app)


def _command_name(argv: list[str]) -> str | None:
    from hive.cli import parse

    return parse(argv).command


def _command_path(command: Any, argv: list[str]) -> str | None:
    """``hive mail send`` of ``hive mail send --to``: the command a usage error that
    click gives no context (an option's missing value) is about, for its help; None
    for a global option without its value (``hive list -C``: said as the lean path
    says it, hive/cli/entry.py)."""
    from hive.cli import parse

    invocation = parse(argv)
    if invocation.unvalued is not None:
        return None
    words = ["hive"]
    for word in [invocation.command, *invocation.args] if invocation.command else []:
        command = getattr(command, "commands", {}).get(word)
        if command is None:
            break
        words.append(word)
    return " ".join(words)


def _option_word(message: str, argv: list[str]) -> str | None:
    """``hive help``, ``hive version``: said as what to type (click offered 'permissions'
    for 'version'), or None for any other usage error."""
    from hive.cli import OPTION_WORDS, parse

    word = parse(argv).command
    if word not in OPTION_WORDS or not message.startswith(f"No such command '{word}'"):
        return None
    return f"No such command '{word}': {OPTION_WORDS[word]}"


def _dash_text_hint(message: str, argv: list[str]) -> str:
    """``hive create "-fix the login"``: click reads the title as options (``No such
    option: -f``); a word with a space is no option, so say how to give it."""
    from hive.text import shell_word

    words = argv[: argv.index("--")] if "--" in argv else argv
    text = next((w for w in words if w.startswith("-") and any(c.isspace() for c in w)), None)
    if text is None or not message.startswith("No such option"):
        return ""
    return f"; a text starting with '-' goes after '--' (... -- {shell_word(text)})"


def _only_command_hint(exc: Any, message: str, argv: list[str]) -> str:
    """``hive import issues.jsonl``: a group of one command (``import``, ``export``)
    given what names none of its commands is given that command's name first."""
    from hive.text import shell_word

    ctx = exc.ctx
    names = list(getattr(getattr(ctx, "command", None), "commands", {}))
    if len(names) != 1 or not message.startswith("No such command") or "Did you mean" in message:
        return ""  # click names the command when the word is close to it
    if ctx.info_name not in argv:
        return ""
    after = argv[argv.index(ctx.info_name) + 1 :]
    word = next((w for w in after if not w.startswith("-")), None)
    if word is None:
        return ""
    return f"; did you mean '{ctx.command_path} {names[0]} {shell_word(word)}'?"


def _usage_error(exc: Any, argv: list[str], command: Any) -> int:
    """Render a usage error as one line (plus JSON with ``--json``); exit code 2."""
    wants_json = _wants_json(argv)
    if is_no_args_help(exc) and not wants_json:
        if exc.format_message().strip():  # plain click: the help text is the message
            with output.to_reader():  # `hive mail | head -1`: the reader may go away
                sys.stdout.write(exc.format_message().rstrip("\n") + "\n")
        return int(exc.exit_code)
    if is_no_args_help(exc):  # ``hive --json dep``: a program gets JSON, not the help
        message = missing_command(exc.ctx.command_path, exc.ctx.command.list_commands(exc.ctx))
    else:
        message = " ".join(exc.format_message().split())
        path = exc.ctx.command_path if exc.ctx is not None else _command_path(command, argv)
        message += f" (see '{path} --help')" if path else ""
        message = _option_word(message, argv) or message + _dash_text_hint(message, argv)
        message += _only_command_hint(exc, message, argv)
    if wants_json:
        with output.to_reader():
            output.emit_json({"error": message, "code": "usage"})
    output.err(f"error: {message}")
    return 2


def run(argv: list[str] | None = None) -> None:
    """The full CLI (``hive/cli/entry.py`` parses global options first and passes the
    normalized command line): no traceback ever reaches the terminal."""
    from hive.cli import HeldInterrupts, ending_code, parse

    # `python -m hive.cli.main`: its imports are behind it, and Python's own Ctrl-C
    # handler takes over from hive's process-start one (HeldInterrupts puts it back);
    # the command line is read with Ctrl-C held: before the guard below, a
    # KeyboardInterrupt would be a traceback.
    with HeldInterrupts() as held:
        if argv is None:
            argv = parse(sys.argv[1:]).argv()
    if held.caught:
        sys.exit(_interrupted(argv))
    sys.exit(ending_code(_run(argv)))


def _run(argv: list[str]) -> int:
    """The exit code of the full CLI's answer to ``argv``."""
    command = None
    try:
        command = _click_command(focused_app(argv))
        code = _main(command, argv)
        if code == 130:  # Ctrl-C (typer turns it into exit code 130): 0 for a server
            return _interrupted(argv)
        return code if isinstance(code, int) else 0
    except UsageError as exc:
        return _usage_error(exc, argv, command)
    except ClickException as exc:
        output.err(f"error: {' '.join(exc.format_message().split())}")
        code = exc.exit_code
        return code if isinstance(code, int) else 1
    except typer.Abort:
        output.err("aborted")
        return 1
    except KeyboardInterrupt:
        return _interrupted(argv)
    except Exception as exc:  # last line of defence; HiveErrors are handled in run_op
        return internal_error(exc, as_json=_wants_json(argv))


def _main(command: Any, argv: list[str]) -> Any:
    """``command.main``, with a reader that went away while click printed (the help of
    ``hive list --help | head -1``) ended as hive ends it (exit 0, nothing said): click's
    own way is to wrap the standard streams and exit 1, which fails a ``set -o pipefail``
    script where ``hive list | head -1`` passes. Hive's own output handles it itself
    (``hive.cli.reader_gone``)."""
    streams = sys.stdout, sys.stderr
    try:
        return command.main(args=argv, prog_name="hive", standalone_mode=False)
    except SystemExit:
        if sys.stdout is streams[0]:
            raise  # not click's closed-pipe exit: its streams are hive's
        sys.stdout, sys.stderr = streams
        reader_gone()
        return 0


def _wants_json(argv: list[str]) -> bool:
    """``--json`` among the (normalized) global options: not after ``--``."""
    return "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv


def _interrupted(argv: list[str]) -> int:
    """Ctrl-C's exit code for ``argv`` (its word, and under ``--json`` its JSON)."""
    from hive.cli import interrupted

    return interrupted(_command_name(argv), as_json=_wants_json(argv))


if __name__ == "__main__":
    run()
