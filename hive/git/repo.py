"""The git layer: the only place that imports dulwich.

Writes never go through ``porcelain.add/commit`` (it commits whatever is staged
and loses updates under concurrency). A write is a *transaction*:

1. take hive's lock (``<common dir>/hive/write.lock``);
2. read the branch head, hand a :class:`Snapshot` of it to the caller's
   ``plan`` function, which returns the file changes to make;
3. take git's ``index.lock`` (through hive's twin), write blobs, the changed
   trees and a commit as loose objects, and record the intent;
4. compare-and-swap the branch ref from the head read in step 2 to the new
   commit; if something else moved the ref, go back to step 2;
5. update only the changed files in the working tree and their index entries,
   then clear the intent.

A write killed at any moment is finished or undone by the next process
(``hive/git/recovery.py`` describes the protocol).

Because ``plan`` runs again on the fresh head after a lost race, a
read-modify-write never loses a concurrent update. The user's staged changes
are never part of the commit (the tree is built from HEAD, not the index) and
stay staged (only hive's own index entries are replaced).
"""

from __future__ import annotations

import os
import stat
import time

from hive.errors import (
    CorruptFile,
    DirtyHiveFile,
    DirtySourceFile,
    GitError,
    HiveError,
    LockTimeout,
    NotAGitRepository,
    StagedSourceFile,
    SymlinkRefused,
)
from hive.git import killpoints
from hive.git.dates import Date, commit_date
from hive.git.ident import Identity as Identity  # re-exported: the commit's who
from hive.git.index import (
    IndexEntry,
    IndexLock,
    IndexUpdate,
    index_mtime_ns,
    keyed_entries,
    lookup_entries,
    stat_clean,
)
from hive.git.loose import parse_commit, read_object, write_loose
from hive.git.pathhistory import lookup_path
from hive.git.pathhistory import parse_tree as parse_tree  # re-exported
from hive.git.refs import (
    HeadRef,
    RepoPaths,
    compare_and_swap,
    discover,
    is_sha,
    other_worktree_heads,
    read_head_fast,
    ref_file,
)
from hive.git.sha import object_id, sha1
from hive.git.state import check_git_state
from hive.git.worktree import atomic_write, is_blob, remove_file
from hive.git.worktree import blob_sha_of as blob_sha_of  # re-exported
from hive.record import Frozen, Record, suppress

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Iterator, Mapping
    from typing import Any, TypeVar

    _Fact = TypeVar("_Fact")  # what GitRepo._blobs_below keeps of each blob
    TreeEntry = tuple[int, str]  # (mode, sha) of a name in a tree
    EntryChanges = dict[bytes, tuple[TreeEntry | None, TreeEntry | None]]  # entries_between

    from dulwich.objects import Commit
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    from hive.git.flock import Held
    from hive.git.recovery import PathIntent


def _ref(name: str) -> Ref:
    from typing import cast

    return cast("Ref", name.encode("utf-8"))


TREE_MODE = 0o040000
SYMLINK_MODE = 0o120000
REGULAR_MODE = 0o100644
EXECUTABLE_MODE = 0o100755


def _blob_sha(_mode: int, sha: str) -> str:
    return sha


def _unusual_mode(mode: int, _sha: str) -> int | None:
    staged = staged_mode(mode)
    return None if staged == REGULAR_MODE else staged


def _branch_name(ref: bytes) -> str:
    """HEAD's branch as text; a name git took in bytes that are not UTF-8 is refused
    with what to do (hive names branches as text in its refs, locks and messages)."""
    try:
        return ref.decode()
    except UnicodeDecodeError:
        shown = ref.decode("utf-8", "backslashreplace")
        raise GitError(
            f"HEAD is on {shown}, a branch whose name is not UTF-8: hive cannot read or"
            " write there; rename it ('git branch -m NEW-NAME') or switch to another branch"
        ) from None


def staged_mode(mode: int) -> int:
    """A blob's mode as git stages it: a regular file is 0o100644 or, with any
    executable bit, 0o100755 (old trees may hold 0o100664); others as they are."""
    if mode & 0o170000 == 0o100000:
        return EXECUTABLE_MODE if mode & 0o111 else REGULAR_MODE
    return mode


MAX_CAS_ATTEMPTS = 50
BULK_OBJECTS = 256  # a write of this many blobs or more (an import) goes into one pack
WAIT_LONGER = (
    "try again, or wait longer: lock_timeout_seconds in .hive/config.yaml, or"
    " HIVE_LOCK_TIMEOUT (seconds), which overrides it"
)


class Change(Frozen):
    """New content for one repository-relative path (``None`` deletes it).

    ``mode`` is the git file mode (``0o100755`` for executables). ``from_worktree``
    marks content read from the working tree (an agent's own edits): the file is
    committed as it is and not rewritten.
    """

    _fields = ("path", "content", "mode", "from_worktree")

    def __init__(
        self,
        path: str,
        content: bytes | None,
        mode: int = 0o100644,
        from_worktree: bool = False,
    ) -> None:
        self.path = path
        self.content = content
        self.mode = mode
        self.from_worktree = from_worktree


class Plan(Record):
    """What a transaction wants to write, produced from a fresh snapshot."""

    _fields = ("changes", "message", "result", "extra_parents")

    def __init__(
        self,
        changes: list[Change],
        message: str,
        result: Any = None,
        extra_parents: list[str] | None = None,
    ) -> None:
        self.changes = changes
        self.message = message
        self.result = result
        self.extra_parents: list[str] = (
            [] if extra_parents is None else extra_parents
        )  # a merge: the other side(s)


class CommitInfo(Frozen):
    """One commit as hive's history features need it."""

    _fields = ("sha", "parents", "author", "time", "message")

    def __init__(
        self,
        sha: str,
        parents: tuple[str, ...],
        author: str,
        time: int,
        message: str,
    ) -> None:
        self.sha = sha
        self.parents = parents
        self.author = author
        self.time = time
        self.message = message

    @property
    def subject(self) -> str:
        return self.message.split("\n", 1)[0]

    def trailers(self) -> dict[str, list[str]]:
        return parse_trailers(self.message)


class FileStat(Frozen):
    """One file in a commit: ``status`` is A (added), M (modified) or D (deleted)."""

    _fields = ("path", "status", "additions", "deletions")

    def __init__(self, path: str, status: str, additions: int, deletions: int) -> None:
        self.path = path
        self.status = status
        self.additions = additions
        self.deletions = deletions


class CommitDiff(Frozen):
    """One commit's change, file by file."""

    _fields = ("sha", "subject", "author", "time", "files", "patch")

    def __init__(
        self,
        sha: str,
        subject: str,
        author: str,
        time: int,
        files: list[FileStat],
        patch: str,
    ) -> None:
        self.sha = sha
        self.subject = subject
        self.author = author
        self.time = time
        self.files = files
        self.patch = patch


def _file_stats(patch: str) -> list[FileStat]:
    """Per-file status and line counts from a git-style patch."""
    stats: list[FileStat] = []
    for chunk in patch.split("diff --git ")[1:]:
        lines = chunk.split("\n")
        path = lines[0].split(" b/", 1)[-1]
        status = "M"
        if any(line.startswith("new file mode") for line in lines[1:4]):
            status = "A"
        elif any(line.startswith("deleted file mode") for line in lines[1:4]):
            status = "D"
        body = [line for line in lines if not line.startswith(("+++", "---"))]
        additions = sum(1 for line in body if line.startswith("+"))
        deletions = sum(1 for line in body if line.startswith("-"))
        stats.append(FileStat(path, status, additions, deletions))
    return stats


class WriteResult(Frozen):
    """The outcome of a transaction."""

    _fields = ("commit", "result", "attempts", "staged_only", "tree")

    def __init__(
        self,
        commit: str | None,
        result: Any,
        attempts: int,
        staged_only: bool = False,
        tree: str | None = None,
    ) -> None:
        self.commit = commit
        self.result = result
        self.attempts = attempts
        self.staged_only = staged_only
        self.tree = tree


