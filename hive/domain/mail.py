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

import bisect
import contextlib
import json
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from hive.domain.workspace import Workspace
from hive.errors import GitError, HiveError, InvalidInput, NotFound, NotOwner, NotRegistered
from hive.git.remote import check_remote, fetch_ref, push_ref, remote_ref, tracking_ref
from hive.git.repo import CommitInfo, Identity, Plan
from hive.models import utc_now
from hive.models.identity import Override, Registration
from hive.models.mail import (
    IMPORTANCE_LEVELS,
    AckResult,
    Agent,
    MailSyncResult,
    Message,
    MessageHeader,
    SendResult,
)
from hive.models.views import MailThread, ThreadMessage, ThreadView
from hive.store.cells import format_time

MAIL_REF = "refs/hive/mail"
NOTICE_SENDER = "hive"
STATE_VERSION = 5
ID_HEX_DIGITS = 10
MAX_ID_HEX_DIGITS = 13  # 52 bits: still an exact JSON number
SYNC_ATTEMPTS = 5
INBOX_CAP = 5
MAX_BODY = 64 * 1024
MAX_SUBJECT = 200
MAX_RECIPIENTS = 64
STATE_KEY = "mail"
# Save the replayed state only after this many new events: a process that
# appends one event at a time should not rewrite a 10,000-message cache each time;
# the next process replays the few events the cache is behind.
PERSIST_AFTER = 64

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


@dataclass
class MailState:
    """The mail log replayed: agents, messages, who read and acked what.

    Applying is order-independent (ids come from commits, inboxes are kept
    sorted by send time, the earliest registration of a name wins), so a
    merged log gives the same state however its commits were replayed.
    """

    version: int = STATE_VERSION
    tip: str | None = None
    applied: set[str] = field(default_factory=set)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    id_of_commit: dict[str, int] = field(default_factory=dict)
    inbox: dict[str, list[int]] = field(default_factory=dict)
    read: set[tuple[str, int]] = field(default_factory=set)
    acked: dict[tuple[str, int], str] = field(default_factory=dict)
    threads: dict[str, set[str]] = field(default_factory=dict)
    keys: dict[str, int] = field(default_factory=dict)  # notice key -> message id
    latest_at: str = ""  # the latest event time: a new event is stamped after it
    overrides: list[dict[str, Any]] = field(default_factory=list)

    def apply(self, event: dict[str, Any], commit: str) -> None:
        kind = event.get("type")
        stamp = event.get("at")
        if isinstance(stamp, str) and stamp > self.latest_at:
            self.latest_at = stamp
        if kind == "override":
            self.overrides.append({**event, "commit": commit})
        elif kind == "agent_registered":
            self._apply_agent({**event, "commit": commit})
        elif kind == "message_sent":
            self._apply_message(event, commit)
        elif kind in ("message_read", "message_acked"):
            message_id = self.id_of_commit.get(str(event.get("msg")))
            if message_id is None:
                return  # not a message of this log (or an event from before ids were stable)
            key = (event["agent"], message_id)
            self.read.add(key)
            if kind == "message_acked":
                self.acked[key] = min(self.acked.get(key, event["at"]), event["at"])

    def _apply_agent(self, event: dict[str, Any]) -> None:
        current = self.agents.get(event["name"])
        if current is None or (event["at"], event["commit"]) < (current["at"], current["commit"]):
            self.agents[event["name"]] = event

    def _apply_message(self, event: dict[str, Any], commit: str) -> None:
        key = event.get("key")
        if key and key in self.keys:
            kept = self.keys[key]
            if self.messages[kept]["commit"] <= commit:
                self.id_of_commit[commit] = kept  # a duplicate notice: one is enough
                return
            self._unfile(kept)
        message_id = message_id_of(commit, self.messages)
        if key:
            for old_commit, number in list(self.id_of_commit.items()):
                if number == self.keys.get(key):
                    self.id_of_commit[old_commit] = message_id
            self.keys[key] = message_id
        self.id_of_commit[commit] = message_id
        self.messages[message_id] = {**event, "id": message_id, "commit": commit}
        for recipient in event["to"]:
            self._file(self.inbox.setdefault(recipient, []), message_id)
        if event.get("thread_id"):
            self.threads.setdefault(event["thread_id"], set()).update([event["from"], *event["to"]])

    def _unfile(self, message_id: int) -> None:
        """Forget a message (a duplicate notice replaced by the one every clone keeps)."""
        message = self.messages.pop(message_id)
        for recipient in message["to"]:
            box = self.inbox.get(recipient, [])
            if message_id in box:
                box.remove(message_id)

    def _file(self, box: list[int], message_id: int) -> None:
        """Keep ``box`` sorted by (sent at, id); appending is the common case."""

        def key(number: int) -> tuple[str, int]:
            return (self.messages[number]["at"], number)

        if not box or key(box[-1]) <= key(message_id):
            box.append(message_id)
        else:
            bisect.insort(box, message_id, key=key)


