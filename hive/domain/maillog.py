"""The mail log (``refs/hive/mail``) replayed, and one event appended to it.

What swarm mail (``hive/domain/mail.py``) and the lean command-line path
(``hive/cli/lean_coord.py``: a fresh ``hive mail send``, ``inbox`` or ``read``
process) share: the replayed state (:class:`MailState`, saved as JSON in the state
index), appending an event under the mail lock, the event a message is sent as, the
messages an inbox shows, a message's header and the mark a first read appends. It
needs no models: a *host* is anything with the repository (``git``), the state index
(``state_index``), a dict for this process's state (``state``), a lock timeout and who
acts with their commit identity (a ``Workspace``, or the lean path's session).
"""

from __future__ import annotations

import bisect
import contextlib
import itertools
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hive.domain.limits import refuse_unprintable
from hive.errors import GitError, HiveError, InvalidInput, NotFound, NotRegistered
from hive.git.repo import Identity, Plan
from hive.store.celldoc import format_time
from hive.text import TEXT_KEPT, code_point, first_control, shell_word, without_control
from hive.times import parse_time

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
    from typing import Any, Protocol

    from hive.domain.actors import Acting
    from hive.git.repo import CommitInfo, GitRepo
    from hive.store.index import Entry, Node, StateIndex

    class MailHost(Protocol):
        """Where the mail log is read and appended (a ``Workspace`` is one)."""

        @property
        def git(self) -> GitRepo: ...

        @property
        def state_index(self) -> StateIndex: ...

        @property
        def state(self) -> dict[str, Any]: ...

        def lock_timeout(self) -> float: ...

        @property
        def principal(self) -> Acting: ...

        def identity(self) -> Identity: ...

    class HeldBy(Protocol):
        """A reservation as far as a thread needs it (``Reservation``, ``PlainReservation``)."""

        agent: str
        cell: str | None

        def active(self, now: datetime) -> bool: ...


# What one message may hold (shared by the full path, hive/domain/mail.py, and the lean
# one, hive/cli/lean_coord.py). The levels are those of hive.models.mail.Importance,
# repeated here because that module loads pydantic (a test keeps them equal).
IMPORTANCE_LEVELS: tuple[str, ...] = ("low", "normal", "high", "urgent")
MAX_BODY = 64 * 1024
MAX_SUBJECT = 200
MAX_RECIPIENTS = 64


# Control characters a body may keep (tab and line breaks: free text's rule,
# ``hive.text.TEXT_KEPT``); a subject or thread id is one line.
BODY_ALLOWED = TEXT_KEPT


def check_message(
    to: list[str], subject: str, body: str, importance: str, thread_id: str | None = None
) -> None:
    """InvalidInput naming the first limit a message breaks. Control characters would
    reach the recipient's terminal (``hive mail inbox``/``read``), and a subject is
    also the summary line of the message's commit in the mail log."""
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
    for what, text, allowed in (
        ("subject", subject, frozenset[str]()),
        ("thread_id", thread_id or "", frozenset[str]()),
        ("body", body, BODY_ALLOWED),
    ):
        found = first_control(text, allowed)
        if found is not None:
            kind = "control characters" if allowed else "line breaks or control characters"
            raise InvalidInput(f"{what} must not contain {kind} (found {code_point(found)})")
    if thread_id:
        refuse_unprintable(thread_id, "thread_id")
    for name in to:  # a name: no agent is registered under one holding such a character
        refuse_unprintable(name, "recipient")