class Snapshot(Record):
    """A read-only view of the repository's files at one state.

    ``tree`` is the root tree of a commit (or of the index overlay in staging
    mode); ``files`` overrides path -> blob sha where the index differs.
    """

    _fields = ("repo", "head", "tree", "overlay")

    def __init__(
        self,
        repo: GitRepo,
        head: HeadRef,
        tree: str | None,
        overlay: dict[str, str | None] | None = None,
    ) -> None:
        self.repo = repo
        self.head = head
        self.tree = tree
        self.overlay: dict[str, str | None] = {} if overlay is None else overlay

    def blob_sha(self, path: str) -> str | None:
        if path in self.overlay:
            return self.overlay[path]
        if self.tree is None:
            return None
        return self.repo.lookup_path(self.tree, path)

    def read(self, path: str) -> bytes | None:
        sha = self.blob_sha(path)
        return None if sha is None else self.repo.read_blob(sha)

    def listing(self, directory: str) -> dict[str, str]:
        """Every file below ``directory`` (recursively): path -> blob sha."""
        files: dict[str, str] = {}
        if self.tree is not None:
            dir_sha = self.repo.lookup_path(self.tree, directory, want_tree=True)
            if dir_sha is not None:
                files.update(self.repo.tree_listing(dir_sha, directory))
        prefix = directory.rstrip("/") + "/"
        for path, sha in self.overlay.items():
            if path.startswith(prefix):
                if sha is None:
                    files.pop(path, None)
                else:
                    files[path] = sha
        return files

    def dir_key(self, directory: str) -> str:
        """A content key for ``directory``: equal keys mean equal contents."""
        base = "empty"
        if self.tree is not None:
            base = self.repo.lookup_path(self.tree, directory, want_tree=True) or "empty"
        if not self.overlay:
            return base
        prefix = directory.rstrip("/") + "/"
        relevant = sorted((p, s or "-") for p, s in self.overlay.items() if p.startswith(prefix))
        digest = sha1(repr(relevant).encode(), usedforsecurity=False).hexdigest()
        return f"{base}+{digest}"


def parse_trailers(message: str) -> dict[str, list[str]]:
    """``Key: value`` lines of the last paragraph of a commit message."""
    paragraphs = message.strip().split("\n\n")
    found: dict[str, list[str]] = {}
    # git's lines end at LF only (not at U+2028, NEL or FF, as str.splitlines has them)
    for line in paragraphs[-1].split("\n") if len(paragraphs) > 1 else []:
        key, sep, value = line.partition(": ")
        if sep and key and " " not in key:
            found.setdefault(key, []).append(value.strip())
    return found


def format_message(subject: str, trailers: Iterable[tuple[str, str]], body: str = "") -> str:
    """A commit message: a one-line subject, a blank line, the body (if any; its own
    blank lines kept), a blank line, then trailers."""
    clean_subject = " ".join(subject.split())
    lines = [f"{key}: {' '.join(value.split())}" for key, value in trailers]
    paragraphs = [p.strip() for p in body.replace("\r\n", "\n").split("\n\n") if p.strip()]
    text = "".join(paragraph + "\n\n" for paragraph in paragraphs)
    return clean_subject + "\n\n" + text + "\n".join(lines) + "\n"


