"""``hive reserve``, ``release``, ``mail send``, ``mail inbox`` and ``mail read`` in a
fresh process, lean.

The common forms of these commands are answered here without typer,
pydantic, rich or ruamel, through the very same transactions as the full path
(``GitRepo.transact`` for reservations, ``GitRepo.append_to_ref`` under the mail
lock for mail) and with the very same code where it decides something: the
conflict test, the file format and the ids of ``hive/domain/reservecore.py``,
the mail log of ``hive/domain/maillog.py``, the identity check of
``hive/cli/lean_write.py`` (credentials under the common git directory) and,
for an agent whose ``tools.permissions`` rules could deny a pattern, the path
rules of ``hive/domain/path_rules.py`` themselves. The result is the same
commit (tree, message, trailers), the same state index rows and the same output
as the full CLI's.

A release matching none of the holder's active reservations, a message id the log
does not have, an unregistered reader's inbox and an identity claimed without its
credential are refused here with the very error the full path raises
(``reservecore.nothing_matching``, ``maillog.no_message``, ``maillog.unregistered``,
``actors.check_claim``: see ``lean_write.prepare``). Anything else *defers* (None,
before anything is written) to the full CLI, which words every other refusal: a
conflict, a pattern the path rules deny, an unknown recipient or sender, a
reservation file the plain reader declines, another option (``--cell``,
``--force``, ``--id``, ``--all``, ``--agent``, ``--help``, ...), ``coordinator``
with no epic behind it, and every situation
``lean_write`` defers; for ``inbox`` and ``read`` also another's inbox or message,
an unregistered reader of a message, a header the model might read otherwise and
output to a terminal (rich lays it out). A ``--thread`` is read as the full path
reads it (a cell's full id in any case, spaces around, a prefix: stored as the
cell's id; else a plain thread name).

Supported forms (global options anywhere, ``--json`` included)::

    hive reserve PATTERN... [--reason TEXT] [--exclusive|--shared] [--ttl N]
    hive release PATTERN...
    hive mail send TO... -s SUBJECT [-b BODY] [--importance LEVEL] [--ack-required]
                   [--thread THREAD] [--to NAME]...
    hive mail inbox [-n N] [--urgent] [--unread]      (JSON, or piped)
    hive mail read [#]MESSAGE_ID                       (JSON, or piped)
"""

from __future__ import annotations

import os
import sys

from hive.cli import Invocation, answer_stands
from hive.cli.lean_write import (
    Defer,
    Prepared,
    Session,
    call,
    guarded,
    parse_options,
    prepare,
    report,
)
from hive.domain import reservecore
from hive.domain.limits import MAX_GLOB
from hive.errors import HiveError
from hive.store.celldoc import printed_by_python, utc_now

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from hive.domain.maillog import CellRows
    from hive.domain.reservecore import PlainFile, PlainReservation
    from hive.git.repo import Plan, Snapshot

MAX_PATTERNS = 200  # ReserveParams / ReleaseParams: paths
MAX_REASON = 500  # ReserveParams: reason
RESERVE_TTL = 3600  # ReserveParams: ttl_seconds, when not given
INBOX_PAGE = 5  # InboxParams: limit, its default and its cap (coord.MAX_INBOX)


# ------------------------------------------------------------------ shared


def from_cwd(inv: Invocation, root: str, given: list[str]) -> list[str]:
    """The patterns of the command line as the full path's parameter model gets them:
    relative to the current directory (``present._from_cwd``), checked as the model
    checks them; Defer for any error."""
    base = os.path.realpath(os.path.abspath(inv.directory))
    relative = os.path.relpath(base, os.path.realpath(root)).replace(os.sep, "/")
    if relative != "." and not relative.startswith(".."):
        given = [p if os.path.isabs(p.strip()) else f"{relative}/{p.strip()}" for p in given]
    if not given or len(given) > MAX_PATTERNS or any(len(p) > MAX_GLOB for p in given):
        raise Defer("the parameter model refuses it")
    return given


