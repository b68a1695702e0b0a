"""``hive doctor``'s audit of the yield marks a sync commit writes in another agent's
reservation file: only a grant the sync brought, or the branch had, wins a contest."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest

from hive.domain.history import claim_breaches
from hive.domain.reservations import decode_file, encode_file, reserve
from hive.domain.reservecore import reservation_path
from hive.models.reservation import Override, Reservation, ReservationFile
from tests.conftest import git
from tests.parsecount import yaml_parses
from tests.test_precommit import _forged_commit
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)


def _reservations(repo: Path, agent: str) -> ReservationFile:
    path = reservation_path(agent)
    return decode_file((repo / path).read_bytes(), path)


def test_a_forged_sync_cannot_yield_a_reservation_to_a_grant_it_makes(
    clones: Clones,  # noqa: F811
) -> None:
    """A hand commit under a sync's trailers, naming the remote's real state, that adds
    an earlier (backdated) grant of bob's over alice's ``src/**`` and marks alice's
    yielded to it, as a sync settles a contest, took alice's reservation unseen: no
    sync brought that grant (it is in neither the branch nor the state), so it is a
    ``not-owner`` warning of ``hive doctor``."""
    reserve(clones.ws("a", "alice"), paths=["src/**"], ttl_seconds=3600)
    clones.sync("a")
    clones.sync("b")
    b = clones.paths["b"]
    held = _reservations(b, "alice")
    alice = held.reservations[0]
    made_up = Reservation(
        id=7,
        agent="bob",
        path_pattern="src/a.py",
        created_at=alice.created_at - timedelta(hours=1),
        expires_at=alice.expires_at,
    )
    (b / reservation_path("bob")).write_bytes(
        encode_file(ReservationFile(agent="bob", reservations=[made_up]))
    )
    mark = Override(reservation_id=7, holder="bob", pattern="src/a.py")
    taken = alice.model_copy(update={"yielded_to": mark})
    (b / reservation_path("alice")).write_bytes(
        encode_file(held.model_copy(update={"reservations": [taken]}))
    )
    git(b, "add", ".hive")
    state = git(b, "rev-parse", "refs/hive-remotes/origin/state").strip()
    forged = _forged_commit(b, "bob", f"sync 0 cell(s) from origin\n\nHive-Sync-State: {state}")
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == [
        (forged, "bob changed the reservations of alice")
    ]


def test_each_reservation_file_version_is_parsed_once_over_an_audit(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """alice and bob reserve in their clones and sync, round after round: the audit of
    bob's sync commits, which bring alice's reservation file, parsed each version of it
    up to five times (the claim check of the commit and of the next, and the yield
    check's three sides); each is parsed once, with the same findings (none)."""
    alice, bob = clones.ws("a", "alice"), clones.ws("b", "bob")
    for round_ in range(3):
        reserve(alice, paths=[f"a{round_}/**"], ttl_seconds=3600)
        reserve(bob, paths=[f"b{round_}/**"], ttl_seconds=3600)
        clones.sync("a")
        clones.sync("b")
    parsed = yaml_parses(monkeypatch)
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []
    versions = {text: count for text, count in parsed.items() if "agent: alice" in text}
    assert len(versions) >= 3 and max(versions.values()) == 1, versions