class GitRepo:
    """A working tree plus its repository, opened lazily."""

    def __init__(self, paths: RepoPaths, *, recover: bool = True) -> None:
        self.paths = paths
        # One line per write a dead hive process left, finished or undone on opening
        # (hive/git/recovery.py); surfaces show them (the CLI on stderr).
        self.recovered: list[str] = self.recover() if recover else []
        self._repo: Repo | None = None
        self._tree_cache: dict[str, dict[bytes, tuple[int, str]]] = {}
        self._commit_trees: dict[str, str] = {}
        self._listing_cache: dict[str, dict[str, str]] = {}
        self._modes_cache: dict[str, dict[str, int]] = {}
        self._empty_tree_sha: str | None = None
        self._config_cache: tuple[tuple[object, ...], Any] | None = None
        self._shallow_cache: tuple[tuple[int, int], frozenset[str]] | None = None
        # the last staged overlay: (index content, tree, prefix) -> path -> blob or None
        self._overlay: tuple[tuple[bytes | None, str | None, str], dict[str, str | None]] | None
        self._overlay = None

    @classmethod
    def discover(cls, start: str) -> GitRepo:
        return cls(discover(start))

    def recover(self, *, commit_index: str | None = None, wait: float = 0.0) -> list[str]:
        """Finish or undo a write a dead hive process left (one ``lstat`` when there is
        none); never raises: a failure is reported as a line and retried next time.

        ``commit_index`` defaults to ``GIT_INDEX_FILE`` (set by git for its hooks:
        the index a running ``git commit`` is committing)."""
        if not os.path.lexists(self.paths.index_twin):
            return []  # the common case: one lstat, nothing imported
        from hive.git.recovery import describe_failure, recover

        if commit_index is None and os.environ.get("GIT_INDEX_FILE"):
            commit_index = os.path.abspath(os.environ["GIT_INDEX_FILE"])
        try:
            return recover(self.paths, commit_index=commit_index, wait=wait)
        except (HiveError, OSError) as exc:
            return [describe_failure(exc)]

    @property
    def root(self) -> str:
        return self.paths.root

    @property
    def dulwich(self) -> Repo:
        if self._repo is None:
            from dulwich.errors import NotGitRepository

            from hive.git.dulwichrepo import open_repo

            try:
                self._repo = open_repo(self.paths.root)
            except NotGitRepository as exc:
                raise NotAGitRepository(f"{self.paths.root}: {exc}") from None
            except ValueError:  # dulwich's word for a config file it cannot parse
                _load_config_file(os.path.join(self.paths.common_dir, "config"))
                raise
            if self._repo.bare:
                raise NotAGitRepository(f"{self.paths.root}: bare repositories are not supported")
            import weakref

            weakref.finalize(self, self._repo.close)  # close packs before interpreter teardown
            if _partial_clone(self.paths.common_dir):
                _fetch_lazily(self._repo.object_store, self.paths.root)
        return self._repo

    def close(self) -> None:
        """Release open pack files (also done automatically when this object goes away)."""
        if self._repo is not None:
            self._repo.close()
            self._repo = None

    # ----------------------------------------------------------------- reading

    def head(self) -> HeadRef:
        """HEAD's branch (None when detached) and commit (None before the first)."""
        fast = read_head_fast(self.paths)
        if fast is not None:
            return fast
        refs = self.dulwich.refs
        chain, sha = refs.follow(_ref("HEAD"))
        ref = _branch_name(chain[-1]) if len(chain) > 1 else None
        return HeadRef(ref=ref, commit=sha.decode() if sha else None)

    def commit_tree(self, commit_sha: str) -> str:
        """The root tree of a commit (remembered: commits never change)."""
        tree = self._commit_trees.get(commit_sha)
        if tree is None:
            if len(commit_sha) != 40 or not all(c in "0123456789abcdef" for c in commit_sha):
                raise GitError(
                    f"HEAD (or the branch it names) holds {commit_sha[:60]!r}, not a commit id:"
                    " the repository is damaged ('git status' says so too); point it back"
                    " at a branch, e.g. 'git symbolic-ref HEAD refs/heads/main'"
                )
            try:
                kind, body = self._raw(commit_sha)
            except KeyError:
                raise GitError(
                    f"commit {commit_sha} is missing from .git/objects: the repository is"
                    " damaged ('git status' calls the branch broken; 'git fsck' names what"
                    " else is); restore it from a clone, or reset the branch to a commit"
                    " that exists"
                ) from None
            if kind != b"commit" or not body.startswith(b"tree "):
                raise GitError(f"{commit_sha} is not a commit")
            tree = body[5:45].decode("ascii")
            self._commit_trees[commit_sha] = tree
        return tree

    def _commit(self, commit_sha: str) -> Commit:
        from dulwich.objects import Commit

        obj = self._object(commit_sha)
        if not isinstance(obj, Commit):
            raise GitError(f"{commit_sha} is not a commit")
        return obj

    def _object(self, sha: str) -> Any:
        """An object by id. A miss is asked once more: dulwich looks in its packs, then
        in the loose store, and a packer may move the object in between (the second
        look rescans the pack directory)."""
        store = self.dulwich.object_store
        try:
            return store[object_id(sha)]
        except KeyError:
            return store[object_id(sha)]

    def _raw(self, sha: str) -> tuple[bytes, bytes]:
        """(type, body) of an object: hive's own loose and pack readers (no dulwich
        import on a write's path), else dulwich's object store."""
        found = read_object(self.paths, sha)
        if found is not None:
            return found
        obj = self._object(sha)
        return obj.type_name, bytes(obj.as_raw_string())

    def snapshot(self, *, staged: bool = False) -> Snapshot:
        """The hive-visible state: HEAD's tree, overlaid with the index if ``staged``."""
        head = self.head()
        tree = self.commit_tree(head.commit) if head.commit else None
        snap = Snapshot(repo=self, head=head, tree=tree)
        if staged:
            snap.overlay = self._index_overlay(snap, ".hive/")
        return snap

    def snapshot_at(self, head: HeadRef) -> Snapshot:
        """A read-only view of ``head``'s commit (e.g. another worktree's branch)."""
        tree = self.commit_tree(head.commit) if head.commit else None
        return Snapshot(repo=self, head=head, tree=tree)

    def other_worktree_heads(self) -> list[HeadRef]:
        """HEAD of every other worktree of this repository (see refs.other_worktree_heads)."""
        return other_worktree_heads(self.paths)

    def _index_overlay(self, snap: Snapshot, prefix: str) -> dict[str, str | None]:
        content, read = keyed_entries(self.paths.index_path, prefix)
        key = (content, snap.tree, prefix)
        if content is not None and self._overlay is not None and self._overlay[0] == key:
            return dict(self._overlay[1])  # the same index over the same tree: the same
        entries = read()
        overlay: dict[str, str | None] = {}
        head_files = snap.listing(prefix.rstrip("/"))
        for path, entry in entries.items():
            if entry.stage == 0 and head_files.get(path) != entry.sha.decode():
                overlay[path] = entry.sha.decode()
        for path in head_files:
            if path not in entries:
                overlay[path] = None
        if content is not None:
            self._overlay = (key, dict(overlay))
        return overlay

    def staged_blob(self, path: str) -> str | None:
        """The blob git's index stages at ``path`` (None: not in the index; "" for a path
        with merge conflicts, which stages no one blob)."""
        entry = lookup_entries(self.paths.index_path, [path]).get(path)
        if entry is None:
            return None
        return entry.sha.decode() if entry.stage == 0 else ""

    def blobs_known_whole(self, shas: list[str]) -> set[str]:
        """The blobs among ``shas`` whose packed bytes are whole by their pack index's
        CRC-32s, without reading them (``packfile.sound_in_packs``): the others (loose,
        damaged, missing) must be read to be checked."""
        from hive.git.packfile import sound_in_packs

        return sound_in_packs(os.path.join(self.paths.common_dir, "objects"), shas)

    def read_blob(self, sha: str) -> bytes:
        kind, body = self._raw(sha)
        if kind != b"blob":
            raise GitError(f"{sha} is not a blob")
        return body

    def tree_items(self, tree_sha: str) -> dict[bytes, tuple[int, str]]:
        """name -> (mode, sha) of one tree object (cached: trees are immutable)."""
        cached = self._tree_cache.get(tree_sha)
        if cached is not None:
            return cached
        kind, body = self._raw(tree_sha)
        if kind != b"tree":
            raise GitError(f"{tree_sha} is not a tree")
        items = parse_tree(body)
        if len(self._tree_cache) > 4096:
            self._tree_cache.clear()
        self._tree_cache[tree_sha] = items
        return items

    def lookup_path(self, tree_sha: str, path: str, *, want_tree: bool = False) -> str | None:
        """The sha at ``path`` below ``tree_sha`` (a blob, or a tree if ``want_tree``)."""
        return lookup_path(self.tree_items, tree_sha, path, want_tree=want_tree)

    def symlink_on_path(self, tree_sha: str | None, path: str) -> str | None:
        """The first component of ``path`` (itself included) that ``tree_sha`` holds as a
        symlink, or None."""
        current = tree_sha
        parts = [p for p in path.split("/") if p]
        for position, part in enumerate(parts):
            if current is None:
                return None
            entry = self.tree_items(current).get(part.encode())
            if entry is None:
                return None
            if entry[0] == SYMLINK_MODE:
                return "/".join(parts[: position + 1])
            current = entry[1] if entry[0] == TREE_MODE else None
        return None

    def symlinks_below(self, tree_sha: str | None, prefix: str) -> list[str]:
        """Every symlink entry at or below ``prefix`` in ``tree_sha`` (a name that is not
        UTF-8 shown with backslash escapes: :func:`shown_path`)."""
        if tree_sha is None:
            return []
        above = self.symlink_on_path(tree_sha, prefix)
        if above is not None:
            return [above]
        below = self._entries_below(tree_sha, prefix)
        return sorted(shown_path(path) for path, mode in below if mode == SYMLINK_MODE)

    def undecodable_below(self, tree_sha: str | None, prefix: str) -> list[str]:
        """The entries at or below ``prefix`` in ``tree_sha`` whose name is not UTF-8,
        shown with backslash escapes (:func:`shown_path`)."""
        if tree_sha is None:
            return []
        found = [path for path, _mode in self._entries_below(tree_sha, prefix)]
        return sorted(shown_path(path) for path in found if not _is_utf8(path))

    def _entries_below(self, tree_sha: str, prefix: str) -> list[tuple[bytes, int]]:
        """Every entry below the tree at ``prefix`` (raw path joined to it, mode)."""
        start = self.lookup_path(tree_sha, prefix, want_tree=True) if prefix else tree_sha
        found: list[tuple[bytes, int]] = []
        pending = [(start, prefix.encode())] if start else []
        while pending:
            sha, base = pending.pop()
            for name, (mode, child) in self.tree_items(sha).items():
                where = base + b"/" + name if base else name
                found.append((where, mode))
                if mode == TREE_MODE:
                    pending.append((child, where))
        return found

    def tree_listing(self, tree_sha: str, prefix: str) -> dict[str, str]:
        """All blobs below a tree: path (joined to ``prefix``) -> sha. Cached per tree."""
        return self._blobs_below(self._listing_cache, tree_sha, prefix, _blob_sha)

    def unusual_modes(self, tree_sha: str, prefix: str = "") -> dict[str, int]:
        """The blobs below a tree whose mode is not a plain file's: path -> the mode as
        git stages it (0o100755 for an executable, 0o120000 for a symlink); a file not
        named is 0o100644. :meth:`tree_listing` gives their shas. Cached per tree."""
        return self._blobs_below(self._modes_cache, tree_sha, prefix, _unusual_mode)

    def _blobs_below(
        self,
        cache: dict[str, dict[str, _Fact]],
        tree_sha: str,
        prefix: str,
        fact: Callable[[int, str], _Fact | None],
    ) -> dict[str, _Fact]:
        """path -> ``fact(mode, sha)`` of every blob below a tree (None: left out), kept
        in ``cache`` for each tree walked."""
        key = f"{tree_sha}:{prefix}"
        cached = cache.get(key)
        if cached is not None:
            return cached
        found: dict[str, _Fact] = {}
        for name, (mode, sha) in self.tree_items(tree_sha).items():
            child = f"{prefix}/{name.decode()}" if prefix else name.decode()
            if mode == TREE_MODE:
                found.update(self._blobs_below(cache, sha, child, fact))
            elif mode != 0o160000 and (value := fact(mode, sha)) is not None:
                found[child] = value
        if len(cache) > 4096:
            cache.clear()
        cache[key] = found
        return found

    def iter_commits(
        self, start: str | None = None, limit: int | None = None
    ) -> Iterator[CommitInfo]:
        """Commits reachable from ``start`` (default HEAD), newest first by commit date,
        as ``git log --date-order`` lists them where every commit is dated no earlier than
        its parents: then never a commit before one of its children. Commits of one second
        (git's dates have no finer grain, and a swarm makes many a second) are ordered
        among themselves by their parents, ties by sha. A commit dated before its parent
        (made on a machine with a slow clock) comes after it: the walk is lazy and does not
        read the whole history to sort it (``review._oldest_first`` sorts what it needs
        parents first)."""
        import heapq

        head = start or self.head().commit
        if head is None:
            return
        seen: set[str] = set()
        pending: list[tuple[int, str, CommitInfo]] = []

        def push(sha: str) -> None:
            if sha not in seen:
                seen.add(sha)
                info = self.commit_info(sha)  # read once, kept until yielded
                heapq.heappush(pending, (-info.time, sha, info))

        push(head)
        count = 0
        while pending:
            second = pending[0][0]
            group: dict[str, CommitInfo] = {}
            while pending and pending[0][0] == second:  # the second's commits, all
                _, sha, info = heapq.heappop(pending)
                group[sha] = info
                for parent in info.parents:
                    push(parent)
            for info in _children_first(group):
                if limit is not None and count >= limit:
                    return
                count += 1
                yield info

    def ref_value(self, ref: str) -> str | None:
        """The commit a ref points at, or None if it does not exist."""
        from hive.git.refs import read_ref_fast, ref_absent

        fast = read_ref_fast(self.paths, ref)
        if fast is not None:
            return fast
        if ref_absent(self.paths, ref):
            return None  # without dulwich (~15 ms to import) for a ref not made yet
        made = read_ref_fast(self.paths, ref)  # made by another writer since the first look
        if made is not None:
            return made
        try:
            value = self.dulwich.refs[_ref(ref)]
        except KeyError:
            return None
        return str(value.decode())

    def tracking_tips(self, name: str) -> dict[str, str]:
        """Each fetched ``refs/hive-remotes/<remote>/<name>`` and its commit (no dulwich)."""
        from hive.git.refs import tracking_tips

        return tracking_tips(self.paths, name)

    def refs_under(self, prefix: str) -> dict[str, str]:
        """Each ref below ``prefix`` (``refs/hive-remotes``, loose or packed) and the
        commit it points at."""
        found = self.dulwich.refs.as_dict(_ref(prefix.rstrip("/")))
        return {
            f"{prefix.rstrip('/')}/{name.decode()}": sha.decode() for name, sha in found.items()
        }

    def commit_diff(self, commit_sha: str, keep: Callable[[str], bool] | None = None) -> CommitDiff:
        """What ``commit_sha`` changed against its first parent: per-file stats and a patch
        (of the paths ``keep`` accepts, if given)."""
        parents = self.parents_of(commit_sha)
        return self.range_diff(parents[0] if parents else None, commit_sha, keep)

    def changed_paths(self, commit_sha: str) -> list[str]:
        """The paths ``commit_sha`` changed against its first parent (every path of a
        root commit): names only, from the trees (no file is read)."""
        parents = self.parents_of(commit_sha)
        base = self.commit_tree(parents[0]) if parents else None
        return self.paths_between(base, self.commit_tree(commit_sha), errors="surrogateescape")

    def paths_between(
        self, old_tree: str | None, new_tree: str | None, *, errors: str = "replace"
    ) -> list[str]:
        """The paths that differ between two trees (a file or a submodule on either
        side, each once), in the order the trees list them; names decoded with
        ``errors`` (:meth:`entries_between`)."""
        found = self.entries_between(old_tree, new_tree)
        return [path.decode("utf-8", errors=errors) for path in found]

    def entries_between(self, old_tree: str | None, new_tree: str | None) -> EntryChanges:
        """The entries other than trees (files, submodules) that differ between two trees
        (None: an empty one): path -> (its entry in ``old_tree``, in ``new_tree``), None
        on a side that lacks it or holds a tree there; in the order the trees list them.
        Subtrees equal on both sides are not read, so the cost follows what changed, not
        the size of the trees; trees are read through the tree cache (an audit of
        hundreds of commits reads the same few subtrees again and again)."""
        found: EntryChanges = {}
        self._differing(old_tree, new_tree, b"", found)
        return found

    def _differing(
        self, old_tree: str | None, new_tree: str | None, prefix: bytes, found: EntryChanges
    ) -> None:
        if old_tree == new_tree:
            return
        old = self.tree_items(old_tree) if old_tree is not None else {}
        new = self.tree_items(new_tree) if new_tree is not None else {}
        for name in sorted(old.keys() | new.keys(), key=lambda n: _tree_order(n, old, new)):
            before, after = old.get(name), new.get(name)
            if before == after:
                continue
            path = prefix + name
            trees = [item[1] if item and item[0] == TREE_MODE else None for item in (before, after)]
            files = [item if item and item[0] != TREE_MODE else None for item in (before, after)]
            if files != [None, None]:
                found[path] = (files[0], files[1])
            if trees != [None, None]:
                self._differing(trees[0], trees[1], path + b"/", found)

    def range_diff(
        self, base: str | None, tip: str, keep: Callable[[str], bool] | None = None
    ) -> CommitDiff:
        """What changed from commit ``base`` (None: nothing) to commit ``tip``; only the
        files whose path (either side of a rename) ``keep`` accepts, if given: the other
        files are neither read nor diffed (one cell of a 3,000-cell import took seconds)."""
        import io

        from dulwich.patch import write_object_diff

        commit = self._commit(tip)
        base_tree = self._commit(base).tree if base else None
        buffer = io.BytesIO()
        store = self.dulwich.object_store
        for (old_path, new_path), modes, shas in store.tree_changes(base_tree, commit.tree):
            paths = [p.decode("utf-8", errors="replace") for p in (old_path, new_path) if p]
            if keep is None or any(keep(path) for path in paths):
                old = (old_path, modes[0], shas[0])
                write_object_diff(buffer, store, old, (new_path, modes[1], shas[1]))
        patch = buffer.getvalue().decode("utf-8", errors="replace")
        return CommitDiff(
            sha=tip,
            subject=commit.message.decode("utf-8", errors="replace").split("\n", 1)[0],
            author=commit.author.decode("utf-8", errors="replace"),
            time=commit.commit_time,
            files=_file_stats(patch),
            patch=patch,
        )

    def new_commits(self, tip: str, known: set[str]) -> list[CommitInfo]:
        """Commits reachable from ``tip`` that are not in ``known``, oldest first."""
        found: list[CommitInfo] = []
        pending = [tip]
        seen: set[str] = set()
        while pending:
            sha = pending.pop()
            if sha in seen or sha in known:
                continue
            seen.add(sha)
            info = self.commit_info(sha)
            found.append(info)
            pending.extend(info.parents)
        found.sort(key=lambda info: info.time)
        return _parents_first(found)

    def shallow_commits(self) -> frozenset[str]:
        """The commits a shallow clone holds without their parents (``<common
        dir>/shallow``, as ``git clone --depth`` leaves it): history ends at each, as in
        ``git log``. Re-read when the file changes (``git fetch --deepen``)."""
        name = os.path.join(self.paths.common_dir, "shallow")
        try:
            stat = os.stat(name)
        except OSError:
            return frozenset()
        key = (stat.st_mtime_ns, stat.st_size)
        if self._shallow_cache is None or self._shallow_cache[0] != key:
            try:
                with open(name, "rb") as handle:
                    lines = handle.read().split()
            except OSError:
                return frozenset()
            self._shallow_cache = (
                key,
                frozenset(line.decode("ascii", "replace") for line in lines),
            )
        return self._shallow_cache[1]

    def parents_of(self, sha: str) -> tuple[str, ...]:
        """A commit's parents that this repository has: none past a shallow clone's
        boundary (the object is not here)."""
        return self.commit_info(sha).parents

    def commit_info(self, sha: str) -> CommitInfo:
        """One commit, read by hive's own object readers (dulwich's parser only for a
        commit they cannot read or a header they do not expect). A commit at a shallow
        clone's boundary has no parents here, as in ``git log``."""
        kind, body = self._raw(sha)
        found = parse_commit(body) if kind == b"commit" else None
        cut = sha in self.shallow_commits()
        if found is not None:
            return CommitInfo(
                sha=sha,
                parents=() if cut else found.parents,
                author=found.author,
                time=found.time,
                message=found.message.decode("utf-8", errors="replace"),
            )
        commit = self._commit(sha)
        return CommitInfo(
            sha=sha,
            parents=() if cut else tuple(p.decode() for p in commit.parents),
            author=commit.author.decode("utf-8", errors="replace"),
            time=commit.commit_time,
            message=commit.message.decode("utf-8", errors="replace"),
        )

    def append_to_ref(
        self,
        ref: str,
        plan: Callable[[str | None], Plan],
        *,
        author: Identity,
        lock_timeout: float = 30.0,
        lock_name: str = "log.lock",
    ) -> WriteResult:
        """Append one commit (with an empty tree) to a private ref such as ``refs/hive/mail``.

        Nothing touches the working tree, the index or the current branch;
        ``plan`` sees the current tip and returns the message (no changes).
        """
        lock = self.write_lock(lock_timeout, lock_name)
        with lock:
            for attempt in range(1, MAX_CAS_ATTEMPTS + 1):
                tip = self.ref_value(ref)
                wanted = plan(tip)
                if not wanted.message:
                    return WriteResult(commit=tip, result=wanted.result, attempts=attempt)
                commit = self._write_commit(self._empty_tree(), tip, wanted.message, author)
                head = HeadRef(ref=ref, commit=tip)
                if self._swap_ref(head, commit, author, wanted.message, lock_timeout):
                    return WriteResult(commit=commit, result=wanted.result, attempts=attempt)
        raise GitError(f"{ref} kept moving while hive was writing; try again")

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """True when ``ancestor`` is reachable from ``descendant`` (or equal to it)."""
        pending, seen = [descendant], set()
        while pending:
            sha = pending.pop()
            if sha == ancestor:
                return True
            if sha not in seen:
                seen.add(sha)
                pending.extend(self.parents_of(sha))
        return False

    def merge_into_ref(
        self,
        ref: str,
        other: str,
        *,
        message: str,
        author: Identity,
        lock_timeout: float = 30.0,
        lock_name: str = "log.lock",
    ) -> str:
        """Join the history ``other`` into the private ``ref`` without losing a commit:
        fast-forward when possible, else a merge commit (empty tree, parents: ref, other)."""
        lock = self.write_lock(lock_timeout, lock_name)
        with lock:
            for _ in range(MAX_CAS_ATTEMPTS):
                tip = self.ref_value(ref)
                if tip is not None and self.is_ancestor(other, tip):
                    return tip
                new = other
                if tip is not None and not self.is_ancestor(tip, other):
                    new = self._write_commit(self._empty_tree(), [tip, other], message, author)
                if self._swap_ref(HeadRef(ref=ref, commit=tip), new, author, message, lock_timeout):
                    return new
        raise GitError(f"{ref} kept moving while hive was merging; try again")

    def _config_stack(self) -> Any:
        """git config (repository, global, system), re-read only when a file changed.

        The files are dulwich's (``Repo.get_config_stack``), read as git reads them: one
        that cannot be opened (``$HOME`` a file, ``~/.gitconfig`` a directory, no
        permission) is skipped; one that cannot be parsed is CorruptFile, named."""
        key = self._config_key()
        if self._config_cache is None or self._config_cache[0] != key:
            from dulwich.config import StackedConfig

            from hive.git.configfile import shared_config_files

            repo = self.dulwich
            local = repo.get_config()
            backends = [local]  # the first that has a key answers: git's last file read
            if local.get_boolean((b"extensions",), b"worktreeconfig", False):
                # this worktree's own file (dulwich's get_worktree_config reads the main
                # one's), read after the repository's by git: it comes first here
                worktree = _load_config_file(os.path.join(self.paths.git_dir, "config.worktree"))
                if worktree is not None:
                    backends.insert(0, worktree)
            for path in shared_config_files():
                loaded = _load_config_file(path)
                if loaded is not None:
                    backends.append(loaded)
            self._config_cache = (key, StackedConfig(backends, writable=local))
        return self._config_cache[1]

    def _config_key(self) -> tuple[object, ...]:
        from hive.git.configfile import user_config_files

        candidates = (
            os.path.join(self.paths.common_dir, "config"),
            os.path.join(self.paths.git_dir, "config.worktree"),
            *user_config_files(),
            os.environ.get("GIT_CONFIG_GLOBAL") or "",
            os.environ.get("GIT_CONFIG_SYSTEM") or "/etc/gitconfig",
        )
        key: list[object] = [os.environ.get("GIT_CONFIG_NOSYSTEM")]
        for path in candidates:
            try:
                info = os.stat(path)
                key.append((path, info.st_mtime_ns, info.st_size, info.st_ino))
            except OSError:
                key.append((path, None))
        return tuple(key)

    def config_value(self, section: str, key: str) -> str | None:
        """One git config value (the environment's ``GIT_CONFIG_*`` settings, then the
        repository, global and system config), or None."""
        from hive.git.configfile import Unsure, UnsureEnvironment, config_value

        try:
            return config_value(self.paths, section, key)
        except UnsureEnvironment:
            return git_config_get(self.paths.root, f"{section}.{key}")
        except Unsure:
            pass
        config = self._config_stack()
        try:
            return str(config.get((section.encode(),), key.encode()).decode())
        except KeyError:
            return None

    def person_identity(self, made_up: Callable[[str | None, str | None], Identity]) -> Identity:
        """The author and committer of a person's commit, as git would make them
        (``hive/git/ident.py``: git's order for each, the environment before the config;
        git asked only for what it would guess, once per process). Where git knows no
        identity, hive's own ``made_up(name, email)`` from the fields known (the
        person's name at ``hive.local``: hive has always committed without a configured
        identity, and its trailers name who acted), unless ``user.useConfigOnly`` asks
        for a configured identity only: then a ``GitError`` with git's reason and the
        commands that fix it, as ``git commit`` refuses."""
        from hive.git.ident import person_identity

        return person_identity(self, made_up)

    def config_state(self) -> tuple[object, ...]:
        """What the config files are now (paths, times, sizes): equal while none changed."""
        return self._config_key()

    # ----------------------------------------------------------------- writing

    def transact(
        self,
        plan: Callable[[Snapshot], Plan],
        *,
        author: Identity,
        lock_timeout: float = 30.0,
        stage_only: bool = False,
    ) -> WriteResult:
        """Run ``plan`` on a fresh snapshot and commit its changes atomically.

        With ``stage_only`` the changes are written to the working tree and the
        index (for the user's next commit) instead of being committed.
        """
        from hive.git.shared import PermHeld

        index_timeout = lock_timeout  # git's index.lock is waited for as long as hive's lock
        check_git_state(self.paths, self.head())  # no write mid-merge/rebase/bisect/...
        with self.write_lock(lock_timeout), PermHeld(self.paths):
            if os.path.lexists(self.paths.index_twin):
                from hive.git.recovery import recover_locked

                self.recovered += recover_locked(self.paths)
            if stage_only:
                return self._stage(plan, index_timeout)
            return self._commit_with_retry(plan, author, index_timeout)

    def write_lock(self, timeout: float, name: str = "write.lock") -> _WriteLock:
        """hive's lock for writers; after a write it is released, loose objects are
        packed when git's ``gc --auto`` would pack them."""
        path = os.path.join(self.paths.hive_state_dir, name)
        return _WriteLock(path, timeout, after=self.pack_if_needed)

    def sync_lock(self, timeout: float) -> _WriteLock:
        """The lock that makes the syncs of one repository (all its worktrees) take
        turns: held across a whole ``hive sync`` (fetch, merge, push), taken before any
        write lock and never by a write, so the two cannot deadlock. An OS lock, like
        the write lock: a killed sync leaves nothing held."""
        path = os.path.join(self.paths.hive_state_dir, "sync.lock")
        return _WriteLock(
            path, timeout, holder="another hive sync held this repository's sync lock"
        )

    def pack_if_needed(self) -> None:
        """Pack loose objects when there are too many (``hive/git/packing.py``): decided
        first (``loose.pack_wanted``), so the packer is loaded only when it will pack."""
        from hive.git.loose import pack_wanted

        wanted = pack_wanted(self)
        if wanted is None:
            return
        from hive.git.packing import auto_pack

        auto_pack(self, merge_packs=wanted[0], pack_limit=wanted[1])

    def _index_lock(self, timeout: float) -> IndexLock:
        """git's index.lock, taken through hive's twin (see hive/git/recovery.py)."""
        from hive.git.shared import shared_perm

        return IndexLock(
            self.paths.index_path,
            timeout,
            twin=self.paths.index_twin,
            advice=WAIT_LONGER,
            perm=shared_perm(self.paths),
        )

    def _commit_with_retry(
        self, plan: Callable[[Snapshot], Plan], author: Identity, index_timeout: float
    ) -> WriteResult:
        for attempt in range(1, MAX_CAS_ATTEMPTS + 1):
            snap = self.snapshot()
            wanted = plan(snap)
            if not wanted.changes:
                return WriteResult(commit=snap.head.commit, result=wanted.result, attempts=attempt)
            # git's index.lock is held from before the ref moves until the index matches
            # it: a held or unwritable index refuses the write before anything lands.
            self._refuse_symlinks(snap, wanted.changes)
            with self._index_lock(index_timeout) as index:
                self._refuse_dirty(snap, wanted.changes, index)
                blobs = self._write_blobs(wanted.changes)
                tree = self._write_tree(snap.tree, wanted.changes, blobs)
                parents = [p for p in (snap.head.commit, *wanted.extra_parents) if p]
                commit = self._write_commit(tree, parents, wanted.message, author)
                killpoints.reached("after-objects")
                self._record(
                    snap.head.ref or "HEAD",
                    snap.head.commit,
                    commit,
                    self._path_intents(snap, wanted.changes, blobs),
                    index,
                )
                swapped = self._swap_recorded(
                    snap.head, commit, author, wanted.message, index, index_timeout
                )
                if swapped:
                    self._finish(snap, commit, wanted.changes, blobs, index, index_timeout)
                    return WriteResult(
                        commit=commit, result=wanted.result, attempts=attempt, tree=tree
                    )
                self._settled(index)
            time.sleep(0.001 * attempt)
        raise GitError("HEAD kept moving while hive was writing; try again")

    def _finish(
        self,
        snap: Snapshot,
        commit: str,
        changes: list[Change],
        blobs: Mapping[str, str | None],
        index: IndexLock,
        timeout: float,
    ) -> None:
        """Bring the working tree and index up to ``commit``; on failure move the ref
        back and restore the files, so the write lands whole or not at all."""
        kept = self._kept_out(changes, index)
        try:
            index.apply(self._sync_files(changes, blobs, kept))
        except Exception as exc:
            self._roll_back(snap, commit, changes, kept, timeout)
            self._settled(index)
            if isinstance(exc, HiveError):
                raise
            raise GitError(
                f"could not update the working tree or index ({exc}); nothing was committed"
            ) from exc
        self._settled(index)

    def _path_intents(
        self, snap: Snapshot, changes: list[Change], blobs: Mapping[str, str | None]
    ) -> tuple[PathIntent, ...]:
        from hive.git.recovery import PathIntent

        return tuple(
            PathIntent(c.path, snap.blob_sha(c.path), blobs[c.path], c.mode, c.from_worktree)
            for c in changes
        )

    def _record(
        self,
        ref: str | None,
        old: str | None,
        new: str | None,
        changes: tuple[PathIntent, ...],
        index: IndexLock,
    ) -> None:
        """Write the intent (``ref`` None: staging mode) before anything the user can see
        changes; from here until ``_settled`` the twin of index.lock stays even if this
        process unwinds, so the next command finishes or undoes the write."""
        from hive.git.recovery import Intent, write_intent

        index.keep_twin = True
        write_intent(self.paths, Intent(ref=ref, old=old, new=new, changes=changes))

    def _swap_recorded(
        self,
        head: HeadRef,
        commit: str,
        author: Identity,
        message: str,
        index: IndexLock,
        timeout: float,
    ) -> bool:
        """``_swap_ref`` after ``_record``: an error before the ref moved settles the intent."""
        try:
            return self._swap_ref(head, commit, author, message, timeout)
        except BaseException:
            if self.ref_value(head.ref or "HEAD") != commit:
                self._settled(index)
            raise

    def _settled(self, index: IndexLock) -> None:
        """The index and working tree match the ref again: the intent is done."""
        from hive.git.recovery import clear_intent

        clear_intent(self.paths)
        killpoints.reached("after-intent-cleared")
        index.keep_twin = False

    def _roll_back(
        self, snap: Snapshot, commit: str, changes: list[Change], kept: set[str], timeout: float
    ) -> None:
        ref = snap.head.ref or "HEAD"
        if snap.head.commit is None:
            with suppress(OSError):
                os.unlink(ref_file(self.paths, ref))  # the branch was born by this write
        else:
            compare_and_swap(
                self.paths,
                ref,
                commit,
                snap.head.commit,
                who="hive <hive@hive.local>",
                message="hive: roll back a write that could not reach the working tree",
                timeout=timeout,
            )
        killpoints.reached("rollback-ref")
        for change in changes:
            if change.from_worktree or change.path in kept:
                continue  # the user's own file, or one hive kept out: never touched
            full = os.path.join(self.paths.root, change.path)
            old = snap.read(change.path)
            with suppress(OSError):
                if old is None:
                    remove_file(full, self.paths.root)
                else:
                    atomic_write(full, old)

    def _stage(self, plan: Callable[[Snapshot], Plan], index_timeout: float) -> WriteResult:
        snap = self.snapshot(staged=True)
        wanted = plan(snap)
        if wanted.changes:
            self._refuse_symlinks(snap, wanted.changes)
            with self._index_lock(index_timeout) as index:
                self._refuse_dirty(snap, wanted.changes, index)
                blobs = self._write_blobs(wanted.changes)
                self._record(
                    None, None, None, self._path_intents(snap, wanted.changes, blobs), index
                )
                try:
                    kept = self._kept_out(wanted.changes, index)
                    index.apply(self._sync_files(wanted.changes, blobs, kept))
                finally:  # a failure (not a kill) is reported to the caller as before
                    self._settled(index)
        return WriteResult(commit=None, result=wanted.result, attempts=1, staged_only=True)

    def _write_blobs(self, changes: list[Change]) -> dict[str, str | None]:
        """Blobs as loose objects (``write_loose``), or one pack for a bulk write."""
        if sum(change.content is not None for change in changes) >= BULK_OBJECTS:
            return self._write_blob_pack(changes)
        blobs: dict[str, str | None] = {}
        for change in changes:
            if change.content is None:
                blobs[change.path] = None
            else:
                blobs[change.path] = write_loose(self.paths, b"blob", change.content)
        return blobs

    def _write_blob_pack(self, changes: list[Change]) -> dict[str, str | None]:
        """One pack file instead of thousands of loose objects (an import): written under
        a temporary name, flushed, put in place with its index and checked before the
        commit refers to it (``hive/git/packing.py``)."""
        from hive.git.packing import write_blobs_pack

        return write_blobs_pack(self, [(change.path, change.content) for change in changes])

    def store_object(self, obj: Any) -> str:
        """Write a dulwich object as a loose object, crash-safe (``hive.git.loose.write_loose``:
        never dulwich's ``add_object``, whose ``<sha>.lock`` a kill leaves for fsck to report)."""
        sha = str(obj.id.decode())
        write_loose(self.paths, obj.type_name, obj.as_raw_string(), sha)
        return sha

    def store_tree(self, items: Mapping[bytes, tuple[int, str]]) -> str:
        """A tree object of ``items`` (name -> (mode, sha)), written loose as git and
        dulwich write it (:func:`tree_body`); its sha."""
        return write_loose(self.paths, b"tree", tree_body(items))

    def has_object(self, sha: str) -> bool:
        """Whether this repository holds the object ``sha`` (read by hive's own readers,
        else asked of dulwich's object store); False for text that is no object id."""
        if not is_sha(sha):
            return False
        if read_object(self.paths, sha) is not None:
            return True
        return object_id(sha) in self.dulwich.object_store

    def _write_tree(
        self, base_tree: str | None, changes: list[Change], blobs: Mapping[str, str | None]
    ) -> str:
        nested: dict[str, Any] = {}
        for change in changes:
            sha = blobs[change.path]
            node = nested
            parts = change.path.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = None if sha is None else (change.mode, sha)
        new_sha = self._rewrite_tree(base_tree, nested)
        return new_sha or self._empty_tree()

    def _rewrite_tree(self, base_tree: str | None, changes: dict[str, Any]) -> str | None:
        items = dict(self.tree_items(base_tree)) if base_tree else {}
        for name, change in changes.items():
            key = name.encode()
            if isinstance(change, dict):
                existing = items.get(key)
                sub_base = existing[1] if existing and existing[0] == TREE_MODE else None
                sub_sha = self._rewrite_tree(sub_base, change)
                if sub_sha is None:
                    items.pop(key, None)
                else:
                    items[key] = (TREE_MODE, sub_sha)
            elif change is None:
                items.pop(key, None)
            else:
                items[key] = change
        if not items:
            return None
        sha_text = write_loose(self.paths, b"tree", tree_body(items))
        self._tree_cache[sha_text] = items
        return sha_text

    def _empty_tree(self) -> str:
        if self._empty_tree_sha is None:
            self._empty_tree_sha = write_loose(self.paths, b"tree", b"")
        return self._empty_tree_sha

    def _write_commit(
        self, tree: str, parents: str | list[str] | None, message: str, author: Identity
    ) -> str:
        """A commit object (loose) of ``tree`` on ``parents`` (one sha, a list, or none)."""
        if isinstance(parents, str):
            parents = [parents]
        now = int(time.time())
        dates = (commit_date("author", now), commit_date("committer", now))
        who = (author.as_bytes(), author.committer_bytes())
        body = commit_body(tree, parents or [], who, dates, message)
        sha = write_loose(self.paths, b"commit", body)
        self._commit_trees[sha] = tree
        return sha

    def write_commit(self, tree: str, parents: list[str], message: str, author: Identity) -> str:
        """A commit object of ``tree`` on ``parents``; no ref moves (see :meth:`swap_ref`)."""
        return self._write_commit(tree, parents, message, author)

    def swap_ref(
        self, head: HeadRef, new_commit: str, author: Identity, message: str, timeout: float
    ) -> bool:
        """Compare-and-swap ``head.ref`` from ``head.commit`` to ``new_commit`` (another
        process's ref lock waited for ``timeout`` seconds)."""
        return self._swap_ref(head, new_commit, author, message, timeout)

    def _swap_ref(
        self, head: HeadRef, new_commit: str, author: Identity, message: str, timeout: float
    ) -> bool:
        """Compare-and-swap ``head.ref`` (or a detached HEAD) to ``new_commit``; another
        process's ``<ref>.lock`` is waited for as long as the write's lock (``timeout``)."""
        stamp = author.committer_bytes().decode()  # git's reflog names the committer
        reflog = "commit: " + message.split("\n", 1)[0]
        ref = head.ref or "HEAD"
        try:
            return compare_and_swap(
                self.paths, ref, head.commit, new_commit, who=stamp, message=reflog, timeout=timeout
            )
        except LockTimeout as held:
            raise LockTimeout(f"{held}; {WAIT_LONGER}") from None

    # ------------------------------------------------------ worktree and index

    def _refuse_symlinks(self, snap: Snapshot, changes: list[Change]) -> None:
        """hive never writes through a symlink: a symlink on the path of a file it
        writes, committed or only in the working tree, refuses the whole write (so
        nothing lands outside the repository and the index stays committable)."""
        checked: set[str] = set()
        for change in changes:
            committed = self.symlink_on_path(snap.tree, change.path)
            if committed is not None:
                raise SymlinkRefused(
                    f"{committed} is committed as a symlink; hive never writes through a"
                    f" symlink for its own files (writing {change.path} refused). Replace it"
                    " with a real directory or file (see 'hive doctor')",
                    path=committed,
                )
            found = _worktree_symlink(self.paths.root, change.path, checked)
            if found is not None and not os.path.islink(os.path.join(self.paths.root, found)):
                raise DirtyHiveFile(
                    f"{found} is a file in the working tree where hive keeps a directory"
                    f" (writing {change.path} refused); move it away, then restore hive's"
                    f" files: git checkout -- {found}",
                    path=found,
                )
            if found is not None:
                raise SymlinkRefused(
                    f"{found} is a symlink in the working tree; hive never writes through a"
                    f" symlink for its own files (writing {change.path} refused). Replace it"
                    " with a real directory or file (see 'hive doctor')",
                    path=found,
                )

    def _refuse_dirty(self, snap: Snapshot, changes: list[Change], index: IndexLock) -> None:
        """Refuse to overwrite a file whose staged or working copy differs from both
        HEAD and what hive is about to write (the user's work is never lost)."""
        entries = index.lookup([change.path for change in changes])
        written_ns = index_mtime_ns(index.index_path)
        for change in changes:
            path = change.path
            expected = snap.blob_sha(path)
            new = blob_sha_of(change.content) if change.content is not None else None
            allowed = {expected, new}
            entry = entries.get(path)
            if entry is not None and entry.stage != 0:
                raise _dirty(change, "unmerged")
            staged = entry.sha.decode() if entry is not None else None
            if staged not in allowed:
                raise _dirty(change, "staged")
            if not self._worktree_matches(path, allowed, entry, written_ns):
                raise _dirty(change, "edited")

    def _worktree_matches(
        self,
        path: str,
        allowed: set[str | None],
        entry: IndexEntry | None,
        written_ns: int | None,
    ) -> bool:
        """Whether the working-tree file holds a blob the write may replace: trusted
        without reading only when git's own stat rule says it is unchanged since it was
        staged (mtime, ctime, size, inode, not racy: a same-size edit whose mtime was put
        back still changes the ctime); else its content is hashed (its CRLF line ends as
        LF too: git's checkout writes them so, see :func:`is_blob`)."""
        full = os.path.join(self.paths.root, path)
        try:
            info = os.lstat(full)
        except FileNotFoundError:
            return True  # a deleted file is restored (or stays deleted) by the write
        if (
            entry is not None
            and stat_clean(info, entry, written_ns)
            and entry.sha.decode() in allowed
        ):
            return True
        if not os.path.isfile(full):
            return False
        with open(full, "rb") as handle:
            content = handle.read()
        return any(blob is not None and is_blob(content, blob) for blob in allowed)

    def _kept_out(self, changes: list[Change], index: IndexLock) -> set[str]:
        """The changed paths a sparse checkout keeps out of the working tree
        (``hive/git/sparse.py``): only their index entries change, skip-worktree kept."""
        from hive.git.sparse import kept_out

        written = [change.path for change in changes if not change.from_worktree]
        return kept_out(self.paths, index.lookup(written), written) if written else set()

    def _sync_files(
        self, changes: list[Change], blobs: Mapping[str, str | None], kept: set[str]
    ) -> list[IndexUpdate]:
        """Write the changed files into the working tree (not those a sparse checkout
        keeps out: ``kept``); return their index updates."""
        updates: list[IndexUpdate] = []
        for change in changes:
            full = os.path.join(self.paths.root, change.path)
            sha = blobs[change.path]
            if change.content is None or sha is None:
                if change.path not in kept:
                    remove_file(full, self.paths.root)
                updates.append(IndexUpdate(path=change.path, sha=None))
            elif change.path in kept:
                updates.append(
                    IndexUpdate(change.path, sha.encode(), change.mode, skip_worktree=True)
                )
            else:
                if not change.from_worktree:
                    atomic_write(full, change.content, change.mode)
                stat = os.stat(full)
                updates.append(
                    IndexUpdate(path=change.path, sha=sha.encode(), mode=change.mode, stat=stat)
                )
            killpoints.reached("mid-worktree")
        return updates


