"""``hive ready``, ``hive list`` and ``hive show`` answered from the state index, without
the models.

Only the standard library, the state index and hive's dulwich-free git readers
are imported. The answer is for the commit HEAD points at, read from the ref
files just before. When the index does not know that commit's state yet (a
``git pull`` brought new cells, the index was dropped), it is indexed here, with
the same rows the full path stores (:func:`build_state`); on a terminal, when an
object cannot be read here, or when an option needs the models (``--parent``
with a partial id), None sends the command to the full CLI, which indexes
the state (with a progress bar on a terminal) and answers. So does an agent's
command (``HIVE_AGENT_TOKEN``) when HEAD's config has a policy for agents beyond the
path rules (:func:`agent_policy`), which only the full CLI runs; one claiming another
name than its credential's is refused as the full CLI refuses it (:func:`open_read`).
"""

from __future__ import annotations

import sys

from hive.cli import DEFAULT_PAGE, Invocation, answer_stands
from hive.cli.leanhook import output_of, write_pending
from hive.domain.ready_lists import store_ready_list
from hive.errors import HiveError
from hive.store.index import (
    EMPTY_STATE,
    ListQuery,
    Row,
    StateIndex,
    write_json_list,
)

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence
    from typing import Any

    from hive.git.refs import RepoPaths

GITLINK_MODE = 0o160000
STATUSES = ("open", "in_progress", "blocked", "deferred", "closed")
TYPES = ("bug", "feature", "task", "epic", "chore")


class State:
    """The state index, the key of the state HEAD points at, and where the repository is
    (a plain class: a dataclass costs a compile at every start-up)."""

    __slots__ = ("hive", "index", "key", "paths")

    def __init__(self, index: StateIndex, key: str, paths: RepoPaths, hive: str) -> None:
        self.index = index
        self.key = key
        self.paths = paths
        self.hive = hive  # the ``.hive`` tree of HEAD's commit


class Refusal(Exception):
    """What the full CLI refuses here, before anything is read (``error``: not a
    repository, no hive yet), reported by the lean command as it would be."""

    def __init__(self, error: HiveError) -> None:
        super().__init__(error.message)
        self.error = error


def refused(inv: Invocation, refusal: Refusal) -> int:
    """``refusal`` reported as ``run_op`` reports it (message, JSON, exit code)."""
    from hive.cli.lean_write import report

    return report(inv, refusal.error)


def open_state(inv: Invocation) -> State | None:
    """The state index and HEAD's state key (indexing that state when it is new);
    Refusal where the full CLI refuses: no repository here (``refs.discover``'s error),
    no hive at HEAD (no commit yet, or none with ``.hive/config.yaml``)."""
    from hive.git.refs import discover, read_head_fast
    from hive.store.layout import not_initialized

    if not claim_allowed(inv):
        return None  # the full CLI refuses it (``cli/opening.py``), as a write does
    try:
        paths = discover(inv.directory)
    except HiveError as exc:
        raise Refusal(exc) from None
    except OSError:
        return None
    if write_pending(paths):
        return None
    head = read_head_fast(paths)
    if head is None:
        return None
    if head.commit is None:  # an unborn branch: the full path reads an empty tree
        raise Refusal(not_initialized(paths.root))
    index = StateIndex(paths.hive_state_dir)
    trees = index.trees_of(head.commit)
    if trees is None:  # a commit the index has not seen: its trees read here (the
        # object readers imported only then: ~1.5 ms of every read that knows HEAD)
        from hive.git.loose import tree_entries

        found = tree_entries(paths, head.commit)
        if found is None:
            return None  # packed objects: the full CLI reads them
        hive, cells, configured = found
        if not configured:
            raise Refusal(not_initialized(paths.root))
        index.remember_commit(head.commit, hive, cells)
        trees = (hive, cells)
    key = trees[1] or EMPTY_STATE
    if trees[0] is None:  # remembered as a commit without .hive
        raise Refusal(not_initialized(paths.root))
    if not index.has_state(key) and not build_state(paths, index, key):
        return None
    return State(index=index, key=key, paths=paths, hive=trees[0])


