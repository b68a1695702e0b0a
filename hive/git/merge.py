"""Three-way merges and linked worktrees, without the ``git`` binary (dulwich only).

A merge here never touches a working tree: :func:`merge_commits` computes the
merged tree in the object store and reports conflicting paths; the caller
commits the result through the normal transaction (which updates only the
changed files of the working tree and index), or does nothing at all when
there is a conflict. So a conflict can never leave a half-merged tree.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from hive.errors import GitError, InvalidInput
from hive.git.repo import Change, GitRepo, _ref
from hive.git.sha import object_id

if TYPE_CHECKING:
    from dulwich.objects import Commit

REGULAR_MODES = (0o100644, 0o100755)


@dataclass
class MergeResult:
    """The tree of ``ours`` merged with ``theirs`` (None when it conflicts)."""

    ours: str
    theirs: str
    base: str | None
    tree: str | None
    conflicts: list[str] = field(default_factory=list)
    changes: list[Change] = field(default_factory=list)  # ours -> merged, to commit
    up_to_date: bool = False  # theirs is already part of ours


Resolver = Callable[[str, bytes | None, bytes | None, bytes | None], bytes | None]


def merge_commits(
    repo: GitRepo, ours: str, theirs: str, *, resolve: Resolver | None = None
) -> MergeResult:
    """Merge commit ``theirs`` into ``ours``: the merged tree and the file changes that
    turn ``ours``'s tree into it, or the conflicting paths. Nothing is written but
    objects.

    ``resolve(path, base, ours, theirs)`` (each the file's content, None where that
    side lacks it) may settle a path the text merge could not: the content to use,
    or None to leave it a conflict. ``tree`` is then the text merge's, and only
    ``changes`` carry the resolved contents.
    """
    from dulwich.merge import three_way_merge

    base = _merge_base(repo, ours, theirs)
    if base == theirs:
        return MergeResult(ours, theirs, theirs, repo.commit_tree(ours), up_to_date=True)
    store = repo.dulwich.object_store
    try:
        tree, conflicts = three_way_merge(
            store, _commit(repo, base) if base else None, _commit(repo, ours), _commit(repo, theirs)
        )
    except ImportError as exc:  # merge3 missing: an installation problem, said plainly
        raise GitError(f"cannot merge: {exc}") from None
    names = sorted(path.decode("utf-8", errors="replace") for path in conflicts)
    resolved: dict[str, bytes] = {}
    if names and resolve is not None:
        sides = [repo.commit_tree(c) if c else None for c in (base, ours, theirs)]
        for name in names:
            content = resolve(name, *(_file_at(repo, side, name) for side in sides))
            if content is not None:
                resolved[name] = content
        names = [name for name in names if name not in resolved]
    if names:
        return MergeResult(ours, theirs, base, None, conflicts=names)
    merged = repo.store_object(tree)
    ours_tree = repo.commit_tree(ours)
    unmergeable, changes = _changes(repo, ours_tree, merged)
    if unmergeable:
        return MergeResult(ours, theirs, base, None, conflicts=unmergeable)
    if resolved:
        changes = [change for change in changes if change.path not in resolved]
        changes += [
            Change(path, content)
            for path, content in sorted(resolved.items())
            if content != _file_at(repo, ours_tree, path)
        ]
    return MergeResult(ours, theirs, base, merged, changes=changes)


def _file_at(repo: GitRepo, tree: str | None, path: str) -> bytes | None:
    """The content of ``path`` in ``tree`` (None when either is missing)."""
    sha = repo.lookup_path(tree, path) if tree is not None else None
    return repo.read_blob(sha) if sha is not None else None


def branch_changes(repo: GitRepo, ours: str, theirs: str) -> list[str]:
    """The paths commit ``theirs`` changed since its merge base with ``ours``: what
    merging it would bring in (empty when ``theirs`` is already part of ``ours``)."""
    base = _merge_base(repo, ours, theirs)
    if base == theirs:
        return []
    base_tree = repo.commit_tree(base) if base else None
    return sorted(repo.paths_between(base_tree, repo.commit_tree(theirs)))


def _merge_base(repo: GitRepo, ours: str, theirs: str) -> str | None:
    """dulwich's merge base of two commits (the first it names; None: unrelated): one
    walk, which also says whether ``theirs`` is part of ``ours`` (then it is the base),
    where a walk of ``ours``'s history asked that first (all of it when it is not)."""
    from dulwich.graph import find_merge_base

    bases = find_merge_base(repo.dulwich, [object_id(ours), object_id(theirs)])
    return bases[0].decode() if bases else None