def _tree_order(name: bytes, *trees: Mapping[bytes, tuple[int, str]]) -> bytes:
    """git's order of tree entries: a directory's name sorts as if it ended in ``/``."""
    modes = [tree[name][0] for tree in trees if name in tree]
    return name + b"/" if modes and modes[-1] == TREE_MODE else name


def _partial_clone(common_dir: str) -> bool:
    """Whether objects may be missing here by design: a pack fetched from a promisor
    remote (``objects/pack/*.promisor``, which every ``git clone --filter`` has)."""
    try:
        names = os.listdir(os.path.join(common_dir, "objects", "pack"))
    except OSError:
        return False
    return any(name.endswith(".promisor") for name in names)


def _fetch_lazily(store: Any, root: str) -> None:
    """A partial clone (``git clone --filter``) leaves objects on its promisor remote
    until they are needed; git fetches each on first use, dulwich does not. An object
    ``store`` does not have is asked of git (``git cat-file -e`` fetches it), then read
    again (dulwich looks for new packs on a miss); one git can not fetch stays missing."""
    from hive.git.rungit import run_git

    get_raw = store.get_raw
    asked: set[bytes] = set()

    def lazily(name: bytes) -> tuple[int, bytes]:
        try:
            return get_raw(name)  # type: ignore[no-any-return]
        except KeyError:
            hexsha = name.hex().encode() if len(name) == 20 else name
            if hexsha in asked:
                raise
            asked.add(hexsha)
            with suppress(GitError, UnicodeDecodeError):
                run_git(root, "cat-file", "-e", hexsha.decode("ascii"))
            return get_raw(name)  # type: ignore[no-any-return]

    store.get_raw = lazily


