"""hive's synced state ref, ``refs/hive/state``, at the object level.

Each commit on it has a root tree holding only ``.hive`` (the hive files of a
clone's branch at a sync); a commit that joins two clones' states has both
tips as parents, so the merge base of two states is always known.
"""

from __future__ import annotations

from hive.errors import CorruptFile
from hive.git.pathhistory import changed_blobs_by_git, git_output, history_fixed, merge_bases
from hive.git.refs import HeadRef
from hive.git.repo import TREE_MODE, GitRepo, Identity, shown_path
from hive.git.sha import object_id

HIVE_DIR = ".hive"


class RepoHistory:
    """The questions of a merge answered through ``repo`` (every object readable)."""

    def __init__(self, repo: GitRepo) -> None:
        self.repo = repo

    def head_commit(self) -> str | None:
        return self.repo.head().commit

    def blob_at(self, commit: str, path: str) -> str | None:
        """The blob ``path`` is in ``commit`` (None: absent, or not a file)."""
        return self.repo.lookup_path(self.repo.commit_tree(commit), path)

    def versions(self, commit: str, path: str, *, limit: int) -> list[str]:
        return path_versions(self.repo, commit, path, limit=limit)

    def read_blob(self, sha: str) -> bytes:
        return self.repo.read_blob(sha)


def hive_tree(repo: GitRepo, commit: str | None) -> str | None:
    """The ``.hive`` tree of ``commit`` (None when it has none)."""
    if commit is None:
        return None
    return repo.lookup_path(repo.commit_tree(commit), HIVE_DIR, want_tree=True)


GITLINK_MODE = 0o160000  # a submodule's commit: no file of hive's (``tree_listing`` skips it)
FileSides = dict[str, tuple[str | None, str | None]]


def differing_files(repo: GitRepo, old: str | None, new: str | None, prefix: str) -> FileSides:
    """The files whose blob differs between trees ``old`` and ``new`` (None: empty): path
    (joined to ``prefix``) -> (old blob, new blob), None on the side that lacks it. The
    files are those ``GitRepo.tree_listing`` lists (a submodule is none); subtrees equal
    on both sides are not read (``GitRepo.entries_between``), so a sync reads what
    changed, not every cell file."""
    found: FileSides = {}
    for name, (was, now) in repo.entries_between(old, new).items():
        sides = (_kinds(was)[0], _kinds(now)[0])
        if sides[0] != sides[1]:
            found[_hive_path(prefix, name)] = sides
    return found


def _hive_path(prefix: str, name: bytes) -> str:
    """``name`` (a path below ``prefix``) as text; a name that is not UTF-8 is refused
    naming it: hive names its files in UTF-8 and cannot merge one it cannot name."""
    try:
        text = name.decode()
    except UnicodeDecodeError:
        shown = f"{prefix}/{shown_path(name)}" if prefix else shown_path(name)
        raise CorruptFile(
            f"{shown}: a file whose name is not UTF-8 (hive names its files in UTF-8 and"
            " cannot merge this one): rename or remove it with git mv or git rm, commit,"
            " and sync again",
            path=shown,
        ) from None
    return f"{prefix}/{text}" if prefix else text


def _kinds(entry: tuple[int, str] | None) -> tuple[str | None, str | None]:
    """(the blob, the tree) a tree entry is."""
    if entry is None or entry[0] == GITLINK_MODE:
        return None, None
    return (None, entry[1]) if entry[0] == TREE_MODE else (entry[1], None)


def file_at(repo: GitRepo, tree: str | None, path: str) -> str | None:
    """The blob of file ``path`` in ``tree`` (None: absent, a tree or a submodule), as
    ``GitRepo.tree_listing`` would list it."""
    if tree is None:
        return None
    folder, _, name = path.rpartition("/")
    holder = repo.lookup_path(tree, folder, want_tree=True) if folder else tree
    if holder is None:
        return None
    return _kinds(repo.tree_items(holder).get(name.encode()))[0]


