"""Agent identities bound to credentials.

Registering a name (``swarmmail_init``, ``hive agent register``, ``hive mcp
--agent X``) issues a random credential; the repository keeps only its SHA-256
under the git directory (``<git common dir>/hive/identities.json``, never
committed). A process proves it is the agent by presenting the credential:
an MCP server or envelope session holds it in memory, a CLI process or script
sets ``HIVE_AGENT_TOKEN``. Re-registering a name with its credential takes it
back (a restarted server is the same agent); without it the name is refused
(``name_taken``) saying who holds it. Coordinators and people retire stale
identities.

Runners (``hive swarm run``) call :func:`issue_credential` for each worker and
pass ``HIVE_AGENT=<name>`` and ``HIVE_AGENT_TOKEN=<token>`` in its environment.
"""

from __future__ import annotations

import contextlib
import copy
import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from hive.domain import mail
from hive.domain.commits import MixedPlan
from hive.domain.events import log_event
from hive.domain.ownership import (
    configured_coordinators,
    override_role,
    override_trailers,
)
from hive.domain.reservations import retired_release
from hive.domain.workspace import Workspace, check_actor
from hive.errors import HiveError, InvalidInput, NameTaken, NotFound, NotOwner, NotYourIdentity
from hive.models import utc_now
from hive.models.identity import (
    Credential,
    IdentityInfo,
    Override,
    Registration,
    RetireResult,
    WhoAmI,
)
from hive.store import credentials
from hive.store.cells import format_time
from hive.text import shell_word
from hive.times import parse_time

if TYPE_CHECKING:
    from hive.git.repo import Snapshot
    from hive.models.reservation import Reservation
    from hive.store.cache import CellIndex


def register_agent(
    ws: Workspace,
    *,
    name: str | None = None,
    task: str | None = None,
    token: str | None = None,
    session: str | None = None,
    replace: bool = False,
    from_tool: bool = False,
    successor_of: str | None = None,
) -> Registration:
    """Register ``name`` (generated when None) and issue its credential.

    - a free name: registered, a new credential is returned (``token``, shown once);
    - a registered name with its credential (``token``): taken back (``reattached``);
    - a registered name without it: ``name_taken`` naming who holds it, unless
      ``replace`` (coordinators and people only), which issues a new credential and
      invalidates the old one (recorded as an override); unless the old one is held
      by a session starting with ``successor_of`` (a runner's earlier worker for the
      same task, gone since): then the new holder succeeds it, which overrides nobody
      else's claim and is recorded as a ``credential_reissued`` event instead.

    A name configured as a coordinator is registered only by a person or another
    coordinator (the role is granted, never taken): an agent's tool call
    (``from_tool``) or CLI credential asking for it is refused (``not_owner``).
    """
    wanted = check_actor(name) if name else None
    owner = session or ws.session
    state_dir = ws.git.paths.hive_state_dir
    with credentials.locked(state_dir, ws.lock_timeout()):
        store = copy.deepcopy(credentials.load(state_dir))
        agents: dict[str, dict[str, Any]] = store["agents"]
        wanted = _name_to_register(ws, wanted, token, agents)
        entry = agents.get(wanted)
        if entry is not None and token:
            return _reattach(ws, store, wanted, entry, token, owner=owner, task=task)
        override, reissued = _clear_name(
            ws, store, wanted, entry, replace=replace, successor_of=successor_of, owner=owner
        )
        _refuse_coordinator_name(ws, wanted, from_tool=from_tool)
        issued = credentials.new_token()
        entry = _new_credential_entry(ws, issued, owner=owner, task=task)
        agents[wanted] = entry
        credentials.save(state_dir, store)
    mail.append_registration(ws, name=wanted, session=owner, task=task)
    if override is not None:
        mail.record_override_event(ws, override)
    if reissued is not None:
        log_event(state_dir, reissued)
    return _registration(ws, wanted, entry, token=issued, reattached=False)