def _parents_first(commits: list[CommitInfo]) -> list[CommitInfo]:
    """Order commits so every commit comes after its parents (stable by time)."""
    position = {info.sha: number for number, info in enumerate(commits)}
    ordered: list[CommitInfo] = []
    done: set[str] = set()
    for info in commits:
        stack = [info]
        while stack:
            current = stack[-1]
            waiting = [
                commits[position[p]] for p in current.parents if p in position and p not in done
            ]
            if waiting:
                stack.extend(waiting)
                continue
            stack.pop()
            if current.sha not in done:
                done.add(current.sha)
                ordered.append(current)
    return ordered


# files outside .hive/ whose content hive itself writes (``hive init``'s merge lines):
# hive's files, not an agent's source files, when a write of hive's content is refused
HIVE_WRITES_OUTSIDE = (".gitattributes",)
_HIVE_STATES = {
    "unmerged": "has merge conflicts; resolve them first",
    "staged": "has staged changes that are not committed; commit or reset them first",
    "edited": "has local edits that are not committed; commit or discard them first",
}
# A file outside .hive/ a write commits: (read from the working tree, as swarm_complete
# commits its touched files; else content the write brings, as a merge's)
_SOURCE_STATES = {
    "unmerged": ("is unmerged in git's index (merge conflicts): resolve them, git add it",) * 2,
    "staged": (
        "is staged (git add) with other content than its working-tree copy, which hive"
        " is committing: stage the working copy (git add {path}) or unstage it (git restore"
        " --staged {path})",
        "has staged changes (git add) hive's write would replace: commit them, or unstage"
        " them (git restore --staged {path})",
    ),
    "edited": (
        "changed in the working tree while hive was committing it",
        "has local edits hive's write would replace: commit or discard them",
    ),
}