def _commit(repo: GitRepo, sha: str) -> Commit:
    found: Any = repo.dulwich.object_store[object_id(sha)]
    return cast("Commit", found)


def _changes(repo: GitRepo, old_tree: str, new_tree: str) -> tuple[list[str], list[Change]]:
    """(paths hive cannot write into a working tree, changes from old to new)."""
    from dulwich.diff_tree import tree_changes

    store = repo.dulwich.object_store
    refused: list[str] = []
    changes: list[Change] = []
    for item in tree_changes(store, object_id(old_tree), object_id(new_tree)):
        old, new = item.old, item.new
        if new is not None and new.path is not None and new.sha is not None:
            path = new.path.decode("utf-8", errors="replace")
            if new.mode not in REGULAR_MODES:
                refused.append(f"{path} (a symlink or submodule: merge it with git)")
                continue
            if old is not None and old.path is not None and old.path != new.path:
                changes.append(Change(old.path.decode("utf-8", errors="replace"), None))
            content = repo.read_blob(new.sha.decode())
            changes.append(Change(path, content, mode=new.mode))
        elif old is not None and old.path is not None:
            changes.append(Change(old.path.decode("utf-8", errors="replace"), None))
    return refused, changes


# ------------------------------------------------------------------ worktrees


def add_worktree(repo: GitRepo, path: str, *, branch: str, commit: str) -> None:
    """A linked worktree at ``path`` on a new branch ``branch`` starting at ``commit``."""
    from dulwich.worktree import add_worktree as dulwich_add

    ref = f"refs/heads/{branch}"
    if repo.ref_value(ref) is not None:
        raise InvalidInput(f"branch {branch} already exists")
    repo.dulwich.refs[_ref(ref)] = object_id(commit)
    try:
        with _main_repository(repo, head=commit) as main:
            dulwich_add(main, path, branch=branch.encode())
    except (ValueError, OSError) as exc:
        delete_branch(repo, branch)
        raise GitError(f"cannot create a worktree at {path}: {exc}") from None


@contextlib.contextmanager
def _main_repository(repo: GitRepo, head: str | None = None) -> Iterator[Any]:
    """The repository whose git directory holds every worktree's administrative files
    (the common directory: handed a linked worktree, dulwich would put a new worktree's
    files under that one's own ``.git/worktrees/NAME``, and fail). ``head``: the commit
    dulwich takes for its HEAD, which it first checks a new worktree out at before
    switching to the worktree's branch, leaving behind every file of that HEAD the
    branch lacks (as untracked files) when it is another commit (a run started in a
    linked worktree, or beside a bare repository)."""
    from hive.git.dulwichrepo import open_repo

    with open_repo(repo.paths.common_dir) as opened:
        main: Any = opened
        if head is not None:
            main.head = lambda: object_id(head)
        yield main


