"""What ``hive sync`` reads of the histories: only what came since it last read them
(hive/git/historycache.py), with the same answers as reading everything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, update_cell
from hive.domain.workspace import Workspace
from hive.git.pathhistory import changed_blobs_by_git
from hive.git.syncref import _history_blobs_read, history_blobs
from tests.conftest import GIT_ENV, git
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)


def _whole_read(repo: Path, tip: str, limit: int) -> set[str]:
    """history_blobs as it was before anything was remembered: the versions the newest
    ``limit`` commits that changed ``.hive`` name, and the files of ``tip``."""
    changed = changed_blobs_by_git(str(repo), tip, ".hive", limit=limit)
    assert changed is not None
    listed = git(repo, "ls-tree", "-r", tip, "--", ".hive").splitlines()
    return set(changed) | {line.split()[2] for line in listed}


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("limit", [2000, 6])
def test_remembered_versions_plus_the_new_commits_answer_as_a_whole_read(
    repo: Path, ws: Workspace, limit: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What is remembered plus what the commits since changed (merges of a side branch
    dated before every other commit, a merge that kept one side's file, commits that
    change no hive file) is what a whole read finds, at every step; with a small
    ``limit`` the history passes the window's edge and the window moves on, walked
    with what was remembered (``git rev-list``), not read whole again."""
    first = create_cell(ws, title="v1")
    answers = [history_blobs(ws.git, _head(repo), limit=limit)]
    git(repo, "branch", "side")
    update_cell(ws, cell_id=first.id, title="v2 on main")
    git(repo, "checkout", "-q", "side")
    old = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}
    for number in range(3):  # commits dated before every other: the walk meets them last
        update_cell(ws, cell_id=first.id, title=f"v{number} on side")
        amend = ["git", "-C", str(repo), "commit", "-q", "--amend", "--no-edit"]
        subprocess.run(amend, env=old, check=True)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "-s", "ours", "--no-edit", "side")
    trace = tmp_path / "trace"
    for number in range(8):
        create_cell(ws, title=f"later {number}")
        (repo / "code.txt").write_text(f"{number}\n")
        git(repo, "add", "code.txt")
        git(repo, "commit", "-qm", "code, no hive file")
        head = _head(repo)
        monkeypatch.setenv("GIT_TRACE", str(trace))
        answers.append(history_blobs(ws.git, head, limit=limit))
        monkeypatch.delenv("GIT_TRACE")
        assert answers[-1] == _whole_read(repo, head, limit)
        assert answers[-1] == _history_blobs_read(ws.git, head, limit=limit) or limit < 2000
    assert (answers[0] < answers[-1]) == (limit == 2000)  # (6: the first fell out)
    changed = git(repo, "rev-list", "--count", "--full-history", "HEAD", "--", ".hive")
    assert (int(changed) > 2 * limit) == (limit == 6)  # the small window moved on
    logs = [line for line in trace.read_text().splitlines() if "built-in: git log" in line]
    assert logs and all(" --not " in line for line in logs[-2:]), logs  # not read whole