def open_read(inv: Invocation) -> State | None:
    """:func:`open_state` for a read (``ready``, ``list``, ``show``). An agent's command
    (``HIVE_AGENT_TOKEN`` set) is answered here only when the name it claims is its
    credential's (Refusal otherwise, the full path's ``not_your_identity``) and HEAD's
    config gives agents no policy (:func:`_agents_config`; the call is logged as the full
    path logs it: ``leanlog``); None sends it to the full CLI.
    A person's command reads no credential and no config here."""
    import os

    state = open_state(inv)
    token = os.environ.get("HIVE_AGENT_TOKEN")
    if state is None or not token:
        return state
    agent = _proven_agent(inv, state, token)
    config = None if agent is None else _agents_config(state)
    if agent is None or config is None:
        return None
    from hive.cli import leanlog

    leanlog.acting(state.paths.hive_state_dir, agent, config["tools"])  # its call is logged
    return state


def _proven_agent(inv: Invocation, state: State, token: str) -> str | None:
    """The agent of ``token``, when the name claimed (``--actor``, else ``HIVE_AGENT``),
    if any, is its name, as the full path resolves it (``actors.check_claim``): Refusal
    with its error when it is another's, or when the credential is nobody's (retired,
    re-issued: every command refuses it); None leaves a credential store that cannot
    be read here to the full CLI."""
    import os

    from hive.store import credentials

    try:
        holder = credentials.name_of_token(state.paths.hive_state_dir, token)
    except (HiveError, OSError):
        return None
    if holder is None:  # retired or re-issued: refused, as the full path refuses it
        from hive.domain.actors import unknown_credential

        raise Refusal(unknown_credential())
    claim = inv.actor or os.environ.get("HIVE_AGENT")
    if claim:
        from hive.domain.actors import check_claim

        try:
            check_claim(claim, holder, by_token=True)
        except HiveError as exc:
            raise Refusal(exc) from None
    return holder


def _agents_config(state: State) -> dict[str, Any] | None:
    """The config at HEAD, for an agent's command (``HIVE_AGENT_TOKEN`` set) answered
    here; None leaves it to the full CLI: the config gives agents a policy beyond the
    path rules (``configdoc.agent_policy``: tools lists, call limits, hooks, rate
    limits, protected tools), which the full CLI runs (``hive.domain.policy``), or
    cannot be read here for sure."""
    from hive.cli.leanhook import listed_config
    from hive.git.loose import read_tree

    listing = read_tree(state.paths, state.hive)
    config = None if listing is None else listed_config(state.paths, listing)
    return None if config is None or config["agent_policy"] else config


def claim_allowed(inv: Invocation) -> bool:
    """Whether the name claimed (``--actor``, else ``HIVE_AGENT``), if any, is an agent
    name (``actors.check_actor``): a read refuses any other, as a write does."""
    import os

    claim = inv.actor or os.environ.get("HIVE_AGENT")
    if not claim:
        return True
    from hive.domain.actors import check_actor

    try:
        check_actor(claim)
    except HiveError:
        return False
    return True


def build_state(paths: RepoPaths, index: StateIndex, key: str) -> bool:
    """Index the state ``key`` here (a fresh clone, a ``git pull``), as the full path
    would: the same rows, read with hive's own object readers and the plain cell
    reader. False leaves it to the full CLI: on a terminal (which shows a progress
    bar), or when an object cannot be read here."""
    if sys.stderr.isatty():
        return False
    from hive.git.catfile import AT_ONCE, read_blobs_at_once
    from hive.git.loose import read_object
    from hive.git.repo import TREE_MODE, GitRepo
    from hive.store.cellrows import parse_for_index

    repo = GitRepo(paths, recover=False)

    def list_tree(tree: str) -> list[tuple[str, str, bool]]:
        return [
            (name.decode("utf-8", "surrogateescape"), sha, mode == TREE_MODE)
            for name, (mode, sha) in repo.tree_items(tree).items()
            if mode != GITLINK_MODE
        ]

    def read_blobs(wanted: Sequence[tuple[str, str]]) -> Iterator[tuple[str, str, bytes]]:
        shas = [sha for sha, _ in wanted]
        at_once = read_blobs_at_once(paths, shas) if len(shas) >= AT_ONCE else None
        for sha, path in wanted:
            if at_once is not None:
                yield sha, path, at_once[sha]
                continue
            found = read_object(paths, sha)
            if found is None or found[0] != b"blob":
                raise LookupError(sha)  # the full path reads it, or words the problem
            yield sha, path, found[1]

    try:
        index.ensure_state(key, list_tree, read_blobs, parse_for_index)
    except (LookupError, HiveError, OSError):
        return False
    return True


