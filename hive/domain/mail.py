"""Swarm mail: agent identities and messages as an append-only event log in git.

Every mail event (an agent registered, a message sent, read or acknowledged)
is one commit on the private ref ``refs/hive/mail``: the event is JSON in the
commit message and the tree is empty. So mail

- never adds commits to the user's branch or files to their working tree;
- is never lost and survives restarts (it is in the object store);
- travels between clones with ``hive mail sync [REMOTE]`` (:func:`sync_mail`),
  which fetches the remote log, joins diverged logs with a merge commit (no
  event is lost) and pushes the result;
- is appended with a compare-and-swap on the ref under a lock, like cells.

A message's id is derived from the commit that sent it (the first 10 hex
digits of its sha as a number), so it is the same in every process and every
clone, before and after a merge; read and ack events name the message's
commit. Reading replays the log into a :class:`MailState`, kept in memory per
Workspace and saved as JSON in the state index (``mail_state``, keyed by the
tip commit); only commits not yet applied are read, and a tip that does not
descend from the saved one (a forced fetch) is replayed from scratch.
"""

from __future__ import annotations

import random
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hive.domain.maillog import (
    COORDINATOR,
    INBOX_CAP,
    MAIL_REF,
    MAX_BODY,
    MAX_SUBJECT,
    CellRows,
    MailState,
    Unanswered,
    acked_by,
    check_message,
    coordinator_named,
    epic_above,
    epic_members,
    family_root,
    first_open_work,
    header_fields,
    inbox_events,
    inbox_matches,
    join_fetched,
    join_log,
    mark_of,
    message_event,
    no_message,
    read_mark,
)
from hive.domain.maillog import append as _append
from hive.domain.maillog import require_agent as _require_agent
from hive.domain.maillog import state_of as _state
from hive.domain.workspace import Workspace
from hive.errors import GitError, HiveError, NotFound, NotOwner, NotRegistered
from hive.git.remote import (
    check_remote,
    fetch_ref,
    push_ref,
    remote_ref,
    shown_remote,
    tracking_ref,
)
from hive.models import utc_now
from hive.models.identity import Override
from hive.models.mail import (
    IMPORTANCE_LEVELS,
    AckResult,
    Agent,
    MailSyncResult,
    Message,
    MessageHeader,
    SendResult,
)
from hive.store import credentials
from hive.store.cells import format_time
from hive.store.layout import CELLS_DIR
from hive.store.sqlerrors import sqlite3
from hive.times import parse_time

if TYPE_CHECKING:
    from hive.models.reservation import Reservation

if TYPE_CHECKING:  # the supervisor's views (hive serve): imported where they are made
    from hive.models.views import MailThread, ThreadView

NOTICE_SENDER = "hive"
SYNC_ATTEMPTS = 5
ADJECTIVES = (
    "Blue",
    "Red",
    "Green",
    "Golden",
    "Silver",
    "Swift",
    "Quiet",
    "Bright",
    "Amber",
    "Crimson",
    "Misty",
    "Bold",
    "Calm",
    "Wild",
    "Lucky",
    "Frosty",
)
NOUNS = (
    "Lake",
    "Stone",
    "Field",
    "River",
    "Hill",
    "Forest",
    "Cloud",
    "Harbor",
    "Meadow",
    "Canyon",
    "Falcon",
    "Willow",
    "Comet",
    "Ridge",
    "Brook",
    "Pine",
)


# ------------------------------------------------------------------ the log


# ------------------------------------------------------------------ agents


def mail_overrides(ws: Workspace) -> list[dict[str, Any]]:
    """Overrides recorded in the mail log (reading another agent's mail, retiring or
    re-issuing an identity), with the event's commit, its time (seconds) and its
    trailer text."""
    found = []
    for event in _state(ws).overrides:
        try:
            override = Override.model_validate(
                {k: event.get(k) for k in ("by", "role", "action", "target", "owner", "reason")}
            )
            moment = parse_time(str(event["at"]))
        except (ValueError, KeyError):
            continue
        found.append({**event, "time": int(moment.timestamp()), "trailer": override.trailer()})
    return found


_ACTOR_FIELDS = {"message_sent": "from", "message_read": "agent", "message_acked": "agent"}