MAIL_REF = "refs/hive/mail"
STATE_VERSION = 7
ID_HEX_DIGITS = 10
MAX_ID_HEX_DIGITS = 13  # 52 bits: still an exact JSON number
STATE_KEY = "mail"
# Save the replayed state only after this many new events: a process that
# appends one event at a time should not rewrite a 10,000-message cache each time;
# the next process replays the few events the cache is behind.
PERSIST_AFTER = 64


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
    tasks: dict[str, dict[str, Any]] = field(default_factory=dict)  # name -> latest agent_task
    retired: dict[str, str] = field(default_factory=dict)  # name -> when it was last retired
    # commits applied since the copy in the state index (never saved itself): a long-lived
    # process saves every PERSIST_AFTER commits, not on every append
    unsaved: int = field(default=0, compare=False)

    def apply(self, event: dict[str, Any], commit: str) -> None:
        kind = event.get("type")
        stamp = event.get("at")
        if isinstance(stamp, str) and stamp > self.latest_at:
            self.latest_at = stamp
        if kind == "override":
            self.overrides.append({**event, "commit": commit})
        elif kind == "agent_registered":
            self._apply_agent({**event, "commit": commit})
        elif kind == "agent_task":
            self._apply_task({**event, "commit": commit})
        elif kind == "agent_retired":
            name, when = str(event.get("name")), str(event.get("at") or "")
            self.retired[name] = max(self.retired.get(name, ""), when)
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

    def _apply_task(self, event: dict[str, Any]) -> None:
        """The latest task an agent declared (a re-attaching ``swarmmail_init``) wins."""
        current = self.tasks.get(event["name"])
        if current is None or (event["at"], event["commit"]) > (current["at"], current["commit"]):
            self.tasks[event["name"]] = event

    def current(self, name: str, message: dict[str, Any]) -> bool:
        """Whether ``message`` (sent to or by ``name``) is the mail of the agent that
        holds the name now: one sent before the name was last retired was the retired
        agent's, never that of an agent registered afresh under the name."""
        return str(message.get("at") or "") > self.retired.get(name, "")

    def task_of(self, name: str) -> str | None:
        """``name``'s current task: the latest declared, else the one it registered with."""
        declared = self.tasks.get(name)
        if declared is not None:
            task: str | None = declared.get("task")
            return task
        registered = self.agents.get(name)
        return registered.get("task") if registered is not None else None

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


def state_of(ws: MailHost) -> MailState:
    """The mail state at the current tip of ``refs/hive/mail`` (incremental)."""
    state: MailState | None = ws.state.get(STATE_KEY)
    tip = ws.git.ref_value(MAIL_REF)
    if state is not None and state.tip == tip:
        return state
    if state is None:
        state = load_persisted(ws) or MailState(unsaved=PERSIST_AFTER)  # none: save it
    if state.tip != tip:
        applied = advance(ws, state, tip)
        if applied < 0:  # the log was rewound or replaced: replay it from scratch
            state = MailState(unsaved=PERSIST_AFTER)
            applied = advance(ws, state, tip)
        state.unsaved += applied
        if state.unsaved >= PERSIST_AFTER:
            persist(ws, state)
    ws.state[STATE_KEY] = state
    return state


def advance(ws: MailHost, state: MailState, tip: str | None) -> int:
    """Apply the commits between ``state.tip`` and ``tip``: how many there were,
    or -1 when ``tip`` does not descend from ``state.tip`` (nothing applied)."""
    if tip is None:
        return -1 if state.tip is not None else 0
    commits = ws.git.new_commits(tip, state.applied)
    if state.tip is not None and not any(state.tip in c.parents for c in commits):
        return -1
    for commit in commits:
        event = event_of(commit)
        if event is not None:
            state.apply(event, commit.sha)
        state.applied.add(commit.sha)
    state.tip = tip
    return len(commits)


def event_of(commit: CommitInfo) -> dict[str, Any] | None:
    """The event a mail-log commit carries: the JSON paragraph after its summary line
    (trailers may follow). A summary that spans paragraphs (a subject with a blank line,
    from before subjects were checked) is skipped, so its message is not lost."""
    decoder = json.JSONDecoder()
    _, _, body = commit.message.partition("\n\n")
    while body:
        try:
            event, _ = decoder.raw_decode(body.lstrip())
        except json.JSONDecodeError:
            _, _, body = body.partition("\n\n")
            continue
        return event if isinstance(event, dict) and "type" in event else None
    return None


