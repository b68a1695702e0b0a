"""Rendering results for people (rich) or programs (``--json``)."""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from hive.cli.markup import escape as escape
from hive.cli.markup import plain_markup as plain_markup
from hive.cli.markup import related_rows
from hive.cli.markup import rich_escape as rich_escape
from hive.models import Cell
from hive.times import format_time

STATUS_STYLE = {
    "open": "white",
    "in_progress": "yellow",
    "blocked": "red",
    "deferred": "dim",
    "closed": "green",
}


def to_jsonable(value: Any) -> Any:
    """``value`` as JSON values (times as the files write them: ``hive.times``)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=False)
    if isinstance(value, datetime):
        return format_time(value)
    if isinstance(value, list | tuple):
        return [to_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: to_jsonable(item) for key, item in value.items()}
    return value


def emit_json(value: Any) -> None:
    """Print ``value`` as indented JSON (pydantic's Rust serializer: fast for 10k cells):
    a command's one answer, which stands once written (``hive.cli.answer_stands``)."""
    from pydantic_core import to_json

    from hive.cli import answer_stands
    from hive.jsontext import inert_bytes

    data = inert_bytes(to_json(value, indent=2) + b"\n")
    answer_stands()
    sys.stdout.buffer.write(data)
    sys.stdout.flush()


def json_line(value: Any) -> bytes:
    """``value`` as one line of compact JSON (pydantic's), :func:`hive.jsontext.inert`:
    a stream of events (``hive demo --json``)."""
    from pydantic_core import to_json

    from hive.jsontext import inert_bytes

    return inert_bytes(to_json(value)) + b"\n"


def columns() -> int | None:
    """The width output must fit: $COLUMNS when set, else the terminal's; None when
    piped without $COLUMNS (nothing is wrapped or cut, so tools can grep whole lines)."""
    import os
    import shutil

    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:
        return int(given)
    if sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


def fit(text: str, room: int | None = None) -> str:
    """``text`` as shown (``hive.text.shown_lines``: a hidden character as its
    ``<U+XXXX>``, which counts in the width) cut with an ellipsis to ``room`` terminal
    columns (else the output's width; piped without $COLUMNS: whole), as ``hive list``
    cuts a title: never inside a ``<U+XXXX>``."""
    from hive.cli.lean import cut
    from hive.text import shown_lines

    return cut(shown_lines(text), columns() if room is None else room)


def width(text: str) -> int:
    """Terminal columns of ``text`` (a wide character takes two)."""
    from hive.cli.lean import text_width

    return text_width(text)


@functools.cache
def _console_class() -> Any:
    """rich's Console, but a reader that went away (``| head``) is the caller's to handle
    (``hive.cli.reader_gone``): rich's own way ends the process with exit code 1; and
    no control character of the text it is given reaches the terminal (``?`` in its
    place, line breaks and tabs kept: ``hive.text.shown_lines``), whether printed,
    a table's cell, a tree's label or a rule's title."""
    from rich.console import Console
    from rich.text import Text

    from hive.text import shown_lines

    class Output(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

        def render_str(self, text: str, **options: Any) -> Text:
            return super().render_str(shown_lines(text), **options)

    return Output


def console(*, wrap: bool = False) -> Any:
    """A console as wide as the output (see ``columns``). Tables are laid out to fit it;
    text lines are wrapped at words only with ``wrap`` (titles, descriptions, message
    subjects), never otherwise: a command or credential printed for copying stays one
    line. Piped (``Piped``): rich only for what it would not print as it is."""
    from hive.cli.lean import piped_plain

    if piped_plain():
        return Piped()
    return _rich_console(wrap)


def _rich_console(wrap: bool) -> Any:
    output = _console_class()
    width = columns()
    if width is None:  # piped: not wrapped, tables keep one row per line
        return output(highlight=False, soft_wrap=True, width=1000, emoji=False)
    return output(highlight=False, soft_wrap=not wrap, width=width, emoji=False)


class Piped:
    """The console of output piped with nothing that makes rich lay it out or colour it
    (``hive.cli.lean.piped_plain``): a line of text (markup and all) that rich would
    print as it is, with its styles dropped, is written here without importing rich
    (rich.console is ~8% of a command's start-up); anything else (a table, a tree,
    options, text rich might print otherwise) goes to rich's console, made on first
    need."""

    def __init__(self) -> None:
        self._rich: Any = None

    def print(self, *objects: Any, markup: bool | None = None, **options: Any) -> None:
        from hive.cli.lean import plain_text

        if len(objects) == 1 and isinstance(objects[0], str) and not options:
            text = objects[0]
            shown = text if markup is False else plain_markup(text)
            if shown is not None and plain_text(text) and plain_text(shown):
                sys.stdout.write(shown + "\n")
                sys.stdout.flush()
                return
        self.rich().print(*objects, markup=markup, **options)

    def rich(self) -> Any:
        if self._rich is None:
            self._rich = _rich_console(wrap=False)  # piped: never wrapped either way
        return self._rich

    def __getattr__(self, name: str) -> Any:
        return getattr(self.rich(), name)


def say(text: str, *, wrap: bool = False) -> None:
    """Print plain text: user text (titles, names) is never read as rich markup, and
    its control characters are shown as ``?`` (see ``console``); ``wrap``: wrapped at
    words to the output's width."""
    console(wrap=wrap).print(text, markup=False)


def say_items(head: str, items: Sequence[str]) -> None:
    """``head`` then ``items`` joined by ", ", folded between items to the output's
    width (see ``folded``; one line when piped without $COLUMNS)."""
    say("\n".join(folded(head, items, columns())))


def folded(head: str, items: Sequence[str], room: int | None) -> list[str]:
    """The lines of ``head`` then ``items`` joined by ", ", folded between items to
    ``room`` columns (an item is never split: an id stays with its status), continued
    lines indented under the first item; one line when ``room`` is None."""
    lines, line = [], head
    for n, item in enumerate(items):
        piece = item + ("," if n < len(items) - 1 else "")
        fresh = line == head or not line.strip()
        if room is not None and not fresh and width(line) + 1 + width(piece) > room:
            lines.append(line)
            line, fresh = " " * len(head), True
        line += piece if fresh else " " + piece
    return [*lines, line]


@contextlib.contextmanager
def to_reader() -> Iterator[None]:
    """Output to a reader that may go away (``hive tools list | head -1``): the rest is
    dropped and the command ends as it would have (``hive.cli.reader_gone``), not with
    click's exit 1 or an internal error. Generated commands get this from
    ``hive/cli/build.py``; a hand-written one wraps its printing in it."""
    try:
        yield
        sys.stdout.flush()
    except BrokenPipeError:
        from hive.cli import reader_gone

        reader_gone()


def row(text: str) -> None:
    """Print one line of a list, cut with an ellipsis to the output's width (whole
    when piped without $COLUMNS), as ``hive list`` cuts a title."""
    console().print(fit(text.rstrip()), markup=False)


def heading(title: str) -> None:
    """A section rule: full width on a terminal, 72 columns when piped."""
    width = None if sys.stdout.isatty() else 72
    _console_class()(highlight=False, emoji=False, width=width).rule(escape(title))


def err(message: str) -> None:
    """A line for a person on stderr (an error, a warning, a note): text it quotes
    (a path, a value given) shows its control characters as ``?``."""
    from hive.cli import say
    from hive.text import shown_lines

    say(sys.stderr, shown_lines(message.rstrip("\n")) + "\n")


def attach_progress(ws: Any) -> None:
    """Draw a progress bar on stderr (a terminal only) while a large state is indexed."""
    if not sys.stderr.isatty():
        return
    bar: dict[str, Any] = {}

    def progress(done: int, total: int) -> None:
        if total < 2000:
            return
        if "task" not in bar:
            from rich.console import Console
            from rich.progress import Progress

            view = Progress(console=Console(stderr=True), transient=True)
            view.start()
            bar.update(view=view, task=view.add_task("indexing .hive", total=total))
        bar["view"].update(bar["task"], completed=done)
        if done >= total:
            bar["view"].stop()

    ws.progress = progress


def cell_table(cells: Sequence[Any], *, title: str | None = None) -> None:
    """Cells (or rows with their id, priority, type, status, assignee and title) as the
    table ``hive list`` prints (``hive.cli.lean.table``): fits the terminal, ids whole,
    long titles and names cut; a deleted or expired cell's title says so first."""
    from hive.cli.lean import table
    from hive.store.index import Row

    rows = [
        Row(
            id=cell.id,
            blob="",
            priority=cell.priority,
            type=cell.type,
            status=cell.status,
            assignee=cell.assignee,
            title=_marks(cell) + cell.title,
            json=b"",
        )
        for cell in cells
    ]
    if title and rows:
        from hive.text import without_control

        sys.stdout.write(without_control(title) + "\n")
    sys.stdout.write(table(rows))
    sys.stdout.flush()


def _marks(cell: Any) -> str:
    """What a listing puts before a cell's title: ``(deleted)`` as ``hive show`` says it,
    ``(expired)`` for a reservation deadline passed."""
    deleted = "(deleted) " if getattr(cell, "is_deleted", False) else ""
    return deleted + ("(expired) " if getattr(cell, "metadata", {}).get("expired") else "")


def cell_detail(cell: Cell) -> None:
    out = console(wrap=True)
    out.print(f"[bold]{escape(cell.id)}[/bold]  {escape(cell.title)}")
    _print_rows(out, cell, _detail_rows(cell))
    _print_texts(out, cell)
    _print_conflicts(out, cell)


def _detail_rows(cell: Cell) -> list[tuple[str, str]]:
    """``hive show``'s fields (plain text): status, type, priority, the optional ones,
    a CellDetail's blockers, subtasks and the cells it blocks, and its times."""
    rows: list[tuple[str, str]] = [  # plain text: wrapped first, then escaped
        ("status", cell.status + (" (deleted)" if cell.is_deleted else "")),
        ("type", cell.type),
        ("priority", f"P{cell.priority}"),
    ]
    rows += _optional_rows(cell)
    for blocker in getattr(cell, "open_blockers", []):  # a CellDetail: the open ones
        rows.append(("blocked by", f"{blocker.id} [{blocker.status}] {blocker.title}"))
    for key in ("subtasks", "blocks"):  # a CellDetail: its subtasks, the cells it blocks
        refs = [(ref.id, ref.status, ref.title) for ref in getattr(cell, key, [])]
        rows += related_rows(cell.id, refs, key)
    rows.append(("created", f"{cell.created_at:%Y-%m-%d %H:%M} by {cell.created_by or '?'}"))
    rows.append(("updated", f"{cell.updated_at:%Y-%m-%d %H:%M}"))
    if cell.closed_at:
        rows.append(("closed", f"{cell.closed_at:%Y-%m-%d %H:%M}"))
    return rows


def _optional_rows(cell: Cell) -> list[tuple[str, str]]:
    """The fields a cell may have: a list folded between its items."""
    optional: dict[str, str | list[str] | None] = {
        "assignee": cell.assignee,
        "parent": cell.parent,
        "labels": cell.labels,  # lists fold between items, under the value
        "files": cell.files_owned,
        "depends on": [f"{d.target} ({d.type})" for d in cell.dependencies],
        "close reason": cell.close_reason,
    }
    rows = []
    for key, value in optional.items():
        if isinstance(value, list) and value:
            lines = folded(f"  {key:<12} ", value, columns())
            rows.append((key, "\n".join(line[15:] for line in lines)))
        elif value:
            rows.append((key, str(value)))
    return rows


def _print_rows(out: Any, cell: Cell, rows: list[tuple[str, str]]) -> None:
    """Each field, continued under itself (escaped), the status in its colour."""
    style = STATUS_STYLE.get(cell.status, "white")
    room = columns()
    for key, value in rows:
        shown = escape(_hanging(value, room))
        if key == "status":  # coloured once wrapped: a tag cut in two was printed or fatal
            shown = f"[{style}]{cell.status}[/{style}]" + shown[len(cell.status) :]
        out.print(f"  [dim]{key:<12}[/dim] " + shown)


def _print_texts(out: Any, cell: Cell) -> None:
    """The description, design, acceptance criteria, notes and comments of a cell, each
    line break in them (a CRLF, a lone CR, NEL, U+2028, U+2029, ...) laid out as one
    (``hive.text.as_lines``; ``--json`` gives the text exactly)."""
    from hive.text import as_lines

    if cell.description:
        out.print("\n" + escape(as_lines(cell.description)))
    for title, text in (("design", cell.design), ("acceptance criteria", cell.acceptance_criteria)):
        if text:
            out.print(f"\n[dim]{title}:[/dim]\n" + escape(as_lines(text)))
    if cell.notes:
        out.print("\n[dim]notes:[/dim]\n" + escape(as_lines(cell.notes)))
    for comment in cell.comments:
        stamp = f"{comment.created_at:%Y-%m-%d %H:%M}"
        out.print(f"\n[dim]comment by {escape(comment.author or '?')} at {stamp}:[/dim]")
        out.print(escape(as_lines(comment.text)))


def _print_conflicts(out: Any, cell: Cell) -> None:
    """The merge conflicts recorded on a cell, each side's value."""
    if not cell.conflicts:
        return
    out.print("\n[red]merge conflicts[/red] (both sides changed; resolve with 'hive resolve'):")
    for record in cell.conflicts:
        if record.field == "file":
            out.print("  file: one side did not parse; its text was:")
            out.print(escape(str(record.other)))
            continue
        out.print(escape(f"  {record.field}: kept {record.kept!r}"))
        out.print(escape(f"  {'':<{len(record.field)}}  other {record.other!r}"))


def _hanging(value: str, room: int | None) -> str:
    """A field's value of ``hive show`` continued under itself (15 columns in), where
    it has line breaks (a folded list) or is too long for the line (wrapped at words,
    never inside an id); as it is when piped without $COLUMNS."""
    if room is None:
        return value
    indent = "\n" + " " * 15
    if "\n" in value or width(value) <= room - 15:
        return value.replace("\n", indent)
    import textwrap

    return indent.join(textwrap.wrap(value, max(room - 15, 20), break_on_hyphens=False))


def object_store(health: Any) -> None:
    """The object store's line in ``doctor``/``gc``, and a warning line per problem."""
    out = console()
    kib = 1024
    out.print(
        f"object store: {health.loose_objects} loose objects ({health.loose_size // kib} KiB),"
        f" {health.packs} pack(s) ({health.pack_size // kib} KiB)",
        markup=False,
    )
    for warning in health.warnings:
        out.print(f"[yellow]warning[/yellow]: {escape(warning)}")


PROGRESS_FROM = 64 * 1024  # input bytes: smaller jobs finish before a bar is worth drawing


@contextlib.contextmanager
def progress_bar(size: int, *, enabled: bool = True, first: str = "reading") -> Iterator[Any]:
    """A ``progress(phase, done, total)`` callback (total 0: not known yet) drawing a bar
    on stderr, or None when stdout (or stderr) is not a terminal or ``size`` is small."""
    terminal = sys.stdout.isatty() and sys.stderr.isatty()
    if not enabled or size < PROGRESS_FROM or not terminal:
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    columns = (TextColumn("{task.description:<9}"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(first, total=None)

        def update(phase: str, done: int, total: int) -> None:
            bar.update(task, description=phase, completed=done, total=total or None)

        yield update