def _name_to_register(
    ws: Workspace, wanted: str | None, token: str | None, agents: dict[str, dict[str, Any]]
) -> str:
    """``wanted``; without one, the name ``token`` is the credential of, else a new
    generated name."""
    if wanted is None and token:  # no name, a credential: take that identity back
        wanted = verify_token(ws, token)
    if wanted is None:
        wanted = mail.generated_name(set(agents) | mail.registered_names(ws))
    return wanted


def _reattach(
    ws: Workspace,
    store: dict[str, Any],
    name: str,
    entry: dict[str, Any],
    token: str,
    *,
    owner: str,
    task: str | None,
) -> Registration:
    """Take registered ``name`` back with its credential ``token`` (held by ``owner``
    from now on, its task updated when given); no new credential."""
    if not credentials.matches(entry, token):
        raise NotYourIdentity(f"the credential given is not {name}'s", agent=name)
    entry["session"] = owner
    if task is not None:
        entry["task"] = task
    credentials.save(ws.git.paths.hive_state_dir, store)
    if task is not None:
        mail.declare_task(ws, name=name, task=task)
    return _registration(ws, name, entry, token=None, reattached=True)


def _clear_name(
    ws: Workspace,
    store: dict[str, Any],
    name: str,
    entry: dict[str, Any] | None,
    *,
    replace: bool,
    successor_of: str | None,
    owner: str,
) -> tuple[Override | None, dict[str, Any] | None]:
    """Make ``name`` free for a new credential: a free name's missing retirement
    logged first; a taken one refused unless ``replace``. Returns the override to
    record and the reissue event to log (a runner's successor: no override)."""
    if entry is None:  # a name retired here whose mail event is missing: log it first
        _refuse_ambiguous(ws, name)
        pending = _unlogged_retirement(ws, store, name)
        if pending is not None:
            _log_retirement(ws, pending)
        return None, None
    if not replace:
        raise _taken(name, entry)
    override = _replacing(ws, name)
    held_by = str(entry.get("session") or "")
    if successor_of and held_by.startswith(successor_of):
        return None, _reissue_event(ws, override, held_by, owner)
    return override, None


def _refuse_coordinator_name(ws: Workspace, name: str, *, from_tool: bool) -> None:
    """A coordinator's credential is issued by a person or another coordinator only."""
    if name in configured_coordinators(ws) and (from_tool or _role(ws) is None):
        raise NotOwner(
            f"{name} is a coordinator (.hive/config.yaml); its credential is issued"
            f" by a person or another coordinator: 'hive agent register {shell_word(name)}'",
            agent=name,
        )


def _new_credential_entry(
    ws: Workspace, issued: str, *, owner: str, task: str | None
) -> dict[str, Any]:
    """The stored record of credential ``issued`` (its hash only), held by ``owner``."""
    return {
        "token_sha256": credentials.hash_token(issued),
        "session": owner,
        "registered_at": format_time(utc_now()),
        "registered_by": _issuer(ws),
        "task": task,
    }


def mail_init(
    ws: Workspace,
    *,
    agent_name: str | None = None,
    task_description: str | None = None,
    session: str | None = None,
    token: str | None = None,
    from_tool: bool = False,
) -> Registration:
    """Register an agent (``swarmmail_init``): see :func:`register_agent`.

    A free name is registered and issued a credential; a registered name is
    taken back only with its credential (``token``); without it the name is
    refused (``name_taken``), saying who holds it. Without a name an
    adjective+noun name is generated.
    """
    return register_agent(
        ws,
        name=agent_name,
        task=task_description,
        session=session,
        token=token,
        from_tool=from_tool,
    )


