"""Damaged hives: fuzzed cell files, corrupted git objects, truncated files and a
directory where a cell file should be. Nothing crashes, the damage is explained,
and every other cell stays usable."""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hive.domain.cells import create_cell, list_cells, ready, show_cell, update_cell
from hive.domain.doctor import diagnose
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.store.cells import encode_cell
from hive.store.layout import cell_path
from tests.conftest import git, make_repo
from tests.inprocess import run_hive


def _commit_file(repo: Path, path: str, content: bytes) -> None:
    full = repo / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_bytes(content)
    git(repo, "add", "-f", path)
    git(repo, "commit", "-q", "--no-verify", "--allow-empty", "-m", f"damage {path}")


# ------------------------------------------------------------------ fuzzed cell files

FIELDS = [
    b"id: hv-fuzz01\n",
    b"title: Fuzzed\n",
    b"status: open\n",
    b"status: [\n",
    b"priority: 9\n",
    b"priority: 0\n",
    b'created_at: "2026-01-01T00:00:00.000Z"\n',
    b"updated_at: not a time\n",
    b"dependencies:\n  - type: blocks\n    target: hv-good01\n",
    b"dependencies: 7\n",
    b"labels: [a, b\n",
    b"metadata: {x: 1}\n",
    b"\xff\xfe\x00",
    b"- just a list\n",
    b"title: !!python/object:os.system echo\n",
    b"conflicts:\n  - field: title\n",
    b"comments:\n  - id: c\n    text: hi\n",
    b"&a [*a, *a]\n",
    b"",
]
fuzzed = st.lists(st.sampled_from(FIELDS), max_size=8).map(b"".join) | st.binary(max_size=300)


@pytest.fixture(scope="module")
def fuzz_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = make_repo(tmp_path_factory.mktemp("fuzz") / "repo")
    ws = Workspace(str(repo), actor="fuzz")
    init_hive(ws)
    create_cell(ws, title="good one")
    # tracked: each example is one commit, which replaces the previous example's (an
    # example sees the same short history whatever ran before it, and doctor's history
    # scans do not grow with the examples)
    _commit_file(repo, cell_path("hv-fuzz01"), b"")
    return repo


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fuzzed)
def test_fuzzed_cell_files_never_crash_list_ready_or_doctor(
    fuzz_repo: Path, content: bytes
) -> None:
    (fuzz_repo / cell_path("hv-fuzz01")).write_bytes(content)
    git(
        fuzz_repo,
        "commit",
        "-q",
        "--no-verify",
        "--allow-empty",
        "--amend",
        "-m",
        "fuzz",
        "--",
        cell_path("hv-fuzz01"),
    )
    ws = Workspace(str(fuzz_repo), actor="fuzz")
    titles = {c.title for c in list_cells(ws, status="all")}
    assert "good one" in titles  # one bad file never hides the others
    ready(ws)
    report = diagnose(ws)
    assert all(problem.message for problem in report.problems)
    for command in (["list"], ["ready"], ["doctor"], ["show", "hv-fuzz01"]):
        result = run_hive(["-C", str(fuzz_repo), *command], module="hive.cli.main")
        assert result.exit_code in (0, 1, 3, 7), result.output
        assert "Traceback" not in result.output and "internal error" not in result.output


# ------------------------------------------------------------------ corrupted objects


def _loose_object(repo: Path, sha: str) -> Path:
    return repo / ".git" / "objects" / sha[:2] / sha[2:]


def test_a_corrupted_object_is_explained_and_other_cells_stay_usable(
    ws: Workspace, repo: Path
) -> None:
    victim = create_cell(ws, title="will be damaged")
    other = create_cell(ws, title="stays fine")
    sha = git(repo, "rev-parse", f"HEAD:{cell_path(victim.id)}").strip()
    obj = _loose_object(repo, sha)
    os.chmod(obj, 0o644)
    obj.write_bytes(zlib.compress(b"garbage")[:-3])  # truncated zlib stream
    # what the state index parsed before the damage is still known (it is keyed by the
    # blob id); doctor checks the objects themselves
    problems = diagnose(Workspace(str(repo), actor="alice")).problems
    assert any(p.kind == "corrupt" and victim.id == p.cell for p in problems)
    index_file = repo / ".git" / "hive" / "index.sqlite3"
    for suffix in ("", "-wal", "-shm"):
        Path(f"{index_file}{suffix}").unlink(missing_ok=True)
    fresh = Workspace(str(repo), actor="alice")  # a cold read meets the damaged object
    assert [c.id for c in list_cells(fresh)] == [other.id]
    update_cell(fresh, cell_id=other.id, priority=0)  # still writable
    with pytest.raises(CorruptFile) as caught:
        show_cell(fresh, cell_id=victim.id)
    assert cell_path(victim.id) in caught.value.message and "git fsck" in caught.value.message
    problems = diagnose(fresh).problems
    assert any(p.kind == "corrupt" and victim.id == p.cell for p in problems)
    result = run_hive(["-C", str(repo), "doctor"], module="hive.cli.main")
    assert result.exit_code == 1 and sha[:12] in result.output
    obj.unlink()  # a missing object is explained the same way
    assert any(victim.id == p.cell for p in diagnose(Workspace(str(repo))).problems)


