"""Checks of a test repository by the real git CLI, several answers per git process.

A test's own checks started most of the suite's git processes (a ``git rev-parse`` per
ref, a ``git log -1`` per question): each costs a fork and an exec on a machine the
suite shares. These ask git once for what a test asks several times; they check what
the one-answer-per-process calls checked, with the same git.
"""

from __future__ import annotations

from pathlib import Path

from tests.conftest import _no_graphs_to_verify, git


def rev_parse(repo: Path | str, *revs: str) -> list[str]:
    """The object id of each of ``revs`` (in order), from one ``git rev-parse``; a rev
    that does not resolve fails the test, as ``git(repo, "rev-parse", rev)`` does."""
    found = git(repo, "rev-parse", *revs).split()
    assert len(found) == len(revs), (revs, found)
    return found


def commits_shown(repo: Path | str, fmt: str, *revs: str) -> list[tuple[str, list[str]]]:
    """For each of ``revs`` (in order; distinct commits), what ``git log -1
    --format=FMT REV`` prints and the paths ``git show --name-only --format= REV``
    lists, from one ``git show``."""
    shown = git(repo, "show", "--name-only", f"--format=%x00{fmt}%x00", *revs)
    parts = shown.split("\0")
    assert len(parts) == 2 * len(revs) + 1 and parts[0] == "", (revs, shown)
    return [(text + "\n", parts[2 + 2 * at].split()) for at, text in enumerate(parts[1::2])]


def assert_fsck_clean(repo: Path) -> None:
    """``git fsck --strict`` is clean (fails the test with what it says otherwise):
    ``conftest.assert_clean`` without its ``git status``, for a test that has just
    checked the status itself."""
    git(repo, *_no_graphs_to_verify(repo), "fsck", "--strict")
