"""``hive tools run``: the JSON tool-call envelope read from stdin, its transcript
printed on stdout.

Without typer or click: the console script (``entry.py``) runs it directly for the
common form ``hive tools run [--agent NAME] [--context DIR] [--allow-write]``, so an
agent calling a tool through the shell does not build the full CLI's command tree
first; the full CLI's ``hive tools run`` (``tools_cmd.run_cmd``), which takes every
other form (``--help``, a mistyped option), calls the same :func:`run_calls`.
"""

from __future__ import annotations

import json
import os
import sys

from hive.cli import Invocation, internal_error, stdin_text
from hive.cli.mcp_start import context_dir, open_session, options, refused, tool_warnings
from hive.cli.output import err
from hive.times import json_default

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any

    from hive.tools.registry import CallContext

VALUED = ("--agent", "--context")
FLAGS = ("--allow-write",)


def lean(inv: Invocation) -> int | None:
    """``hive tools run`` from the console script: None (the full CLI) for any other
    form or subcommand."""
    if inv.args[:1] != ["run"]:
        return None
    given = options(inv.args[1:], VALUED, FLAGS)
    if given is None:
        return None
    try:
        return run_calls(
            inv.directory,
            inv.actor,
            inv.json,
            given.get("--agent"),
            "--allow-write" in given,
            given.get("--context"),
        )
    except Exception as exc:
        return internal_error(exc, as_json=inv.json)


def run_calls(
    directory: str,
    actor: str | None,
    json_output: bool,
    agent: str | None,
    allow_write: bool,
    context: str | None,
) -> int:
    """Run the tool calls of the envelope on stdin and print the transcript (exit code
    non-zero when a call failed: :func:`transcript_exit_code`); a refusal before
    running is one line on stderr (and JSON on stdout with ``--json``) and its exit
    code."""
    from hive.cli.opening import default_session
    from hive.errors import HiveError

    try:
        wanted = agent or actor or os.environ.get("HIVE_AGENT")
        ctx = open_session(directory, wanted, default_session())
        ctx.context_dir = context_dir(directory, context)
    except HiveError as exc:
        return refused(exc, json_output)
    profile_warnings = _profile_warnings(ctx)
    from hive.tools.envelope import run_envelope

    if sys.stdin.isatty():  # else a person sees nothing happen
        err('reading a tool-call envelope {"tool_calls": [...]} from standard input (Ctrl-D ends)')
    try:
        text = stdin_text()
    except HiveError as exc:
        return refused(exc, json_output)
    transcript = run_envelope(ctx, text)
    _add_session_notes(ctx, transcript, profile_warnings)
    if allow_write:
        _apply_approved_writes(ctx, transcript)
    _print_transcript(transcript)
    return transcript_exit_code(transcript)


def _profile_warnings(ctx: CallContext) -> list[str]:
    """What the agent's tool profile warns of, each line naming the agent; none when
    the profile itself is bad (every call then answers with its line)."""
    from hive.errors import HiveError

    try:
        return [f"{ctx.agent}: {w}" for w in tool_warnings(ctx)]
    except HiveError:  # a bad agents: section: every call answers with its line
        return []


def _add_session_notes(
    ctx: CallContext, transcript: dict[str, Any], profile_warnings: list[str]
) -> None:
    """Add to ``transcript`` why the session is bound to no agent, the profile's
    warnings and a credential the calls issued."""
    if ctx.bind_error is not None:  # "agent": null says nothing of why
        profile_warnings.insert(0, ctx.bind_error.message)
    if profile_warnings:  # as hive mcp says on stderr: the unknown tools skipped
        transcript["warnings"] = [*profile_warnings, *transcript.get("warnings", [])]
    credential = issued_credential(ctx, transcript)
    if credential is not None:
        transcript["credential"] = credential


def _apply_approved_writes(ctx: CallContext, transcript: dict[str, Any]) -> None:
    """Apply the file writes the calls had approved (``--allow-write``), saying in the
    transcript what was applied, or why nothing was."""
    from hive.domain.files import apply_approved
    from hive.errors import HiveError
    from hive.tools.registry import write_check

    try:
        transcript["applied"] = apply_approved(ctx.root, ctx.state_dir, write_check(ctx))
    except HiveError as exc:  # the transcript is still printed
        transcript["applied"] = []
        transcript["apply_error"] = exc.to_dict()


def _print_transcript(transcript: dict[str, Any]) -> None:
    """Print ``transcript`` as one JSON document on stdout."""
    # An agent reads it from a pipe and pays for every byte: compact JSON there (as
    # ``hive tools schema`` prints), indented only for a person at a terminal.
    layout: dict[str, Any] = {"indent": 2} if sys.stdout.isatty() else {"separators": (",", ":")}
    from hive.jsontext import dumps

    text = dumps(transcript, default=json_default, **layout)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a file name that is not UTF-8: its bytes escaped
        from hive.text import utf8_clean

        text = dumps(utf8_clean(transcript), default=json_default, **layout)
    sys.stdout.write(text + "\n")


def transcript_exit_code(transcript: dict[str, Any]) -> int:
    """0 when every call succeeded; else the exit code (docs/cli.md) of the envelope's
    own error, or of the first call that failed, or of a failed ``--allow-write``."""
    from hive.errors import exit_code_of

    failed = [transcript] if "error" in transcript else []
    failed += [r for r in transcript.get("results", []) if isinstance(r, dict) and "error" in r]
    failed += [transcript["apply_error"]] if "apply_error" in transcript else []
    if not failed:
        return 0
    code = failed[0].get("code")  # rate_limited carries the HTTP-like code 429 instead
    return exit_code_of(code if isinstance(code, str) else str(failed[0].get("error")))


def issued_credential(ctx: CallContext, transcript: dict[str, Any]) -> dict[str, str] | None:
    """The credential this envelope's session was issued (``--agent NAME`` registering
    NAME now), unless a result (swarmmail_init) showed it already: it dies with this
    process, and without it no later envelope could act as NAME."""
    if not (ctx.issued and ctx.token and ctx.agent):
        return None
    if ctx.token in json.dumps(transcript.get("results", []), default=str):
        return None
    from hive.text import shell_word

    return {
        "agent": ctx.agent,
        "token": ctx.token,
        "note": f"{ctx.agent} was registered for this envelope and its credential is shown"
        f" only now; to run later envelopes (and hive, git commit) as it: export"
        f" HIVE_AGENT={shell_word(ctx.agent)} HIVE_AGENT_TOKEN=<token>",
    }
