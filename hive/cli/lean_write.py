"""``hive create``, ``hive update`` and ``hive close`` in a fresh process, lean.

The common forms of the three commands are written here without typer,
pydantic, rich, ruamel or dulwich: options are parsed for the forms listed
below, cells are read as plain dicts (``hive/store/celldoc.py``) from the one
file the command needs, every lookup (is an id taken, the cell, its blockers)
is a query on the state index for the state of the commit HEAD points at, and
the commit goes through the very same transaction as the full path
(``GitRepo.transact``: hive's write lock, git's index.lock through its twin,
the intent, compare-and-swap on the ref, the working tree and index entries,
recovery, packing). The result is the same file, the same commit message and
trailers, the same state index rows and the same output as the full CLI's.

Whenever this path cannot be sure of giving exactly the full CLI's answer it
*defers* (returns None before anything is written) and the full CLI runs the
command: an option it does not read (``--parent``, ``--dep``, ``--files``,
``--from``, ``--force``, ``--help``, ...), an id no cell or several live ones
begin (a prefix one cell's id begins is resolved as the full path resolves it,
:func:`find`), any error to report (the full CLI words it), a cell or config
file the plain reader declines, a state the index does not have, a layout
other than hive's shards, a write under way in this worktree, staging mode, a
git config it cannot read for sure (includes, quoted values; a worktree's
``config.worktree`` is read as git reads it), an identity it cannot read for sure, an
agent under a policy for agents (``configdoc.agent_policy``: the full CLI runs it,
``hive/domain/policy.py``). A
linked worktree is answered like the main one (see :func:`open_session`). Who acts
is resolved exactly as the full path resolves it (the same credential store
function, ``actors.check_claim``), and at the same point: once the arguments pass
what the full CLI checks before it asks (the parameter model's lengths and counts,
the domain's input checks), an identity it refuses (``--actor NAME`` /
``HIVE_AGENT`` without NAME's credential, a token of nobody or of another agent, a
claim that is no agent name) is reported here with the full CLI's words, JSON and
exit code (:class:`Refused`, ``prepare(vetted=True)``), and so are no repository
here, no hive yet (an unborn branch included) and a detached HEAD that
``HIVE_ALLOW_DETACHED`` does not allow (by the transaction itself).

Supported forms (global options anywhere, ``--json`` included)::

    hive create TITLE [-t TYPE] [-p PRIORITY] [-d TEXT] [-l LABEL]... [--assignee NAME]
    hive update ID [-s STATUS] [-p P] [--title T] [-d TEXT] [--assignee NAME] [-t TYPE]
                   [--append-notes TEXT] [--add-label L]... [--remove-label L]...
    hive close ID [-r REASON]
"""

from __future__ import annotations

import os
import sys

from hive.cli import Invocation, answer_stands, internal_error
from hive.errors import HiveError
from hive.store.celldoc import encode, json_of, parsed, plain_cell, utc_now
from hive.store.index import EMPTY_STATE, StateIndex
from hive.store.layout import CONFIG_PATH, cell_path, not_initialized
from hive.waits import DEFAULT_WAIT, lock_wait, wait_of

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, TypeVar

    R = TypeVar("R")

    from hive.git.refs import HeadRef, RepoPaths
    from hive.git.repo import GitRepo, Identity, Plan, Snapshot


class Defer(Exception):
    """The full CLI must run this command (nothing has been written)."""


class Refused(Exception):
    """The acting identity is refused, as the full path refuses it (``error``: a name
    claimed without its credential, a credential of nobody, ...). Reported here only
    by a command whose arguments are checked as far as the full CLI checks them before
    it resolves who acts (``prepare(vetted=True)``); deferred otherwise."""

    def __init__(self, error: HiveError) -> None:
        super().__init__(error.message)
        self.error = error


# ------------------------------------------------------------------ options


class Options:
    """A command line read for the options of one command."""

    def __init__(self) -> None:
        self.positional: list[str] = []
        self.values: dict[str, str] = {}
        self.lists: dict[str, list[str]] = {}
        self.flags: set[str] = set()