def open_request(
    inv: Invocation, given: list[str], tool: str, options: dict[str, Any]
) -> tuple[Prepared, list[str]] | int | None:
    """The repository opened for a write and the patterns requested, normalized
    (``reservations.normalize_request``); None to defer, or the exit code of an
    identity refused as the full path refuses it: after the parameter model's
    checks and before the patterns are normalized, as there. The command is a call
    of ``tool`` with the patterns as the model gets them and ``options``."""
    from hive.git.refs import discover

    try:
        root = discover(inv.directory).root
    except HiveError as exc:
        return report(inv, exc)  # no repository: the full CLI's first words too
    except OSError:
        return None
    try:
        checked = from_cwd(inv, root, given)
    except Defer:
        return None
    call(tool, {"paths": checked, **options})
    prepared = prepare(inv, vetted=True)
    if prepared is None or isinstance(prepared, int):
        return prepared
    try:
        root = prepared.session.paths.root
        return prepared, [reservecore.normalize_request(root, path) for path in checked]
    except HiveError:
        return None  # a pattern the full CLI refuses


def read_file(session: Session, path: str, sha: str) -> PlainFile:
    """The reservation file ``path`` (blob ``sha``) when the model certainly reads it
    as the plain reader does and it is stored where it belongs; else Defer (the full
    path reads it, or reports it)."""
    try:
        data = session.repo.read_blob(sha)
    except Exception:
        raise Defer("an object that cannot be read here") from None
    found = reservecore.plain_file(data)
    if found is None:
        raise Defer("a reservation file the plain reader declines")
    holders = (item.agent for item in found.reservations)
    if reservecore.misfiled(path, found.agent, holders) is not None:
        raise Defer("a misfiled reservation file (the full CLI reports it)")
    return found


def load(session: Session, snap: Snapshot) -> dict[str, PlainFile]:
    """Every agent's reservation file at ``snap`` (``reservations.load_reservations``;
    a file it would count as a problem defers)."""
    files: dict[str, PlainFile] = {}
    for path, sha in snap.listing(reservecore.RESERVATIONS_DIR).items():
        found = read_file(session, path, sha)
        files[found.agent] = found
    return files


def held(files: dict[str, PlainFile]) -> list[tuple[str, PlainReservation]]:
    return [
        (reservecore.compared_prefix(item.path_pattern), item)
        for data in files.values()
        for item in data.reservations
    ]


def emit(inv: Invocation, result: dict[str, Any], line: str) -> int:
    """The result as the full CLI prints it: the result model as JSON, or ``line``."""
    if inv.json:
        return write_json(result)
    from hive.text import shown_lines

    return write_lines([shown_lines(line)])


# ------------------------------------------------------------------ reserve


RESERVE_VALUED = {"--reason": "reason", "--ttl": "ttl", "--ttl-seconds": "ttl"}
RESERVE_FLAGS = {"--exclusive": "exclusive", "--shared": "shared"}


def reserve(inv: Invocation) -> int | None:
    options = parse_options(inv.args, RESERVE_VALUED, {}, RESERVE_FLAGS)
    if options is None or not options.positional or len(options.flags) > 1:
        return None
    exclusive = "shared" not in options.flags
    ttl_text = options.values.get("ttl", str(RESERVE_TTL))
    if not (ttl_text.isascii() and ttl_text.isdigit()):
        return None
    ttl = int(ttl_text)
    reason = options.values.get("reason")
    if not 1 <= ttl <= reservecore.MAX_TTL or (reason is not None and len(reason) > MAX_REASON):
        return None
    asked: dict[str, Any] = {} if reason is None else {"reason": reason}  # hive's order
    if not exclusive:
        asked["exclusive"] = False
    if ttl != RESERVE_TTL:
        asked["ttl_seconds"] = ttl
    opened = open_request(inv, options.positional, "swarmmail_reserve", asked)
    if opened is None or isinstance(opened, int):
        return opened
    prepared, given = opened
    session = prepared.session
    patterns = list(dict.fromkeys(given))
    if not inv.json and any("[" in pattern for pattern in patterns):
        return None  # rich would read it as markup: the full CLI prints it
    if any(reservecore.in_git_dir(pattern) for pattern in patterns):
        return None  # git's own directory: the full CLI refuses it (reservecore.reservable)
    agent = session.principal.name

    def plan(snap: Snapshot) -> Plan:
        config = session.config(snap)
        refuse_denied(session, config, patterns)
        now = utc_now()
        files = load(session, snap)
        found = list(reservecore.conflicting(held(files), agent, patterns, exclusive, now))
        for _, other in reservecore.other_worktree_snapshots(session.repo, snap):
            found += reservecore.conflicting(
                held(load(session, other)), agent, patterns, exclusive, now
            )
        if found:
            raise Defer("a conflict: the full CLI refuses it and words it")
        mine = [item for item in own(files, agent) if item.active(now)]
        every = (item for data in files.values() for item in data.reservations)
        reservecore.raise_from_history(session.paths, snap.head.commit)  # git pull, reset
        granted, renewed = reservecore.grant(
            mine,
            patterns,
            agent=agent,
            exclusive=exclusive,
            reason=reason,
            cell=None,
            now=now,
            ttl_seconds=ttl,
            first_id=reservecore.next_id(every, session.paths.hive_state_dir),
            overrides=lambda pattern: [],
            renew=lambda existing, values: reservecore.PlainReservation(
                {**existing.dump(), **values}
            ),
            create=lambda fields: reservecore.PlainReservation(
                {**fields, "yielded_to": None, "renumbered_from": None}
            ),
        )
        content = reservecore.file_text(agent, [item.text() for item in mine])
        subject = f"{agent} {', '.join(patterns)}"
        return file_plan(session, "reserve", subject, content, (granted, renewed))

    def finish(granted: list[PlainReservation], renewed: list[int]) -> int:
        highest = max((item.id for item in granted), default=0)
        reservecore.write_sequence(session.paths.hive_state_dir, highest)
        result = {"granted": [i.dump() for i in granted], "renewed": renewed, "overridden": []}
        lines = []
        for item in granted:
            kind = "exclusive" if item.exclusive else "shared"
            until = f"{item.expires_at:%H:%M:%S}Z"
            done = "renewed" if item.id in renewed else "reserved"  # as cli/present.py
            lines.append(f"{done} #{item.id} {item.path_pattern} ({kind}) until {until}")
        return emit(inv, result, "\n".join(lines))

    return commit(inv, prepared, plan, finish, reservations=True)


