"""``hive doctor``'s audit of sync commits an older hive made, before it named the
remote state each merged (no ``Hive-Sync-State`` trailer): no false alarm on honest
history, and a hand commit shaped like one is still a breach."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.annotate import add_comment
from hive.domain.cells import close_cell, create_cell, start_cell, update_cell
from hive.domain.history import claim_breaches
from hive.git.remote import STATE_REF
from hive.store.layout import cell_path
from tests.conftest import GIT_ENV, git
from tests.test_precommit import _forged_commit
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)

EARLIER = "@1700000000 +0000"  # the other clone's syncs happened before this one's


def _as_an_older_hive(repo: Path) -> None:
    """Rewrite the branch's history as a hive without ``Hive-Sync-State`` wrote it (the
    trailer dropped; trees, authors and dates kept), with the real ``git``."""
    env = {**os.environ, **GIT_ENV, "FILTER_BRANCH_SQUELCH_WARNING": "1"}
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "filter-branch",
            "-f",
            "--msg-filter",
            "grep -v '^Hive-Sync-State:'",
        ],
        env=env,
        check=True,
        capture_output=True,
    )
    assert "Hive-Sync-State" not in git(repo, "log", "--format=%B")


def _sync_earlier(made: Clones, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    with monkeypatch.context() as patched:
        patched.setenv("GIT_COMMITTER_DATE", EARLIER)
        patched.setenv("GIT_AUTHOR_DATE", EARLIER)
        made.sync(name)


def test_an_older_hive_s_sync_commits_are_no_breach(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Sync commits without ``Hive-Sync-State`` that brought alice's edits of her claimed
    cells (one taken as the remote had it, one merged with bob's comment) were each a
    ``not-owner`` warning: they are matched with the state hive recorded for them."""
    alice = clones.ws("a", "alice")
    taken, merged = (create_cell(alice, title=title) for title in ("taken", "merged"))
    for cell in (taken, merged):
        start_cell(alice, cell_id=cell.id)
    _sync_earlier(clones, "a", monkeypatch)
    clones.sync("b")
    close_cell(alice, cell_id=taken.id, reason="done")
    _sync_earlier(clones, "a", monkeypatch)
    assert clones.sync("b").commit is not None
    a, b = clones.paths["a"], clones.paths["b"]
    assert git(b, "rev-parse", STATE_REF) == git(a, "rev-parse", STATE_REF)  # a's state, whole
    update_cell(alice, cell_id=merged.id, priority=0)
    _sync_earlier(clones, "a", monkeypatch)
    add_comment(clones.ws("b", "bob"), cell_id=merged.id, text="seen")
    assert clones.sync("b").commit is not None  # a's priority merged with bob's comment
    _as_an_older_hive(b)
    assert git(b, "log", "--format=%s", "-3").count("hive: sync") == 2
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []


def test_a_hand_commit_shaped_as_an_older_hive_s_sync_is_a_breach(
    clones: Clones,  # noqa: F811
) -> None:
    """A hand commit under ``Hive-Event: sync`` without ``Hive-Sync-State`` that closes
    alice's claimed cell stays a ``not-owner`` warning, also once a real sync has recorded
    its tree on refs/hive/state (that state was made after it: it merged nothing in)."""
    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    b = clones.paths["b"]
    path = b / cell_path(cell.id)
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    forged = _forged_commit(b, "bob", f"sync 1 cell(s) from origin\n\nHive-Cell: {cell.id}", "-a")
    clones.sync("b")  # sends it: refs/hive/state now records the forged tree
    assert git(b, "rev-parse", f"{STATE_REF}:.hive") == git(b, "rev-parse", "HEAD:.hive")
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == [
        (forged, f"bob changed {cell.id} (claimed by alice)")
    ]