def load_persisted(ws: MailHost) -> MailState | None:
    """The state saved in the state index (None when missing, of another version,
    or unreadable: saved state must never break a read)."""
    try:
        found = ws.state_index.mail_state()
        if found is None:
            return None
        state = state_from_json(json.loads(found[1]))
    except Exception:
        return None
    if state is None or state.tip != found[0]:
        return None
    return state


def persist(ws: MailHost, state: MailState) -> None:
    if state.tip is None:
        return
    with contextlib.suppress(Exception):  # best effort: the log in git is the truth
        ws.state_index.store_mail_state(state.tip, json.dumps(state_to_json(state)).encode())
        state.unsaved = 0


def state_to_json(state: MailState) -> dict[str, Any]:
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
        "tasks": state.tasks,
        "retired": state.retired,
    }


def state_from_json(data: dict[str, Any]) -> MailState | None:
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
        tasks=data["tasks"],
        retired=data["retired"],
    )


def append(
    ws: MailHost, build: Any, *, author: str, trailers: Sequence[tuple[str, str]] = ()
) -> tuple[Any, str | None]:
    """Append the event ``build(state)`` returns as (summary, event or None, result);
    the result and the commit now at the tip.

    Appends are serialized under the mail lock, and each event is stamped strictly
    after the latest one in the log, so events of one log keep their order by time
    even within one millisecond (merged logs order ties by message id).
    """

    def plan(tip: str | None) -> Plan:
        state = state_of(ws)
        summary, event, result = build(state)
        if event is None:
            return Plan(changes=[], message="", result=result)
        event["at"] = after(event["at"], state.latest_at)
        line = without_control(summary)  # one line, whatever the summary quotes
        text = json.dumps(event, ensure_ascii=False, sort_keys=True)
        message = f"hive-mail: {line}\n\n{text}\n"
        if trailers:
            message += "\n" + "".join(f"{key}: {value}\n" for key, value in trailers)
        return Plan(changes=[], message=message, result=result)

    written = ws.git.append_to_ref(
        MAIL_REF,
        plan,
        author=author_of(ws, author),
        lock_timeout=ws.lock_timeout(),
        lock_name="mail.lock",
    )
    state_of(ws)
    return written.result, written.commit


def after(stamp: str, latest: str) -> str:
    """``stamp``, or one millisecond after ``latest`` when ``stamp`` is not later."""
    if stamp > latest or not latest:
        return stamp
    try:
        moment = parse_time(latest)
    except ValueError:
        return stamp
    return format_time(moment + timedelta(milliseconds=1))


def author_of(ws: MailHost, name: str) -> Identity:
    """The author of a mail-log commit made as ``name``: the acting person's git
    identity when ``name`` is theirs (as their other writes), else ``name`` at
    ``hive.local`` (an agent; hive's own notices)."""
    acting = ws.principal
    if acting.kind == "person" and acting.name == name:
        return ws.identity()
    return identity_of(name)


def join_log(ws: MailHost, theirs: str, remote: str, lock_timeout: float | None = None) -> int:
    """Join the fetched log ``theirs`` into ``refs/hive/mail`` (fast-forward or a merge
    commit; no event lost, none twice); how many messages arrived. ``lock_timeout``:
    the write lock's wait (default: the host's). The full sync's and the lean one's
    (``hive/cli/lean_sync.py``), and ``hive mail sync``'s."""
    from hive.git.remote import shown_remote  # a sync's module: not at a lean start-up

    known = set(state_of(ws).messages)
    ws.git.merge_into_ref(
        MAIL_REF,
        theirs,
        message=f"hive-mail: merge {MAIL_REF} from {shown_remote(remote)}\n",
        author=author_of(ws, ws.principal.name),
        lock_timeout=ws.lock_timeout() if lock_timeout is None else lock_timeout,
        lock_name="mail.lock",
    )
    return len(set(state_of(ws).messages) - known)