# ------------------------------------------------------------------ ready


def ready(inv: Invocation) -> int | None:
    asked = _ready_options(inv.args)
    if asked is None:
        return None
    given, every = asked
    limit = None if every else given
    from hive.cli import leanlog

    leanlog.call("hive_ready", _page_args(given, every, READY_LIMIT))
    try:
        state = open_read(inv)
    except Refusal as refusal:
        return refused(inv, refusal)
    if state is None:
        return None
    found = state.index.ready(state.key, None if limit is None else limit)
    if found is None:
        if not store_ready_list(state.index, state.key):
            return None  # the file was rebuilt meanwhile: the full CLI indexes it again
        found = state.index.ready(state.key, limit)
        if found is None:
            return None  # as above
    rows, total = found
    if any(b'"deadline"' in row.json for row in rows):
        return None  # a deadline may have passed: the full CLI flags expired cells
    if not _as_committed(state, [(row.id, row.blob) for row in rows]):
        return None  # as in list_cells
    _warn_unreadable(state)
    _emit(inv, rows, total=total, what="ready cells")
    return 0


def _ready_options(options: list[str]) -> tuple[int, bool] | None:
    """``ready``'s --limit (a page by default) and whether --all was given; None when
    the options are not all understood."""
    limit = str(DEFAULT_PAGE)
    every = False  # --all wins wherever it stands, as in the full CLI
    position = 0
    while position < len(options):
        token = options[position]
        if token == "--all":
            every = True
            position += 1
        elif token == "--verbose":  # whole cells: a person's default already
            position += 1
        elif token in ("--limit", "-n") and position + 1 < len(options):
            limit = options[position + 1]
            position += 2
        elif token.startswith("--limit="):
            limit = token.partition("=")[2]
            position += 1
        else:
            return None
    if not _count(limit):
        return None  # the full CLI words the bad value
    return int(limit), every


# the tools' own page sizes (``ReadyParams.limit``, ``QueryParams.limit``): a call's
# logged arguments leave out a value equal to them, as the full path's do
READY_LIMIT = 10
QUERY_LIMIT = 20


def _page_args(limit: int, every: bool, default: int) -> dict[str, Any]:
    """The paging arguments of a ``ready`` or ``list`` call, as the full path gives
    them (a person's page: whole cells, ``DEFAULT_PAGE`` of them unless told)."""
    found: dict[str, Any] = {} if limit == default else {"limit": limit}
    if every:
        found["all"] = True
    found["verbose"] = True
    return found


MAX_LIMIT = 100_000  # the largest --limit of list and ready (QueryParams, ReadyParams)


def _count(text: str) -> bool:
    """A limit the full CLI takes as it is (ASCII digits, 1 to MAX_LIMIT)."""
    return text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_LIMIT


# ------------------------------------------------------------------ list


def list_cells(inv: Invocation) -> int | None:
    asked = list_query(inv.args)
    if asked is None or (asked[0].include_deleted and not inv.json):
        return None  # the table marks deleted cells "(deleted)": the full CLI prints it
    query, args = asked
    from hive.cli import leanlog

    leanlog.call("hive_query", args)
    try:
        state = open_read(inv)
    except Refusal as refusal:
        return refused(inv, refusal)
    if state is None:
        return None
    known = _with_known_parent(state, query)
    if known is None:
        return None
    found = state.index.list_rows(state.key, known)
    if found is None:
        return None  # cell files outside the shard directories: the full CLI lists them
    rows, total = found
    if not _as_committed(state, [(row.id, row.blob) for row in rows]):
        return None  # an edited cell file, which may not load: the full CLI warns
    _warn_unreadable(state)
    _emit(inv, rows, total=total)
    return 0


def _warn_unreadable(state: State) -> None:
    """Name each committed cell file that does not load (``list`` and ``ready`` leave
    it out; the full CLI's notes say the same)."""
    if state.index.problem_count(state.key):
        from hive.text import shown_lines

        for _, message in state.index.problems(state.key):
            sys.stderr.write(f"warning: {shown_lines(message)}\n")