def _dirty(change: Change, state: str) -> DirtyHiveFile | DirtySourceFile:
    """The refusal of a write over ``change.path``, ``state`` in the index (unmerged,
    staged) or the working tree (edited): a file outside .hive/ is named as the source
    file it is (``staged_source_file``, ``dirty_source_file``), not as hive's."""
    path = change.path
    if path.startswith(".hive/") or (path in HIVE_WRITES_OUTSIDE and not change.from_worktree):
        return DirtyHiveFile(f"{path} {_HIVE_STATES[state]}", path=path)
    said = _SOURCE_STATES[state][0 if change.from_worktree else 1].format(path=path)
    kind = DirtySourceFile if state == "edited" else StagedSourceFile
    return kind(f"source file {path} {said}; then try again", path=path)


def _worktree_symlink(root: str, path: str, checked: set[str]) -> str | None:
    """The first component of ``path`` under ``root`` that is a symlink on disk (or,
    above the file itself, not a directory: nothing can be written below it)."""
    parts = [p for p in path.split("/") if p]
    for position in range(1, len(parts) + 1):
        relative = "/".join(parts[:position])
        if relative in checked:
            continue
        try:
            info = os.lstat(os.path.join(root, *parts[:position]))
        except FileNotFoundError:
            return None  # nothing below a missing component exists yet
        except OSError:
            return relative
        if stat.S_ISLNK(info.st_mode):
            return relative
        if position < len(parts):
            if not stat.S_ISDIR(info.st_mode):
                return relative
            checked.add(relative)
    return None