def message_id_of(commit: str, taken: dict[int, Any] | None = None) -> int:
    """The public id of the message sent by ``commit``: a number from its sha.

    Only if two messages share the first 10 hex digits does the later one
    take a longer prefix (vanishingly rare: about 1 in 20,000 at 10,000 messages).
    """
    for digits in range(ID_HEX_DIGITS, MAX_ID_HEX_DIGITS + 1):
        number = int(commit[:digits], 16)
        if number >= 1 and (taken is None or number not in taken):
            return number
    return int(commit[:MAX_ID_HEX_DIGITS], 16) or 1


# ------------------------------------------------------------------ the log


def _state(ws: Workspace) -> MailState:
    """The mail state at the current tip of ``refs/hive/mail`` (incremental)."""
    state: MailState | None = ws.state.get(STATE_KEY)
    tip = ws.git.ref_value(MAIL_REF)
    if state is not None and state.tip == tip:
        return state
    saved: MailState | None = None
    if state is None:
        saved = _load_persisted(ws)
        state = saved or MailState()
    if state.tip != tip:
        applied = _advance(ws, state, tip)
        if applied < 0:  # the log was rewound or replaced: replay it from scratch
            state = MailState()
            applied = _advance(ws, state, tip)
        if applied >= PERSIST_AFTER or saved is None or tip is None:
            _persist(ws, state)
    ws.state[STATE_KEY] = state
    return state


def _advance(ws: Workspace, state: MailState, tip: str | None) -> int:
    """Apply the commits between ``state.tip`` and ``tip``: how many there were,
    or -1 when ``tip`` does not descend from ``state.tip`` (nothing applied)."""
    if tip is None:
        return -1 if state.tip is not None else 0
    commits = ws.git.new_commits(tip, state.applied)
    if state.tip is not None and not any(state.tip in c.parents for c in commits):
        return -1
    for commit in commits:
        event = _event_of(commit)
        if event is not None:
            state.apply(event, commit.sha)
        state.applied.add(commit.sha)
    state.tip = tip
    return len(commits)


def _event_of(commit: CommitInfo) -> dict[str, Any] | None:
    _, _, body = commit.message.partition("\n\n")
    try:
        event, _ = json.JSONDecoder().raw_decode(body.lstrip())  # trailers may follow
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "type" in event else None


def _load_persisted(ws: Workspace) -> MailState | None:
    """The state saved in the state index (None when missing, of another version,
    or unreadable: saved state must never break a read)."""
    try:
        found = ws.state_index.mail_state()
        if found is None:
            return None
        state = _state_from_json(json.loads(found[1]))
    except Exception:
        return None
    if state is None or state.tip != found[0]:
        return None
    return state


def _persist(ws: Workspace, state: MailState) -> None:
    if state.tip is None:
        return
    with contextlib.suppress(Exception):  # best effort: the log in git is the truth
        ws.state_index.store_mail_state(state.tip, json.dumps(_state_to_json(state)).encode())


def _state_to_json(state: MailState) -> dict[str, Any]:
    return {
        "version": state.version,
        "tip": state.tip,
        "applied": sorted(state.applied),
        "agents": state.agents,
        "messages": [[number, event] for number, event in state.messages.items()],
        "id_of_commit": state.id_of_commit,
        "inbox": state.inbox,
        "read": sorted(state.read),
        "acked": [[agent, number, at] for (agent, number), at in state.acked.items()],
        "threads": {key: sorted(names) for key, names in state.threads.items()},
        "keys": state.keys,
        "latest_at": state.latest_at,
        "overrides": state.overrides,
    }