def join_fetched(ws: MailHost) -> int:
    """Join into ``refs/hive/mail`` the logs of other clones that a plain ``git fetch``
    brought (``refs/hive-remotes/<remote>/mail``, with the refspecs ``hive init`` sets),
    so their messages are read as ``hive mail sync`` would have joined them; how many
    messages arrived. A fetched ref that is no mail log git can read (not a commit, a
    remote's junk) is passed over here, so one remote's bad ref does not stop reading
    and sending mail; ``hive mail sync`` with that remote reports it."""
    pending = unjoined_logs(ws, state_of(ws))
    return sum(_joined_or_none(ws, ref, tip) for ref, tip in sorted(pending.items()))


def _joined_or_none(ws: MailHost, ref: str, tip: str) -> int:
    """:func:`join_log` of one fetched log; 0 when git cannot read it as one."""
    try:
        return join_log(ws, tip, ref.split("/")[2])
    except GitError:
        return 0


def unjoined_logs(ws: MailHost, state: MailState) -> dict[str, str]:
    """The fetched mail logs (ref: tip) holding messages ``state`` has not seen: a tip
    already in the local log costs a set lookup, and no fetched log a directory look."""
    tips = ws.git.tracking_tips("mail")
    return {ref: tip for ref, tip in tips.items() if tip not in state.applied}


def identity_of(agent: str) -> Identity:
    """``agent`` at ``hive.local``, the email of its cell commits too (one slug rule:
    ``actors.slug``), so that ``git log --author`` finds both."""
    from hive.domain.actors import slug

    return Identity(name=agent, email=f"{slug(agent)}@hive.local")


def require_agent(
    state: MailState, name: str, *, person: bool = False, caller: bool = True
) -> None:
    """``name`` has a mailbox (see :func:`unregistered`)."""
    if name not in state.agents:
        raise unregistered(name, person=person, caller=caller)


def no_message(message_id: int) -> NotFound:
    """The refusal of a message id the log does not have (both paths)."""
    return NotFound(
        f"no message #{message_id}: the inbox lists the ids (hive mail inbox; swarmmail_inbox)"
    )


def unregistered(name: str, *, person: bool = False, caller: bool = True) -> HiveError:
    """The refusal of mail to or from ``name``, which nobody registered (both paths).
    ``caller``: ``name`` is who acts (sending, reading their own inbox), refused as a
    tool session that has not registered is (``not_registered``, exit 5, whatever the
    surface); another agent's inbox is ``not_found``. ``person``: the caller is a
    person, who is not told to register an agent under their own name
    (docs/security.md: do not)."""
    if person:
        return NotRegistered(
            f"you act as {name}, a person (no HIVE_AGENT_TOKEN), who has no mailbox here:"
            " mail is between agents; to use it as one, register an agent under its own name"
            " ('hive agent register NAME', not yours) and export the HIVE_AGENT_TOKEN it"
            " prints; to look into an agent's inbox:"
            " 'hive mail inbox --agent NAME --force --reason WHY'",
            agent=name,
        )
    said = f"agent {name!r} is not registered; {how_to_register(name)}"
    return NotRegistered(said, agent=name) if caller else NotFound(said, agent=name)


INBOX_CAP = 5  # the most messages an inbox shows


def inbox_events(
    state: MailState, name: str, limit: int, *, urgent_only: bool, unread_only: bool
) -> list[dict[str, Any]]:
    """``name``'s messages newest first, at most ``limit`` (1 to :data:`INBOX_CAP`)."""
    cap = max(1, min(limit, INBOX_CAP))
    found = inbox_matches(state, name, urgent_only=urgent_only, unread_only=unread_only)
    return list(itertools.islice(found, cap))


def inbox_matches(
    state: MailState, name: str, *, urgent_only: bool, unread_only: bool
) -> Iterator[dict[str, Any]]:
    """Every message of ``name``'s inbox that the filters let through, newest first."""
    for message_id in reversed(state.inbox.get(name, [])):
        event = state.messages[message_id]
        if not state.current(name, event):
            break  # sorted by send time: the rest was a retired agent's of this name
        if urgent_only and event.get("importance", "normal") != "urgent":
            continue
        if unread_only and (name, message_id) in state.read:
            continue
        yield event