def _with_known_parent(state: State, query: ListQuery) -> ListQuery | None:
    """``query`` with its ``--parent`` the full id of the cell of this state it names
    (a full id or a prefix in any case, resolved as the full path resolves it:
    ``lean_write.find``); None for an id that names no cell for sure (the full CLI
    resolves or explains it)."""
    if query.parent is None:
        return query
    from hive.cli.lean_write import find

    found = find(state.index, state.key, query.parent)
    if found is None or found.id is None:
        return None
    fields: dict[str, Any] = {name: getattr(query, name) for name in query._fields}
    return ListQuery(**{**fields, "parent": found.id})


_LIST_VALUED = {
    "-s": "status",
    "--status": "status",
    "-t": "type",
    "--type": "type",
    "-p": "priority",
    "--priority": "priority",
    "-l": "label",
    "--label": "label",
    "--assignee": "assignee",
    "--parent": "parent",
    "--limit": "limit",
    "-n": "limit",
}


def list_query(options: list[str]) -> tuple[ListQuery, dict[str, Any]] | None:
    """``list``'s options as a query, and as the arguments of its ``hive_query`` call;
    None when one needs the full CLI (to resolve an id, or to explain a bad value)."""
    values: dict[str, str] = {}
    flags: set[str] = set()
    position = 0
    while position < len(options):
        token = options[position]
        name, eq, inline = token.partition("=") if token.startswith("--") else (token, "", "")
        if name in _LIST_VALUED and (eq or position + 1 < len(options)):
            values[_LIST_VALUED[name]] = inline if eq else options[position + 1]
            position += 1 if eq else 2
        elif token in ("--deleted", "--all"):
            flags.add(token)
            position += 1
        elif token == "--verbose":  # whole cells: a person's default already
            position += 1
        else:
            return None
    query = _query(values, flags)
    return None if query is None else (query, _list_args(query, values, flags))


def _list_args(query: ListQuery, values: dict[str, str], flags: set[str]) -> dict[str, Any]:
    """A ``list``'s ``hive_query`` arguments as the full path gives them: the values as
    given (its priority as a number), in the tool's order."""
    found: dict[str, Any] = {}
    for name in ("status", "type", "priority", "parent", "label", "assignee"):
        if name in values:
            found[name] = query.priority if name == "priority" else values[name]
    if "--deleted" in flags:
        found["include_deleted"] = True
    limit = int(values["limit"]) if "limit" in values else DEFAULT_PAGE
    return found | _page_args(limit, "--all" in flags, QUERY_LIMIT)


def _query(values: dict[str, str], flags: set[str]) -> ListQuery | None:
    status = values.get("status")
    if status is not None and status != "all":  # exactly "all", as cells.list_cells reads it
        status = status.strip().lower().replace("-", "_")
        if status not in STATUSES:
            return None
    kind = values.get("type")
    if kind is not None:
        kind = kind.strip().lower()
        if kind not in TYPES:
            return None
    priority = values.get("priority")
    level = None
    if priority is not None:
        text = priority.strip().upper().removeprefix("P")
        if not (text.isdecimal() and 0 <= int(text) <= 4):  # as cellinput.parse_priority
            return None
        level = int(text)
    limit_text = values.get("limit")
    limit: int | None = DEFAULT_PAGE
    if limit_text is not None:
        if not _count(limit_text):
            return None
        limit = int(limit_text)
    if "--all" in flags:
        limit = None
    parent = values.get("parent")
    if parent is not None and (not parent or parent != parent.strip()):
        return None
    return ListQuery(
        status=None if status == "all" else status,
        type=kind,
        priority=level,
        parent=parent,
        label=values.get("label"),
        assignee=values.get("assignee"),
        include_deleted="--deleted" in flags,
        limit=limit,
    )


# ------------------------------------------------------------------ output


def _emit(inv: Invocation, rows: Sequence[Row], *, total: int | None, what: str = "cells") -> None:
    answer_stands()
    if inv.json:
        write_json_list([row.json for row in rows], sys.stdout.buffer.write)
    else:
        sys.stdout.write(table(rows))
    sys.stdout.flush()
    if total is not None and total > len(rows):  # with --json too: the page is one
        sys.stderr.write(f"showing {len(rows)} of {total} {what} (--all for every one)\n")