def file_plan(
    session: Session, event: str, subject: str, content: bytes | None, result: Any
) -> Plan:
    """The change of the acting agent's reservation file (None: removed), with the
    message ``reservations._message`` writes."""
    from hive.domain.actors import event_trailers
    from hive.git.repo import Change, Plan, format_message

    path = reservecore.reservation_path(session.principal.name)
    trailers = event_trailers(session.principal, event)
    return Plan(
        changes=[Change(path, content)],
        message=format_message(f"hive: {event} {subject}", trailers),
        result=result,
    )


def commit(
    inv: Invocation,
    prepared: Prepared,
    plan: Callable[[Snapshot], Plan],
    finish: Any,
    *,
    reservations: bool = False,
) -> int | None:
    """``plan`` committed through ``GitRepo.transact``, then ``finish(*result)``; None
    to defer, or the exit code of a refusal. ``reservations``: the plan writes the
    agent's reservation file (``reservecore.advance_tips`` after the commit, as the
    full path does)."""
    bases: list[str | None] = []  # the commit the last plan was made on

    def planned(snap: Snapshot) -> Plan:
        bases.append(snap.head.commit)
        return plan(snap)

    outcome = guarded(
        inv,
        lambda: prepared.session.repo.transact(
            planned, author=prepared.author, lock_timeout=prepared.timeout
        ),
    )
    if outcome is None or isinstance(outcome, int):
        return outcome
    answer_stands()  # committed: the rest is the answer
    if reservations and bases:
        reservecore.advance_tips(prepared.session.paths, bases[-1], outcome.commit)
    done: int = finish(*outcome.result)
    return done


def own(files: dict[str, PlainFile], agent: str) -> list[PlainReservation]:
    found = files.get(agent)
    return [] if found is None else list(found.reservations)


def refuse_denied(session: Session, config: dict[str, Any], patterns: list[str]) -> None:
    """``reservations._refuse_denied``, with the path rules' own code: an agent may not
    reserve a pattern naming only files denied to it (Defer: the full CLI refuses)."""
    tools = config.get("tools")
    if session.principal.kind != "agent" or tools is None:
        return  # no rules (``permissions_from_config(None)`` has none)
    from hive.domain.path_rules import pattern_only_denied, permissions_from_config

    try:
        rules = permissions_from_config(tools)
        fold = reservecore.folds_case(session.paths)  # as reservations._refuse_denied
        for pattern in patterns:
            name = session.principal.name
            pattern_only_denied(rules, name, reservecore.RESERVE_TOOL, pattern, fold_case=fold)
    except HiveError:
        raise Defer("denied, or rules the full CLI words") from None


# ------------------------------------------------------------------ release