def parse_options(
    args: list[str],
    valued: dict[str, str],
    repeated: dict[str, str],
    flags: dict[str, str] | None = None,
    arguments: tuple[str, ...] = (),
) -> Options | None:
    """``args`` read as click would for these options; None for anything else
    (an unknown option, an attached short value, a value that looks like an option,
    a single option given twice, ``--``). ``flags``: options that take no value;
    ``arguments``: options whose values are positional words where they stand (the
    command's ``argument_options``: ``--to NAME``)."""
    found = Options()
    position = 0
    while position < len(args):
        token = args[position]
        if not token.startswith("-"):
            found.positional.append(token)
            position += 1
            continue
        if flags and token in flags:
            if flags[token] in found.flags:
                return None
            found.flags.add(flags[token])
            position += 1
            continue
        name, eq, inline = token.partition("=")
        if not name.startswith("--"):
            name, eq, inline = token, "", ""
        key = valued.get(name) or repeated.get(name)
        if key is None and name not in arguments:
            return None
        if eq:
            value = inline
            position += 1
        elif position + 1 < len(args) and not args[position + 1].startswith("-"):
            value = args[position + 1]
            position += 2
        else:
            return None
        if key is None:
            found.positional.append(value)
        elif name in repeated:
            found.lists.setdefault(key, []).append(value)
        elif key in found.values:
            return None
        else:
            found.values[key] = value
    return found


# ------------------------------------------------------------------ the repository


class Principal:
    """Who acts (as ``hive.models.identity.Principal``, without pydantic)."""

    def __init__(self, name: str, kind: str) -> None:
        self.name = name
        self.kind = kind  # "agent" | "person"


class Session:
    """One repository, the acting principal, and the state index."""

    def __init__(
        self, paths: RepoPaths, repo: GitRepo, principal: Principal, index: StateIndex
    ) -> None:
        self.paths = paths
        self.repo = repo
        self.principal = principal
        self.index = index
        self.configs: dict[str, dict[str, Any]] = {}

    def identity(self) -> Identity:
        from hive.domain.actors import commit_identity

        return commit_identity(self.repo, self.principal)

    def key_of(self, commit: str) -> str:
        """The state key of ``commit`` when the index has that state (sharded)."""
        from hive.git.loose import tree_entries

        trees = self.index.trees_of(commit)
        if trees is None:
            found = tree_entries(self.paths, commit)
            if found is None or not found[2]:
                raise Defer("packed beyond reach, or no hive")
            self.index.remember_commit(commit, found[0], found[1])
            trees = (found[0], found[1])
        key = trees[1] or EMPTY_STATE
        if trees[0] is None or not self.index.has_state(key) or not self.index.is_sharded(key):
            raise Defer("state not indexed, or not hive's layout")
        return key

    def config(self, snap: Snapshot) -> dict[str, Any]:
        """``.hive/config.yaml`` of ``snap``, when it is certainly what the model reads."""
        sha = snap.blob_sha(CONFIG_PATH)
        if sha is None:
            raise Defer("not initialized")
        if sha not in self.configs:
            self.configs[sha] = _config(self.repo.read_blob(sha))
        return self.configs[sha]

    def lock_timeout(self, snap: Snapshot) -> float:
        """``commits.lock_timeout``: HIVE_LOCK_TIMEOUT, else the config's, else (no hive
        yet: the write refuses that later, as the full path does) the default."""
        env = os.environ.get("HIVE_LOCK_TIMEOUT", "")
        if env.strip():
            seconds = wait_of(env)
            if seconds is None:
                raise Defer("bad HIVE_LOCK_TIMEOUT")  # the full CLI refuses it and words it
            return seconds
        if snap.blob_sha(CONFIG_PATH) is None:
            return lock_wait(DEFAULT_WAIT)
        return lock_wait(float(self.config(snap)["lock_timeout_seconds"]))


def _config(data: bytes) -> dict[str, Any]:
    from hive.store.configdoc import plain_config

    config = plain_config(data)
    if config is None:
        raise Defer("config")  # the model may refuse it: the full CLI says where
    return config


def open_session(inv: Invocation) -> Session:
    from hive.git.refs import discover
    from hive.git.repo import GitRepo

    try:
        paths = discover(inv.directory)
    except HiveError as exc:
        raise Refused(exc) from None  # the full CLI's first words too (opening the workspace)
    except OSError:
        raise Defer("no repository") from None
    if os.path.lexists(paths.index_twin):
        raise Defer("a write to recover first")  # this worktree's twin (its git dir)
    # A linked worktree is answered here too: everything a write touches is found
    # through ``paths`` as the full path finds it. HEAD, the index, the twin and the
    # intent are this worktree's (its git dir); objects, refs, the write lock, the
    # credentials, the reservation id sequence and the state index are the
    # repository's (the common dir), shared by every worktree; and a reserve reads
    # every other worktree's reservations under that one write lock.
    repo = GitRepo(paths, recover=False)
    return Session(paths, repo, _principal(inv, repo), StateIndex(paths.hive_state_dir))


