"""Strategy selection from outcomes, decay, maturity, decomposition prompts and validation."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from hive.domain.cells import show_cell
from hive.domain.outcomes import new_outcome_id, outcome_change
from hive.domain.swarm.decompose import (
    create_epic_from_decomposition,
    swarm_init,
    swarm_plan_prompt,
    swarm_validate_decomposition,
)
from hive.domain.swarm.learning import (
    Tally,
    anti_patterns,
    decay,
    insights,
    maturity,
    select_strategy,
)
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.repo import Change, Snapshot
from hive.models import utc_now
from hive.models.outcome import Outcome
from tests.conftest import git

TASK = "Refactor the search module and rename the index helpers"


def outcome(title: str, strategy: str, success: bool, days_ago: float = 1.0) -> Outcome:
    now = utc_now()
    return Outcome(
        id=new_outcome_id("hv-aaaaaa.b1"),
        cell_id="hv-aaaaaa.b1",
        agent="w",
        title=title,
        strategy=strategy,
        success=success,
        recorded_at=now - timedelta(days=days_ago),
    )


def store(ws: Workspace, outcomes: list[Outcome]) -> None:
    def plan(snap: Snapshot) -> tuple[list[Change], str, None]:
        return (
            [outcome_change(o) for o in outcomes],
            "test: outcomes\n\nHive-Event: outcome\n",
            None,
        )

    ws.write_files(plan)


def test_keywords_decide_without_history(ws: Workspace) -> None:
    assert select_strategy(ws, task=TASK).strategy == "file-based"
    assert select_strategy(ws, task="Investigate why search is slow").strategy == "research-based"
    choice = select_strategy(ws, task="Fix the crash in checkout payment flow")
    assert choice.strategy == "risk-based" and choice.precedents == []
    assert {alt.strategy for alt in choice.alternatives} == {
        "file-based",
        "feature-based",
        "research-based",
    }


def test_evidence_from_similar_outcomes_flips_the_choice(ws: Workspace) -> None:
    before = select_strategy(ws, task=TASK)
    history = [outcome("Refactor search module helpers", "file-based", False) for _ in range(4)]
    history += [outcome("Rename index helpers in search", "feature-based", True) for _ in range(4)]
    store(ws, history)
    after = select_strategy(ws, task=TASK)
    assert before.strategy == "file-based"
    assert after.strategy == "feature-based"
    assert "evidence overrides the keywords" in after.reasoning
    assert len(after.precedents) == 8


def test_unrelated_outcomes_do_not_flip(ws: Workspace) -> None:
    history = [outcome("Write the onboarding docs", "file-based", False) for _ in range(6)]
    history += [outcome("Design the landing page", "feature-based", True) for _ in range(6)]
    store(ws, history)
    choice = select_strategy(ws, task=TASK)
    assert choice.strategy == "file-based" and choice.precedents == []


def test_old_failures_count_less_than_recent_ones(ws: Workspace) -> None:
    now = utc_now()
    assert decay(now - timedelta(days=90), now) == pytest.approx(0.5)
    assert decay(now - timedelta(days=180), now) == pytest.approx(0.25)
    old = [outcome("Refactor search module helpers", "file-based", False, 720) for _ in range(4)]
    old += [outcome("Rename index helpers in search", "feature-based", True, 720) for _ in range(4)]
    assert select_strategy(ws, task=TASK, outcomes=old).strategy == "file-based"
    recent = [o.model_copy(update={"recorded_at": now}) for o in old]
    assert select_strategy(ws, task=TASK, outcomes=recent).strategy == "feature-based"


def test_maturity_and_anti_patterns() -> None:
    assert maturity(Tally(successes=1, failures=0)) == "candidate"
    assert maturity(Tally(successes=3, failures=1)) == "established"
    assert maturity(Tally(successes=9, failures=1)) == "proven"
    assert maturity(Tally(successes=0.5, failures=3)) == "deprecated"
    failures = [outcome("Fix login crash", "file-based", False) for _ in range(3)]
    lessons = anti_patterns(failures)
    assert lessons and lessons[0].startswith("Avoid file-based for bugfix tasks")


def test_insights_by_strategy_and_month(ws: Workspace) -> None:
    store(
        ws,
        [
            outcome("Add export", "feature-based", True),
            outcome("Add import", "feature-based", False),
            outcome("Fix crash", "risk-based", True),
        ],
    )
    report = insights(ws)
    by_name = {s.strategy: s for s in report.strategies}
    assert by_name["feature-based"].total == 2 and by_name["feature-based"].success_rate == 0.5
    month = utc_now().strftime("%Y-%m")
    assert by_name["risk-based"].by_month[month]["count"] in (1, 1.0)


def test_plan_prompt_carries_strategy_history_lessons_and_cass(
    ws: Workspace, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_epic_from_decomposition(
        ws,
        decomposition={
            "epic": {"title": "Refactor search helpers"},
            "subtasks": [{"title": "split module", "files": ["src/pay/**"]}],
        },
        strategy="file-based",
    )
    store(ws, [outcome("Refactor search crash fix", "risk-based", False) for _ in range(3)])
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cass = bin_dir / "cass"
    hits = {"hits": [{"title": "session 12", "snippet": "we split payments by file"}]}
    cass.write_text(f"#!/bin/sh\necho '{json.dumps(hits)}'\n")
    cass.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    result = swarm_plan_prompt(ws, task=TASK, max_subtasks=4)
    assert result.cass == "ok" and "session 12: we split payments by file" in result.prompt
    assert "Refactor search helpers (strategy file-based)" in result.prompt
    assert "at most 4 subtasks" in result.prompt
    assert result.anti_patterns and "Lessons from past failures" in result.prompt
    assert result.response_schema["required"] == ["epic", "subtasks"]
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    assert swarm_plan_prompt(ws, task=TASK).cass == "unavailable"
    forced = swarm_plan_prompt(ws, task=TASK, strategy="research-based", query_cass=False)
    assert forced.strategy.strategy == "research-based" and forced.cass == "skipped"
    with pytest.raises(InvalidInput, match="unknown strategy"):
        swarm_plan_prompt(ws, task=TASK, strategy="vibes")


GOOD = {
    "epic": {"title": "Auth", "description": "rewrite"},
    "strategy": "feature-based",
    "subtasks": [
        {"title": "store", "files": ["src/auth/store.py"], "estimated_complexity": 2},
        {"title": "form", "files": ["src/ui/**"], "dependencies": [0]},
    ],
}


def test_validation_accepts_fenced_json_and_normalises() -> None:
    text = "Here is the plan:\n```json\n" + json.dumps(GOOD) + "\n```\nThanks."
    result = swarm_validate_decomposition(None, response=text)
    assert result.valid and result.data is not None
    assert result.data.subtasks[1].files == ["src/ui/**"]


@pytest.mark.parametrize(
    ("files", "fragment"),
    [
        ((["src/**"], ["src/a.py"]), "subtasks 0 and 1 both own"),
        ((["src/a.py"], ["src/**"]), "subtasks 0 and 1 both own"),
        ((["src/*.py"], ["src/a*"]), "subtasks 0 and 1 both own"),
        ((["**/*.py"], ["lib/**"]), "subtasks 0 and 1 both own"),
    ],
)
def test_file_conflicts_use_glob_intersection(
    files: tuple[list[str], list[str]], fragment: str
) -> None:
    plan = {
        "epic": {"title": "x"},
        "subtasks": [{"title": "a", "files": files[0]}, {"title": "b", "files": files[1]}],
    }
    result = swarm_validate_decomposition(None, response=plan)
    assert not result.valid and fragment in result.errors[0].message
    assert result.errors[0].hint


def test_validation_errors_name_the_problem() -> None:
    def check(plan: object) -> list[str]:
        text = plan if isinstance(plan, str) else json.dumps(plan)
        return [e.message for e in swarm_validate_decomposition(None, response=text).errors]

    assert "not valid JSON" in check("{not json")[0]
    assert "not valid JSON" in check("")[0] or "empty" in check("")[0]
    assert check({"epic": {"title": "x"}, "subtasks": [{"title": 5, "files": []}]})[0].startswith(
        "subtasks[0].title"
    )
    assert check({"epic": {"title": "x"}, "subtasks": "many"})[0].startswith("subtasks")
    deps = {"epic": {"title": "x"}, "subtasks": [{"title": "a", "dependencies": [3]}]}
    assert "does not exist" in check(deps)[0]
    self_dep = {"epic": {"title": "x"}, "subtasks": [{"title": "a", "dependencies": [0]}]}
    assert "depends on itself" in check(self_dep)[0]
    cycle = {
        "epic": {"title": "x"},
        "subtasks": [{"title": "a", "dependencies": [1]}, {"title": "b", "dependencies": [0]}],
    }
    assert check(cycle)[0].startswith("dependency cycle")
    escape = {"epic": {"title": "x"}, "subtasks": [{"title": "a", "files": ["../etc"]}]}
    assert "outside the repository" in check(escape)[0]
    assert "epic.title" in check({"epic": {}, "subtasks": [{"title": "a"}]})[0]


def test_contradictions_are_warnings() -> None:
    plan = {
        "epic": {"title": "x"},
        "subtasks": [
            {
                "title": "a",
                "description": "Do not modify src/a.py under any circumstances.",
                "files": ["src/a.py"],
            },
            {"title": "b", "files": []},
        ],
    }
    result = swarm_validate_decomposition(None, response=plan)
    assert result.valid
    messages = [w.message for w in result.warnings]
    assert any("says not to change src/a.py but owns it" in m for m in messages)
    assert any("lists no files" in m for m in messages)


def test_create_epic_keeps_files_blocks_and_strategy_in_one_commit(
    ws: Workspace, repo: Path
) -> None:
    before = git(repo, "rev-parse", "HEAD").strip()
    cells = create_epic_from_decomposition(ws, decomposition=json.dumps(GOOD))
    assert git(repo, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    assert len(git(repo, "show", "--name-only", "--format=", "HEAD").split()) == 3
    epic, store_cell, form = cells
    assert show_cell(ws, cell_id=epic.id).metadata == {"strategy": "feature-based"}
    assert show_cell(ws, cell_id=store_cell.id).files_owned == ["src/auth/store.py"]
    loaded = show_cell(ws, cell_id=form.id)
    assert loaded.files_owned == ["src/ui/**"]
    assert [(d.type, d.target) for d in loaded.dependencies] == [("blocks", store_cell.id)]
    with pytest.raises(InvalidInput, match="invalid decomposition"):
        create_epic_from_decomposition(ws, decomposition={"epic": {"title": "x"}, "subtasks": []})


def test_swarm_init_reports_what_is_available(ws: Workspace) -> None:
    report = swarm_init(ws)
    assert report.hive_available and report.swarmmail_available
    assert report.strategies == ["file-based", "feature-based", "risk-based", "research-based"]
