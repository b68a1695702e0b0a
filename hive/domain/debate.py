"""Seed 004's debate tools: ``context_search`` over hive's history, and ``file_read`` /
``list_files`` confined to a context directory.

Results have the seed's shape, ``{"status": "success", "result": {...}}``; errors are
HiveErrors carrying ``status: "error"`` (so the tool answer is ``{"error": ...,
"code": ..., "status": "error"}``).

**Rounds.** A debate has rounds; hive has epics. Every top-level cell (an epic with
its subtasks, or a standalone cell) is one round, numbered 1, 2, ... by creation
time, so ``roundNumber`` says which piece of work a contribution belongs to and
how early it came. A cell's contributions belong to its top-level ancestor's round,
a message to the round of the cell its thread names (0 when it names none), an
outcome to its cell's round. ``type`` is what the contribution is in hive:
``cell`` (title, description, design and acceptance criteria), ``notes``,
``comment`` (its author's), ``close_reason``, ``message``
(subject and body) or ``outcome`` (the completion summary). ``agentRole`` is
``coordinator`` for the agent that created the round's top-level cell and
``worker`` for everyone else. Beyond the seed's fields, a match says where it is:
``cellId`` (the cell, or the cell a message's thread names; left out for a message
on no cell) and, for a message, ``messageId`` (``hive mail read ID``).

**Context directory.** ``file_read`` and ``list_files`` resolve relative paths
against the context directory (the repository root, or ``--context DIR``) and
refuse, with exactly "Access denied: path is outside the context directory", any
path with a ``..`` component, an absolute path outside it, or a symlink whose
real path is outside it; entries leading outside are left out of listings.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from typing import Any

from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput, NotFound, PermissionDenied
from hive.store.cache import CellIndex
from hive.store.layout import in_git_dir
from hive.text import looks_binary
from hive.times import format_time

OUTSIDE = "Access denied: path is outside the context directory"
SNIPPET = 200
MAX_MATCHES = 100
MAX_READ_BYTES = 1_000_000


class ContextAccessDenied(PermissionDenied):
    code = "access_denied"


def _error(kind: type[HiveError], message: str) -> HiveError:
    return kind(message, status="error")


# ------------------------------------------------------------------ sandbox


def resolve_in_context(context_dir: str, path: str) -> str:
    """The real absolute path of ``path`` inside ``context_dir``; refused otherwise."""
    if not isinstance(path, str) or not path.strip() or "\0" in path:
        raise _error(InvalidInput, "Invalid arguments: path must be a non-empty string")
    base = os.path.realpath(context_dir)
    parts = path.replace("\\", "/").split("/")
    if ".." in parts:
        raise _error(ContextAccessDenied, OUTSIDE)
    joined = os.path.normpath(os.path.join(base, path))
    if not _within(base, joined):
        raise _error(ContextAccessDenied, OUTSIDE)
    real = os.path.realpath(joined)
    if not _within(base, real):
        raise _error(ContextAccessDenied, OUTSIDE)
    if in_git_dir(os.path.relpath(real, base)):  # any case; a nested repository's too
        raise _error(ContextAccessDenied, "Access denied: .git is not readable")
    return real


def _within(base: str, path: str) -> bool:
    return path == base or path.startswith(base + os.sep)


def file_read(context_dir: str, *, path: str) -> dict[str, Any]:
    full = resolve_in_context(context_dir, path)
    if not os.path.exists(full):
        raise _error(NotFound, f"File not found: {full}")
    if os.path.isdir(full):
        raise _error(InvalidInput, f"Path is a directory, not a file: {full}")
    try:  # never blocks: a named pipe or a device is refused once open, not read
        with os.fdopen(os.open(full, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            info = os.fstat(handle.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise _error(InvalidInput, f"Path is not a regular file: {full}")
            if info.st_size > MAX_READ_BYTES:
                raise _error(
                    InvalidInput,
                    f"File is too large to read: {full} ({info.st_size} bytes > {MAX_READ_BYTES})",
                )
            data = handle.read(MAX_READ_BYTES)
            if looks_binary(data):
                raise _error(
                    InvalidInput,
                    f"File is binary, not text: {full} ({info.st_size} bytes)",
                )
            content = data.decode("utf-8", errors="replace")
    except PermissionError:
        raise _error(PermissionDenied, f"Permission denied: {full}") from None
    except OSError as exc:
        raise _error(InvalidInput, f"Cannot read {full}: {exc.strerror}") from None
    return {"status": "success", "result": {"content": content}}


def list_files(context_dir: str, *, path: str) -> dict[str, Any]:
    full = resolve_in_context(context_dir, path)
    if not os.path.exists(full):
        raise _error(NotFound, f"Directory not found: {full}")
    if not os.path.isdir(full):
        raise _error(InvalidInput, f"Path is a file, not a directory: {full}")
    base = os.path.realpath(context_dir)
    try:
        names = sorted(os.listdir(full))
    except PermissionError:
        raise _error(PermissionDenied, f"Permission denied: {full}") from None
    entries = []
    for name in names:
        entry = os.path.join(full, name)
        real = os.path.realpath(entry)
        if not _within(base, real) or in_git_dir(os.path.relpath(real, base)):
            continue
        kind = "directory" if os.path.isdir(real) else "file"
        entries.append({"path": entry, "type": kind})
    return {"status": "success", "result": {"entries": entries}}


# ------------------------------------------------------------------ context_search


class _Rounds:
    """Cell id -> (round number, the round's coordinator), from the cells' light facts:
    roots numbered by creation time, and a coordinator (the root's creator) read from
    the root's stored JSON only for the rounds a match is in."""

    def __init__(self, index: CellIndex) -> None:
        self._index = index
        nodes = index.nodes
        roots = sorted(
            (node for node in nodes.values() if node.parent is None),
            key=lambda node: (node.created, node.id),  # exact to the microsecond till 2242
        )
        self._numbers = {root.id: number for number, root in enumerate(roots, 1)}
        self.creators: dict[str, str] = {}  # root id -> its creator, as read

    def get(self, cell_id: str) -> tuple[int, str]:
        nodes = self._index.nodes
        if cell_id not in nodes:
            return 0, ""
        top = nodes[cell_id]
        seen = {cell_id}
        while top.parent is not None and top.parent in nodes and top.parent not in seen:
            seen.add(top.parent)
            top = nodes[top.parent]
        number = self._numbers.get(top.id)
        if number is None:
            return 0, ""
        if top.id not in self.creators:
            for _, document in self._index.documents([top.id]):
                self.creators[top.id] = document["created_by"]
        return number, self.creators[top.id]


def _snippet(content: str, at: int, length: int, size: int) -> str:
    start = 0 if at + length <= size else max(0, at - size * 3 // 10)
    return content[start : start + size]


def context_search(
    ws: Workspace, *, term: str, limit: int = MAX_MATCHES, snippet: int = SNIPPET
) -> dict[str, Any]:
    """Contributions containing ``term`` (case-insensitive), oldest round first: the
    first ``limit`` (at most ``MAX_MATCHES``), each with ``snippet`` characters around
    the match, and how many there are in all (``total``)."""
    if not isinstance(term, str) or not term.strip():
        raise _error(InvalidInput, "Invalid arguments: term must be a non-empty string")
    index = ws.cells()
    search = _Search(term.lower(), snippet, _Rounds(index))
    _live_cell_contributions(index, search)
    _message_contributions(ws, index, search.consider)
    _outcome_contributions(ws, search.consider)
    return {"status": "success", "result": search.result(limit)}


class _Search:
    """The matches of one search, kept with their round and time to sort them by."""

    def __init__(self, needle: str, snippet: int, rounds: _Rounds) -> None:
        self.needle = needle  # lowercased
        self.snippet = snippet
        self.rounds = rounds
        self.found: list[tuple[Any, ...]] = []

    def consider(
        self,
        content: str,
        cell_id: str | None,
        agent: str,
        kind: str,
        when: str,
        message_id: int | None = None,
    ) -> None:
        """Keep ``content`` as a match when it contains the term."""
        at = content.lower().find(self.needle)
        if at < 0:
            return
        number, coordinator = self.rounds.get(cell_id or "")
        role = "coordinator" if agent and agent == coordinator else "worker"
        match = {
            "roundNumber": number,
            "agentId": agent,
            "agentRole": role,
            "type": kind,
            "contentSnippet": _snippet(content, at, len(self.needle), self.snippet),
            "cellId": cell_id,
        }
        self.found.append(
            (number, when, match if message_id is None else {**match, "messageId": message_id})
        )

    def result(self, limit: int) -> dict[str, Any]:
        """The first ``limit`` matches (at most ``MAX_MATCHES``) by round and time, and
        how many there are."""
        self.found.sort(key=lambda item: (item[0], item[1]))
        shown = [m for *_, m in self.found[: min(limit, MAX_MATCHES)]]
        return {"matches": shown, "total": len(self.found)}


def _live_cell_contributions(index: CellIndex, search: _Search) -> None:
    """Every cell not deleted (only those that may hold the term are read), noting
    each round's coordinator (the creator of its top-level cell) on the way."""
    live = (cell_id for cell_id, node in index.nodes.items() if not node.deleted)
    for cell_id, document in index.documents(live, keep=_may_hold(search.needle)):
        if index.nodes[cell_id].parent is None:
            search.rounds.creators[cell_id] = document["created_by"]  # its round's coordinator
        _cell_contributions(document, search.consider)


def _outcome_contributions(ws: Workspace, consider: Any) -> None:
    """The outcomes' summaries."""
    from hive.domain.outcomes import load_outcomes

    for outcome in load_outcomes(ws):
        consider(
            outcome.summary,
            outcome.cell_id,
            outcome.agent,
            "outcome",
            format_time(outcome.recorded_at),
        )


def _may_hold(needle: str) -> Callable[[bytes], bool] | None:
    """A quick test of a cell's printed JSON that is false only when none of its texts
    can contain ``needle`` (lowercased): for a needle of printable ASCII that JSON
    writes as it is (no quote, no backslash), a text holding it lowercased holds it in
    the JSON lowercased too (JSON keeps other characters as they are, and a match
    cannot span two texts: they are joined by a newline). None: every cell is read."""
    if not (needle.isascii() and needle.isprintable()) or '"' in needle or "\\" in needle:
        return None
    return lambda printed: needle in printed.decode("utf-8").lower()


def _cell_contributions(cell: dict[str, Any], consider: Any) -> None:
    """A cell's contributions, from its JSON (times as ``format_time`` gives them)."""
    texts = (cell["title"], cell["description"], cell["design"], cell["acceptance_criteria"])
    author = cell["created_by"]
    worker = cell["assignee"] or author
    consider(
        "\n".join(t for t in texts if t).strip(), cell["id"], author, "cell", cell["created_at"]
    )
    if cell["notes"]:
        consider(cell["notes"], cell["id"], worker, "notes", cell["updated_at"])
    for comment in cell["comments"]:
        consider(comment["text"], cell["id"], comment["author"], "comment", comment["created_at"])
    if cell["close_reason"]:
        closed = cell["closed_at"] or cell["updated_at"]
        consider(cell["close_reason"], cell["id"], worker, "close_reason", closed)


def _message_contributions(ws: Workspace, index: CellIndex, consider: Any) -> None:
    """Messages the caller may read (it sent them or is a recipient): a search must
    not show anyone else's mail (reading another's needs an override, see mail)."""
    from hive.domain.mail import all_messages

    try:
        messages = all_messages(ws)
        reader = ws.actor
    except HiveError:
        return
    for message in messages:
        if reader != message.get("from") and reader not in message.get("to", []):
            continue
        thread = message.get("thread_id")
        cell_id = thread if thread in index.nodes else None
        text = f"{message.get('subject', '')}\n{message.get('body', '')}".strip()
        at = message.get("at") or ""
        consider(text, cell_id, message.get("from", ""), "message", at, message.get("id"))