def _principal(inv: Invocation, repo: GitRepo) -> Principal:
    """Who acts, resolved exactly as ``Workspace`` resolves it (``principal.
    resolve_principal``): Refused with its error, or Defer when it cannot be known
    here for sure."""
    from hive.domain.actors import check_claim, os_user, unknown_credential
    from hive.git.configfile import Unsure, config_value

    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    claim = inv.actor or os.environ.get("HIVE_AGENT") or None
    try:
        if token:
            from hive.store import credentials

            name = credentials.name_of_token(repo.paths.hive_state_dir, token)
            kind = "agent"
        else:
            configured = config_value(repo.paths, "user", "name")
            name = configured if configured is not None else (os_user() or "unknown")
            kind = "person"
    except (HiveError, Unsure, OSError):
        raise Defer("identity") from None
    try:
        if name is None:
            raise unknown_credential()
        check_claim(claim, name, by_token=kind == "agent")
    except HiveError as exc:
        raise Refused(exc) from None
    return Principal(name, kind)


# ------------------------------------------------------------------ cells


class Found:
    """A file of a state named for a cell id, and what its blob holds."""

    def __init__(
        self,
        path: str,
        blob: str,
        status: str | None,
        deleted: bool,
        error: str | None,
        id: str | None,
        title: str | None = None,
        assignee: str | None = None,
        type: str | None = None,
    ) -> None:
        self.path = path
        self.blob = blob
        self.status = status
        self.deleted = deleted
        self.error = error
        self.id = id
        self.title = title
        self.assignee = assignee
        self.type = type


def lookup(index: StateIndex, key: str, cell_id: str) -> list[Found]:
    """Every file of state ``key`` named for ``cell_id`` (in any shard, or on top)."""
    if key == EMPTY_STATE:
        return []
    name = cell_id + ".yaml"
    rows = index.db.execute(
        "SELECT c.name, c.sha, c.is_tree, c.status, c.deleted, c.error, c.id, c.title, "
        "c.assignee, c.type FROM dirs c WHERE c.tree = :key AND c.name = :name "
        "UNION ALL SELECT c.name || '/' || s.name, s.sha, s.is_tree, s.status, s.deleted, "
        "s.error, s.id, s.title, s.assignee, s.type FROM dirs c JOIN dirs s ON s.tree = c.sha "
        "WHERE c.tree = :key AND c.is_tree = 1 AND s.name = :name",
        {"key": key, "name": name},
    ).fetchall()
    return [
        Found(
            path=".hive/cells/" + row[0],
            blob=row[1],
            status=row[3],
            deleted=bool(row[4]),
            error="a directory" if row[2] else row[5],
            id=row[6],
            title=row[7],
            assignee=row[8],
            type=row[9],
        )
        for row in rows
    ]


def usable(found: list[Found], cell_id: str) -> Found | None:
    """The one readable file of ``cell_id`` at its own path, or None."""
    if len(found) != 1:
        return None
    only = found[0]
    ok = only.error is None and only.id == cell_id and only.path == cell_path(cell_id)
    return only if ok else None


# A prefix matching more cells than this is left to the full CLI (nearly always
# ambiguous; judging it here would read each match's row).
MAX_MATCHES = 64


class _Unsure(Exception):
    """A cell a prefix matches whose file is not one readable file at its own path."""


def find(index: StateIndex, key: str, given: str) -> Found | None:
    """The one readable file, at its own path, of the cell ``given`` names in state
    ``key``, by its full id or a prefix, in any case, as ``cells.resolve_id`` resolves
    it; None for the full CLI to decide and word (and for spaces around it)."""
    if not given or given != given.strip():
        return None
    given = given.lower()  # as resolve_among reads it
    found = lookup(index, key, given)
    if not found:
        cell_id = resolve(index, key, given)
        if cell_id is None:
            return None
        given, found = cell_id, lookup(index, key, cell_id)
    return usable(found, given)


