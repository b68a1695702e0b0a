"""Whether the yield marks a sync commit wrote in a reservation file name a grant the
sync had (``hive doctor``'s audit, beside :mod:`hive.domain.syncaudit`).

A ``hive sync`` settles reservations that overlap across clones by marking the later
grant yielded to the earlier one (:mod:`hive.domain.contest`), in the commit that
merges the remote state. The grants it compares are the branch's and the remote
state's: a sync brings grants, it never makes one. A hand commit shaped as a sync
could otherwise add a backdated grant of its own author's and mark another agent's
reservation yielded to it: that takes the reservation while every mark is one a
settlement among the commit's files would make. So each mark the commit made (one
neither the branch's nor the state's version of the file had) must name a grant of
the commit that the branch or the state held as it is (its number aside, which a
merge may have changed).
"""

from __future__ import annotations

from typing import Any

from hive.domain.auditfiles import AuditFiles
from hive.git.repo import CommitInfo
from hive.models.reservation import Override, Reservation, ReservationFile

_RENUMBERED = {"id", "renumbered_from", "yielded_to"}  # what a merge or a settling changes


def yields_made_up(
    files: AuditFiles, commit: CommitInfo, state: str, path: str, new: str | None
) -> bool:
    """Whether the reservation file ``path`` as ``commit`` left it (blob ``new``) marks
    an entry yielded to a grant that neither ``commit``'s parent nor ``state`` held."""
    from hive.domain.reservecore import RESERVATIONS_DIR

    if new is None or not path.startswith(RESERVATIONS_DIR + "/"):
        return False
    git = files.ws.git
    sides = [git.commit_tree(sha) for sha in (commit.parents[0], state)]
    made = _marks_made(
        _file(files, git.commit_tree(commit.sha), path), [_file(files, t, path) for t in sides]
    )
    if not made:
        return False
    known = [_grant(item) for tree in sides for item in _grants(files, tree)]
    now = _grants(files, git.commit_tree(commit.sha))
    for mark in made:
        winner = next(
            (g for g in now if g.agent == mark.holder and g.id == mark.reservation_id), None
        )
        if winner is None or _grant(winner) not in known:
            return True
    return False


def _marks_made(
    after: ReservationFile | None, before: list[ReservationFile | None]
) -> list[Override]:
    """The yield marks of ``after`` that no version in ``before`` had on the same grant."""
    if after is None:
        return []
    had = {
        (_key(item), item.yielded_to.model_dump_json())
        for data in before
        if data is not None
        for item in data.reservations
        if item.yielded_to is not None
    }
    return [
        item.yielded_to
        for item in after.reservations
        if item.yielded_to is not None
        and (_key(item), item.yielded_to.model_dump_json()) not in had
    ]


def _key(item: Reservation) -> str:
    return item.model_dump_json(exclude=_RENUMBERED)


def _grant(item: Reservation) -> dict[str, Any]:
    return item.model_dump(exclude=_RENUMBERED)


def _file(files: AuditFiles, tree: str, path: str) -> ReservationFile | None:
    """The reservation file at ``path`` in ``tree``, decoded (once over the audit)."""
    sha = files.ws.git.lookup_path(tree, path)
    return None if sha is None else files.reservation_file(sha, path)


def _grants(files: AuditFiles, tree: str) -> list[Reservation]:
    """Every entry of the readable reservation files of ``tree``."""
    from hive.domain.reservecore import RESERVATIONS_DIR

    found = files.ws.git.lookup_path(tree, RESERVATIONS_DIR, want_tree=True)
    listing = {} if found is None else files.ws.git.tree_listing(found, "")
    read = (_file(files, tree, f"{RESERVATIONS_DIR}/{name}") for name in listing)
    return [item for data in read if data is not None for item in data.reservations]