def merge_base(repo: GitRepo, a: str | None, b: str | None) -> str | None:
    """The best common ancestor of two commits (None when unrelated or one is None)."""
    if a is None or b is None:
        return None
    if a == b:
        return a
    single = _single_base_by_git(repo, a, b)
    if single is not None:
        return single
    from dulwich.graph import find_merge_base

    found = find_merge_base(repo.dulwich, [object_id(a), object_id(b)])
    return found[0].decode() if found else None


def _single_base_by_git(repo: GitRepo, a: str, b: str) -> str | None:
    """The best common ancestor of ``a`` and ``b`` as the real ``git merge-base --all``
    names it, when it names exactly one (the best common ancestors are a set: one is
    dulwich's answer too, without importing dulwich, ~40 ms); None when it names none
    or several (dulwich picks among them), cannot answer, or the history is not all
    there is (a shallow clone, grafts, replace refs: git's walk and dulwich's differ)."""
    if not history_fixed(repo.paths.common_dir):
        return None
    named = merge_bases(repo.root, a, b)
    return named[0] if named is not None and len(named) == 1 else None


def state_commit(
    repo: GitRepo, hive: str | None, parents: list[str], message: str, author: Identity
) -> str:
    """A commit whose root tree holds just ``.hive`` = ``hive`` (empty when None)."""
    items = {} if hive is None else {HIVE_DIR.encode(): (TREE_MODE, hive)}
    unique = list(dict.fromkeys(parents))
    return repo.write_commit(repo.store_tree(items), unique, message, author)


SEEN_DIR = "seen"  # .hive/seen/<blob id>, in a seen_commit only
BLOB_MODE = 0o100644


def seen_commit(
    repo: GitRepo, blobs: list[str], message: str, author: Identity, on: str | None = None
) -> str | None:
    """A commit whose tree holds ``.hive/seen/<id>`` for each blob id in ``blobs``. A
    parent of a state commit, it puts in that state's history versions of hive files a
    clone's branch had but never synced (a cell a ``git pull`` brought, then edited), so
    the other clones see them as versions this side had (:func:`history_blobs`), not as
    edits of their own to merge against it. An id this repository does not hold (a
    submodule's commit under ``.hive``) is left out; None when no id is left.

    ``on``: the remote state it is made for (None: none, and no parent). Its ``.hive``
    files are the commit's too, and it is the one parent: against it the commit adds
    ``.hive/seen`` alone, and the state it joins differs from it by what that sync
    changed. Parentless with ``.hive/seen`` alone, every hive file was an addition in
    ``git log --raw -m`` of the state's history (the state against it): ~10,000 lines
    at 10,000 cells for the next sync of each clone to read."""
    seen = {blob.encode(): (BLOB_MODE, blob) for blob in set(blobs) if repo.has_object(blob)}
    if not seen:
        return None
    base = hive_tree(repo, on)
    items = dict(repo.tree_items(base)) if base is not None else {}
    items[SEEN_DIR.encode()] = (TREE_MODE, repo.store_tree(seen))
    return state_commit(repo, repo.store_tree(items), [on] if on else [], message, author)


def move_ref(
    repo: GitRepo,
    ref: str,
    old: str | None,
    new: str,
    author: Identity,
    message: str,
    timeout: float,
) -> bool:
    """Compare-and-swap ``ref`` from ``old`` to ``new``; False when it moved meanwhile
    (another process's ref lock waited for ``timeout`` seconds)."""
    if old == new:
        return True
    return repo.swap_ref(HeadRef(ref=ref, commit=old), new, author, message, timeout)


