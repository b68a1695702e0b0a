"""Sparse checkout (``git sparse-checkout``): which paths git keeps out of the working
tree, so that hive writes its files into the index as git would.

With ``core.sparseCheckout`` on, ``$GIT_DIR/info/sparse-checkout`` (one per worktree)
lists the paths that are checked out; every other tracked path has the *skip-worktree*
bit in the index and no file in the working tree. git keeps that bit on an entry a
checkout or merge rewrites, and gives it to a path it adds outside the sparse set. In
cone mode (``core.sparseCheckoutCone``, what ``git sparse-checkout set DIR`` writes)
the file names directories: the files at the top, every file under a listed
directory, and the files directly in each of its parents; otherwise the lines are
``.gitignore`` patterns, the last one that matches deciding (as in git, a file no
pattern matches is decided by its nearest matched directory, else it is out)."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.git.index import IndexEntry
    from hive.git.refs import RepoPaths


class SparseSet:
    """The paths a sparse checkout keeps in the working tree."""

    def __init__(self, includes: Callable[[str], bool]) -> None:
        self.includes = includes  # repository-relative path -> checked out


def sparse_set(paths: RepoPaths) -> SparseSet | None:
    """The sparse checkout of this worktree; None when there is none (``core.sparseCheckout``
    off, or no pattern file: git then checks out everything)."""
    from hive.git.configfile import flag

    if not flag(paths, "core", "sparseCheckout"):
        return None
    try:
        with open(os.path.join(paths.git_dir, "info", "sparse-checkout"), "rb") as handle:
            text = handle.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line and not line.startswith("#")]
    if flag(paths, "core", "sparseCheckoutCone"):
        cone = _cone(lines)
        if cone is not None:  # git too falls back to patterns when the file is not a cone
            return SparseSet(cone)
    return SparseSet(_patterns(lines))


def _cone(lines: list[str]) -> Callable[[str], bool] | None:
    """Cone mode: ``/*`` and ``!/*/`` (the top), ``/D/`` (everything under D), and ``/P/``
    followed by ``!/P/*/`` (only the files directly in P, a parent of a listed
    directory); None when a line is none of these."""
    listed: set[str] = set()
    parents: set[str] = set()
    for line in lines:
        if line in ("/*", "!/*/"):
            continue
        negated = line.startswith("!")
        body = line[1:] if negated else line
        if not body.startswith("/") or not body.endswith("/") or len(body) < 2:
            return None
        if negated:
            if not body.endswith("/*/"):
                return None
            parents.add(_unescape(body[1:-3]))
        else:
            listed.add(_unescape(body[1:-1]))
    recursive = listed - parents

    def includes(path: str) -> bool:
        directory = path.rpartition("/")[0]
        if not directory or directory in parents:
            return True
        parts = directory.split("/")
        return any("/".join(parts[:depth]) in recursive for depth in range(1, len(parts) + 1))

    return includes


def _unescape(text: str) -> str:
    """A cone pattern's directory name: git escapes ``\\``, ``*``, ``?``, ``[`` with ``\\``."""
    out: list[str] = []
    escaped = False
    for char in text:
        if char == "\\" and not escaped:
            escaped = True
            continue
        out.append(char)
        escaped = False
    return "".join(out)


def _patterns(lines: list[str]) -> Callable[[str], bool]:
    """Non-cone mode: ``.gitignore`` patterns that include (dulwich matches them)."""
    from dulwich.sparse_patterns import match_sparse_patterns, parse_sparse_patterns

    parsed = parse_sparse_patterns(lines)
    return lambda path: match_sparse_patterns(path, parsed, path_is_dir=False)


def kept_out(paths: RepoPaths, entries: dict[str, IndexEntry], written: list[str]) -> set[str]:
    """Of the paths in ``written`` (files a write puts in the working tree), those git
    keeps out of it: an entry with the skip-worktree bit and no file (git clears the
    bit of a file that is there anyway), and a new path outside the sparse set."""
    kept: set[str] = set()
    new: list[str] = []
    for path in written:
        entry = entries.get(path)
        if entry is None:
            new.append(path)
        elif entry.skip_worktree and not os.path.lexists(os.path.join(paths.root, path)):
            kept.add(path)
    sparse = sparse_set(paths) if new else None
    if sparse is not None:
        kept.update(path for path in new if not sparse.includes(path))
    return kept
