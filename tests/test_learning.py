"""Strategy selection from outcomes, decay, maturity, decomposition prompts and validation."""

from __future__ import annotations

import json
import os
from datetime import timedelta
from pathlib import Path

import pytest

from hive.domain.cells import show_cell
from hive.domain.outcomes import load_outcomes, new_outcome_id, outcome_change
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
    # three recent outcomes count as three (decay leaves 2.98): the thresholds are met
    from hive.domain.swarm.learning import pattern_stats

    successes = [outcome("Add export", "feature-based", True) for _ in range(3)]
    stats = {(p.strategy, p.maturity) for p in pattern_stats(failures + successes)}
    assert stats == {("file-based", "deprecated"), ("feature-based", "established")}
    proven = [outcome("Add export", "feature-based", True, 0.5) for _ in range(8)]
    assert [p.maturity for p in pattern_stats(proven)] == ["proven"]
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
    # a JSON boolean is not an index or a number (it was read as 1: "depends on 1")
    flags = {
        "epic": {"title": "x"},
        "subtasks": [{"title": "a", "dependencies": [True], "estimated_complexity": True}],
    }
    found = check(flags)
    assert [m.split(":")[0] for m in found] == [
        "subtasks[0].dependencies",
        "subtasks[0].estimated_complexity",
    ], found
    assert all("not a boolean" in m for m in found)


def test_titles_creation_refuses_are_invalid_plans(ws: Workspace) -> None:
    """validate said "valid" to titles that creating the epic then refused."""
    bad = {
        "epic": {"title": "two\nlines"},
        "subtasks": [
            {"title": "tab\there", "files": ["a"]},
            {"title": "  ", "files": ["b"]},
        ],
    }
    result = swarm_validate_decomposition(ws, response=bad)
    assert not result.valid
    assert [(e.path, e.message) for e in result.errors] == [
        ("epic.title", "epic.title: title must not contain control characters (found U+000A)"),
        (
            "subtasks[0].title",
            "subtasks[0].title: title must not contain control characters (found U+0009)",
        ),
        ("subtasks[1].title", "subtasks[1].title is blank"),
    ]
    long = {"epic": {"title": "x" * 501}, "subtasks": [{"title": "a", "files": ["a"]}]}
    assert [e.message for e in swarm_validate_decomposition(ws, response=long).errors] == [
        "epic.title is longer than 500 characters"
    ]
    for plan in (bad, long):
        with pytest.raises(InvalidInput):
            create_epic_from_decomposition(ws, decomposition=json.dumps(plan))
    fine = {"epic": {"title": " Epic "}, "subtasks": [{"title": "x" * 500, "files": ["a"]}]}
    assert swarm_validate_decomposition(ws, response=fine).valid
    assert len(create_epic_from_decomposition(ws, decomposition=json.dumps(fine))) == 2


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


# ------------------------------------------------------------------ gaps found by the audit


OAUTH = "Add OAuth authentication"


def oauth_epic(ws: Workspace, strategy: str | None) -> list[str]:
    plan: dict[str, object] = {
        "epic": {"title": OAUTH},
        "subtasks": [
            {"title": "wire the provider", "files": ["src/p.py"]},
            {"title": "token storage", "files": ["src/t.py"]},
        ],
    }
    cells = create_epic_from_decomposition(ws, decomposition=plan, strategy=strategy)
    return [c.id for c in cells[1:]]


def test_outcomes_are_matched_by_their_epic_title_and_flip_the_choice(ws: Workspace) -> None:
    from hive.domain.swarm.complete import swarm_complete
    from hive.domain.swarm.progress import swarm_progress

    before = select_strategy(ws, task=OAUTH).strategy
    assert before == "feature-based"
    for _ in range(3):
        for cell in oauth_epic(ws, "feature-based"):
            swarm_progress(
                ws.for_actor("w"), agent_name="w", cell_id=cell, status="failed", message="broke"
            )
        for cell in oauth_epic(ws, "risk-based"):
            swarm_complete(ws.for_actor("w"), agent_name="w", cell_id=cell, summary="works")
    stored = load_outcomes(ws)
    assert {o.epic_title for o in stored} == {OAUTH}
    after = select_strategy(ws, task=OAUTH)
    assert after.strategy == "risk-based" and len(after.precedents) == 10
    # outcomes written before epic_title existed: the epic is looked up by id
    legacy = [o.model_copy(update={"epic_title": None}) for o in stored]
    assert select_strategy(ws, task=OAUTH, outcomes=legacy).strategy == "risk-based"


def test_a_plan_without_strategy_still_gets_one_and_outcomes_carry_it(ws: Workspace) -> None:
    from hive.domain.swarm.complete import swarm_complete

    cells = oauth_epic(ws, None)
    epic = show_cell(ws, cell_id=show_cell(ws, cell_id=cells[0]).parent or "")
    assert epic.metadata == {"strategy": select_strategy(ws, task=OAUTH).strategy}
    done = swarm_complete(ws.for_actor("w"), agent_name="w", cell_id=cells[0], summary="ok")
    assert done.outcome.strategy == epic.metadata["strategy"]


