"""CLI for swarm orchestration (``hive swarm ...``) and review by diff (``hive review``)."""

import json
import sys
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import typer

from hive.cli import output
from hive.cli.common import ForceFlag, JsonFlag, ReasonOption, run_op, show, use_json, workspace
from hive.errors import GateFailed, InvalidInput

T = TypeVar("T")

swarm_app = typer.Typer(
    help="Decompose work, brief and complete subtasks, learn from outcomes.",
    no_args_is_help=True,
)

Task = Annotated[str, typer.Argument(help="The task to plan, in a sentence or a paragraph.")]
CellArg = Annotated[str, typer.Argument(metavar="CELL", help="Cell id (partial ids work).")]
Files = Annotated[
    list[str] | None,
    typer.Option("--files-touched", "--file", "-f", help="A file you touched (repeatable)."),
]
Context = Annotated[str | None, typer.Option("--context", help="Extra context for the plan.")]
ProjectKey = Annotated[
    str | None, typer.Option("--project-key", help="Project path; must be this repository.")
]
AgentName = Annotated[
    str | None,
    typer.Option(
        "--agent-name", "--agent", help="The worker's name (must be who you are, if given)."
    ),
]
MaxSubtasks = Annotated[int, typer.Option("--max-subtasks", min=1, max=30)]
QueryCass = Annotated[
    bool,
    typer.Option(
        "--query-cass/--no-query-cass", " /--no-cass", help="Query cass for past sessions."
    ),
]
CassLimit = Annotated[
    int, typer.Option("--cass-limit", min=1, max=50, help="At most this many cass hits.")
]
ErrorCount = Annotated[int, typer.Option("--error-count", "--errors", min=0)]
RetryCount = Annotated[int, typer.Option("--retry-count", "--retries", min=0)]


def _print(text: str) -> None:
    output.console().print(output.escape(text))


def _read_source(source: str) -> str:
    if source == "-":
        return sys.stdin.read()
    try:
        with open(source, encoding="utf-8") as handle:
            return handle.read()
    except OSError as exc:
        raise InvalidInput(f"cannot read {source}: {exc.strerror}") from None


def validate_cmd(
    source: Annotated[str, typer.Argument(help="File with the plan JSON, or '-' for stdin.")],
    json_flag: JsonFlag = False,
) -> None:
    """Check a decomposition (exits 2 when it is invalid)."""
    from hive.domain.swarm.decompose import swarm_validate_decomposition

    use_json(json_flag)
    text = run_op(lambda: _read_source(source))
    result = swarm_validate_decomposition(None, response=text)

    def render() -> None:
        out = output.console()
        out.print("[green]valid[/green]" if result.valid else "[red]invalid[/red]")
        for issue in result.errors:
            out.print(f"[red]error[/red] {output.escape(issue.message)} — {issue.hint}")
        for issue in result.warnings:
            out.print(f"[yellow]warning[/yellow] {output.escape(issue.message)} — {issue.hint}")

    show(result, json_flag, render)
    if not result.valid:
        raise typer.Exit(2)


swarm_app.command("validate-decomposition")(validate_cmd)
swarm_app.command("validate", hidden=True)(validate_cmd)