def resolve(index: StateIndex, key: str, given: str) -> str | None:
    """The id ``given`` names in state ``key``, decided by ``ids.resolve_among`` (the
    full path's rule) over the cell files ``StateIndex.names_like`` finds (every id
    ``given`` could name, by ranges of the index), deleted cells told by their rows.
    None for the full CLI to decide and word: no match, several live cells, more than
    ``MAX_MATCHES``, a match whose file is unreadable or not at its own path, a state
    not stored."""
    from hive.store.ids import id_matches, resolve_among
    from hive.store.layout import cell_id_from_path

    paths = index.names_like(key, given)
    if paths is None:
        return None
    named = (cell_id_from_path(path) for path in paths)
    known = {cell_id for cell_id in named if cell_id and id_matches(cell_id, given)}
    if not known or len(known) > MAX_MATCHES:
        return None

    def deleted(cell_id: str) -> bool:
        only = usable(lookup(index, key, cell_id), cell_id)
        if only is None:
            raise _Unsure(cell_id)  # the full path counts it live, or reads the stray copy
        return only.deleted

    try:
        return resolve_among(given, known, deleted)
    except (HiveError, _Unsure):
        return None


def read_cell(session: Session, key: str, given: str) -> dict[str, Any]:
    """The live cell ``given`` names (a full id, or a prefix :func:`find` resolves), as
    a plain cell."""
    from hive.store.yamlfast import fast_loads

    found = find(session.index, key, given)
    if found is None or found.deleted:
        raise Defer("missing, ambiguous, unreadable or deleted")
    try:
        mapping = fast_loads(session.repo.read_blob(found.blob).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, HiveError):
        raise Defer("unreadable") from None
    cell = plain_cell(mapping)
    if cell is None or cell["id"] != found.id:
        raise Defer("a file the plain reader declines")
    return cell


def refuse_open_blockers(session: Session, key: str, cell: dict[str, Any]) -> None:
    """Defer when a ``blocks`` target is open or unreadable (the full CLI refuses)."""
    for dep in cell["dependencies"]:
        if dep["type"] != "blocks":
            continue
        found = lookup(session.index, key, dep["target"])
        if not found:
            continue  # a target that does not exist does not block
        only = usable(found, dep["target"])
        if only is None or (only.status != "closed" and not only.deleted):
            raise Defer("blocked")


def checked_title(title: str) -> str:
    """The title as the model stores it (stripped), when the model and
    ``check_title`` accept it."""
    from hive.domain.limits import MAX_TITLE
    from hive.text import first_control

    stripped = title.strip()
    if len(title) > MAX_TITLE or not stripped or "\n" in stripped or first_control(stripped):
        raise Defer("title")
    return stripped


def changed(cell: dict[str, Any], **updates: Any) -> dict[str, Any]:
    """``cells._changed``: the updates applied, ``updated_at`` now, and checked."""
    new = {**cell, **updates}
    new["title"] = checked_title(new["title"])
    new["updated_at"] = utc_now()
    return new


def fields_differ(cell: dict[str, Any], updated: dict[str, Any]) -> bool:
    """``cells._fields_differ``: another value in any field but ``updated_at``."""
    return {**cell, "updated_at": None} != {**updated, "updated_at": None}


def check_owner(session: Session, cell: dict[str, Any]) -> None:
    """Only the assignee of a claimed cell changes or closes it (else the full CLI
    refuses, or records an override)."""
    owner = cell["assignee"] if cell["assignee"] and cell["status"] != "closed" else None
    if owner is not None and owner != session.principal.name:
        raise Defer("not the owner")


# ------------------------------------------------------------------ writing


class Prepared:
    """An opened session on a branch, its HEAD snapshot, the lock timeout and the
    author of its commits."""

    def __init__(self, session: Session, snap: Snapshot, timeout: float, author: Identity) -> None:
        self.session = session
        self.snap = snap
        self.timeout = timeout
        self.author = author


