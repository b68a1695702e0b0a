"""The ``hive`` command line: a thin adapter over the domain functions.

Every command builds a Workspace, calls one domain function and renders the
returned model (a table/text for people, ``--json`` for programs). Errors are
``HiveError``s rendered as one line on stderr with the class's exit code.
"""

import sys
from typing import Annotated, Any

import typer

from hive.cli import (
    DEFAULT_PAGE,
    coord_cmd,
    groups,
    internal_error,
    missing_command,
    output,
    reader_gone,
    serve_cmd,
    swarm_cmd,
    tools_cmd,
)
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
from hive.cli.present import PRESENTERS
from hive.ops.catalog import operations

PAGE = DEFAULT_PAGE

app = typer.Typer(
    rich_markup_mode=None,
    name="hive",
    help="Git-backed issue tracking and coordination for swarms of coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
dep_app = typer.Typer(
    rich_markup_mode=None, help="Dependencies between cells.", no_args_is_help=True
)
epic_app = typer.Typer(
    rich_markup_mode=None, help="Epics and their subtasks.", no_args_is_help=True
)
app.add_typer(dep_app, name="dep")
app.add_typer(epic_app, name="epic")
app.add_typer(groups.mail_app, name="mail")
app.add_typer(groups.hooks_app, name="hooks")
app.add_typer(groups.agent_app, name="agent")


def _version(value: bool) -> None:
    if value:
        from hive import __version__

        output.say(f"hive {__version__}")
        raise typer.Exit(0)


@app.callback()
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


# ----------------------------------------------------------------------- cells
# Generated from the operations' descriptions (hive/ops/cells.py); presentation in
# hive/cli/present.py.

GROUPS = {
    (): app,
    ("dep",): dep_app,
    ("epic",): epic_app,
    ("mail",): groups.mail_app,
    ("swarm",): swarm_cmd.swarm_app,
    ("ctx",): groups.ctx_app,
    ("queue",): groups.queue_app,
    ("hooks",): groups.hooks_app,
    ("agent",): groups.agent_app,
    ("proposals",): groups.proposals_app,
    ("import",): groups.import_app,
    ("export",): groups.export_app,
}
CELL_COMMANDS = {"create", "show", "list", "ready", "update", "start", "close", "reopen"}
CELL_COMMANDS |= {"delete", "comment", "resolve", "dep", "log"}
LATE_COMMANDS = {"blocked", "stats", "reserve", "release", "reservations"}
add_commands(GROUPS, operations(), PRESENTERS, {"init"})
add_commands(GROUPS, operations(), PRESENTERS, CELL_COMMANDS)
add_commands(GROUPS, operations(), PRESENTERS, {"mail", "hooks", "agent"})
groups.hooks_app.command("run")(coord_cmd.hooks_run_cmd)  # git's hook entry: not an operation


# ----------------------------------------------------------------------- epics


add_commands(GROUPS, operations(), PRESENTERS, {"epic"})


# ----------------------------------------------------------------------- history & health


add_commands(GROUPS, operations(), PRESENTERS, {"doctor", "gc"})


@app.command()
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


# Registered last so `hive --help` lists the cell commands first.
add_commands(GROUPS, operations(), PRESENTERS, LATE_COMMANDS)
app.add_typer(swarm_cmd.swarm_app, name="swarm")
add_commands(GROUPS, operations(), PRESENTERS, {"swarm", "review"})
app.add_typer(tools_cmd.tools_app, name="tools")
app.command("mcp")(tools_cmd.mcp_cmd)
app.add_typer(groups.proposals_app, name="proposals")
add_commands(GROUPS, operations(), PRESENTERS, {"proposals", "events"})
app.add_typer(groups.ctx_app, name="ctx")
app.add_typer(groups.queue_app, name="queue")
add_commands(GROUPS, operations(), PRESENTERS, {"ctx", "queue"})
for _name, _group in groups.SEED_GROUPS.items():
    GROUPS[(_name,)] = _group
    app.add_typer(_group, name=_name)
add_commands(GROUPS, operations(), PRESENTERS, {*groups.SEED_GROUPS, "delegate", "search"})
app.add_typer(groups.import_app, name="import")
app.add_typer(groups.export_app, name="export")
add_commands(GROUPS, operations(), PRESENTERS, {"sync", "import", "export"})
app.command("serve")(serve_cmd.serve_cmd)


def focused_app(argv: list[str]) -> typer.Typer:
    """The app with only the command ``argv`` names (the whole app for help or typos).

    typer builds a click command for every registered function on each run
    (~1.5 ms each); a one-command app starts faster and behaves the same.
    """
    name = _command_name(argv)
    if name is None:
        return app
    commands = [c for c in app.registered_commands if _info_name(c) == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if not commands and not groups:
        return app
    focused = typer.Typer(
        rich_markup_mode=None, add_completion=False, pretty_exceptions_enable=False
    )
    focused.info = app.info
    focused.registered_callback = app.registered_callback
    focused.registered_commands = commands
    focused.registered_groups = groups
    return focused


def _command_name(argv: list[str]) -> str | None:
    from hive.cli import parse

    return parse(argv).command


def _info_name(info: typer.models.CommandInfo) -> str | None:
    if info.name:
        return info.name
    callback = info.callback
    return callback.__name__.lower().replace("_", "-") if callback else None


def _usage_error(exc: Any, argv: list[str]) -> int:
    """Render a usage error as one line (plus JSON with ``--json``); exit code 2."""
    wants_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    if is_no_args_help(exc) and not wants_json:
        if exc.format_message().strip():  # plain click: the help text is the message
            sys.stdout.write(exc.format_message().rstrip("\n") + "\n")
        return int(exc.exit_code)
    if is_no_args_help(exc):  # ``hive --json dep``: a program gets JSON, not the help
        message = missing_command(exc.ctx.command_path, exc.ctx.command.list_commands(exc.ctx))
    else:
        message = " ".join(exc.format_message().split())
        if exc.ctx is not None:
            message += f" (see '{exc.ctx.command_path} --help')"
    if wants_json:
        output.emit_json({"error": message, "code": "usage"})
    output.err(f"error: {message}")
    return 2


def run(argv: list[str] | None = None) -> None:
    """The full CLI (``hive/cli/entry.py`` parses global options first and passes the
    normalized command line): no traceback ever reaches the terminal."""
    from hive.cli import take_interrupts

    take_interrupts()  # `python -m hive.cli.main`: its imports are behind it
    if argv is None:
        from hive.cli import parse

        argv = parse(sys.argv[1:]).argv()
    try:
        command = typer.main.get_command(focused_app(argv))
        code = command.main(args=argv, prog_name="hive", standalone_mode=False)
        if code == 130:  # Ctrl-C (typer turns it into exit code 130): 0 for a server
            from hive.cli import interrupted

            sys.exit(interrupted(_command_name(argv)))
        sys.exit(code if isinstance(code, int) else 0)
    except UsageError as exc:
        sys.exit(_usage_error(exc, argv))
    except ClickException as exc:
        output.err(f"error: {' '.join(exc.format_message().split())}")
        sys.exit(exc.exit_code)
    except typer.Abort:
        output.err("aborted")
        sys.exit(1)
    except KeyboardInterrupt:
        from hive.cli import interrupted

        sys.exit(interrupted(_command_name(argv)))
    except Exception as exc:  # last line of defence; HiveErrors are handled in run_op
        sys.exit(internal_error(exc))


if __name__ == "__main__":
    run()