def forged_marks(ws: Workspace, *, limit: int) -> list[tuple[str, str]]:
    """(commit, what) for each of the latest ``limit`` mail-log events whose actor (a
    message's sender, a read or ack mark's reader) is not the commit's author: hive
    authors each event as its actor, so such an event was committed by hand (a message
    sent "from" someone else, a mark made in another agent's name)."""
    from hive.domain.maillog import event_of

    tip = ws.git.ref_value(MAIL_REF)
    if tip is None:
        return []
    found = []
    for commit in ws.git.iter_commits(tip, limit=limit):
        event = event_of(commit)
        field = _ACTOR_FIELDS.get(str(event.get("type"))) if event else None
        if event is None or field is None:
            continue
        actor, author = event.get(field), commit.author.split(" <", 1)[0]
        if actor != author:
            what = "message" if field == "from" else str(event["type"]).replace("_", " ")
            found.append(
                (commit.sha, f"{what} {field} {actor!r} but the commit's author is {author}")
            )
    return found


def registered_names(ws: Workspace) -> set[str]:
    """Every name the mail log knows (also names registered in other clones)."""
    return set(_state(ws).agents)


def append_registration(ws: Workspace, *, name: str, session: str, task: str | None) -> Agent:
    """Record ``name`` in the mail log (once: a name already there keeps its entry)."""

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, Agent]:
        existing = state.agents.get(name)
        if existing is not None:
            return "", None, _agent(existing, state.task_of(name))
        event = {
            "type": "agent_registered",
            "name": name,
            "session": session,
            "task": task,
            "project": ws.root,
            "at": format_time(utc_now()),
        }
        return f"register {name}", event, _agent(event)

    result: Agent = _append(ws, build, author=name)[0]
    return result


def declare_task(ws: Workspace, *, name: str, task: str) -> None:
    """Record ``task`` as registered agent ``name``'s current task (a ``swarmmail_init``
    that re-attaches with a new task description); nothing when it is already."""

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if name in state.agents and state.task_of(name) == task:
            return "", None, None
        event = {"type": "agent_task", "name": name, "task": task, "at": format_time(utc_now())}
        return f"task of {name}", event, None

    _append(ws, build, author=name)


def append_retirement(ws: Workspace, *, name: str, by: str, at: str | None = None) -> None:
    """Record that ``name`` was retired (``at``, else now): mail sent to or by it until
    now was the retired agent's; an agent registered afresh under the name starts with
    none."""

    def build(state: MailState) -> tuple[str, dict[str, Any], None]:
        stamp = at or format_time(utc_now())
        event = {"type": "agent_retired", "name": name, "by": by, "at": stamp}
        return f"retire {name}", event, None

    _append(ws, build, author=by)


def retired_at(ws: Workspace, name: str) -> str:
    """When the mail log last saw ``name`` retired ("" when never)."""
    return _state(ws).retired.get(name, "")


def generated_name(taken: set[str]) -> str:
    """An adjective+noun name not in ``taken`` (a number is added if all are)."""
    rng = random.SystemRandom()
    for _ in range(200):
        name = rng.choice(ADJECTIVES) + rng.choice(NOUNS)
        if name not in taken:
            return name
    base = rng.choice(ADJECTIVES) + rng.choice(NOUNS)
    number = 2
    while f"{base}{number}" in taken:
        number += 1
    return f"{base}{number}"


def _agent(event: dict[str, Any], task: str | None = None) -> Agent:
    return Agent(
        name=event["name"],
        project_key=event.get("project") or "",
        task_description=task if task is not None else event.get("task"),
        registered_at=parse_time(event["at"]),
        session=event["session"],
    )


def all_messages(ws: Workspace) -> list[dict[str, Any]]:
    """Every message event (``from``, ``to``, ``subject``, ``body``, ``thread_id``,
    ``at``, ``id``), oldest first: for searching the history."""
    return sorted(_state(ws).messages.values(), key=lambda m: (m.get("at") or "", m["id"]))


def list_agents(ws: Workspace) -> list[Agent]:
    state = _state(ws)
    return [_agent(event, state.task_of(name)) for name, event in state.agents.items()]


def require_registered(ws: Workspace, name: str) -> None:
    """The seed's rule: swarmmail_init comes before the other swarmmail tools."""
    if name not in _state(ws).agents:
        raise NotRegistered(
            f"agent {name!r} is not registered: call swarmmail_init first (reserve after"
            " registering, so other agents can reach you about your files)",
            agent=name,
        )