def _state_from_json(data: dict[str, Any]) -> MailState | None:
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return None
    return MailState(
        version=STATE_VERSION,
        tip=data["tip"],
        applied=set(data["applied"]),
        agents=data["agents"],
        messages={int(number): event for number, event in data["messages"]},
        id_of_commit={commit: int(number) for commit, number in data["id_of_commit"].items()},
        inbox={name: [int(n) for n in box] for name, box in data["inbox"].items()},
        read={(agent, int(number)) for agent, number in data["read"]},
        acked={(agent, int(number)): at for agent, number, at in data["acked"]},
        threads={key: set(names) for key, names in data["threads"].items()},
        keys={key: int(number) for key, number in data["keys"].items()},
        latest_at=data["latest_at"],
        overrides=data["overrides"],
    )


def _append(
    ws: Workspace, build: Any, *, author: str, trailers: Sequence[tuple[str, str]] = ()
) -> tuple[Any, str | None]:
    """Append the event ``build(state)`` returns as (summary, event or None, result);
    the result and the commit now at the tip.

    Appends are serialized under the mail lock, and each event is stamped strictly
    after the latest one in the log, so events of one log keep their order by time
    even within one millisecond (merged logs order ties by message id).
    """

    def plan(tip: str | None) -> Plan:
        state = _state(ws)
        summary, event, result = build(state)
        if event is None:
            return Plan(changes=[], message="", result=result)
        event["at"] = _after(event["at"], state.latest_at)
        message = (
            f"hive-mail: {summary}\n\n{json.dumps(event, ensure_ascii=False, sort_keys=True)}\n"
        )
        if trailers:
            message += "\n" + "".join(f"{key}: {value}\n" for key, value in trailers)
        return Plan(changes=[], message=message, result=result)

    written = ws.git.append_to_ref(
        MAIL_REF,
        plan,
        author=_identity(author),
        lock_timeout=ws.lock_timeout(),
        lock_name="mail.lock",
    )
    _state(ws)
    return written.result, written.commit


def _after(stamp: str, latest: str) -> str:
    """``stamp``, or one millisecond after ``latest`` when ``stamp`` is not later."""
    if stamp > latest or not latest:
        return stamp
    try:
        moment = datetime.fromisoformat(latest.replace("Z", "+00:00"))
    except ValueError:
        return stamp
    return format_time(moment + timedelta(milliseconds=1))


def _identity(agent: str) -> Identity:
    slug = "".join(ch if ch.isalnum() or ch in ".-_" else "." for ch in agent.lower())
    return Identity(name=agent, email=f"{slug or 'agent'}@hive.local")


# ------------------------------------------------------------------ agents


def mail_init(
    ws: Workspace,
    *,
    agent_name: str | None = None,
    task_description: str | None = None,
    session: str | None = None,
    token: str | None = None,
    from_tool: bool = False,
) -> Registration:
    """Register an agent (``swarmmail_init``): see :func:`hive.domain.identity.register_agent`.

    A free name is registered and issued a credential; a registered name is
    taken back only with its credential (``token``); without it the name is
    refused (``name_taken``), saying who holds it. Without a name an
    adjective+noun name is generated.
    """
    from hive.domain.identity import register_agent

    return register_agent(
        ws,
        name=agent_name,
        task=task_description,
        session=session,
        token=token,
        from_tool=from_tool,
    )


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
            moment = datetime.fromisoformat(str(event["at"]).replace("Z", "+00:00"))
        except (ValueError, KeyError):
            continue
        found.append({**event, "time": int(moment.timestamp()), "trailer": override.trailer()})
    return found


def registered_names(ws: Workspace) -> set[str]:
    """Every name the mail log knows (also names registered in other clones)."""
    return set(_state(ws).agents)


def append_registration(ws: Workspace, *, name: str, session: str, task: str | None) -> Agent:
    """Record ``name`` in the mail log (once: a name already there keeps its entry)."""

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, Agent]:
        existing = state.agents.get(name)
        if existing is not None:
            return "", None, _agent(existing)
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


