"""``hive doctor`` in a clone that has not fetched the remote states its branch's sync
commits name (the documented ``git clone``, ``hive init``, ``hive doctor``)."""

from __future__ import annotations

import json

import pytest

from hive.domain.cells import create_cell, start_cell
from hive.domain.reservations import reserve
from hive.store.layout import cell_path
from tests.conftest import git
from tests.inprocess import run_hive
from tests.test_precommit import _forged_commit
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)


def _warnings(repo: object, kind: str) -> list[str]:
    doctor = run_hive(["--json", "doctor"], cwd=repo)
    return [w["message"] for w in json.loads(doctor.stdout)["warnings"] if w["kind"] == kind]


def test_a_sync_naming_a_state_not_fetched_is_unverified_not_a_breach(
    clones: Clones,  # noqa: F811
) -> None:
    """b's honest sync commit that brought alice's reservation, pulled into
    a fresh clone that has no hive refs yet, was a ``not-owner`` warning there: it names
    a state the clone does not have, so it is one ``unverified-sync`` warning saying to
    fetch, and nothing once the states are fetched."""
    reserve(clones.ws("a", "alice"), paths=["src/**"], ttl_seconds=3600)
    clones.sync("a")
    brought = clones.sync("b").commit
    assert brought is not None
    git(clones.paths["b"], "push", "-q", "origin", "HEAD:refs/heads/main")
    fresh = clones.clone("d")
    assert git(fresh, "for-each-ref", "refs/hive-remotes") == ""
    assert _warnings(fresh, "not-owner") == []
    [unverified] = _warnings(fresh, "unverified-sync")
    assert unverified.startswith(f"{brought[:10]} is a hive sync of remote state ")
    assert "and this clone has not fetched that state" in unverified
    assert "run 'hive sync' (or 'git fetch'), then 'hive doctor' again" in unverified
    git(fresh, "fetch", "-q", "origin")
    assert _warnings(fresh, "unverified-sync") == _warnings(fresh, "not-owner") == []


def test_a_sync_trailer_naming_no_commit_id_is_a_breach_not_a_crash(
    clones: Clones,  # noqa: F811
) -> None:
    """A hand commit under a sync's trailers whose ``Hive-Sync-State`` is no commit id
    at all (hive writes a full one) changed alice's claimed cell: ``hive doctor`` asked
    the object store for that text and ended in an internal error; no fetch can ever
    bring such a state, so it is a ``not-owner`` warning as any hand commit's."""
    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    b, path = clones.paths["b"], cell_path(cell.id)
    (b / path).write_text((b / path).read_text().replace("status: in_progress", "status: closed"))
    git(b, "add", path)
    for named in ("not-a-commit", "g" * 40):
        forged = _forged_commit(b, "bob", f"sync 1 cell(s) from origin\n\nHive-Sync-State: {named}")
        doctor = run_hive(["--json", "doctor"], cwd=b)
        assert "Traceback" not in doctor.stderr and "internal error" not in doctor.stderr
        assert f"{forged[:10]} bob changed {cell.id} (claimed by alice)" in " ".join(
            _warnings(b, "not-owner")
        )
        assert _warnings(b, "unverified-sync") == []
        git(b, "reset", "-q", "--soft", "HEAD~1")


def test_the_state_refs_are_read_once_over_the_audit(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sync commit the clone cannot check (no states fetched) read the state refs
    again to learn that none were fetched: the audit's reading of the state history
    (``SyncCommits.tips``) reads them once, for every such commit and the walk alike."""
    import hive.domain.syncaudit as syncaudit
    from hive.domain.history import claim_breaches
    from hive.domain.workspace import Workspace

    brought = []
    for paths in (["src/**"], ["docs/**"]):
        reserve(clones.ws("a", "alice"), paths=paths, ttl_seconds=3600)
        clones.sync("a")
        brought.append(clones.sync("b").commit)
    git(clones.paths["b"], "push", "-q", "origin", "HEAD:refs/heads/main")
    fresh = clones.clone("d")
    read: list[str] = []
    real = syncaudit.state_tips

    def counted(ws: Workspace) -> list[str]:
        read.append(ws.root)
        return real(ws)

    monkeypatch.setattr(syncaudit, "state_tips", counted)
    unfetched: list[tuple[str, str]] = []
    assert claim_breaches(Workspace(str(fresh)), limit=50, unfetched=unfetched) == []
    assert sorted(sha for sha, _ in unfetched) == sorted(brought)
    assert all(what.startswith("a hive sync of remote state ") for _, what in unfetched)
    assert len(read) == 1
