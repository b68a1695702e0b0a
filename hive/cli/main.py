"""The ``hive`` command line: a thin adapter over the domain functions.

Every command builds a Workspace, calls one domain function and renders the
returned model (a table/text for people, ``--json`` for programs). Errors are
``HiveError``s rendered as one line on stderr with the class's exit code.
"""

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any, NoReturn

import typer

try:  # recent typer vendors click; older releases use click itself
    from typer._click import exceptions as click_errors
except ImportError:  # pragma: no cover
    import click.exceptions as click_errors  # type: ignore[no-redef]

from hive.cli import (
    agent_cmd,
    coord_cmd,
    ctx_cmd,
    network_cmd,
    output,
    scratch_cmd,
    serve_cmd,
    stats_cmd,
    swarm_cmd,
    sync_cmd,
    tools_cmd,
)
from hive.cli.common import (
    OPTIONS,
    ForceFlag,
    JsonFlag,
    ReasonOption,
    run_op,
    show,
    use_json,
    workspace,
)
from hive.cli.entry import DEFAULT_PAGE

if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.domain.workspace import Workspace
    from hive.models import Cell
    from hive.models.results import CreatedCells

PAGE = DEFAULT_PAGE

app = typer.Typer(
    name="hive",
    help="Git-backed issue tracking and coordination for swarms of coding agents.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
dep_app = typer.Typer(help="Dependencies between cells.", no_args_is_help=True)
epic_app = typer.Typer(help="Epics and their subtasks.", no_args_is_help=True)
app.add_typer(dep_app, name="dep")
app.add_typer(epic_app, name="epic")
app.add_typer(coord_cmd.mail_app, name="mail")
app.add_typer(coord_cmd.hooks_app, name="hooks")
app.add_typer(agent_cmd.agent_app, name="agent")


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
) -> None:
    OPTIONS.directory = directory
    OPTIONS.actor = actor
    OPTIONS.json = json_output


# ----------------------------------------------------------------------- setup