def _agent(event: dict[str, Any]) -> Agent:
    return Agent(
        name=event["name"],
        project_key=event.get("project") or "",
        task_description=event.get("task"),
        registered_at=datetime.fromisoformat(event["at"].replace("Z", "+00:00")),
        session=event["session"],
    )


def all_messages(ws: Workspace) -> list[dict[str, Any]]:
    """Every message event (``from``, ``to``, ``subject``, ``body``, ``thread_id``,
    ``at``, ``id``), oldest first: for searching the history."""
    return sorted(_state(ws).messages.values(), key=lambda m: (m.get("at") or "", m["id"]))


def list_agents(ws: Workspace) -> list[Agent]:
    return [_agent(event) for event in _state(ws).agents.values()]


def require_registered(ws: Workspace, name: str) -> None:
    """The seed's rule: swarmmail_init comes before the other swarmmail tools."""
    if name not in _state(ws).agents:
        raise NotRegistered(
            f"agent {name!r} is not registered: call swarmmail_init first (reserve after"
            " registering, so other agents can reach you about your files)",
            agent=name,
        )


def _require_agent(state: MailState, name: str) -> None:
    if name not in state.agents:
        raise NotFound(
            f"agent {name!r} is not registered; {how_to_register(name)}",
            agent=name,
        )


