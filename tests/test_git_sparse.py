"""Sparse checkout (``git sparse-checkout``, cone and non-cone): hive writes its files into
the index as git would, keeping the skip-worktree bit of the entries it rewrites and giving
it to a file it adds outside the sparse set, and never checks out what the user left out.
Checked with ``git ls-files -v`` (``S``: skip-worktree, ``H``: in the working tree)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from hive.domain.workspace import Workspace
from tests.conftest import git
from tests.inprocess import fork_hive, run_hive


def hive(repo: Path, *args: str, module: str = "hive") -> str:
    done = run_hive(["-C", str(repo), *args], module=module)
    assert done.returncode == 0, done.stderr
    return done.stdout


def create(repo: Path, title: str, module: str = "hive") -> str:
    """The id of a new cell."""
    made: str = json.loads(hive(repo, "create", title, "--json", module=module))["id"]
    return made


def flags(repo: Path, under: str = ".hive") -> dict[str, str]:
    """``git ls-files -v``'s tag of every path under ``under``."""
    listed = git(repo, "ls-files", "-v", "--", under).splitlines()
    return {line[2:]: line[0] for line in listed}


def sparse_repo(ws: Workspace, repo: Path, *args: str) -> Path:
    """``repo`` (hive initialised, a cell made) with a sparse checkout of ``args``."""
    (repo / "src").mkdir()
    (repo / "src" / "main.py").write_text("x = 1\n")
    git(repo, "add", "src")
    git(repo, "commit", "-q", "-m", "code")
    hive(repo, "create", "Before the sparse checkout")
    git(repo, "sparse-checkout", "set", *args)
    return repo


def test_hive_files_outside_a_cone_stay_out_of_the_working_tree(ws: Workspace, repo: Path) -> None:
    """Cone mode with only ``src``: the cells made and rewritten by hive (lean and full
    path) keep or get skip-worktree and no file; hive used to clear the bit and write
    every file it touched into the working tree. Leaving the sparse checkout shows the
    files git checks out are hive's latest."""
    sparse_repo(ws, repo, "src")
    assert set(flags(repo).values()) == {"S"}
    made = [create(repo, "lean"), create(repo, "full", "hive.cli.main")]
    old = next(p for p in flags(repo) if "/cells/" in p and not any(m in p for m in made))
    old_id = Path(old).stem
    hive(repo, "update", old_id, "-p", "0", module="hive.cli.main")
    hive(repo, "update", made[0], "-p", "1")
    tags = flags(repo)
    assert len(tags) == 4 and set(tags.values()) == {"S"}, tags
    assert not (repo / ".hive").exists()
    assert git(repo, "status", "--porcelain") == ""
    git(repo, "sparse-checkout", "disable")
    assert git(repo, "status", "--porcelain") == ""
    assert "priority: 0" in (repo / old).read_text()
    assert set(flags(repo).values()) == {"H"}


def test_hive_files_inside_the_sparse_set_are_written_as_usual(ws: Workspace, repo: Path) -> None:
    sparse_repo(ws, repo, "src", ".hive")
    cell = create(repo, "In the cone")
    tags = flags(repo)
    assert set(tags.values()) == {"H"}, tags
    assert any(cell in path and (repo / path).is_file() for path in tags)
    assert git(repo, "status", "--porcelain") == ""


def test_non_cone_patterns_decide_per_file(ws: Workspace, repo: Path) -> None:
    """Non-cone patterns that keep one cell file and leave the rest of ``.hive`` out: a
    new cell is added with skip-worktree, the cell checked out stays checked out when
    hive rewrites it."""
    sparse_repo(ws, repo, "src")
    kept = next(p for p in flags(repo) if "/cells/" in p)
    git(repo, "sparse-checkout", "set", "--no-cone", "/*", "!/.hive/", f"/{kept}")
    assert flags(repo)[kept] == "H" and flags(repo)[".hive/config.yaml"] == "S"
    cell = create(repo, "Outside the patterns")
    hive(repo, "update", Path(kept).stem, "-p", "0")
    tags = flags(repo)
    assert tags[kept] == "H" and "priority: 0" in (repo / kept).read_text()
    new = [path for path in tags if cell in path]
    assert len(new) == 1 and tags[new[0]] == "S" and not (repo / new[0]).exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_file_the_user_checked_out_despite_the_patterns_is_updated_and_tracked(
    ws: Workspace, repo: Path
) -> None:
    """A skip-worktree file that is in the working tree anyway (restored by hand): git
    clears the bit of such a file; hive writes the new content and leaves it cleared."""
    sparse_repo(ws, repo, "src")
    cell = next(p for p in flags(repo) if "/cells/" in p)
    (repo / cell).parent.mkdir(parents=True)
    (repo / cell).write_bytes(git(repo, "show", f"HEAD:{cell}").encode())
    hive(repo, "update", Path(cell).stem, "-p", "0")
    assert flags(repo)[cell] == "H"
    assert "priority: 0" in (repo / cell).read_text()
    assert git(repo, "status", "--porcelain") == ""


def test_a_write_killed_in_a_sparse_checkout_is_finished_without_checking_out(
    ws: Workspace, repo: Path
) -> None:
    """The next command finishes a write killed after the ref moved (the index not yet
    updated) as the write would have: the new cell's entry with skip-worktree, no file."""
    sparse_repo(ws, repo, "src")
    env = {**os.environ, "HIVE_TEST_KILL_AT": "after-reflog"}
    process = fork_hive(["-C", str(repo), "create", "Killed"], env=env, module="hive.cli.main")
    process.communicate(timeout=120)
    assert process.wait() == -signal.SIGKILL
    hive(repo, "list")  # recovers
    tags = flags(repo)
    assert len(tags) == 3 and set(tags.values()) == {"S"}, tags
    assert not (repo / ".hive").exists()
    done = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True)
    assert done.stdout == b""


def test_a_sparse_checkout_turned_on_by_a_bare_config_key_is_seen(
    ws: Workspace, repo: Path
) -> None:
    """``sparseCheckout`` written without ``= true`` (by hand) is true to git; hive read it
    as false and wrote its files into the working tree and cleared skip-worktree."""
    sparse_repo(ws, repo, "src")
    config = next(
        path
        for path in (repo / ".git" / "config.worktree", repo / ".git" / "config")
        if path.is_file() and "sparsecheckout = true" in path.read_text().lower()
    )
    text = config.read_text()
    lines = [
        "\tsparseCheckout" if line.strip().lower() == "sparsecheckout = true" else line
        for line in text.splitlines()
    ]
    config.write_text("\n".join(lines) + "\n")
    assert git(repo, "config", "--type=bool", "--get", "core.sparseCheckout").strip() == "true"
    made = create(repo, "bare key", "hive.cli.main")
    tags = flags(repo)
    assert set(tags.values()) == {"S"}, tags
    assert any(made in path for path in tags)
    assert not (repo / ".hive").exists()
    assert git(repo, "status", "--porcelain") == ""