def issue_credential(
    ws: Workspace,
    *,
    name: str,
    task: str | None = None,
    replace: bool = False,
    session: str | None = None,
    successor_of: str | None = None,
) -> Credential:
    """A credential for agent ``name``, for a runner to hand to the process it starts.

    The runner sets ``HIVE_AGENT`` and ``HIVE_AGENT_TOKEN`` (``Credential.env``) in
    the agent's environment; ``hive mcp`` and every ``hive`` command the agent runs
    then act as ``name``, and the pre-commit hook knows its commits. ``replace``
    re-issues the credential of a registered name (coordinators and people);
    ``session`` is recorded as the session holding it (the caller's by default);
    ``successor_of``: see :func:`register_agent` (a re-issue for the runner's own worker
    is not an override).
    """
    registered = register_agent(
        ws, name=name, task=task, replace=replace, session=session, successor_of=successor_of
    )
    if registered.token is None:  # pragma: no cover - register_agent always issues here
        raise NameTaken(f"{name} is already registered")
    return Credential(
        name=registered.name,
        token=registered.token,
        env={"HIVE_AGENT": registered.name, "HIVE_AGENT_TOKEN": registered.token},
    )


def holding_session(ws: Workspace, name: str) -> str | None:
    """The session that holds live identity ``name``'s credential (the one that
    registered it or last took it back), None when ``name`` is not a live identity
    here (never registered, or retired)."""
    entry = credentials.load(ws.git.paths.hive_state_dir)["agents"].get(name)
    return str(entry.get("session") or "") if isinstance(entry, dict) else None


def verify_token(ws: Workspace, token: str) -> str:
    """The agent ``token`` is the credential of; NotYourIdentity otherwise."""
    found = credentials.name_of_token(ws.git.paths.hive_state_dir, token)
    if found is None:
        raise NotYourIdentity(
            "the credential given (HIVE_AGENT_TOKEN) is not that of any agent registered in"
            " this repository (it was re-issued or retired, or is another clone's): unset"
            " HIVE_AGENT_TOKEN to register anew (swarmmail_init, --agent NAME), or use the"
            " current one ('hive agent list' names the live identities)"
        )
    return found


def retire_agent(ws: Workspace, *, name: str, reason: str | None = None) -> RetireResult:
    """Retire ``name``'s credential so the name can be registered afresh.

    The agent itself may retire its own identity; anyone else must be a
    coordinator or a person and give a reason (recorded in the event log).

    All or nothing, in this order, under the identity lock: the credential store and
    the mail log are read and the new store is written beside the old one (a damaged
    store or log, a directory hive cannot write to: refused, nothing changed); one
    commit releases the agent's reservations and reopens the cells it had claimed
    (refused: nothing changed, the new store is dropped); the new store is put in
    place (one rename); then the ``agent_retired`` event goes into the mail log. If
    only that last append fails, the identity is retired and retiring it again
    appends the event (so does registering the name afresh). If the rename fails
    after the commit, the error says what the commit did and that the identity is
    still live; retiring it again (nothing left to release: no commit) finishes it.
    """
    target = check_actor(name)
    actor = ws.actor
    override = None if actor == target else _retiring(ws, target, reason)
    state_dir = ws.git.paths.hive_state_dir
    with credentials.locked(state_dir, ws.lock_timeout()):
        store = copy.deepcopy(credentials.load(state_dir))
        entry = store["agents"].pop(target, None)
        if entry is None:
            pending = _unlogged_retirement(ws, store, target)
            if pending is None:
                raise NotFound(f"no live identity {target!r} in this repository", agent=target)
            return _log_retirement(ws, pending)
        mail.registered_names(ws)  # a mail log that cannot be read fails now, not half way
        now = utc_now()
        entry.update(
            name=target,
            retired_at=format_time(now),
            retired_by=actor,
            retire_reason=reason or "retired by itself",
            retire_role=override.role if override is not None else None,
        )
        store["retired"].append(entry)
        with credentials.staged(state_dir, store) as publish:
            # What the retired agent held goes with it: a name registered afresh starts clean.
            released, reopened = _let_go(ws, target, override)
            publish(_committed_before_retired(target, reason, released, reopened))
        retired = _log_retirement(ws, entry)
    return retired.model_copy(
        update={
            "reason": reason or "",
            "released": [f"#{item.id} {item.path_pattern}" for item in released],
            "reopened": reopened,
        }
    )


