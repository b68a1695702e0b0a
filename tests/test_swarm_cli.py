"""``hive swarm <verb>`` with the seed's parameter names (and the short aliases), gate
output on failure without --json, and ``hive review --json``."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from hive.domain.cells import show_cell
from hive.domain.outcomes import load_outcomes
from hive.domain.workspace import Workspace
from hive.store.yamlio import dumps
from tests.conftest import git
from tests.test_review import hive

PLAN = {
    "epic": {"title": "Payments"},
    "subtasks": [
        {"title": "ledger", "files": ["src/ledger.py"]},
        {"title": "api", "files": ["src/api.py"], "dependencies": [0]},
    ],
}


def as_json(result: subprocess.CompletedProcess[str]) -> Any:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def epic(repo: Path) -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = as_json(
        hive(
            repo,
            "swarm",
            "create-epic",
            "--epic-title",
            "Payments",
            "--subtask",
            json.dumps({"title": "ledger", "files": ["src/ledger.py"]}),
            "--subtask",
            "api docs",
            "--strategy",
            "file-based",
            "--json",
        )
    )
    return cells


def test_create_epic_from_options_and_validate_decomposition(ws: Workspace, repo: Path) -> None:
    cells = epic(repo)
    assert [c["title"] for c in cells] == ["Payments", "ledger", "api docs"]
    assert cells[1]["files_owned"] == ["src/ledger.py"]
    assert cells[0]["metadata"] == {"strategy": "file-based"}
    plan = repo / "plan.json"
    plan.write_text(json.dumps(PLAN))
    for verb in ("validate-decomposition", "validate", "validate_decomposition"):
        assert as_json(hive(repo, "swarm", verb, str(plan), "--json"))["valid"] is True
    # each verb also as its tool names it (swarm_select_strategy, hive_create_epic)
    chosen = as_json(hive(repo, "swarm", "select_strategy", "Fix the crash", "--json"))
    assert chosen == as_json(hive(repo, "swarm", "select-strategy", "Fix the crash", "--json"))
    created = as_json(hive(repo, "swarm", "create_epic", str(plan), "--json"))
    assert [c["title"] for c in created] == ["Payments", "ledger", "api"], created
    both = hive(repo, "swarm", "create-epic", str(plan), "--epic-title", "x")
    assert both.returncode == 2 and "not both" in both.stderr


def test_complete_with_seed_named_options(ws: Workspace, repo: Path) -> None:
    cells = epic(repo)
    ledger = cells[1]["id"]
    (repo / "src").mkdir()
    (repo / "src/ledger.py").write_text("LEDGER = []\n")
    (repo / "src/ledger_test.py").write_text("ok\n")
    result = as_json(
        hive(
            repo,
            "swarm",
            "complete",
            ledger,
            "-s",
            "ledger done",
            "--files-touched",
            "src/ledger.py",
            "-f",
            "src/ledger_test.py",
            "--error-count",
            "2",
            "--retry-count",
            "1",
            "--agent-name",
            "carol",
            "--project-key",
            str(repo),
            "--evaluation",
            "added tests",
            "--no-gate",
            "--json",
            actor="carol",
        )
    )
    outcome = result["outcome"]
    assert (outcome["agent"], outcome["error_count"], outcome["retry_count"]) == ("carol", 2, 1)
    assert outcome["files_touched"] == ["src/ledger.py", "src/ledger_test.py"]
    assert outcome["evaluation"] == {"notes": "added tests"} and outcome["gate"] == "skipped"
    assert git(repo, "show", "HEAD:src/ledger.py") == "LEDGER = []\n"
    assert "Hive-Agent: carol" in git(repo, "log", "-1", "--format=%B")


def test_gate_output_and_evaluation_notes_are_shown_without_json(ws: Workspace, repo: Path) -> None:
    cells = epic(repo)
    config = repo / ".hive" / "config.yaml"
    config.write_text(
        config.read_text() + dumps({"verify": {"commands": ["echo FAILED: {files}; exit 3"]}})
    )
    git(repo, "commit", "-qam", "gate")
    (repo / "src").mkdir()
    (repo / "src/ledger.py").write_text("x\n")
    before = git(repo, "rev-parse", "HEAD")
    failed = hive(repo, "swarm", "complete", cells[1]["id"], "-s", "x", "-f", "src/ledger.py")
    assert failed.returncode == 9
    assert "FAILED: src/ledger.py" in failed.stderr and "exited 3" in failed.stderr
    refused = hive(
        repo,
        "swarm",
        "complete",
        cells[1]["id"],
        "-s",
        "x",
        "--no-gate",
        "--evaluation",
        json.dumps({"passed": False, "notes": "tests are red"}),
    )
    assert refused.returncode == 9 and "evaluation notes: tests are red" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == before


def test_progress_status_and_record_outcome_options(ws: Workspace, repo: Path) -> None:
    cells = epic(repo)
    epic_id, ledger = cells[0]["id"], cells[1]["id"]
    progress = as_json(
        hive(
            repo,
            "swarm",
            "progress",
            ledger,
            "--status",
            "in_progress",
            "--progress-percent",
            "30",
            "--agent-name",
            "bob",
            "--project-key",
            str(repo),
            "-f",
            "src/ledger.py",
            "--json",
        )
    )
    assert progress["percent"] == 30 and "coordinator not registered" in progress["not_posted"]
    failed = as_json(
        hive(repo, "swarm", "progress", ledger, "--status", "failed", "-m", "stuck", "--json")
    )
    assert failed["cell"]["status"] == "blocked" and failed["outcome"]["success"] is False
    status = as_json(hive(repo, "swarm", "status", epic_id, "--project-key", str(repo), "--json"))
    assert (status["total"], status["blocked"], status["open"], status["in_progress"]) == (
        2,
        1,
        1,
        0,
    )
    bad = hive(repo, "swarm", "record-outcome", ledger, "--success", "--strategy", "vibes")
    assert bad.returncode == 2 and "unknown strategy" in bad.stderr
    recorded = as_json(
        hive(
            repo,
            "swarm",
            "record-outcome",
            ledger,
            "--failure",
            "--error-count",
            "3",
            "--retry-count",
            "1",
            "--criteria",
            "tests",
            "--criteria",
            "scope",
            "--json",
        )
    )
    assert (recorded["error_count"], recorded["criteria"]) == (3, ["tests", "scope"])


def test_progress_completed_names_the_command_that_completes(ws: Workspace, repo: Path) -> None:
    """``hive swarm progress --status completed`` leaves the cell open and says what
    finishes it: on the command line the ``hive swarm complete`` command (it named the
    tool call, ``swarm_complete(project_key, ...)``, which a person cannot type); with
    ``--json`` the result's ``next_step`` stays the tool call, for an agent's runtime."""
    ledger = epic(repo)[1]["id"]
    shown = hive(repo, "swarm", "progress", ledger, "--status", "completed")
    assert shown.returncode == 0, shown.stderr
    assert f"next: 'hive swarm complete {ledger} -s SUMMARY --files-touched PATH ...'" in (
        shown.stdout
    )
    assert "swarm_complete(" not in shown.stdout
    step = as_json(hive(repo, "swarm", "progress", ledger, "--status", "completed", "--json"))
    assert step["next_step"].startswith("call swarm_complete(project_key, agent_name, cell_id")


def test_planning_options(ws: Workspace, repo: Path) -> None:
    choice = as_json(
        hive(
            repo,
            "swarm",
            "select-strategy",
            "Add a page",
            "--codebase-context",
            "refactor rename move files",
            "--json",
        )
    )
    assert choice["strategy"] == "file-based" and choice["score"]["strategy"] == "file-based"
    for flags in (["--no-query-cass"], ["--no-cass"]):
        result = as_json(
            hive(
                repo,
                "swarm",
                "plan-prompt",
                "Add a page",
                "--strategy",
                "auto",
                "--cass-limit",
                "2",
                *flags,
                "--json",
            )
        )
        assert result["cass"] == "skipped"
    decompose = as_json(hive(repo, "swarm", "decompose", "Add a page", "--no-query-cass", "--json"))
    assert decompose["cass"] == "skipped"
    cells = epic(repo)
    brief = as_json(
        hive(
            repo,
            "swarm",
            "spawn-subtask",
            cells[1]["id"],
            "--agent-name",
            "bob",
            "--epic-id",
            cells[0]["id"],
            "--subtask-title",
            "Ledger v2",
            "--files",
            "src/l.py",
            "--shared-context",
            "money is integer cents",
            "--json",
        )
    )
    assert "Ledger v2" in brief["prompt"] and "integer cents" in brief["prompt"]
    evaluation = as_json(
        hive(
            repo,
            "swarm",
            "evaluation-prompt",
            cells[1]["id"],
            "--subtask-title",
            "Ledger v2",
            "--files-touched",
            "src/l.py",
            "--json",
        )
    )
    assert "'Ledger v2'" in evaluation["prompt"] and "src/l.py" in evaluation["prompt"]


def test_review_json_via_the_cli(ws: Workspace, repo: Path) -> None:
    cells = epic(repo)
    ledger = cells[1]["id"]
    (repo / "src").mkdir()
    (repo / "src/ledger.py").write_text("x\n")
    (repo / "stray.py").write_text("y\n")
    as_json(
        hive(
            repo,
            "swarm",
            "complete",
            ledger,
            "-s",
            "done",
            "-f",
            "src/ledger.py",
            "-f",
            "stray.py",
            "--json",
        )
    )
    review = as_json(hive(repo, "review", ledger, "--json"))
    assert review["target"] == ledger and not review["is_epic"]
    [cell] = review["cells"]
    assert cell["scope_violations"] == ["stray.py"]
    assert cell["outcome"]["cell_id"] == ledger
    assert show_cell(ws, cell_id=ledger).status == "closed"
    assert load_outcomes(ws)[-1].files_touched == ["src/ledger.py", "stray.py"]


def test_swarm_init_reads_as_lines_and_json_with_json(ws: Workspace, repo: Path) -> None:
    """``hive swarm init`` printed its JSON record to a person too (the one command that
    did, docs/cli.md: ``--json`` is what asks for machine output); now lines, and the
    record with ``--json``."""
    shown = hive(repo, "swarm", "init")
    assert shown.returncode == 0, shown.stderr
    assert not shown.stdout.lstrip().startswith("{"), shown.stdout
    lines = dict(line.split(None, 1) for line in shown.stdout.splitlines())
    assert lines["project"] == str(repo) and lines["hive"].startswith("available: ")
    assert "feature-based" in lines["strategies"] and lines["mail"] == "available"
    record = as_json(hive(repo, "swarm", "init", "--json"))
    assert record["project_path"] == str(repo) and "feature-based" in record["strategies"]