def table(rows: Sequence[Row], width: int | None = None) -> str:
    """A plain table that fits the terminal: ids whole, titles cut with an ellipsis, a
    control character (in a cell file written by hand) shown as ``?``."""
    if not rows:
        return "no cells\n"
    fields = [
        (row.id, f"P{row.priority}", row.type, row.status, row.assignee or "-", row.title)
        for row in rows
    ]
    text = _table(fields, width)
    lines = text.split("\n")  # a line break in a field makes a line more
    if len(lines) == len(rows) + 2 and all(map(str.isprintable, lines)) and nothing_unshown(text):
        return text  # nearly always: a check in C per line, not a call per field
    from hive.text import without_control

    return _table([tuple(map(without_control, row)) for row in fields], width)


NAME_COLUMNS = 16  # an assignee's most, on a terminal
TITLE_COLUMNS = 20  # a title's share the assignees give way to, down to 8 columns
MIN_TITLE = 12  # a title's least: a line longer than the terminal only past this


def _table(rows: Sequence[Sequence[str]], width: int | None) -> str:
    """The table of ``rows`` (id, priority, type, status, assignee, title)."""
    columns = width or _terminal_width()
    header = ("ID", "P", "TYPE", "STATUS", "ASSIGNEE")
    widths = [max(len(header[i]), *(text_width(r[i]) for r in rows)) for i in range(len(header))]
    if columns is not None:  # piped without $COLUMNS: names whole too, for grep
        widths[4] = min(widths[4], NAME_COLUMNS)
        short = TITLE_COLUMNS - (columns - sum(widths) - 2 * len(widths))
        if short > 0:  # long ids (a beads import's): the names give way to the title
            widths[4] = max(len(header[4]), widths[4] - short)
    lead = sum(widths) + 2 * len(widths)
    room = None if columns is None else max(columns - lead, MIN_TITLE)
    lines = [_line(header, widths, "TITLE")]
    for row in rows:
        lines.append(_line(row[:5], widths, cut(row[5], room)))
    return "\n".join(lines) + "\n"


def _line(fields: Sequence[str], widths: Sequence[int], title: str) -> str:
    parts = [_pad(cut(field, width), width) for field, width in zip(fields, widths, strict=True)]
    parts[0] = fields[0].ljust(widths[0])  # ids are never cut
    return "  ".join([*parts, title]).rstrip()


ZWJ = "\u200d"  # ZERO WIDTH JOINER: joins emoji into one (a family, a flag of a region)


def cut(text: str, room: int | None) -> str:
    """``text`` cut to ``room`` terminal columns with an ellipsis (a wide character,
    e.g. CJK, takes two columns), never inside a hidden character's ``<U+XXXX>``
    (``hive.text.shown_pieces``: the marker goes whole or not at all)."""
    if room is None or text_width(text) <= room:
        return text
    if text.isascii() and "<U+" not in text:
        return text[: max(room - 1, 0)] + "…"
    from hive.text import shown_pieces

    kept, used = [], 0
    for piece in shown_pieces(text):
        used += text_width(piece)
        if used > room - 1:
            break
        kept.append(piece)
    while kept and kept[-1] == ZWJ:  # half an emoji sequence: a stray joiner
        kept.pop()
    return "".join(kept) + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * (width - text_width(text))


def text_width(text: str) -> int:
    """Terminal columns of ``text``: wide and full-width characters take two, combining
    marks and the joiner of an emoji sequence none (unicodedata only for text that is
    not ASCII: start-up time)."""
    if text.isascii():
        return len(text)
    import unicodedata

    return sum(
        0
        if char == ZWJ or unicodedata.combining(char)
        else 2
        if unicodedata.east_asian_width(char) in "WF"
        else 1
        for char in text
    )


def _terminal_width() -> int | None:
    """Columns of the terminal (or $COLUMNS); None when piped (nothing is cut)."""
    import os

    given = os.environ.get("COLUMNS", "")
    if given.isdigit() and int(given) > 0:  # 0 is no width, as git and rich read it
        return int(given)
    if not sys.stdout.isatty():
        return None
    stream = sys.__stdout__
    try:  # shutil.get_terminal_size's answer, without importing shutil (bz2, lzma, ...)
        columns = os.get_terminal_size(stream.fileno()).columns if stream else 0
    except (ValueError, OSError):
        columns = 0
    return columns or 80


# ------------------------------------------------------------------ show


