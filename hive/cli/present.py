"""How the generated commands show results to a person (``hive/cli/build.py``).

A presenter adds only presentation (a line, a table, a tree, warnings on stderr);
the parameters and the result are the operation's (``hive/ops/``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from hive.cli import output, stdin_text
from hive.cli.build import VIEW, Extra, Presenter
from hive.cli.common import OPTIONS, read_source, run_op, show, usage_error, workspace
from hive.errors import InvalidInput, NotFound
from hive.text import counted, duration, shell_word, shown_lines
from hive.times import json_default

T = TypeVar("T")

if TYPE_CHECKING:
    from hive.domain.bulk import CellFile
    from hive.domain.workspace import Workspace
    from hive.models import Cell
    from hive.models.cell import Page


def compact(value: Any, limit: int = 80) -> str:
    """A value as one line of JSON, cut to ``limit`` characters."""
    text = json.dumps(value, ensure_ascii=False, default=json_default)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def when(epoch: float | None) -> str:
    """A time as local date and time (``-``: none)."""
    if epoch is None:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def _each(result: Any) -> list[Any]:
    """The cells of a command given one id (a cell) or several (a list)."""
    return result if isinstance(result, list) else [result]


def _line(template: str, inputs: Callable[[Any, dict[str, Any]], None] | None = None) -> Presenter:
    """A one-line confirmation per cell: ``template`` formats ``cell``."""

    def render(result: Any, params: Any, ws: Workspace) -> None:
        for cell in _each(result):
            output.say(template.format(cell=cell))

    return Presenter(render=render, inputs=inputs)


def _stdin_for(
    *names: str, exact: bool = False, required: bool = False
) -> Callable[[Any, dict[str, Any]], None]:
    """An ``inputs`` hook: the text of ``names`` given as ``-`` is read from standard
    input, as ``mail send -b -`` reads a body (``hive create -d -``, ``hive comment ID
    -``); two of them given so is refused (one standard input). The line ends closing
    it are dropped, as the shell's ``$(...)`` drops them: ``echo x | hive create t -d -``
    is ``-d x``; ``exact``: kept (a scratchpad's content is a file's). ``required``: a
    text that must not be empty (a comment's) is refused naming standard input when
    that gave nothing (not "String should have at least 1 character")."""

    def read(ws: Any, given: dict[str, Any]) -> None:
        dashed = [name for name in names if given.get(name) == "-"]
        if len(dashed) > 1:
            shown = ", ".join("--" + name.replace("_", "-") for name in dashed)
            raise InvalidInput(f"only one text can be read from standard input ('-'): {shown}")
        if dashed:
            text = stdin_text()
            given[dashed[0]] = text if exact else text.rstrip("\r\n")
            if required and not given[dashed[0]].strip():
                raise InvalidInput(
                    f"{dashed[0].upper()} was to be read from standard input ('-'), which gave"
                    " nothing: pipe the text in, or give it as an argument"
                )

    return read


def _resolved(ws: Workspace, given: str) -> str:
    """The full id ``given`` names (as typed when it no longer resolves)."""
    from hive.domain.cells import resolve_id
    from hive.errors import HiveError

    try:
        return resolve_id(ws.cells(), given)
    except HiveError:
        return given


def _show_notes(ws: Workspace, result: Any) -> None:
    from hive.domain.damage import cell_file_problem

    for cell in _each(result):
        problem = cell_file_problem(ws, cell.id)
        if problem is not None:
            output.err(f"warning: {problem}")


def _show(result: Any, params: Any, ws: Workspace) -> None:
    for position, cell in enumerate(_each(result)):
        if position:
            output.say("")
        output.cell_detail(cell)


def _list_notes(ws: Workspace, cells: list[Cell]) -> None:
    from hive.domain.damage import (
        directories_in_place_of_cells,
        directory_message,
        unloadable_edits,
    )

    for err in ws.cells().problems.values():
        output.err(f"warning: {err.message}")
    for problem in unloadable_edits(ws, [cell.id for cell in cells]):
        output.err(f"warning: {problem}")
    committed = set(ws.cells().problems)
    for relative in directories_in_place_of_cells(ws):
        if relative not in committed:
            output.err(f"warning: {directory_message(relative)}")


def _cell_table(cells: Page[Cell], params: Any, ws: Workspace) -> None:
    output.cell_table(cells)
    _page_notice(cells, "cells")


def _page_notice(cells: Page[Cell], what: str) -> None:
    """``showing N of M ...`` on stderr when a page holds fewer than all (with --json
    too: a program reading the page learns it is one), worded as the lean path words
    it (hive/cli/lean.py _emit)."""
    if cells.total > len(cells):
        output.err(f"showing {len(cells)} of {cells.total} {what} (--all for every one)")


def _list_json(cells: Page[Cell], params: Any, ws: Workspace) -> None:
    output.emit_json(cells)
    _page_notice(cells, "cells")


def _ready_json(cells: Page[Cell], params: Any, ws: Workspace) -> None:
    output.emit_json(cells)
    if not params.claim:
        _page_notice(cells, "ready cells")


def _updated(result: Any, params: Any, ws: Workspace) -> None:
    """``updated ...`` per cell; ``nothing to change in ...`` for a cell the call left
    as it was (nothing asked, or only what it had: worded as the lean path words it,
    hive/cli/lean_write.py update)."""
    for cell in _each(result):
        done = "updated" if cell.changed else "nothing to change in"
        output.say(f"{done} {cell.id}  [{cell.status}] {cell.title}")


def _ready(cells: Page[Cell], params: Any, ws: Workspace) -> None:
    if not params.claim:
        output.cell_table(cells)
        _page_notice(cells, "ready cells")
        return
    output.say(f"claimed {cells[0].id}  {cells[0].title}" if cells else "nothing ready to claim")


def _dep_tree(tree: Any, params: Any, ws: Workspace) -> None:
    from rich.tree import Tree

    room = output.columns()

    def label(node: Any, depth: int) -> str:
        """A node's line: its title cut with '…' to the width left after the tree's
        guides (4 columns a level), the id and status, and the dependency's type."""
        kind = f" ({node.type})" if node.type else ""
        status = f"{node.status} (deleted)" if node.deleted else node.status  # as hive show
        head, title = f"{node.id} [{status}] ", node.title or ""
        if room is not None:
            left = room - 4 * depth - output.width(head) - output.width(kind)
            title = output.fit(title, max(left, 12))
        return output.escape(f"{head}{title}{kind}")

    def grow(branch: Any, node: Any, depth: int) -> None:
        for child in node.depends_on or node.dependents or ():
            grow(branch.add(label(child, depth + 1)), child, depth + 1)

    root = Tree(label(tree, 0))
    if tree.depends_on is not None and tree.dependents is not None:  # --direction both
        for heading, children in (("depends on", tree.depends_on), ("dependents", tree.dependents)):
            part = root.add(heading if children else f"{heading} (none)")  # never an empty one
            for child in children:
                grow(part.add(label(child, 2)), child, 2)
    else:
        grow(root, tree, 0)
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


def _read_cells(given: dict[str, Any]) -> tuple[CellFile, int]:
    """``hive create --from FILE``'s input: FILE's cells, and its size in bytes."""
    from hive.domain.bulk import read_cell_file

    path = given.pop("from_file")
    if any(value not in (None, False) for value in given.values()):
        usage_error("--from FILE takes the cells' fields from FILE: give no TITLE or options")
    if path == "-" and sys.stdin.isatty():  # else a person sees nothing happen
        output.err("reading cells from standard input (YAML or JSON lines; Ctrl-D ends)")
    return _problems_shown(lambda: read_cell_file(path, stdin=sys.stdin.buffer.read)), _input_size(
        path
    )


def _cell_claims(found: tuple[CellFile, int]) -> list[str]:
    from hive.domain.bulk import claimed_files

    return claimed_files(found[0])


def _problems_shown(call: Callable[[], T]) -> T:
    """``call()``; the problems of a file it refuses each on a line of stderr first."""
    try:
        return call()
    except InvalidInput as exc:
        found = exc.details.get("problems") or []
        for problem in found if len(found) > 1 and not OPTIONS.json else []:
            output.err(problem["message"])  # one line each, like a compiler
        raise


def _create_from(given: dict[str, Any], found: tuple[CellFile, int]) -> None:
    """``hive create --from FILE``: every cell of FILE in one commit."""
    from hive.domain.bulk import create_cells

    cells_file, size = found

    ws = workspace()
    with output.progress_bar(size, enabled=not OPTIONS.json) as bar:
        created = _problems_shown(lambda: create_cells(ws, cells_file=cells_file, progress=bar))
    commit = f" in commit {created.commit[:12]}" if created.commit else " (staged)"
    show(created, False, lambda: output.say(f"created {counted(created.count, 'cell')}{commit}"))


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
        render=_create,
        extra=Extra("from_file", "--from FILE", FROM_FILE, _read_cells, _create_from, _cell_claims),
        inputs=_stdin_for("description"),
    ),
    "show": Presenter(render=_show, notes=_show_notes),
    "list": Presenter(render=_cell_table, notes=_list_notes, json=_list_json),
    "ready": Presenter(render=_ready, notes=_list_notes, json=_ready_json),
    "update": Presenter(
        render=_updated, inputs=_stdin_for("description", "design", "acceptance", "append_notes")
    ),
    "start": _line("started {cell.id}  (assignee {cell.assignee})"),
    "close": _line("closed {cell.id}  {cell.title}"),
    "reopen": _line("reopened {cell.id}  {cell.title}"),
    "delete": _line("deleted {cell.id}  {cell.title}"),
    "comment": _line(
        "commented on {cell.id}  {cell.title}", inputs=_stdin_for("text", required=True)
    ),
    "resolve": _line("resolved {cell.id}  {cell.title}"),
    "dep add": Presenter(
        render=lambda cell, params, ws: output.say(
            f"{cell.id} now depends on {_resolved(ws, params.target)} ({params.type or 'blocks'})"
        )
    ),
    "dep remove": Presenter(
        render=lambda cell, params, ws: output.say(
            f"{cell.id} no longer depends on {_resolved(ws, params.target)}"
            + (f" ({params.type})" if params.type else "")
        )
    ),
    "dep tree": Presenter(render=_dep_tree),
}