def prepare(
    inv: Invocation, *, on_head: bool = True, vetted: bool = False, any_head: bool = False
) -> Prepared | int | None:
    """The repository opened for a write (on HEAD's branch when ``on_head``; mail has
    its own ref); None to defer. ``vetted``: the command's arguments pass every check
    the full CLI makes before it resolves who acts, so an identity it refuses (or no
    repository here) is reported here (its exit code), worded as the full CLI words
    it, before anything else about the repository: the full path resolves the
    principal first too. ``any_head``: the write's transaction and plan refuse an
    unborn branch and a detached HEAD as the full path's do (``write``). An agent
    whose committed config has a policy for its commands beyond the path rules
    (``configdoc.agent_policy``) is left to the full CLI, which runs it."""
    from hive.store.sqlerrors import sqlite3

    try:
        session = open_session(inv)
        head_snap = session.repo.snapshot()
        if not any_head:
            head_commit(head_snap.head, on_head=on_head)
        if session.principal.kind == "agent" and _agent_policy(session, head_snap):
            raise Defer("an agent's policy: the full CLI runs it (hive.domain.policy)")
        prepared = Prepared(session, head_snap, session.lock_timeout(head_snap), session.identity())
    except Refused as refused:
        return report(inv, refused.error) if vetted else None
    except (Defer, HiveError, OSError, sqlite3.DatabaseError):
        return None
    if session.principal.kind == "agent":  # its call is logged as the full path logs it
        from hive.cli import leanlog

        tools = session.config(head_snap)["tools"] if head_snap.blob_sha(CONFIG_PATH) else None
        leanlog.acting(session.paths.hive_state_dir, session.principal.name, tools)
    return prepared


def _agent_policy(session: Session, snap: Snapshot) -> bool:
    """Whether the config of ``snap`` gives agents a policy beyond the path rules
    (``configdoc.agent_policy``); no config: nothing (the write refuses it later)."""
    if snap.blob_sha(CONFIG_PATH) is None:
        return False
    return bool(session.config(snap)["agent_policy"])


def head_commit(head: HeadRef, *, on_head: bool = True) -> str:
    """HEAD's commit, to write on; Defer for a HEAD the full CLI must handle: an
    unborn branch (hive's first commit there, or "not initialized"), and, for a
    commit on HEAD, a detached HEAD that ``HIVE_ALLOW_DETACHED`` does not allow (the
    full CLI refuses it and words why). A detached HEAD it allows is committed to as
    the full path commits to it (the same ``transact``, HEAD itself moved); mail is
    never on HEAD, so any HEAD with a commit will do."""
    from hive.git.state import allowed_detached

    if head.commit is None:
        raise Defer("unborn")
    if on_head and head.ref is None and not allowed_detached():
        raise Defer("detached: the full CLI refuses it")
    return head.commit


def guarded(inv: Invocation, act: Callable[[], R]) -> R | int | None:
    """``act()`` (a transaction), with what stops it mapped as the full CLI maps it:
    Defer (nothing written) to None, a HiveError to its report and exit code, any
    other exception to the last line of defence (``cli/main.py run``)."""
    from hive.store.sqlerrors import sqlite3

    try:
        return act()
    except (Defer, sqlite3.DatabaseError):
        return None
    except HiveError as exc:
        return report(inv, exc)
    except Exception as exc:
        return internal_error(exc, as_json=inv.json)


def write(
    inv: Invocation,
    event: str,
    change: Callable[[Session, Snapshot, str], tuple[dict[str, Any], bool]],
    render: Callable[[dict[str, Any]], str],
) -> int | None:
    """Run one cell write through ``GitRepo.transact``; None to defer."""
    from hive.git.repo import Change, Plan

    prepared = prepare(inv, vetted=True, any_head=True)
    if prepared is None or isinstance(prepared, int):
        return prepared
    session = prepared.session
    written: dict[str, Any] = {}

    def plan(snap: Snapshot) -> Plan:
        # (``transact`` has refused a detached HEAD HIVE_ALLOW_DETACHED does not allow)
        if snap.head.commit is None or snap.blob_sha(CONFIG_PATH) is None:
            raise not_initialized(session.paths.root)  # the full path's cells(snap) too
        key = session.key_of(head_commit(snap.head))
        written.clear()
        written["key"] = key
        new, wanted = change(session, snap, key)
        if not wanted:  # nothing to change: no commit, the cell as it is
            return Plan(changes=[], message="", result=new)
        content = encode(new)
        written["cell"] = new
        written["content"] = content
        return Plan(
            changes=[Change(cell_path(new["id"]), content)],
            message=message(session, event, new),
            result=new,
        )

    outcome = guarded(
        inv,
        lambda: session.repo.transact(plan, author=prepared.author, lock_timeout=prepared.timeout),
    )
    if outcome is None or isinstance(outcome, int):
        return outcome
    answer_stands()  # committed: the rest is the answer
    if outcome.commit and outcome.tree and "cell" in written:
        cell_written = (written["cell"], written["content"])
        remember(session, outcome.commit, outcome.tree, written["key"], cell_written)
    cell: dict[str, Any] = outcome.result
    if inv.json:
        sys.stdout.buffer.write(json_of(cell) + b"\n")
    else:
        from hive.text import shown_lines

        sys.stdout.write(shown_lines(render(cell)) + "\n")
    sys.stdout.flush()
    return 0


