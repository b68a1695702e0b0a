"""Locating repositories and reading HEAD without importing dulwich.

Start-up matters for the CLI (importing dulwich costs ~0.1 s), and many reads
only need to know which commit HEAD points at to find a cached snapshot. These
helpers read ``.git`` files directly; anything unusual returns ``None`` so the
caller falls back to dulwich.
"""

from __future__ import annotations

import errno
import itertools
import os
import time

from hive.errors import HiveError, LockTimeout, NotAGitRepository
from hive.git import killpoints
from hive.git.owners import owner_alive, owner_tag
from hive.git.shared import make_directories, share_descriptor, shared_perm
from hive.record import Frozen, suppress
from hive.waits import DEFAULT_WAIT, Backoff


class RepoPaths(Frozen):
    """Where a working tree's git data lives (a ``git worktree`` has two dirs)."""

    _fields = ("root", "git_dir", "common_dir")

    def __init__(self, root: str, git_dir: str, common_dir: str) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir

    @property
    def index_path(self) -> str:
        return os.path.join(self.git_dir, "index")

    @property
    def hive_state_dir(self) -> str:
        """hive's private, per-repository, never-committed state (locks, caches)."""
        return os.path.join(self.common_dir, "hive")

    @property
    def index_twin(self) -> str:
        """Present while a hive write is under way or was killed (hive/git/recovery.py)."""
        return os.path.join(self.git_dir, "hive-index.lock")


def discover(start: str) -> RepoPaths:
    """Find the working tree containing ``start``; raise NotAGitRepository otherwise.

    ``GIT_DIR`` and ``GIT_WORK_TREE`` are honoured as git honours them (git exports
    ``GIT_DIR`` to the hooks of a linked worktree): see :func:`_from_environment`."""
    try:
        here = os.path.abspath(os.path.expanduser(start))
    except FileNotFoundError:  # a relative ``start`` in a directory that is gone
        raise NotAGitRepository(
            "the current directory no longer exists (it was removed while this shell was"
            " in it): cd to the repository, or give its path with -C DIR"
        ) from None
    if not os.path.isdir(here):
        what = "is a file, not a directory" if os.path.exists(here) else "no such directory"
        raise NotAGitRepository(f"{start}: {what}")
    if os.environ.get("GIT_DIR") or os.environ.get("GIT_WORK_TREE"):
        return _from_environment(here)
    return discover_ignoring_environment(here)


def _from_environment(here: str) -> RepoPaths:
    """The repository ``GIT_DIR`` names (relative to ``here``, as ``git -C here`` reads
    it), its working tree ``GIT_WORK_TREE``, else ``core.worktree``, else ``here``
    itself (git: "the current directory is regarded as the top level of the working
    tree"); ``GIT_WORK_TREE`` alone names the working tree of the repository found
    from ``here``. Both are then exported as absolute paths, as git exports what it set
    up, so every ``git`` hive runs acts on the same repository."""
    named = os.environ.get("GIT_DIR")
    tree = os.environ.get("GIT_WORK_TREE")
    if not named:
        dotgit = discover_ignoring_environment(here)
        root = os.path.normpath(os.path.join(here, tree or ""))
        found = RepoPaths(root=root, git_dir=dotgit.git_dir, common_dir=dotgit.common_dir)
    else:
        git_dir = os.path.normpath(os.path.join(here, named))
        if not os.path.isfile(os.path.join(git_dir, "HEAD")):
            raise NotAGitRepository(
                f"GIT_DIR={named} is not a git directory (git says 'not a git repository'"
                " too): point it at one, or unset it"
            )
        common_dir = _common_dir(git_dir)
        root = _environment_worktree(here, tree, git_dir, common_dir)
        _refuse_unsupported_format(root, common_dir)
        found = RepoPaths(root=root, git_dir=git_dir, common_dir=common_dir)
    os.environ["GIT_DIR"] = found.git_dir
    os.environ["GIT_WORK_TREE"] = found.root
    return found


def _environment_worktree(here: str, tree: str | None, git_dir: str, common_dir: str) -> str:
    if tree:
        return os.path.normpath(os.path.join(here, tree))
    from hive.git.configfile import Unsure, config_value, is_true

    config = RepoPaths(root=here, git_dir=git_dir, common_dir=common_dir)
    with suppress(Unsure):
        # git reads these from the repository's own file, not from ``git -c``
        worktree = config_value(config, "core", "worktree", environment=False)
        if worktree:
            return os.path.normpath(os.path.join(git_dir, worktree))
        bare = config_value(config, "core", "bare", environment=False)
        if git_dir == common_dir and is_true(bare):
            raise NotAGitRepository(
                f"GIT_DIR={git_dir} is a bare repository: hive needs a working tree"
                " (set GIT_WORK_TREE too, or add one with 'git worktree add')"
            )
    return here


