"""Reservations where the file system ignores case (git's ``core.ignorecase``, which
``git init`` sets on macOS and Windows; set by hand here to stand for one): ``SRC/a.py``
and ``src/a.py`` are one file there, and both were granted, to two agents. The
pre-commit hook and ``swarm_complete``'s check now fold case in such a repository, on
the lean path and the full one alike (a repository that tells case apart keeps two
files apart); reserving compares patterns folded in every repository."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive.cli import entry
from hive.domain.cells import create_cell, start_cell
from hive.domain.globs import case_folded, glob_matches, patterns_intersect
from hive.domain.hooks import install_hook
from hive.domain.reservations import reserve
from hive.domain.swarm.complete import swarm_complete
from hive.domain.swarm.review import review
from hive.domain.workspace import Workspace
from hive.errors import ReservationConflict
from tests.conftest import git
from tests.inprocess import run_hive
from tests.test_reservations import agent, commit, hive_env


def _folds(a: str, b: str) -> bool:
    return patterns_intersect(case_folded(a), case_folded(b))


def test_folded_patterns_name_one_file_wherever_only_case_differs() -> None:
    assert _folds("SRC/a.py", "src/*.py") and _folds("Src/**", "sRC/x/A.PY")
    assert _folds("src/[A-C]x.py", "SRC/bX.py") and _folds("{A,z}/q", "a/Q")
    assert _folds("src/[!a]", "SRC/A")  # [!a] names the file "A", which is "a" there
    assert _folds("x\\Y", "X\\y") and not _folds("src/a.py", "src/b.py")
    assert _folds("[!a-z]", "b")  # [!a-z] names "B", which is "b" there
    assert not _folds("[0-9]/a", "x/a") and not _folds("[!0-9]", "7")  # digits have no case
    assert glob_matches(case_folded("Docs/[R]EADME.md"), "docs/readme.md")
    assert not patterns_intersect("SRC/a.py", "src/*.py")  # compared as written otherwise


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
@pytest.mark.parametrize("ignorecase", ["true", "false"])
def test_a_reservation_in_another_case_conflicts_whatever_the_file_system(
    ws: Workspace, repo: Path, module: str, ignorecase: str
) -> None:
    """Patterns are compared with each other case folded in every clone: a sync settles
    two clones' grants so (``contest``), whatever each clone's file system, and a grant
    must not be one the next sync takes back."""
    git(repo, "config", "core.ignorecase", ignorecase)
    reserve(agent(repo, "alice"), paths=["src/a.py"])
    args = ["-C", str(repo), "--json", "reserve"]
    for asked in ("SRC/a.py", "Src/*.PY", "src/[A]*"):
        refused = run_hive([*args, asked], env=hive_env(repo, "carol"), module=module)
        assert refused.returncode == 4, (asked, refused.stdout, refused.stderr)
        holders = {item["holder"] for item in json.loads(refused.stdout)["conflicts"]}
        assert "alice" in holders, refused.stdout
    with pytest.raises(ReservationConflict):
        reserve(agent(repo, "carol"), paths=["SRC/A.PY"])
    granted = run_hive([*args, "src/b.py"], env=hive_env(repo, "carol"), module=module)
    assert granted.returncode == 0, granted.stderr


def test_the_pre_commit_hook_folds_case_where_the_file_system_ignores_case(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new file staged in another case than its reservation (``SRC/a.py`` under
    ``src/**``): the lean hook leaves it to the full check, which refuses it, and a
    repository that tells case apart commits it."""
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["src/**"])
    (repo / "SRC").mkdir()
    (repo / "SRC/a.py").write_text("x = 1\n")
    git(repo, "add", "SRC/a.py")
    bob = hive_env(repo, "bob")
    for name, value in bob.items():
        monkeypatch.setenv(name, value)
    lean = entry.dispatch(entry.parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    assert lean == 0  # case told apart: nothing can block it
    git(repo, "config", "core.ignorecase", "true")
    lean = entry.dispatch(entry.parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    assert lean is None  # a reservation applies: the full check decides
    head = git(repo, "rev-parse", "HEAD")
    blocked = commit(repo, bob)
    assert blocked.returncode != 0 and "SRC/a.py is reserved by alice" in blocked.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    git(repo, "config", "core.ignorecase", "false")
    assert commit(repo, bob).returncode == 0


def test_a_held_pattern_in_upper_case_conflicts_with_a_request_in_lower_case(
    ws: Workspace, repo: Path
) -> None:
    """The held pattern's literal prefix is compared folded too (``SRC/Lib/`` is
    ``src/lib/`` there), not only the requested one's."""
    git(repo, "config", "core.ignorecase", "true")
    reserve(agent(repo, "alice"), paths=["SRC/Lib/*.py"])
    for asked in (["src/lib/a.py"], ["docs/x.md", "src/lib/b.py"]):
        with pytest.raises(ReservationConflict):
            reserve(agent(repo, "carol"), paths=asked)


@pytest.mark.parametrize("ignorecase", ["true", "false"])
def test_completion_and_review_judge_scope_as_the_hook_does(
    ws: Workspace, repo: Path, ignorecase: str
) -> None:
    """An agent holding ``SRC/**`` who writes ``src/x.py``: where the file system ignores
    case that is the reserved file (the hook let it be committed), so neither the
    outcome ``swarm_complete`` records nor ``hive review`` calls it out of scope; a
    repository that tells case apart does."""
    git(repo, "config", "core.ignorecase", ignorecase)
    bob = agent(repo, "bob")
    cell = create_cell(ws, title="case").id
    start_cell(bob, cell_id=cell)
    reserve(bob, paths=["SRC/**"], cell=cell)
    (repo / "src").mkdir()
    (repo / "src/x.py").write_text("x = 1\n")
    result = swarm_complete(bob, cell_id=cell, summary="done", files_touched=["src/x.py"])
    assert "src/x.py" in git(repo, "show", "--name-only", "--format=", "HEAD").split()
    expected = [] if ignorecase == "true" else ["src/x.py"]
    assert result.outcome.scope_violations == expected
    git(repo, "config", "core.ignorecase", "true")  # the review's own check folds here
    shown = review(ws, target=cell, with_patch=False).cells[0]
    assert shown.scope_violations == expected  # what the outcome recorded stays
    if ignorecase == "true":
        git(repo, "config", "core.ignorecase", "false")
        shown = review(ws, target=cell, with_patch=False).cells[0]
        assert shown.scope_violations == ["src/x.py"]