def header_fields(state: MailState, event: dict[str, Any], reader: str) -> dict[str, Any]:
    """A message's header (``MessageHeader``'s fields) for ``reader``; ``sent_at`` as
    the log has it (text)."""
    key = (reader, int(event["id"]))
    return {
        "id": int(event["id"]),
        "sender": event["from"],
        "to": list(event["to"]),
        "subject": event["subject"],
        "thread_id": event.get("thread_id"),
        "importance": event.get("importance", "normal"),
        "ack_required": bool(event.get("ack_required")),
        "sent_at": event["at"],
        "read": key in state.read,
        "acked": key in state.acked,
    }


def acked_by(state: MailState, event: dict[str, Any]) -> list[str]:
    """The recipients of the message ``event`` who acknowledged it, in its ``to`` order."""
    number = int(event["id"])
    return [name for name in event["to"] if (name, number) in state.acked]


def read_mark(
    state: MailState, event: dict[str, Any], reader: str, at: str
) -> tuple[str, dict[str, Any] | None, None]:
    """What reading the message ``event`` appends for ``reader`` (``append``'s
    ``build``): a ``message_read`` mark, nothing when not a recipient or read before."""
    message_id = int(event["id"])
    if reader not in event["to"] or (reader, message_id) in state.read:
        return "", None, None
    return f"read #{message_id} by {reader}", mark_of("message_read", event, reader, at), None


def mark_of(kind: str, event: dict[str, Any], agent: str, at: str) -> dict[str, Any]:
    """The log entry of ``agent``'s ``kind`` mark (``message_read``, ``message_acked``) on
    the message ``event``, made at ``at``."""
    return {"type": kind, "id": int(event["id"]), "msg": event["commit"], "agent": agent, "at": at}


def how_to_register(name: str) -> str:
    """The next step for an agent name nobody registered yet."""
    return (
        f"register it with 'hive agent register {shell_word(name)}' (or 'hive mail init --name"
        f" {shell_word(name)}';"
        " swarmmail_init over MCP) and export the HIVE_AGENT_TOKEN it prints"
    )


COORDINATOR = "coordinator"


def message_event(
    state: MailState,
    *,
    sender: str,
    to: Sequence[str],
    subject: str,
    body: str,
    thread_id: str | None,
    thread_members: Sequence[str],
    importance: str,
    ack_required: bool,
    coordinator: str | None,
    at: str,
    sender_is_person: bool = False,
    retired: Collection[str] = (),
) -> tuple[str, dict[str, Any], list[str]]:
    """The event a message is sent as (summary, event, recipients), checked against
    ``state``: the sender and every recipient registered. ``coordinator``: who the
    name ``coordinator`` stands for; ``thread_members``: who else a thread reaches;
    ``retired``: names retired that nobody holds now (``credentials.retired_names``),
    refused as recipients (the message would wait for whoever registers the name
    next) and left out of a thread's members."""
    require_agent(state, sender, person=sender_is_person)
    recipients = list(dict.fromkeys(to))
    if coordinator is not None and coordinator in state.agents:  # the role, not a name
        recipients = list(
            dict.fromkeys(coordinator if name == COORDINATOR else name for name in recipients)
        )
    unknown = [name for name in recipients if name not in state.agents]
    if unknown:
        known = ", ".join(sorted(set(state.agents) - set(retired))) or "none"
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
    gone = [name for name in recipients if name in retired]
    if gone:
        raise NotFound(
            f"recipient(s) {', '.join(gone)} retired: nobody holds the name now, and a message"
            " to it would wait for whoever registers it next; nothing was sent ('hive agent"
            " list' shows who is live)",
            recipients=gone,
        )
    if thread_id:
        extra = set(state.threads.get(thread_id, set())) | set(thread_members)
        recipients += sorted(
            n for n in extra if n in state.agents and n not in recipients and n not in retired
        )
        recipients = [n for n in recipients if n != sender] or recipients
    if not recipients:
        raise InvalidInput(
            "no recipients: give 'to' (agent names; 'coordinator' reaches the coordinator of"
            " the epic the thread or your work is in) or a thread with participants"
        )
    event = {
        "type": "message_sent",
        "from": sender,
        "to": recipients,
        "subject": subject,
        "body": body,
        "thread_id": thread_id,
        "importance": importance,
        "ack_required": ack_required,
        "at": at,
    }
    return f"send from {sender}: {subject[:60]}", event, recipients