# ------------------------------------------------------------------ mail


_INBOX_FIELDS = "id read importance sender thread_id subject ack_required acked".split()


def _inbox(headers: list[Any], params: Any, ws: Workspace) -> None:
    from hive.cli.markup import NO_MESSAGES, inbox_line

    out = output.console(wrap=True)
    if not headers:
        out.print(NO_MESSAGES)
    for header in headers:
        out.print(inbox_line(**{name: getattr(header, name) for name in _INBOX_FIELDS}))
    _inbox_notice(headers, params, ws)


def _inbox_json(headers: list[Any], params: Any, ws: Workspace) -> None:
    output.emit_json(headers)
    _inbox_notice(headers, params, ws)


def _inbox_notice(headers: list[Any], params: Any, ws: Workspace) -> None:
    """On stderr, when the inbox holds more messages than were shown (as list's page)."""
    from hive.cli.markup import inbox_notice
    from hive.domain.mail import inbox_size

    size = inbox_size(
        ws,
        agent=params.agent or ws.actor,
        urgent_only=params.urgent_only,
        unread_only=params.unread_only,
    )
    notice = inbox_notice(len(headers), size)
    if notice:
        output.err(notice)


def _message(message: Any, params: Any, ws: Workspace) -> None:
    from hive.cli.markup import message_lines

    out = output.console()
    header = message.model_dump(mode="json", by_alias=True)  # the time as the JSON shows it
    for line in message_lines(header, message.body, ws.actor):
        out.print(line)


# ------------------------------------------------------------------ reservations


def _from_cwd(ws: Workspace, given: dict[str, Any], key: str = "paths") -> None:
    """Relative patterns (and paths) are relative to the current directory, as in git."""
    patterns = given.get(key)
    if not patterns:
        return
    base = os.path.realpath(os.path.abspath(OPTIONS.directory))
    relative = os.path.relpath(base, os.path.realpath(ws.root)).replace(os.sep, "/")
    if relative == "." or relative.startswith(".."):
        return
    given[key] = [p if os.path.isabs(p.strip()) else f"{relative}/{p.strip()}" for p in patterns]


def _touched_from_cwd(ws: Workspace, given: dict[str, Any]) -> None:
    """``--files-touched`` are files, named from the current directory as ``git add``'s."""
    _from_cwd(ws, given, "files_touched")


def _release_inputs(ws: Workspace, given: dict[str, Any]) -> None:
    if not any(given.get(name) for name in ("paths", "reservation_ids", "all", "agent")):
        usage_error("give PATTERN..., --id ID, --all or --agent NAME")
    _from_cwd(ws, given)