class _WriteLock:
    """hive's inter-process write lock (released by the OS if a process dies)."""

    def __init__(
        self,
        path: str,
        timeout: float,
        after: Callable[[], None] | None = None,
        holder: str = "another hive process held the repository lock",
    ) -> None:
        self.path = path
        self.timeout = timeout
        self.holder = holder
        self.after = after  # called once the lock is released after a successful block
        self._held: Held | None = None

    def __enter__(self) -> _WriteLock:
        from hive.git.flock import try_lock

        self._held = try_lock(self.path, self.timeout)
        if self._held is None:
            raise LockTimeout(
                f"{self.holder} for more than {self.timeout:g}s ({self.path}); {WAIT_LONGER}"
            )
        return self

    def __exit__(self, *exc: object) -> None:
        if self._held is not None:
            self._held.release()
            self._held = None
        if self.after is not None and exc[0] is None:
            self.after()


def init_repository(path: str, *, branch: str = "main") -> GitRepo:
    """Create a new, empty non-bare repository at ``path`` (like ``git init``)."""
    from dulwich.repo import Repo

    os.makedirs(path, exist_ok=True)
    repo = Repo.init(path)
    repo.refs.set_symbolic_ref(_ref("HEAD"), _ref(f"refs/heads/{branch}"))
    repo.close()
    return GitRepo.discover(path)