# ------------------------------------------------------------------ threads and epics
# Who a thread reaches and who ``coordinator`` stands for, over plain facts of the
# cells, so the full path (hive/domain/mail.py, over a CellIndex) and the lean one
# (hive/cli/lean_coord.py, over the state index's rows) decide it with the same code.


def family_root(given: str, known: Collection[str]) -> str:
    """``given``, or the one cell it is a prefix of whose descendants are all the
    other matches (``hv-ab`` names epic ``hv-abc`` even though ``hv-abc.1`` exists).
    A full id is itself (as ``resolve_id`` reads it), found without a scan. ``known``
    need only hold the ids ``given`` could name (the exact one and those it begins)."""
    from hive.store.ids import id_matches

    wanted = given.strip().lower()
    if wanted in known:
        return wanted
    matches = sorted((c for c in known if id_matches(c, wanted)), key=len)
    if len(matches) > 1 and all(m.startswith(matches[0] + ".") for m in matches[1:]):
        return matches[0]
    return given


def epic_members(
    epic_id: str,
    children_of: Callable[[str], Sequence[str]],
    worker_of: Callable[[str], str | None],
    reservations: Iterable[HeldBy],
    now: datetime,
) -> list[str]:
    """Everyone working in epic ``epic_id``: the workers (``worker_of``: the assignee
    of an open cell) of its descendants and the holders of active reservations made
    for any cell of the epic."""
    family = {epic_id}
    pending = [epic_id]
    workers: list[str] = []
    while pending:
        for child_id in children_of(pending.pop()):
            if child_id in family:
                continue  # a cycle of parents (hand-edited files)
            family.add(child_id)
            pending.append(child_id)
            worker = worker_of(child_id)
            if worker:
                workers.append(worker)
    holders = [r.agent for r in reservations if r.cell in family and r.active(now)]
    return list(dict.fromkeys(workers + holders))


def family_of(
    root: str, children_of_level: Callable[[list[str]], Iterable[tuple[str, str]]]
) -> dict[str, list[str]]:
    """The children of ``root`` and of each of its descendants, asked level by level:
    ``children_of_level(ids)`` gives (child, parent) for every cell whose parent is one
    of ``ids`` (a narrow read of the state index instead of every cell)."""
    children: dict[str, list[str]] = {}
    seen = {root}
    level = [root]
    while level:
        following = []
        for child_id, parent in children_of_level(level):
            children.setdefault(parent, []).append(child_id)
            if child_id not in seen:  # a cycle of parents (hand-edited files) ends here
                seen.add(child_id)
                following.append(child_id)
        level = following
    return children


class Unanswered(Exception):
    """The rows of the cells concerned cannot certainly answer (a cell concerned is
    unreadable or in two files, an empty thread, the state is no longer stored): the
    caller reads every cell."""