def test_a_sync_that_sends_reads_only_the_commits_since_the_last(
    clones: Clones,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sync that sends asks which versions both histories hold; the second one
    reads only the commits since the first (``git log ... ^TIP``), not both whole
    histories again (which grew with every sync)."""
    for number in range(3):
        create_cell(clones.ws("a"), title=f"before {number}")
        clones.sync("a")
    create_cell(clones.ws("a"), title="sent now")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    result = clones.sync("a")
    assert result.sent_cells == 1
    logs = [line for line in trace.read_text().splitlines() if "git log" in line]
    assert len(logs) == 2, logs  # the branch's history and the remote state's
    assert all(" --not " in line for line in logs), logs


def _commit_on(repo: Path, branch: str, name: str) -> str:
    git(repo, "checkout", "-q", branch)
    (repo / name).write_text(name)
    git(repo, "add", name)
    git(repo, "commit", "-q", "-m", name)
    return git(repo, "rev-parse", "HEAD").strip()


def test_merge_base_names_dulwich_s_base_when_git_names_one(tmp_path: Path) -> None:
    """``syncref.merge_base`` asks ``git merge-base --all`` (no dulwich import) and keeps
    its answer only when it names one base; a criss-cross history (two bases) is left to
    dulwich, and every answer is dulwich's."""
    from dulwich.graph import find_merge_base

    from hive.git.pathhistory import merge_bases
    from hive.git.repo import GitRepo
    from hive.git.syncref import _single_base_by_git, merge_base
    from tests.conftest import make_repo

    repo_path = make_repo(tmp_path / "r")
    root = git(repo_path, "rev-parse", "HEAD").strip()
    git(repo_path, "branch", "side")
    ours = _commit_on(repo_path, "main", "a")
    theirs = _commit_on(repo_path, "side", "b")
    repo = GitRepo.discover(str(repo_path))
    assert _single_base_by_git(repo, ours, theirs) == root
    git(repo_path, "merge", "-q", "--no-edit", "main")  # side: b + a
    git(repo_path, "checkout", "-q", "main")
    git(repo_path, "merge", "-q", "--no-edit", theirs)  # main: a + b (criss-cross)
    cross = (_commit_on(repo_path, "main", "c"), _commit_on(repo_path, "side", "d"))
    assert _single_base_by_git(repo, *cross) is None  # two bases: ours and theirs
    pairs = [(ours, theirs), (root, ours), (ours, root), cross, (ours, ours)]
    for a, b in pairs:
        expected = find_merge_base(repo.dulwich, [a.encode(), b.encode()])[0].decode()
        assert merge_base(repo, a, b) == expected
    empty = git(repo_path, "hash-object", "-t", "tree", "/dev/null").strip()
    orphan = git(repo_path, "commit-tree", empty, "-m", "unrelated").strip()
    assert merge_bases(str(repo_path), ours, orphan) == []  # git's exit code 1: none
    assert sorted(merge_bases(str(repo_path), *cross) or []) == sorted([ours, theirs])
    assert _single_base_by_git(repo, ours, orphan) is None
    assert merge_base(repo, ours, orphan) is None
    assert merge_bases(str(repo_path), ours, "0" * 40) is None  # git cannot answer


def test_state_and_seen_commits_are_the_trees_dulwich_writes(tmp_path: Path) -> None:
    """``state_commit`` and ``seen_commit`` write their trees without dulwich: the same
    objects, byte for byte (``git cat-file`` reads them)."""
    from dulwich.objects import Tree

    from hive.git.ident import Identity
    from hive.git.repo import TREE_MODE, GitRepo
    from hive.git.syncref import BLOB_MODE, seen_commit
    from tests.conftest import make_repo

    repo_path = make_repo(tmp_path / "r")
    blobs = [git(repo_path, "rev-parse", f"HEAD:{name}").strip() for name in ["README.md"]]
    missing = "1" * 40  # a submodule's commit: left out
    repo = GitRepo.discover(str(repo_path))
    author = Identity(name="Test User", email="test@example.com")
    commit = seen_commit(repo, [*blobs, missing, *blobs], "seen\n", author)
    assert commit is not None
    seen = Tree()
    for blob in blobs:
        seen.add(blob.encode(), BLOB_MODE, blob.encode())
    hive = Tree()
    hive.add(b"seen", TREE_MODE, seen.id)
    top = Tree()
    top.add(b".hive", TREE_MODE, hive.id)
    assert git(repo_path, "rev-parse", f"{commit}^{{tree}}").strip() == top.id.decode()
    assert git(repo_path, "ls-tree", "-r", commit).split()[-1] == f".hive/seen/{blobs[0]}"
    assert seen_commit(repo, [missing], "none\n", author) is None


def test_the_files_two_trees_differ_in_are_git_s(tmp_path: Path) -> None:
    """``GitRepo.paths_between`` (the audits') and ``syncref.differing_files`` (a sync's)
    are one walk of two trees: the paths are ``git diff-tree -r``'s, in its order (a file
    replaced by a folder and back, a mode changed, submodules), and a sync's files are
    those with another blob on either side (no submodule, no mode-only change)."""
    from hive.git.repo import GitRepo
    from hive.git.syncref import differing_files
    from tests.conftest import make_repo

    repo_path = make_repo(tmp_path / "r", commit=False)

    def tree(entries: dict[str, tuple[str, str]]) -> str:
        git(repo_path, "read-tree", "--empty")
        for path, (mode, sha) in entries.items():
            git(repo_path, "update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}")
        return git(repo_path, "write-tree").strip()

    for number in range(4):
        (tmp_path / f"v{number}").write_text(f"v{number}\n")
    blobs = [git(repo_path, "hash-object", "-w", str(tmp_path / f"v{n}")).strip() for n in range(4)]
    empty = tree({})
    commits = [git(repo_path, "commit-tree", empty, "-m", name).strip() for name in "xy"]
    one, two, three, four = blobs
    old = tree(
        {
            "keep/same.txt": ("100644", one),
            "swap": ("100644", one),
            "dir/x": ("100644", two),
            "mode.sh": ("100644", one),
            "sub": ("160000", commits[0]),
            "tosub": ("100644", three),
            "gone.txt": ("100644", one),
            "edit.txt": ("100644", one),
            "a.txt": ("100644", one),
            "a/c": ("100644", one),
        }
    )
    new = tree(
        {
            "keep/same.txt": ("100644", one),
            "swap/inner.txt": ("100644", two),
            "dir": ("100644", two),
            "mode.sh": ("100755", one),
            "sub": ("160000", commits[1]),
            "tosub": ("160000", commits[0]),
            "new.txt": ("100644", four),
            "edit.txt": ("100644", two),
            "a.txt": ("100644", one),
            "a/c": ("100644", four),
        }
    )
    repo = GitRepo.discover(str(repo_path))
    listed = git(repo_path, "diff-tree", "-r", "--name-only", old, new).split()
    assert repo.paths_between(old, new) == listed
    assert (
        repo.paths_between(new, old)
        == git(repo_path, "diff-tree", "-r", "--name-only", new, old).split()
    )
    expected = {}
    for line in git(repo_path, "diff-tree", "-r", old, new).splitlines():
        modes_shas, path = line.split("\t")
        old_mode, new_mode, old_sha, new_sha, _ = modes_shas.lstrip(":").split()
        sides = [
            sha if mode not in ("000000", "160000") else None
            for mode, sha in ((old_mode, old_sha), (new_mode, new_sha))
        ]
        if sides[0] != sides[1]:
            expected[f".hive/{path}"] = (sides[0], sides[1])
    found = differing_files(repo, old, new, ".hive")
    assert found == expected and list(found) == list(expected)
    assert set(found) == {
        f".hive/{p}" for p in ("a/c", "dir", "dir/x", "edit.txt", "gone.txt", "new.txt")
    } | {".hive/swap", ".hive/swap/inner.txt", ".hive/tosub"}
    assert differing_files(repo, old, old, "") == {} and repo.paths_between(None, None) == []
    every = git(repo_path, "ls-tree", "-r", "--name-only", old).split()
    assert list(differing_files(repo, None, old, "")) == [p for p in every if p != "sub"]
