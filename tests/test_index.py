"""hive's index splicer against the real git CLI (ls-files, write-tree, status, fsck)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.errors import LockTimeout
from hive.git.index import IndexUpdate, lookup_entries, read_entries, update_index
from tests.conftest import copy_repo, git, make_repo


def blob(repo: Path, path: str, text: str) -> IndexUpdate:
    full = repo / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    sha = git(repo, "hash-object", "-w", path).strip()
    return IndexUpdate(path=path, sha=sha.encode(), stat=os.stat(full))


def remove(repo: Path, path: str) -> IndexUpdate:
    (repo / path).unlink()
    return IndexUpdate(path=path, sha=None)


def index_of(repo: Path) -> str:
    return str(repo / ".git" / "index")


def populated(tmp_path: Path) -> Path:
    repo = make_repo(tmp_path / "repo")
    for number in range(30):
        (repo / f"src/pkg{number % 4}").mkdir(parents=True, exist_ok=True)
        (repo / f"src/pkg{number % 4}/m{number}.py").write_text(f"x = {number}\n")
    (repo / ".hive/cells/a").mkdir(parents=True)
    (repo / ".hive/cells/a/hv-a1.yaml").write_text("id: hv-a1\n")
    (repo / "z-last.txt").write_text("z\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "files")
    return repo


def test_splice_add_modify_delete_matches_git(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    updates = [
        blob(repo, ".hive/cells/b/hv-b2.yaml", "id: hv-b2\n"),
        blob(repo, ".hive/cells/a/hv-a1.yaml", "id: hv-a1\ntitle: changed\n"),
        remove(repo, "src/pkg1/m5.py"),
        blob(repo, "src/pkg1/new.py", "y = 1\n"),
    ]
    update_index(index_of(repo), updates)
    assert git(repo, "diff", "--name-only").strip() == ""  # worktree matches the index
    staged = git(repo, "diff", "--cached", "--name-status").split("\n")
    assert sorted(line for line in staged if line) == [
        "A\t.hive/cells/b/hv-b2.yaml",
        "A\tsrc/pkg1/new.py",
        "D\tsrc/pkg1/m5.py",
        "M\t.hive/cells/a/hv-a1.yaml",
    ]
    # write-tree uses the cache tree: a stale one would give the old tree here.
    git(repo, "commit", "-q", "-m", "via git")
    assert git(repo, "status", "--porcelain").strip() == ""
    assert "src/pkg1/m5.py" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
    git(repo, "fsck", "--strict")


def test_cache_tree_stays_valid_for_untouched_directories(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    git(repo, "write-tree")  # make sure the cache tree is complete
    update_index(index_of(repo), [blob(repo, ".hive/cells/a/hv-a1.yaml", "changed\n")])
    dump = git(repo, "ls-files", "--stage")
    assert ".hive/cells/a/hv-a1.yaml" in dump
    tree = git(repo, "write-tree").strip()
    fresh = tmp_path / "fresh"
    git(repo, "worktree", "add", "-q", str(fresh), "HEAD")
    (fresh / ".hive/cells/a/hv-a1.yaml").write_text("changed\n")
    git(fresh, "add", "-A")
    assert git(fresh, "write-tree").strip() == tree


def test_reads_find_entries_by_prefix_and_path(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    entries = read_entries(index_of(repo), ".hive/")
    assert list(entries) == [".hive/cells/a/hv-a1.yaml"]
    entry = entries[".hive/cells/a/hv-a1.yaml"]
    expected = git(repo, "rev-parse", "HEAD:.hive/cells/a/hv-a1.yaml").strip()
    assert entry.sha.decode() == expected and entry.stage == 0 and entry.size == 10
    found = lookup_entries(index_of(repo), ["z-last.txt", "missing", "src/pkg0/m0.py"])
    assert sorted(found) == ["src/pkg0/m0.py", "z-last.txt"]
    assert sorted(read_entries(index_of(repo))) == sorted(git(repo, "ls-files").split())


def test_creates_an_index_in_a_repo_without_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "empty", commit=False)
    update_index(index_of(repo), [blob(repo, ".hive/config.yaml", "prefix: hv\n")])
    assert git(repo, "ls-files").split() == [".hive/config.yaml"]
    git(repo, "commit", "-q", "-m", "first")
    git(repo, "fsck", "--strict")


def test_conflicted_stages_are_replaced_by_one_entry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    (repo / "f.txt").write_text("base\n")
    git(repo, "add", "f.txt")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "other")
    (repo / "f.txt").write_text("other\n")
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    (repo / "f.txt").write_text("mine\n")
    git(repo, "commit", "-q", "-am", "mine")
    git(repo, "merge", "-q", "other", check=False)
    assert {e.stage for e in lookup_entries(index_of(repo), ["f.txt"]).values()} == {3}
    update_index(index_of(repo), [blob(repo, "f.txt", "resolved\n")])
    assert git(repo, "ls-files", "--stage", "f.txt").split()[2] == "0"
    assert git(repo, "ls-files", "--unmerged").strip() == ""


def test_a_held_index_lock_times_out_cleanly(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    before = (repo / ".git" / "index").read_bytes()
    with pytest.raises(LockTimeout, match=r"index\.lock exists"):
        update_index(index_of(repo), [blob(repo, "new.txt", "n\n")], lock_timeout=0.05)
    assert (repo / ".git" / "index").read_bytes() == before
    assert lock.exists()


def test_index_version_4_falls_back_and_stays_correct(tmp_path: Path) -> None:
    repo = populated(tmp_path)
    git(repo, "update-index", "--index-version", "4")
    update_index(index_of(repo), [blob(repo, ".hive/cells/c/hv-c3.yaml", "c\n")])
    assert ".hive/cells/c/hv-c3.yaml" in git(repo, "ls-files")
    assert ".hive/cells/c/hv-c3.yaml" in read_entries(index_of(repo), ".hive/")
    assert git(repo, "status", "--porcelain", "--untracked-files=no").split() == [
        "A",
        ".hive/cells/c/hv-c3.yaml",
    ]


NAMES = st.sampled_from(
    ["a", "a.b", "a/b", "a/b/c", "a-b", "b/a", "b/b", "c", ".hive/x", ".hive/y/z", "a/b.c"]
)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    start=st.sets(NAMES, max_size=6),
    edits=st.lists(st.tuples(NAMES, st.booleans()), max_size=6),
)
def test_random_edits_agree_with_git(
    tmp_path_factory: pytest.TempPathFactory,
    plain_template: Path,
    start: set[str],
    edits: list[tuple[str, bool]],
) -> None:
    repo = copy_repo(plain_template, tmp_path_factory.mktemp("prop") / "repo")
    expected: set[str] = {"README.md"}
    for name in sorted(start):
        if _clashes(name, expected):
            continue
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(name)
        expected.add(name)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", "start")
    updates: dict[str, IndexUpdate] = {}
    for name, keep in edits:
        if keep and not _clashes(name, expected - {name}):
            updates[name] = blob(repo, name, f"new {name}")
            expected.add(name)
        elif not keep and name in expected:
            updates[name] = remove(repo, name)
            _prune_empty_parents(repo, name)
            expected.discard(name)
    update_index(index_of(repo), list(updates.values()))
    assert sorted(git(repo, "ls-files").split()) == sorted(expected)
    assert git(repo, "diff", "--name-only").strip() == ""  # every sha matches its file
    git(repo, "write-tree")


def _prune_empty_parents(repo: Path, name: str) -> None:
    parent = (repo / name).parent
    while parent != repo and not any(parent.iterdir()):
        parent.rmdir()
        parent = parent.parent


def _clashes(name: str, present: set[str]) -> bool:
    """A file may not also be a directory of another file."""
    return any(o.startswith(name + "/") or name.startswith(o + "/") for o in present)


def test_sequential_splices_in_one_process_keep_offsets_exact(tmp_path: Path) -> None:
    """Offsets are carried from one write to the next: they must match a fresh walk."""
    from hive.git import index as index_module

    repo = populated(tmp_path)
    expected = set(git(repo, "ls-files").split())
    for number in range(12):
        name = f".hive/cells/{'abc'[number % 3]}/hv-n{number}.yaml"
        updates = [blob(repo, name, f"n{number}\n")]
        expected.add(name)
        if number % 4 == 3:
            updates.append(remove(repo, f"src/pkg{number % 4}/m{number}.py"))
            expected.discard(f"src/pkg{number % 4}/m{number}.py")
        update_index(index_of(repo), updates)
        data = (repo / ".git" / "index").read_bytes()
        count = int.from_bytes(data[8:12], "big")
        assert index_module._known_offsets(data[-20:]) == index_module._entry_offsets(data, count)
        assert set(git(repo, "ls-files").split()) == expected
    assert git(repo, "diff", "--name-only").strip() == ""


def test_a_kept_staged_overlay_answers_as_a_fresh_read_after_every_change(
    tmp_path: Path,
) -> None:
    """A long-lived ``GitRepo`` keeps its last staged overlay by the index's content
    (its trailing checksum) and HEAD's tree: after each change of the index (git's and
    hive's own writes, a removal, a commit moving HEAD) it answers as a fresh one, and
    an index without a checksum (``index.skipHash``: zeros) is read every time."""
    from hive.git.repo import GitRepo

    repo = populated(tmp_path)
    kept = GitRepo.discover(str(repo))

    def overlay() -> dict[str, str | None]:
        fresh = GitRepo.discover(str(repo)).snapshot(staged=True).overlay
        assert kept.snapshot(staged=True).overlay == fresh
        return fresh

    cell = ".hive/cells/a/hv-a1.yaml"
    assert overlay() == {}
    (repo / cell).write_text("id: hv-a1\ntitle: one\n")
    git(repo, "add", cell)
    staged = overlay()
    assert staged == {cell: git(repo, "rev-parse", f":{cell}").strip()}
    assert overlay() == staged and kept._overlay is not None  # kept, the same answer
    git(repo, "rm", "-q", "--cached", ".hive/cells/a/hv-a1.yaml")
    assert overlay() == {cell: None}
    git(repo, "add", cell)
    git(repo, "commit", "-qm", "staged")  # HEAD's tree moves; nothing staged over it
    assert overlay() == {}
    content = Path(index_of(repo)).read_bytes()
    git(repo, "reset", "-q", "--soft", "HEAD~1")  # the same index over the older tree
    assert Path(index_of(repo)).read_bytes() == content
    assert overlay() == staged
    git(repo, "reset", "-q", "--soft", "HEAD@{1}")
    assert overlay() == {}
    update_index(index_of(repo), [blob(repo, ".hive/cells/b/hv-b1.yaml", "id: hv-b1\n")])
    assert set(overlay()) == {".hive/cells/b/hv-b1.yaml"}
    index, other = Path(index_of(repo)), ".hive/cells/b/hv-b1.yaml"
    for text in ("id: hv-b1\ntitle: two\n", "id: hv-b1\ntitle: three\n"):
        (repo / other).write_text(text)
        git(repo, "add", other)
        written = index.read_bytes()
        index.write_bytes(written[:-20] + b"\0" * 20)  # no checksum: never kept
        assert overlay()[other] == git(repo, "hash-object", other).strip()
        index.write_bytes(written)
