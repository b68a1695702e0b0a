"""Swarm mail: agent identities and messages as an append-only event log in git.

Every mail event (an agent registered, a message sent, read or acknowledged)
is one commit on the private ref ``refs/hive/mail``: the event is JSON in the
commit message and the tree is empty. So mail

- never adds commits to the user's branch or files to their working tree;
- is never lost and survives restarts (it is in the object store);
- travels with ``git push/fetch origin refs/hive/mail:refs/hive/mail``;
- is appended with a compare-and-swap on the ref under a lock, like cells.

Reading replays the log into a :class:`MailState`, kept in memory per
Workspace and pickled to ``<git common dir>/hive/mail.cache`` keyed by the tip
commit; only commits not yet applied are read.
"""

from __future__ import annotations

import json
import os
import pickle
import random
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hive.domain.workspace import Workspace, check_actor
from hive.errors import CorruptFile, InvalidInput, NotFound, PermissionDenied
from hive.git.repo import CommitInfo, Identity, Plan
from hive.models import utc_now
from hive.models.mail import (
    IMPORTANCE_LEVELS,
    AckResult,
    Agent,
    Message,
    MessageHeader,
    SendResult,
)
from hive.store.cells import format_time

MAIL_REF = "refs/hive/mail"
INBOX_CAP = 5
MAX_BODY = 64 * 1024
MAX_SUBJECT = 200
MAX_RECIPIENTS = 64
STATE_KEY = "mail"
# Re-pickle the replayed state only after this many new events: a process that
# appends one event at a time should not rewrite a 10,000-message cache each time;
# the next process replays the few events the cache is behind.
PERSIST_AFTER = 64

ADJECTIVES = (
    "Blue", "Red", "Green", "Golden", "Silver", "Swift", "Quiet", "Bright",
    "Amber", "Crimson", "Misty", "Bold", "Calm", "Wild", "Lucky", "Frosty",
)  # fmt: skip
NOUNS = (
    "Lake", "Stone", "Field", "River", "Hill", "Forest", "Cloud", "Harbor",
    "Meadow", "Canyon", "Falcon", "Willow", "Comet", "Ridge", "Brook", "Pine",
)  # fmt: skip


@dataclass
class MailState:
    """The mail log replayed: agents, messages, who read and acked what."""

    tip: str | None = None
    applied: set[str] = field(default_factory=set)
    agents: dict[str, dict[str, Any]] = field(default_factory=dict)
    messages: dict[int, dict[str, Any]] = field(default_factory=dict)
    inbox: dict[str, list[int]] = field(default_factory=dict)
    read: set[tuple[str, int]] = field(default_factory=set)
    acked: dict[tuple[str, int], str] = field(default_factory=dict)
    threads: dict[str, set[str]] = field(default_factory=dict)
    next_id: int = 1

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "agent_registered":
            self.agents.setdefault(event["name"], event)
        elif kind == "message_sent":
            self._apply_message(event)
        elif kind == "message_read":
            self.read.add((event["agent"], int(event["id"])))
        elif kind == "message_acked":
            key = (event["agent"], int(event["id"]))
            self.read.add(key)
            self.acked.setdefault(key, event["at"])

    def _apply_message(self, event: dict[str, Any]) -> None:
        message_id = int(event["id"])
        if message_id in self.messages:  # the same id from a merged clone's log
            message_id = self.next_id
            event = {**event, "id": message_id}
        self.messages[message_id] = event
        self.next_id = max(self.next_id, message_id + 1)
        for recipient in event["to"]:
            self.inbox.setdefault(recipient, []).append(message_id)
        if event.get("thread_id"):
            self.threads.setdefault(event["thread_id"], set()).update([event["from"], *event["to"]])


# ------------------------------------------------------------------ the log


def _state(ws: Workspace) -> MailState:
    """The mail state at the current tip of ``refs/hive/mail`` (incremental)."""
    state: MailState | None = ws.state.get(STATE_KEY)
    tip = ws.git.ref_value(MAIL_REF)
    if state is not None and state.tip == tip:
        return state
    if state is None:
        state = _load_persisted(ws) or MailState()
    if state.tip != tip:
        applied = _advance(ws, state, tip)
        if tip is None:
            state = MailState()
        elif applied >= PERSIST_AFTER or not os.path.exists(_cache_path(ws)):
            _persist(ws, state)
    ws.state[STATE_KEY] = state
    return state


