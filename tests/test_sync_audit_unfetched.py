"""``hive doctor`` in a clone that has not fetched the remote states its branch's sync
commits name (the documented ``git clone``, ``hive init``, ``hive doctor``)."""

from __future__ import annotations

import json

from hive.domain.reservations import reserve
from tests.conftest import git
from tests.inprocess import run_hive
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