@app.command()
def init(
    prefix: Annotated[
        str | None, typer.Option(help="Id prefix for new cells (default hv).")
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Create .hive/ in this git repository (safe to run again)."""
    from hive.domain.setup import init_hive

    use_json(json_flag)
    result = run_op(lambda: init_hive(workspace(), prefix=prefix))
    verb = "initialised" if result.created else "already initialised"

    def render() -> None:
        output.say(f"hive {verb} in {result.root} (prefix {result.prefix})")
        output.say(f"merge driver for .hive/ files: {result.merge_driver}")
        for remote in result.remotes:
            output.say(f"git fetch/push of {remote} now carry hive's refs (refs/hive/*)")
        if not result.remotes:
            output.say(
                "no git remote yet: after 'git remote add', run 'hive init' again so that"
                " plain git fetch/push carry hive's refs (hive sync does it too)"
            )

    show(result, json_flag, render)


# ----------------------------------------------------------------------- cells


@app.command()
def create(
    title: Annotated[
        str | None, typer.Argument(help="One-line title (not with --from).", show_default=False)
    ] = None,
    type_: Annotated[
        str, typer.Option("-t", "--type", help="bug|feature|task|epic|chore")
    ] = "task",
    priority: Annotated[
        str, typer.Option("-p", "--priority", help="0-4 or P0-P4 (0 most urgent)")
    ] = "2",
    description: Annotated[str, typer.Option("-d", "--description")] = "",
    parent: Annotated[
        str | None, typer.Option("--parent", help="Parent cell (the new id shows it).")
    ] = None,
    dep: Annotated[
        list[str] | None, typer.Option("--dep", help="TYPE:ID, e.g. blocks:hv-ab12 (repeatable).")
    ] = None,
    label: Annotated[
        list[str] | None, typer.Option("-l", "--label", help="Label (repeatable).")
    ] = None,
    files: Annotated[
        list[str] | None, typer.Option("--files", help="Owned file glob (repeatable).")
    ] = None,
    assignee: Annotated[str | None, typer.Option("--assignee")] = None,
    from_file: Annotated[
        str | None,
        typer.Option(
            "--from",
            metavar="FILE",
            help="Create every cell of FILE (YAML or JSON lines, - for stdin) in one commit.",
        ),
    ] = None,
    json_flag: JsonFlag = False,
) -> None:
    """Create a cell (one commit), or many with --from FILE (one commit for all).

    FILE (- for stdin) is YAML, a list of cells or a mapping whose
    cells: is that list, or JSON lines, one cell per line
    (.jsonl/.ndjson, or a first line that is a JSON object). A cell
    takes this command's fields: title (required), type, priority,
    description, labels, assignee, parent, deps (TYPE:REF, as --dep),
    blocks (REFs it waits for: deps of type blocks), files (or
    files_owned), and also notes, design, acceptance, metadata; and key,
    a name for the entry. A REF (and parent) is a key of FILE or an
    existing cell id. Every problem is reported with its line (and
    record number for JSON lines) and a file with any problem creates
    nothing. --json prints {count, ids, keys, commit}.
    """
    use_json(json_flag)
    if from_file is not None:
        others = (title, description, parent, dep, label, files, assignee)
        if any(others) or type_ != "task" or priority != "2":
            usage_error("--from FILE takes the cells' fields from FILE: give no TITLE or options")
        _create_from(from_file)
        return
    if title is None:
        usage_error("missing TITLE (or --from FILE)")
    from hive.domain.cells import create_cell

    cell = run_op(
        lambda: create_cell(
            workspace(),
            title=title,
            type=type_,
            priority=priority,
            description=description,
            parent=parent,
            deps=dep or [],
            labels=label or [],
            files=files or [],
            assignee=assignee,
        )
    )
    show(cell, json_flag, lambda: output.say(f"created {cell.id}  {cell.title}"))


def usage_error(message: str) -> NoReturn:
    """A usage error (exit 2, code ``usage``), reported like click's own."""
    raise click_errors.UsageError(message)


def _input_size(path: str) -> int:
    """Bytes to read (standard input counts as large: its size is not known)."""
    if path == "-":
        return sys.maxsize
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _create_from(path: str) -> None:
    from hive.domain.bulk import create_cells, read_cell_file
    from hive.errors import InvalidInput

    def run() -> "CreatedCells":
        ws = workspace()
        try:
            with output.progress_bar(_input_size(path), enabled=not OPTIONS.json) as bar:
                cells_file = read_cell_file(path, stdin=sys.stdin.buffer.read)
                return create_cells(ws, cells_file=cells_file, progress=bar)
        except InvalidInput as exc:
            found = exc.details.get("problems") or []
            for problem in found if len(found) > 1 and not OPTIONS.json else []:
                output.err(problem["message"])  # one line each, like a compiler
            raise

    created = run_op(run)
    commit = f" in commit {created.commit[:12]}" if created.commit else " (staged)"
    show(created, False, lambda: output.say(f"created {created.count} cells{commit}"))


CellIds = Annotated[
    list[str], typer.Argument(metavar="ID", help="One or more cells (partial ids work).")
]


@app.command("show")
def show_cmd(cell_ids: CellIds, json_flag: JsonFlag = False) -> None:
    """Show cells, with the blockers still open (partial ids work when unambiguous)."""
    from hive.domain.damage import cell_file_problem
    from hive.domain.stats import show_cells

    use_json(json_flag)
    ws = run_op(workspace)
    cells = run_op(lambda: show_cells(ws, cell_ids=cell_ids))
    for cell in cells:
        problem = cell_file_problem(ws, cell.id)
        if problem is not None:
            output.err(f"warning: {problem}")

    def render() -> None:
        for position, cell in enumerate(cells):
            if position:
                output.say("")
            output.cell_detail(cell)

    show(_one_or_all(cells), json_flag, render)


def _one_or_all(items: list[Any]) -> Any:
    """One id given: its object (as always); several: the list."""
    return items[0] if len(items) == 1 else items


@app.command("list")
def list_cmd(
    status: Annotated[str | None, typer.Option("-s", "--status", help="Status, or 'all'.")] = None,
    type_: Annotated[str | None, typer.Option("-t", "--type")] = None,
    priority: Annotated[str | None, typer.Option("-p", "--priority")] = None,
    parent: Annotated[str | None, typer.Option("--parent")] = None,
    label: Annotated[str | None, typer.Option("-l", "--label")] = None,
    assignee: Annotated[str | None, typer.Option("--assignee")] = None,
    deleted: Annotated[bool, typer.Option("--deleted", help="Include deleted cells.")] = False,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help=f"Page size (default {PAGE}).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every matching cell.")] = False,
    json_flag: JsonFlag = False,
) -> None:
    """List cells (open first, most urgent first; a page unless --all)."""
    from hive.domain.cells import list_cells

    use_json(json_flag)
    ws = run_op(workspace)
    cells = run_op(
        lambda: list_cells(
            ws,
            status=status,
            type=type_,
            priority=priority,
            parent=parent,
            label=label,
            assignee=assignee,
            include_deleted=deleted,
            limit=None if all_ else limit or PAGE + 1,
        )
    )
    _warn_corrupt(ws)
    shown = cells if all_ or limit or len(cells) <= PAGE else cells[:PAGE]
    show(shown, json_flag, lambda: output.cell_table(shown))
    if len(shown) < len(cells):
        output.err(f"showing the first {len(shown)}; more match (--all for every one)")


