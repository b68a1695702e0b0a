"""Seed 000's coordinator queue (coord_*): FIFO, leases, errors, many processes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from hive.domain.workspace import Workspace
from tests.conftest import HeldClock
from tests.seedkit import cli, error, result, run_workers


def enqueue(repo: Path, kind: str, **payload: object) -> str:
    added = result(repo, "orch", "coord_enqueue", {"kind": kind, "payload": payload})
    assert added["enqueued"] is True and added["kind"] == kind
    item_id: str = added["id"]
    return item_id


def test_fifo_leases_and_completion(ws: Workspace, repo: Path) -> None:
    first, second = enqueue(repo, "scan_docs", dir="docs"), enqueue(repo, "scan", dir="src")
    status = result(repo, "A", "coord_status")
    assert status == {
        "length": 2,
        "front": {"id": first, "kind": "scan_docs", "payload": {"dir": "docs"}, "status": "queued"},
        "counts": {"queued": 2, "claimed": 0, "done": 0},
        "phase": 0,
    }
    got = result(repo, "A", "coord_next", {"lease_sec": 180})["item"]
    assert set(got) == {"id", "kind", "payload", "lease_until", "claimed_by"}
    assert (got["id"], got["payload"], got["claimed_by"]) == (first, {"dir": "docs"}, "A")
    assert 170 < got["lease_until"] - time.time() < 190
    assert result(repo, "B", "coord_next")["item"]["id"] == second  # skips the leased item
    assert result(repo, "C", "coord_next") == {"item": None}
    assert result(repo, "A", "coord_complete", {"id": first, "result": {"ok": True}}) == {
        "id": first,
        "status": "done",
    }
    assert result(repo, "A", "coord_status")["counts"] == {"queued": 0, "claimed": 1, "done": 1}


def test_an_expired_lease_returns_the_item(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = HeldClock(monkeypatch, ("hive.domain.queue",))  # the lease is not waited out
    item = enqueue(repo, "slow")
    assert result(repo, "A", "coord_next", {"lease_sec": 1})["item"]["id"] == item
    assert result(repo, "B", "coord_next")["item"] is None
    clock.advance(1.1)
    assert result(repo, "B", "coord_status")["counts"]["queued"] == 1
    again = result(repo, "B", "coord_next", {"lease_sec": 60})["item"]
    assert again["id"] == item and again["claimed_by"] == "B"
    # The old holder lost it: it can neither extend nor complete it now, and both say
    # so with one code (coord_extend said "conflict" where the others said this)
    for name, args in (("coord_extend", {"extend_sec": 60}), ("coord_complete", {"result": 1})):
        lost = error(repo, "A", name, {"id": item, **args})
        assert lost["code"] == "already_claimed" and lost["claimed_by"] == "B", name
        assert "only the holder can" in lost["error"], name
    assert result(repo, "B", "coord_complete", {"id": item, "result": 1})["status"] == "done"


def test_claim_and_extend(ws: Workspace, repo: Path) -> None:
    item = enqueue(repo, "k")
    claimed = result(repo, "A", "coord_claim", {"id": item, "lease_sec": 30})
    assert set(claimed) == {"id", "kind", "lease_until", "claimed_by"}
    assert claimed["claimed_by"] == "A" and claimed["kind"] == "k"
    taken = error(repo, "B", "coord_claim", {"id": item})
    assert taken["code"] == "already_claimed" and "claimed by A" in taken["error"]
    extended = result(repo, "A", "coord_extend", {"id": item, "extend_sec": 100})
    assert extended["id"] == item
    assert abs(extended["lease_until"] - (claimed["lease_until"] + 100)) < 0.01
    held = error(repo, "B", "coord_extend", {"id": item, "extend_sec": 5})
    assert held["code"] == taken["code"] == "already_claimed" and held["claimed_by"] == "A"
    result(repo, "A", "coord_complete", {"id": item, "result": None})
    assert error(repo, "A", "coord_claim", {"id": item})["code"] == "conflict"
    assert error(repo, "A", "coord_complete", {"id": item})["code"] == "conflict"
    assert error(repo, "A", "coord_extend", {"id": item, "extend_sec": 5})["code"] == "conflict"
    queued = enqueue(repo, "k")
    unclaimed = error(repo, "A", "coord_extend", {"id": queued, "extend_sec": 5})
    assert unclaimed["code"] == "conflict" and "claim it first" in unclaimed["error"]


def test_errors_are_structured(ws: Workspace, repo: Path) -> None:
    for name, args in (
        ("coord_claim", {"id": "q-nope"}),
        ("coord_complete", {"id": "q-nope", "result": 1}),
        ("coord_extend", {"id": "q-nope", "extend_sec": 5}),
    ):
        assert error(repo, "A", name, args)["code"] == "not_found"
    for name, args in (
        ("coord_enqueue", {"kind": "k", "payload": [1, 2]}),
        ("coord_enqueue", {"kind": "k"}),
        ("coord_enqueue", {"kind": 3, "payload": {}}),
        ("coord_enqueue", {"kind": "k", "payload": {"x": "y" * 300_000}}),
        ("coord_next", {"lease_sec": -5}),
        ("coord_next", {"lease_sec": "180"}),
        ("coord_next", {"lease_sec": 10**12}),
        ("coord_claim", {}),
        ("coord_extend", {"id": "q-1"}),
        ("coord_status", {"verbose": True}),
    ):
        assert error(repo, "A", name, args)["code"] in ("invalid_arguments", "invalid_input"), args
    assert result(repo, "A", "coord_status")["length"] == 0


def test_eight_processes_draining_500_items_never_share_one(ws: Workspace, repo: Path) -> None:
    ids = {enqueue(repo, "job", n=n) for n in range(500)}
    taken = run_workers(
        repo,
        """
        ctx = CallContext(root=repo, agent=f"W{worker}")
        mine = []
        while True:
            item = call_tool(ctx, "coord_next", {"lease_sec": 600})["result"]["item"]
            if item is None:
                break
            mine.append(item["id"])
            done = call_tool(ctx, "coord_complete", {"id": item["id"], "result": worker})
            assert "result" in done, done
        print(json.dumps(mine))
        """,
        count=8,
    )
    everything = [item for batch in taken for item in batch]
    assert len(everything) == len(set(everything)) == 500
    assert set(everything) == ids
    assert sum(1 for batch in taken if batch) >= 2  # the work really was shared
    assert result(repo, "A", "coord_status")["counts"] == {"queued": 0, "claimed": 0, "done": 500}


def test_queue_cli(ws: Workspace, repo: Path) -> None:
    code, out = cli(repo, "queue", "add", "scan", '{"dir": "docs"}')
    assert code == 0 and "queued q-" in out
    code, out = cli(repo, "queue", "status")
    assert "1 waiting" in out
    code, out = cli(repo, "queue", "next", "--lease", "60")
    item = out.split()[0]
    assert code == 0 and item.startswith("q-")
    code, out = cli(repo, "queue", "list")
    assert f"{item}  claimed alice" in out
    code, _ = cli(repo, "queue", "extend", item, "30")
    assert code == 0
    code, _ = cli(repo, "queue", "complete", item, '{"ok": true}')
    assert code == 0
    code, out = cli(repo, "queue", "list", "--status", "done", "--json")
    assert '"result": {' in out and '"ok": true' in out
    code, _ = cli(repo, "queue", "next")
    assert code == 1
    code, _ = cli(repo, "queue", "add", "scan", "[1]")
    assert code == 2
