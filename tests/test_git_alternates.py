"""Objects that live in another repository's store (``objects/info/alternates``, as
``git clone --shared`` makes): crash recovery puts a file back from such a blob."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.errors import GitError
from hive.git import recovery
from hive.git.refs import discover
from tests.conftest import git, make_repo


def test_recovery_reads_a_blob_from_an_alternate_store(tmp_path: Path) -> None:
    origin = make_repo(tmp_path / "origin")
    (origin / "notes.txt").write_text("kept elsewhere\n")
    git(origin, "add", "notes.txt")
    git(origin, "commit", "-q", "-m", "notes")
    sha = git(origin, "rev-parse", "HEAD:notes.txt").strip()
    shared = tmp_path / "shared"
    git(tmp_path, "clone", "-q", "--shared", str(origin), str(shared))
    assert (shared / ".git" / "objects" / "info" / "alternates").exists()
    assert not (shared / ".git" / "objects" / sha[:2] / sha[2:]).exists()

    paths = discover(str(shared))
    assert recovery._blob(paths, sha) == b"kept elsewhere\n"
    tree = git(origin, "rev-parse", "HEAD^{tree}").strip()
    with pytest.raises(GitError, match="not a blob"):
        recovery._blob(paths, tree)
    with pytest.raises(GitError, match="missing"):
        recovery._blob(paths, "0" * 40)