def discover_ignoring_environment(here: str) -> RepoPaths:
    """:func:`discover` from ``here`` by looking for ``.git`` upwards only."""
    probe = here
    while True:
        dotgit = os.path.join(probe, ".git")
        if os.path.isdir(dotgit) or os.path.isfile(dotgit):
            return _paths_for(probe, dotgit)
        parent = os.path.dirname(probe)
        if parent == probe:
            raise _no_working_tree(here)
        probe = parent


def _no_working_tree(start: str) -> NotAGitRepository:
    """The error for ``start``: inside a bare repository, or in no repository at all."""
    probe = start
    while True:
        if (
            os.path.isfile(os.path.join(probe, "HEAD"))
            and os.path.isdir(os.path.join(probe, "objects"))
            and os.path.isdir(os.path.join(probe, "refs"))
        ):
            return NotAGitRepository(
                f"{probe} is a bare repository: hive needs a working tree"
                " (clone it, or add one with 'git worktree add')"
            )
        parent = os.path.dirname(probe)
        if parent == probe:
            return NotAGitRepository(
                f"{start} is not inside a git repository (run 'git init' first)"
            )
        probe = parent


def _paths_for(root: str, dotgit: str) -> RepoPaths:
    git_dir = dotgit
    if os.path.isfile(dotgit):
        git_dir = _read_gitdir_file(dotgit, root)
        if not os.path.isfile(os.path.join(git_dir, "HEAD")):  # what git checks first
            raise NotAGitRepository(
                f"{dotgit} points at {git_dir}, which is not a git directory (git says"
                " 'not a git repository' too): fix the path in it, or remove it"
            )
    common_dir = _common_dir(git_dir)
    _refuse_unsupported_format(root, common_dir)
    return RepoPaths(root=root, git_dir=git_dir, common_dir=common_dir)


def _common_dir(git_dir: str) -> str:
    """The repository's shared git directory (a linked worktree's ``commondir``)."""
    commondir_file = os.path.join(git_dir, "commondir")
    if os.path.isfile(commondir_file):
        with open(commondir_file, encoding="utf-8") as handle:
            return os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    return git_dir


# ``extensions`` settings of a repository whose objects or refs hive cannot write:
# SHA-256 object ids (hive would write SHA-1 objects: git then calls the branch
# broken) and the reftable ref store (refs not in files, where hive reads them).
_UNSUPPORTED = {
    "objectformat=sha256": "its objects use SHA-256 (extensions.objectFormat)",
    "refstorage=reftable": "its refs are stored in a reftable (extensions.refStorage)",
}


