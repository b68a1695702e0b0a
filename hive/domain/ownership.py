"""Ownership rules and their recorded overrides.

Only the assignee of a claimed cell (one with an assignee that is not closed)
changes its status, closes, completes, deletes it or reports progress on it;
only the holder releases a reservation; only the recipient reads and acks a
message. Everyone else is refused with ``not_owner``. A coordinator (named
under ``coordinators:`` in ``.hive/config.yaml`` and proven by its credential)
or a person (at the CLI, without a credential) may set a rule aside with an
explicit ``force`` and a reason (a coordinator must give one; a person's ``--force``
alone is recorded with "(no reason given)"); each override is written into the commit as a
``Hive-Override:`` trailer (who, role, what, whose, why) and appended to the
event log (``<git common dir>/hive/events.jsonl``, ``"event": "override"``).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Literal

from hive.domain.events import log_event
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotInitialized, NotOwner
from hive.git.repo import Snapshot
from hive.models import Cell, HiveConfig

if TYPE_CHECKING:
    from hive.models.identity import Override

OVERRIDE_TRAILER = "Hive-Override"
NO_REASON = "(no reason given)"


def coordinators(config: HiveConfig) -> list[str]:
    """The agent names ``.hive/config.yaml`` grants the coordinator role."""
    return list(config.coordinators)


def configured_coordinators(ws: Workspace, snap: Snapshot | None = None) -> list[str]:
    try:
        return coordinators(ws.config(snap))
    except NotInitialized:
        return []


def override_role(
    ws: Workspace, snap: Snapshot | None = None
) -> Literal["coordinator", "person"] | None:
    """Whether the actor may override ownership rules, and as what."""
    principal = ws.principal
    if principal.kind == "person":
        return "person"
    if principal.kind == "agent" and principal.name in configured_coordinators(ws, snap):
        return "coordinator"
    return None


def require_override_role(
    ws: Workspace, agent: str, *, action: str, snap: Snapshot | None = None
) -> None:
    """NotOwner unless the actor is a coordinator or a person (``action`` says what
    only they may do; ``agent`` is the actor as the message names it)."""
    if override_role(ws, snap) is None:
        named = ", ".join(configured_coordinators(ws, snap)) or "none configured"
        raise NotOwner(
            f"only a coordinator (.hive/config.yaml coordinators: {named}) or a person may"
            f" {action}; {agent} is neither"
        )


def is_claimed(cell: Cell) -> bool:
    return bool(cell.assignee) and not cell.is_closed


def only_comments_added(old: Cell, new: Cell) -> bool:
    """Whether ``new`` differs from ``old`` only by comments added (and its update
    time): what anyone may do to a claimed cell (``hive comment``)."""
    kept = {"comments", "updated_at"}
    return (
        old.model_dump(exclude=kept) == new.model_dump(exclude=kept)
        and new.comments[: len(old.comments)] == old.comments
    )


def claim_taken(old: Cell, new: Cell | None, agent: str) -> str | None:
    """The assignee of ``old`` when someone other than ``agent`` has it claimed and
    ``new`` (None: deleted) changes more than its comments (appended) and update time;
    else None: what a hand edit may not do to another's claimed cell (the pre-commit
    hook refuses it, ``hive doctor`` names one that got past the hook)."""
    if not is_claimed(old) or old.assignee == agent:
        return None
    if new is not None and only_comments_added(old, new):
        return None
    return old.assignee


def claim_taken_between(
    ws: Workspace, old_sha: str, new_sha: str | None, path: str, agent: str
) -> tuple[Cell, str] | None:
    """(the cell file ``old_sha`` at ``path``, its assignee) when :func:`claim_taken` finds
    the version ``new_sha`` (None: deleted) takes it from its assignee; else None, also
    when either version does not decode (the validation, or ``hive doctor``'s corrupt-file
    check, reports that). The pre-commit hook's rule and ``hive doctor``'s audit of it."""
    from hive.errors import CorruptFile
    from hive.store.cells import decode_cell

    try:
        old = decode_cell(ws.git.read_blob(old_sha), path)
        new = None if new_sha is None else decode_cell(ws.git.read_blob(new_sha), path)
    except (CorruptFile, KeyError):
        return None
    owner = claim_taken(old, new, agent)
    return None if owner is None else (old, owner)


def check_owner(
    ws: Workspace,
    *,
    owner: str | None,
    action: str,
    target: str,
    force: bool = False,
    reason: str | None = None,
    snap: Snapshot | None = None,
    what: str = "claimed by",
) -> Override | None:
    """None when the actor owns ``target`` (or nobody does); the override to record
    when a coordinator (with a reason) or a person forces it; else NotOwner."""
    actor = ws.actor
    if owner is None or owner == actor:
        return None
    if not force:
        raise NotOwner(
            f"{target} is {what} {owner}; only {owner} may {action} it (a coordinator or a"
            " person may override: a person with --force, a coordinator with force and a"
            " reason; recorded)",
            owner=owner,
            target=target,
        )
    role = override_role(ws, snap)
    if role is None:
        named = ", ".join(configured_coordinators(ws, snap)) or "none configured"
        raise NotOwner(
            f"{actor} may not override {owner}'s ownership of {target}: only coordinators"
            f" (.hive/config.yaml coordinators: {named}) and people may",
            owner=owner,
            target=target,
        )
    cleaned = " ".join((reason or "").split())
    if not cleaned and role == "coordinator":  # an agent says why it overrides
        raise InvalidInput(
            f"overriding {owner}'s ownership of {target} needs a reason (--reason / reason)"
        )
    cleaned = cleaned or NO_REASON  # a person's --force alone: recorded as forced
    from hive.models.identity import Override  # only when overriding: not every write's

    return Override(by=actor, role=role, action=action, target=target, owner=owner, reason=cleaned)


class OwnerGuard:
    """Collects the overrides one write makes (the plan may run more than once:
    each run starts a fresh guard)."""

    def __init__(
        self, ws: Workspace, snap: Snapshot | None, *, force: bool, reason: str | None
    ) -> None:
        self.ws = ws
        self.snap = snap
        self.force = force
        self.reason = reason
        self.overrides: list[Override] = []
        self.notes: list[tuple[str, str]] = []  # other rules set aside with force

    def check(
        self, *, owner: str | None, action: str, target: str, what: str = "claimed by"
    ) -> None:
        found = check_owner(
            self.ws,
            owner=owner,
            action=action,
            target=target,
            force=self.force,
            reason=self.reason,
            snap=self.snap,
            what=what,
        )
        if found is not None and found not in self.overrides:
            self.overrides.append(found)

    def check_cell(self, cell: Cell, action: str) -> None:
        """``action`` on ``cell``: its assignee's, while it is claimed."""
        self.check(owner=cell.assignee if is_claimed(cell) else None, action=action, target=cell.id)

    def trailers(self) -> list[tuple[str, str]]:
        return override_trailers(self.overrides)

    def note(self, what: str) -> None:
        """Record a rule other than ownership set aside with force (starting or closing
        past open blockers): a ``Hive-Override`` trailer naming who, what and why."""
        why = " ".join((self.reason or "").split()) or NO_REASON  # as an ownership override
        text = " ".join(f"{self.ws.actor} forced: {what}: {why}".split())[:500]
        if (OVERRIDE_TRAILER, text) not in self.notes:
            self.notes.append((OVERRIDE_TRAILER, text))


def override_trailers(overrides: Iterable[Override]) -> list[tuple[str, str]]:
    return [(OVERRIDE_TRAILER, override.trailer()) for override in overrides]


def record_overrides(
    ws: Workspace, overrides: Sequence[Override], commit: str | None, *, ref: str = "HEAD"
) -> None:
    """Append each override to the event log (best effort: the commit has it already)."""
    for override in overrides:
        log_event(
            ws.git.paths.hive_state_dir,
            {
                "ts": time.time(),
                "event": "override",
                "agent": override.by,
                "role": override.role,
                "tool": f"override:{override.action}",
                "action": override.action,
                "target": override.target,
                "owner": override.owner,
                "reason": override.reason,
                "commit": commit,
                "ref": ref,
                "session": ws.session,
                "outcome": "override",
            },
        )