def test_a_truncated_cell_file_is_explained(ws: Workspace, repo: Path) -> None:
    victim = create_cell(ws, title="to be truncated", description="long text\n" * 5)
    other = create_cell(ws, title="intact")
    data = encode_cell(show_cell(ws, cell_id=victim.id))
    _commit_file(repo, cell_path(victim.id), data[: len(data) // 3])
    fresh = Workspace(str(repo))
    assert [c.id for c in list_cells(fresh)] == [other.id]
    problem = next(p for p in diagnose(fresh).problems if p.cell == victim.id)
    assert problem.kind == "corrupt" and cell_path(victim.id) in problem.message


def _outcome_path(ws: Workspace, repo: Path) -> str:
    """A cell closed with swarm_complete: the path of its outcome record."""
    from hive.domain.outcomes import OUTCOMES_DIR
    from hive.domain.swarm.complete import swarm_complete

    cell = create_cell(ws, title="done with an outcome")
    update_cell(ws, cell_id=cell.id, status="in_progress", assignee=ws.actor)
    swarm_complete(ws, agent_name=ws.actor, cell_id=cell.id, summary="finished")
    (path,) = ws.snapshot().listing(OUTCOMES_DIR)
    return path


def test_truncated_memory_permission_and_outcome_files_are_explained(
    ws: Workspace, repo: Path
) -> None:
    """doctor said "no problems" while inject_context failed on a truncated
    .hive/context.yaml and a truncated permission decision silently stopped counting."""
    from hive.domain.memory import update_context
    from hive.domain.permissions import request_permission

    update_context(ws, section="goals", add="ship the first release")
    decision = request_permission(
        ws, resource_type="DATABASE", justification="read the revenue table", scope=None
    )
    memory = (repo / ".hive/context.yaml").read_bytes()
    _commit_file(repo, ".hive/context.yaml", memory[: len(memory) - 10] + b'"cut')
    path = f".hive/permissions/{decision.decision_id}.yaml"
    _commit_file(repo, path, (repo / path).read_bytes()[:30])
    problems = {p.path: p for p in diagnose(Workspace(str(repo))).problems}
    assert problems[".hive/context.yaml"].kind == "corrupt"
    assert "update_context fail" in problems[".hive/context.yaml"].message
    assert problems[path].kind == "corrupt" and "ignored" in problems[path].message
    (repo / path).unlink()  # an outcome record, truncated: learning skips it, doctor says so
    outcome = _outcome_path(ws, repo)
    _commit_file(repo, outcome, (repo / outcome).read_bytes()[:40])
    problems = {p.path: p for p in diagnose(Workspace(str(repo))).problems}
    assert problems[outcome].kind == "corrupt" and "ignored" in problems[outcome].message
    done = run_hive(["-C", str(repo), "doctor"], module="hive.cli.main")
    assert done.exit_code == 1 and ".hive/context.yaml:" in done.output


def test_a_truncated_uncommitted_cell_file_is_explained(ws: Workspace, repo: Path) -> None:
    victim = create_cell(ws, title="edited by hand")
    full = repo / cell_path(victim.id)
    full.write_bytes(full.read_bytes()[:20])
    problems = diagnose(Workspace(str(repo))).problems
    assert [p.kind for p in problems] == ["corrupt-uncommitted"]


def test_a_directory_in_place_of_a_cell_file(ws: Workspace, repo: Path) -> None:
    good = create_cell(ws, title="fine")
    bad_id = "hv-dir001"
    _commit_file(repo, f"{cell_path(bad_id)}/inner.txt", b"not a cell\n")
    fresh = Workspace(str(repo))
    assert [c.id for c in list_cells(fresh)] == [good.id]
    result = run_hive(["-C", str(repo), "list"], module="hive.cli.main")
    assert result.exit_code == 0 and "is a directory" in result.output
    result = run_hive(["-C", str(repo), "show", bad_id], module="hive.cli.main")
    assert result.exit_code == 7 and "is a directory" in result.output
    assert any("is a directory" in p.message for p in diagnose(fresh).problems)


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])
def test_a_committed_directory_in_place_of_a_cell_file_is_named_by_ready(
    ws: Workspace, repo: Path, module: str
) -> None:
    """``hive ready`` warns of it as ``hive list`` does, on the lean path too: the lean
    ``ready`` counted only the cell *files* that do not load, so it said nothing."""
    good = create_cell(ws, title="fine")
    _commit_file(repo, f"{cell_path('hv-dir002')}/inner.txt", b"not a cell\n")
    for args in (["ready"], ["ready", "--json"]):
        result = run_hive(["-C", str(repo), *args], module=module)
        assert result.exit_code == 0 and good.id in result.stdout, (args, result.output)
        assert "is a directory, not a cell file" in result.stderr, (args, result.output)


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])
def test_a_directory_in_the_working_tree_in_place_of_a_cell_file(
    ws: Workspace, repo: Path, module: str
) -> None:
    """``hive`` (the console script, whose lean path answers list/ready/show) warns as
    the full CLI does: the lean list and ready printed the cell without a word."""
    cell = create_cell(ws, title="shadowed on disk")
    full = repo / cell_path(cell.id)
    full.unlink()
    full.mkdir()
    for args in (["show", cell.id], ["show", cell.id, "--json"], ["list"], ["ready"]):
        result = run_hive(["-C", str(repo), *args], module=module)
        assert result.exit_code == 0 and cell.id in result.stdout, (args, result.output)
        assert "is a directory, not a cell file" in result.stderr, (args, result.output)
    assert any("is a directory" in p.message for p in diagnose(Workspace(str(repo))).problems)
