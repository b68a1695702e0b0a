"""``hive mcp``: the MCP server (``hive/tools/mcp_server.py``) started for a repository.

Without typer or click: the console script (``entry.py``) starts it directly for the
common form ``hive mcp [--agent NAME] [--context DIR]``, so an agent runtime's server
does not build the full CLI's command tree first (~0.25 s of a ~1.2 s start); the
full CLI's ``hive mcp`` (``tools_cmd.mcp_cmd``), which takes every other form
(``--help``, a mistyped option), calls the same :func:`serve`.
"""

from __future__ import annotations

import os

from hive.cli import HeldInterrupts, Invocation
from hive.cli.opening import open_workspace
from hive.cli.output import emit_json, err, to_reader

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.errors import HiveError
    from hive.tools.registry import CallContext

OPTIONS = ("--agent", "--context")


def lean(inv: Invocation) -> int | None:
    """``hive mcp`` from the console script: None (the full CLI) for any other form."""
    given = options(inv.args, OPTIONS)
    if given is None:
        return None
    return serve(inv.directory, inv.actor, inv.json, given.get("--agent"), given.get("--context"))


def options(
    args: list[str], valued: tuple[str, ...], flags: tuple[str, ...] = ()
) -> dict[str, str] | None:
    """The options of a lean command line: ``valued`` ones as ``--option VALUE`` or
    ``--option=VALUE``, ``flags`` bare (mapped to ""), each at most once; None for
    anything else (the full CLI reports it, or shows the help)."""
    found: dict[str, str] = {}
    position = 0
    while position < len(args):
        if args[position] in flags and args[position] not in found:
            found[args[position]] = ""
            position += 1
            continue
        name, equals, value = args[position].partition("=")
        if name not in valued or name in found:
            return None
        if not equals:
            if position + 1 >= len(args):
                return None
            position += 1
            value = args[position]
        found[name] = value
        position += 1
    return found


def serve(
    directory: str, actor: str | None, json_output: bool, agent: str | None, context: str | None
) -> int:
    """Serve every tool over MCP on stdin/stdout until stdin ends, Ctrl-C or SIGTERM
    (exit code 0); a refusal before serving is one line on stderr (and JSON on
    stdout with ``--json``) and its exit code."""
    from hive.errors import HiveError

    try:
        # the imports (pydantic-core, mcp, the tools): see HeldInterrupts; a signal ends
        # the server at once (``server``), else when they are done
        with HeldInterrupts(terminate=True, server=True):
            from hive.tools.mcp_server import serve_stdio
        session = f"mcp:{os.getpid()}:{os.urandom(4).hex()}"
        # opening the session (a registration's commit, the imports it makes) with the
        # signals held too: one landing in an import there was importlib's "cannot
        # release un-acquired lock", not a stop; the session opened, it stops
        with HeldInterrupts(terminate=True) as held:
            try:
                wanted = agent or actor or os.environ.get("HIVE_AGENT")
                ctx, warnings = opened_session(directory, wanted, session)
                ctx.context_dir = context_dir(directory, context)
            except HiveError as exc:
                return refused(exc, json_output)
        if held.caught:
            return 0
        for warning in warnings:
            err(f"warning: {warning}")
        if ctx.bind_error is not None:
            err(f"warning: {ctx.bind_error.message}")
        serve_stdio(ctx)  # returns on stdin EOF, Ctrl-C or SIGTERM
    except KeyboardInterrupt:  # Ctrl-C while starting: stopped as asked, not a failure
        return 0
    return 0


def opened_session(
    directory: str, wanted: str | None, session: str
) -> tuple[CallContext, list[str]]:
    """The session (:func:`open_session`) and the warnings to print at start. Outside a
    git repository the server still starts, so a client completes the MCP handshake
    and reads why: every tool call answers ``not_a_git_repository`` naming the
    directory (an exit before the handshake was a dropped connection to the client)."""
    from hive.errors import NotAGitRepository
    from hive.tools.registry import CallContext

    try:
        ctx = open_session(directory, wanted, session)
    except NotAGitRepository as exc:
        root = os.path.abspath(directory)
        return CallContext(root=root, session=session), [f"{exc.message}: {ANSWERED}"]
    return ctx, [f"{ctx.agent}: {warning}" for warning in tool_warnings(ctx)]


ANSWERED = "every tool call answers not_a_git_repository"


def open_session(directory: str, wanted: str | None, session: str) -> CallContext:
    """The calling agent: proven by the credential in $HIVE_AGENT_TOKEN, else registered
    now under ``wanted`` (a name held by someone else leaves the session unbound, and
    calls that act say why), else unbound until swarmmail_init."""
    from hive.tools.registry import open_context

    opened = open_workspace(directory, None, claim=False)
    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    return open_context(opened.root, agent=wanted or None, token=token, session=session)


def context_dir(directory: str, given: str | None) -> str | None:
    """``--context DIR``: an existing directory, as a real absolute path."""
    from hive.errors import InvalidInput

    if given is None:
        return None
    real = os.path.realpath(os.path.join(directory, os.path.expanduser(given)))
    if not os.path.isdir(real):
        raise InvalidInput(f"--context {given}: not a directory")
    return real


def tool_warnings(ctx: CallContext) -> list[str]:
    """The unknown names in the calling agent's tools list (skipped, seed 004)."""
    from hive.tools.registry import agent_tool_names

    return agent_tool_names(ctx)[1]


def refused(exc: HiveError, json_output: bool) -> int:
    if json_output:
        with to_reader():  # the refusal's code stands though its reader is gone
            emit_json(exc.to_dict())
    err(f"error: {exc.message}")
    return exc.exit_code
