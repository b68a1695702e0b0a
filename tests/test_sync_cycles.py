"""A sync whose merge closes a dependency cycle (each clone added one ``blocks`` edge
offline, each refused by neither): it says so, ``hive doctor`` reports the cycle, and
``hive ready`` answers without the deadlocked cells."""

from __future__ import annotations

import json

import pytest

from hive.domain.cells import add_dependency, create_cell
from tests.inprocess import run_hive
from tests.test_sync import Clones, built_clones, clones

__all__ = ["built_clones", "clones"]  # the fixtures, shared with tests/test_sync.py

ADVICE = (
    " (each side added a dependency of it; none of them can be ready: remove one with"
    " 'hive dep remove'; see 'hive doctor')"
)


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # lean first, or the full CLI
def test_a_merge_that_closes_a_cycle_is_reported(clones: Clones, module: str) -> None:
    first = create_cell(clones.ws("a"), title="First").id
    second = create_cell(clones.ws("a"), title="Second").id
    clones.sync("a")
    clones.sync("b")
    add_dependency(clones.ws("a"), cell_id=first, target=second)
    clones.sync("a")
    add_dependency(clones.ws("b"), cell_id=second, target=first)
    b = str(clones.paths["b"])
    done = run_hive(["-C", b, "sync"], module=module)
    assert done.returncode == 0, done.stderr
    shown = [line for line in done.stdout.splitlines() if "dependency cycle" in line]
    assert shown in (
        [f"  dependency cycle: {x} -> {y} -> {x}{ADVICE}"]
        for x, y in ((first, second), (second, first))
    ), done.stdout
    answer = json.loads(run_hive(["-C", str(clones.paths["a"]), "--json", "sync"]).stdout)
    assert answer["cycles"] in ([[x, y, x]] for x, y in ((first, second), (second, first)))
    for repo in (b, str(clones.paths["a"])):
        doctor = run_hive(["-C", repo, "doctor"])
        assert doctor.returncode == 1 and "cycle: dependency cycle: " in doctor.stdout
        ready = run_hive(["-C", repo, "--json", "ready"], module=module)
        assert ready.returncode == 0 and json.loads(ready.stdout) == []
    quiet = json.loads(run_hive(["-C", b, "--json", "sync"], module=module).stdout)
    assert quiet["cycles"] == []  # reported by the sync that made it, then by doctor


def test_the_sync_s_cycle_check_knows_the_graph_s_ordering_types() -> None:
    """syncorder keeps its own copy of the dependency types that order work (the lean
    sync does not import the models graph needs): a type added to one and not the other
    would let a sync close a cycle unreported, or report edges that order nothing."""
    from hive.domain import graph, syncorder

    assert set(syncorder.ORDERING_TYPES) == set(graph.ORDERING_TYPES)
