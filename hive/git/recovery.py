"""Finishing or undoing a hive write that was killed part-way (no dulwich on the way).

A commit moves the branch ref first and updates git's index second. A process
killed between the two would leave the index behind HEAD, and the user's next
``git commit`` would silently revert hive's write. So every write
(``GitRepo.transact``) follows this protocol, all of it under hive's write lock
(``<common dir>/hive/write.lock``, an OS lock the kernel releases when the
process dies):

1. write ``<git dir>/hive-index.lock`` (the *twin*: the writer's owner tag)
   and hard-link it to ``index.lock``: git's index lock is never there without
   a twin that says hive took it;
2. write the objects (temporary name, then rename; ``hive/git/loose.py``);
3. write the *intent* ``<git dir>/hive-intent``: the ref, its old and new
   commit, and each path with its old and new blob id (one small file write);
4. compare-and-swap the ref: **the commit point**;
5. write the working-tree files, then rename the new index into place;
6. remove the intent, then the twin.

HEAD and the index belong to a worktree, so the twin and the intent live in
its git dir; objects, refs and the write lock are shared by all worktrees.

:func:`recover` runs when a repository is opened (``GitRepo``) and in the
pre-commit hook. With no twin it costs one ``lstat``. With one, it takes the
write lock without waiting (a live writer owns the twin: nothing to do) and,
holding it, :func:`recover_locked`:

* removes ``index.lock`` when it is the twin's (a lock any other process holds
  is never the same file as the twin, so it is never touched);
* removes temporary files of dead writers (``objects/xx/tmp_obj_hive-*``,
  ``<file>.hive-tmp-<pid>``, ref-lock twins, index copies);
* resolves the intent: the ref holds the new commit -> the write happened,
  so the working tree and the index are brought up to it (files the user
  changed since are left alone; the index entry follows HEAD); the ref still
  holds the old commit -> the write never happened, files it had already
  written are put back; the ref holds anything else -> later commits
  superseded it, nothing is touched (when they undid the write, the message
  names its paths and how to bring it back). An unreadable intent was cut short while
  being written, before the ref could move: it is discarded. Staging-mode
  writes (no ref) are always finished.

Each recovery yields one line for the user (surfaces print it on stderr).
"""

from __future__ import annotations

import os
import time

from hive.errors import GitError, HiveError, LockTimeout
from hive.git import killpoints
from hive.git.flock import try_lock
from hive.git.index import (
    IndexEntry,
    IndexLock,
    IndexUpdate,
    lock_owned_by_twin,
    lookup_entries,
)
from hive.git.loose import TMP_PREFIX, commit_tree, read_object, tree_entry
from hive.git.owners import owner_alive, owner_tag, parse_tag
from hive.git.refs import RepoPaths, read_ref_fast, ref_file, remove_stale_ref_lock
from hive.git.sha import object_id
from hive.git.shared import shared_perm
from hive.git.sparse import kept_out
from hive.git.worktree import atomic_write, file_blob_sha, remove_file, temp_name
from hive.record import Frozen, Record, suppress

TWIN = "hive-index.lock"
INTENT = "hive-intent"
RECOVERY_INDEX_WAIT = 1.0  # seconds to wait for a live git process's index.lock
_LEGACY_LOCK_AGE = 600.0  # seconds: an objects/xx/<sha>.lock this old is debris


def twin_path(paths: RepoPaths) -> str:
    return paths.index_twin


def intent_path(paths: RepoPaths) -> str:
    return os.path.join(paths.git_dir, INTENT)


def write_lock_path(paths: RepoPaths) -> str:
    return os.path.join(paths.hive_state_dir, "write.lock")


class PathIntent(Frozen):
    """One path of a write: its blob before (``old``) and after (``new``; None deletes).

    ``user_file``: the content is the user's own working-tree file (committed
    as it is), so recovery never rewrites it.
    """

    _fields = ("path", "old", "new", "mode", "user_file")

    def __init__(
        self,
        path: str,
        old: str | None,
        new: str | None,
        mode: int = 0o100644,
        user_file: bool = False,
    ) -> None:
        self.path = path
        self.old = old
        self.new = new
        self.mode = mode
        self.user_file = user_file


