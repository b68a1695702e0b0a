"""The smaller seed-001 gaps: the seed's field names, the full TDD cycle in worker
prompts, project_key validation, mail to the coordinator role, and reserving only
after swarmmail_init."""

from __future__ import annotations

from pathlib import Path

from hive.domain.workspace import Workspace
from tests.seedkit import error, result


def test_select_strategy_answers_with_the_seeds_rationale(ws: Workspace, repo: Path) -> None:
    choice = result(
        repo, "A", "swarm_select_strategy", {"task": "Add OAuth authentication with refresh tokens"}
    )
    assert {"strategy", "rationale", "confidence"} <= set(choice)
    assert choice["rationale"] and choice["rationale"] == choice["reasoning"]


def test_worker_prompts_carry_the_whole_tdd_cycle(ws: Workspace, repo: Path) -> None:
    epic = result(
        repo,
        "boss",
        "hive_create_epic",
        {"epic_title": "E", "subtasks": [{"title": "one", "files": ["a.py"]}]},
    )
    prompt = result(repo, "A", "swarm_subtask_prompt", {"cell_id": epic[1]["id"]})["prompt"]
    for step in ("RED", "GREEN", "REFACTOR"):
        assert step in prompt
    assert prompt.index("RED") < prompt.index("GREEN") < prompt.index("REFACTOR")


def test_project_key_must_exist(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    cell = result(repo, "A", "hive_create", {"title": "t"})
    missing = error(
        repo,
        "A",
        "swarm_complete",
        {"project_key": str(tmp_path / "gone"), "cell_id": cell["id"], "summary": "done"},
    )
    assert missing["code"] == "invalid_input" and "does not exist" in missing["error"]
    other = tmp_path / "elsewhere"
    other.mkdir()
    elsewhere = error(
        repo,
        "A",
        "swarm_complete",
        {"project_key": str(other), "cell_id": cell["id"], "summary": "done"},
    )
    assert "is not this repository" in elsewhere["error"]
    assert result(repo, "A", "hive_query", {"id": cell["id"]})["status"] == "open"
    done = result(
        repo,
        "A",
        "swarm_complete",
        {"project_key": str(repo), "cell_id": cell["id"], "summary": "done"},
    )
    assert done["cell"]["status"] == "closed"


def test_mail_to_the_coordinator_role_reaches_the_epics_coordinator(
    ws: Workspace, repo: Path
) -> None:
    for name in ("boss", "w1"):
        result(repo, name, "swarmmail_init", {"agent_name": name})
    epic = result(
        repo,
        "boss",
        "hive_create_epic",
        {"epic_title": "Auth", "subtasks": [{"title": "schema", "files": ["s.py"]}]},
    )
    sub = epic[1]["id"]
    sent = result(
        repo,
        "w1",
        "swarmmail_send",
        {"to": ["coordinator"], "subject": "Progress", "body": "b", "thread_id": sub},
    )
    assert sent["recipients"] == ["boss"]
    result(repo, "w1", "hive_start", {"id": sub})
    blocked = result(
        repo, "w1", "swarmmail_send", {"to": ["coordinator"], "subject": "BLOCKED", "body": "b"}
    )
    assert blocked["recipients"] == ["boss"]  # the epic of the sender's own work
    inbox = result(repo, "boss", "swarmmail_inbox", {})
    assert {m["subject"] for m in inbox} == {"Progress", "BLOCKED"}
    result(repo, "loner", "swarmmail_init", {"agent_name": "loner"})
    lost = error(repo, "loner", "swarmmail_send", {"to": ["coordinator"], "subject": "?"})
    assert lost["code"] == "not_found" and "coordinator" in lost["error"]


def test_reserving_needs_swarmmail_init_first(ws: Workspace, repo: Path) -> None:
    refused = error(repo, "newbie", "swarmmail_reserve", {"paths": ["src/a.py"]})
    assert refused["code"] == "not_registered" and "swarmmail_init" in refused["error"]
    assert not (repo / ".hive" / "reservations").exists()
    result(repo, "newbie", "swarmmail_init", {"agent_name": "newbie"})
    granted = result(repo, "newbie", "swarmmail_reserve", {"paths": ["src/a.py"]})
    assert granted["granted"][0]["path_pattern"] == "src/a.py"