def test_confidence_reflects_evidence_and_the_choice_has_its_own_score(ws: Workspace) -> None:
    keyword_only = select_strategy(ws, task=TASK)
    assert keyword_only.confidence <= 0.6
    assert keyword_only.score is not None and keyword_only.score.strategy == "file-based"
    assert keyword_only.score.weight == 0.0
    history = [outcome("Refactor search module helpers", "file-based", True) for _ in range(8)]
    store(ws, history)
    backed = select_strategy(ws, task=TASK)
    assert backed.strategy == "file-based" and backed.confidence > keyword_only.confidence
    assert backed.score is not None and backed.score.weight > 0


def test_outcome_quality_penalties_and_maturity_from_outcomes() -> None:
    from hive.domain.swarm.learning import outcome_quality, pattern_stats

    clean = outcome("Add export", "feature-based", True)
    assert outcome_quality(clean) == pytest.approx(1.0, abs=0.01)
    assert outcome_quality(clean.model_copy(update={"success": False})) == 0.0
    assert outcome_quality(clean.model_copy(update={"error_count": 2})) == pytest.approx(0.8)
    assert outcome_quality(clean.model_copy(update={"retry_count": 1})) == pytest.approx(0.9)
    assert outcome_quality(clean.model_copy(update={"duration_seconds": 36_000})) == (
        pytest.approx(0.8)
    )
    assert outcome_quality(clean.model_copy(update={"error_count": 9, "retry_count": 9})) == 0.2
    proven = [outcome("Add export", "feature-based", True) for _ in range(9)]
    failing = [outcome("Fix crash", "file-based", False) for _ in range(4)]
    stats = {(p.strategy, p.kind): p.maturity for p in pattern_stats(proven + failing)}
    assert stats == {("feature-based", "feature"): "proven", ("file-based", "bugfix"): "deprecated"}


def test_worker_prompts_show_anti_patterns(ws: Workspace) -> None:
    from hive.domain.swarm.prompts import swarm_subtask_prompt

    cells = oauth_epic(ws, "file-based")
    assert "Lessons from past work" not in swarm_subtask_prompt(ws, cell_id=cells[0]).prompt
    store(ws, [outcome("Fix login crash", "file-based", False) for _ in range(3)])
    brief = swarm_subtask_prompt(ws, cell_id=cells[0]).prompt
    assert "## Lessons from past work here" in brief and "Avoid file-based for bugfix" in brief


def test_worker_brief_has_every_section_in_order(ws: Workspace) -> None:
    """The brief of a subtask with all there is to say: its epic and strategy, what to
    do, its files, what it waits for, the other subtasks (their files and who holds
    them), the context, the lessons and the banned approaches, then the protocol."""
    from hive.domain.cells import start_cell
    from hive.domain.memory import update_context
    from hive.domain.swarm.prompts import WORKER_PROTOCOL, swarm_subtask_prompt

    plan: dict[str, object] = {
        "epic": {"title": OAUTH},
        "subtasks": [
            {"title": "wire the provider", "files": ["src/p.py", "src/q.py"]},
            {"title": "docs", "files": []},
            {
                "title": "token storage",
                "description": "  Keep tokens encrypted.\n",
                "files": ["src/t.py"],
                "dependencies": [0],
            },
        ],
    }
    epic, wire, docs, tokens = (
        c.id for c in create_epic_from_decomposition(ws, decomposition=plan, strategy="file-based")
    )
    start_cell(ws.for_actor("w"), cell_id=wire)
    store(ws, [outcome("Fix login crash", "file-based", False) for _ in range(3)])
    update_context(ws, section="banned", add="global state\nanywhere")
    brief = swarm_subtask_prompt(ws, cell_id=tokens, agent_name="BlueLake", context=" ctx \n")
    lessons = anti_patterns(load_outcomes(ws))
    assert lessons
    protocol = WORKER_PROTOCOL.format(
        root=ws.root, agent="BlueLake", files=["src/t.py"], cell_id=tokens, thread=epic
    )
    lines = brief.prompt.split("\n")
    assert sorted(lines[13:15]) == sorted(  # in the order of the hive's index
        [
            f"- {wire} [in_progress] wire the provider — files src/p.py, src/q.py — w",
            f"- {docs} [open] docs",
        ]
    )
    assert lines[:13] + lines[15:] == [
        f"# Subtask {tokens}: token storage",
        f"Part of epic {epic} '{OAUTH}' (strategy file-based).",
        "",
        "## What to do",
        "Keep tokens encrypted.",
        "",
        "## Files you own",
        "- src/t.py",
        "",
        "## Waits for",
        f"- {wire}",
        "",
        "## Other subtasks (do not edit their files)",
        "",
        "## Context",
        "ctx",
        "",
        "## Lessons from past work here (avoid these)",
        *(f"- {lesson}" for lesson in lessons),
        "",
        "## Banned approaches (project memory: never use these)",
        "- global state anywhere",
        "",
        *protocol.split("\n"),
    ]
    alone = swarm_subtask_prompt(ws, cell_id=docs).prompt.split("\n\n## How to work")[0]
    assert "## Files\nNo files were declared: reserve exactly what you will edit" in alone
    assert "## What to do" not in alone and "## Waits for" not in alone