def history_blobs(repo: GitRepo, tip: str | None, *, limit: int, side: str = "") -> set[str]:
    """Every blob id that was under ``.hive`` in ``tip`` or its ancestors: the versions
    of hive files that side already had. Read by the real ``git`` (both sides of every
    change in the newest ``limit`` commits that changed ``.hive``, and when there are
    that many, the files of ``tip`` too: ~80 ms for 2,000 commits where reading them
    here took ~0.35 s); what each commit changed is remembered, and the next sync asks
    git only about the commits since (:mod:`hive.git.historycache`; ``side`` names whose
    history it is, "ours" or "theirs", each remembered apart). Without a usable
    ``git``, the trees of the newest ``limit`` commits, read here."""
    from hive.git.historycache import HistoryCache

    if tip is None:
        return set()
    paths = repo.paths
    state_dir = paths.hive_state_dir
    cache = HistoryCache(repo.root, paths.common_dir, state_dir, limit=limit, side=side)
    walked = cache.versions(tip, HIVE_DIR)
    if walked is None:
        return _history_blobs_read(repo, tip, limit=limit)
    if walked[0] < limit and cache.usable:
        # the whole history: every file of tip is a version one of its commits named
        return walked[1]
    held = _tree_blobs_by_git(repo.root, tip)
    if held is None:
        return _history_blobs_read(repo, tip, limit=limit)
    return held.union(walked[1])


def _tree_blobs_by_git(root: str, tip: str) -> set[str] | None:
    """The blob ids under ``.hive`` in ``tip`` (``git ls-tree -r``); None when git cannot
    answer."""
    output = git_output(root, "--literal-pathspecs", "ls-tree", "-r", tip, "--", HIVE_DIR)
    if output is None:
        return None
    found: set[str] = set()
    for line in output.splitlines():
        fields = line.split("\t", 1)[0].split()
        if len(fields) != 3:
            return None
        if fields[1] == "blob":
            found.add(fields[2])
    return found


def _history_blobs_read(repo: GitRepo, tip: str, *, limit: int) -> set[str]:
    """:func:`history_blobs` read object by object: the newest ``limit`` commits by date.
    Shared subtrees are read once, so a long history of small changes stays cheap."""
    found: set[str] = set()
    seen_trees: set[str] = set()
    for info in repo.iter_commits(tip, limit=limit):
        pending = [hive_tree(repo, info.sha)]
        while pending:
            tree = pending.pop()
            if tree is None or tree in seen_trees:
                continue
            seen_trees.add(tree)
            for mode, sha in repo.tree_items(tree).values():
                if mode == TREE_MODE:
                    pending.append(sha)
                else:
                    found.add(sha)
    return found


def path_versions(repo: GitRepo, tip: str | None, path: str, *, limit: int) -> list[str]:
    """The blob ids ``path`` (below ``.hive``) had in ``tip`` and its ancestors, newest
    first, each once: at most ``limit`` commits that changed it, read by the real ``git
    log`` (its history walk prunes unchanged trees in C: ~15 ms for 2,000 commits where
    reading them here took ~0.3-0.7 s). Without a usable ``git``: the newest ``limit``
    commits by date, read here."""
    if tip is None:
        return []
    by_git = changed_blobs_by_git(repo.root, tip, path, limit=limit)
    if by_git is not None:
        return by_git
    return _path_versions_read(repo, tip, path, limit=limit)


def _path_versions_read(repo: GitRepo, tip: str, path: str, *, limit: int) -> list[str]:
    """:func:`path_versions` read object by object: the newest ``limit`` commits by date.
    Commits that left ``.hive`` as it was are skipped after one tree read."""
    found: dict[str, None] = {}  # an ordered set
    inner = path.removeprefix(HIVE_DIR + "/")
    seen_trees: set[str] = set()
    for info in repo.iter_commits(tip, limit=limit):
        tree = hive_tree(repo, info.sha)
        if tree is None or tree in seen_trees:
            continue
        seen_trees.add(tree)
        blob = repo.lookup_path(tree, inner)
        if blob is not None:
            found.setdefault(blob)
    return list(found)