def message(session: Session, event: str, cell: dict[str, Any]) -> str:
    """``Workspace.message`` for one cell."""
    from hive.domain.actors import event_trailers
    from hive.git.repo import format_message
    from hive.text import without_control

    subject = without_control(f"hive: {event} {cell['id']} {cell['title']}")
    trailers = event_trailers(session.principal, event)
    return format_message(subject, [("Hive-Cell", cell["id"]), *trailers])


def report(inv: Invocation, exc: HiveError) -> int:
    """A refusal of the transaction (git state, lock, dirty file, ...) as ``run_op``
    words it; nothing was committed."""
    leanlog = sys.modules.get("hive.cli.leanlog")  # an agent's call: its line says why
    if leanlog is not None:
        leanlog.failed(exc)
    answer_stands()
    from hive.cli import say
    from hive.jsontext import dumps
    from hive.text import shown_lines

    if inv.json:
        say(sys.stdout, dumps(exc.to_dict(), indent=2) + "\n")
    say(sys.stderr, shown_lines(f"error: {exc.message}".rstrip("\n")) + "\n")
    return exc.exit_code


def remember(
    session: Session, commit: str, tree: str, base: str, written: tuple[dict[str, Any], bytes]
) -> None:
    """Record the new state in the state index, as ``Workspace._remember_write`` does
    (best effort: the commit has landed; a later reader indexes what is missing),
    diffed against ``base``, the state the write started from."""
    from hive.git.repo import TREE_MODE, blob_sha_of
    from hive.record import suppress
    from hive.store.layout import HIVE_DIR

    repo = session.repo
    cell, content = written

    def list_tree(sha: str) -> list[tuple[str, str, bool]]:
        return [
            (name.decode("utf-8", "surrogateescape"), child, mode == TREE_MODE)
            for name, (mode, child) in repo.tree_items(sha).items()
            if mode != 0o160000
        ]

    def read_blobs(wanted: Any) -> Any:
        for sha, path in wanted:
            yield sha, path, repo.read_blob(sha)

    def decode(data: bytes, path: str) -> Any:
        raise Defer("a blob the index does not know")  # aborts the recording only

    with suppress(Exception):
        hive = repo.lookup_path(tree, HIVE_DIR, want_tree=True)
        cells = repo.lookup_path(hive, "cells", want_tree=True) if hive else None
        index = session.index
        with index.one_transaction():
            index.add_parsed([(blob_sha_of(content), parsed(cell))])
            index.ensure_state(cells or EMPTY_STATE, list_tree, read_blobs, decode, base=base)
            index.remember_commit(commit, hive, cells)


MAX_REASON = 5000  # UpdateParams, CloseParams: reason


def known_id(given: str) -> bool:
    """An id the parameter model takes (1 to ``MAX_ID`` characters); whether it names
    a cell is the transaction's question."""
    from hive.domain.limits import MAX_ID

    return 1 <= len(given) <= MAX_ID


def from_stdin(options: Options) -> bool:
    """Whether a text is given as ``-``: standard input, which the full CLI reads."""
    return any(options.values.get(name) == "-" for name in ("description", "append_notes"))


# ------------------------------------------------------------------ create


CREATE_VALUED = {
    "-t": "type",
    "--type": "type",
    "-p": "priority",
    "--priority": "priority",
    "-d": "description",
    "--description": "description",
    "--assignee": "assignee",
}
CREATE_REPEATED = {"-l": "label", "--label": "label"}