# ------------------------------------------------------------------ messages


def send_message(
    ws: Workspace,
    *,
    to: list[str],
    subject: str,
    body: str,
    thread_id: str | None = None,
    importance: str = "normal",
    ack_required: bool = False,
) -> SendResult:
    """Send a message; a message on an epic's thread also reaches everyone working in it.

    A thread id that names a cell (also by an unambiguous prefix) is stored
    as that cell's full id.
    """
    sender = ws.require_agent("sending mail")
    check_message(to, subject, body, importance, thread_id)
    join_fetched(ws)  # recipients registered in another clone, and a log git can push
    coordinator = coordinator_of(ws, thread_id, sender) if COORDINATOR in to else None
    thread_members: list[str] = []
    if thread_id:
        thread_id, thread_members = _thread_of(ws, thread_id)

    def build(state: MailState) -> tuple[str, dict[str, Any], SendResult]:
        summary, event, recipients = message_event(
            state,
            sender=sender,
            to=to,
            subject=subject,
            body=body,
            thread_id=thread_id,
            thread_members=thread_members,
            importance=importance,
            ack_required=ack_required,
            coordinator=coordinator,
            at=format_time(utc_now()),
            retired=credentials.retired_names(ws.git.paths.hive_state_dir),
            sender_is_person=ws.principal.kind == "person",
        )
        result = SendResult(
            message_id=0,  # set from the commit once it is written
            thread_id=thread_id,
            recipient_count=len(recipients),
            recipients=recipients,
        )
        return summary, event, result

    sent, commit = _append(ws, build, author=sender)
    result: SendResult = sent
    result.message_id = _state(ws).id_of_commit[str(commit)]
    return result


def coordinator_of(ws: Workspace, thread_id: str | None, sender: str) -> str | None:
    """Who coordinates the epic a message is about: the epic of ``thread_id`` (a cell or
    epic id), else of the sender's open work; its ``metadata.coordinator``, else its
    assignee, else whoever created it. None when there is no such epic."""
    from hive.domain.cells import get_cell

    rows = _rows(ws)
    if rows is not None:
        try:
            if thread_id:
                node = rows.thread_cell(thread_id)
                if node is None:
                    return None  # a plain thread name: no epic behind it
                epic_id = rows.epic_above(node.id)
            else:
                epic_id = rows.epic_above(rows.open_work(sender))
            if epic_id is None:
                return None
            epic = ws.reader.cell_of_blob(rows.found[epic_id].blob)
            return coordinator_named(epic.metadata, epic.assignee, epic.created_by)
        except (Unanswered, HiveError, sqlite3.Error):
            pass  # every cell is read instead
    try:
        index = ws.cells()
    except HiveError:
        return None
    start: str | None
    if thread_id:
        try:
            start = get_cell(index, family_root(thread_id, index.known_ids())).id
        except HiveError:
            return None
    else:
        start = first_open_work(
            sender, ((c.id, c.status, c.assignee, c.parent) for c in index.cells.values())
        )

    def type_of(cell_id: str) -> str | None:
        cell = index.cells.get(cell_id)
        return None if cell is None else cell.type

    def parent_of(cell_id: str) -> str | None:
        return index.cells[cell_id].parent

    epic_id = epic_above(start, type_of, parent_of)
    if epic_id is None:
        return None
    epic = index.cells[epic_id]
    return coordinator_named(epic.metadata, epic.assignee, epic.created_by)


def _thread_of(ws: Workspace, thread_id: str) -> tuple[str, list[str]]:
    """The thread's id (a cell's full id when it names one) and, for an epic, everyone
    working in it: assignees of its open descendants and holders of reservations
    made for any cell of the epic."""
    from hive.domain.cells import get_cell

    rows = _rows(ws)
    if rows is not None:
        try:
            node = rows.thread_cell(thread_id)
            if node is None:
                return thread_id, []  # a plain thread name
            if node.type != "epic":
                return node.id, []
            return node.id, rows.members(node.id, _held(ws), utc_now())
        except (Unanswered, sqlite3.Error):
            pass  # every cell is read instead
    try:
        index = ws.cells()
        cell = get_cell(index, family_root(thread_id, index.known_ids()))
    except HiveError:  # not a cell (or no hive here): threads are plain strings
        return thread_id, []
    if cell.type != "epic":
        return cell.id, []

    def worker_of(cell_id: str) -> str | None:
        child = index.cells[cell_id]
        return None if child.is_closed else child.assignee

    return cell.id, epic_members(cell.id, index.children_of, worker_of, _held(ws), utc_now())


