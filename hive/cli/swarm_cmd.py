"""CLI for swarm orchestration (``hive swarm ...``) and review by diff (``hive review``)."""

import sys
from collections.abc import Callable, Sequence
from typing import Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from hive.cli import output
from hive.cli.common import JsonFlag, run_op, use_json, workspace

T = TypeVar("T")


class _Verbs(TyperGroup):
    """``hive swarm``'s verbs, each also as its tool spells it (``select_strategy`` of
    swarm_select_strategy); a verb it does not know is named as typed."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:  # typer's own click types
        found = super().get_command(ctx, cmd_name)
        return found if found is not None else super().get_command(ctx, cmd_name.replace("_", "-"))


swarm_app = typer.Typer(
    cls=_Verbs,
    rich_markup_mode=None,
    help="Decompose work, brief and complete subtasks, learn from outcomes.",
    no_args_is_help=True,
)


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
            output.escape(item.strategy),
            str(item.total),
            f"{item.success_rate:.0%}",
            f"{item.decayed_score:.2f}",
            output.escape(months),
        )
    out.print(table)
    for pattern in report.patterns:
        output.say(f"  {pattern.strategy} / {pattern.kind}: {pattern.maturity}")
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
            " brief ({cell}, {agent}, {epic}, {project} too; {{word}} is a literal {word},"
            " ${VAR} the shell's). Runs in a shell.",
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
    keep_epic_open: Annotated[
        bool,
        typer.Option(
            "--keep-epic-open",
            help="Leave the epic open when every subtask is closed (by default the run"
            " closes it, the run's summary as the reason).",
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Run the epic's ready subtasks with an agent command, N workers at once."""
    use_json(json_flag)
    options = {
        "epic_id": epic_id,
        "agent_cmd": agent_cmd,
        "workers": workers,
        "isolation": isolation,
        "timeout": timeout,
        "close_epic": not keep_epic_open,
    }
    result = _run_until_stopped(options)
    _report_run(result)


def _run_until_stopped(options: dict[str, Any]) -> Any:
    """Run the swarm, its events drawn live on a terminal (else plain lines, or JSON
    lines with --json); SIGINT and SIGTERM ask it to stop (the handlers are restored)."""
    import signal
    import threading

    from hive.cli import swarm_view
    from hive.cli.common import OPTIONS
    from hive.domain.swarm.runner import run_swarm

    stop = threading.Event()

    def request_stop(signum: int, frame: Any) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    live = not OPTIONS.json and sys.stdout.isatty()
    view: Any = swarm_view.json_lines if OPTIONS.json else swarm_view.PlainView()
    try:
        if live:
            with swarm_view.LiveView() as view:
                result = _run_swarm(run_swarm, view, stop, **options)
        else:
            result = _run_swarm(run_swarm, view, stop, **options)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return result


def _report_run(result: Any) -> None:
    """The run's summary (not with --json); exit 130 when interrupted, 1 when work is
    left undone."""
    from hive.cli import swarm_view
    from hive.cli.common import OPTIONS

    if not OPTIONS.json:
        for line in swarm_view.summary_lines(result):
            output.say(line)
    if result.interrupted:
        # Not typer.Exit(130), which ends in the bare word 'interrupted': the summary
        # (or the run_finished event) already says so, and what to do.
        if OPTIONS.json:
            output.err("hive swarm run: interrupted; run the same command again to resume")
        raise SystemExit(130)
    if not result.finished:
        raise typer.Exit(1)


def _run_swarm(
    run_swarm: Callable[..., Any], view: Callable[[Any], None], stop: Any, **options: Any
) -> Any:
    return run_op(lambda: run_swarm(workspace(), on_event=view, stop=stop, **options))


def render_review(result: Any, *, per: str = "both") -> None:
    """A review for people: each cell's scope, outcome and diff, then each commit's
    (the lines about them wrapped to the terminal; a patch's lines as git prints them)."""
    from hive.domain.swarm.review import made_by

    out = output.console(wrap=True)
    out.print(f"[bold]{output.escape(result.target)}[/bold] {output.escape(result.title)}")
    for cell in result.cells:
        out.print(
            f"\n[bold]{output.escape(cell.cell_id)}[/bold] "
            + output.escape(f"[{cell.status}] {cell.title} — {cell.assignee or 'unassigned'}")
        )
        # paths as they are: 'app/[id]/page.tsx' is no markup
        out.print(f"  owned:    {_paths(cell.files_owned)}")
        out.print(f"  reserved: {_paths(cell.files_reserved)}")
        out.print(f"  touched:  {_paths(cell.files_touched)}")
        if cell.scope_violations:
            out.print(f"  [red]outside scope: {_paths(cell.scope_violations)}[/red]")
        if cell.outcome is not None:
            o = cell.outcome
            state = "[green]success[/green]" if o.success else "[red]failure[/red]"
            summary = f" — {output.escape(o.summary[:120])}" if o.summary.strip() else ""
            out.print(
                f"  outcome:  {state} in {o.duration_seconds:.0f}s, {o.error_count} errors,"
                f" {o.retry_count} retries{summary}"
            )
        if per != "commit" and cell.commits:
            count = len(cell.commits)
            output.say(f"  diff of {cell.cell_id} ({count} commit{'s' * (count != 1)}):")
            _diff(out, cell.files, cell.patch)
    if per == "cell":
        return
    for commit in result.commits:
        out.print(f"\n[yellow]{commit.sha[:10]}[/yellow] {output.escape(commit.subject)}")
        out.print(output.escape(f"  {made_by(commit)}"))  # who made it, as its message says
        _diff(out, commit.files, commit.patch)


def _paths(paths: Sequence[str]) -> str:
    """File paths for a line of rich markup: escaped ('-' for none; a control character
    a file name may hold is shown as '?' by the console)."""
    return output.escape(", ".join(paths)) or "-"


def _diff(out: Any, files: Any, patch: str) -> None:
    """Per-file counts, then the patch: coloured on a terminal; piped, as git prints it
    (CRLF line endings kept, so ``git apply`` takes it). Either way a control character
    of the files' text (but tab, line break and a CR before one) or an invisible format
    character is shown as '?', as everywhere a person reads."""
    from rich.syntax import Syntax

    from hive.text import shown_lines, shown_patch

    for changed in files:
        out.print(
            f"  {changed.status} {output.escape(changed.path)} "
            f"[green]+{changed.additions}[/green] [red]-{changed.deletions}[/red]"
        )
    if patch and sys.stdout.isatty():
        out.print(Syntax(shown_lines(patch), "diff", word_wrap=False))
    elif patch:
        out.file.write(shown_patch(patch))
