"""Locating repositories and reading HEAD without importing dulwich.

Start-up matters for the CLI (importing dulwich costs ~0.1 s), and many reads
only need to know which commit HEAD points at to find a cached snapshot. These
helpers read ``.git`` files directly; anything unusual returns ``None`` so the
caller falls back to dulwich.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from hive.errors import NotAGitRepository


@dataclass(frozen=True)
class RepoPaths:
    """Where a working tree's git data lives (a ``git worktree`` has two dirs)."""

    root: str
    git_dir: str
    common_dir: str

    @property
    def index_path(self) -> str:
        return os.path.join(self.git_dir, "index")

    @property
    def hive_state_dir(self) -> str:
        """hive's private, per-repository, never-committed state (locks, caches)."""
        return os.path.join(self.common_dir, "hive")


def discover(start: str) -> RepoPaths:
    """Find the working tree containing ``start``; raise NotAGitRepository otherwise."""
    here = os.path.abspath(start)
    if not os.path.isdir(here):
        raise NotAGitRepository(f"{start}: no such directory")
    probe = here
    while True:
        dotgit = os.path.join(probe, ".git")
        if os.path.isdir(dotgit) or os.path.isfile(dotgit):
            return _paths_for(probe, dotgit)
        parent = os.path.dirname(probe)
        if parent == probe:
            raise NotAGitRepository(f"{here} is not inside a git repository (run 'git init' first)")
        probe = parent


def _paths_for(root: str, dotgit: str) -> RepoPaths:
    git_dir = dotgit
    if os.path.isfile(dotgit):
        git_dir = _read_gitdir_file(dotgit, root)
    common_dir = git_dir
    commondir_file = os.path.join(git_dir, "commondir")
    if os.path.isfile(commondir_file):
        with open(commondir_file, encoding="utf-8") as handle:
            common_dir = os.path.normpath(os.path.join(git_dir, handle.read().strip()))
    return RepoPaths(root=root, git_dir=git_dir, common_dir=common_dir)


def _read_gitdir_file(dotgit: str, root: str) -> str:
    with open(dotgit, encoding="utf-8") as handle:
        content = handle.read().strip()
    if not content.startswith("gitdir:"):
        raise NotAGitRepository(f"{dotgit}: not a gitdir link")
    return os.path.normpath(os.path.join(root, content[len("gitdir:") :].strip()))


@dataclass(frozen=True)
class HeadRef:
    """What HEAD points at: a branch (``ref``) or a detached commit (``ref`` None)."""

    ref: str | None
    commit: str | None


def read_head_fast(paths: RepoPaths) -> HeadRef | None:
    """HEAD's branch and commit read from files, or None when it needs dulwich."""
    try:
        with open(os.path.join(paths.git_dir, "HEAD"), encoding="ascii") as handle:
            head = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not head.startswith("ref: "):
        return HeadRef(ref=None, commit=head) if _is_sha(head) else None
    ref = head[len("ref: ") :]
    commit = _read_loose_ref(paths, ref)
    if commit is None:
        commit = _read_packed_ref(paths.common_dir, ref)
    return HeadRef(ref=ref, commit=commit)


def read_ref_fast(paths: RepoPaths, ref: str) -> str | None:
    """A ref's value from the loose ref file or packed-refs (None if absent)."""
    return _read_loose_ref(paths, ref) or _read_packed_ref(paths.common_dir, ref)


def _read_loose_ref(paths: RepoPaths, ref: str) -> str | None:
    base = paths.git_dir if not ref.startswith("refs/") else paths.common_dir
    try:
        with open(os.path.join(base, ref), encoding="ascii") as handle:
            value = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    return value if _is_sha(value) else None


def _read_packed_ref(common_dir: str, ref: str) -> str | None:
    try:
        with open(os.path.join(common_dir, "packed-refs"), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(("#", "^")):
                    continue
                sha, _, name = line.rstrip("\n").partition(" ")
                if name == ref and _is_sha(sha):
                    return sha
    except OSError:
        return None
    return None


def _is_sha(value: str) -> bool:
    return len(value) in (40, 64) and all(ch in "0123456789abcdef" for ch in value)