def worktree_changes(path: str) -> list[str]:
    """Paths in the worktree at ``path`` that its HEAD commit does not have: staged,
    changed, deleted or new files (those git ignores are not counted); empty when
    ``path`` is gone. GitError when the state cannot be read."""
    from dulwich import porcelain

    if not os.path.isdir(path):
        return []
    try:
        status = porcelain.status(path, untracked_files="all")
    except Exception as exc:  # any failure: the caller keeps the worktree
        raise GitError(f"cannot read the state of worktree {path}: {exc}") from None
    found: set[bytes | str] = set(status.unstaged) | set(status.untracked)
    for paths in status.staged.values():
        found.update(paths)
    return sorted(p.decode("utf-8", errors="replace") if isinstance(p, bytes) else p for p in found)


def ignored_files(path: str) -> list[str]:
    """What git ignores in the worktree at ``path`` (``git status --ignored``'s ``!!``
    entries: a wholly ignored directory as ``dir/``, not its files); empty when
    ``path`` is gone. GitError when it cannot be read."""
    from dulwich import porcelain

    if not os.path.isdir(path):
        return []
    try:
        every = porcelain.status(path, ignored=True, untracked_files="all").untracked
        plain = porcelain.status(path, untracked_files="all").untracked
    except Exception as exc:  # any failure: the caller keeps the worktree
        raise GitError(f"cannot read the ignored files of worktree {path}: {exc}") from None
    found = set(every) - set(plain)
    return sorted(p.decode("utf-8", errors="replace") if isinstance(p, bytes) else p for p in found)


def unique_work(repo: GitRepo, head: str, worktree: str, tip: str | None) -> list[str]:
    """The paths whose content only the worktree at ``worktree`` (on a branch at
    ``tip``) holds, compared with commit ``head``: files its branch changed that
    ``head`` has otherwise (unless the branch is part of ``head``), and files changed
    in the worktree without being committed whose content ``head`` does not have (a
    draft the user committed on the current branch since is not unique). What
    removing the worktree and its branch would lose; GitError when its state cannot
    be read."""
    from hive.git.worktree import blob_sha_of

    head_tree = repo.commit_tree(head)
    found: set[str] = set()
    if tip is not None:  # (none when the branch is part of head)
        tip_tree = repo.commit_tree(tip)
        found.update(
            path
            for path in branch_changes(repo, head, tip)
            if repo.lookup_path(tip_tree, path) != repo.lookup_path(head_tree, path)
        )
    for path in worktree_changes(worktree):
        try:
            with open(os.path.join(worktree, path), "rb") as handle:
                current: str | None = blob_sha_of(handle.read())
        except FileNotFoundError:
            current = None
        except OSError:  # unreadable: taken to be unique
            found.add(path)
            continue
        if current != repo.lookup_path(head_tree, path):
            found.add(path)
    return sorted(found)


def remove_worktree(repo: GitRepo, path: str) -> None:
    """Remove the linked worktree at ``path`` (its uncommitted changes too)."""
    from dulwich.worktree import remove_worktree as dulwich_remove

    try:
        with _main_repository(repo) as main:
            dulwich_remove(main, path, force=True)
    except (ValueError, OSError):
        shutil.rmtree(path, ignore_errors=True)
        _forget_worktree(repo, path)


def _forget_worktree(repo: GitRepo, path: str) -> None:
    """Drop the administrative files of a worktree whose directory is gone."""
    admin = os.path.join(repo.paths.common_dir, "worktrees")
    if not os.path.isdir(admin):
        return
    wanted = os.path.realpath(path)
    for name in os.listdir(admin):
        gitdir_file = os.path.join(admin, name, "gitdir")
        try:
            with open(gitdir_file, encoding="utf-8") as handle:
                target = os.path.dirname(handle.read().strip())
        except OSError:
            continue
        if os.path.realpath(target) == wanted:
            shutil.rmtree(os.path.join(admin, name), ignore_errors=True)


def delete_branch(repo: GitRepo, branch: str) -> None:
    """Delete ``refs/heads/<branch>`` if it exists."""
    refs: Any = repo.dulwich.refs
    ref = _ref(f"refs/heads/{branch}")
    if ref in refs:
        refs.remove_if_equals(ref, None)