def release(inv: Invocation) -> int | None:
    options = parse_options(inv.args, {}, {})
    if options is None or not options.positional:
        return None
    opened = open_request(inv, options.positional, "swarmmail_release", {})
    if opened is None or isinstance(opened, int):
        return opened
    prepared, wanted = opened
    session = prepared.session
    me = session.principal.name
    path = reservecore.reservation_path(me)

    def plan(snap: Snapshot) -> Plan:
        now = utc_now()
        sha = snap.blob_sha(path)
        held = [] if sha is None else read_file(session, path, sha).reservations
        mine = [item for item in held if item.active(now)]
        released, kept, missing = reservecore.split_release(mine, wanted, [])
        if not released:  # refused as ``reservations.release`` refuses it
            raise reservecore.nothing_matching(me, missing)
        content = reservecore.file_text(me, [item.text() for item in kept]) if kept else None
        subject = f"{me} {', '.join(r.path_pattern for r in released)}"
        return file_plan(session, "release", subject, content, (released, missing))

    def finish(released: list[PlainReservation], missing: list[str]) -> int:
        result = {"released": [item.dump() for item in released], "not_found": missing}
        not_held = f"; not held: {', '.join(missing)}" if missing else ""
        return emit(inv, result, f"released {len(released)} reservation(s){not_held}")

    return commit(inv, prepared, plan, finish, reservations=True)


# ------------------------------------------------------------------ mail send


SEND_VALUED = {
    "-s": "subject",
    "--subject": "subject",
    "-b": "body",
    "--body": "body",
    "--importance": "importance",
    "--thread": "thread",
}
SEND_FLAGS = {"--ack-required": "ack_required"}
SEND_ARGUMENTS = ("--to",)  # the command's argument_options: recipients as options


class MailHost:
    """The lean session as ``maillog``'s host (a ``Workspace`` is the full path's)."""

    def __init__(self, prepared: Prepared) -> None:
        self.git = prepared.session.repo
        self.state_index = prepared.session.index
        self.state: dict[str, Any] = {}
        self.timeout = prepared.timeout
        self.principal = prepared.session.principal
        self.identity = prepared.session.identity

    def lock_timeout(self) -> float:
        return self.timeout


def _fetched_mail(host: MailHost) -> bool:
    """Whether a plain ``git fetch`` brought mail the local log has not joined (or it
    cannot be told): the full path joins it (``maillog.join_fetched``) and answers."""
    from hive.domain import maillog
    from hive.store.sqlerrors import sqlite3

    try:
        return bool(maillog.unjoined_logs(host, maillog.state_of(host)))
    except (HiveError, OSError, sqlite3.DatabaseError, LookupError, TypeError, ValueError):
        return True


def mail(inv: Invocation) -> int | None:
    """``hive mail send``, ``inbox`` and ``read`` (the other ``mail`` commands: the
    full CLI)."""
    if inv.args[:1] == ["inbox"]:
        return inbox(inv)
    if inv.args[:1] == ["read"]:
        return read(inv)
    if inv.args[:1] != ["send"]:
        return None
    options = parse_options(inv.args[1:], SEND_VALUED, {}, SEND_FLAGS, SEND_ARGUMENTS)
    if options is None or "subject" not in options.values:
        return None
    to = options.positional
    subject = options.values["subject"]
    body = options.values.get("body", "")
    importance = options.values.get("importance", "normal")
    thread = options.values.get("thread")
    if not to and thread is None:
        return None
    if body == "-":
        return None  # standard input: read once, by the command that answers
    from hive.domain import maillog

    try:
        maillog.check_message(to, subject, body, importance, thread)
    except HiveError:
        return None  # the full CLI reports it
    asked: dict[str, Any] = {"to": to, "subject": subject}  # as the full path gives them
    if body:
        asked["body"] = body
    if thread is not None:
        asked["thread_id"] = thread
    if importance != "normal":
        asked["importance"] = importance
    if options.flags:
        asked["ack_required"] = True
    call("swarmmail_send", asked)
    prepared = prepare(inv, on_head=False, vetted=True)
    if prepared is None or isinstance(prepared, int):
        return prepared
    try:
        addressed = Addressed(prepared, thread, maillog.COORDINATOR in to)
    except (Defer, HiveError):
        return None
    return send(inv, prepared, addressed, to, subject, body, importance, options.flags)


