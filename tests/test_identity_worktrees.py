"""Reservations hold across every worktree of a repository."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hive.domain.hooks import install_hook
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.workspace import Workspace
from hive.errors import ReservationConflict
from tests.conftest import agent_env, git
from tests.inprocess import run_hive
from tests.test_reservations import race


@pytest.fixture
def side(ws: Workspace, repo: Path, tmp_path: Path) -> Path:
    """A second worktree of ``repo`` on branch ``side``."""
    path = tmp_path / "side"
    git(repo, "worktree", "add", "-q", "-b", "side", str(path))
    return path


def test_a_reservation_in_one_worktree_refuses_the_other(
    ws: Workspace, repo: Path, side: Path
) -> None:
    reserve(Workspace(str(repo), actor="alice"), paths=["src/**"], reason="auth")
    bob = Workspace(str(side), actor="bob")
    head = git(side, "rev-parse", "HEAD")
    with pytest.raises(
        ReservationConflict, match="reserved by alice in the worktree of branch main"
    ):
        reserve(bob, paths=["src/a.py"])
    assert git(side, "rev-parse", "HEAD") == head
    conflict = run_hive(
        ["-C", str(side), "--json", "reserve", "src/b.py"],
        env=agent_env(repo, "bob"),
        module="hive.cli.main",
    )
    assert conflict.returncode == 4
    detail = json.loads(conflict.stdout)["conflicts"][0]
    assert (detail["holder"], detail["branch"]) == ("alice", "main")
    # shared (non-exclusive) requests against shared ones, and disjoint ones, are fine
    assert reserve(bob, paths=["docs/**"]).granted
    # the pre-commit hook in the other worktree blocks the reserved file too
    install_hook(Workspace(str(side)))
    (side / "src").mkdir()
    (side / "src/a.py").write_text("x = 1\n")
    git(side, "add", "src/a.py")
    hook = subprocess.run(
        ["git", "-C", str(side), "commit", "-qm", "sneak"],
        env=agent_env(repo, "bob"),
        capture_output=True,
        text=True,
        check=False,
    )
    assert hook.returncode != 0 and "src/a.py is reserved by alice" in hook.stderr
    release(Workspace(str(repo), actor="alice"))
    assert reserve(bob, paths=["src/a.py"]).granted  # released in main: free in side


def test_eight_processes_in_two_worktrees_get_exactly_one_grant(
    ws: Workspace, repo: Path, side: Path
) -> None:
    patterns = [
        "src/**",
        "src/a.py",
        "src/*.py",
        "**/*.py",
        "src/a*",
        "src/{a,b}.py",
        "src/**/a.py",
        "*/a.py",
    ]
    outcomes = race([(str(repo if n % 2 else side), p) for n, p in enumerate(patterns)], 1.0)
    granted = [name for name, outcome in outcomes.items() if outcome == "granted"]
    assert len(granted) == 1, outcomes
    held = list_reservations(Workspace(str(repo), persist_cache=False))
    held += list_reservations(Workspace(str(side), persist_cache=False))
    assert {r.agent for r in held} == set(granted) and len(held) == 1