def _committed_before_retired(
    target: str, reason: str | None, released: list[Reservation], reopened: list[str]
) -> str:
    """What the credential store's error says was done when it cannot be put in place
    after the commit of :func:`_let_go` (nothing, when that commit was not needed)."""
    if not released and not reopened:
        return credentials.NOTHING_CHANGED
    done = []
    if released:
        done.append("released " + ", ".join(f"#{item.id} {item.path_pattern}" for item in released))
    if reopened:
        done.append("reopened " + ", ".join(reopened))
    again = f"hive agent retire {shell_word(target)}"
    if reason:
        again += f" --reason {shell_word(reason)}"
    return (
        f"the commit that let go of what {target} held was made ({'; '.join(done)}),"
        f" but {target} is not retired: its credential still works. Once the file can be"
        f" written, run '{again}' again to finish"
    )


def _let_go(
    ws: Workspace, target: str, override: Override | None
) -> tuple[list[Reservation], list[str]]:
    """Release ``target``'s reservations and reopen the cells it had claimed (open,
    unassigned, a note), in one commit carrying ``override`` when someone else retires
    it; no commit when it holds nothing. Its reservations and cells, as released."""
    from hive.domain.cells import reopened_claims

    def plan(snap: Snapshot, index: CellIndex) -> MixedPlan:
        files, released, trailers = retired_release(ws, snap, target)
        note = f"open again: its agent {target} was retired by {ws.actor}"
        cells = reopened_claims(index, target, note)
        if not files and not cells:
            return MixedPlan(cells=[], subject_id=target, title="", result=([], []))
        return MixedPlan(
            cells=cells,
            subject_id=target,
            title="(retired: reservations released, claims reopened)",
            result=(released, [cell.id for cell in cells]),
            files=files,
            trailers=[*override_trailers([override] if override else []), *trailers],
            subject_is_cell=False,
        )

    result: tuple[list[Reservation], list[str]] = ws.write_mixed(plan, event="retire").result
    return result