def _warn_corrupt(ws: "Workspace") -> None:
    from hive.domain.damage import directories_in_place_of_cells, directory_message

    for err in ws.cells().problems.values():
        output.err(f"warning: {err.message}")
    committed = set(ws.cells().problems)
    for relative in directories_in_place_of_cells(ws):
        if relative not in committed:
            output.err(f"warning: {directory_message(relative)}")


@app.command()
def ready(
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help=f"Page size (default {PAGE}).")
    ] = None,
    all_: Annotated[bool, typer.Option("--all", help="Every ready cell.")] = False,
    claim: Annotated[
        bool, typer.Option("--claim", help="Atomically start the first ready cell.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Cells ready to work on: open, unblocked, most urgent and oldest first."""
    from hive.domain.cells import ready as ready_op

    use_json(json_flag)
    page = None if all_ or claim else limit or PAGE
    cells = run_op(lambda: ready_op(workspace(), limit=page, claim=claim))

    def render() -> None:
        if claim:
            message = (
                f"claimed {cells[0].id}  {cells[0].title}" if cells else "nothing ready to claim"
            )
            output.say(message)
        else:
            output.cell_table(cells)

    show(cells, json_flag, render)


@app.command()
def update(
    cell_ids: CellIds,
    status: Annotated[str | None, typer.Option("-s", "--status")] = None,
    priority: Annotated[str | None, typer.Option("-p", "--priority")] = None,
    title: Annotated[str | None, typer.Option("--title")] = None,
    description: Annotated[str | None, typer.Option("-d", "--description")] = None,
    assignee: Annotated[str | None, typer.Option("--assignee", help="'' to clear.")] = None,
    type_: Annotated[str | None, typer.Option("-t", "--type")] = None,
    append_notes: Annotated[str | None, typer.Option("--append-notes")] = None,
    add_label: Annotated[list[str] | None, typer.Option("--add-label")] = None,
    remove_label: Annotated[list[str] | None, typer.Option("--remove-label")] = None,
    files: Annotated[
        list[str] | None, typer.Option("--files", help="Owned file glob (repeatable; replaces).")
    ] = None,
    force: ForceFlag = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Change fields of cells (one commit for all; none changes if one is refused).
    A cell claimed by someone else needs --force and --reason (recorded)."""
    from hive.domain.cells import update_cells

    use_json(json_flag)
    cells = run_op(
        lambda: update_cells(
            workspace(),
            cell_ids=cell_ids,
            status=status,
            priority=priority,
            title=title,
            description=description,
            assignee=assignee,
            type=type_,
            append_notes=append_notes,
            add_labels=add_label or [],
            remove_labels=remove_label or [],
            files=files,
            force=force,
            reason=reason,
        )
    )
    _said(cells, json_flag, lambda cell: f"updated {cell.id}  [{cell.status}] {cell.title}")


def _said(cells: list["Cell"], json_flag: bool, line: "Callable[[Cell], str]") -> None:
    """One line per cell for people; the cell (or the list, for several) as JSON."""

    def render() -> None:
        for cell in cells:
            output.say(line(cell))

    show(_one_or_all(cells), json_flag, render)


@app.command()
def start(
    cell_ids: CellIds,
    force: Annotated[
        bool, typer.Option("--force", help="Start even while an open blocker waits (recorded).")
    ] = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Claim cells (atomic: a second claimant gets 'already claimed'). A cell with an
    open blocker is refused (see 'hive blocked') unless --force, which is recorded."""
    from hive.domain.cells import start_cells

    use_json(json_flag)
    cells = run_op(lambda: start_cells(workspace(), cell_ids=cell_ids, force=force, reason=reason))
    _said(cells, json_flag, lambda cell: f"started {cell.id}  (assignee {cell.assignee})")


@app.command()
def close(
    cell_ids: CellIds,
    reason: Annotated[
        str | None, typer.Option("-r", "--reason", help="Why (also the reason of an override).")
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Close even with open blockers, or someone else's claimed cell."
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Close cells (one commit for all; none closes if one is refused). Refused while a
    blocking dependency is open (a blocker closed in the same command counts as closed).
    A cell claimed by someone else needs --force and --reason (recorded)."""
    from hive.domain.cells import close_cells

    use_json(json_flag)
    cells = run_op(lambda: close_cells(workspace(), cell_ids=cell_ids, reason=reason, force=force))
    _said(cells, json_flag, lambda cell: f"closed {cell.id}  {cell.title}")


@app.command()
def reopen(cell_ids: CellIds, json_flag: JsonFlag = False) -> None:
    """Reopen closed cells (one commit for all)."""
    from hive.domain.cells import reopen_cells

    use_json(json_flag)
    cells = run_op(lambda: reopen_cells(workspace(), cell_ids=cell_ids))
    _said(cells, json_flag, lambda cell: f"reopened {cell.id}  {cell.title}")


@app.command()
def delete(
    cell_ids: CellIds,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Delete even with live subtasks, or someone else's claimed cell."
        ),
    ] = False,
    reason: ReasonOption = None,
    json_flag: JsonFlag = False,
) -> None:
    """Delete cells (kept as tombstones so merges cannot resurrect them; one commit for
    all, none deleted if one is refused)."""
    from hive.domain.cells import delete_cells

    use_json(json_flag)
    cells = run_op(lambda: delete_cells(workspace(), cell_ids=cell_ids, force=force, reason=reason))
    _said(cells, json_flag, lambda cell: f"deleted {cell.id}  {cell.title}")


@app.command()
def comment(
    cell_id: Annotated[str, typer.Argument(metavar="ID")],
    text: Annotated[str, typer.Argument(help="The comment.")],
    json_flag: JsonFlag = False,
) -> None:
    """Add a comment to a cell (merges keep the comments of both sides)."""
    from hive.domain.annotate import add_comment

    use_json(json_flag)
    cell = run_op(lambda: add_comment(workspace(), cell_id=cell_id, text=text))
    show(cell, json_flag, lambda: output.say(f"commented on {cell.id}  {cell.title}"))


@app.command()
def resolve(
    cell_id: Annotated[str, typer.Argument(metavar="ID")],
    field: Annotated[
        str | None, typer.Option("--field", help="Only this field's conflict records.")
    ] = None,
    use_other: Annotated[
        bool, typer.Option("--use-other", help="Take the value the merge did not keep.")
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """Clear the merge conflicts recorded on a cell (see 'hive show ID')."""
    from hive.domain.annotate import resolve_conflicts

    use_json(json_flag)
    cell = run_op(
        lambda: resolve_conflicts(workspace(), cell_id=cell_id, field=field, use_other=use_other)
    )
    show(cell, json_flag, lambda: output.say(f"resolved {cell.id}  {cell.title}"))


# ----------------------------------------------------------------------- deps


@dep_app.command("add")
def dep_add(
    cell_id: Annotated[str, typer.Argument(metavar="ID", help="The cell that waits.")],
    target: Annotated[str, typer.Argument(metavar="TARGET", help="The cell it depends on.")],
    type_: Annotated[
        str, typer.Option("-t", "--type", help="blocks|parent-child|related|discovered-from")
    ] = "blocks",
    json_flag: JsonFlag = False,
) -> None:
    """ID depends on TARGET (cycles are refused)."""
    from hive.domain.cells import add_dependency

    use_json(json_flag)
    ws = run_op(workspace)
    cell = run_op(lambda: add_dependency(ws, cell_id=cell_id, target=target, dep_type=type_))
    show(
        cell,
        json_flag,
        lambda: output.say(f"{cell.id} now depends on {_resolved(ws, target)} ({type_})"),
    )


@dep_app.command("remove")
def dep_remove(
    cell_id: Annotated[str, typer.Argument(metavar="ID")],
    target: Annotated[str, typer.Argument(metavar="TARGET")],
    json_flag: JsonFlag = False,
) -> None:
    """Remove ID's dependency on TARGET."""
    from hive.domain.cells import remove_dependency

    use_json(json_flag)
    ws = run_op(workspace)
    cell = run_op(lambda: remove_dependency(ws, cell_id=cell_id, target=target))
    show(
        cell,
        json_flag,
        lambda: output.say(f"{cell.id} no longer depends on {_resolved(ws, target)}"),
    )


def _resolved(ws: "Workspace", given: str) -> str:
    """The full id ``given`` names (as typed when it no longer resolves)."""
    from hive.domain.cells import resolve_id
    from hive.errors import HiveError

    try:
        return resolve_id(ws.cells(), given)
    except HiveError:
        return given


@dep_app.command("tree")
def dep_tree_cmd(
    cell_id: Annotated[str, typer.Argument(metavar="ID")], json_flag: JsonFlag = False
) -> None:
    """What ID depends on, recursively."""
    from hive.domain.cells import dep_tree

    use_json(json_flag)
    tree = run_op(lambda: dep_tree(workspace(), cell_id=cell_id))

    def render() -> None:
        from rich.tree import Tree

        def label(node: Any) -> str:
            kind = f" ({node.type})" if node.type else ""
            return output.escape(f"{node.id} [{node.status}] {node.title or ''}{kind}")

        def grow(branch: Any, node: Any) -> None:
            for child in node.depends_on:
                grow(branch.add(label(child)), child)

        root = Tree(label(tree))
        grow(root, tree)
        output.console().print(root)

    show(tree, json_flag, render)


# ----------------------------------------------------------------------- epics


@epic_app.command("create")
def epic_create(
    title: Annotated[str, typer.Argument()],
    subtask: Annotated[
        list[str] | None, typer.Option("--subtask", "-s", help="Subtask title (repeatable).")
    ] = None,
    description: Annotated[str, typer.Option("-d", "--description")] = "",
    priority: Annotated[str, typer.Option("-p", "--priority")] = "2",
    json_flag: JsonFlag = False,
) -> None:
    """Create an epic and its subtasks in one commit."""
    from hive.domain.epics import create_epic

    use_json(json_flag)
    cells = run_op(
        lambda: create_epic(
            workspace(),
            title=title,
            subtasks=subtask or [],
            description=description,
            priority=priority,
        )
    )

    def render() -> None:
        output.say(f"created epic {cells[0].id}  {cells[0].title}")
        for child in cells[1:]:
            output.say(f"  {child.id}  {child.title}")

    show(cells, json_flag, render)


@epic_app.command("status")
def epic_status_cmd(
    epic_id: Annotated[str, typer.Argument(metavar="ID")], json_flag: JsonFlag = False
) -> None:
    """Progress of an epic's subtasks."""
    from hive.domain.epics import epic_status

    use_json(json_flag)
    status = run_op(lambda: epic_status(workspace(), epic_id=epic_id))

    def render() -> None:
        out = output.console()
        out.print(
            f"[bold]{status.epic.id}[/bold]  "
            + output.escape(f"{status.epic.title}  [{status.epic.status}]")
        )
        out.print(f"  {status.closed}/{status.total} closed ({status.percent_complete}%)")
        counts = ", ".join(f"{key} {value}" for key, value in sorted(status.by_status.items()))
        if counts:
            out.print(f"  {counts}")
        if status.children:
            output.cell_table(status.children)

    show(status, json_flag, render)


# ----------------------------------------------------------------------- history & health


@app.command()
def log(
    cell_id: Annotated[str | None, typer.Argument(metavar="[ID]")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1)] = None,
    overrides: Annotated[
        bool,
        typer.Option(
            "--overrides",
            help="Only overrides, and hive commits whose trailer names no registered identity.",
        ),
    ] = False,
    json_flag: JsonFlag = False,
) -> None:
    """hive commits (for one cell if ID is given), newest first."""
    from hive.domain.history import audit_log, cell_log

    use_json(json_flag)
    if overrides:
        found = run_op(lambda: audit_log(workspace(), limit=limit))
        lines = [
            f"[yellow]{item.commit[:10]}[/yellow] {item.kind:<16} {output.escape(item.detail)}"
            for item in found
        ]
        empty = "no overrides and no unregistered identities"
        show(found, json_flag, lambda: _print_lines(lines, empty))
        return
    entries = run_op(lambda: cell_log(workspace(), cell_id=cell_id, limit=limit))
    lines = [
        f"[yellow]{entry.commit[:10]}[/yellow] {output.escape(entry.subject)}"
        f"  [dim]{output.escape(entry.agent or '')}[/dim]"
        for entry in entries
    ]
    show(entries, json_flag, lambda: _print_lines(lines, "no hive commits"))


def _print_lines(lines: list[str], empty: str) -> None:
    out = output.console()
    if not lines:
        out.print(f"[dim]{empty}[/dim]")
    for line in lines:
        out.print(line)


@app.command()
def doctor(json_flag: JsonFlag = False) -> None:
    """Find corrupt files, dangling dependencies and cycles; exit 1 if any.

    Also reports the git object store (loose objects, packs) and warns, with
    the fix, when it needs packing (warnings do not change the exit code).
    """
    from hive.domain.agents import agent_tool_warnings
    from hive.domain.doctor import diagnose
    from hive.models.results import Problem
    from hive.tools.registry import tools

    use_json(json_flag)
    ws = workspace()
    report = run_op(lambda: diagnose(ws))
    report.warnings = [
        Problem(kind="unknown-tool", message=text, path=".hive/config.yaml")
        for text in agent_tool_warnings(ws, [tool.name for tool in tools()])
    ]

    def render() -> None:
        out = output.console()
        for problem in report.problems:
            out.print(f"[red]{problem.kind}[/red]: {output.escape(problem.message)}")
        for warning in report.warnings:
            out.print(f"[yellow]warning {warning.kind}[/yellow]: {output.escape(warning.message)}")
        summary = "no problems" if report.ok else f"{len(report.problems)} problem(s)"
        out.print(f"checked {report.cells} cells: {summary}")
        if report.objects is not None:
            output.object_store(report.objects)

    show(report, json_flag, render)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def gc(json_flag: JsonFlag = False) -> None:
    """Pack loose objects and merge packs into one (hive also does this by itself
    after writes, as git gc --auto would)."""
    from hive.domain.maintenance import pack_repository

    use_json(json_flag)
    report = run_op(lambda: pack_repository(workspace()))

    def render() -> None:
        if report.skipped:
            output.say(f"nothing done: {report.skipped}")
        else:
            output.say(
                f"packed {report.packed} loose objects, merged {report.merged_packs} packs"
                f" in {report.seconds:.2f}s"
            )
        output.object_store(report.store)

    show(report, json_flag, render)


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
    """Run a real swarm of example agents in a scratch repository and show the result."""
    from hive.cli.demo import run_demo

    use_json(json_flag)
    result = run_op(lambda: run_demo(keep, json_mode=OPTIONS.json))
    if not result.finished:
        raise typer.Exit(1)


# Registered last so `hive --help` lists the cell commands first.
app.command("blocked")(stats_cmd.blocked_cmd)
app.command("stats")(stats_cmd.stats_cmd)
app.command("reserve")(coord_cmd.reserve_cmd)
app.command("release")(coord_cmd.release_cmd)
app.command("reservations")(coord_cmd.reservations_cmd)
app.add_typer(swarm_cmd.swarm_app, name="swarm")
app.command("review")(swarm_cmd.review_cmd)
app.add_typer(tools_cmd.tools_app, name="tools")
app.command("mcp")(tools_cmd.mcp_cmd)
app.add_typer(tools_cmd.proposals_app, name="proposals")
app.command("events")(tools_cmd.events_cmd)
app.add_typer(ctx_cmd.ctx_app, name="ctx")
app.add_typer(ctx_cmd.queue_app, name="queue")
app.add_typer(network_cmd.blackboard_app, name="blackboard")
app.add_typer(network_cmd.permissions_app, name="permissions")
app.add_typer(network_cmd.memory_app, name="memory")
app.add_typer(network_cmd.qa_app, name="qa")
app.add_typer(scratch_cmd.scratchpad_app, name="scratchpad")
app.add_typer(scratch_cmd.todo_app, name="todo")
app.command("delegate")(network_cmd.delegate_cmd)
swarm_cmd.swarm_app.command("state")(network_cmd.state_cmd)
epic_app.command("synthesize")(network_cmd.synthesize_cmd)
app.command("sync")(sync_cmd.sync_cmd)
app.add_typer(sync_cmd.import_app, name="import")
app.add_typer(sync_cmd.export_app, name="export")
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
    focused = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    focused.info = app.info
    focused.registered_callback = app.registered_callback
    focused.registered_commands = commands
    focused.registered_groups = groups
    return focused


def _command_name(argv: list[str]) -> str | None:
    from hive.cli.entry import parse

    return parse(argv).command


def _info_name(info: typer.models.CommandInfo) -> str | None:
    if info.name:
        return info.name
    callback = info.callback
    return callback.__name__.lower().replace("_", "-") if callback else None


def _usage_error(exc: click_errors.UsageError, argv: list[str]) -> int:
    """Render a usage error as one line (plus JSON with ``--json``); exit code 2."""
    if isinstance(exc, click_errors.NoArgsIsHelpError):
        if exc.format_message().strip():  # plain click: the help text is the message
            sys.stdout.write(exc.format_message().rstrip("\n") + "\n")
        return exc.exit_code
    message = " ".join(exc.format_message().split())
    if exc.ctx is not None:
        message += f" (see '{exc.ctx.command_path} --help')"
    wants_json = "--json" in argv[: argv.index("--")] if "--" in argv else "--json" in argv
    if wants_json:
        output.emit_json({"error": message, "code": "usage"})
    output.err(f"error: {message}")
    return 2


def run(argv: list[str] | None = None) -> None:
    """The full CLI (``hive/cli/entry.py`` parses global options first and passes the
    normalized command line): no traceback ever reaches the terminal."""
    if argv is None:
        from hive.cli.entry import parse

        argv = parse(sys.argv[1:]).argv()
    try:
        command = typer.main.get_command(focused_app(argv))
        code = command.main(args=argv, prog_name="hive", standalone_mode=False)
        sys.exit(code if isinstance(code, int) else 0)
    except click_errors.UsageError as exc:
        sys.exit(_usage_error(exc, argv))
    except click_errors.ClickException as exc:
        output.err(f"error: {' '.join(exc.format_message().split())}")
        sys.exit(exc.exit_code)
    except typer.Abort:
        output.err("aborted")
        sys.exit(1)
    except KeyboardInterrupt:
        from hive.cli.entry import interrupted

        sys.exit(interrupted(_command_name(argv)))
    except Exception as exc:  # last line of defence; HiveErrors are handled in run_op
        if os.environ.get("HIVE_DEBUG"):
            raise
        output.err(f"internal error: {type(exc).__name__}: {exc} (set HIVE_DEBUG=1 for details)")
        sys.exit(70)


if __name__ == "__main__":
    run()
