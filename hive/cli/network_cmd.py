"""CLI for seed 003's coordination: the blackboard, permission grants, project
memory, delegation, swarm state, synthesis and the QA harness."""

import json
from typing import Annotated, Any, NoReturn

import typer

from hive.cli import output
from hive.cli.common import JsonFlag, read_source, run_op, show, use_json, workspace
from hive.cli.ctx_cmd import compact, parse_json_arg

blackboard_app = typer.Typer(
    help="The shared blackboard: entries with a TTL.", no_args_is_help=True
)
permissions_app = typer.Typer(
    help="Grants for protected resources (request_permission).", no_args_is_help=True
)
memory_app = typer.Typer(
    help="Project memory (.hive/context.yaml): goals, stack, decisions,"
    " milestones, banned approaches.",
    no_args_is_help=True,
)
qa_app = typer.Typer(
    help="The QA harness: score entries, compare with the last run.", no_args_is_help=True
)


def _refuse(message: str) -> NoReturn:
    """Report a bad command-line argument like any other HiveError (exit 2)."""
    from hive.errors import InvalidInput

    def fail() -> None:
        raise InvalidInput(message)

    run_op(fail)
    raise typer.Exit(2)


def _read_json_source(source: str) -> Any:
    from hive.errors import InvalidInput

    text = read_source(source)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise InvalidInput(f"{source}: not JSON: {exc}") from None


# ------------------------------------------------------------------ blackboard