def _advance(ws: Workspace, state: MailState, tip: str | None) -> int:
    """Apply the commits between ``state.tip`` and ``tip``; how many there were."""
    if tip is None:
        return 0
    count = 0
    for commit in ws.git.new_commits(tip, state.applied):
        event = _event_of(commit)
        if event is not None:
            state.apply(event)
        state.applied.add(commit.sha)
        count += 1
    state.tip = tip
    return count


def _event_of(commit: CommitInfo) -> dict[str, Any] | None:
    _, _, body = commit.message.partition("\n\n")
    try:
        event = json.loads(body)
    except json.JSONDecodeError:
        return None
    return event if isinstance(event, dict) and "type" in event else None


def _cache_path(ws: Workspace) -> str:
    return os.path.join(ws.git.paths.hive_state_dir, "mail.cache")


def _load_persisted(ws: Workspace) -> MailState | None:
    try:
        with open(_cache_path(ws), "rb") as handle:
            state = pickle.load(handle)
    except Exception:  # a cache must never break a read
        return None
    return state if isinstance(state, MailState) else None


def _persist(ws: Workspace, state: MailState) -> None:
    path = _cache_path(ws)
    temp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temp, "wb") as handle:
            pickle.dump(state, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temp, path)
    except OSError:
        return


def _append(ws: Workspace, build: Any, *, author: str) -> Any:
    """Append the event ``build(state)`` returns as (summary, event or None, result)."""

    def plan(tip: str | None) -> Plan:
        state = _state(ws)
        summary, event, result = build(state)
        if event is None:
            return Plan(changes=[], message="", result=result)
        message = (
            f"hive-mail: {summary}\n\n{json.dumps(event, ensure_ascii=False, sort_keys=True)}\n"
        )
        return Plan(changes=[], message=message, result=result)

    written = ws.git.append_to_ref(
        MAIL_REF,
        plan,
        author=_identity(author),
        lock_timeout=ws.lock_timeout(),
        lock_name="mail.lock",
    )
    _state(ws)
    return written.result


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
) -> Agent:
    """Register (or re-attach to) an agent identity.

    A name is owned by the session that registered it: calling again from
    that session returns the same identity; another session asking for a
    taken name gets a distinct one (``BlueLake`` -> ``BlueLake2``). Without a
    name an adjective+noun name is generated.
    """
    wanted = check_actor(agent_name) if agent_name else None
    owner = session or ws.session

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, Agent]:
        existing = _existing_identity(state, owner, wanted)
        if existing is not None:
            return "", None, _agent(existing)
        name = _free_name(state, wanted)
        event = {
            "type": "agent_registered",
            "name": name,
            "session": owner,
            "task": task_description,
            "project": ws.root,
            "at": format_time(utc_now()),
        }
        return f"register {name}", event, _agent(event)

    result: Agent = _append(ws, build, author=wanted or "hive")
    return result


def _existing_identity(state: MailState, session: str, wanted: str | None) -> dict[str, Any] | None:
    """This session's identity for ``wanted`` (or any, without a name), if registered."""
    for event in state.agents.values():
        if event["session"] != session:
            continue
        name = event["name"]
        if (
            wanted is None
            or name == wanted
            or (name.startswith(wanted) and name[len(wanted) :].isdigit())
        ):
            return event
    return None


def _free_name(state: MailState, wanted: str | None) -> str:
    if wanted is not None:
        if wanted not in state.agents:
            return wanted
        number = 2
        while f"{wanted}{number}" in state.agents:
            number += 1
        return f"{wanted}{number}"
    rng = random.SystemRandom()
    for _ in range(200):
        name = rng.choice(ADJECTIVES) + rng.choice(NOUNS)
        if name not in state.agents:
            return name
    return _free_name(state, rng.choice(ADJECTIVES) + rng.choice(NOUNS))


def _agent(event: dict[str, Any]) -> Agent:
    return Agent(
        name=event["name"],
        project_key=event.get("project") or "",
        task_description=event.get("task"),
        registered_at=datetime.fromisoformat(event["at"].replace("Z", "+00:00")),
        session=event["session"],
    )


def list_agents(ws: Workspace) -> list[Agent]:
    return [_agent(event) for event in _state(ws).agents.values()]