class CellRows:
    """The facts of the cells a message concerns (the thread's cell, the epic's
    descendants, the sender's assigned cells, the parents climbed), from the state
    index's rows of state ``key`` only (``StateIndex.files_of``: point lookups, however
    many other cells there are). Both paths answer with it: the lean CLI defers and the
    full path reads every cell when it raises :class:`Unanswered`."""

    def __init__(
        self, index: StateIndex, key: str, staged: dict[str, Entry | None] | None = None
    ) -> None:
        self.index = index
        self.key = key
        self.nodes: dict[str, Node | None] = {}  # None: no file of that name
        self.found: dict[str, Entry] = {}
        # cell files staged over state ``key`` (path -> its entry, None: removed): the
        # rows answer for the staged state (``autocommit`` off), as ``cache.derive`` does
        self.staged = staged or {}

    def _files(
        self, ids: Sequence[str] = (), parents: Sequence[str] = (), who: str | None = None
    ) -> list[Entry]:
        files = self.index.files_of(self.key, ids=ids, parents=parents, assignee=who)
        if files is None:
            raise Unanswered("the state was rebuilt meanwhile")
        if not self.staged:
            return files
        from hive.store.layout import cell_id_from_path

        kept = [entry for entry in files if entry.path not in self.staged]
        for path, entry in self.staged.items():
            if entry is not None and (
                cell_id_from_path(path) in ids
                or (entry.error is None and entry.parent is not None and entry.parent in parents)
                or (entry.error is None and who is not None and entry.assignee == who)
            ):
                kept.append(entry)
        return kept

    def _staged_elsewhere(self, cell_ids: Iterable[str], entries: Sequence[Entry]) -> bool:
        """Whether a staged change concerns one of ``cell_ids`` with a file of it outside
        its own path (``cache.derive`` and :func:`nodes_of` may then disagree on which
        file is the cell)."""
        from hive.store.index import is_own_path
        from hive.store.layout import cell_id_from_path

        touched = {cell_id_from_path(path) for path in self.staged} & set(cell_ids)
        paths = [entry.path for entry in entries] + list(self.staged)
        return any(
            cell_id in touched and not is_own_path(path, cell_id)
            for path in paths
            if (cell_id := cell_id_from_path(path) or "")
        )

    def _load(self, ids: Iterable[str]) -> None:
        """The facts of ``ids`` (every file named for each): one readable file a cell."""
        from hive.store.index import nodes_of
        from hive.store.layout import cell_id_from_path

        wanted = [cell_id for cell_id in dict.fromkeys(ids) if cell_id not in self.nodes]
        if not wanted:
            return
        entries = self._files(ids=wanted)
        nodes, unreadable = nodes_of(entries)
        if unreadable:
            raise Unanswered("an unreadable file for a cell concerned")
        if self.staged and self._staged_elsewhere(wanted, entries):
            raise Unanswered("a staged change to a cell with a file outside its own path")
        for entry in entries:
            cell_id = cell_id_from_path(entry.path) or ""
            if cell_id in self.found:
                raise Unanswered("two files for one cell")
            self.found[cell_id] = entry
        for cell_id in wanted:
            self.nodes[cell_id] = nodes.get(cell_id)

    def node(self, cell_id: str) -> Node | None:
        self._load([cell_id])
        return self.nodes[cell_id]

    def _ids(self, entries: list[Entry]) -> list[Node]:
        from hive.store.layout import cell_id_from_path

        found = [cell_id_from_path(entry.path) for entry in entries]
        ids = [cell_id for cell_id in found if cell_id is not None]
        self._load(ids)
        return [node for cell_id in ids if (node := self.nodes[cell_id]) is not None]

    def thread_cell(self, thread: str) -> Node | None:
        """The cell ``thread`` names, as the full path reads it over every id
        (``get_cell(index, family_root(thread, known))``): by its full id (in any case,
        spaces around), by a prefix, or as the one cell a prefix's matches all descend
        from; None where that raises (no cell is or begins with it, an ambiguous prefix,
        a deleted cell): a plain thread name. Only the files named for the ids the
        thread could name are read (by the full path and the lean one alike)."""
        from hive.store.ids import resolve_among

        wanted = thread.strip().lower()
        if not wanted:
            raise Unanswered("an empty thread")
        known = [wanted] if self.node(wanted) is not None else self._begun_by(wanted)
        try:
            cell_id = resolve_among(family_root(thread, known), known, self._deleted)
        except HiveError:
            return None
        node = self.nodes[cell_id]
        return None if node is None or node.deleted else node

    def _deleted(self, cell_id: str) -> bool:
        node = self.nodes.get(cell_id)
        return node is not None and node.deleted

    def _begun_by(self, wanted: str) -> list[str]:
        """The ids of the cells ``wanted`` begins (``id_matches``), each one's files read:
        the state's file names are compared in SQL (``StateIndex.names_like``), no other
        row is decoded."""
        from hive.store.ids import id_matches
        from hive.store.layout import cell_id_from_path

        paths = self.index.names_like(self.key, wanted)
        if paths is None:
            raise Unanswered("the state was rebuilt meanwhile")
        paths += [path for path, entry in self.staged.items() if entry is not None]
        found = (cell_id_from_path(path) for path in paths)
        ids = [cell_id for cell_id in found if cell_id and id_matches(cell_id, wanted)]
        self._load(ids)
        return [cell_id for cell_id in dict.fromkeys(ids) if self.nodes[cell_id] is not None]

    def members(self, epic_id: str, reservations: Iterable[HeldBy], now: datetime) -> list[str]:
        """:func:`epic_members` of ``epic_id``."""

        def level(parents: list[str]) -> list[tuple[str, str]]:
            return [
                (node.id, node.parent or "") for node in self._ids(self._files(parents=parents))
            ]

        children = family_of(epic_id, level)

        def worker_of(cell_id: str) -> str | None:
            node = self.nodes[cell_id]
            closed = node is None or node.status == "closed"
            return None if closed else self.found[cell_id].assignee

        return epic_members(
            epic_id, lambda cell_id: children.get(cell_id, []), worker_of, reservations, now
        )

    def open_work(self, sender: str) -> str | None:
        """:func:`first_open_work` of ``sender``."""
        mine = self._ids(self._files(who=sender))
        return first_open_work(
            sender, ((n.id, n.status, self.found[n.id].assignee, n.parent) for n in mine)
        )

    def epic_above(self, start: str | None) -> str | None:
        """:func:`epic_above` ``start``."""

        def parent_of(cell_id: str) -> str | None:
            node = self.nodes[cell_id]
            return None if node is None else node.parent or None

        return epic_above(
            start, lambda cell_id: node.type if (node := self.node(cell_id)) else None, parent_of
        )


