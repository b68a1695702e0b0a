"""The pre-commit check: reservations are enforced on ``git commit``, .hive/ is validated.

Staged paths (both sides of a rename, since a rename stages a deletion and
an addition) that fall under another agent's active exclusive reservation (on
this branch as staged and as HEAD holds it, or on the branch of any other worktree
of the repository) block the commit. The committing agent is identified by its credential
(``HIVE_AGENT_TOKEN``); without one the committer is a person (``HIVE_AGENT``
alone proves nothing), who is blocked the same way. An agent is also blocked
from committing files its ``tools.permissions`` rules deny it (as the
pseudo-tool ``git_commit``), unless its ``agents:`` entry sets
``bypass_permissions``, and from changing or deleting a cell another agent has
claimed (the ownership rule, for a hand edit). ``HIVE_BYPASS=1`` (or ``git commit
--no-verify``) skips the check. Staged ``.hive/`` files that do not validate block the commit too,
and so does a symlink staged at or under ``.hive`` (hive never writes through one).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime

from pydantic import Field

from hive.domain.memory import CONTEXT_PATH, decode_context
from hive.domain.outcomes import OUTCOMES_DIR, decode_outcome, outcome_path
from hive.domain.ownership import claim_taken_between, configured_coordinators
from hive.domain.path_rules import (
    COMMIT_TOOL,
    PathPermissionDenied,
    Permissions,
    check_paths,
    permissions_from_config,
)
from hive.domain.permissions import PERMISSIONS_DIR, decide, decode_decision, policy
from hive.domain.reservations import (
    active_reservations,
    decode_file,
    files_held_by_others,
    held_message,
    load_reservations,
    misfiled,
)
from hive.domain.reservecore import RESERVATIONS_DIR, folds_case
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile, HiveError, InvalidInput
from hive.git.index import read_entries
from hive.git.refs import HeadRef
from hive.git.repo import REGULAR_MODE, Snapshot, staged_mode
from hive.models import utc_now
from hive.models.base import HiveModel
from hive.models.reservation import Reservation
from hive.record import suppress
from hive.store import credentials
from hive.store.cells import decode_cell, decode_config
from hive.store.layout import CELLS_DIR, CONFIG_PATH, HIVE_DIR, cell_id_from_path, cell_path

SYMLINK_MODE = 0o120000
GITLINK_MODE = 0o160000
NOBODY = "nobody"  # committer kind: HIVE_AGENT_TOKEN set, but nobody's credential
RECOVERY_WAIT = 10.0  # seconds the hook waits for a live hive writer before settling its intent


class Violation(HiveModel):
    path: str
    kind: str
    message: str
    holder: str | None = None
    cell: str | None = None


class PrecommitReport(HiveModel):
    committer: str | None
    committer_kind: str = "person"  # agent (proven by credential), person or nobody
    note: str | None = None  # e.g. HIVE_AGENT set without a credential
    staged: list[str] = Field(default_factory=list)
    violations: list[Violation] = Field(default_factory=list)
    bypassed: bool = False
    recovered: list[str] = Field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.violations


def index_path(ws: Workspace) -> str:
    """The index being committed: ``GIT_INDEX_FILE`` when git set one.

    ``git commit -a`` and ``git commit <path>`` run the hook on a temporary
    index named by ``GIT_INDEX_FILE`` (relative to the hook's working
    directory); only a plain ``git commit`` uses ``.git/index``.
    """
    override = os.environ.get("GIT_INDEX_FILE")
    return os.path.abspath(override) if override else ws.git.paths.index_path


@dataclass
class StagedState:
    """What the commit being made contains: the changed paths and .hive/ as staged."""

    paths: list[str]
    snapshot: Snapshot
    head: Snapshot  # HEAD as the staged paths were read against it
    symlinks: list[str] = field(default_factory=list)  # staged at or under .hive
    submodules: frozenset[str] = frozenset()  # staged gitlinks: each stands for its files
    _incoming: list[Snapshot] | None = field(default=None, repr=False)

    def incoming(self, ws: Workspace) -> list[Snapshot]:
        """The commits a merge or cherry-pick being concluded brings in (read once)."""
        if self._incoming is None:
            self._incoming = _incoming_heads(ws)
        return self._incoming


def staged_state(ws: Workspace) -> StagedState:
    """Paths whose index entry differs from HEAD (its blob, or its mode alone: an
    executable bit set on a reserved file changes it as git commits it), and HEAD
    overlaid with staged .hive/ files."""
    head = ws.git.snapshot()
    head_files = head.listing("") if head.tree else {}
    head_modes = ws.git.unusual_modes(head.tree) if head.tree else {}
    entries = read_entries(index_path(ws))
    staged: set[str] = set()
    submodules: set[str] = set()
    for path, entry in entries.items():
        if entry.stage == 0 and entry.mode == GITLINK_MODE:  # not in a listing of blobs
            if head.tree is None or ws.git.lookup_path(head.tree, path) != entry.sha.decode():
                staged.add(path)
                submodules.add(path)
        elif (
            entry.stage != 0
            or head_files.get(path) != entry.sha.decode()
            or staged_mode(entry.mode) != head_modes.get(path, REGULAR_MODE)
        ):
            staged.add(path)
    staged.update(path for path in head_files if path not in entries)
    overlay: dict[str, str | None] = {}
    symlinks: list[str] = []
    for path in staged:
        if path == HIVE_DIR or path.startswith(HIVE_DIR + "/"):
            staged_entry = entries.get(path)
            if staged_entry is not None and staged_entry.mode & 0o170000 == SYMLINK_MODE:
                symlinks.append(path)
            elif path != HIVE_DIR:
                overlay[path] = staged_entry.sha.decode() if staged_entry is not None else None
    snapshot = Snapshot(repo=ws.git, head=head.head, tree=head.tree, overlay=overlay)
    return StagedState(
        paths=sorted(staged),
        snapshot=snapshot,
        head=head,
        symlinks=sorted(symlinks),
        submodules=frozenset(submodules),
    )


def check_staged(ws: Workspace, *, committer: str | None = None) -> PrecommitReport:
    """What would block the commit being made right now. ``committer``: trusted
    in-process callers name the committing agent; otherwise it is the agent whose
    credential is in ``HIVE_AGENT_TOKEN``, else the person of the git identity."""
    agent, kind, note = _committer(ws, committer)
    # First settle a hive write a killed process left: its files go into this commit's
    # index, so the commit can never revert it (even with HIVE_BYPASS).
    recovered = ws.git.recover(commit_index=index_path(ws), wait=RECOVERY_WAIT)
    if os.environ.get("HIVE_BYPASS") == "1":
        return PrecommitReport(
            committer=agent, committer_kind=kind, bypassed=True, recovered=recovered
        )
    state = staged_state(ws)
    report = PrecommitReport(
        committer=agent, committer_kind=kind, note=note, staged=state.paths, recovered=recovered
    )
    snap = state.snapshot
    has_hive = snap.blob_sha(CONFIG_PATH) is not None or bool(snap.listing(RESERVATIONS_DIR))
    if (
        not has_hive
        and not state.symlinks
        and not any(p.startswith(HIVE_DIR + "/") for p in state.paths)
    ):
        return report  # no hive here: nothing to enforce
    if kind == NOBODY:  # refused as every command refuses it (actors.unknown_credential)
        report.violations.append(_nobody_violation(agent))
        return report
    report.violations += _reservation_violations(ws, state, agent, kind)
    if kind == "agent":
        report.violations += _denied_violations(ws, state, agent)
        report.violations += _claimed_cell_violations(ws, state, agent)
        report.violations += _grant_violations(ws, state, agent)
        report.violations += _reservation_file_violations(ws, state, agent)
        report.violations += _outcome_violations(ws, state, agent)
    report.violations += _hive_file_violations(ws, state)
    report.violations += [_symlink_violation(path) for path in state.symlinks]
    return report


def _committer(ws: Workspace, committer: str | None) -> tuple[str, str, str | None]:
    """(name, agent|person|nobody, a note) of whoever is committing (nobody: a token that
    is no registered agent's credential, named with the person of the git identity)."""
    if committer is not None:
        return committer, "agent", None
    token = os.environ.get("HIVE_AGENT_TOKEN") or None
    claimed = os.environ.get("HIVE_AGENT") or None
    person = ws.git.config_value("user", "name")
    person_name = person if person is not None else "you"
    if token:
        name = credentials.name_of_token(ws.git.paths.hive_state_dir, token)
        if name is not None:
            other = claimed is not None and claimed != name
            note = (
                f"HIVE_AGENT={claimed} is not the agent of HIVE_AGENT_TOKEN: committing as {name}"
                if other
                else None
            )
            return name, "agent", note
        return person_name, NOBODY, None
    note = None
    if claimed and claimed != person_name:
        note = (
            f"HIVE_AGENT={claimed} proves nothing without HIVE_AGENT_TOKEN: committing as"
            f" the person {person_name}"
        )
    return person_name, "person", note


def _nobody_violation(person: str) -> Violation:
    """The commit of a ``HIVE_AGENT_TOKEN`` that is nobody's credential (its agent retired,
    the credential re-issued): neither that agent's (it acts no more) nor the person's
    (whose rules are looser than an agent's), so it is refused."""
    return Violation(
        path="",
        kind="not-your-identity",
        message=(
            "HIVE_AGENT_TOKEN is not the credential of any agent registered in this"
            f" repository (retired or replaced?): unset it to commit as yourself ({person}),"
            " or register the agent again ('hive agent register NAME' prints its new"
            " credential)"
        ),
    )


def _reservation_violations(
    ws: Workspace, state: StagedState, agent: str, kind: str
) -> list[Violation]:
    """Staged paths under another agent's exclusive reservation (as staged here, and
    on every other worktree's branch), and reservation files that cannot be trusted
    (they would hide reservations)."""
    now = utc_now()
    held = files_held_by_others(
        ws,
        state.snapshot,
        agent,
        state.paths,
        now,
        submodules=state.submodules,
        also=_committed_holds(ws, state, now),
    )
    found = [
        Violation(path=problem.path, kind="untrusted-reservations", message=problem.message)
        for problem in held.problems
        if problem.path not in state.paths  # staged ones are reported by the validation
    ]
    return found + [_reserved_violation(path, item, agent, kind) for path, item in held.blocked]


def _committed_holds(ws: Workspace, state: StagedState, now: datetime) -> list[Reservation]:
    """The active reservations HEAD holds that still count for this commit, whatever it
    stages in ``.hive/reservations/``: a commit that deletes another agent's reservation
    file (or makes its entry shared or expired) along with the files it reserves would
    otherwise release it by hand and pass (only the holder releases a reservation,
    ``hive release``, in a commit of its own). While a merge or cherry-pick is being
    concluded, a reservation released on the side coming in (``MERGE_HEAD``,
    ``CHERRY_PICK_HEAD``) no longer counts: that release was the holder's commit.
    Nothing when the commit stages nothing there: the staged reservations, which count
    anyway, are then HEAD's (each would be checked twice)."""
    if state.head.tree is None or not any(_in_reservations(path) for path in state.paths):
        return []
    held = active_reservations(load_reservations(ws, state.head).files, now)
    for incoming in state.incoming(ws):
        kept = {
            (item.agent, item.id)
            for item in active_reservations(load_reservations(ws, incoming).files, now)
        }
        held = [item for item in held if (item.agent, item.id) in kept]
    return held


def _in_reservations(path: str) -> bool:
    """Whether ``path`` is ``.hive/reservations`` or below it."""
    return path == RESERVATIONS_DIR or path.startswith(RESERVATIONS_DIR + "/")


def _incoming_heads(ws: Workspace) -> list[Snapshot]:
    """The commits a merge or cherry-pick being concluded brings in (none when idle):
    ``MERGE_HEAD`` / ``CHERRY_PICK_HEAD`` when ``git commit`` concludes one, and the
    ``GITHEAD_<id>`` variables ``git merge`` sets for each head it merges (its
    pre-merge-commit hook runs before ``MERGE_HEAD`` is written)."""
    shas: list[str] = []
    for name in ("MERGE_HEAD", "CHERRY_PICK_HEAD"):
        try:
            with open(os.path.join(ws.git.paths.git_dir, name), encoding="ascii") as handle:
                shas += handle.read().split()
        except (OSError, ValueError):
            continue
    shas += [name[len(_GITHEAD) :] for name in os.environ if name.startswith(_GITHEAD)]
    found: list[Snapshot] = []
    for sha in dict.fromkeys(shas):
        with suppress(HiveError, KeyError, ValueError):
            found.append(ws.git.snapshot_at(HeadRef(None, sha)))
    return found


_GITHEAD = "GITHEAD_"  # git merge's GITHEAD_<commit id>=<name> of each head it merges


def _agent_changes(
    ws: Workspace, state: StagedState, agent: str, prefixes: tuple[str, ...]
) -> tuple[Snapshot, list[tuple[str, str | None]]]:
    """HEAD and (path, staged blob or None) of each staged path starting with one of
    ``prefixes`` that a non-coordinator ``agent`` changes itself: none for a
    coordinator (who may override), none a merge or cherry-pick being concluded brings
    in as its other side has it."""
    head = state.head
    touched = [path for path in state.paths if path.startswith(prefixes)]
    if not touched or agent in configured_coordinators(ws, head):
        return head, []
    incoming = state.incoming(ws)
    changed = []
    for path in touched:
        new_sha = state.snapshot.blob_sha(path)
        if not any(other.blob_sha(path) == new_sha for other in incoming):
            changed.append((path, new_sha))
    return head, changed


def _claimed_cell_violations(ws: Workspace, state: StagedState, agent: str) -> list[Violation]:
    """Staged cell files that change, or delete, a cell another agent has claimed at
    HEAD (assigned, not closed): the ownership rule the domain applies to every write
    (``hive/domain/ownership.py``), applied to an agent's hand edit committed with git.
    Comments added are anyone's (``hive comment``); a coordinator may override (a hand
    edit records no reason: ``hive doctor`` names it); a merge or cherry-pick being
    concluded may bring in the version its other side has."""
    head, changed = _agent_changes(ws, state, agent, (CELLS_DIR + "/",))
    found = []
    for path, new_sha in changed:
        old_sha = head.blob_sha(path)
        if old_sha is None or new_sha == old_sha:
            continue
        taken = claim_taken_between(ws, old_sha, new_sha, path, agent)
        if taken is not None:
            owner = taken[1]
            cell = cell_id_from_path(path) or path
            found.append(
                Violation(
                    path=path,
                    kind="not-owner",
                    holder=owner,
                    cell=cell,
                    message=f"{path}: {cell} is claimed by {owner}; only {owner} may change"
                    f" or delete it, not {agent} (anyone may add a comment: 'hive comment';"
                    " a coordinator or a person overrides with --force and a reason, recorded)",
                )
            )
    return found


def _reservation_file_violations(ws: Workspace, state: StagedState, agent: str) -> list[Violation]:
    """Staged changes to another agent's reservation file (a reservation made, changed
    or released in its name by hand): only the holder reserves and releases
    (``hive reserve``, ``hive release``); a coordinator may override. A merge or
    cherry-pick being concluded may bring in the other side's version."""
    head, changed = _agent_changes(ws, state, agent, (RESERVATIONS_DIR + "/",))
    found = []
    for path, new_sha in changed:
        holders = {_holder(ws, head.blob_sha(path), path), _holder(ws, new_sha, path)}
        strangers = sorted(name for name in holders - {None, agent} if name)
        if strangers:
            message = (
                f"{path} holds {strangers[0]}'s reservations: only {strangers[0]} reserves"
                f" or releases there, not {agent} (ask {strangers[0]} to release; a"
                " coordinator or a person overrides with 'hive release --agent NAME --force')"
            )
            found.append(
                Violation(path=path, kind="not-owner", holder=strangers[0], message=message)
            )
    return found


def _outcome_violations(ws: Workspace, state: StagedState, agent: str) -> list[Violation]:
    """Staged outcomes an agent may not record by hand: another agent's (what
    ``swarm_record_outcome`` refuses: ``agent_name`` must be the caller), or one already
    recorded, changed or removed (outcomes are the evidence later plans learn from).
    A coordinator may; a merge or cherry-pick being concluded may bring them in."""
    head, changed = _agent_changes(ws, state, agent, (OUTCOMES_DIR + "/",))
    found = []
    for path, new_sha in changed:
        if head.blob_sha(path) is not None:
            why = "an outcome stands as it was recorded"
        elif new_sha is None:
            continue
        else:
            try:
                recorded = decode_outcome(ws.git.read_blob(new_sha), path).agent
            except (CorruptFile, KeyError):
                continue  # the validation names it
            if recorded == agent:
                continue
            why = f"an outcome of {recorded}'s work"
        message = f"{path}: {why}, committed by {agent} (a coordinator or a person may)"
        found.append(Violation(path=path, kind="not-owner", message=message))
    return found


def _holder(ws: Workspace, sha: str | None, path: str) -> str | None:
    """The agent of the reservation file at ``sha`` (None: no file, or one the
    validation reports)."""
    if sha is None:
        return None
    try:
        return decode_file(ws.git.read_blob(sha), path).agent
    except (CorruptFile, KeyError):
        return None


def _grant_violations(ws: Workspace, state: StagedState, agent: str) -> list[Violation]:
    """What an agent's commit may not grant itself (roles are grants: a person or a
    coordinator gives them): a change to ``.hive/config.yaml`` (who coordinates, the
    agents' tools, path rules, rate limits, permission policy), and a permission
    decision other than the one ``request_permission`` would commit for it now (another
    agent's, a decision changed or removed, a grant the policy does not give, or for
    longer). A coordinator at HEAD may; a merge or cherry-pick being concluded may bring
    in its other side's versions."""
    head, changed = _agent_changes(ws, state, agent, (CONFIG_PATH, PERMISSIONS_DIR + "/"))
    found = []
    for path, new_sha in changed:
        if path != CONFIG_PATH and not path.startswith(PERMISSIONS_DIR + "/"):
            continue  # a name that only starts like the config's
        why = _ungranted(ws, head, path, new_sha, agent)
        if why is not None:
            found.append(Violation(path=path, kind="not-granted", message=f"{path}: {why}"))
    return found


def _ungranted(
    ws: Workspace, head: Snapshot, path: str, new_sha: str | None, agent: str
) -> str | None:
    """Why ``agent`` may not commit ``path`` as ``new_sha`` (None: deleted), or None."""
    who = "a person or a coordinator changes it, not an agent"
    if path == CONFIG_PATH:
        if new_sha is not None and _mends_config(ws, head, new_sha):
            return None
        return f"it grants roles and sets the agents' policy: {who} ({agent})"
    if head.blob_sha(path) is not None:
        return f"a permission decision stands as it was made: {who} ({agent})"
    if new_sha is None:
        return None
    try:
        made = decode_decision(ws.git.read_blob(new_sha), path)
    except CorruptFile:
        return None  # the validation names it
    if made.agent != agent:
        return f"a permission decision for {made.agent}, committed by {agent}"
    if not made.granted:
        return None
    try:
        granted, _, _, ttl = decide(
            policy(ws, head), agent, made.resource_type, made.scope, made.justification
        )
    except HiveError:
        granted, ttl = False, None
    longer = ttl is not None and (
        made.expires_at is None or (made.expires_at - made.decided_at).total_seconds() > ttl
    )
    if not granted or longer:
        return (
            f"grants {made.resource_type} to {agent}, which the committed permission_policy"
            " does not (ask with request_permission: hive decides and commits it)"
        )
    return None


def _mends_config(ws: Workspace, head: Snapshot, new_sha: str) -> bool:
    """Whether committing the config as ``new_sha`` mends one whose ``tools:`` rules
    cannot be read at HEAD (which fails every agent closed) without touching who
    coordinates, the ``agents:`` section or the permission policy."""
    from hive.store.yamlio import load_mapping

    try:
        permissions_from_config(ws.config(head).extra_settings().get("tools"))
        return False  # nothing to mend
    except HiveError:
        pass
    try:
        old = load_mapping(ws.git.read_blob(str(head.blob_sha(CONFIG_PATH))).decode(), CONFIG_PATH)
        new = load_mapping(ws.git.read_blob(new_sha).decode(), CONFIG_PATH)
    except (HiveError, KeyError, UnicodeDecodeError):
        return False
    granting = ("coordinators", "agents", "permission_policy")
    return all(old.get(key) == new.get(key) for key in granting)


def _denied_violations(ws: Workspace, state: StagedState, agent: str) -> list[Violation]:
    """Staged files the committing agent's ``tools.permissions`` rules deny it."""
    try:
        config = ws.config(state.snapshot)
        rules = permissions_from_config(config.extra_settings().get("tools"))
    except HiveError as exc:
        return _unchecked(ws, state, agent, exc)
    _remember_rules(ws, state.snapshot, rules)
    fold = folds_case(ws.git.paths)  # SECRETS/x is secrets/x there, as for reservations
    found = []
    for path in state.paths:
        if path.startswith(HIVE_DIR + "/"):
            continue
        try:
            check_paths(rules, agent, COMMIT_TOOL, [path], fold_case=fold)
        except PathPermissionDenied as exc:
            found.append(Violation(path=path, kind="denied", message=exc.message))
    return [] if found and _bypasses_rules(ws, state, agent) else found


def _remember_rules(ws: Workspace, snap: Snapshot, rules: Permissions) -> None:
    """Keep the rules parsed from this config file version in the state index, where
    the quick check of the next commits reads them without the models (a store that
    cannot be written keeps nothing: the full check runs again)."""
    from hive.jsontext import dumps_compact
    from hive.store.sqlerrors import sqlite3

    sha = snap.blob_sha(CONFIG_PATH)
    if sha is None:
        return
    with suppress(sqlite3.Error, OSError):
        ws.state_index.store_path_rules(sha, dumps_compact(rules).encode())


def _bypasses_rules(ws: Workspace, state: StagedState, agent: str) -> bool:
    """The agent's ``agents:`` entry sets ``bypass_permissions`` (it skips the path
    rules, as its tool calls do); an ``agents:`` section that cannot be read bypasses
    nothing."""
    from hive.domain.config_sections import agent_profile

    try:
        return bool(agent_profile(ws, agent, state.snapshot).bypass_permissions)
    except HiveError:
        return False


def _unchecked(ws: Workspace, state: StagedState, agent: str, exc: HiveError) -> list[Violation]:
    """The agent's rules cannot be read (a broken config): its commit of files is refused,
    as its tool calls are (never fail open); a commit of hive's files alone may mend it."""
    from hive.domain.config_sections import with_line

    if not any(not path.startswith(HIVE_DIR + "/") for path in state.paths):
        return []
    if isinstance(exc, InvalidInput):
        exc = with_line(ws, exc, state.snapshot)
    message = (
        f"cannot check {agent}'s tools.permissions rules, so its commit is refused:"
        f" {exc.message} (mend {CONFIG_PATH}; hive doctor)"
    )
    return [Violation(path=CONFIG_PATH, kind="denied", message=message)]


def _reserved_violation(path: str, item: Reservation, agent: str, kind: str) -> Violation:
    who = agent if kind == "agent" else f"{agent} (a person: agents prove who they are with"
    who += "" if kind == "agent" else " HIVE_AGENT_TOKEN)"
    return Violation(
        path=path,
        kind="reserved",
        holder=item.agent,
        cell=item.cell,
        message=f"{held_message(path, item)}; {who} may not commit it",
    )


def _symlink_violation(path: str) -> Violation:
    return Violation(
        path=path,
        kind="symlink",
        message=f"{path} is a symlink: hive never writes through a symlink for its own files,"
        " so .hive/ may hold none (commit a real file or directory)",
    )


def _hive_file_violations(ws: Workspace, state: StagedState) -> list[Violation]:
    found = []
    for path, sha in state.snapshot.overlay.items():
        if sha is None:
            continue
        try:
            _validate_hive_file(path, ws.git.read_blob(sha))
        except CorruptFile as exc:
            found.append(Violation(path=path, kind="invalid-hive-file", message=exc.message))
    return sorted(found, key=lambda v: v.path)


def _validate_hive_file(path: str, content: bytes) -> None:
    if path == CONFIG_PATH:
        decode_config(content, path)
        return
    if path.startswith(RESERVATIONS_DIR + "/"):
        problem = misfiled(path, decode_file(content, path))
        if problem is not None:
            raise CorruptFile(problem, path=path)
        return
    if path.startswith(OUTCOMES_DIR + "/"):
        outcome = decode_outcome(content, path)
        if outcome_path(outcome.id) != path:
            raise CorruptFile(
                f"{path}: contains outcome {outcome.id!r}, expected it at "
                f"{outcome_path(outcome.id)}",
                path=path,
            )
        return
    if path.startswith(PERMISSIONS_DIR + "/"):
        decode_decision(content, path)
        return
    if path == CONTEXT_PATH:
        decode_context(content, path)
        return
    if not path.startswith(CELLS_DIR + "/"):
        return
    cell_id = cell_id_from_path(path)
    if cell_id is None:
        raise CorruptFile(f"{path}: not a cell file (only <id>.yaml belongs in {CELLS_DIR}/)")
    cell = decode_cell(content, path)
    if cell.id != cell_id or cell_path(cell.id) != path:
        raise CorruptFile(f"{path}: contains id {cell.id!r}, expected it at {cell_path(cell.id)}")