@swarm_app.command("create-epic")
def create_epic_cmd(
    source: Annotated[
        str | None,
        typer.Argument(help="File with the plan JSON, or '-' for stdin (or use --epic-title)."),
    ] = None,
    epic_title: Annotated[str | None, typer.Option("--epic-title")] = None,
    epic_description: Annotated[str, typer.Option("--epic-description")] = "",
    subtasks: Annotated[
        list[str] | None,
        typer.Option(
            "--subtask",
            help='A subtask: a title, or JSON like {"title": ..., "files": [...]} (repeatable).',
        ),
    ] = None,
    strategy: Annotated[str | None, typer.Option("--strategy")] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Create the epic and subtasks of a valid plan in one commit."""
    from hive.domain.swarm.decompose import create_epic_from_decomposition, hive_create_epic

    use_json(json_flag)
    ws = workspace()
    if source is not None:
        if epic_title or subtasks:
            run_op(_raise(InvalidInput("give a plan file or --epic-title/--subtask, not both")))
        text = run_op(lambda: _read_source(source))
        cells = run_op(
            lambda: create_epic_from_decomposition(ws, decomposition=text, strategy=strategy)
        )
    else:
        items = run_op(lambda: [_subtask_item(raw) for raw in subtasks or []])
        if not epic_title or not items:
            run_op(_raise(InvalidInput("give a plan file, or --epic-title and --subtask")))
        cells = run_op(
            lambda: hive_create_epic(
                ws,
                epic_title=epic_title or "",
                epic_description=epic_description,
                subtasks=items,
                strategy=strategy,
            )
        )
    show(cells, json_flag, lambda: output.cell_table(cells, title=f"epic {cells[0].id}"))


def _raise(error: Exception) -> Callable[[], None]:
    def fail() -> None:
        raise error

    return fail


def _subtask_item(raw: str) -> dict[str, Any]:
    text = raw.strip()
    if text.startswith("{"):
        return _parse_json_object(text, "--subtask") or {}
    return {"title": text}


@swarm_app.command("complete")
def complete_cmd(
    cell_id: CellArg,
    summary: Annotated[str, typer.Option("--summary", "-s", help="What was done.")],
    files: Files = None,
    evaluation: Annotated[
        str | None,
        typer.Option("--evaluation", help='Self-evaluation: text, or JSON {"passed": ...}.'),
    ] = None,
    error_count: ErrorCount = 0,
    retry_count: RetryCount = 0,
    agent_name: AgentName = None,
    project_key: ProjectKey = None,
    no_gate: Annotated[
        bool, typer.Option("--no-gate", help="Skip the verify commands (recorded).")
    ] = False,
    force: ForceFlag = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Close a subtask, release your reservations, record the outcome: one commit."""
    from hive.domain.swarm.complete import swarm_complete

    use_json(json_flag)
    ws = workspace()
    result = run_op(
        lambda: _explaining_gate(
            lambda: swarm_complete(
                ws,
                agent_name=agent_name,
                cell_id=cell_id,
                summary=summary,
                project_key=project_key,
                files_touched=files,
                evaluation=evaluation,
                error_count=error_count,
                retry_count=retry_count,
                run_gate=not no_gate,
                force=force,
                reason=reason,
            )
        )
    )

    def render() -> None:
        out = output.console()
        out.print(f"completed {result.cell.id} in {(result.commit or '')[:10]}")
        if result.released:
            out.print("released " + ", ".join(r.path_pattern for r in result.released))
        if result.outcome.scope_violations:
            out.print(
                "[yellow]outside scope: " + ", ".join(result.outcome.scope_violations) + "[/yellow]"
            )

    show(result, json_flag, render)


def _explaining_gate(operation: Callable[[], T]) -> T:
    """Run ``operation``; when the gate or evaluation fails, print why before the error."""
    from hive.cli.common import OPTIONS

    try:
        return operation()
    except GateFailed as exc:
        if not OPTIONS.json:
            for run in exc.details.get("gate") or []:
                output.err(f"$ {run.get('command')}\n{str(run.get('output') or '').rstrip()}")
            notes = (exc.details.get("evaluation") or {}).get("notes")
            if notes:
                output.err(f"evaluation notes: {notes}")
        raise


def _parse_json_object(text: str | None, option: str) -> dict[str, Any] | None:
    if text is None:
        return None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{option} is not valid JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise InvalidInput(f"{option} must be a JSON object")
    return value


def render_insights(report: Any) -> None:
    """Per-strategy success, pattern maturity and anti-patterns, for people."""
    from rich.table import Table

    out = output.console()
    if not report.strategies:
        out.print("[dim]no outcomes recorded yet[/dim]")
        return
    table = Table(box=None, header_style="bold")
    for column in ("STRATEGY", "OUTCOMES", "SUCCESS", "DECAYED", "BY MONTH"):
        table.add_column(column)
    for item in report.strategies:
        months = " ".join(
            f"{month}:{int(v['count'])}@{v['success_rate']:.0%}"
            for month, v in item.by_month.items()
        )
        table.add_row(
            item.strategy,
            str(item.total),
            f"{item.success_rate:.0%}",
            f"{item.decayed_score:.2f}",
            months,
        )
    out.print(table)
    for pattern in report.patterns:
        out.print(f"  {pattern.strategy} / {pattern.kind}: {pattern.maturity}")
    for lesson in report.anti_patterns:
        out.print(f"[yellow]anti-pattern[/yellow] {output.escape(lesson)}")


@swarm_app.command("run")
def run_cmd(
    epic_id: Annotated[str, typer.Argument(metavar="EPIC", help="The epic whose subtasks to run.")],
    agent_cmd: Annotated[
        str,
        typer.Option(
            "--agent-cmd",
            help="Command that runs one agent; {prompt_file} is replaced by the subtask's"
            " brief ({cell}, {agent}, {epic}, {project} too). Runs in a shell.",
        ),
    ],
    workers: Annotated[
        int, typer.Option("--workers", "-n", min=1, max=64, help="Workers at once.")
    ] = 3,
    isolation: Annotated[
        str,
        typer.Option(
            "--isolation",
            help="reservation: one working tree, files reserved; worktree: a git worktree"
            " and branch per worker, merged back on completion.",
        ),
    ] = "reservation",
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.001, help="Seconds before a worker is killed.")
    ] = 1800.0,
    json_flag: JsonFlag = False,
) -> None:
    """Run the epic's ready subtasks with an agent command, N workers at once."""
    import signal
    import threading

    from hive.cli import swarm_view
    from hive.cli.common import OPTIONS
    from hive.domain.swarm.runner import run_swarm

    use_json(json_flag)
    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    live = not OPTIONS.json and sys.stdout.isatty()
    view: Any = swarm_view.json_lines if OPTIONS.json else swarm_view.PlainView()
    try:
        if live:
            with swarm_view.LiveView() as view:
                result = _run_swarm(
                    run_swarm, epic_id, agent_cmd, workers, isolation, timeout, view, stop
                )
        else:
            result = _run_swarm(
                run_swarm, epic_id, agent_cmd, workers, isolation, timeout, view, stop
            )
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if not OPTIONS.json:
        for line in swarm_view.summary_lines(result):
            output.say(line)
    if result.interrupted:
        raise typer.Exit(130)
    if not result.finished:
        raise typer.Exit(1)