@blackboard_app.command("set")
def bb_set_cmd(
    key: Annotated[str, typer.Argument()],
    value: Annotated[str, typer.Argument(help="JSON (plain text is stored as a string).")],
    ttl: Annotated[float | None, typer.Option("--ttl", help="Seconds to live.")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Write an entry."""
    from hive.domain.blackboard import update_blackboard

    use_json(json_flag)
    done = run_op(
        lambda: update_blackboard(workspace(), key=key, value=parse_json_arg(value), ttl=ttl)
    )
    until = f" until {done.expires_at}" if done.expires_at else ""
    show(done, json_flag, lambda: output.say(f"{key} written{until}"))


@blackboard_app.command("get")
def bb_get_cmd(key: Annotated[str, typer.Argument()], json_flag: JsonFlag = False) -> None:
    """Read an entry (null when missing or expired)."""
    from hive.domain.blackboard import read_blackboard

    use_json(json_flag)
    found = run_op(lambda: read_blackboard(workspace(), key=key))
    note = " (expired)" if found.expired else "" if found.exists else " (not set)"
    show(found, json_flag, lambda: output.say(f"{compact(found.value, 2000)}{note}"))


@blackboard_app.command("list")
def bb_list_cmd(
    prefix: Annotated[str | None, typer.Argument()] = None, json_flag: JsonFlag = False
) -> None:
    """Every entry; expired ones show as null."""
    from hive.domain.blackboard import snapshot

    use_json(json_flag)
    entries = run_op(lambda: snapshot(workspace(), prefix=prefix))

    def render() -> None:
        if not entries:
            output.say("blackboard is empty")
        for key, entry in entries.items():
            if entry is None:
                output.say(f"{key}  (expired)")
            else:
                until = f" until {entry.expires_at}" if entry.expires_at else ""
                output.say(f"{key}  {entry.source_agent}{until}  {compact(entry.value)}")

    show(entries, json_flag, render)


@blackboard_app.command("rm")
def bb_rm_cmd(key: Annotated[str, typer.Argument()], json_flag: JsonFlag = False) -> None:
    """Remove an entry."""
    from hive.domain.blackboard import delete_entry

    use_json(json_flag)
    removed = run_op(lambda: delete_entry(workspace(), key=key))
    show(removed, json_flag, lambda: output.say(f"removed {key}"))


# ------------------------------------------------------------------ permissions


@permissions_app.command("request")
def perm_request_cmd(
    resource: Annotated[str, typer.Argument(help="DATABASE|PAYMENTS|EMAIL|FILE_EXPORT")],
    justification: Annotated[str, typer.Argument()],
    scope: Annotated[str | None, typer.Option("--scope", help="e.g. read:invoices")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Ask the policy for a grant (the decision is committed); exit 5 when denied."""
    from hive.domain.permissions import request_permission

    use_json(json_flag)
    answer = run_op(
        lambda: request_permission(
            workspace(), resource_type=resource, justification=justification, scope=scope
        )
    )
    verdict = f"granted until {answer.expires_at}" if answer.granted else "denied"
    show(answer, json_flag, lambda: output.say(f"{resource}: {verdict} ({answer.reason})"))
    if not answer.granted:
        raise typer.Exit(5)


@permissions_app.command("list")
def perm_list_cmd(
    live: Annotated[bool, typer.Option("--live", help="Only grants still in force.")] = False,
    agent: Annotated[str | None, typer.Option("--agent")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Every decision (who, what, why, when), oldest first."""
    from hive.domain.permissions import list_decisions, live_grants

    use_json(json_flag)
    ws = workspace()
    found = run_op(lambda: live_grants(ws, agent=agent) if live else list_decisions(ws))
    found = [d for d in found if agent in (None, d.agent)]

    def render() -> None:
        if not found:
            output.say("no permission decisions")
        for d in found:
            verdict = "granted" if d.granted else "denied"
            until = f" until {d.expires_at:%Y-%m-%d %H:%M}Z" if d.expires_at else ""
            scope = f" {d.scope}" if d.scope else ""
            output.say(
                f"{d.id}  {d.decided_at:%Y-%m-%d %H:%M}Z  {d.agent}  {d.resource_type}"
                f"{scope}  {verdict}{until}  — {d.justification}"
            )

    show(found, json_flag, render)


# ------------------------------------------------------------------ memory


@memory_app.command("show")
def memory_show_cmd(json_flag: JsonFlag = False) -> None:
    """The project context as the markdown block agents get (inject_context)."""
    from hive.domain.memory import load_context, render_markdown

    use_json(json_flag)
    context = run_op(lambda: load_context(workspace()))
    show(context, json_flag, lambda: output.say(render_markdown(context).rstrip()))


def _memory_update(section: str, **change: Any) -> None:
    from hive.domain.memory import update_context

    done = run_op(lambda: update_context(workspace(), section=section, **change))
    verb = "updated" if done.changed else "unchanged"
    show(done, False, lambda: output.say(f"{section} {verb}"))


@memory_app.command("add")
def memory_add_cmd(
    section: Annotated[str, typer.Argument(help="decisions|milestones|goals|banned")],
    item: Annotated[str, typer.Argument(help="Text, or a JSON object.")],
    json_flag: JsonFlag = False,
) -> None:
    """Append a decision, milestone, goal or banned approach (one commit)."""
    use_json(json_flag)
    _memory_update(section, add=parse_json_arg(item))


@memory_app.command("set")
def memory_set_cmd(
    section: Annotated[str, typer.Argument(help="stack|project")],
    pairs: Annotated[list[str], typer.Argument(help="KEY=VALUE (empty VALUE removes KEY).")],
    json_flag: JsonFlag = False,
) -> None:
    """Merge key-value pairs into the stack or project section."""
    use_json(json_flag)
    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            _refuse(f"expected KEY=VALUE, got {pair!r}")
        values[key] = parse_json_arg(value) if value else None
    _memory_update(section, set=values)


@memory_app.command("complete")
def memory_complete_cmd(
    milestone: Annotated[str, typer.Argument()], json_flag: JsonFlag = False
) -> None:
    """Mark a milestone completed."""
    use_json(json_flag)
    _memory_update("milestones", complete=milestone)


# ------------------------------------------------------------------ delegation


def delegate_cmd(
    agent: Annotated[str, typer.Argument(help="Target agent.")],
    payload: Annotated[str, typer.Argument(help='JSON object, e.g. {"instruction": "..."}')],
    priority: Annotated[
        str, typer.Option("--priority", help="low|normal|high|critical")
    ] = "normal",
    timeout: Annotated[float, typer.Option("--timeout", help="Milliseconds.")] = 30_000,
    requires_auth: Annotated[bool, typer.Option("--requires-auth")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Delegate a task to an agent: a cell assigned to it with a deadline."""
    from hive.domain.delegation import delegate_task

    use_json(json_flag)
    done = run_op(
        lambda: delegate_task(
            workspace(),
            target_agent=agent,
            task_payload=parse_json_arg(payload),
            priority=priority,
            timeout=timeout,
            requires_auth=requires_auth,
        )
    )
    show(
        done,
        json_flag,
        lambda: output.say(f"delegated {done.task_id} to {agent} (deadline {done.deadline})"),
    )


def state_cmd(
    scope: Annotated[
        str, typer.Option("--scope", help="all|agents|tasks|blackboard|permissions")
    ] = "all",
    agent: Annotated[list[str] | None, typer.Option("--agent", help="Only these agents.")] = None,
    history: Annotated[bool, typer.Option("--history")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """The swarm's agents, tasks (expired ones flagged), blackboard and grants."""
    from hive.domain.delegation import query_swarm_state

    use_json(json_flag)
    state = run_op(
        lambda: query_swarm_state(
            workspace(), scope=scope, agent_filter=agent, include_history=history
        )
    )

    def render() -> None:
        for a in state.agents or []:
            output.say(f"agent {a.agent_id}: {a.status} {' '.join(a.tasks)}")
        for t in state.tasks or []:
            late = " EXPIRED" if t.expired else ""
            output.say(f"task {t.task_id} [{t.status}{late}] {t.agent_id or '-'}: {t.title}")
        for key, entry in (state.blackboard or {}).items():
            output.say(f"blackboard {key}: {compact(entry.value) if entry else 'null (expired)'}")
        for g in state.permissions or []:
            output.say(f"grant {g.id}: {g.agent} {g.resource_type} until {g.expires_at}")

    show(state, json_flag, render)


def synthesize_cmd(
    epic_id: Annotated[str, typer.Argument(metavar="EPIC")],
    strategy: Annotated[
        str | None, typer.Option("--strategy", help="merge|vote|chain|first-success")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Combine the subtasks' results by the epic's synthesis strategy and record it."""
    from hive.domain.delegation import synthesize

    use_json(json_flag)
    found = run_op(lambda: synthesize(workspace(), epic_id=epic_id, strategy=strategy))

    def render() -> None:
        states = ", ".join(f"{r.task_id} {r.state}" for r in found.subtasks)
        output.say(f"{found.strategy}: {'complete' if found.complete else 'incomplete'} ({states})")
        if found.complete:
            output.say(compact(found.result, 4000))

    show(found, json_flag, render)


# ------------------------------------------------------------------ QA


@qa_app.command("run")
def qa_run_cmd(
    source: Annotated[str, typer.Argument(help="JSON file of scenarios ('-': stdin).")],
    threshold: Annotated[float, typer.Option("--threshold")] = 0.7,
    json_flag: JsonFlag = False,
) -> None:
    """Score scenarios [{id, key, value, sourceAgent, minScore}] (exit 1 if any fail)."""
    from hive.domain.qa import run_qa_harness

    use_json(json_flag)
    scenarios = run_op(lambda: _read_json_source(source))
    if isinstance(scenarios, dict):
        scenarios = scenarios.get("scenarios")
    if not isinstance(scenarios, list):
        _refuse('expected a list of scenarios (or {"scenarios": [...]})')
    found = run_op(
        lambda: run_qa_harness(workspace(), scenarios=scenarios, quality_threshold=threshold)
    )

    def render() -> None:
        for r in found.results:
            mark = "pass" if r.passed else "FAIL"
            output.say(
                f"{mark} {r.id} {r.key} ({r.source_agent}) {r.score:.2f}"
                + (f" — {'; '.join(r.issues)}" if r.issues else "")
            )
        output.say(f"pass rate {found.pass_rate:.0%} ({found.passed}/{found.total})")
        regressed = found.regression.get("regressed")
        if regressed:
            output.say(
                f"regressed since run {found.regression['previousRunId']}: " + ", ".join(regressed)
            )

    show(found, json_flag, render)
    if found.failed:
        raise typer.Exit(1)


@qa_app.command("history")
def qa_history_cmd(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1)] = 20, json_flag: JsonFlag = False
) -> None:
    """Past runs, newest first."""
    from hive.domain.qa import qa_history

    use_json(json_flag)
    runs = run_op(lambda: qa_history(workspace(), limit=limit))

    def render() -> None:
        if not runs:
            output.say("no QA runs yet")
        for r in runs:
            output.say(
                f"run {r['runId']}  {r['ranAt']}  {r['agent']}  "
                f"{r['passRate']:.0%} of {r['scenarios']}"
            )

    show(runs, json_flag, render)