def create(inv: Invocation) -> int | None:
    from hive.domain.cellinput import clean_labels, parse_priority, parse_type
    from hive.domain.limits import MAX_LABELS, MAX_TITLE, check_count, check_name, check_text

    options = parse_options(inv.args, CREATE_VALUED, CREATE_REPEATED)
    if options is None or len(options.positional) != 1:
        return None
    if from_stdin(options):
        return None  # the full CLI reads it (``present._stdin_for``)
    if not 1 <= len(options.positional[0]) <= MAX_TITLE:
        return None  # the parameter model refuses it: the full CLI words it
    values = options.values
    labels = options.lists.get("label", [])
    try:
        check_count(labels, "labels", MAX_LABELS)
        assignee = values.get("assignee")
        fields: dict[str, Any] = {
            "title": options.positional[0],
            "type": parse_type(values.get("type", "task")),
            "priority": parse_priority(values.get("priority", "2"), 2),
            "description": check_text(values.get("description", ""), "description"),
            "labels": clean_labels(labels),
            "assignee": check_name(assignee, "assignee") if assignee else None,
        }
    except HiveError:
        return None

    def change(session: Session, snap: Snapshot, key: str) -> tuple[dict[str, Any], bool]:
        from hive.store.ids import new_root_id

        config = session.config(snap)

        def taken(candidate: str) -> bool:
            return bool(lookup(session.index, key, candidate))

        try:
            cell_id = new_root_id(config["prefix"], config["id_length"], taken)
        except HiveError:
            raise Defer("no free id") from None
        return new_cell(cell_id, fields, session.principal.name), True

    args: dict[str, Any] = {"title": fields["title"]}  # hive_create's, as the full path's
    if fields["type"] != "task":
        args["type"] = fields["type"]
    if fields["priority"] != 2:
        args["priority"] = fields["priority"]
    if values.get("description"):
        args["description"] = values["description"]
    if labels:
        args["labels"] = labels
    if "assignee" in values:
        args["assignee"] = values["assignee"]
    call("hive_create", args)
    return write(inv, "create", change, lambda cell: f"created {cell['id']}  {cell['title']}")


def call(tool: str, args: dict[str, Any]) -> None:
    """The command is a call of ``tool`` (``leanlog.call``: logged when an agent acts)."""
    from hive.cli import leanlog

    leanlog.call(tool, args)


def new_cell(cell_id: str, fields: dict[str, Any], actor: str) -> dict[str, Any]:
    """A new plain cell: the model's defaults, ``fields``, the id and the times."""
    from hive.store.celldoc import MODEL_FIELDS, default

    now = utc_now()
    cell = {name: default(name) for name in MODEL_FIELDS}
    cell.update(fields)
    cell.update(id=cell_id, created_at=now, updated_at=now, created_by=actor)
    cell["title"] = checked_title(cell["title"])
    return cell


# ------------------------------------------------------------------ update and close


UPDATE_VALUED = {
    "-s": "status",
    "--status": "status",
    "-p": "priority",
    "--priority": "priority",
    "--title": "title",
    "-d": "description",
    "--description": "description",
    "--assignee": "assignee",
    "-t": "type",
    "--type": "type",
    "--append-notes": "append_notes",
}
UPDATE_REPEATED = {"--add-label": "add_label", "--remove-label": "remove_label"}