def _run_swarm(
    run_swarm: Callable[..., Any],
    epic_id: str,
    agent_cmd: str,
    workers: int,
    isolation: str,
    timeout: float,
    view: Callable[[Any], None],
    stop: Any,
) -> Any:
    return run_op(
        lambda: run_swarm(
            workspace(),
            epic_id=epic_id,
            agent_cmd=agent_cmd,
            workers=workers,
            isolation=isolation,
            timeout=timeout,
            on_event=view,
            stop=stop,
        )
    )


def render_review(result: Any, *, per: str = "both") -> None:
    """A review for people: each cell's scope, outcome and diff, then each commit's."""
    out = output.console()
    out.print(f"[bold]{result.target}[/bold] {output.escape(result.title)}")
    for cell in result.cells:
        out.print(
            f"\n[bold]{cell.cell_id}[/bold] [{cell.status}] {output.escape(cell.title)}"
            f" — {cell.assignee or 'unassigned'}"
        )
        out.print(f"  owned:    {', '.join(cell.files_owned) or '-'}")
        out.print(f"  reserved: {', '.join(cell.files_reserved) or '-'}")
        out.print(f"  touched:  {', '.join(cell.files_touched) or '-'}")
        if cell.scope_violations:
            out.print(f"  [red]outside scope: {', '.join(cell.scope_violations)}[/red]")
        if cell.outcome is not None:
            o = cell.outcome
            state = "[green]success[/green]" if o.success else "[red]failure[/red]"
            out.print(
                f"  outcome:  {state} in {o.duration_seconds:.0f}s, {o.error_count} errors,"
                f" {o.retry_count} retries — {output.escape(o.summary[:120])}"
            )
        if per != "commit" and cell.commits:
            count = len(cell.commits)
            out.print(f"  diff of {cell.cell_id} ({count} commit{'s' * (count != 1)}):")
            _diff(out, cell.files, cell.patch)
    if per == "cell":
        return
    for commit in result.commits:
        out.print(f"\n[yellow]{commit.sha[:10]}[/yellow] {output.escape(commit.subject)}")
        _diff(out, commit.files, commit.patch)


def _diff(out: Any, files: Any, patch: str) -> None:
    """Per-file counts, then the patch (coloured on a terminal)."""
    from rich.syntax import Syntax

    for changed in files:
        out.print(
            f"  {changed.status} {output.escape(changed.path)} "
            f"[green]+{changed.additions}[/green] [red]-{changed.deletions}[/red]"
        )
    if patch and sys.stdout.isatty():
        out.print(Syntax(patch, "diff", word_wrap=False))
    elif patch:
        out.file.write(patch)
