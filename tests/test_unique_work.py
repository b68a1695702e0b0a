"""unique_work: what removing a worktree and its branch would lose (real git worktrees)."""

from __future__ import annotations

from pathlib import Path

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