def _held(ws: Workspace) -> list[Reservation]:
    from hive.domain.reservations import list_reservations

    try:
        return list_reservations(ws)
    except HiveError:
        return []


def _rows(ws: Workspace) -> CellRows | None:
    """The state index's rows of HEAD's state, for reading the cells a message concerns
    only, with the cell files staged over it when ``autocommit`` is off (their own
    entries); None before the first commit, or when the state cannot be indexed (every
    cell is read, and any problem reported, as before)."""
    try:
        key = ws.reader.head_key()
        if key is None or ws.autocommit:
            return None if key is None else CellRows(ws.state_index, key)
        snap = ws.snapshot()
        ws.config(snap)  # as every cell is read: the staged state's config first
        if snap.dir_key(CELLS_DIR).split("+", 1)[0] != key:
            return None  # HEAD moved meanwhile
        return CellRows(ws.state_index, key, ws.reader.staged_entries(snap))
    except (HiveError, sqlite3.Error):
        return None


def inbox(
    ws: Workspace,
    *,
    limit: int = INBOX_CAP,
    urgent_only: bool = False,
    unread_only: bool = False,
    agent: str | None = None,
    force: bool = False,
    reason: str | None = None,
) -> list[MessageHeader]:
    """Newest first, at most 5, headers only (bodies via read_message).

    ``agent``: another agent's inbox, which only a coordinator or a person may
    look into, with ``force`` and a reason (recorded in the mail log and the
    event log).
    """
    me = ws.require_agent("reading mail")
    name = agent or me
    join_fetched(ws)
    state = _state(ws)
    mine = name == me
    _require_agent(state, name, person=mine and ws.principal.kind == "person", caller=mine)
    if name != me:
        _record_mail_override(
            ws,
            owner=name,
            action="list",
            target="inbox",
            what="kept for",
            force=force,
            reason=reason,
        )
        state = _state(ws)
    found = inbox_events(state, name, limit, urgent_only=urgent_only, unread_only=unread_only)
    return [_header(state, event, name) for event in found]


def inbox_size(
    ws: Workspace, *, agent: str, urgent_only: bool = False, unread_only: bool = False
) -> int:
    """How many messages ``agent``'s inbox holds with these filters (:func:`inbox` shows
    the newest of them), read after :func:`inbox` allowed the caller to list it."""
    matches = inbox_matches(_state(ws), agent, urgent_only=urgent_only, unread_only=unread_only)
    return sum(1 for _ in matches)


def _record_mail_override(
    ws: Workspace,
    *,
    owner: str,
    action: str,
    target: str,
    force: bool,
    reason: str | None,
    what: str = "addressed to",
) -> None:
    """Check an override of a mail ownership rule and record it: a mail-log event
    with a ``Hive-Override`` trailer, and the event log."""
    from hive.domain.ownership import check_owner

    found = check_owner(
        ws, owner=owner, action=action, target=target, force=force, reason=reason, what=what
    )
    if found is not None:
        record_override_event(ws, found)


def record_override_event(ws: Workspace, found: Override) -> str | None:
    """Record ``found`` as a mail-log event (a commit on ``refs/hive/mail`` with its
    ``Hive-Override`` trailer, listed by ``hive log --overrides``) and in the event
    log; for overrides that change no branch (mail, identities). The commit id."""
    from hive.domain.ownership import override_trailers, record_overrides

    event = {"type": "override", **found.model_dump(), "at": format_time(utc_now())}

    def build(state: MailState) -> tuple[str, dict[str, Any], None]:
        return f"override by {found.by}: {found.action} {found.owner}", dict(event), None

    _, commit = _append(ws, build, author=found.by, trailers=override_trailers([found]))
    record_overrides(ws, [found], commit, ref=MAIL_REF)
    return commit


def _header(state: MailState, event: dict[str, Any], reader: str) -> MessageHeader:
    fields = header_fields(state, event, reader)
    sent_at = parse_time(fields.pop("sent_at"))
    return MessageHeader(**fields, sent_at=sent_at)