def tree_body(items: Mapping[bytes, tuple[int, str]]) -> bytes:
    """A tree object's body, entries in git's order (a directory sorts as ``name/``),
    byte for byte what git and dulwich write."""

    def order(name: bytes) -> bytes:
        return name + b"/" if stat.S_ISDIR(items[name][0]) else name

    return b"".join(
        f"{items[name][0]:04o}".encode("ascii")
        + b" "
        + name
        + b"\0"
        + bytes.fromhex(items[name][1])
        for name in sorted(items, key=order)
    )


def commit_body(
    tree: str,
    parents: list[str],
    who: tuple[bytes, bytes],
    dates: tuple[Date, Date],
    message: str,
) -> bytes:
    """A commit object's body as dulwich writes it (``who``: author and committer, UTF-8;
    ``dates``: theirs, each seconds and UTC offset)."""
    when = [b" " + str(stamp).encode("ascii") + b" " + _timezone(offset) for stamp, offset in dates]
    lines = [b"tree " + tree.encode("ascii")]
    lines += [b"parent " + parent.encode("ascii") for parent in parents]
    lines += [b"author " + who[0] + when[0], b"committer " + who[1] + when[1]]
    lines.append(b"encoding UTF-8")
    return b"\n".join(lines) + b"\n\n" + message.encode("utf-8")


def _timezone(offset: int) -> bytes:
    sign = "-" if offset < 0 else "+"
    minutes = abs(offset) // 60
    return f"{sign}{minutes // 60:02d}{minutes % 60:02d}".encode("ascii")


def git_config_get(root: str, name: str) -> str | None:
    """``git config --get name`` (None: unset); a config git refuses (a bogus
    ``GIT_CONFIG_COUNT``, ``GIT_CONFIG_PARAMETERS``) is a GitError with git's reason."""
    from hive.git.rungit import run_git

    found = run_git(root, "config", "--get", name)
    if found.returncode in (0, 1):
        return found.stdout.rstrip("\n") if found.returncode == 0 else None
    lines = [line for line in found.stderr.splitlines() if line.strip()]
    raise GitError(
        f"git refuses its configuration ({'; '.join(lines) or 'git config failed'}), so"
        " hive cannot read it either: fix or unset GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>,"
        " GIT_CONFIG_VALUE_<n>, GIT_CONFIG_PARAMETERS and GIT_CONFIG_NOSYSTEM, or the"
        " config file git names"
    )


def _load_config_file(path: str) -> Any:
    """One git config file (None when it cannot be opened, as git skips it); a file
    that cannot be parsed is CorruptFile naming it (git refuses to run at all)."""
    from dulwich.config import ConfigFile

    try:
        return ConfigFile.from_path(path)
    except OSError:
        return None
    except ValueError as exc:
        raise CorruptFile(
            f"{path}: not a valid git config file ({exc}); 'git config --list'"
            " names the bad line: fix it"
        ) from None


def _children_first(group: dict[str, CommitInfo]) -> Iterator[CommitInfo]:
    """The commits of ``group`` (one second's), each after every one of its children in
    the group (Kahn's order; ties by sha)."""
    import heapq

    children = dict.fromkeys(group, 0)
    for info in group.values():
        for parent in info.parents:
            if parent in children:
                children[parent] += 1
    ready = [sha for sha, count in children.items() if count == 0]
    heapq.heapify(ready)
    while ready:
        info = group[heapq.heappop(ready)]
        yield info
        for parent in info.parents:
            if parent in children:
                children[parent] -= 1
                if children[parent] == 0:
                    heapq.heappush(ready, parent)


def shown_path(path: bytes) -> str:
    """A path from a tree for a person to read: UTF-8, any byte that is not shown as a
    backslash escape (``bad\\xe9.txt``)."""
    return path.decode("utf-8", "backslashreplace")


def _is_utf8(path: bytes) -> bool:
    try:
        path.decode()
    except UnicodeDecodeError:
        return False
    return True
