"""What hive's ``commit-msg`` hook adds to a commit an agent makes itself: the
``Hive-Committer:`` trailer naming the agent (git's author is the person whose git
identity the agent's shell has, so without it the history would not say which agent
made the commit), and the ``Hive-Cell:`` trailer of the cell it works on, so that
``hive review CELL`` shows the agent's own ``git commit`` (say ``git commit -a`` by a
worker of ``hive swarm run`` in the shared working tree) with the hive commits of that
cell. Only for an agent proven by its credential, and the cell only when it is
assigned to it (one cell, or the worker's ``HIVE_CELL``): a person's commits are left
as they are.

The rules (:func:`chosen_cell`, :func:`empty_message`) take plain facts, so the hook's
own process (``hive/cli/lean.py``, from the state index) and the full path
(:func:`add_cell_trailer`, from a Workspace) decide with the same code; nothing here
imports the models."""

from __future__ import annotations

import os

from hive.git.rungit import add_trailers
from hive.store import credentials

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Mapping
    from typing import Protocol

    from hive.domain.workspace import Workspace

    class CellFacts(Protocol):
        """What attribution reads of a cell (``hive.store.index.Node`` has it)."""

        @property
        def status(self) -> str | None: ...

        @property
        def assignee(self) -> str | None: ...

        @property
        def deleted(self) -> bool: ...


CELL_TRAILER = "Hive-Cell"
COMMITTER_TRAILER = "Hive-Committer"


def add_cell_trailer(
    ws: Workspace, message_file: str, *, token: str | None, cell: str | None
) -> str | None:
    """Add ``Hive-Committer: AGENT`` and, when the commit is that agent's work on cell
    ID (:func:`commit_cell`), ``Hive-Cell: ID`` to the commit message in
    ``message_file`` (git's rules: with its trailers, before its comments; not twice)
    when the committer is the agent of ``token``. An empty message is left empty, so
    that git still refuses it. The cell, or None."""
    agent = credentials.name_of_token(ws.git.paths.hive_state_dir, token) if token else None
    if agent is None or empty_message(message_file, ws.git.config_value("core", "commentChar")):
        return None
    found = commit_cell(ws, agent, cell)
    add_commit_trailers(ws.root, message_file, commit_trailers(agent, found))
    return found


def commit_trailers(agent: str, cell: str | None) -> list[tuple[str, str]]:
    """The trailers of ``agent``'s own commit (on ``cell``, when it is its work on one)."""
    return [(COMMITTER_TRAILER, agent), *([(CELL_TRAILER, cell)] if cell else [])]


def add_commit_trailers(root: str, message_file: str, trailers: list[tuple[str, str]]) -> None:
    """``trailers`` added to ``message_file`` (GitError when git cannot)."""
    add_trailers(root, os.path.abspath(message_file), trailers)


def commit_cell(ws: Workspace, agent: str, wanted: str | None) -> str | None:
    """:func:`chosen_cell` over HEAD's cells, read from the state's light facts
    (``CellIndex.nodes``): no cell is decoded, as this runs on each of the agent's
    commits."""
    return chosen_cell(ws.cells().nodes, agent, wanted)


def chosen_cell(cells: Mapping[str, CellFacts], agent: str, wanted: str | None) -> str | None:
    """The cell a commit by ``agent`` belongs to: ``wanted`` (a worker's ``HIVE_CELL``)
    when it is assigned to the agent, else the one cell the agent has in progress;
    None otherwise (a ``HIVE_CELL`` that is not its cell attributes nothing). ``cells``
    by id: every cell, or at least ``wanted`` and every cell assigned to ``agent``."""
    if wanted:
        node = cells.get(wanted)
        mine = node is not None and not node.deleted and node.assignee == agent
        return wanted if mine else None
    working = [
        cell_id
        for cell_id, node in cells.items()
        if node.assignee == agent and node.status == "in_progress" and not node.deleted
    ]
    return working[0] if len(working) == 1 else None


def empty_message(message_file: str, comment_char: str | None) -> bool:
    """Whether the message has no line but blank ones and comments (git aborts such a
    commit; with a trailer it would not), ``comment_char`` being git's
    ``core.commentChar``. Unreadable: taken to be empty."""
    mark = comment_char or "#"
    if len(mark) != 1:  # 'auto' and the like: git's default
        mark = "#"
    try:
        with open(message_file, encoding="utf-8", errors="replace") as handle:
            text = handle.read()
    except OSError:
        return True
    text = text.split(f"{mark} ------------------------ >8 ------------------------", 1)[0]
    return not any(line.strip() and not line.startswith(mark) for line in text.splitlines())