def read_message(
    ws: Workspace, *, message_id: int, force: bool = False, reason: str | None = None
) -> Message:
    """One message with its body; marks it read for the caller.

    Only its recipients (and its sender) may read it; a coordinator or a person
    may read another's with ``force`` and a reason (recorded; not marked read).
    """
    reader = ws.require_agent("reading mail")
    join_fetched(ws)
    state = _state(ws)
    event = _message(state, message_id)
    party = reader == event["from"] or reader in event["to"]
    if not (party and state.current(reader, event)):
        # sent to or by the agent that held the name before it was retired
        owner = f"the retired {reader}" if party else ", ".join(event["to"])
        _record_mail_override(
            ws,
            owner=owner,
            action="read",
            target=f"message #{message_id}",
            force=force,
            reason=reason,
        )
        return _message_of(_state(ws), event, event["to"][0])

    _append(
        ws, lambda state: read_mark(state, event, reader, format_time(utc_now())), author=reader
    )
    return _message_of(_state(ws), event, reader)


def _message_of(state: MailState, event: dict[str, Any], reader: str) -> Message:
    """The message ``event`` with its body as ``reader`` reads it, and who acknowledged it."""
    header = _header(state, event, reader)
    return Message(**header.model_dump(), body=event["body"], acked_by=acked_by(state, event))


def _message(state: MailState, message_id: int) -> dict[str, Any]:
    event = state.messages.get(int(message_id))
    if event is None:
        raise no_message(message_id)
    return event


def ack_message(ws: Workspace, *, message_id: int) -> AckResult:
    """Acknowledge a message (recipients only); acknowledging twice changes nothing."""
    agent = ws.require_agent("acknowledging mail")
    join_fetched(ws)
    state = _state(ws)
    event = _message(state, message_id)
    if agent not in event["to"] or not state.current(agent, event):
        retired = " (it was sent before that name was retired)" if agent in event["to"] else ""
        raise NotOwner(
            f"message #{message_id} is addressed to {', '.join(event['to'])}{retired}: only"
            f" its recipients acknowledge it, not {agent}",
            owner=event["to"][0],
        )
    now = format_time(utc_now())

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if (agent, message_id) in state.acked:
            return "", None, None
        return f"ack #{message_id} by {agent}", mark_of("message_acked", event, agent, now), None

    _append(ws, build, author=agent)
    acked_at = _state(ws).acked[(agent, message_id)]
    return AckResult(
        message_id=message_id,
        agent=agent,
        acked_at=parse_time(acked_at),
    )


# ------------------------------------------------------------------ between clones


def sync_mail(ws: Workspace, *, remote: str | None = None) -> MailSyncResult:
    """Exchange the mail log with ``remote`` (None: as ``hive sync`` chooses it): fetch
    its ``refs/hive/mail``, join it with the local log (fast-forward, or a merge commit
    when both sides wrote; no event is lost), then push the result (never forced;
    retried when the remote moved meanwhile). ``hive sync`` does the same for all hive
    refs."""
    if remote is None:
        from hive.git.gitconfig import GitConfig

        name = GitConfig(ws.root).default_remote(ws.git.head().ref, "hive mail sync")
    else:
        name = check_remote(remote)
    # Mail needs nothing from the config: a broken one is not mail sync's to refuse.
    timeout = ws.lock_timeout(config_optional=True)
    with ws.git.sync_lock(timeout):  # takes turns with hive sync (hive/domain/sync.py)
        return _sync_mail_locked(ws, name, timeout)


def _sync_mail_locked(ws: Workspace, name: str, timeout: float) -> MailSyncResult:
    tracking = tracking_ref(name, "mail")
    merged = False
    received = 0
    for _ in range(SYNC_ATTEMPTS):
        theirs = remote_ref(ws.root, name, MAIL_REF)
        if theirs is not None:
            fetch_ref(ws.root, name, MAIL_REF, tracking)
            local = ws.git.ref_value(MAIL_REF)
            received += join_log(ws, theirs, name, timeout)
            tip = ws.git.ref_value(MAIL_REF)
            merged = merged or (local is not None and tip not in (local, theirs))
        local = ws.git.ref_value(MAIL_REF)
        if local is None or local == theirs or push_ref(ws.root, name, MAIL_REF):
            return MailSyncResult(
                remote=shown_remote(name),
                tip=local,
                received=received,
                merged=merged,
                pushed=local is not None and local != theirs,
            )
    raise GitError(f"{shown_remote(name)}'s {MAIL_REF} kept moving while syncing; try again")