def test_contradicting_directives_across_subtasks_are_warnings() -> None:
    plan = {
        "epic": {"title": "Sessions"},
        "subtasks": [
            {"title": "a", "description": "Always use JWT tokens for sessions.", "files": ["a"]},
            {
                "title": "b",
                "description": "Never use JWT tokens; use server sessions.",
                "files": ["b"],
            },
            {"title": "c", "description": "Use the new client.", "files": ["c"]},
            {"title": "d", "description": "Do not use the old client.", "files": ["d"]},
        ],
    }
    result = swarm_validate_decomposition(None, response=plan)
    assert result.valid
    conflicts = [w.message for w in result.warnings if "contradict" in w.message]
    assert len(conflicts) == 1 and "subtasks 0 and 1" in conflicts[0] and "jwt" in conflicts[0]


def test_the_plan_is_the_json_block_that_fits_the_schema() -> None:
    example = '```json\n{"epic": {"title": "example"}}\n```'
    real = '```json\n{"epic": {"title": "Real"}, "subtasks": [{"title": "s", "files": ["x"]}]}\n```'
    two = swarm_validate_decomposition(None, response=f"Format:\n{example}\nPlan:\n{real}")
    assert two.valid and two.data is not None and two.data.epic["title"] == "Real"
    prose = (
        'Plan: {"epic": {"title": "P"}, "subtasks": [{"title": "s", "files": ["x"]}]} (see {notes})'
    )
    inline = swarm_validate_decomposition(None, response=prose)
    assert inline.valid and inline.data is not None and inline.data.epic["title"] == "P"
    broken = swarm_validate_decomposition(None, response='```json\n{"epic": ,}\n```')
    assert not broken.valid and "not valid JSON (line 1" in broken.errors[0].message


def fake_cass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    cass = bin_dir / "cass"
    cass.write_text("#!/bin/sh\n" + script)
    cass.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    return bin_dir


def test_cass_gets_the_limit_and_failures_are_reported(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hits = {"hits": [{"title": f"session {n}", "snippet": "s"} for n in range(6)]}
    args = tmp_path / "args"
    fake_cass(tmp_path, monkeypatch, f"echo \"$@\" > {args}\necho '{json.dumps(hits)}'\n")
    result = swarm_plan_prompt(ws, task=TASK)
    assert args.read_text().split()[:4] == ["search", "--json", "--limit", "3"]
    assert "session 2" in result.prompt and "session 3" not in result.prompt
    swarm_plan_prompt(ws, task=TASK, cass_limit=5)
    assert args.read_text().split()[3] == "5"
    with pytest.raises(InvalidInput, match="cass_limit"):
        swarm_plan_prompt(ws, task=TASK, cass_limit=0)
    fake_cass(tmp_path, monkeypatch, "echo oops\nexit 1\n")
    assert swarm_plan_prompt(ws, task=TASK).cass == "failed: exit 1"
    fake_cass(tmp_path, monkeypatch, "echo not json\n")
    assert swarm_plan_prompt(ws, task=TASK).cass == "failed: not JSON"


def test_a_hanging_cass_is_killed_with_its_children(
    ws: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from hive.domain.swarm import decompose

    pid_file = tmp_path / "child.pid"
    fake_cass(tmp_path, monkeypatch, f"sleep 300 &\necho $! > {pid_file}\nwait\n")
    monkeypatch.setattr(decompose, "CASS_TIMEOUT", 0.5)
    started = time.monotonic()
    assert swarm_plan_prompt(ws, task=TASK).cass == "failed: TimeoutExpired"
    # not waited out: well under the child's 300 s, with room for a loaded machine
    assert time.monotonic() - started < 120
    child = int(pid_file.read_text())
    deadline = time.monotonic() + 60  # killed: the state, waited for
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.05)
    assert not _alive(child)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_strategy_auto_and_unknown(ws: Workspace) -> None:
    auto = swarm_plan_prompt(ws, task=TASK, strategy="auto", query_cass=False)
    assert auto.strategy.strategy == select_strategy(ws, task=TASK).strategy


def test_a_task_that_begins_with_a_dash_reaches_cass_as_its_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """cass is given the task after ``--``: a task written ``--help me split X`` (or
    ``-x``) was an option of cass's, not the query."""
    from hive.domain.swarm.decompose import cass_search

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cass = bin_dir / "cass"
    # a cass that answers with its arguments after "--" (none when there is no "--")
    cass.write_text(
        '#!/bin/sh\nwhile [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done\n'
        '[ $# -gt 0 ] && shift\nprintf \'{"hits": [{"title": "query", "snippet": "%s"}]}\' "$*"\n'
    )
    cass.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    assert cass_search("--limit 99 split payments") == ("ok", ["query: --limit 99 split payments"])