class Addressed:
    """What a message's thread and the name ``coordinator`` stand for at HEAD
    (``mail.send_message``'s ``_thread_of`` and ``coordinator_of``), from the state
    index's rows of the cells concerned only (``maillog.CellRows``). A thread is read
    as the full path reads it (``CellRows.thread_cell``: a full id in any case, spaces
    around, a prefix, the root of a prefix's family; else a plain thread name); what
    the rows cannot certainly answer (a cell concerned unreadable or in two files)
    defers: the full CLI answers it."""

    def __init__(self, prepared: Prepared, thread: str | None, coordinator: bool) -> None:
        from hive.domain import maillog

        self.thread_id = thread
        self.members: list[str] = []
        self.coordinator: str | None = None
        if thread is None and not coordinator:
            return
        session, snap = prepared.session, prepared.snap
        if snap.head.commit is None:
            raise Defer("unborn")
        key = session.key_of(snap.head.commit)
        if thread is not None and not coordinator and _plain_cell_thread(session, key, thread):
            return  # a live cell that is not an epic: its id is the thread, no one else
        rows = maillog.CellRows(session.index, key)
        try:
            start = None
            if thread is not None:
                node = rows.thread_cell(thread)
                if node is None:
                    return  # a plain thread name: no one else, no epic behind it
                self.thread_id = start = node.id  # stored as the cell's full id
                if node.type == "epic":
                    held = [item for _, item in held_by(prepared)]
                    self.members = rows.members(node.id, held, utc_now())
            if coordinator:
                start = start or rows.open_work(session.principal.name)
                self._coordinator(prepared, rows, rows.epic_above(start))
        except maillog.Unanswered as exc:
            raise Defer(str(exc)) from None

    def _coordinator(self, prepared: Prepared, rows: CellRows, epic_id: str | None) -> None:
        from hive.domain import maillog
        from hive.store.celldoc import plain_cell
        from hive.store.yamlfast import fast_loads

        if epic_id is None:
            return
        try:
            text = prepared.session.repo.read_blob(rows.found[epic_id].blob).decode("utf-8")
            epic = plain_cell(fast_loads(text))
        except (UnicodeDecodeError, ValueError, HiveError):
            raise Defer("an epic the plain reader cannot read") from None
        if epic is None or epic["id"] != epic_id:
            raise Defer("an epic the plain reader declines")
        self.coordinator = maillog.coordinator_named(
            epic["metadata"], epic["assignee"], epic["created_by"]
        )


def _plain_cell_thread(session: Session, key: str, thread: str) -> bool:
    """Whether ``thread`` is the full id of a live cell, not an epic, whose one file is
    at its own path (one row read; anything else is decided over every row)."""
    from hive.cli.lean_write import lookup, usable

    if thread != thread.strip().lower() or not thread:
        return False
    found = usable(lookup(session.index, key, thread), thread)
    return found is not None and not found.deleted and (found.type or "task") != "epic"


def held_by(prepared: Prepared) -> list[tuple[str, PlainReservation]]:
    """Every reservation at HEAD (``reservations.list_reservations``' files)."""
    return held(load(prepared.session, prepared.snap))


def send(
    inv: Invocation,
    prepared: Prepared,
    addressed: Addressed,
    to: list[str],
    subject: str,
    body: str,
    importance: str,
    flags: set[str],
) -> int | None:
    """``mail.send_message``."""
    from hive.domain import maillog
    from hive.store import credentials
    from hive.store.celldoc import format_time

    host = MailHost(prepared)
    sender = prepared.session.principal.name
    state_dir = prepared.session.paths.hive_state_dir

    def build(state: maillog.MailState) -> tuple[str, dict[str, Any], list[str]]:
        try:
            return maillog.message_event(
                state,
                sender=sender,
                to=to,
                subject=subject,
                body=body,
                thread_id=addressed.thread_id,
                thread_members=addressed.members,
                importance=importance,
                ack_required="ack_required" in flags,
                coordinator=addressed.coordinator,
                at=format_time(utc_now()),
                retired=credentials.retired_names(state_dir),
            )
        except HiveError:
            raise Defer("not registered: the full CLI words it") from None

    if _fetched_mail(host):
        return None  # mail a git fetch brought: the full CLI joins it first (a write)
    written = guarded(inv, lambda: maillog.append(host, build, author=sender))
    if written is None or isinstance(written, int):
        return written
    answer_stands()  # sent: the rest is the answer
    recipients: list[str] = written[0]
    message_id = maillog.state_of(host).id_of_commit[str(written[1])]
    result = {
        "message_id": message_id,
        "thread_id": addressed.thread_id,
        "recipient_count": len(recipients),
        "recipients": recipients,
    }
    return emit(inv, result, f"sent #{message_id} to {', '.join(recipients)}")