# Environment that makes rich lay out or colour piped output: the full CLI renders then.
_RICH_ENV = ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "TTY_COLS")


def piped_plain() -> bool:
    """Whether the output is piped with nothing that makes rich lay out or colour it:
    then rich prints ``plain_text`` as it is (``hive show`` here, ``output.say``)."""
    import os

    return not sys.stdout.isatty() and not any(name in os.environ for name in _RICH_ENV)


def show(inv: Invocation) -> int | None:
    """``hive show ID`` for one id (full, or a prefix resolved as the full path resolves
    it: ``lean_write.find``), printed as the full CLI prints it: as JSON, or as plain
    lines when the output is piped (on a terminal rich wraps and colours it, so the
    full CLI renders). An unknown or ambiguous id, several ids, options, merge
    conflicts, comments, text rich might lay out differently, a blocker whose file is
    not readable: the full CLI."""
    import os

    if len(inv.args) != 1 or inv.args[0].startswith("-"):
        return None
    if not inv.json and not piped_plain():
        return None
    given = inv.args[0]
    if not given or given != given.strip():
        return None
    from hive.cli import leanlog

    leanlog.call("hive_query", {"id": given})
    try:
        state = open_read(inv)
    except Refusal as refusal:
        return refused(inv, refusal)
    if state is None:
        return None
    from hive.cli.lean_write import find
    from hive.git.loose import read_object
    from hive.store.celldoc import plain_cell
    from hive.store.layout import cell_path
    from hive.store.yamlfast import fast_loads

    found = find(state.index, state.key, given)
    if found is None or found.id is None:
        return None
    cell_id = found.id
    if os.path.isdir(os.path.join(state.paths.root, cell_path(cell_id))):
        return None  # (a directory in its place: the full CLI warns)
    blob = read_object(state.paths, found.blob)
    if blob is None or blob[0] != b"blob" or not _as_committed(state, [(cell_id, found.blob)]):
        return None
    try:
        cell = plain_cell(fast_loads(blob[1].decode("utf-8")))
    except (UnicodeDecodeError, ValueError, HiveError):
        return None
    if cell is None or cell["id"] != cell_id:
        return None
    blockers = _open_blockers(state, cell) if cell["status"] != "closed" else []
    related = _related(state, cell_id)
    if blockers is None or related is None:
        return None
    if inv.json:
        from hive.store.celldoc import json_of

        detail = {**cell, "blocked_by": [ref["id"] for ref in blockers], "open_blockers": blockers}
        answer_stands()
        sys.stdout.buffer.write(json_of(detail | related) + b"\n")
    else:
        text = _detail_text(cell, blockers, related)
        if text is None:
            return None
        answer_stands()
        sys.stdout.write(text)
    sys.stdout.flush()
    return 0


def _as_committed(state: State, cells: Sequence[tuple[str, str]]) -> bool:
    """Each shown cell's file in the working tree is as committed (cell id, blob id):
    an edited one may not load, and a directory in its place cannot be written; the
    full CLI warns of both. A page is compared (not the files of ``--all`` past
    EDIT_CHECK_LIMIT); a file that is not there or cannot be read counts as committed
    (the full CLI would say nothing either)."""
    import os

    from hive.git.worktree import edited_on_disk
    from hive.store.layout import EDIT_CHECK_LIMIT, cell_path

    if len(cells) > EDIT_CHECK_LIMIT:
        return True
    for cell_id, blob in cells:
        path = os.path.join(state.paths.root, cell_path(cell_id))
        try:
            edited = edited_on_disk(path, blob)
        except OSError:
            continue
        if edited or os.path.isdir(path):
            return False
    return True


def _open_blockers(state: State, cell: dict[str, object]) -> list[dict[str, object]] | None:
    """``blocks`` targets neither closed nor deleted, as ``CellRef``s (None: the full
    CLI decides, for a target whose file is not readable here)."""
    from hive.cli.lean_write import lookup, usable

    refs: list[dict[str, object]] = []
    dependencies = cell["dependencies"]
    assert isinstance(dependencies, list)
    for dep in dependencies:
        if dep["type"] != "blocks":
            continue
        target = dep["target"]
        found = lookup(state.index, state.key, target)
        if not found:
            continue  # a target that does not exist does not block
        only = usable(found, target)
        if only is None:
            return None
        if only.status != "closed" and not only.deleted:
            ref = {"id": target, "title": only.title, "status": only.status}
            refs.append({**ref, "assignee": only.assignee})
    return refs


