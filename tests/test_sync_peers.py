"""hive sync where a clone's own hive refs are written by another clone (a sync to a
path or URL of a clone, or a plain ``git push`` with the refspecs ``hive init`` adds),
and remotes or refs that hold what hive never writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, list_cells, show_cell, update_cell
from hive.domain.doctor import diagnose
from hive.domain.reservations import list_reservations, reserve
from hive.domain.sync import sync
from hive.git.remote import shown_remote
from tests.conftest import assert_clean, git
from tests.inprocess import run_hive
from tests.test_sync import Clones, built_clones, clones, converge

__all__ = ["built_clones", "clones"]  # the fixtures, shared with tests/test_sync.py


def test_a_sync_pushed_into_a_clone_loses_neither_side_s_edit(clones: Clones) -> None:
    """``a`` syncs straight with clone ``b`` (``hive sync ../b``), which sets b's
    refs/hive/state to a's merged state; b then syncs with origin. b merged origin's
    state into its branch against the base both states share and recorded a's state as
    a parent of the new one, never bringing a's edit into its files: a's edit was
    dropped (a's next sync took b's version as the newer one)."""
    cell = create_cell(clones.ws("a"), title="Shared")
    clones.sync("a")
    clones.sync("b")
    update_cell(clones.ws("b"), cell_id=cell.id, title="Renamed in b")
    update_cell(clones.ws("a"), cell_id=cell.id, priority=0)
    sync(clones.ws("a"), remote=str(clones.paths["b"]))  # a peer push into b's refs
    clones.sync("b")
    converge(clones, "a", "b")
    for name in ("a", "b"):
        merged = show_cell(clones.ws(name), cell_id=cell.id)
        assert (merged.title, merged.priority, merged.conflicts) == ("Renamed in b", 0, [])
        assert diagnose(clones.ws(name)).ok  # the audit takes the merge as a sync's
        assert_clean(clones.paths[name])
    assert git(clones.paths["b"], "status", "--porcelain") == ""


def test_credentials_in_a_url_never_reach_a_message_the_output_or_a_commit(
    clones: Clones, tmp_path: Path
) -> None:
    """``hive sync https://TOKEN@host/repo.git`` committed "hive: sync 1 cell(s) from
    https://user:tok3n@example.com/x.git" to the branch (pushed with the code) and to the
    state it pushed, printed it, and named it in errors; git leaves the user and password
    out of a URL it shows. (``url.<path>.insteadOf`` makes git reach origin by that URL.)"""
    url = "https://user:tok3n@example.com/x.git"
    a = clones.paths["a"]
    git(a, "config", f"url.{clones.origin}.insteadOf", url)
    create_cell(clones.ws("b"), title="from b")
    clones.sync("b")
    done = run_hive(["-C", str(a), "sync", url, "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["remote"] == "https://example.com/x.git"
    shown = run_hive(["-C", str(a), "sync", url])
    assert "synced with https://example.com/x.git:" in shown.stdout
    create_cell(clones.ws("a"), title="sent")
    assert run_hive(["-C", str(a), "mail", "sync", url]).exit_code == 0
    assert sync(clones.ws("a"), remote=url).sent_cells == 1
    messages = git(a, "log", "--all", "--format=%B") + git(a, "reflog", "--all", "--format=%gs")
    assert "hive: sync 1 cell(s) from https://example.com/x.git" in messages
    assert "tok3n" not in messages and "tok3n" not in shown.output
    out_of_reach = run_hive(["-C", str(a), "sync", "https://u:s3cret@127.0.0.1:1/x.git"])
    assert out_of_reach.exit_code == 8
    assert "cannot fetch hive's refs from https://127.0.0.1:1/x.git:" in out_of_reach.stderr
    assert "s3cret" not in out_of_reach.output
    assert shown_remote("git@github.com:o/r.git") == "git@github.com:o/r.git"  # no password
    assert shown_remote("ssh://git@host/r.git") == "ssh://host/r.git"
    assert shown_remote("../other") == "../other"
    assert_clean(a)


def _fed(repo: Path, data: str, *args: str) -> str:
    """``git ARGS`` in ``repo`` with ``data`` on its standard input."""
    done = subprocess.run(
        ["git", "-C", str(repo), *args], input=data, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def _blob(repo: Path) -> str:
    return _fed(repo, "not a commit\n", "hash-object", "-w", "--stdin")


def test_a_hive_ref_that_is_no_commit_is_named_with_the_way_out(clones: Clones) -> None:
    """A refs/hive/state set to a blob, on the remote or here, ended in "internal error:
    AssertionError" (exit 70): the merge base of a blob. A local one naming a missing
    object said "cannot fetch hive's refs from origin: bad object refs/hive/state",
    blaming the remote. Each now names the ref and the way out, and changes nothing."""
    a, origin = clones.paths["a"], clones.origin
    clones.sync("a")
    create_cell(clones.ws("a"), title="kept")
    tip = git(a, "rev-parse", "HEAD")
    git(origin, "update-ref", "refs/hive/state", _blob(origin))
    for args in (["sync"], ["sync", "--json"]):  # the lean path, then the full one
        refused = run_hive(["-C", str(a), *args])
        assert refused.exit_code == 8, refused.output
        assert "origin's refs/hive/state names " in refused.output
        assert "which is not a commit: point it back at a hive commit there" in refused.output
    assert git(a, "rev-parse", "HEAD") == tip
    git(origin, "update-ref", "-d", "refs/hive/state")
    git(a, "update-ref", "refs/hive/state", _blob(a))
    here = run_hive(["-C", str(a), "sync"])
    assert here.exit_code == 8 and "this clone's refs/hive/state names " in here.stderr
    assert "git update-ref -d refs/hive/state" in here.stderr
    (a / ".git" / "refs" / "hive" / "state").write_text("1" * 40 + "\n")  # no such object
    missing = run_hive(["-C", str(a), "sync"])
    assert missing.exit_code == 8 and "this clone's refs/hive/state names 1111" in missing.stderr
    git(a, "update-ref", "-d", "refs/hive/state")
    assert run_hive(["-C", str(a), "sync"]).exit_code == 0
    assert git(a, "rev-parse", "HEAD") == tip and "Internal" not in missing.output
    assert_clean(a)


def test_a_remote_state_without_a_hive_removes_nothing_here(clones: Clones) -> None:
    """A remote refs/hive/state rewritten to a commit with no .hive/config.yaml (``.hive``
    a blob here) was merged as a state that had removed every file: the sync committed
    the removal of the config and the reservation files, and the next command said "no
    hive yet: run 'hive init'". Now it is taken as empty, said, and repaired by the push."""
    a, origin = clones.paths["a"], clones.origin
    create_cell(clones.ws("a"), title="kept")
    reserve(clones.ws("a"), paths=["src/**"])
    clones.sync("a")
    state = git(origin, "rev-parse", "refs/hive/state").strip()
    root = _fed(origin, f"100644 blob {_blob(origin)}\t.hive\n", "mktree")
    bad = git(origin, "commit-tree", root, "-p", state, "-m", "rewritten").strip()
    git(origin, "update-ref", "refs/hive/state", bad)
    done = sync(clones.ws("a"), remote="origin")
    assert any("held no hive (.hive/config.yaml missing)" in u for u in done.unresolved)
    tree = git(a, "ls-tree", "-r", "--name-only", "HEAD", ".hive")
    assert ".hive/config.yaml" in tree and ".hive/reservations/" in tree
    pushed = git(origin, "ls-tree", "-r", "--name-only", "refs/hive/state", ".hive")
    assert ".hive/config.yaml" in pushed  # the push sent the state back over it
    assert list_reservations(clones.ws("a"))
    clones.sync("b")
    assert [c.title for c in list_cells(clones.ws("b"))] == ["kept"]
    assert_clean(a)


