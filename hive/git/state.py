"""The user's own git state, checked before every hive commit.

A hive commit made while git is in the middle of something can be dropped
by the way out: ``git merge --abort`` / ``git reset --hard ORIG_HEAD`` drop
commits made on top of an unresolved merge, ``git rebase --abort`` resets the
branch to where it was (and ``--continue`` buries hive's commits inside the
rebased history), ``git bisect reset`` leaves commits made on a bisect HEAD
behind, and commits on a detached HEAD are left behind by the next ``git
switch``. So hive refuses to commit in these states, with the way out:

| state (in the worktree's git dir) | way out |
|---|---|
| ``MERGE_HEAD`` (unresolved merge) | ``git commit`` to conclude it, or ``git merge --abort`` |
| ``rebase-merge/`` or ``rebase-apply/`` (rebase stop) | ``git rebase --continue`` or ``--abort`` |
| ``rebase-apply/applying`` (``git am``) | ``git am --continue`` or ``--abort`` |
| ``CHERRY_PICK_HEAD`` / ``sequencer/`` | ``git cherry-pick --continue`` or ``--abort`` |
| ``REVERT_HEAD`` | ``git revert --continue`` or ``--abort`` |
| ``BISECT_LOG`` | ``git bisect reset`` |
| detached HEAD | ``git switch -c NAME`` (keeps where you are), ``git switch BRANCH``, |
| | or ``HIVE_ALLOW_DETACHED=1`` to commit there anyway |

An unborn branch (a fresh ``git init``) is fine: hive's commit becomes the
branch's first commit and holds only hive's files (staged files stay staged).
Reading is never refused, and swarm mail (its own ref, ``refs/hive/mail``)
works in every state. Each worktree has its own state: a rebase in one
worktree does not stop agents working in another.
"""

from __future__ import annotations

import os

from hive.errors import GitStateConflict
from hive.git.refs import HeadRef, RepoPaths

ALLOW_DETACHED = "HIVE_ALLOW_DETACHED"


def _in_progress(git_dir: str) -> tuple[str, str] | None:
    """(what is going on, the way out), or None when git is idle."""

    def has(name: str) -> bool:
        return os.path.exists(os.path.join(git_dir, name))

    if has("rebase-apply/applying"):
        return "'git am' is applying patches", "'git am --continue' or 'git am --abort'"
    if has("rebase-merge") or has("rebase-apply"):
        return "a rebase is in progress", "'git rebase --continue' or 'git rebase --abort'"
    if has("MERGE_HEAD"):
        return (
            "a merge is in progress (unresolved)",
            "'git commit' to conclude it, or 'git merge --abort'",
        )
    if has("CHERRY_PICK_HEAD") or has("sequencer"):
        return (
            "a cherry-pick is in progress",
            "'git cherry-pick --continue' or 'git cherry-pick --abort'",
        )
    if has("REVERT_HEAD"):
        return "a revert is in progress", "'git revert --continue' or 'git revert --abort'"
    if has("BISECT_LOG"):
        return "a bisect is in progress", "'git bisect reset'"
    return None


def git_state_problem(paths: RepoPaths, head: HeadRef) -> str | None:
    """Why hive must not commit now (a one-line message naming the way out), or None."""
    busy = _in_progress(paths.git_dir)
    if busy is not None:
        what, way_out = busy
        return (
            f"{what}: hive does not commit now, since finishing or aborting it could drop"
            f" hive's commit; run {way_out}, then try again"
        )
    if head.ref is None and head.commit is not None and not allowed_detached():
        return (
            f"HEAD is detached (at {head.commit[:10]}): hive's commits would be left behind"
            " by the next 'git switch'; create a branch here ('git switch -c NAME') or switch"
            f" to one, or set {ALLOW_DETACHED}=1 to commit on the detached HEAD anyway"
        )
    return None


def check_git_state(paths: RepoPaths, head: HeadRef) -> None:
    """Refuse (``GitStateConflict``) when a hive commit now could be lost, or when git
    is making a commit from another index (:func:`other_index`)."""
    problem = git_state_problem(paths, head)
    if problem is not None:
        raise GitStateConflict(problem)
    other = other_index(paths)
    if other is not None:
        raise GitStateConflict(
            f"GIT_INDEX_FILE names {other}, not this worktree's index ({paths.index_path}):"
            " git is making a commit from another index (the pre-commit hook of 'git commit"
            " -a' or 'git commit <paths>', which holds the index) and hive writes only"
            " through the worktree's own; run hive after the commit (a post-commit hook),"
            " or unset GIT_INDEX_FILE"
        )


def other_index(paths: RepoPaths) -> str | None:
    """The index ``GIT_INDEX_FILE`` names (relative to the current directory, as git
    reads it) when that is not the worktree's own; None when it is, or is unset. git sets
    it for its hooks: the worktree's index, or in ``git commit -a`` / ``git commit
    <paths>`` the temporary index the commit is made from."""
    named = os.environ.get("GIT_INDEX_FILE")
    if not named:
        return None
    full = os.path.abspath(named)
    same = os.path.normcase(os.path.realpath(full))
    return None if same == os.path.normcase(os.path.realpath(paths.index_path)) else full


def allowed_detached() -> bool:
    """``HIVE_ALLOW_DETACHED`` lets hive commit on a detached HEAD."""
    value = os.environ.get(ALLOW_DETACHED, "").strip().lower()
    return value not in ("", "0", "false", "no", "off")