def _related(state: State, cell_id: str) -> dict[str, list[dict[str, object]]] | None:
    """The cell's ``subtasks`` and the cells it ``blocks`` as ``stats.show_cells``
    gives them (not deleted, oldest first, as ``CellRef``s), from the state index's
    rows; None (the full CLI decides) when one is not a single readable file at its
    own path."""
    from hive.store.index import is_own_path

    related: dict[str, list[dict[str, object]]] = {}
    subtasks = state.index.files_of(state.key, parents=[cell_id])
    blocks = state.index.files_of(state.key, blocking=cell_id)
    for key, entries in (("subtasks", subtasks), ("blocks", blocks)):
        if entries is None:
            return None
        ids = [entry.id or "" for entry in entries]
        if len(set(ids)) != len(ids) or any(
            entry.error is not None or not is_own_path(entry.path, found)
            for entry, found in zip(entries, ids, strict=True)
        ):
            return None
        live = sorted((e for e in entries if not e.deleted), key=lambda e: (e.created, e.id))
        fields = ("id", "title", "status", "assignee")
        related[key] = [{name: getattr(e, name) for name in fields} for e in live]
    return related


def _detail_text(
    cell: dict[str, Any], blockers: list[dict[str, Any]], related: dict[str, list[dict[str, Any]]]
) -> str | None:
    """``output.cell_detail`` as rich prints it piped (no colour, no wrapping); None
    for text rich might print differently (control characters, tabs, ...)."""
    from hive.cli.markup import related_rows

    rows: list[tuple[str, str]] = [
        ("status", cell["status"] + (" (deleted)" if cell["deleted_at"] is not None else "")),
        ("type", cell["type"]),
        ("priority", f"P{cell['priority']}"),
    ]
    optional = {
        "assignee": cell["assignee"],
        "parent": cell["parent"],
        "labels": ", ".join(cell["labels"]),
        "files": ", ".join(cell["files_owned"]),
        "depends on": ", ".join(f"{d['target']} ({d['type']})" for d in cell["dependencies"]),
        "close reason": cell["close_reason"],
    }
    rows += [(key, value) for key, value in optional.items() if value]
    for ref in blockers:
        rows.append(("blocked by", f"{ref['id']} [{ref['status']}] {ref['title']}"))
    for key, refs in related.items():
        rows += related_rows(cell["id"], [(r["id"], r["status"], r["title"]) for r in refs], key)
    rows.append(("created", f"{cell['created_at']:%Y-%m-%d %H:%M} by {cell['created_by'] or '?'}"))
    rows.append(("updated", f"{cell['updated_at']:%Y-%m-%d %H:%M}"))
    if cell["closed_at"]:
        rows.append(("closed", f"{cell['closed_at']:%Y-%m-%d %H:%M}"))
    lines = [f"{cell['id']}  {cell['title']}"]
    lines += [f"  {key:<12} {value}" for key, value in rows]
    blocks = [("", cell["description"])]
    blocks += [(title + ":\n", cell[name]) for title, name in _TEXT_BLOCKS]
    for heading, text in blocks:
        if text:
            lines.append("\n" + heading + text)
    printed = "\n".join(lines) + "\n"
    return printed if plain_text(printed) else None


_TEXT_BLOCKS = (
    ("design", "design"),
    ("acceptance criteria", "acceptance_criteria"),
    ("notes", "notes"),
)


def plain_text(text: str) -> bool:
    """Text rich prints as it is: printable characters and line breaks, no line
    ending in blanks (what rich does with tabs, control codes and trailing spaces
    is its own affair), none shown otherwise (:func:`nothing_unshown`)."""
    return nothing_unshown(text) and all(
        line.isprintable() and line == line.rstrip() for line in text.split("\n")
    )


def nothing_unshown(text: str) -> bool:
    """Whether ``text`` holds no invisible character a terminal is shown as its code
    point (``hive.text.INVISIBLE_CHARS``: a Hangul filler is printable, and shown as
    ``<U+3164>``); control characters and line breaks are the caller's to judge. ASCII
    text holds none (settled without importing the rule)."""
    if text.isascii():
        return True
    from hive.text import INVISIBLE_CHARS

    return INVISIBLE_CHARS.isdisjoint(text)