def update(inv: Invocation) -> int | None:
    from hive.domain.cellinput import clean_labels, parse_priority, parse_status, parse_type
    from hive.domain.limits import MAX_LABELS, MAX_TITLE, check_count, check_name, check_text

    options = parse_options(inv.args, UPDATE_VALUED, UPDATE_REPEATED)
    if options is None or len(options.positional) != 1:
        return None
    if from_stdin(options):
        return None  # the full CLI reads it (``present._stdin_for``)
    given = options.positional[0]
    values = options.values
    if not known_id(given) or len(values.get("title", "")) > MAX_TITLE:
        return None  # the parameter model refuses it: the full CLI words it
    try:
        for name in ("add_label", "remove_label"):
            check_count(options.lists.get(name, []), "labels", MAX_LABELS)
        new_status = parse_status(values.get("status"))
        new_priority = parse_priority(values.get("priority"))
        new_type = parse_type(values.get("type"))
        added = clean_labels(options.lists.get("add_label", []))
        removed = set(clean_labels(options.lists.get("remove_label", []), stored=True))
        for name, what in (("description", "description"), ("append_notes", "notes")):
            if values.get(name) is not None:
                check_text(values[name], what)
        assignee = values.get("assignee")
        if assignee:
            check_name(assignee, "assignee")
    except HiveError:
        return None
    title = values.get("title")
    if title is not None and not title.strip():
        return None
    closing = new_status == "closed"
    wrote: list[bool] = [False]  # whether the last try changed the cell

    def change(session: Session, snap: Snapshot, key: str) -> tuple[dict[str, Any], bool]:
        new, wanted = changed_cell(session, key)
        wrote[0] = wanted
        return new, wanted

    def changed_cell(session: Session, key: str) -> tuple[dict[str, Any], bool]:
        cell = read_cell(session, key, given)
        is_closed = cell["status"] == "closed"
        updates: dict[str, Any] = {}
        if new_status is not None and not (closing and not is_closed):
            updates["status"] = new_status
            if is_closed and new_status != "closed":
                updates.update(closed_at=None, close_reason=None)
            if new_status == "in_progress" and cell.get("started_at") is None:
                updates["started_at"] = utc_now()  # as the domain's update_cell
        if new_priority is not None:
            updates["priority"] = new_priority
        if title is not None:
            updates["title"] = title
        if values.get("description") is not None:
            updates["description"] = values["description"]
        if assignee is not None:
            updates["assignee"] = assignee or None
        if new_type is not None:
            updates["type"] = new_type
        notes = values.get("append_notes")
        if notes:
            updates["notes"] = (cell["notes"].rstrip("\n") + "\n" if cell["notes"] else "") + notes
        if added or removed:
            labels = [label for label in cell["labels"] if label not in removed]
            updates["labels"] = labels + [label for label in added if label not in labels]
        if (closing and not is_closed) or any(cell[key] != updates[key] for key in updates):
            check_owner(session, cell)  # a claimed cell is its assignee's to change
        if new_status == "in_progress" and cell["status"] not in ("in_progress", "blocked"):
            refuse_open_blockers(session, key, cell)  # starting it: the full CLI refuses
            if (cell.get("metadata") or {}).get("requires_auth") is True:
                raise Defer("a task needing a grant: the full CLI checks the grants")
        updated = changed(cell, **updates) if updates else cell
        if closing and not is_closed:
            return closing_of(session, key, updated, reason=None), True
        if not fields_differ(cell, updated):
            return cell, False  # what the cell already has: no commit (cells.update_cells)
        return updated, True

    args: dict[str, Any] = {"id": given}  # hive_update's, as the full path gives them
    for name in ("status", "priority", "type", "title", "description", "assignee"):
        if name in values:
            args[name] = {"priority": new_priority, "type": new_type}.get(name, values[name])
    if "append_notes" in values:
        args["append_notes"] = values["append_notes"]
    for name in ("add_label", "remove_label"):
        if options.lists.get(name):
            args[name + "s"] = options.lists[name]
    call("hive_update", args)
    return write(
        inv,
        "close" if closing else "update",
        change,
        lambda cell: (
            f"{'updated' if wrote[0] else 'nothing to change in'}"
            f" {cell['id']}  [{cell['status']}] {cell['title']}"
        ),
    )


def closing_of(
    session: Session, key: str, cell: dict[str, Any], *, reason: str | None
) -> dict[str, Any]:
    """``cells._closing`` without force: refusals defer (the full CLI words them)."""
    if cell["status"] == "closed" or cell["type"] == "epic":
        raise Defer("already closed, or an epic (its subtasks are checked in full)")
    refuse_open_blockers(session, key, cell)
    closed_at = utc_now()
    return changed(cell, status="closed", closed_at=closed_at, close_reason=reason or None)


def close(inv: Invocation) -> int | None:
    options = parse_options(inv.args, {"-r": "reason", "--reason": "reason"}, {})
    if options is None or len(options.positional) != 1:
        return None
    given = options.positional[0]
    reason = options.values.get("reason")
    if not known_id(given) or len(reason or "") > MAX_REASON:
        return None  # the parameter model refuses it: the full CLI words it
    if reason:
        from hive.text import TEXT_KEPT, first_control

        if first_control(reason, TEXT_KEPT):
            return None  # the full CLI names the character

    def change(session: Session, snap: Snapshot, key: str) -> tuple[dict[str, Any], bool]:
        cell = read_cell(session, key, given)
        check_owner(session, cell)
        return closing_of(session, key, cell, reason=reason), True

    call("hive_close", {"id": given} if reason is None else {"id": given, "reason": reason})
    return write(inv, "close", change, lambda cell: f"closed {cell['id']}  {cell['title']}")