def test_init_says_when_plain_git_push_will_go_elsewhere(clones: Clones, tmp_path: Path) -> None:
    """``hive init`` adds ``push = HEAD`` to a remote without push refspecs: with it git
    pushes the current branch to the branch of the same name, whatever push.default
    says. A branch ``dev`` tracking ``origin/main`` was refused by ``git push``
    (push.default simple); after init it silently made ``origin/dev``. init now says so."""
    repo = tmp_path / "fresh"
    git(tmp_path, "clone", "-q", str(clones.origin), str(repo))
    git(repo, "config", "user.name", "Dev")
    git(repo, "config", "user.email", "dev@example.com")
    git(repo, "checkout", "-q", "-b", "dev", "--track", "origin/main")
    said = run_hive(["-C", str(repo), "init"])
    assert said.exit_code == 0, said.output
    assert (
        "note: plain 'git push' now sends dev to origin/dev (its upstream is origin/main):"
        " push it there with 'git push origin dev:main'"
    ) in said.stderr
    assert "note:" not in run_hive(["-C", str(repo), "init"]).stderr  # said once, when added
    same = tmp_path / "same"
    git(tmp_path, "clone", "-q", str(clones.origin), str(same))
    assert "note:" not in run_hive(["-C", str(same), "init"]).stderr  # main tracks main


def test_a_round_asks_the_base_of_the_two_states_once(
    clones: Clones, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether the remote's state already holds this clone's (nothing was pushed here)
    is the merge base's question, which the merge of the remote's state asks next: a
    Python walk of the remote's state history answered it first, then the merge base
    walked it again. Each pair of states is now asked once a round; a state pushed here
    that holds no hive (its config missing) still brings nothing and removes nothing."""
    import hive.domain.sync as syncing
    from hive.git.repo import GitRepo

    b = clones.paths["b"]
    create_cell(clones.ws("a"), title="first")
    clones.sync("a")
    clones.sync("b")
    create_cell(clones.ws("a"), title="second")
    clones.sync("a")  # origin's state now descends from b's
    asked: list[tuple[str | None, str | None]] = []
    real = syncing.merge_base

    def counted(git: GitRepo, one: str | None, other: str | None) -> str | None:
        asked.append((one, other))
        return real(git, one, other)

    monkeypatch.setattr(syncing, "merge_base", counted)
    monkeypatch.setattr(GitRepo, "is_ancestor", lambda *args: pytest.fail("walked in Python"))
    local = git(b, "rev-parse", "refs/hive/state").strip()
    clones.sync("b")
    theirs = git(b, "rev-parse", "refs/hive-remotes/origin/state").strip()
    assert asked == [(local, theirs)]
    assert sorted(c.title for c in list_cells(clones.ws("b"))) == ["first", "second"]
    monkeypatch.undo()
    root = _fed(b, f"100644 blob {_blob(b)}\t.hive\n", "mktree")
    state = git(b, "rev-parse", "refs/hive/state").strip()
    bad = git(b, "commit-tree", root, "-p", state, "-m", "pushed here, no hive").strip()
    git(b, "update-ref", "refs/hive/state", bad)
    tip = git(b, "rev-parse", "HEAD")
    done = clones.sync("b")
    assert git(b, "rev-parse", "HEAD") == tip and done.received_cells == 0
    assert sorted(c.title for c in list_cells(clones.ws("b"))) == ["first", "second"]
    assert_clean(b)