# ------------------------------------------------------------------ the commit-msg hook


def commit_msg_hook(inv: Invocation) -> int | None:
    """``hive hooks run commit-msg FILE`` answered in the hook's own process when the
    cell to attribute is sure (None: ``cli/hookrun.py``'s attribution, then the full CLI
    for any other form). The pre-commit hook's quick check is ``cli/leanhook.py``'s."""
    if len(inv.args) == 3 and inv.args[:2] == ["run", "commit-msg"] and not inv.json:
        return commit_msg(inv, inv.args[2])
    return None


def commit_msg(inv: Invocation, message_file: str) -> int | None:
    """``hive hooks run commit-msg FILE``: the ``Hive-Committer:`` trailer naming the
    agent and the ``Hive-Cell:`` trailer of the cell it works on, by
    ``hive.domain.commitmsg``'s own rules, its cells read from the state index for
    HEAD's state (``hookrun.attribute`` builds a full Workspace for the
    same answer). None (the full path) when the credential store, git's
    ``core.commentChar`` or HEAD's cells cannot be read here for sure."""
    import os

    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    if token is None:
        return 0  # a person's commit: nothing to add (hookrun.attribute reads nothing)
    from hive.domain.commitmsg import (
        add_commit_trailers,
        chosen_cell,
        commit_trailers,
        empty_message,
    )
    from hive.git.configfile import Unsure, config_value
    from hive.git.refs import discover
    from hive.store import credentials

    try:
        paths = discover(inv.directory)
        if write_pending(paths):
            return None  # the full path settles it first (and says so)
        agent = credentials.name_of_token(paths.hive_state_dir, token)
        mark = config_value(paths, "core", "commentChar") if agent else None
    except (HiveError, OSError, Unsure):
        return None
    if agent is None or empty_message(message_file, mark):
        return 0
    try:
        state = open_state(inv)
    except Refusal:
        return None  # no hive at HEAD: what the full path reads there is its affair
    wanted = os.environ.get("HIVE_CELL") or None
    cells = None if state is None else _cells_for(state, agent, wanted)
    if state is None or cells is None:
        return None
    trailers = commit_trailers(agent, chosen_cell(cells, agent, wanted))
    from hive.git.rungit import git_environment, trailer_args

    root = state.paths.root
    adding = trailer_args(os.path.abspath(message_file), trailers)
    if output_of(["git", "-C", root, *adding], git_environment()) is not None:
        return 0  # git added them: add_commit_trailers' command, without importing subprocess
    from hive.cli.lean_write import guarded  # (its imports: YAML, cells; ~5 ms)

    def attribute() -> int:  # never blocks the commit (exit 0), as hookrun.attribute
        add_commit_trailers(root, message_file, trailers)
        return 0

    return guarded(inv, attribute)  # git refused: it runs again and words why


class _Facts:
    """A cell as ``commitmsg.chosen_cell`` reads it (``Node``'s fields)."""

    __slots__ = ("assignee", "deleted", "status")

    def __init__(self, status: str | None, assignee: str | None, deleted: bool) -> None:
        self.status = status
        self.assignee = assignee
        self.deleted = deleted


def _cells_for(state: State, agent: str, wanted: str | None) -> dict[str, _Facts] | None:
    """The cells of HEAD's state ``chosen_cell`` needs (``wanted``, else every live cell
    ``agent`` has in progress), as the full path's ``CellIndex.nodes`` has them; None
    when the index cannot say for sure (cell files outside hive's shards, a copy or an
    unreadable file of ``wanted``)."""
    if not state.index.is_sharded(state.key):
        return None
    if wanted:
        from hive.cli.lean_write import lookup, usable  # (its imports: YAML, cells; ~5 ms)

        found = lookup(state.index, state.key, wanted)
        only = usable(found, wanted) if found else None
        if found and only is None:
            return None
        return {} if only is None else {wanted: _Facts(only.status, only.assignee, only.deleted)}
    from hive.store.index import ListQuery

    query = ListQuery(status="in_progress", assignee=agent, limit=None)
    listed = state.index.list_rows(state.key, query)
    if listed is None:
        return None
    return {row.id: _Facts(row.status, row.assignee, False) for row in listed[0]}