def _reserved(result: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    for item in result.granted:
        kind = "exclusive" if item.exclusive else "shared"
        done = "renewed" if item.id in result.renewed else "reserved"  # held already
        out.print(
            f"{done} #{item.id} {output.escape(item.path_pattern)} ({kind})"
            f" until {item.expires_at:%H:%M:%S}Z"
        )
    for conflict in result.overridden:
        overrode = output.escape(f"{conflict.holder}'s {conflict.pattern}")
        out.print(f"[yellow]overrode {overrode}[/yellow]")


def _released(result: Any, params: Any, ws: Workspace) -> None:
    not_held = f"; not held: {', '.join(result.not_found)}" if result.not_found else ""
    output.say(f"released {len(result.released)} reservation(s){not_held}")


def _reservation_notes(ws: Workspace, items: list[Any]) -> None:
    from hive.domain.reservations import reservation_problems

    for problem in run_op(lambda: reservation_problems(ws)):
        output.err(f"warning: {problem.message}; reserving and committing are blocked until fixed")


def _reservations(items: list[Any], params: Any, ws: Workspace) -> None:
    from hive.domain.contest import yielded_reservations

    for item in run_op(lambda: yielded_reservations(ws)):
        if params.agent is None or item.agent == params.agent:
            winner = item.yielded_to
            assert winner is not None
            output.say(
                f"contested across clones: {item.agent}'s #{item.id}"
                f" {item.path_pattern!r} yielded to {winner.holder}'s"
                f" #{winner.reservation_id} {winner.pattern!r} (earliest grant wins)"
            )
    if not items:
        output.say("no active reservations")
        return
    shown = "".join(line.rstrip() + "\n" for line in _reservation_lines(items))
    sys.stdout.write(shown_lines(shown))
    sys.stdout.flush()


RESERVATION_COLUMNS = ("ID", "AGENT", "KIND", "CELL", "EXPIRES")


def _reservation_lines(items: list[Any]) -> list[str]:
    """The table of ``hive reservations``, as wide as the terminal: ids, cells and times
    whole, long agent names cut, the pattern last and never cut (folded onto the next
    lines under itself when it does not fit). Names are laid out as shown (a hidden
    character as its ``<U+XXXX>``, never split by a cut or a fold)."""
    from hive.cli.lean import cut, text_width
    from hive.text import without_control

    rows = [
        (
            str(item.id),
            without_control(item.agent),
            "exclusive" if item.exclusive else "shared",
            item.cell or "-",
            f"{item.expires_at:%Y-%m-%d %H:%M:%S}Z",
        )
        for item in items
    ]
    widths = [
        max(len(name), *(text_width(row[n]) for row in rows))
        for n, name in enumerate(RESERVATION_COLUMNS)
    ]
    width = output.columns()
    if width is not None:  # piped without $COLUMNS: agent names whole too, for grep
        widths[1] = min(widths[1], 16)
    lead = sum(widths) + 2 * len(widths)
    room = None if width is None else max(width - lead, 12)
    patterns = ["PATTERN", *(without_control(item.path_pattern) for item in items)]
    lines = []
    for fields, pattern in zip([RESERVATION_COLUMNS, *rows], patterns, strict=True):
        cells = [_padded(cut(text, size), size) for text, size in zip(fields, widths, strict=True)]
        pieces = _folded(pattern, room)
        lines.append("  ".join([*cells, pieces[0] if pieces else ""]))
        lines += [" " * lead + piece for piece in pieces[1:]]
    return lines


def _padded(text: str, size: int) -> str:
    return text + " " * (size - output.width(text))


def _folded(text: str, room: int | None) -> list[str]:
    """``text`` in lines of at most ``room`` terminal columns (one line when ``room`` is
    None), a ``<U+XXXX>`` never split (a marker wider than ``room`` has a line of its
    own)."""
    from hive.cli.lean import text_width
    from hive.text import shown_pieces

    if room is None or text_width(text) <= room:
        return [text] if text else []
    lines: list[str] = []
    line, used = "", 0
    for piece in shown_pieces(text):
        size = text_width(piece)
        if line and used + size > room:
            lines.append(line)
            line, used = "", 0
        line, used = line + piece, used + size
    return [*lines, line]


PRESENTERS.update(
    {
        "mail send": Presenter(
            render=lambda sent, params, ws: output.say(
                f"sent #{sent.message_id} to {', '.join(sent.recipients)}"
            ),
            inputs=_stdin_for("body"),
        ),
        "mail inbox": Presenter(render=_inbox, json=_inbox_json),
        "mail read": Presenter(render=_message),
        "mail ack": Presenter(
            render=lambda acked, params, ws: output.say(f"acknowledged #{acked.message_id}")
        ),
        "reserve": Presenter(render=_reserved, inputs=_from_cwd),
        "release": Presenter(render=_released, inputs=_release_inputs),
        "reservations": Presenter(render=_reservations, notes=_reservation_notes),
    }
)


# ------------------------------------------------------------------ history & swarm


def _text(text: str) -> None:
    output.console().print(output.escape(text))


def _room(used: int) -> int | None:
    """The columns left on a line of the output's width after ``used`` (whole when piped)."""
    width = output.columns()
    return None if width is None else max(width - used, 12)


def _author_name(author: str) -> str:
    """``Ann User`` of a commit's ``Ann User <ann@example.com>``: who made a commit
    without hive's trailers (your own commit of cells staged with HIVE_AUTOCOMMIT=0)."""
    return author.rsplit(" <", 1)[0]


def _audit_kind(item: Any) -> str:
    """``mail override`` for an override recorded on the mail log (``ref``
    refs/hive/mail): a retire is one there and one in the commit that released what
    the agent held, two lines that read alike otherwise."""
    return f"mail {item.kind}" if item.ref != "HEAD" else str(item.kind)


def _log(entries: list[Any], params: Any, ws: Workspace) -> None:
    out = output.console()
    if params.overrides:
        lines = [
            f"[yellow]{item.commit[:10]}[/yellow] {_audit_kind(item):<16}"
            f" {output.escape(output.fit(item.detail, _room(28)))}"
            for item in entries
        ]
        empty = "no overrides and no unregistered identities"
    else:
        lines = []
        for entry in entries:  # the subject cut to fit, the commit and its author whole
            agent = entry.agent or _author_name(entry.author)
            subject = output.fit(entry.subject, _room(13 + output.width(agent)))
            lines.append(
                f"[yellow]{entry.commit[:10]}[/yellow] {output.escape(subject)}"
                f"  [dim]{output.escape(agent)}[/dim]"
            )
        empty = "no hive commits" + _shallow_note(ws)
    if not lines:
        out.print(f"[dim]{empty}[/dim]")
    for line in lines:
        out.print(line)


def _shallow_note(ws: Workspace) -> str:
    """Why a history may be empty in a shallow clone (its commits are past the
    boundary), and how to fetch them; nothing in a clone with its whole history."""
    if not ws.git.shallow_commits():
        return ""
    return (
        " here (this clone is shallow: older commits are not in it;"
        " 'git fetch --unshallow' fetches them)"
    )


def _swarm_init(report: Any, params: Any, ws: Workspace) -> None:
    """What ``swarm_init`` found, as lines a person reads (``--json``: the record)."""

    def found(available: bool) -> str:
        return "available" if available else "not available"

    cass = "found on PATH" if report.cass_available else "not found (optional: past sessions)"
    for name, value in (
        ("project", report.project_path),
        (
            "hive",
            f"{found(report.hive_available)}: {report.cells} cells, {report.outcomes} outcomes",
        ),
        ("mail", found(report.swarmmail_available)),
        ("agent", report.agent or "- (not acting as a registered agent)"),
        ("cass", cass),
        ("strategies", ", ".join(report.strategies) or "-"),
    ):
        output.row(f"{name:<11}{value}")


def _swarm_status(status: Any, params: Any, ws: Workspace) -> None:
    output.console(wrap=True).print(
        output.escape(f"{status.epic_id} {status.title}") + f": {status.completed}/{status.total}"
        f" done ({status.percent}%), {status.in_progress} in progress,"
        f" {status.blocked} blocked, {status.open} open"
    )


def _insights(report: Any, params: Any, ws: Workspace) -> None:
    from hive.cli.swarm_cmd import render_insights

    render_insights(report)


def _review(result: Any, params: Any, ws: Workspace) -> None:
    from hive.cli.swarm_cmd import render_review

    per = VIEW.get("per") or "both"
    if per not in ("both", "cell", "commit"):
        usage_error(f"--per must be cell, commit or both, not {per!r}")
    render_review(result, per=per)


PER = Annotated[
    str,
    typer.Option(
        "--per", help="cell: one diff per cell; commit: one diff per commit; both (default)."
    ),
]


def _progress(result: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    out.print(output.escape(f"{result.cell.id} {result.cell.status}"))
    if result.recipients:
        out.print("told " + output.escape(", ".join(result.recipients)))
    if result.not_posted:
        out.print(f"[yellow]not posted: {output.escape(result.not_posted)}[/yellow]")
    if result.next_step:
        out.print(f"next: {output.escape(_next_command(result.next_step, result.cell.id))}")


def _next_command(step: str, cell_id: str) -> str:
    """The next step as the command a person at the shell types (the tool call the
    result names is for an agent's runtime: ``--json`` keeps it)."""
    from hive.domain.swarm.progress import COMPLETE_HINT

    if step != COMPLETE_HINT:
        return step
    return (
        f"'hive swarm complete {shell_word(cell_id)} -s SUMMARY --files-touched PATH ...' to"
        " run the gate, close the cell, release your reservations and commit your files"
    )


def _prompt(result: Any, params: Any, ws: Workspace) -> None:
    _text(result.prompt)


def _choice(choice: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    out.print(f"[bold]{output.escape(choice.strategy)}[/bold] (confidence {choice.confidence:.2f})")
    output.say(choice.reasoning, wrap=True)
    for alt in choice.alternatives:
        output.say(f"  {alt.strategy}: {alt.score:.2f}")


PRESENTERS.update(
    {
        "log": Presenter(render=_log),
        "review": Presenter(render=_review, views={"per": (PER, "both")}),
        "swarm init": Presenter(render=_swarm_init),
        "swarm status": Presenter(render=_swarm_status),
        "swarm evaluation-prompt": Presenter(
            render=lambda found, params, ws: _text(found.prompt), inputs=_touched_from_cwd
        ),
        "swarm record-outcome": Presenter(
            render=lambda outcome, params, ws: output.say(f"recorded {outcome.id}"),
            inputs=_touched_from_cwd,
        ),
        "swarm insights": Presenter(render=_insights),
        "swarm select-strategy": Presenter(render=_choice),
        "swarm decompose": Presenter(render=_prompt),
        "swarm progress": Presenter(render=_progress, inputs=_touched_from_cwd),
        "swarm plan-prompt": Presenter(render=_prompt),
        "swarm subtask-prompt": Presenter(render=_prompt),
        "swarm spawn-subtask": Presenter(render=_prompt),
    }
)


# ------------------------------------------------------------------ shared context & queue


def _ctx_put(stored: Any, params: Any, ws: Workspace) -> None:
    from hive.models.coordination import CtxRefused

    if isinstance(stored, CtxRefused):
        lost = "is already set" if params.mode == "if_absent" else "changed"
        output.err(f"error: {stored.error}: {params.key} {lost} (now v{stored.version})")
    else:
        output.say(f"{params.key} = v{stored.version}")


def _queue_next(found: Any, params: Any, ws: Workspace) -> None:
    item = found.item
    if item is None:
        output.say("queue is empty")
    else:
        output.say(f"{item.id} {item.kind} {compact(item.payload)} until {when(item.lease_until)}")


def _queue_status(found: Any, params: Any, ws: Workspace) -> None:
    counts = found.counts
    line = (
        f"{found.length} waiting; queued {counts.queued}, claimed {counts.claimed},"
        f" done {counts.done}; phase {found.phase}"
    )
    if found.front is not None:
        line += f"; next {found.front.id} ({found.front.kind})"
    output.say(line)


PRESENTERS.update(
    {
        "ctx put": Presenter(
            render=_ctx_put, exit_code=lambda stored: 0 if getattr(stored, "ok", True) else 4
        ),
        "ctx get": Presenter(
            render=lambda found, params, ws: output.say(
                f"{compact(found.value, 2000)}  (v{found.version})"
            )
        ),
        "ctx keys": Presenter(
            render=lambda found, params, ws: output.say("\n".join(found.keys) or "no keys")
        ),
        "ctx wait": Presenter(
            render=lambda found, params, ws: output.say(
                f"{params.key}: {'reached' if found.met else 'timed out'} ({compact(found.value)})"
            ),
            exit_code=lambda found: 0 if found.met else 1,
        ),
        "queue add": Presenter(
            render=lambda added, params, ws: output.say(f"queued {added.id} ({added.kind})")
        ),
        "queue next": Presenter(
            render=_queue_next, exit_code=lambda found: 1 if found.item is None else 0
        ),
        "queue claim": Presenter(
            render=lambda got, params, ws: output.say(
                f"claimed {got.id} until {when(got.lease_until)}"
            )
        ),
        "queue complete": Presenter(render=lambda done, params, ws: output.say(f"{done.id} done")),
        "queue extend": Presenter(
            render=lambda got, params, ws: output.say(
                f"{got.id} leased until {when(got.lease_until)}"
            )
        ),
        "queue status": Presenter(render=_queue_status),
    }
)


# ------------------------------------------------------------------ blocked & stats


def _blocked(found: list[Any], params: Any, ws: Workspace) -> None:
    if not found:
        output.say("nothing is blocked")
        return
    output.cell_table(found)
    for cell in found:
        refs = getattr(cell, "open_blockers", None)  # ids only with --no-verbose
        waits = cell.blocked_by if refs is None else [f"{r.id} [{r.status}]" for r in refs]
        output.say_items(f"{cell.id} waits on ", waits)


def _stats(stats: Any, params: Any, ws: Workspace) -> None:
    output.say(
        f"{counted(stats.total, 'cell')}: {stats.open} not closed"
        f" ({stats.ready} ready, {stats.blocked} blocked)"
    )
    for name, counts in (
        ("status", stats.by_status),
        ("type", stats.by_type),
        ("priority", stats.by_priority),
        ("assignee", stats.by_assignee),
    ):
        shown = [f"{key} {value}" for key, value in counts.items() if value]
        output.say_items(f"  by {name:<9} ", shown or ["-"])
    lead = stats.lead_time
    if lead.closed:
        mean, median, most = (
            duration((hours or 0.0) * 3600)
            for hours in (lead.mean_hours, lead.median_hours, lead.max_hours)
        )
        output.say(f"  lead time    {lead.closed} closed: mean {mean}, median {median}, max {most}")
    else:
        output.say("  lead time    no closed cells yet")


PRESENTERS.update(
    {
        "blocked": Presenter(render=_blocked, notes=_list_notes),  # damage warned as list's
        "stats": Presenter(render=_stats),
    }
)


# ------------------------------------------------------------------ plans, epics, completion


def _plan_file(ws: Workspace, given: dict[str, Any]) -> None:
    """RESPONSE is a file with the plan (``-``: standard input)."""
    if given.get("response") is not None:
        given["response"] = run_op(lambda: read_source(given["response"], "the plan"))


def _validation(result: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    out.print("[green]valid[/green]" if result.valid else "[red]invalid[/red]")
    for issue in result.errors:
        out.print(f"[red]error[/red] {output.escape(f'{issue.message} — {issue.hint}')}")
    for issue in result.warnings:
        out.print(f"[yellow]warning[/yellow] {output.escape(f'{issue.message} — {issue.hint}')}")


VALIDATION = Presenter(
    render=_validation,
    inputs=_plan_file,
    exit_code=lambda result: 0 if result.valid else 2,
)


def _epic_created(cells: list[Cell], params: Any, ws: Workspace) -> None:
    output.say(f"created epic {cells[0].id}  {cells[0].title}")
    for child in cells[1:]:
        output.say(f"  {child.id}  {child.title}")


def _read_plan(given: dict[str, Any]) -> str:
    """``hive swarm create-epic SOURCE``'s input: the plan's text."""
    source = given.pop("source")
    if given.get("epic_title") or given.get("subtasks"):
        usage_error("give a plan file or --epic-title/--subtask, not both")
    return read_source(source, "the plan")


def _plan_claims(text: str) -> list[str]:
    """The globs a plan's subtasks claim (none for a plan that is not valid: creating
    it refuses it, saying why)."""
    from hive.domain.swarm.decompose import swarm_validate_decomposition

    plan = swarm_validate_decomposition(None, response=text).data
    return [] if plan is None else [glob for sub in plan.subtasks for glob in sub.files]


def _epic_from_plan(given: dict[str, Any], text: str) -> None:
    """``hive swarm create-epic SOURCE``: the epic of a plan file, checked first."""
    from hive.domain.swarm.decompose import create_epic_from_decomposition

    ws = workspace()
    strategy = given.get("strategy")
    cells = create_epic_from_decomposition(ws, decomposition=text, strategy=strategy)
    show(cells, False, lambda: output.cell_table(cells, title=f"epic {cells[0].id}"))


PLAN_SOURCE = Annotated[
    str | None,
    typer.Argument(
        metavar="SOURCE",
        help="File with the plan JSON, or '-' for stdin (or use --epic-title).",
        show_default=False,
    ),
]


def _completed(result: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    output.say(f"completed {result.cell.id} in {(result.commit or '')[:10]}")
    if result.released:
        out.print("released " + output.escape(", ".join(r.path_pattern for r in result.released)))
    if result.gate_skipped:
        out.print(f"[yellow]{output.escape(result.gate_skipped)}[/yellow]")
    if result.outcome.scope_violations:
        out.print(
            "[yellow]outside scope: "
            + output.escape(", ".join(result.outcome.scope_violations))
            + "[/yellow]"
        )


def _gate_failure(error: Any) -> None:
    """A failed gate's commands and output, and the evaluation's notes, on stderr."""
    for run in error.details.get("gate") or []:
        output.err(f"$ {run.get('command')}\n{str(run.get('output') or '').rstrip()}")
    notes = (error.details.get("evaluation") or {}).get("notes")
    if notes:
        output.err(f"evaluation notes: {notes}")


def _registered(result: Any, params: Any, ws: Workspace) -> None:
    if result.token is None:
        output.say(f"you are {result.name} (credential from HIVE_AGENT_TOKEN)")
        return
    output.say(f"registered {result.name}; its credential is shown only now:")
    output.say(f"export HIVE_AGENT={shell_word(result.name)} HIVE_AGENT_TOKEN={result.token}")


PRESENTERS.update(
    {
        "mail init": Presenter(render=_registered, opens=lambda: workspace(claim=False)),
        "swarm validate-decomposition": VALIDATION,
        "swarm validate": VALIDATION,
        "epic create": Presenter(render=_epic_created),
        "swarm create-epic": Presenter(
            render=lambda cells, params, ws: output.cell_table(cells, title=f"epic {cells[0].id}"),
            extra=Extra("source", "SOURCE", PLAN_SOURCE, _read_plan, _epic_from_plan, _plan_claims),
        ),
        "swarm complete": Presenter(
            render=_completed, explain=_gate_failure, inputs=_touched_from_cwd
        ),
    }
)


# ------------------------------------------------------------------ identities


def _identities(found: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    if not found:
        out.print("[dim]no agents registered[/dim]")
    for item in found:
        state = "retired" if item.retired_at else ("live" if item.credential else "mail only")
        role = " coordinator" if item.coordinator else ""
        out.print(output.escape(f"{item.name:<24} {state:<9}{role}  {item.session or ''}"))


def _whoami(me: Any, params: Any, ws: Workspace) -> None:
    output.say(f"{me.name}: {me.kind}{' (coordinator)' if me.coordinator else ''}")


PRESENTERS.update(
    {
        "agent register": PRESENTERS["mail init"],
        "agent list": Presenter(render=_identities),
        "agent retire": Presenter(
            render=lambda r, params, ws: output.say(
                f"retired {r.name}"
                + (f"; released {', '.join(r.released)}" if r.released else "")
                + (f"; open again: {', '.join(r.reopened)}" if r.reopened else "")
            )
        ),
        "agent whoami": Presenter(render=_whoami),
    }
)


# ------------------------------------------------------------------ the repository


def _initialised(result: Any, params: Any, ws: Workspace) -> None:
    verb = "initialised" if result.created else "already initialised"
    output.say(f"hive {verb} in {result.root} (prefix {result.prefix})")
    if result.settings_from:
        output.say(
            f"settings from {result.settings_from}'s hive (.hive/config.yaml as 'hive sync'"
            f" left it there); run 'hive sync' to receive its cells"
        )
    if result.remote_note:
        output.err(
            f"note: {result.remote_note}: initialised with the defaults; if it has a hive,"
            " run 'hive sync' once it can be reached and check 'hive doctor'"
        )
    if params.prefix and params.prefix != result.prefix:
        output.err(
            f"note: --prefix {params.prefix} was not applied: this hive's prefix is"
            f" {result.prefix}; for new cells to use {params.prefix}, set 'prefix:"
            f" {params.prefix}' in .hive/config.yaml and commit it"
        )
    if result.attributes and not result.created:
        output.say(f".gitattributes: hive's merge lines {result.attributes} (committed)")
    output.say(f"merge driver for .hive/ files: {result.merge_driver}")
    for remote in result.remotes:
        if remote in result.remotes_configured:
            output.say(f"git fetch/push of {remote} now carry hive's refs (refs/hive/*)")
        else:
            output.say(f"git fetch/push of {remote} carry hive's refs (refs/hive/*): unchanged")
    if not result.remotes:
        output.say(
            "no git remote yet: after 'git remote add', run 'hive init' again so that"
            " plain git fetch/push carry hive's refs (hive sync does it too)"
        )
    for note in result.notes:
        output.err(f"note: {note}")


def _doctor(report: Any, params: Any, ws: Workspace) -> None:
    out = output.console(wrap=True)
    for problem in report.problems:
        out.print(f"[red]{problem.kind}[/red]: {output.escape(problem.message)}")
    for warning in report.warnings:
        out.print(f"[yellow]warning {warning.kind}[/yellow]: {output.escape(warning.message)}")
    summary = "no problems" if report.ok else f"{len(report.problems)} problem(s)"
    out.print(f"checked {counted(report.cells, 'cell')}: {summary}")
    if report.objects is not None:
        output.object_store(report.objects)


def _packed(report: Any, params: Any, ws: Workspace) -> None:
    if report.skipped:
        output.say(f"nothing done: {report.skipped}")
    else:
        output.say(
            f"packed {report.packed} loose objects, merged {report.merged_packs} packs"
            f" in {report.seconds:.2f}s"
        )
    output.object_store(report.store)


def _hook(result: Any, params: Any, ws: Workspace) -> None:
    for each in [result, *result.also]:
        _one_hook(each)


def _hook_notes(ws: Workspace, result: Any) -> None:
    """A hook installed among the project's files (``core.hooksPath`` in the working
    tree): committed, it would need hive in every clone."""
    from hive.domain.hooks import in_working_tree

    if result.action == "installed" and in_working_tree(ws, result.path):
        output.err(
            f"note: {result.path} is in the working tree (core.hooksPath): hive's hook"
            " names this machine's Python; commit it only if every clone has hive (where"
            " hive is missing it blocks each commit), or keep it out of commits"
            " (.gitignore)"
        )


def _one_hook(result: Any) -> None:
    chained = f" (chains {result.chained})" if result.chained else ""
    if result.action == "restored":
        chained = " (your own hook, which hive had chained)"
    output.say(f"{result.action}: {result.path}{chained}")
    if result.set_aside:
        output.say(
            f"your hook that was there is kept as {result.set_aside} (not run: hive chains"
            f" {result.chained}; move it there to run it)"
        )


def _epic_status(status: Any, params: Any, ws: Workspace) -> None:
    out = output.console(wrap=True)
    epic = status.epic
    out.print(
        f"[bold]{output.escape(epic.id)}[/bold]  " + output.escape(f"{epic.title}  [{epic.status}]")
    )
    out.print(f"  {status.closed}/{status.total} closed ({status.percent_complete}%)")
    counts = ", ".join(f"{key} {value}" for key, value in sorted(status.by_status.items()))
    if counts:
        out.print(f"  {counts}")
    if status.children:
        output.cell_table(status.children)


def _bar(size: Callable[[Any], int], first: str = "reading") -> Callable[[Any], Any]:
    """A progress bar on a terminal for a call whose input is ``size(params)`` bytes."""
    return lambda params: output.progress_bar(size(params), enabled=not OPTIONS.json, first=first)


def _say_reading_stdin(ws: Any, given: dict[str, Any]) -> None:
    """``hive import beads -`` typed at a terminal: say what it waits for."""
    if given.get("path") == "-" and sys.stdin.isatty():
        output.err("reading a beads JSONL export from standard input (Ctrl-D ends)")


def _file_size(params: Any) -> int:
    try:
        return os.path.getsize(params.path)
    except OSError:
        return 0  # the import names the problem


def _synced(result: Any, params: Any, ws: Workspace) -> None:
    from hive.cli.lean_sync import synced_lines

    done = result.model_dump(mode="json")
    done["contested"] = [
        ((c.yielded.agent, c.yielded.path_pattern), (c.kept.agent, c.kept.path_pattern))
        for c in result.contested
    ]
    for line in synced_lines(done):
        output.say(line)


def _mail_synced(result: Any, params: Any, ws: Workspace) -> None:
    notes = [f"{result.received} new message(s)"]
    notes += ["merged"] * result.merged + ["pushed"] * result.pushed
    output.console().print(f"synced mail with {output.escape(result.remote)}: {', '.join(notes)}")


def _imported(result: Any, params: Any, ws: Workspace) -> None:
    output.say(
        f"imported {counted(result.imported, 'cell')} from {result.source}"
        + (f", updated {result.updated}" if result.updated else "")
        + (f", skipped {result.skipped} already present" if result.skipped else "")
        + (f" (commit {result.commit[:10]})" if result.commit else "")
    )
    for warning in result.warnings:
        output.err(f"warning: {warning}")
    if result.differing:
        shown = ", ".join(result.differing_ids)
        more = ", ..." if result.differing > len(result.differing_ids) else ""
        output.err(
            f"warning: the file's version of {counted(result.differing, 'skipped cell')}"
            f" ({shown}{more}) differs from the one here: kept as it is here; --update"
            " replaces it with the file's version when the file's is newer"
        )
    if result.kept:
        shown = ", ".join(result.kept_ids[:3]) + (", ..." if result.kept > 3 else "")
        output.err(
            f"warning: kept {counted(result.kept, 'cell')} as here ({shown}): the file's"
            " updated_at is not later than the cell's (or missing); --overwrite replaces"
            " them with the file's version"
        )
    for what, counts in (("status", result.mapped_statuses), ("type", result.mapped_types)):
        if counts:
            listed = ", ".join(f"{name} ({n})" for name, n in sorted(counts.items()))
            output.say(f"  beads {what} values hive lacks, mapped and recorded: {listed}")


def _exported(result: Any, params: Any, ws: Workspace) -> None:
    if params.path in (None, "-"):  # the JSONL itself, for a pipe
        sys.stdout.write(result.text or "")
        sys.stdout.flush()
        return
    output.say(f"exported {result.records} cells to {params.path}")


PRESENTERS.update(
    {
        "init": Presenter(render=_initialised),
        "doctor": Presenter(render=_doctor, exit_code=lambda report: 0 if report.ok else 1),
        "gc": Presenter(render=_packed),
        "hooks install": Presenter(render=_hook, notes=_hook_notes),
        "hooks uninstall": Presenter(render=_hook),
        "epic status": Presenter(render=_epic_status),
        "sync": Presenter(  # a sync waits on the network: always worth a bar
            render=_synced, progress=_bar(lambda params: output.PROGRESS_FROM, "fetching")
        ),
        "mail sync": Presenter(render=_mail_synced),
        "import beads": Presenter(
            render=_imported, progress=_bar(_file_size), inputs=_say_reading_stdin
        ),
        "export beads": Presenter(render=_exported),
    }
)


# ------------------------------------------------------------------ shared context, queue


def not_removed(key: str) -> str:
    """What ``ctx rm`` and ``blackboard rm`` say of a key that held nothing (exit 0: the
    key is gone either way)."""
    return f"{key} was not set: nothing removed"


def _ctx_entries(entries: Any, params: Any, ws: Workspace) -> None:
    if not entries:
        output.say("no shared context")
    for e in entries:
        output.row(f"{e.key}  v{e.version}  {e.agent}  {when(e.updated_at)}  {compact(e.value)}")


def _queue_items(items: Any, params: Any, ws: Workspace) -> None:
    if not items:
        output.say("no queue items")
    for i in items:
        holder = f" {i.claimed_by} until {when(i.lease_until)}" if i.status == "claimed" else ""
        lapsed = " (lease expired)" if i.lease_expired else ""
        output.row(f"{i.id}  {i.status}{holder}{lapsed}  {i.kind}  {compact(i.payload, 60)}")


PRESENTERS.update(
    {
        "ctx list": Presenter(render=_ctx_entries),
        "ctx rm": Presenter(
            render=lambda r, params, ws: output.say(
                f"removed {r.key} (was v{r.version})" if r.version else not_removed(r.key)
            )
        ),
        "ctx phase": Presenter(render=lambda r, params, ws: output.say(f"phase {r.value or 0}")),
        "queue list": Presenter(render=_queue_items),
    }
)


# ------------------------------------------------------------------ proposals, events


def _proposals(found: Any, params: Any, ws: Workspace) -> None:
    out = output.console()
    if not found:
        out.print("[dim]no proposals[/dim]")
    for proposal in found:
        out.print(
            f"{proposal.id}  {proposal.status:<8} {output.escape(proposal.path)}"
            f"  ({len(proposal.content.encode())} bytes, by {output.escape(proposal.agent)})"
        )


def _decisions_file(ws: Workspace, given: dict[str, Any]) -> None:
    """DECISIONS is a file with the JSON (``-``, the default: standard input); an empty
    one says where the decisions were looked for (not "invalid DECISIONS ''")."""
    source = given.get("decisions") or "-"

    def read() -> str:
        text = read_source(source, "the decisions")
        if not text.strip():
            where = "standard input" if source == "-" else source
            raise InvalidInput(
                f"{where} is empty: give the arbiter's"
                ' {"decisions": [{"path": ..., "action": "approve"|"reject", "notes": ...}]}'
                " in a file ('hive proposals decide FILE') or on standard input"
            )
        return text

    given["decisions"] = run_op(read)


def _decided(report: Any, params: Any, ws: Workspace) -> None:
    for entry in report:
        output.say(f"{entry.id or '-'}  {entry.status:<20} {entry.path}  {entry.result or ''}")


def _unmatched(report: Any) -> list[str]:
    return [entry.path for entry in report if entry.status == "no_pending_proposal"]


def _failed(report: Any) -> list[Any]:
    """Approved writes that could not be applied (changed since, denied now, ...)."""
    return [entry for entry in report if entry.status == "failed"]


def _unmatched_note(ws: Workspace, report: Any) -> None:
    if _unmatched(report):
        output.err(f"error: no pending proposal for {', '.join(_unmatched(report))}")
    for entry in _failed(report):
        output.err(f"error: could not apply {entry.path}: {entry.result}")


def _decide_exit_code(report: Any) -> int:
    """3 when a decision names no pending proposal, 1 when an approved write could
    not be applied, else 0 (the report lists every decision either way)."""
    if _unmatched(report):
        return NotFound.exit_code
    return 1 if _failed(report) else 0


def _event_line(event: Any) -> str:
    seen = _as_logged(event)
    ts, duration = (seen.get(key) for key in ("ts", "duration_ms"))
    stamp = (
        time.strftime("%H:%M:%S", time.gmtime(ts))
        if isinstance(ts, int | float) and 0 <= ts < 1e11
        else "--:--:--"  # a line written by hand or by something else than hive
    )
    milliseconds = duration if isinstance(duration, int | float) else 0
    args = seen.get("args")
    shown = "" if args in (None, {}) else compact(args, 120)
    agent, tool, outcome = (str(seen.get(key) or "-") for key in ("agent", "tool", "outcome"))
    if seen.get("surface") == "cli":  # an agent's command, not a tool call
        tool += " (cli)"
    width = output.columns()
    if width is not None and width < 100:  # narrower columns, long names cut to them
        agent, tool, outcome = output.fit(agent, 12), output.fit(tool, 24), output.fit(outcome, 16)
        line = f"{stamp} {agent:<12} {tool:<24} {outcome:<16} {milliseconds:>7.1f}ms {shown}"
    else:
        line = f"{stamp}  {agent:<14} {tool:<28} {outcome:<22} {milliseconds:>8.1f} ms  {shown}"
    return output.fit(line.rstrip())  # no blanks at the end of a call without arguments


def _as_logged(event: Any) -> dict[str, Any]:
    """The event's line as written (a line whose known keys have other types than hive
    writes is kept as it is: no serializer warnings)."""
    logged: dict[str, Any] = event.model_dump(exclude_unset=True, warnings=False)
    return logged


def _print_events(events: list[Any], as_json: bool) -> None:
    for event in events:
        if as_json:
            sys.stdout.write(json.dumps(_as_logged(event), default=json_default) + "\n")
        else:
            sys.stdout.write(shown_lines(_event_line(event)) + "\n")
    sys.stdout.flush()


def _events(as_json: bool) -> Callable[[Any, Any, Workspace], None]:
    """The log's end, then (``--follow``) what is appended, read from where it ended.
    With ``--json``: one JSON list, as every command that answers once prints (``[]``
    for none); followed, a stream: JSON lines, one event per line."""

    def print_events(events: Any, params: Any, ws: Workspace) -> None:
        from hive.domain.events import events_size, read_appended
        from hive.ops.audit import as_events

        if as_json and not VIEW.get("follow"):
            output.emit_json([_as_logged(event) for event in events])
            return
        state_dir = ws.git.paths.hive_state_dir
        offset = events_size(state_dir)
        _print_events(events, as_json)
        if not events and not as_json:  # JSON lines: nothing for nothing
            output.say("no tool calls recorded yet")
        while VIEW.get("follow"):
            time.sleep(0.5)
            appended, offset = read_appended(state_dir, offset)
            _print_events(as_events(appended), as_json)

    return print_events


FOLLOW = Annotated[bool, typer.Option("--follow", "-f", help="Keep printing new events.")]

PRESENTERS.update(
    {
        "proposals list": Presenter(render=_proposals),
        "proposals decide": Presenter(
            render=_decided,
            inputs=_decisions_file,
            notes=_unmatched_note,
            exit_code=_decide_exit_code,
            opens=lambda: workspace(claim=False),
        ),
        "events": Presenter(
            render=_events(False), json=_events(True), views={"follow": (FOLLOW, False)}
        ),
    }
)


# ------------------------------------------------------------------ seed 003: coordination


def _bb_get(found: Any, params: Any, ws: Workspace) -> None:
    note = " (expired)" if found.expired else "" if found.exists else " (not set)"
    output.say(f"{compact(found.value, 2000)}{note}")


def _bb_list(entries: dict[str, Any], params: Any, ws: Workspace) -> None:
    if not entries:
        output.say("blackboard is empty")
    for key, entry in entries.items():
        if entry is None:
            output.say(f"{key}  (expired)")
        else:
            until = f" until {entry.expires_at}" if entry.expires_at else ""
            output.row(f"{key}  {entry.source_agent}{until}  {compact(entry.value)}")


def _permission(answer: Any, params: Any, ws: Workspace) -> None:
    until = f" until {answer.expires_at:%Y-%m-%d %H:%M}Z" if answer.expires_at else ""
    verdict = f"granted{until}" if answer.granted else "denied"
    output.say(f"{answer.resource_type}: {verdict} ({answer.reason})")


def _decisions(found: list[Any], params: Any, ws: Workspace) -> None:
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


def _swarm_state(state: Any, params: Any, ws: Workspace) -> None:
    for a in state.agents or []:
        output.row(f"agent {a.agent_id}: {a.status} {' '.join(a.tasks)}")
    expired = set(state.expired_tasks or [])  # whole tasks and their summaries alike
    for t in state.tasks or []:
        late = " EXPIRED" if t.task_id in expired else ""
        output.row(f"task {t.task_id} [{t.status}{late}] {t.agent_id or '-'}: {t.title}")
    for key, entry in (state.blackboard or {}).items():
        output.row(f"blackboard {key}: {compact(entry.value) if entry else 'null (expired)'}")
    for g in state.permissions or []:
        output.say(f"grant {g.id}: {g.agent} {g.resource_type} until {g.expires_at}")
    _swarm_history(state.history)
    if not (state.agents or state.tasks or state.blackboard or state.permissions):
        output.say(f"nothing in scope {params.scope}: no agents, tasks, entries or grants")
    for name, total in (state.truncated or {}).items():
        if name != "expiredTasks":  # the tasks shown are flagged
            output.say(f"({name}: the first {params.limit} of {total}; --limit all for every one)")


def _swarm_history(history: dict[str, Any] | None) -> None:
    """``--include-history``: the latest closed tasks and permission decisions."""
    for task in (history or {}).get("tasks") or []:
        output.say(f"done {task['taskId']} {task.get('agentId') or '-'}: {task['title']}")
    for decision in (history or {}).get("permissions") or []:
        verdict = "granted" if decision.get("granted") else "denied"
        output.say(
            f"decision {decision['id']}: {decision['agent']} {decision['resourceType']}"
            f" {verdict} — {decision.get('reason', '')}"
        )


def _synthesis(found: Any, params: Any, ws: Workspace) -> None:
    states = ", ".join(f"{r.task_id} {r.state}" for r in found.subtasks)
    output.say(f"{found.strategy}: {'complete' if found.complete else 'incomplete'} ({states})")
    if found.complete:
        output.say(compact(found.result, 4000))


def _spawned(found: Any, params: Any, ws: Workspace) -> None:
    output.say(f"created epic {found.epic_id} ({found.synthesis_strategy})")
    for task in found.tasks:
        output.say(f"  {task.task_id}  {task.title}")


def _scenario_files(ws: Workspace, given: dict[str, Any]) -> None:
    """SCENARIOS are JSON files ('-': stdin): a list, or {"scenarios": [...]}."""
    import json

    def read(source: str) -> list[Any]:
        try:
            found = json.loads(read_source(source, "the scenarios"))
        except ValueError as exc:
            raise InvalidInput(f"{source}: not JSON: {exc}", field="scenarios") from None
        except RecursionError:
            raise InvalidInput(f"{source}: nested too deeply", field="scenarios") from None
        if isinstance(found, dict):
            found = found.get("scenarios")
        if not isinstance(found, list):
            raise InvalidInput(
                f'{source}: expected a list of scenarios (or {{"scenarios": [...]}})',
                field="scenarios",
            )
        return found

    sources = given.get("scenarios") or []
    given["scenarios"] = run_op(lambda: [item for source in sources for item in read(source)])


def _qa_run(found: Any, params: Any, ws: Workspace) -> None:
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


def _qa_history(runs: list[Any], params: Any, ws: Workspace) -> None:
    if not runs:
        output.say("no QA runs yet")
    for r in runs:
        output.say(f"run {r.run_id}  {r.ran_at}  {r.agent}  {r.pass_rate:.0%} of {r.scenarios}")


MEMORY = Presenter(
    render=lambda done, params, ws: output.say(
        f"{done.section} {'updated' if done.changed else 'unchanged'}"
    )
)

PRESENTERS.update(
    {
        "delegate": Presenter(
            render=lambda done, params, ws: output.say(
                f"delegated {done.task_id} to {done.target_agent} (deadline {done.deadline})"
            )
        ),
        "swarm state": Presenter(render=_swarm_state),
        "epic spawn": Presenter(render=_spawned),
        "epic synthesize": Presenter(render=_synthesis),
        "permissions request": Presenter(
            render=_permission, exit_code=lambda answer: 0 if answer.granted else 5
        ),
        "permissions list": Presenter(render=_decisions),
        "blackboard set": Presenter(
            render=lambda done, params, ws: output.say(
                f"{done.key} written" + (f" until {done.expires_at}" if done.expires_at else "")
            )
        ),
        "blackboard get": Presenter(render=_bb_get),
        "blackboard list": Presenter(render=_bb_list),
        "blackboard rm": Presenter(
            render=lambda found, params, ws: output.say(
                f"removed {found.key}" if found.entry is not None else not_removed(found.key)
            )
        ),
        "memory show": Presenter(
            render=lambda text, params, ws: output.say(text.rstrip(), wrap=True)
        ),
        "memory add": MEMORY,
        "memory set": MEMORY,
        "memory complete": MEMORY,
        "qa run": Presenter(
            render=_qa_run, inputs=_scenario_files, exit_code=lambda run: 1 if run.failed else 0
        ),
        "qa history": Presenter(render=_qa_history),
    }
)


# ------------------------------------------------------------------ seeds 004 and 002: agents


def _search(found: Any, params: Any, ws: Workspace) -> None:
    matches = found.result.matches
    if not matches:
        output.say(f"nothing matches {params.term!r}")
    for m in matches:  # where it is first (the cell, a message), so it can be acted on
        snippet = " ".join(m.content_snippet.split())
        where = " ".join(
            part
            for part in (f"mail #{m.message_id}" if m.message_id is not None else "", m.cell_id)
            if part
        )
        who = m.agent_id or "?"  # nobody named (an imported issue without its creator)
        output.say(
            output.fit(
                f"{where}  round {m.round_number}  {who} ({m.agent_role}, {m.type}): {snippet}"
            )
        )
    if found.result.total > len(matches):
        output.err(f"showing {len(matches)} of {found.result.total} matches (--limit for more)")


def _pad_list(found: Any, params: Any, ws: Workspace) -> None:
    from hive.domain.scratchpad import human_size

    output.say(f"Scratchpad contents ({found.count} entries):")
    for e in found.entries:  # the path whole, a long title cut to fit
        head = f"  scratchpad://{e.file_path} - "
        tail = f" ({human_size(e.size)}) by {e.agent} {when(e.updated_at)}"
        output.row(head + output.fit(repr(e.title), _room(output.width(head + tail))) + tail)
    if found.count > len(found.entries):
        output.err(f"showing {len(found.entries)} of {found.count} entries (--limit for more)")


def _raw(text: str) -> None:
    """Stored text as it is, but its control characters (other than line breaks and
    tabs) shown as ``?`` (``--json`` gives it exactly); on a terminal a text not ending
    in a line break gets one, so the shell's next prompt starts a line of its own
    (piped, the text is not lengthened)."""
    ending = "\n" if text and not text.endswith("\n") and sys.stdout.isatty() else ""
    sys.stdout.write(shown_lines(text) + ending)


TODO_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


def _todos(found: Any, params: Any, ws: Workspace) -> None:
    lists = found if isinstance(found, list) else [found]
    if not lists:
        output.say("no todo lists")
    for entry in lists:
        output.say(f"{entry.agent}: {entry.completed}/{len(entry.todos)} done")
        for todo in entry.todos:
            output.say(f"  {TODO_MARKS[todo.status]} {todo.content}", wrap=True)


PRESENTERS.update(
    {
        "search": Presenter(render=_search),
        "scratchpad write": Presenter(
            render=lambda done, params, ws: output.say(done.message),
            inputs=_stdin_for("content", exact=True),
        ),
        "scratchpad read": Presenter(render=lambda text, params, ws: _raw(text)),
        "scratchpad list": Presenter(render=_pad_list),
        "scratchpad clear": Presenter(
            render=lambda done, params, ws: output.say(f"removed {done.removed} entries")
        ),
        "todo set": Presenter(
            render=lambda done, params, ws: output.say(f"{len(done.todos)} todos for {done.agent}")
        ),
        "todo show": Presenter(render=_todos),
        "todo list": Presenter(render=_todos),
    }
)