def epic_above(
    cell_id: str | None,
    type_of: Callable[[str], str | None],
    parent_of: Callable[[str], str | None],
) -> str | None:
    """The epic ``cell_id`` is (or is under, climbing parents that exist), or None.
    ``type_of``: a cell's type, None for no such cell."""
    seen: set[str] = set()
    while cell_id is not None and type_of(cell_id) not in (None, "epic"):
        seen.add(cell_id)
        parent = parent_of(cell_id)
        if parent is None or parent in seen or type_of(parent) is None:
            break  # no parent, or a cycle of parents (hand-edited files)
        cell_id = parent
    return cell_id if cell_id is not None and type_of(cell_id) == "epic" else None


def first_open_work(
    sender: str, cells: Iterable[tuple[str, str, str | None, str | None]]
) -> str | None:
    """The cell a sender without a thread is working on: of ``cells`` (id, status,
    assignee, parent), the open one assigned to ``sender`` under a parent, one in
    progress first, then the lowest id."""
    mine = min(
        (
            (status != "in_progress", cell_id)
            for cell_id, status, assignee, parent in cells
            if assignee == sender and status != "closed" and parent
        ),
        default=None,
    )
    return mine[1] if mine else None


def coordinator_named(
    metadata: dict[str, Any], assignee: str | None, created_by: str | None
) -> str | None:
    """Who coordinates an epic: its ``metadata.coordinator``, else its assignee, else
    whoever created it."""
    named = metadata.get("coordinator")
    return str(named) if named else assignee or created_by or None