def _unlogged_retirement(ws: Workspace, store: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The latest retirement of ``name`` in ``store`` when the mail log has no
    ``agent_retired`` event for it yet (its append failed), else None."""
    entries = [e for e in store["retired"] if e.get("name") == name and e.get("retired_at")]
    if not entries:
        return None
    latest = max(entries, key=lambda e: str(e["retired_at"]))
    return None if mail.retired_at(ws, name) >= str(latest["retired_at"]) else latest


def _log_retirement(ws: Workspace, entry: dict[str, Any]) -> RetireResult:
    """Append the retirement ``entry`` records (and the override, when someone else
    retired the agent) to the mail log; a failure says how to finish it."""
    name, by = str(entry["name"]), str(entry["retired_by"])
    reason = str(entry.get("retire_reason") or "")
    role = entry.get("retire_role")
    try:
        mail.append_retirement(ws, name=name, by=by, at=str(entry["retired_at"]))
        if by != name and role in ("coordinator", "person"):
            override = Override(
                by=by, role=role, action="retire", target=name, owner=name, reason=reason
            )
            mail.record_override_event(ws, override)
    except HiveError as exc:
        exc.message = (
            f"{name} is retired (credential, reservations, claims), but the mail log could"
            f" not record it: {exc.message}; run 'hive agent retire {shell_word(name)}'"
            " again to finish"
        )
        exc.args = (exc.message,)
        raise
    return RetireResult(
        name=name,
        retired_by=by,
        reason=reason if by != name else "",
        retired_at=_time(entry["retired_at"]),
    )


def list_identities(ws: Workspace) -> list[IdentityInfo]:
    """Live identities of this clone, retired ones, and names only the mail log knows."""
    store = credentials.load(ws.git.paths.hive_state_dir)
    leads = set(configured_coordinators(ws))
    found = [
        _info(name, entry, credential=True, coordinator=name in leads)
        for name, entry in sorted(store["agents"].items())
    ]
    found += [
        _info(str(entry.get("name")), entry, credential=False, coordinator=False)
        for entry in store["retired"]
    ]
    listed = set(store["agents"]) | {str(entry.get("name")) for entry in store["retired"]}
    for agent in mail.list_agents(ws):
        if agent.name not in listed:
            found.append(
                IdentityInfo(
                    name=agent.name,
                    credential=False,
                    registered_at=agent.registered_at,
                    session=agent.session,
                    task=agent.task_description,
                    coordinator=agent.name in leads,
                )
            )
    return found


def known_names(ws: Workspace) -> set[str]:
    """Every name ever registered here (live, retired) or in the mail log."""
    store = credentials.load(ws.git.paths.hive_state_dir)
    names = set(store["agents"]) | {str(e.get("name")) for e in store["retired"]}
    with contextlib.suppress(HiveError):  # an unreadable mail log must not hide the rest
        names |= mail.registered_names(ws)
    return names


def whoami(ws: Workspace) -> WhoAmI:
    principal = ws.principal
    leads = configured_coordinators(ws)
    registered = principal.name in credentials.load(ws.git.paths.hive_state_dir)["agents"]
    return WhoAmI(
        name=principal.name,
        kind=principal.kind,
        coordinator=principal.kind == "agent" and principal.name in leads,
        registered=registered,
        may_override=override_role(ws) is not None,
    )


# ------------------------------------------------------------------ helpers


# Names an agent may not be registered under, and why.
RESERVED_NAMES = {
    mail.NOTICE_SENDER: "hive's own notices come from 'hive' (an agent of that name could"
    " pass its messages off as them)",
}


def _refuse_ambiguous(ws: Workspace, name: str) -> None:
    """InvalidInput for a new name that would be mistaken for something else: a
    reserved sender, a command-line option, a cell id of this repository (agent
    names and cell ids stand side by side: assignees, commit subjects and trailers,
    mail threads, ``hive show``/``log``/``review`` arguments). Names registered
    before keep working."""
    from hive.store.ids import is_valid_id

    lowered = name.lower()
    why = RESERVED_NAMES.get(lowered)
    if why is None and name.startswith("-"):
        why = "a name starting with '-' reads as an option on the command line"
    if why is None and is_valid_id(lowered):
        prefix, known = "hv", False
        with contextlib.suppress(HiveError):  # an unreadable hive: the default prefix
            prefix = ws.config().prefix
            known = lowered in ws.cells().known_ids()
        if lowered.startswith(prefix + "-") or known:
            why = (
                f"it looks like a cell id of this repository ({prefix}-...), and agent names"
                " and cell ids stand side by side (assignees, commit messages, mail threads)"
            )
    if why is None:
        why = _reads_as_another(ws, name)
    if why is not None:
        raise InvalidInput(
            f"{name!r} cannot be registered as an agent's name: {why}; choose another name",
            agent=name,
        )


# Letters of other scripts that fonts draw as Latin ones (Unicode's confusables, UTS #39,
# for Cyrillic and Greek), and the Latin letters and digits read alike: each mapped to
# one of its look-alikes, so that names are compared as they read.
_LOOKALIKES = str.maketrans(
    {
        **dict(zip("АВЕКМНОРСТХУЅІЈԚԜҮ", "ABEKMHOPCTXYSlJQWY", strict=True)),
        **dict(zip("аеорсухѕіјһԁӏԛԝү", "aeopcyxsijhdlqwy", strict=True)),
        **dict(zip("ΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "ABEZHlKMNOPTYX", strict=True)),
        **dict(zip("ορνιυ", "opviu", strict=True)),
        **dict(zip("I10", "llO", strict=True)),
    }
)


def _read_as(name: str) -> str:
    """``name`` as a reader sees it: compatibility forms folded (a fullwidth or
    mathematical letter is its letter, NFKC) and look-alike letters made one."""
    import unicodedata

    return unicodedata.normalize("NFKC", name).translate(_LOOKALIKES)


def _reads_as_another(ws: Workspace, name: str) -> str | None:
    """Why ``name`` would be mistaken for another agent's: written in decomposed form
    (the same text as its composed one, NFC, which another may hold), or read the same
    as a name registered here or in the mail log (``Аlice`` with a Cyrillic A, ``AIice``
    with a capital i, ``Ａlice`` in full width: mail, assignees and commits from it
    would pass for Alice's); None when it is distinct."""
    import unicodedata

    composed = unicodedata.normalize("NFC", name)
    if composed != name:
        return f"it is written in decomposed form; write it composed ({composed!r})"
    seen = _read_as(name)
    with contextlib.suppress(HiveError):  # an unreadable store: the other checks say so
        for other in sorted(known_names(ws)):
            if other != name and _read_as(other) == seen:
                return f"it reads as {other!r}, a name already registered here"
    return None


def _taken(name: str, entry: dict[str, Any]) -> NameTaken:
    since = entry.get("registered_at") or "?"
    by = f", issued by {entry['registered_by']}" if entry.get("registered_by") else ""
    return NameTaken(
        f"{name} is registered (session {entry.get('session') or '?'}, since {since}{by});"
        f" prove it is you with its credential (HIVE_AGENT_TOKEN), choose another name, or"
        f" have a coordinator or person retire it ('hive agent retire {shell_word(name)}')",
        agent=name,
        holder=entry.get("session"),
    )


def _role(ws: Workspace) -> str | None:
    """The issuer's override role (a credential naming nobody grants none)."""
    try:
        return override_role(ws)
    except NotYourIdentity:
        return None


def _issuer(ws: Workspace) -> str | None:
    try:
        principal = ws.principal
    except NotYourIdentity:
        return None
    return f"{principal.name} ({principal.kind})"


def _replacing(ws: Workspace, name: str) -> Override:
    role = override_role(ws)
    if role is None:
        raise NotOwner(
            f"only a coordinator or a person may re-issue {name}'s credential", agent=name
        )
    return Override(
        by=ws.actor,
        role=role,
        action="re-issue the credential of",
        target=name,
        owner=name,
        reason="credential replaced",
    )


def _reissue_event(ws: Workspace, checked: Override, held_by: str, session: str) -> dict[str, Any]:
    """The event-log record of a credential re-issued to the successor of the session
    that held it (``hive events``: tool ``credential_reissued``), not an override."""
    return {
        "ts": time.time(),
        "event": "credential_reissued",
        "agent": checked.by,
        "role": checked.role,
        "tool": "credential_reissued",
        "target": checked.target,
        "args": {"agent": checked.target, "replaced_session": held_by, "session": session},
        "session": ws.session,
        "outcome": "ok",
    }


def _retiring(ws: Workspace, name: str, reason: str | None) -> Override:
    role = override_role(ws)
    if role is None:
        raise NotOwner(
            f"{ws.actor} may not retire {name}: only the agent itself, a coordinator or a"
            " person may",
            agent=name,
        )
    cleaned = " ".join((reason or "").split())
    if not cleaned:
        raise InvalidInput(f"retiring {name} needs a reason (--reason)")
    return Override(
        by=ws.actor, role=role, action="retire", target=name, owner=name, reason=cleaned
    )


def _registration(
    ws: Workspace, name: str, entry: dict[str, Any], *, token: str | None, reattached: bool
) -> Registration:
    return Registration(
        name=name,
        project_key=ws.root,
        task_description=entry.get("task"),
        registered_at=_time(entry.get("registered_at")),
        session=str(entry.get("session") or ""),
        token=token,
        reattached=reattached,
    )


def _info(name: str, entry: dict[str, Any], *, credential: bool, coordinator: bool) -> IdentityInfo:
    return IdentityInfo(
        name=name,
        credential=credential,
        registered_at=_time(entry.get("registered_at")),
        session=entry.get("session"),
        registered_by=entry.get("registered_by"),
        task=entry.get("task"),
        coordinator=coordinator,
        retired_at=_time(entry["retired_at"]) if entry.get("retired_at") else None,
        retired_by=entry.get("retired_by"),
    )


def _time(stamp: Any) -> datetime:
    if isinstance(stamp, str):
        try:
            return parse_time(stamp)
        except ValueError:
            pass
    return utc_now()