def how_to_register(name: str) -> str:
    """The next step for an agent name nobody registered yet."""
    return (
        f"register it with 'hive agent register {name}' (or 'hive mail init --name {name}';"
        " swarmmail_init over MCP) and export the HIVE_AGENT_TOKEN it prints"
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
    _check_message(to, subject, body, importance)
    coordinator = coordinator_of(ws, thread_id, sender) if COORDINATOR in to else None
    thread_members: list[str] = []
    if thread_id:
        thread_id, thread_members = _thread_of(ws, thread_id)

    def build(state: MailState) -> tuple[str, dict[str, Any], SendResult]:
        _require_agent(state, sender)
        recipients = list(dict.fromkeys(to))
        if coordinator is not None and coordinator in state.agents:  # the role, not a name
            recipients = list(
                dict.fromkeys(coordinator if name == COORDINATOR else name for name in recipients)
            )
        unknown = [name for name in recipients if name not in state.agents]
        if unknown:
            known = ", ".join(sorted(state.agents)) or "none"
            hint = (
                " ('coordinator' reaches the coordinator of the epic named by thread_id)"
                if COORDINATOR in unknown
                else ""
            )
            register = "" if hint else f"; {how_to_register(unknown[0])}"
            raise NotFound(
                f"unknown recipient(s) {', '.join(unknown)}: not registered (registered: {known})"
                f"{hint}{register}",
                recipients=unknown,
            )
        if thread_id:
            extra = set(state.threads.get(thread_id, set())) | set(thread_members)
            recipients += sorted(n for n in extra if n in state.agents and n not in recipients)
            recipients = [n for n in recipients if n != sender] or recipients
        if not recipients:
            raise InvalidInput("no recipients: give 'to' or a thread with participants")
        event = {
            "type": "message_sent",
            "from": sender,
            "to": recipients,
            "subject": subject,
            "body": body,
            "thread_id": thread_id,
            "importance": importance,
            "ack_required": ack_required,
            "at": format_time(utc_now()),
        }
        result = SendResult(
            message_id=0,  # set from the commit once it is written
            thread_id=thread_id,
            recipient_count=len(recipients),
            recipients=recipients,
        )
        return f"send from {sender}: {subject[:60]}", event, result

    sent, commit = _append(ws, build, author=sender)
    result: SendResult = sent
    result.message_id = _state(ws).id_of_commit[str(commit)]
    return result


def _check_message(to: list[str], subject: str, body: str, importance: str) -> None:
    if importance not in IMPORTANCE_LEVELS:
        raise InvalidInput(f"invalid importance {importance!r}: use {', '.join(IMPORTANCE_LEVELS)}")
    if not subject.strip():
        raise InvalidInput("subject must not be empty")
    if len(subject) > MAX_SUBJECT:
        raise InvalidInput(f"subject is too long ({len(subject)} > {MAX_SUBJECT} characters)")
    if len(body) > MAX_BODY:
        raise InvalidInput(f"body is too long ({len(body)} > {MAX_BODY} characters)")
    if len(to) > MAX_RECIPIENTS:
        raise InvalidInput(f"too many recipients ({len(to)} > {MAX_RECIPIENTS})")


def _family_root(given: str, known: Iterable[str]) -> str:
    """``given``, or the one cell it is a prefix of whose descendants are all the
    other matches (``hv-ab`` names epic ``hv-abc`` even though ``hv-abc.1`` exists)."""
    wanted = given.strip().lower()
    matches = sorted(
        (c for c in known if c.startswith(wanted) or c.partition("-")[2].startswith(wanted)),
        key=len,
    )
    if len(matches) > 1 and all(m.startswith(matches[0] + ".") for m in matches[1:]):
        return matches[0]
    return given


COORDINATOR = "coordinator"


def coordinator_of(ws: Workspace, thread_id: str | None, sender: str) -> str | None:
    """Who coordinates the epic a message is about: the epic of ``thread_id`` (a cell or
    epic id), else of the sender's open work; its ``metadata.coordinator``, else its
    assignee, else whoever created it. None when there is no such epic."""
    from hive.domain.cells import get_cell

    try:
        index = ws.cells()
    except HiveError:
        return None
    cell: Any = None
    if thread_id:
        try:
            cell = get_cell(index, _family_root(thread_id, index.known_ids()))
        except HiveError:
            return None
    else:
        mine = sorted(
            (
                c
                for c in index.cells.values()
                if c.assignee == sender and not c.is_closed and c.parent
            ),
            key=lambda c: c.status != "in_progress",
        )
        cell = mine[0] if mine else None
    while cell is not None and cell.type != "epic" and cell.parent in index.cells:
        cell = index.cells[cell.parent]
    if cell is None or cell.type != "epic":
        return None
    named = cell.metadata.get("coordinator")
    return str(named) if named else cell.assignee or cell.created_by or None


def _thread_of(ws: Workspace, thread_id: str) -> tuple[str, list[str]]:
    """The thread's id (a cell's full id when it names one) and, for an epic, everyone
    working in it: assignees of its open descendants and holders of reservations
    made for any cell of the epic."""
    from hive.domain.cells import get_cell
    from hive.domain.reservations import list_reservations

    try:
        index = ws.cells()
        cell = get_cell(index, _family_root(thread_id, index.known_ids()))
    except HiveError:  # not a cell (or no hive here): threads are plain strings
        return thread_id, []
    if cell.type != "epic":
        return cell.id, []
    family = {cell.id}
    pending = [cell.id]
    workers: list[str] = []
    while pending:
        for child_id in index.children_of(pending.pop()):
            child = index.cells[child_id]
            family.add(child_id)
            pending.append(child_id)
            if child.assignee and not child.is_closed:
                workers.append(child.assignee)
    try:
        holders = [r.agent for r in list_reservations(ws) if r.cell in family]
    except HiveError:
        holders = []
    return cell.id, list(dict.fromkeys(workers + holders))


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
    state = _state(ws)
    _require_agent(state, name)
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
    cap = max(1, min(limit, INBOX_CAP))
    found: list[MessageHeader] = []
    for message_id in reversed(state.inbox.get(name, [])):
        event = state.messages[message_id]
        if urgent_only and event["importance"] != "urgent":
            continue
        if unread_only and (name, message_id) in state.read:
            continue
        found.append(_header(state, event, name))
        if len(found) >= cap:
            break
    return found


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
    key = (reader, int(event["id"]))
    return MessageHeader(
        id=int(event["id"]),
        sender=event["from"],
        to=list(event["to"]),
        subject=event["subject"],
        thread_id=event.get("thread_id"),
        importance=event.get("importance", "normal"),
        ack_required=bool(event.get("ack_required")),
        sent_at=datetime.fromisoformat(event["at"].replace("Z", "+00:00")),
        read=key in state.read,
        acked=key in state.acked,
    )


def read_message(
    ws: Workspace, *, message_id: int, force: bool = False, reason: str | None = None
) -> Message:
    """One message with its body; marks it read for the caller.

    Only its recipients (and its sender) may read it; a coordinator or a person
    may read another's with ``force`` and a reason (recorded; not marked read).
    """
    reader = ws.require_agent("reading mail")
    event = _message(_state(ws), message_id)
    if reader != event["from"] and reader not in event["to"]:
        _record_mail_override(
            ws,
            owner=", ".join(event["to"]),
            action="read",
            target=f"message #{message_id}",
            force=force,
            reason=reason,
        )
        header = _header(_state(ws), event, event["to"][0])
        return Message(**header.model_dump(), body=event["body"])

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if reader not in event["to"] or (reader, message_id) in state.read:
            return "", None, None
        mark = {
            "type": "message_read",
            "id": message_id,
            "msg": event["commit"],
            "agent": reader,
            "at": format_time(utc_now()),
        }
        return f"read #{message_id} by {reader}", mark, None

    _append(ws, build, author=reader)
    header = _header(_state(ws), event, reader)
    return Message(**header.model_dump(), body=event["body"])


def _message(state: MailState, message_id: int) -> dict[str, Any]:
    event = state.messages.get(int(message_id))
    if event is None:
        raise NotFound(f"no message #{message_id}")
    return event


def ack_message(ws: Workspace, *, message_id: int) -> AckResult:
    """Acknowledge a message (recipients only); acknowledging twice changes nothing."""
    agent = ws.require_agent("acknowledging mail")
    event = _message(_state(ws), message_id)
    if agent not in event["to"]:
        raise NotOwner(
            f"message #{message_id} is addressed to {', '.join(event['to'])}: only its"
            f" recipients acknowledge it, not {agent}",
            owner=event["to"][0],
        )
    now = format_time(utc_now())

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if (agent, message_id) in state.acked:
            return "", None, None
        mark = {
            "type": "message_acked",
            "id": message_id,
            "msg": event["commit"],
            "agent": agent,
            "at": now,
        }
        return f"ack #{message_id} by {agent}", mark, None

    _append(ws, build, author=agent)
    acked_at = _state(ws).acked[(agent, message_id)]
    return AckResult(
        message_id=message_id,
        agent=agent,
        acked_at=datetime.fromisoformat(acked_at.replace("Z", "+00:00")),
    )


# ------------------------------------------------------------------ between clones


def sync_mail(ws: Workspace, *, remote: str = "origin") -> MailSyncResult:
    """Exchange the mail log with ``remote``: fetch its ``refs/hive/mail``, join it
    with the local log (fast-forward, or a merge commit when both sides wrote;
    no event is lost), then push the result (never forced; retried when the
    remote moved meanwhile). ``hive sync`` does the same for all hive refs."""
    name = check_remote(remote)
    tracking = tracking_ref(name, "mail")
    merged = False
    received = 0
    for _ in range(SYNC_ATTEMPTS):
        theirs = remote_ref(ws.root, name, MAIL_REF)
        if theirs is not None:
            fetch_ref(ws.root, name, MAIL_REF, tracking)
            local = ws.git.ref_value(MAIL_REF)
            received += join_mail_log(ws, theirs, name)
            tip = ws.git.ref_value(MAIL_REF)
            merged = merged or (local is not None and tip not in (local, theirs))
        local = ws.git.ref_value(MAIL_REF)
        if local is None or local == theirs or push_ref(ws.root, name, MAIL_REF):
            return MailSyncResult(
                remote=name,
                tip=local,
                received=received,
                merged=merged,
                pushed=local is not None and local != theirs,
            )
    raise GitError(f"{name}'s {MAIL_REF} kept moving while syncing; try again")


def join_mail_log(ws: Workspace, theirs: str, remote: str) -> int:
    """Join the fetched log ``theirs`` into ``refs/hive/mail`` (fast-forward or a merge
    commit; no event lost, none twice); how many messages arrived."""
    known = set(_state(ws).messages)
    ws.git.merge_into_ref(
        MAIL_REF,
        theirs,
        message=f"hive-mail: merge {MAIL_REF} from {remote}\n",
        author=_identity(ws.actor),
        lock_timeout=ws.lock_timeout(),
        lock_name="mail.lock",
    )
    return len(set(_state(ws).messages) - known)


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
    return datetime.fromisoformat(str(event["at"]).replace("Z", "+00:00"))


def list_threads(ws: Workspace, *, limit: int | None = None) -> list[MailThread]:
    """Every conversation, most recently active first, for a supervisor (nothing is
    marked read). A message without a thread id is a thread of its own."""
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