# ------------------------------------------------------------------ mail inbox


INBOX_VALUED = {"-n": "limit", "--limit": "limit"}
INBOX_FLAGS = {
    "--urgent": "urgent",
    "--urgent-only": "urgent",
    "--unread": "unread",
    "--unread-only": "unread",
}


def inbox(inv: Invocation) -> int | None:
    """``hive mail inbox [-n N] [--urgent] [--unread]`` of the acting agent (or person),
    as JSON or as the plain lines piped output shows (``present._inbox`` through
    ``output.Piped``); an unregistered reader is refused with ``mail.inbox``'s error;
    another's inbox (``--agent``), a header the model might read otherwise and a
    terminal: the full CLI."""
    options = parse_options(inv.args[1:], INBOX_VALUED, {}, INBOX_FLAGS)
    if options is None or options.positional:
        return None
    limit = _positive(options.values.get("limit", str(INBOX_PAGE)), 9)
    if limit is None:
        return None
    asked: dict[str, Any] = {} if limit >= INBOX_PAGE else {"limit": limit}  # capped, as there
    for flag in ("urgent", "unread"):
        if flag in options.flags:
            asked[flag + "_only"] = True
    call("swarmmail_inbox", asked)
    prepared = _opened_to_show(inv)
    if prepared is None or isinstance(prepared, int):
        return prepared
    from hive.domain import maillog
    from hive.store.sqlerrors import sqlite3

    name = prepared.session.principal.name
    try:
        host = MailHost(prepared)
        state = maillog.state_of(host)
        if maillog.unjoined_logs(host, state):
            return None  # mail a git fetch brought: the full CLI joins it first (a write)
        if name not in state.agents:  # refused as ``mail.inbox`` refuses it
            person = prepared.session.principal.kind == "person"
            return report(inv, maillog.unregistered(name, person=person))
        filters = {
            "urgent_only": "urgent" in options.flags,
            "unread_only": "unread" in options.flags,
        }
        events = maillog.inbox_events(state, name, limit, **filters)
        headers = [plain_header(maillog.header_fields(state, event, name)) for event in events]
        size = sum(1 for _ in maillog.inbox_matches(state, name, **filters))
    except (Defer, HiveError, OSError, sqlite3.DatabaseError, LookupError, TypeError, ValueError):
        return None
    from hive.cli.markup import NO_MESSAGES, inbox_line, inbox_notice

    notice = inbox_notice(len(headers), size)
    if inv.json:
        return write_json(headers, notice)

    fields = ("id", "read", "importance", "thread_id", "subject", "ack_required", "acked")
    markup = [
        inbox_line(sender=header["from"], **{name: header[name] for name in fields})
        for header in headers
    ]
    lines = plain_lines(markup or [NO_MESSAGES])
    return None if lines is None else write_lines(lines, notice)


def _positive(text: str, digits: int) -> int | None:
    """``text`` as a number of at most ``digits`` digits, 1 or more (None: the
    parameter model words it)."""
    if not (text.isascii() and text.isdigit() and len(text) <= digits) or int(text) < 1:
        return None
    return int(text)


def _opened_to_show(inv: Invocation) -> Prepared | int | None:
    """The repository, for mail shown as JSON or piped (None: defer; on a terminal
    rich lays it out), or the exit code of an identity refused as the full path
    refuses it."""
    from hive.cli.lean import piped_plain

    if not inv.json and not piped_plain():
        return None
    return prepare(inv, on_head=False, vetted=True)


def plain_header(fields: dict[str, Any]) -> dict[str, Any]:
    """A message header as ``MessageHeader`` gives it in JSON (``from``, the time as
    the log has it), when the model certainly reads the fields as they are; else
    Defer (the full CLI reads them)."""
    from hive.domain import maillog

    texts = [fields["sender"], fields["subject"], fields["sent_at"], *fields["to"]]
    thread = fields["thread_id"]
    if (
        not all(type(text) is str for text in texts)
        or type(fields["to"]) is not list
        or not (thread is None or type(thread) is str)
        or fields["importance"] not in maillog.IMPORTANCE_LEVELS
        or not _utf8([*texts, thread or ""])
        or not _as_logged(fields["sent_at"])
    ):
        raise Defer("a header the model might read otherwise")
    return as_json(fields)


