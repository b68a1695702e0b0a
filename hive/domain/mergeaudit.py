"""Claimed cells and others' reservations a merge commit changed beyond merging its
parents (``hive doctor``'s audit, :func:`hive.domain.history.claim_breaches`).

A merge commit brings each side's changes; git runs hive's merge driver on cell files
both sides changed, which merges them field by field (:func:`hive.domain.merge.
merge_file`). So a cell a merge leaves as one parent had it, or as a merge of the two
parents' versions against a version both histories had (or none), is the merge's. A
version that is neither was written into the merge by hand ("an evil merge": ``git
merge --no-commit``, an edit, ``git commit --no-verify``), and when it takes a cell
that someone other than the merge's author had claimed in a parent, it is the same
breach as in any commit; so is a version of another agent's reservation file (a
reservation released or made in its name).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hive.domain.workspace import Workspace
from hive.git.repo import CommitInfo

if TYPE_CHECKING:
    from hive.domain.syncaudit import SyncCommits


def merge_breaches(
    ws: Workspace, commit: CommitInfo, actor: str, syncs: SyncCommits | None = None
) -> list[str]:
    """What the two-parent merge ``commit`` did that no merge does: each claimed cell
    (in a parent, by someone other than ``actor``) and each reservation file of another
    holder that it left as a version neither parent had nor a merge of theirs makes.
    ``syncs``: the audit's reading of the histories (the versions a parent's history
    had of a file, answered from its one table instead of a ``git log`` each)."""
    from hive.domain.syncaudit import SyncCommits

    syncs = SyncCommits(ws) if syncs is None else syncs
    if len(commit.parents) != 2:
        return []
    git = ws.git
    tree = git.commit_tree(commit.sha)
    parents = [git.commit_tree(sha) for sha in commit.parents]
    return [
        *(
            f"{actor} changed {cell_id} (claimed by {owner}) in a merge"
            for cell_id, owner in _cells_made(syncs, commit, actor, tree, parents)
        ),
        *(
            f"{actor} changed the reservations of {holder} in a merge"
            for holder in _reservations_made(syncs, commit, actor, tree, parents)
        ),
    ]


def _cells_made(
    syncs: SyncCommits, commit: CommitInfo, actor: str, tree: str, parents: list[str]
) -> list[tuple[str, str]]:
    """(cell, its assignee) of each claimed cell the merge made a version of."""
    from hive.store.layout import CELLS_DIR

    ws = syncs.ws
    git = ws.git
    found: list[tuple[str, str]] = []
    for path in _made_here(ws, tree, parents, CELLS_DIR):
        new = git.lookup_path(tree, path)
        sides = [git.lookup_path(parent, path) for parent in parents]
        taken = next(
            (
                hit
                for old in sides
                if old is not None and (hit := syncs.files.taken(old, new, path, actor)) is not None
            ),
            None,
        )
        if taken is not None and not _merged(syncs, commit, path, new, sides):
            found.append((taken[0].id, taken[1]))
    return found


def _reservations_made(
    syncs: SyncCommits, commit: CommitInfo, actor: str, tree: str, parents: list[str]
) -> list[str]:
    """The holders other than ``actor`` whose reservation file the merge made a version
    of (a file that does not parse is reported as corrupt, not here)."""
    from hive.domain.reservecore import RESERVATIONS_DIR, reservation_path

    ws = syncs.ws
    git = ws.git
    found: list[str] = []
    for path in _made_here(ws, tree, parents, RESERVATIONS_DIR):
        if path == reservation_path(actor):
            continue
        new = git.lookup_path(tree, path)
        sides = [git.lookup_path(parent, path) for parent in parents]
        read = [syncs.files.reservation_file(sha, path) for sha in (new, *sides) if sha]
        if None in read:
            continue
        others = sorted({data.agent for data in read if data is not None} - {actor})
        if others and not _merged(syncs, commit, path, new, sides):
            found.append(others[0])
    return found


def _made_here(ws: Workspace, tree: str, parents: list[str], folder: str) -> list[str]:
    """The files under ``folder`` whose version in ``tree`` differs from every parent's
    (a folder ``tree`` has not: each file of the parents' removed)."""
    git = ws.git
    here = git.lookup_path(tree, folder, want_tree=True)
    differ: set[str] | None = None
    for parent in parents:
        there = git.lookup_path(parent, folder, want_tree=True)
        names = set() if there == here else set(git.paths_between(there, here))
        differ = names if differ is None else differ & names
    return sorted(f"{folder}/{name}" for name in differ or ())


def _merged(
    syncs: SyncCommits, commit: CommitInfo, path: str, new: str | None, sides: list[str | None]
) -> bool:
    """Whether ``new`` is what hive's field-level merge of the two parents' versions of
    ``path`` makes (either way round), against a version both parents' histories had
    (:meth:`SyncCommits.common_versions`) or none."""
    from hive.domain.mergecore import is_mergeable_path

    ours, theirs = sides
    if new is None or ours is None or theirs is None:
        return False
    first, second = commit.parents
    bases: list[str | None] = [*syncs.common_versions(first, second, path), None]
    return syncs.merges_to(
        path,
        bases,
        [(ours, theirs), (theirs, ours)],
        new,
        decoded=is_mergeable_path(path),  # from the decoded versions
        by=lambda outcome, made: outcome.content == made,
    )


def config_made(syncs: SyncCommits, commit: CommitInfo) -> bool:
    """Whether the two-parent merge ``commit`` left ``.hive/config.yaml`` as a version
    neither parent had, nor a merge of the two makes: hive's, setting by setting (as
    ``hive sync`` merges it), against a version both histories had or none, or git's
    line merge against a merge base's version (as ``git merge`` merges it: the file has
    no merge driver). Such a version was written by hand during the merge. False also
    when git cannot answer (nothing is claimed that was not checked)."""
    from hive.store.layout import CONFIG_PATH

    return len(commit.parents) == 2 and _hand_made(syncs, commit, CONFIG_PATH)


def state_made(syncs: SyncCommits, commit: CommitInfo) -> list[str]:
    """The rest of ``.hive/`` that the two-parent merge ``commit`` left as :func:
    `config_made` finds the config: each cell claimed in neither parent (a claimed one
    is :func:`merge_breaches`'), the project memory (``.hive/context.yaml``) and each
    permission decision (a grant made up in a merge), as a version neither parent had
    nor a merge of theirs makes (hive's driver, or git's line merge)."""
    from hive.domain.ownership import is_claimed
    from hive.store.layout import CELLS_DIR, CONTEXT_PATH, PERMISSIONS_DIR

    if len(commit.parents) != 2:
        return []
    git = syncs.ws.git
    tree = git.commit_tree(commit.sha)
    parents = [git.commit_tree(sha) for sha in commit.parents]
    cells = [
        path
        for path in _made_here(syncs.ws, tree, parents, CELLS_DIR)
        if not any(
            (cell := syncs.files.cell(sha, path)) is not None and is_claimed(cell)
            for sha in (git.lookup_path(parent, path) for parent in parents)
            if sha is not None
        )
    ]
    granted = _made_here(syncs.ws, tree, parents, PERMISSIONS_DIR)
    paths = [*cells, CONTEXT_PATH, *granted]
    return [path for path in paths if _hand_made(syncs, commit, path)]


def _hand_made(syncs: SyncCommits, commit: CommitInfo, path: str) -> bool:
    """Whether the merge ``commit`` left ``path`` as a version neither parent had, nor
    hive's merge of theirs, nor git's line merge (then written by hand)."""
    git = syncs.ws.git
    new = git.lookup_path(git.commit_tree(commit.sha), path)
    ours, theirs = (git.lookup_path(git.commit_tree(sha), path) for sha in commit.parents)
    if new in (ours, theirs):
        return False
    if new is None or ours is None or theirs is None:
        return True  # (deleted in the merge, or one side's deletion undone by an edit)
    return not _merged(syncs, commit, path, new, [ours, theirs]) and not _line_merged(
        syncs.ws, commit, path, (ours, theirs, new)
    )


def _line_merged(ws: Workspace, commit: CommitInfo, path: str, sides: tuple[str, str, str]) -> bool:
    """Whether ``new`` is git's line merge of ``ours`` and ``theirs`` (``sides``) against
    the version of one of the parents' merge bases (none there: an empty one), or git
    cannot answer. (A criss-cross history, which ``git merge`` merges against a virtual
    base it builds from the merge bases, is compared with each base's version.)"""
    from hive.git.pathhistory import merge_bases
    from hive.git.textmerge import line_merge

    git = ws.git
    ours, theirs, new = sides
    found = merge_bases(git.root, *commit.parents)
    if found is None:
        return True
    made = git.read_blob(new)
    bases: list[str | None] = [*found] or [None]
    for base in bases:
        blob = None if base is None else git.lookup_path(git.commit_tree(base), path)
        merged = line_merge(
            git.root, git.read_blob(blob) if blob else None, *map(git.read_blob, (ours, theirs))
        )
        if merged is None or merged == made:
            return True
    return False
