"""unique_work: what removing a worktree and its branch would lose (real git worktrees)."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.git.merge import unique_work
from hive.git.repo import GitRepo
from tests.conftest import git


def test_unique_work_is_what_only_the_worktree_holds(repo: Path) -> None:
    tree = repo.parent / "tree"
    git(repo, "worktree", "add", "-q", "-b", "hive/x", str(tree))
    main = GitRepo.discover(str(repo))

    def found() -> list[str]:
        head = git(repo, "rev-parse", "HEAD").strip()
        tip = git(tree, "rev-parse", "HEAD").strip()
        return unique_work(main, head, str(tree), tip)

    assert found() == []  # a fresh worktree holds nothing of its own
    (tree / "draft.txt").write_text("draft\n")
    (tree / "README.md").unlink()
    assert found() == ["README.md", "draft.txt"]
    # the same draft committed on the current branch, the deletion too: nothing unique
    (repo / "draft.txt").write_text("draft\n")
    git(repo, "add", "draft.txt")
    git(repo, "rm", "-q", "README.md")
    git(repo, "commit", "-qm", "the draft, here")
    assert found() == []
    # a commit of its own, also on a detached HEAD (no branch names it), is unique
    (tree / "work.txt").write_text("work\n")
    git(tree, "add", "work.txt")
    git(tree, "commit", "-qm", "work")
    git(tree, "checkout", "-q", "--detach")
    git(repo, "branch", "-q", "-D", "hive/x")
    assert "work.txt" in found()
    git(repo, "merge", "-q", git(tree, "rev-parse", "HEAD").strip())
    assert found() == []  # merged: everything it holds is on the current branch


def test_what_a_branch_brings_is_git_s_from_one_walk(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``branch_changes`` and ``merge_commits`` asked whether the branch was part of HEAD
    by walking HEAD's history in Python (all of it when it was not: a swarm's merge of
    each worker's branch), then dulwich walked both for the merge base, which answers
    that too. One walk now; what a branch brings is ``git diff --name-only A...B``'s,
    and a branch that is part of HEAD brings nothing and merges as up to date."""
    from hive.git.merge import branch_changes, merge_commits

    def commit(branch: str, name: str) -> str:
        git(repo, "checkout", "-q", branch)
        (repo / name).write_text(f"{name}\n")
        git(repo, "add", name)
        git(repo, "commit", "-qm", name)
        return git(repo, "rev-parse", "HEAD").strip()

    git(repo, "branch", "side")
    main = [commit("main", "a.txt"), commit("main", "b.txt")]
    side = commit("side", "s.txt")
    monkeypatch.setattr(GitRepo, "is_ancestor", lambda *args: pytest.fail("walked in Python"))
    ours = GitRepo.discover(str(repo))
    for head, tip in ((main[1], side), (side, main[1]), (main[1], main[0]), (main[0], main[1])):
        expected = git(repo, "diff", "--name-only", f"{head}...{tip}").split()
        assert branch_changes(ours, head, tip) == expected, (head, tip)
    assert branch_changes(ours, main[1], main[0]) == []
    assert merge_commits(ours, main[1], main[0]).up_to_date
    assert merge_commits(ours, main[1], main[1]).up_to_date
    merged = merge_commits(ours, main[1], side)
    assert not merged.up_to_date and merged.base == git(repo, "merge-base", main[1], side).strip()
    assert [change.path for change in merged.changes] == ["s.txt"]
    ahead = merge_commits(ours, main[0], main[1])  # theirs ahead: merged, not up to date
    assert not ahead.up_to_date and [c.path for c in ahead.changes] == ["b.txt"]