def post_notice(ws: Workspace, *, key: str, to: list[str], subject: str, body: str) -> bool:
    """A message from hive itself (``from: hive``) to ``to``, sent once per ``key``:
    False when a notice with that key is already in the log. Two clones that post
    the same key before their logs meet keep one of them (the same one)."""

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, bool]:
        if key in state.keys:
            return "", None, False
        event = {
            "type": "message_sent",
            "from": NOTICE_SENDER,
            "to": list(dict.fromkeys(to)),
            "subject": subject[:MAX_SUBJECT],
            "body": body[:MAX_BODY],
            "thread_id": None,
            "importance": "high",
            "ack_required": False,
            "at": format_time(utc_now()),
            "key": key,
        }
        return f"notice: {subject[:60]}", event, True

    result: bool = _append(ws, build, author=NOTICE_SENDER)[0]
    return result


def thread_messages(ws: Workspace, *, thread_id: str, limit: int = 20) -> list[Message]:
    """The last ``limit`` messages of a thread (oldest first), whoever they were sent to.
    For observers of a whole thread (``hive swarm run``'s progress view); reading
    them this way marks nothing read.
    """
    state = _state(ws)
    found = [event for event in state.messages.values() if event.get("thread_id") == thread_id]
    found.sort(key=lambda event: (event["at"], event["id"]))
    return [
        Message(**_header(state, event, "").model_dump(), body=str(event.get("body") or ""))
        for event in found[-max(1, limit) :]
    ]


# ------------------------------------------------------------------ watching (hive serve)


def _thread_key(event: dict[str, Any]) -> str:
    thread = event.get("thread_id")
    return str(thread) if thread else f"message-{event['id']}"


def _sent_at(event: dict[str, Any]) -> datetime:
    return parse_time(str(event["at"]))


def list_threads(ws: Workspace, *, limit: int | None = None) -> list[MailThread]:
    """Every conversation, most recently active first, for a supervisor (nothing is
    marked read). A message without a thread id is a thread of its own."""
    from hive.models.views import MailThread

    state = _state(ws)
    grouped: dict[str, list[dict[str, Any]]] = {}
    for event in state.messages.values():
        grouped.setdefault(_thread_key(event), []).append(event)
    threads = []
    for key, events in grouped.items():
        events.sort(key=lambda e: (e["at"], e["id"]))
        people = [name for e in events for name in (e["from"], *e["to"])]
        rank = max(IMPORTANCE_LEVELS.index(e.get("importance", "normal")) for e in events)
        threads.append(
            MailThread(
                key=key,
                thread_id=events[0].get("thread_id"),
                subject=events[0]["subject"],
                participants=list(dict.fromkeys(people)),
                count=len(events),
                last_at=_sent_at(events[-1]),
                importance=IMPORTANCE_LEVELS[rank],
            )
        )
    threads.sort(key=lambda t: (t.last_at, t.key), reverse=True)
    return threads[:limit] if limit is not None else threads


def thread_view(ws: Workspace, *, key: str) -> ThreadView:
    """The messages of one thread (by :func:`list_threads`' key), oldest first, with
    who has read and acknowledged each; reading them here marks nothing read."""
    from hive.models.views import ThreadMessage, ThreadView

    state = _state(ws)
    found = sorted(
        (e for e in state.messages.values() if _thread_key(e) == key),
        key=lambda e: (e["at"], e["id"]),
    )
    if not found:
        raise NotFound(f"no mail thread {key!r}")
    readers: dict[int, list[str]] = {}
    for agent, number in sorted(state.read):
        readers.setdefault(number, []).append(agent)
    ackers: dict[int, list[str]] = {}
    for agent, number in sorted(state.acked):
        ackers.setdefault(number, []).append(agent)
    messages = [
        ThreadMessage(
            id=int(e["id"]),
            sender=e["from"],
            to=list(e["to"]),
            subject=e["subject"],
            body=e["body"],
            thread_id=e.get("thread_id"),
            importance=e.get("importance", "normal"),
            ack_required=bool(e.get("ack_required")),
            sent_at=_sent_at(e),
            read_by=readers.get(int(e["id"]), []),
            acked_by=ackers.get(int(e["id"]), []),
        )
        for e in found
    ]
    return ThreadView(key=key, thread_id=found[0].get("thread_id"), messages=messages)
