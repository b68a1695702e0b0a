"""Rich console markup read and written without importing rich (or pydantic): what
the full CLI's console (``hive/cli/output.py``) and the lean paths print alike."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

# rich's markup tags (rich.markup.RE_TAGS), and the styles whose tags are read here
_TAG = r"((\\*)\[([a-z#/@][^[]*?)])"
_STYLES = frozenset(
    {"bold", "dim", "italic", "red", "green", "yellow", "blue", "white", "cyan", "none"}
)


def plain_markup(markup: str) -> str | None:
    """The text rich shows for console markup (``rich.markup.render``) without its
    styles; None for markup this does not read as rich would (a tag of another style,
    with parameters, closing nothing: rich decides, or raises its error)."""
    if "[" not in markup:
        return markup
    import re

    parts: list[str] = []
    opened: list[str] = []
    position = 0
    for match in re.finditer(_TAG, markup):
        whole, escapes, tag = match.groups()
        start, end = match.span()
        if start > position:
            parts.append(markup[position:start].replace("\\[", "["))
        position = end
        backslashes, escaped = divmod(len(escapes), 2)
        parts.append("\\" * backslashes)
        if escaped:
            parts.append(whole[len(escapes) :])
            continue
        name = tag.removeprefix("/")
        if name and name not in _STYLES:
            return None
        if not tag.startswith("/"):
            opened.append(name)
        elif not name and opened:
            opened.pop()  # [/]: the last one opened
        elif name in opened:
            del opened[len(opened) - 1 - opened[::-1].index(name)]
        else:
            return None
    if position < len(markup):
        parts.append(markup[position:].replace("\\[", "["))
    return "".join(parts)


def escape(text: str) -> str:
    """``text`` for a line of rich markup, to be shown as it is ('app/[id]/**' is no
    markup). rich's own escape, but backslashes at the end kept whatever follows them
    (rich's doubles one at the end of a line, and a tag after it took one or was shown
    as text): they are written doubled before a tag that does nothing; and a backslash
    before a ``[`` that starts no tag (``\\[0-9]``) kept (rich reads ``\\[`` in text as
    ``[``): one more is written before it."""
    if "\\[" in text:
        import re

        text = re.sub(r"(?<=\\)\[(?![a-z#/@][^[]*?])", r"\\[", text)
    body = text.rstrip("\\")
    if len(body) == len(text):
        return rich_escape(text)
    return rich_escape(body) + "\\" * (2 * (len(text) - len(body))) + "[none]"


def rich_escape(markup: str) -> str:
    """``rich.markup.escape`` (the same text), without importing rich: a backslash
    before each tag-like ``[``, backslashes before one doubled, and one more after a
    lone backslash at the end."""
    import re

    def escaped(match: re.Match[str]) -> str:
        backslashes, tag = match.groups()
        return f"{backslashes}{backslashes}\\{tag}"

    markup = re.sub(r"(\\*)(\[[a-z#/@][^[]*?])", escaped, markup)
    if markup.endswith("\\") and not markup.endswith("\\\\"):
        return markup + "\\"
    return markup


def inbox_line(
    *,
    id: int,
    read: bool,
    importance: str,
    sender: str,
    thread_id: str | None,
    subject: str,
    ack_required: bool = False,
    acked: bool = False,
) -> str:
    """The markup of one message of ``hive mail inbox`` (``*`` marks it unread; a
    message that asks for an acknowledgement not given yet ends ``[ack required]``)."""
    flag = "" if read else "[bold]*[/bold]"
    thread = f" [{thread_id}]" if thread_id else ""
    line = f"{flag}#{id} " + escape(f"{importance:<7} from {sender}{thread}: {subject}")
    unacked = ack_required and not acked
    return line + (f"  [bold]{escape('[ack required]')}[/bold]" if unacked else "")


NO_MESSAGES = "[dim]no messages[/dim]"


def inbox_notice(shown: int, total: int) -> str:
    """What ``hive mail inbox`` says on stderr when its page holds fewer messages than
    the inbox (nothing when it holds them all)."""
    if total <= shown:
        return ""
    return (
        f"showing the newest {shown} of {total} messages ('hive mail read ID' marks one"
        " read; --unread lists only those not read yet)"
    )


SHOWN_RELATED = 10  # subtasks (and cells blocked) ``hive show`` lists; --json has all
RELATED_KEYS = {"subtasks": "subtask", "blocks": "blocks"}


def related_rows(
    cell_id: str, refs: Sequence[tuple[str, str, str]], key: str
) -> list[tuple[str, str]]:
    """``hive show``'s rows (plain text, before escaping) of a cell's ``subtasks`` or of
    the cells it ``blocks`` (refs: id, status, title): one per cell, the first
    :data:`SHOWN_RELATED`, then how many more and where all of them are. The full CLI
    (``output.cell_detail``) and the lean path (``lean.show``) print the same rows."""
    name = RELATED_KEYS[key]
    rows = [(name, f"{ref_id} [{status}] {title}") for ref_id, status, title in refs]
    if len(rows) <= SHOWN_RELATED:
        return rows
    more = f"and {len(rows) - SHOWN_RELATED} more ('hive show {cell_id} --json' lists all)"
    return [*rows[:SHOWN_RELATED], (name, more)]


def message_lines(header: dict[str, Any], body: str, reader: str) -> list[str]:
    """The markup of ``hive mail read`` for ``reader``: the header (``from`` as the JSON
    names the sender; the thread, the time sent as the log has it, and whether an
    acknowledgement is asked for and given: :func:`ack_note`), the subject, the body
    (each of its line breaks laid out as one: ``hive.text.as_lines``)."""
    from hive.text import as_lines

    sent = str(header["sent_at"])
    about = [f"thread {header['thread_id']}"] if header["thread_id"] else []
    about.append("sent " + sent[:19].replace("T", " ") + ("Z" if sent.endswith("Z") else ""))
    if header["ack_required"]:
        about.append(ack_note(header, reader))
    return [
        escape(
            f"#{header['id']} from {header['from']} to {', '.join(header['to'])}"
            f"  [{header['importance']}]"
        ),
        escape("  ".join(about)),
        f"[bold]{escape(header['subject'])}[/bold]",
        escape(as_lines(body)),
    ]


def ack_note(header: dict[str, Any], reader: str) -> str:
    """What ``hive mail read`` says of a message that asks for an acknowledgement: to a
    recipient, whether it gave it (else how to); to anyone else (its sender, a forced
    read), which recipients acknowledged it and which have not yet."""
    if reader in header["to"]:
        if header["acked"]:
            return "acknowledged"
        return f"ack required ('hive mail ack {header['id']}' to acknowledge)"
    done = list(header.get("acked_by", []))
    waiting = [name for name in header["to"] if name not in done]
    if not done:
        return "ack required: not acknowledged yet by " + ", ".join(waiting)
    note = "ack required: acknowledged by " + ", ".join(done)
    return note + ("; not yet by " + ", ".join(waiting) if waiting else "")
