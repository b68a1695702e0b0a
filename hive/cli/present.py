"""How the generated commands show results to a person (``hive/cli/build.py``).

A presenter adds only presentation (a line, a table, a tree, warnings on stderr);
the parameters and the result are the operation's (``hive/ops/``).
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from hive.cli import output
from hive.cli.build import Extra, Presenter
from hive.cli.common import OPTIONS, run_op, show, usage_error, workspace

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace
    from hive.models import Cell
    from hive.models.results import CreatedCells


def _line(template: str) -> Presenter:
    """A one-line confirmation naming the cell: ``template`` formats ``cell``."""
    return Presenter(render=lambda cell, params, ws: output.say(template.format(cell=cell)))


def _resolved(ws: Workspace, given: str) -> str:
    """The full id ``given`` names (as typed when it no longer resolves)."""
    from hive.domain.cells import resolve_id
    from hive.errors import HiveError

    try:
        return resolve_id(ws.cells(), given)
    except HiveError:
        return given


def _show_notes(ws: Workspace, cell: Cell) -> None:
    from hive.domain.damage import cell_file_problem

    problem = cell_file_problem(ws, cell.id)
    if problem is not None:
        output.err(f"warning: {problem}")


def _list_notes(ws: Workspace, cells: list[Cell]) -> None:
    from hive.domain.damage import directories_in_place_of_cells, directory_message

    for err in ws.cells().problems.values():
        output.err(f"warning: {err.message}")
    committed = set(ws.cells().problems)
    for relative in directories_in_place_of_cells(ws):
        if relative not in committed:
            output.err(f"warning: {directory_message(relative)}")


def _cell_table(cells: list[Cell], params: Any, ws: Workspace) -> None:
    output.cell_table(cells)
    if not params.all and len(cells) == params.limit:
        output.err(f"showing the first {len(cells)}; more may match (--all for every one)")


def _ready(cells: list[Cell], params: Any, ws: Workspace) -> None:
    if not params.claim:
        output.cell_table(cells)
        return
    output.say(f"claimed {cells[0].id}  {cells[0].title}" if cells else "nothing ready to claim")


def _dep_tree(tree: Any, params: Any, ws: Workspace) -> None:
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


# ------------------------------------------------------------------ create --from


def _input_size(path: str) -> int:
    """Bytes to read (standard input counts as large: its size is not known)."""
    if path == "-":
        return sys.maxsize
    try:
        return os.path.getsize(path)
    except OSError:
        return 0


def _create_from(given: dict[str, Any]) -> None:
    """``hive create --from FILE``: every cell of FILE in one commit."""
    from hive.domain.bulk import create_cells, read_cell_file
    from hive.errors import InvalidInput

    path = given.pop("from_file")
    if any(value not in (None, False) for value in given.values()):
        usage_error("--from FILE takes the cells' fields from FILE: give no TITLE or options")

    def run() -> CreatedCells:
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


def _create(cell: Cell, params: Any, ws: Workspace) -> None:
    output.say(f"created {cell.id}  {cell.title}")


FROM_FILE = Annotated[
    str | None,
    typer.Option(
        "--from",
        metavar="FILE",
        help="Create every cell of FILE (YAML or JSON lines, - for stdin) in one commit:"
        " a list of cells (or a mapping whose cells: is that list) with this command's"
        " fields (also blocks, notes, design, acceptance, metadata, and key, a name other"
        " entries refer to). A file with any problem creates nothing; each is reported"
        " with its line. --json prints {count, ids, keys, commit}.",
    ),
]


PRESENTERS: dict[str, Presenter] = {
    "create": Presenter(
        render=_create, extra=Extra("from_file", "--from FILE", FROM_FILE, _create_from)
    ),
    "show": Presenter(render=lambda cell, params, ws: output.cell_detail(cell), notes=_show_notes),
    "list": Presenter(render=_cell_table, notes=_list_notes),
    "ready": Presenter(render=_ready),
    "update": _line("updated {cell.id}  [{cell.status}] {cell.title}"),
    "start": _line("started {cell.id}  (assignee {cell.assignee})"),
    "close": _line("closed {cell.id}  {cell.title}"),
    "reopen": _line("reopened {cell.id}  {cell.title}"),
    "delete": _line("deleted {cell.id}  {cell.title}"),
    "comment": _line("commented on {cell.id}  {cell.title}"),
    "resolve": _line("resolved {cell.id}  {cell.title}"),
    "dep add": Presenter(
        render=lambda cell, params, ws: output.say(
            f"{cell.id} now depends on {_resolved(ws, params.target)} ({params.type})"
        )
    ),
    "dep remove": Presenter(
        render=lambda cell, params, ws: output.say(
            f"{cell.id} no longer depends on {_resolved(ws, params.target)}"
        )
    ),
    "dep tree": Presenter(render=_dep_tree),
}
