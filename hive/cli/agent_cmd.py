"""CLI for agent identities: register (issue a credential), list, retire, whoami."""

import os
from typing import Annotated

import typer

from hive.cli import output
from hive.cli.common import OPTIONS, JsonFlag, ReasonOption, run_op, show, use_json, workspace

agent_app = typer.Typer(help="Agent identities and their credentials.", no_args_is_help=True)


def register_and_show(
    name: str | None, task: str | None, *, replace: bool, json_flag: bool
) -> None:
    """Register ``name`` (default --actor / HIVE_AGENT) and print the credential."""
    from hive.domain.identity import register_agent

    use_json(json_flag)
    declared = name or OPTIONS.actor or os.environ.get("HIVE_AGENT") or None
    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    registered = run_op(
        lambda: register_agent(
            workspace(claim=False), name=declared, task=task, token=token, replace=replace
        )
    )

    def render() -> None:
        out = output.console()
        if registered.token is None:
            out.print(f"you are {registered.name} (credential from HIVE_AGENT_TOKEN)")
            return
        out.print(f"registered {registered.name}; its credential is shown only now:")
        output.say(f"export HIVE_AGENT={registered.name} HIVE_AGENT_TOKEN={registered.token}")

    show(registered, json_flag, render)


@agent_app.command("register")
def register_cmd(
    name: Annotated[str | None, typer.Argument(help="Agent name (generated if omitted).")] = None,
    task: Annotated[str | None, typer.Option("--task", help="What it works on.")] = None,
    replace: Annotated[
        bool,
        typer.Option(
            "--replace", help="Re-issue the credential of a registered name (people, coordinators)."
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Register an agent and print its credential (export it as HIVE_AGENT_TOKEN)."""
    register_and_show(name, task, replace=replace, json_flag=json_flag)


@agent_app.command("list")
def list_cmd(json_flag: JsonFlag = False) -> None:
    """Identities of this repository: live credentials, retired ones, mail-only names."""
    from hive.domain.identity import list_identities

    use_json(json_flag)
    found = run_op(lambda: list_identities(workspace()))

    def render() -> None:
        out = output.console()
        if not found:
            out.print("[dim]no agents registered[/dim]")
        for item in found:
            state = "retired" if item.retired_at else ("live" if item.credential else "mail only")
            role = " coordinator" if item.coordinator else ""
            out.print(f"{item.name:<24} {state:<9}{role}  {output.escape(item.session or '')}")

    show(found, json_flag, render)


@agent_app.command("retire")
def retire_cmd(
    name: Annotated[str, typer.Argument(help="The agent to retire.")],
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Retire an agent's credential (coordinators and people; the name becomes free)."""
    from hive.domain.identity import retire_agent

    use_json(json_flag)
    result = run_op(lambda: retire_agent(workspace(), name=name, reason=reason))
    show(result, json_flag, lambda: output.say(f"retired {result.name}"))


@agent_app.command("whoami")
def whoami_cmd(json_flag: JsonFlag = False) -> None:
    """Who this process acts as (agent by credential, or person by git identity)."""
    from hive.domain.identity import whoami

    use_json(json_flag)
    me = run_op(lambda: whoami(workspace()))
    role = " (coordinator)" if me.coordinator else ""
    show(me, json_flag, lambda: output.say(f"{me.name}: {me.kind}{role}"))