def as_json(fields: dict[str, Any]) -> dict[str, Any]:
    """A header's fields by their names in JSON (``sender`` is ``from``)."""
    return {("from" if name == "sender" else name): value for name, value in fields.items()}


def _utf8(texts: list[str]) -> bool:
    try:
        for text in texts:
            text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _as_logged(at: str) -> bool:
    """Whether the model's JSON gives the time ``at`` as it is (``format_time``)."""
    from hive.times import format_time, parse_time

    try:
        return format_time(parse_time(at)) == at
    except ValueError:
        return False


def plain_lines(lines: list[str]) -> list[str] | None:
    """Console markup as ``output.Piped`` prints it (the output is piped): the text
    without its styles; None when rich might show a line otherwise."""
    from hive.cli.lean import plain_text
    from hive.cli.markup import plain_markup

    shown = [plain_markup(line) for line in lines]
    for line, text in zip(lines, shown, strict=True):
        if text is None or not plain_text(line) or not plain_text(text):
            return None
    return [text for text in shown if text is not None]


def write_lines(lines: list[str], notice: str = "") -> int:
    """The answer on stdout, then ``notice`` (a page's: more than it shows) on stderr."""
    answer_stands()
    sys.stdout.write("".join(f"{line}\n" for line in lines))
    sys.stdout.flush()
    return _noted(notice)


def write_json(value: Any, notice: str = "") -> int:
    answer_stands()
    sys.stdout.buffer.write(printed_by_python(value) + b"\n")
    sys.stdout.flush()
    return _noted(notice)


def _noted(notice: str) -> int:
    if notice:
        sys.stderr.write(notice + "\n")
    return 0


# ------------------------------------------------------------------ mail read


def read(inv: Invocation) -> int | None:
    """``hive mail read [#]ID`` of a message to or from the acting agent (marked read
    for a recipient, as ``mail.read_message`` marks it), as JSON or as the plain lines
    piped output shows (``present._message``); another's message (``--force``), an
    unknown one, a header the model might read otherwise and a terminal: the full CLI."""
    options = parse_options(inv.args[1:], {}, {})
    if options is None or len(options.positional) != 1:
        return None
    number = _positive(options.positional[0].strip().removeprefix("#"), 18)
    if number is None:
        return None
    call("swarmmail_read_message", {"message_id": number})
    prepared = _opened_to_show(inv)
    if prepared is None or isinstance(prepared, int):
        return prepared
    from hive.domain import maillog
    from hive.store.celldoc import format_time
    from hive.store.sqlerrors import sqlite3

    host = MailHost(prepared)
    reader = prepared.session.principal.name
    try:
        state = maillog.state_of(host)
        if maillog.unjoined_logs(host, state):
            return None  # mail a git fetch brought: the full CLI joins it first (a write)
        event = state.messages.get(number)
        if event is None:  # refused as ``mail.read_message`` refuses it
            return report(inv, maillog.no_message(number))
        if reader not in state.agents:
            return None  # the full CLI words it
        party = reader == event["from"] or reader in event["to"]
        if not (party and state.current(reader, event)):
            return None  # another's: an override the full CLI checks and records
        message = plain_header(maillog.header_fields(state, event, reader))
        message["acked_by"] = maillog.acked_by(state, event)
        body = event["body"]
        if type(body) is not str or not _utf8([body]):
            return None
    except (Defer, HiveError, OSError, sqlite3.DatabaseError, LookupError, TypeError, ValueError):
        return None
    lines: list[str] | None = []
    if not inv.json:
        from hive.cli.markup import message_lines

        lines = plain_lines(message_lines(message, body, reader))
        if lines is None:
            return None

    def mark(now: maillog.MailState) -> tuple[str, dict[str, Any] | None, None]:
        return maillog.read_mark(now, event, reader, format_time(utc_now()))

    written = guarded(inv, lambda: maillog.append(host, mark, author=reader))
    if written is None or isinstance(written, int):
        return written
    if lines:
        return write_lines(lines)
    now = maillog.state_of(host)
    fields = maillog.header_fields(now, event, reader)
    return write_json(as_json(fields) | {"body": body, "acked_by": maillog.acked_by(now, event)})