def _require_agent(state: MailState, name: str) -> None:
    if name not in state.agents:
        raise NotFound(
            f"agent {name!r} is not registered; run 'hive mail init' (swarmmail_init) first",
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
    """Send a message; a message on an epic's thread also reaches everyone working in it."""
    sender = ws.actor
    _check_message(to, subject, body, importance)
    thread_members = _epic_workers(ws, thread_id) if thread_id else []

    def build(state: MailState) -> tuple[str, dict[str, Any], SendResult]:
        _require_agent(state, sender)
        recipients = list(dict.fromkeys(to))
        unknown = [name for name in recipients if name not in state.agents]
        if unknown:
            known = ", ".join(sorted(state.agents)) or "none"
            raise NotFound(f"unknown recipient(s) {', '.join(unknown)} (registered: {known})")
        if thread_id:
            extra = set(state.threads.get(thread_id, set())) | set(thread_members)
            recipients += sorted(n for n in extra if n in state.agents and n not in recipients)
            recipients = [n for n in recipients if n != sender] or recipients
        if not recipients:
            raise InvalidInput("no recipients: give 'to' or a thread with participants")
        message_id = state.next_id
        event = {
            "type": "message_sent",
            "id": message_id,
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
            message_id=message_id,
            thread_id=thread_id,
            recipient_count=len(recipients),
            recipients=recipients,
        )
        return f"send #{message_id} from {sender}: {subject[:60]}", event, result

    result: SendResult = _append(ws, build, author=sender)
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


def _epic_workers(ws: Workspace, thread_id: str) -> list[str]:
    """Assignees of the open subtasks when ``thread_id`` names an epic."""
    try:
        index = ws.cells()
    except (CorruptFile, NotFound, InvalidInput):
        return []
    except Exception:  # no hive in this repository: threads are plain strings
        return []
    epic = index.cells.get(thread_id)
    if epic is None or epic.type != "epic":
        return []
    workers = []
    for child_id in index.children_of(epic.id):
        child = index.cells[child_id]
        if child.assignee and not child.is_closed:
            workers.append(child.assignee)
    return workers


def inbox(
    ws: Workspace,
    *,
    limit: int = INBOX_CAP,
    urgent_only: bool = False,
    unread_only: bool = False,
    agent: str | None = None,
) -> list[MessageHeader]:
    """Newest first, at most 5, headers only (bodies via read_message)."""
    name = agent or ws.actor
    state = _state(ws)
    _require_agent(state, name)
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


def read_message(ws: Workspace, *, message_id: int) -> Message:
    """One message with its body; marks it read for the caller."""
    reader = ws.actor
    event = _visible_message(_state(ws), message_id, reader)

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if reader not in event["to"] or (reader, message_id) in state.read:
            return "", None, None
        mark = {
            "type": "message_read",
            "id": message_id,
            "agent": reader,
            "at": format_time(utc_now()),
        }
        return f"read #{message_id} by {reader}", mark, None

    _append(ws, build, author=reader)
    header = _header(_state(ws), event, reader)
    return Message(**header.model_dump(), body=event["body"])


def _visible_message(state: MailState, message_id: int, reader: str) -> dict[str, Any]:
    event = state.messages.get(int(message_id))
    if event is None:
        raise NotFound(f"no message #{message_id}")
    if reader != event["from"] and reader not in event["to"]:
        raise PermissionDenied(f"message #{message_id} was not sent to {reader}")
    return event


def ack_message(ws: Workspace, *, message_id: int) -> AckResult:
    """Acknowledge a message (recipients only); acknowledging twice changes nothing."""
    agent = ws.actor
    event = _visible_message(_state(ws), message_id, agent)
    if agent not in event["to"]:
        raise PermissionDenied(f"only recipients can acknowledge message #{message_id}")
    now = format_time(utc_now())

    def build(state: MailState) -> tuple[str, dict[str, Any] | None, None]:
        if (agent, message_id) in state.acked:
            return "", None, None
        mark = {"type": "message_acked", "id": message_id, "agent": agent, "at": now}
        return f"ack #{message_id} by {agent}", mark, None

    _append(ws, build, author=agent)
    acked_at = _state(ws).acked[(agent, message_id)]
    return AckResult(
        message_id=message_id,
        agent=agent,
        acked_at=datetime.fromisoformat(acked_at.replace("Z", "+00:00")),
    )