def _refuse_unsupported_format(root: str, common_dir: str) -> None:
    try:
        with open(os.path.join(common_dir, "config"), "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return
    for line in text.splitlines():
        why = _UNSUPPORTED.get(line.strip().replace(" ", "").replace("\t", "").lower())
        if why is not None:
            raise NotAGitRepository(
                f"{root}: hive cannot work in this repository: {why}; hive writes"
                " SHA-1 objects and loose refs (use a repository made by plain 'git init')"
            )


def _read_gitdir_file(dotgit: str, root: str) -> str:
    try:
        with open(dotgit, encoding="utf-8") as handle:
            content = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        content = ""
    if not content.startswith("gitdir:"):
        raise NotAGitRepository(f"{dotgit}: not a gitdir link")
    return os.path.normpath(os.path.join(root, content[len("gitdir:") :].strip()))


class HeadRef(Frozen):
    """What HEAD points at: a branch (``ref``) or a detached commit (``ref`` None)."""

    _fields = ("ref", "commit")

    def __init__(self, ref: str | None, commit: str | None) -> None:
        self.ref = ref
        self.commit = commit


SYMREF_DEPTH = 5  # git's SYMREF_MAXDEPTH: symbolic refs followed from HEAD


def read_head_fast(paths: RepoPaths) -> HeadRef | None:
    """HEAD's branch and commit read from files, or None when it needs dulwich. A
    branch that is itself a symbolic ref (``refs/heads/alias`` holding ``ref:
    refs/heads/main``, a renamed branch's old name) is followed as git follows it: the
    branch is the one at the end (its commit, the one a write moves)."""
    head = _read_head_file(paths)
    if head is None:
        return None
    if not head.startswith("ref: "):
        return HeadRef(ref=None, commit=head) if is_sha(head) else None
    ref = head[len("ref: ") :]
    for _ in range(SYMREF_DEPTH):
        loose = _read_loose_value(paths, ref)
        if loose is None or not loose.startswith("ref: "):
            break
        ref = loose[len("ref: ") :]
    else:
        return None  # a chain longer than git follows: dulwich says what it makes of it
    commit = loose if loose is not None and is_sha(loose) else None
    if commit is None:
        commit = _read_packed_ref(paths.common_dir, ref)
    return HeadRef(ref=ref, commit=commit)


def other_worktree_heads(paths: RepoPaths) -> list[HeadRef]:
    """HEAD of every other worktree of this repository (``git worktree list``): the
    main one (``<common>/HEAD``, unless the repository is bare) and each linked one
    (``<common>/worktrees/*/HEAD``). Unreadable entries are skipped."""
    dirs = [paths.common_dir]
    with suppress(OSError):
        base = os.path.join(paths.common_dir, "worktrees")
        dirs += [os.path.join(base, name) for name in sorted(os.listdir(base))]
    found: list[HeadRef] = []
    mine = os.path.normcase(os.path.realpath(paths.git_dir))
    for git_dir in dirs:
        if os.path.normcase(os.path.realpath(git_dir)) == mine:
            continue
        if git_dir == paths.common_dir and _is_bare(paths.common_dir):
            continue
        head = read_head_fast(RepoPaths(root="", git_dir=git_dir, common_dir=paths.common_dir))
        if head is not None and head.commit is not None:
            found.append(head)
    return found


def _is_bare(common_dir: str) -> bool:
    """True when the main repository has no working tree (``core.bare = true``)."""
    try:
        with open(os.path.join(common_dir, "config"), encoding="utf-8") as handle:
            text = handle.read()
    except OSError:
        return False
    return any(line.strip().replace(" ", "").lower() == "bare=true" for line in text.splitlines())


def read_ref_fast(paths: RepoPaths, ref: str) -> str | None:
    """A ref's value from the loose ref file or packed-refs (None if absent)."""
    return _read_loose_ref(paths, ref) or _read_packed_ref(paths.common_dir, ref)


def ref_absent(paths: RepoPaths, ref: str) -> bool:
    """Whether ``ref`` certainly does not exist: nothing where its loose file would be,
    and no line of packed-refs names it (or there is none). False when unsure (a
    packed-refs that cannot be read): the caller asks dulwich, which would answer the
    same without being imported for a ref not made yet (``refs/hive/mail`` before the
    first message)."""
    if os.path.lexists(ref_file(paths, ref)):
        return False
    try:
        with open(os.path.join(paths.common_dir, "packed-refs"), "rb") as handle:
            packed = handle.read()
    except FileNotFoundError:
        return True
    except OSError:
        return False
    name = b" " + ref.encode("utf-8")
    return name + b"\n" not in packed and not packed.endswith(name)


TRACKING_PREFIX = "refs/hive-remotes"  # where a fetch keeps each remote's refs/hive/*


def tracking_tips(paths: RepoPaths, name: str) -> dict[str, str]:
    """Each remote's ``refs/hive-remotes/<remote>/<name>`` (what a plain ``git fetch``
    with the refspecs ``hive init`` sets, or a sync, brought) and its commit, loose or
    packed (a loose file wins, as in git), read without dulwich."""
    found: dict[str, str] = {}
    with suppress(OSError):
        for line in _packed_lines(paths.common_dir, TRACKING_PREFIX + "/"):
            sha, _, ref = line.partition(" ")
            if _is_tracking(ref, name) and is_sha(sha):
                found[ref] = sha
    base = os.path.join(paths.common_dir, TRACKING_PREFIX)
    with suppress(OSError):
        for remote in sorted(os.listdir(base)):
            ref = f"{TRACKING_PREFIX}/{remote}/{name}"
            loose = _read_loose_ref(paths, ref)
            if loose is not None:
                found[ref] = loose
    return found


def _is_tracking(ref: str, name: str) -> bool:
    head, _, leaf = ref.rpartition("/")
    return leaf == name and head.startswith(TRACKING_PREFIX + "/") and head.count("/") == 2


def _packed_lines(common_dir: str, containing: str) -> list[str]:
    """The ref lines of packed-refs (``SHA NAME``; none when there is no such file)
    holding `` containing`` (a name, or the start of one), found by a search of the
    file's bytes: a file of many refs (tags, remotes) is not split and decoded whole
    for the few lines asked for. A name git took in bytes that are not UTF-8 is read
    with them escaped (never equal to a name hive asks for)."""
    try:
        with open(os.path.join(common_dir, "packed-refs"), "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return []
    wanted = b" " + containing.encode("utf-8", "surrogateescape")
    lines: list[str] = []
    at = data.find(wanted)
    while at != -1:
        start = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        stop = len(data) if stop == -1 else stop
        line = data[start:stop]
        if not line.startswith((b"#", b"^")):
            lines.append(line.decode("utf-8", "surrogateescape"))
        at = data.find(wanted, stop)
    return lines


def _read_loose_ref(paths: RepoPaths, ref: str) -> str | None:
    value = _read_loose_value(paths, ref)
    return value if value is not None and is_sha(value) else None


def _read_loose_value(paths: RepoPaths, ref: str) -> str | None:
    """What the loose file of ``ref`` holds (an id, or ``ref: OTHER``), or None."""
    try:
        with open(ref_file(paths, ref), "rb") as handle:
            return _ascii_text(handle.read())
    except OSError:
        return None


def _read_packed_ref(common_dir: str, ref: str) -> str | None:
    try:
        lines = _packed_lines(common_dir, ref)
    except OSError:
        return None
    for line in lines:
        sha, _, name = line.partition(" ")
        if name == ref and is_sha(sha):
            return sha
    return None


def is_sha(value: str) -> bool:
    """Whether ``value`` is an object id as git writes it (full, lower-case hex)."""
    return len(value) in (40, 64) and all(ch in "0123456789abcdef" for ch in value)


# ---------------------------------------------------------------- ref updates

_ZERO = "0" * 40
STALE_CHECK_EVERY = 10  # tries between looks for a lock left by a dead hive process


def compare_and_swap(
    paths: RepoPaths,
    ref: str,
    old: str | None,
    new: str,
    *,
    who: str,
    message: str,
    timeout: float = DEFAULT_WAIT,
) -> bool:
    """Move ``ref`` from ``old`` (None: the ref must not exist) to ``new`` under git's
    ``<ref>.lock`` protocol; False when the ref holds anything else.

    Like ``git update-ref``: the value is re-read under the lock, the file is
    replaced atomically, and the reflog gets a line where git keeps one
    (branches and HEAD, or any ref whose log already exists). As with git's
    default ``core.fsync``, the ref file is not fsynced.

    The lock is taken by hard-linking a complete twin file
    (``<ref>.hive-<owner>.lock``, which git ignores as it ignores every
    ``*.lock`` under ``refs/``) to ``<ref>.lock``: the lock never exists
    without its content, and a lock whose twin's owner died is known to be
    hive's and is removed by the next writer that finds it. Another process's
    lock is waited for ``timeout`` seconds (a write's lock wait: ``HIVE_LOCK_TIMEOUT``
    or ``lock_timeout_seconds``, as for git's ``index.lock``), with the same backoff.
    """
    path = ref_file(paths, ref)
    lock = path + ".lock"
    twin = _ref_twin(path)
    if not os.path.isdir(os.path.dirname(lock)):
        make_directories(paths, os.path.dirname(lock))
    linked = _lock_ref(lock, twin, f"{new}\n".encode("ascii"), shared_perm(paths), timeout)
    moved = False
    try:
        current = read_ref_fast(paths, ref)
        if current != old:
            return False
        killpoints.reached("ref-locked")
        os.replace(lock, path)
        moved = True
        killpoints.reached("after-ref-swap")
    finally:
        if not moved:
            _unlink_quietly(lock)
        if linked:
            _unlink_quietly(twin)
    _log_ref_update(paths, ref, old, new, who=who, message=message)
    killpoints.reached("after-reflog")
    return True


def ref_file(paths: RepoPaths, ref: str) -> str:
    """Where the loose file of ``ref`` lives (HEAD per worktree, refs/ shared)."""
    base = paths.common_dir if ref.startswith("refs/") else paths.git_dir
    return os.path.join(base, ref)


def _ref_twin(path: str) -> str:
    return f"{path}{_TWIN_MARK}{owner_tag()}.{next(_SERIAL)}.lock"


_TWIN_MARK = ".hive-"
_SERIAL = itertools.count()


def _lock_ref(lock: str, twin: str, content: bytes, perm: int, timeout: float) -> bool:
    """Create ``lock`` holding ``content``, waiting up to ``timeout`` seconds for
    another process's (``waits.Backoff``); True when it is linked to ``twin`` (False
    on a filesystem without hard links: then it is created directly). Its mode is
    git's for the repository's ``core.sharedRepository`` (``perm``), which the ref
    file keeps once the lock is renamed over it."""
    os.makedirs(os.path.dirname(lock), exist_ok=True)
    _create_with(twin, content, perm)
    linked = True
    backoff = Backoff(timeout)
    try:
        for attempt in itertools.count():
            try:
                if linked:
                    os.link(twin, lock)
                else:
                    _create_with(lock, content, perm)
                return linked
            except FileExistsError:
                if attempt % STALE_CHECK_EVERY == 0 and remove_stale_ref_lock(lock):
                    continue
                if not backoff.pause():
                    break
            except OSError as error:
                if not linked or error.errno not in _NO_HARD_LINKS:
                    raise
                linked = False
                _unlink_quietly(twin)
    except BaseException:
        _unlink_quietly(twin)
        raise
    _unlink_quietly(twin)
    raise LockTimeout(
        f"{lock} exists: another git process held this ref for more than {timeout:g}s"
        " (remove the file if no git process is running)"
    )


_NO_HARD_LINKS = (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK, errno.ENOSYS)


def _create_with(path: str, content: bytes, perm: int) -> None:
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        os.write(descriptor, content)
        share_descriptor(perm, descriptor)
    finally:
        os.close(descriptor)


def remove_stale_ref_lock(lock: str) -> bool:
    """Remove ``lock`` if a hive process that has died created it; True if removed.

    Twins of dead owners found on the way are removed too. A lock without a
    hive twin (git's own, or anyone else's) is never touched.
    """
    directory, name = os.path.split(lock)
    prefix = name[: -len(".lock")] + _TWIN_MARK
    removed = False
    try:
        names = os.listdir(directory)
    except OSError:
        return False
    for entry in names:
        if not (entry.startswith(prefix) and entry.endswith(".lock")):
            continue
        tag = entry[len(prefix) : -len(".lock")].partition(".")[0]
        if owner_alive(tag):
            continue
        twin = os.path.join(directory, entry)
        with suppress(OSError):
            if os.path.samefile(twin, lock):
                os.unlink(lock)
                removed = True
        _unlink_quietly(twin)
    return removed


def _unlink_quietly(path: str) -> None:
    with suppress(FileNotFoundError):
        os.unlink(path)


def _log_ref_update(
    paths: RepoPaths, ref: str, old: str | None, new: str, *, who: str, message: str
) -> None:
    stamp = int(time.time())
    offset = time.localtime(stamp).tm_gmtoff or 0
    if os.environ.get("GIT_COMMITTER_DATE"):  # git's reflog line: the committer's date
        from hive.git.dates import commit_date

        with suppress(HiveError):  # refused before the commit was written
            stamp, offset = commit_date("committer", stamp)
    sign = "-" if offset < 0 else "+"
    zone = f"{sign}{abs(offset) // 3600:02d}{abs(offset) % 3600 // 60:02d}"
    line = f"{old or _ZERO} {new} {who} {stamp} {zone}\t{message}\n".encode()
    base = paths.common_dir if ref.startswith("refs/") else paths.git_dir
    own_log = os.path.join(base, "logs", ref)
    logs = []
    if ref == "HEAD" or ref.startswith("refs/heads/") or os.path.exists(own_log):
        logs.append(own_log)  # git logs branches and HEAD, and refs that have a log
    if ref != "HEAD" and read_symbolic_head(paths) == ref:
        logs.append(os.path.join(paths.git_dir, "logs", "HEAD"))
    for log in logs:
        with suppress(OSError):
            if not os.path.isdir(os.path.dirname(log)):
                make_directories(paths, os.path.dirname(log))
            with open(log, "ab") as handle:
                handle.write(line)
                _share_log(paths, handle.fileno())


def _share_log(paths: RepoPaths, descriptor: int) -> None:
    """A reflog gets git's mode in a shared repository (git adjusts it at each update)."""
    share_descriptor(shared_perm(paths), descriptor)


def read_symbolic_head(paths: RepoPaths) -> str | None:
    """The branch HEAD points at (at the end of a chain of symbolic refs, as
    :func:`read_head_fast` follows it), or None when it is detached or unreadable."""
    head = read_head_fast(paths)
    return head.ref if head is not None else None


def _read_head_file(paths: RepoPaths) -> str | None:
    try:
        with open(os.path.join(paths.git_dir, "HEAD"), "rb") as handle:
            return _ascii_text(handle.read())
    except OSError:
        return None


def _ascii_text(data: bytes) -> str | None:
    """A ref file's text, stripped, when it is ASCII (else None): what reading it as text
    in the ``ascii`` encoding gave (universal newlines), without importing that codec
    (~0.2 ms of a fresh read)."""
    if not data.isascii():
        return None
    return data.decode().replace("\r\n", "\n").replace("\r", "\n").strip()
