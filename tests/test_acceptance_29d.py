"""Issues 12, 15 and 16 tried once more as a new user would (session 29's acceptance
audit, helper acc29d): each test failed before the fix it names. The command line runs
in-process (``run_hive``, the console script's own entry point) on real repositories."""

from __future__ import annotations

import json
from pathlib import Path

from hive.domain.workspace import Workspace
from tests.inprocess import Outcome, run_hive


def hive(repo: Path, *args: str) -> Outcome:
    return run_hive(["-C", str(repo), *args])


def test_an_unknown_hook_under_json_is_a_json_error(repo: Path) -> None:
    """`hive --json hooks run zzz` printed its error on stderr only: a program that
    asked for JSON read nothing on stdout."""
    shown = hive(repo, "--json", "hooks", "run", "zzz")
    assert shown.returncode == 2, shown
    assert json.loads(shown.stdout) == {
        "error": "unknown hook 'zzz': the hooks are 'pre-commit' and 'commit-msg FILE'",
        "code": "invalid_input",
    }
    said = "unknown hook 'zzz': the hooks are 'pre-commit' and 'commit-msg FILE'"
    assert shown.stderr == f"error: {said}\n"
    plain = hive(repo, "hooks", "run", "zzz")
    assert plain.returncode == 2 and plain.stdout == ""


def test_a_ready_page_through_the_envelope_costs_at_most_about_2_kb(
    ws: Workspace, repo: Path
) -> None:
    """`hive tools run` printed its transcript indented by two spaces a level: a default
    `hive_ready` page of ten realistic cells cost an agent ~2.5 kB, not ~2 kB."""
    from hive.domain.cells import create_cell

    for n in range(12):
        create_cell(ws, title=f"A task with a realistic title, number {n}", description="d" * 400)
    envelope = json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}]})
    ran = run_hive(["-C", str(repo), "tools", "run"], input=envelope)
    assert ran.returncode == 0, ran
    transcript = json.loads(ran.stdout)
    assert len(transcript["results"][0]["result"]) == 10
    assert len(ran.stdout.encode()) <= 2048, len(ran.stdout.encode())


def test_the_swarm_run_lines_count_one_subtask_and_one_worker_in_the_singular() -> None:
    """`hive swarm run` on an epic of one subtask printed '1 subtasks, 1 workers' and
    '(1 workers ran)'."""
    from hive.cli.swarm_view import describe
    from hive.models.swarm_run import SubtaskState, SwarmEvent

    one = [SubtaskState(id="hv-e.a", title="A", status="open")]
    settings = {"workers": 1, "isolation": "reservation"}
    started = SwarmEvent(event="run_started", epic_id="hv-e", settings=settings, subtasks=one)
    assert describe(started) == "swarm run hv-e: 1 subtask, 1 worker, reservation isolation"
    totals = {"subtasks": 1, "completed": 1, "blocked": 0, "remaining": 0, "workers_run": 1}
    finished = describe(SwarmEvent(event="run_finished", epic_id="hv-e", totals=totals))
    assert finished == "finished  1/1 subtasks completed, 0 blocked, 0 remaining (1 worker ran)"
    settings["workers"] = 3
    two = [*one, SubtaskState(id="hv-e.b", title="B", status="open")]
    started = SwarmEvent(event="run_started", epic_id="hv-e", settings=settings, subtasks=two)
    assert describe(started) == "swarm run hv-e: 2 subtasks, 3 workers, reservation isolation"


def test_epic_create_s_help_says_what_a_subtask_is(repo: Path) -> None:
    """`hive epic create --help` gave --subtask as '(repeatable)' alone: nothing said it
    takes a title or a JSON object with files and dependencies (indexes)."""
    assert hive(repo, "init").returncode == 0
    for path in (("epic", "create"), ("swarm", "create-epic")):
        shown = run_hive([*path, "--help"])
        assert shown.returncode == 0, shown
        words = " ".join(shown.stdout.split())  # as wrapped to the terminal
        assert 'a title, or JSON: {"title": ..., "files": [...], "dependencies": [0]}' in words
    subtasks = ["-s", "first", "-s", '{"title": "second", "files": ["b/**"], "dependencies": [0]}']
    made = hive(repo, "--json", "epic", "create", "E", *subtasks)
    assert made.returncode == 0, made
    _, first, second = json.loads(made.stdout)
    assert second["files_owned"] == ["b/**"]
    assert second["dependencies"] == [{"type": "blocks", "target": first["id"]}]


def test_force_s_help_says_a_person_may_override_as_a_person_can(repo: Path) -> None:
    """`hive update --help` said --force on someone else's cell was for 'coordinators
    only', yet a person (git's user.name, no credential) may override with a reason,
    as the refusal itself says."""
    from tests.conftest import agent_env, git

    assert hive(repo, "init").returncode == 0
    for path in (("update",), ("close",), ("delete",), ("release",), ("mail", "inbox")):
        shown = run_hive([*path, "--help"])
        words = " ".join(shown.stdout.split())
        assert "coordinators only" not in words, path
        assert "not yours: people, and coordinators with --reason" in words, path
    made = hive(repo, "--json", "create", "a cell")
    cell = json.loads(made.stdout)["id"]
    claimed = run_hive(["-C", str(repo), "start", cell], env=agent_env(repo, "BlueLake"))
    assert claimed.returncode == 0, claimed
    refused = hive(repo, "update", cell, "-p", "0")
    assert refused.returncode == 5 and "a coordinator or a person may override" in refused.stderr
    forced = hive(repo, "update", cell, "-p", "0", "--force", "--reason", "owner away")
    assert forced.returncode == 0, forced
    assert "Hive-Override:" in git(repo, "log", "-1", "--format=%B")
    alone = hive(repo, "update", cell, "-p", "1", "--force")  # a person: --force is enough
    assert alone.returncode == 0, alone
    assert "of BlueLake: (no reason given)" in git(repo, "log", "-1", "--format=%B")


def test_swarm_run_json_says_what_each_unfinished_subtask_waits_for(repo: Path) -> None:
    """`hive swarm run --json` ended with the totals only: '2 remaining', where the
    lines a person reads name each subtask's open blockers (and a blocked one's
    reason), so a program learnt nothing of why."""
    assert hive(repo, "init").returncode == 0
    outside = json.loads(hive(repo, "--json", "create", "outside").stdout)["id"]
    subtasks = ["-s", "one", "-s", '{"title": "two", "dependencies": [0]}']
    _, one, two = json.loads(hive(repo, "--json", "epic", "create", "E", *subtasks).stdout)
    epic = one["parent"]
    assert hive(repo, "dep", "add", one["id"], outside).returncode == 0
    ran = hive(repo, "--json", "swarm", "run", epic, "--agent-cmd", "true")
    assert ran.returncode == 1, ran
    finished = json.loads(ran.stdout.splitlines()[-1])
    assert finished["event"] == "run_finished" and finished["totals"]["remaining"] == 2
    assert finished["waiting"] == {one["id"]: [outside], two["id"]: [one["id"]]}
    assert finished["blocker_status"] == {outside: "open", one["id"]: "open"}
    assert "blocked" not in finished and "skipped" not in finished
    plain = hive(repo, "swarm", "run", epic, "--agent-cmd", "true")
    assert f"not run: {one['id']} waits for {outside} (open)" in plain.stdout
