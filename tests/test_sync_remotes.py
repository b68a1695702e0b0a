"""Which remote ``hive sync`` talks to when none is named, and hive's refspec of a remote
that ``git remote rename`` renamed: as git's fetch chooses (the branch's upstream
remote, else the only remote, else origin), not always ``origin``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, list_cells
from tests.conftest import git
from tests.inprocess import run_hive
from tests.test_sync import Clones, built_clones, clones

__all__ = ["built_clones", "clones"]  # the fixtures, shared with tests/test_sync.py

CLIS = ("hive", "hive.cli.main")  # the console script (its lean sync first), the full CLI


def _sync(repo: Path, *args: str, module: str = "hive") -> dict[str, object]:
    done = run_hive(["-C", str(repo), "--json", "sync", *args], module=module)
    assert done.returncode == 0, done.stderr
    answer: dict[str, object] = json.loads(done.stdout)
    return answer


def _fetches(repo: Path, remote: str) -> list[str]:
    return git(repo, "config", "--get-all", f"remote.{remote}.fetch").split()


@pytest.mark.parametrize("module", CLIS)
def test_a_renamed_remote_is_synced_and_its_refspec_follows(clones: Clones, module: str) -> None:
    """``git remote rename origin upstream`` leaves hive's fetch refspec as it was
    (``refs/hive-remotes/origin/*``: git renames only the branches'): ``hive sync``
    then looked for ``origin`` and failed, and ``hive sync upstream`` added its own
    refspec beside the old one, so every fetch of upstream went on writing origin's
    tracking refs."""
    a, b = clones.paths["a"], clones.paths["b"]
    cell = create_cell(clones.ws("a"), title="from a")
    clones.sync("a")
    _sync(b, module=module)  # hive's refspecs for origin, as 'hive init' adds them too
    git(b, "remote", "rename", "origin", "upstream")
    assert "+refs/hive/*:refs/hive-remotes/origin/*" in _fetches(b, "upstream")
    git(b, "update-ref", "-d", "refs/hive-remotes/origin/state")
    done = _sync(b, module=module)
    assert done["remote"] == "upstream"
    assert _fetches(b, "upstream") == [
        "+refs/heads/*:refs/remotes/upstream/*",
        "+refs/hive/*:refs/hive-remotes/upstream/*",
    ]
    create_cell(clones.ws("a"), title="later from a")
    clones.sync("a")
    git(b, "fetch", "-q", "upstream")  # a plain fetch: upstream's tracking refs only
    assert (
        git(b, "rev-parse", "refs/hive-remotes/upstream/state").strip()
        == git(a, "rev-parse", "refs/hive/state").strip()
    )
    assert not git(b, "for-each-ref", "refs/hive-remotes/origin/")
    assert cell.id in {c.id for c in list_cells(clones.ws("b"))}


@pytest.mark.parametrize("module", CLIS)
def test_a_clone_whose_remote_is_not_origin_syncs_with_it(
    clones: Clones, tmp_path: Path, module: str
) -> None:
    """A clone made with ``git clone -o upstream`` (its one remote not named origin):
    ``hive sync`` said "'origin' does not appear to be a git repository"."""
    cell = create_cell(clones.ws("a"), title="from a")
    clones.sync("a")
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", "-o", "upstream", str(clones.origin), str(other))
    assert run_hive(["-C", str(other), "init"]).returncode == 0
    done = _sync(other, module=module)
    assert done["remote"] == "upstream" and done["received_cells"] == 1
    assert (other / ".hive" / "cells").is_dir()
    assert cell.id in git(other, "ls-tree", "-r", "--name-only", "HEAD", ".hive")
    mail = run_hive(["-C", str(other), "--json", "mail", "sync"], module=module)
    assert mail.returncode == 0 and json.loads(mail.stdout)["remote"] == "upstream"


@pytest.mark.parametrize("module", CLIS)
def test_of_several_remotes_the_branch_s_upstream_is_synced(
    clones: Clones, tmp_path: Path, module: str
) -> None:
    """Two remotes, neither origin: the branch's upstream remote (``branch.main.remote``)
    is the one; with no upstream, a clear refusal that names the remotes and the way
    to choose, and nothing fetched."""
    b = clones.paths["b"]
    create_cell(clones.ws("a"), title="from a")
    clones.sync("a")
    git(b, "remote", "rename", "origin", "upstream")
    fork = tmp_path / "fork.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(fork))
    git(b, "remote", "add", "fork", str(fork))
    git(b, "config", "branch.main.remote", "upstream")
    assert _sync(b, module=module)["remote"] == "upstream"
    git(b, "config", "--unset", "branch.main.remote")
    done = run_hive(["-C", str(b), "sync"], module=module)
    assert done.returncode == 2, done.stderr
    assert done.stderr == (
        "error: which remote? this clone has 2 remotes (fork, upstream), none named origin"
        " and main tracks none of them: name one ('hive sync REMOTE'), or give the branch"
        " an upstream ('git branch --set-upstream-to REMOTE/BRANCH')\n"
    )
    assert not git(b, "for-each-ref", "refs/hive-remotes/fork/")
    assert _sync(b, "fork", module=module)["remote"] == "fork"


def _tracking(repo: Path, remote: str) -> dict[str, str]:
    shown = git(
        repo, "for-each-ref", "--format=%(refname) %(objectname)", f"refs/hive-remotes/{remote}"
    )
    return dict(line.split(" ") for line in shown.splitlines())


@pytest.mark.parametrize("module", CLIS)
def test_a_renamed_remote_s_tracking_refs_follow_the_rename(clones: Clones, module: str) -> None:
    """``git remote rename origin upstream`` left refs/hive-remotes/origin/* behind, a
    remote that is gone: the sync moves them with the rename (one git transaction), or
    drops them where the new name has its own; a remote named origin again keeps its."""
    from hive.domain.sync import configure_remotes

    b = clones.paths["b"]
    create_cell(clones.ws("a"), title="from a")
    clones.sync("a")
    _sync(b, module=module)
    before = _tracking(b, "origin")
    assert set(before) >= {"refs/hive-remotes/origin/state"}, before
    git(b, "remote", "rename", "origin", "upstream")
    assert _tracking(b, "origin") == before  # git renames the branches' tracking refs only
    configure_remotes(clones.ws("b"))  # what a sync (and hive init) do first
    assert not _tracking(b, "origin")
    moved = {ref.replace("/origin/", "/upstream/"): sha for ref, sha in before.items()}
    assert _tracking(b, "upstream") == moved
    git(b, "remote", "rename", "upstream", "up")  # up: upstream's refspec, stale
    git(b, "remote", "add", "upstream", str(clones.origin))
    _sync(b, "upstream", module=module)  # a remote of that name again: its refspec, refs
    theirs = _tracking(b, "upstream")
    _sync(b, "up", module=module)
    assert _tracking(b, "upstream") == theirs and theirs, "another remote's refs were moved"
    assert set(_tracking(b, "up")) == {ref.replace("/upstream/", "/up/") for ref in theirs}
    assert run_hive(["-C", str(b), "doctor"], module=module).returncode == 0