class Intent(Frozen):
    """What a write is about to do, recorded before the ref moves."""

    _fields = ("ref", "old", "new", "changes", "owner")

    def __init__(
        self,
        ref: str | None,
        old: str | None,
        new: str | None,
        changes: tuple[PathIntent, ...],
        owner: str = "",
    ) -> None:
        self.ref = ref  # None: staging mode (no commit)
        self.old = old
        self.new = new
        self.changes = changes
        self.owner = owner

    @property
    def pid(self) -> int | None:
        parsed = parse_tag(self.owner)
        return parsed[0] if parsed else None


# ------------------------------------------------------------ the write side


def write_intent(paths: RepoPaths, intent: Intent) -> None:
    """Record ``intent`` (one small file write, no fsync, as git writes refs)."""
    from hive.jsontext import dumps_compact

    document = {
        "pid": os.getpid(),
        "owner": owner_tag(),
        "ref": intent.ref,
        "old": intent.old,
        "new": intent.new,
        "changes": [[c.path, c.old, c.new, c.mode, int(c.user_file)] for c in intent.changes],
    }
    data = dumps_compact(document).encode()  # json.dumps(document, separators=(",", ":"))
    descriptor = os.open(intent_path(paths), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o666)
    try:
        if killpoints.armed("mid-intent"):
            os.write(descriptor, data[: len(data) // 2])
            killpoints.reached("mid-intent")
        os.write(descriptor, data)
    finally:
        os.close(descriptor)
    killpoints.reached("after-intent")


def clear_intent(paths: RepoPaths) -> None:
    with suppress(FileNotFoundError):
        os.unlink(intent_path(paths))


def read_intent(paths: RepoPaths) -> Intent | None:
    """The recorded intent; None when there is none; GitError when it is unreadable."""
    import json

    try:
        with open(intent_path(paths), "rb") as handle:
            raw = handle.read()
    except FileNotFoundError:
        return None
    try:
        document = json.loads(raw)
        changes = tuple(
            PathIntent(str(p), _sha(o), _sha(n), int(m), bool(u))
            for p, o, n, m, u in document["changes"]
        )
        return Intent(
            ref=document["ref"],
            old=_sha(document["old"]),
            new=_sha(document["new"]),
            changes=changes,
            owner=str(document.get("owner", "")),
        )
    except (ValueError, KeyError, TypeError) as exc:
        raise GitError(f"unreadable intent record ({exc})") from None


def _sha(value: object) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) not in (40, 64):
        raise ValueError(f"not an object id: {value!r}")
    return value


# ------------------------------------------------------------ the recovery side


def recover(paths: RepoPaths, *, commit_index: str | None = None, wait: float = 0.0) -> list[str]:
    """Finish or undo a write a dead hive process left; return what was done (one line).

    Costs one ``lstat`` when there is nothing to do. A live writer holding
    hive's write lock is never disturbed: without an intent on disk this
    returns at once; with one, it waits up to ``wait`` seconds for the lock.
    ``commit_index`` is the index a running ``git commit`` is committing
    (``GIT_INDEX_FILE`` in the pre-commit hook).
    """
    if not os.path.lexists(twin_path(paths)):
        return []
    has_intent = os.path.lexists(intent_path(paths))
    held = try_lock(write_lock_path(paths), wait if has_intent else 0.0)
    if held is None:
        return []
    try:
        return recover_locked(paths, commit_index=commit_index)
    finally:
        held.release()


def recover_locked(paths: RepoPaths, *, commit_index: str | None = None) -> list[str]:
    """:func:`recover` for a caller that holds hive's write lock.

    Raises ``LockTimeout`` when the write cannot be finished yet because
    another process holds ``index.lock`` (the twin and intent stay for later).
    """
    twin = twin_path(paths)
    if not os.path.lexists(twin):
        return []
    report = _Report(owner=_twin_owner(twin))
    lock = paths.index_path + ".lock"
    if lock_owned_by_twin(lock, twin):
        os.unlink(lock)
        report.removed.append(os.path.relpath(lock, paths.root))
    try:
        intent = read_intent(paths)
    except GitError:
        intent = None
        report.outcome = "its unreadable intent record was discarded (nothing was committed)"
        clear_intent(paths)
    if intent is not None and intent.owner:
        report.owner = intent.owner
    report.temporaries = _remove_temporaries(paths, intent, report.owner)
    finished = True
    if intent is not None:
        finished = _resolve(paths, intent, commit_index, report)
    if finished:
        with suppress(FileNotFoundError):
            os.unlink(twin)
    message = report.message()
    return [message] if message else []


class _Report(Record):
    """What one recovery did, for its message."""

    _fields = ("owner", "outcome", "temporaries", "removed")

    def __init__(
        self,
        owner: str | None,
        outcome: str = "",
        temporaries: int = 0,
        removed: list[str] | None = None,
    ) -> None:
        self.owner = owner
        self.outcome = outcome
        self.temporaries = temporaries
        self.removed: list[str] = [] if removed is None else removed

    def message(self) -> str:
        parts = [f"removed its {path}" for path in self.removed]
        if self.outcome:
            parts.append(self.outcome)
        elif self.removed:
            parts.append("nothing had been committed")
        if self.temporaries:
            parts.append(f"removed {self.temporaries} temporary file(s)")
        if not parts:
            return ""
        parsed = parse_tag(self.owner or "")
        who = f"hive process {parsed[0]}" if parsed else "a hive process"
        return f"recovered an interrupted write ({who} died mid-write): " + "; ".join(parts)


def _twin_owner(twin: str) -> str | None:
    try:
        with open(twin, "rb") as handle:
            text = handle.read(120).decode("ascii", "replace").split(" ", 1)[0]
    except OSError:
        return None
    return text if parse_tag(text) else None


def _resolve(paths: RepoPaths, intent: Intent, commit_index: str | None, report: _Report) -> bool:
    """Bring the working tree and index in line with the ref; True when the intent is done."""
    if intent.ref is None:
        return _roll_forward(paths, intent, commit_index, report)
    remove_stale_ref_lock(ref_file(paths, intent.ref) + ".lock")
    current = read_ref_fast(paths, intent.ref)
    if intent.new is not None and current == intent.new:
        return _roll_forward(paths, intent, commit_index, report)
    if current == intent.old:
        restored = _roll_back(paths, intent)
        report.outcome = "the commit had not been made, nothing was changed" + (
            f" ({restored} file(s) put back)" if restored else ""
        )
    else:
        report.outcome = (
            f"commit {_short(intent.new)} was followed by other commits before it could be "
            "finished; the index and working tree were left as they are"
        ) + _undone_note(paths, intent, current)
    clear_intent(paths)
    return True


def _undone_note(paths: RepoPaths, intent: Intent, current: str | None) -> str:
    """What to do when the commits on top undid the write: a ``git commit`` made from
    the index the write had not updated yet (its lock removed by hand, no pre-commit
    hook) commits the old files back. The write is still in its commit: say how to
    bring it back (nothing is changed here: the user may have meant it)."""
    if current is None or intent.new is None:
        return ""
    root = commit_tree(paths, current)
    if root is None:
        return ""
    undone = []
    for change in intent.changes:
        if change.old != change.new and _blob_at(paths, root, change.path) == change.old:
            undone.append(change.path)
    if not undone:
        return ""
    listed = " ".join(undone)
    return (
        f"; HEAD has undone its change to {listed} (a commit made from git's index before"
        f" hive could update it); bring it back with: git checkout {_short(intent.new)}"
        f" -- {listed} && git commit"
    )


def _blob_at(paths: RepoPaths, tree: str, path: str) -> str | None:
    """The blob at ``path`` below ``tree`` (None when absent, or unreadable here)."""
    current: str | None = tree
    for part in path.split("/"):
        if current is None:
            return None
        current = tree_entry(paths, current, part.encode("utf-8", "surrogateescape"))
    return current


def _short(sha: str | None) -> str:
    return (sha or "?")[:10]


def _roll_forward(
    paths: RepoPaths, intent: Intent, commit_index: str | None, report: _Report
) -> bool:
    written = [c.path for c in intent.changes if not c.user_file]
    kept = kept_out(paths, lookup_entries(paths.index_path, written), written)
    hashes: dict[str, str | None] = dict.fromkeys(kept)  # kept out: a sparse checkout
    for change in intent.changes:
        if not change.user_file and change.path not in kept:
            hashes[change.path] = _worktree_forward(paths, change)
    for change in intent.changes:
        if change.user_file:
            hashes[change.path] = file_blob_sha(os.path.join(paths.root, change.path))
    what = f"commit {_short(intent.new)}" if intent.ref else "the staged change"
    lock_path = None
    if commit_index is not None and not _same_file(commit_index, paths.index_path):
        lock_path = _finish_commit_indexes(paths, commit_index, intent, hashes)
    twin = None if lock_path else twin_path(paths)
    index_lock = IndexLock(
        paths.index_path,
        RECOVERY_INDEX_WAIT,
        twin=twin,
        lock_path=lock_path,
        perm=shared_perm(paths),
    )
    index_lock.keep_twin = True  # until the intent is cleared, whatever happens
    try:
        with index_lock as index:
            index.apply(_index_forward(paths, index.lookup(_paths(intent)), intent, hashes))
            clear_intent(paths)
    except LockTimeout:
        raise LockTimeout(
            f"an interrupted hive write (commit {_short(intent.new)}) cannot be finished while "
            f"another process holds {paths.index_path}.lock; try again when it is done"
        ) from None
    report.outcome = f"finished {what} in the working tree and the index"
    return True


def _finish_commit_indexes(
    paths: RepoPaths, commit_index: str, intent: Intent, hashes: dict[str, str | None]
) -> str | None:
    """In the pre-commit hook of ``git commit -a`` / ``git commit <paths>``: update the
    index git is committing, and git's ``index.lock`` that becomes ``.git/index``.

    Returns the private file through which ``.git/index`` itself is then
    replaced when git (the hook's parent, which has read it already and only
    ever renames its lock over it) holds ``index.lock``; None when it does not.
    """
    _splice_into(commit_index, intent, paths, hashes)
    git_lock = paths.index_path + ".lock"
    if not os.path.exists(git_lock):
        return None
    if not _same_file(git_lock, commit_index):
        _splice_into(git_lock, intent, paths, hashes)
    return f"{paths.index_path}.hive-hook-{owner_tag()}"


def _paths(intent: Intent) -> list[str]:
    return [change.path for change in intent.changes]


def _splice_into(
    index_file: str, intent: Intent, paths: RepoPaths, hashes: dict[str, str | None]
) -> None:
    """Update an index file git is committing, under ``<file>.lock`` (as ``git add`` would)."""
    with IndexLock(index_file, RECOVERY_INDEX_WAIT, perm=shared_perm(paths)) as index:
        index.apply(_index_forward(paths, index.lookup(_paths(intent)), intent, hashes))


def _same_file(first: str, second: str) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:
        return os.path.abspath(first) == os.path.abspath(second)


def _worktree_forward(paths: RepoPaths, change: PathIntent) -> str | None:
    """Put ``change.new`` in the working tree unless the user changed the file since."""
    full = os.path.join(paths.root, change.path)
    current = file_blob_sha(full)
    if current == change.new or current not in (change.old, None):
        return current  # already there, or the user's own edit: never overwritten
    if change.new is None:
        remove_file(full, paths.root)
        return None
    atomic_write(full, _blob(paths, change.new), change.mode)
    return change.new


def _index_forward(
    paths: RepoPaths, entries: dict[str, IndexEntry], intent: Intent, hashes: dict[str, str | None]
) -> list[IndexUpdate]:
    """Index entries still at the old blob move to the new one (others are the user's);
    an entry a sparse checkout keeps out of the working tree keeps skip-worktree."""
    written = [c.path for c in intent.changes if not c.user_file]
    kept = kept_out(paths, entries, written)
    updates: list[IndexUpdate] = []
    for change in intent.changes:
        entry = entries.get(change.path)
        if entry is not None and entry.stage != 0:
            continue
        staged = entry.sha.decode() if entry is not None else None
        if staged == change.new or staged != change.old:
            continue
        if change.new is None:
            updates.append(IndexUpdate(path=change.path, sha=None))
            continue
        full = os.path.join(paths.root, change.path)
        stat = os.stat(full) if hashes.get(change.path) == change.new else None
        updates.append(
            IndexUpdate(change.path, change.new.encode(), change.mode, stat, change.path in kept)
        )
    return updates


def _roll_back(paths: RepoPaths, intent: Intent) -> int:
    """Put back the files a write that never committed had already replaced."""
    restored = 0
    for change in intent.changes:
        if change.user_file or change.new == change.old:
            continue
        full = os.path.join(paths.root, change.path)
        if file_blob_sha(full) != change.new:
            continue
        if change.old is None:
            remove_file(full, paths.root)
        else:
            atomic_write(full, _blob(paths, change.old), change.mode)
        restored += 1
    return restored


def _blob(paths: RepoPaths, sha: str) -> bytes:
    found = read_object(paths, sha)  # loose or packed
    if found is not None and found[0] == b"blob":
        return found[1]
    from hive.git.dulwichrepo import open_repo  # anything else (alternates): dulwich's

    repo = open_repo(paths.root)
    try:
        obj = repo.object_store[object_id(sha)]
    except KeyError:
        raise GitError(f"blob {sha} is missing") from None
    finally:
        repo.close()
    if obj.type_name != b"blob":
        raise GitError(f"{sha} is not a blob")
    return bytes(obj.as_raw_string())


def _remove_temporaries(paths: RepoPaths, intent: Intent | None, owner: str | None) -> int:
    """Temporary files of dead writers: objects, working-tree files, ref twins, index copies."""
    removed = _remove_object_temporaries(paths)
    pid = parse_tag(owner or "")
    if intent is not None and pid is not None:
        for change in intent.changes:
            removed += _unlink(temp_name(os.path.join(paths.root, change.path), pid[0]))
    if owner and not owner_alive(owner):
        copy = f"{paths.index_path}.hive-tmp-{owner}"
        hook = f"{paths.index_path}.hive-hook-{owner}"
        removed += _unlink(copy) + _unlink(copy + ".lock") + _unlink(hook)
    return removed


def _remove_object_temporaries(paths: RepoPaths) -> int:
    objects = os.path.join(paths.common_dir, "objects")
    removed = 0
    now = time.time()
    try:
        directories = [d for d in os.listdir(objects) if len(d) == 2]
    except OSError:
        return 0
    for directory in directories:
        full = os.path.join(objects, directory)
        try:
            names = os.listdir(full)
        except OSError:
            continue
        for name in names:
            path = os.path.join(full, name)
            if name.startswith(TMP_PREFIX):
                tag = name[len(TMP_PREFIX) :].rsplit("-", 1)[0]
                if not owner_alive(tag):
                    removed += _unlink(path)
            elif name.endswith(".lock") and _older_than(path, now - _LEGACY_LOCK_AGE):
                removed += _unlink(path)  # left by an old writer (dulwich's GitFile)
    return removed


def _older_than(path: str, moment: float) -> bool:
    try:
        return os.stat(path).st_mtime < moment
    except OSError:
        return False


def _unlink(path: str) -> int:
    try:
        os.unlink(path)
    except OSError:
        return 0
    return 1


def describe_failure(exc: BaseException) -> str:
    """The one line shown when recovery itself failed (the write it left stays recorded)."""
    detail = exc.message if isinstance(exc, HiveError) else f"{type(exc).__name__}: {exc}"
    return f"could not recover an interrupted hive write yet: {detail}"
