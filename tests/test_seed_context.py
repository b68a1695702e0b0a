"""Seed 000's shared context (ctx_put / ctx_get / ctx_keys / ctx_wait), the findings
convention and phase barriers, through the tool registry and the CLI."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

from hive.domain.workspace import Workspace
from tests.conftest import set_coordinators
from tests.seedkit import call, cli, error, hive, result, run_workers

FINDING = {
    "ok": True,
    "task": "list_code_files",
    "data": ["scripts/ai_swarm.py"],
    "ts": "2025-01-01T12:00:00Z",
    "agent": "Gemini",
}


def test_put_get_keys_with_versions(ws: Workspace, repo: Path) -> None:
    assert result(repo, "A", "ctx_put", {"key": "k", "value": {"n": 1}}) == {
        "ok": True,
        "key": "k",
        "version": 1,
    }
    assert result(repo, "B", "ctx_put", {"key": "k", "value": [1, 2]})["version"] == 2
    assert result(repo, "A", "ctx_get", {"key": "k"}) == {"key": "k", "value": [1, 2], "version": 2}
    assert result(repo, "A", "ctx_get", {"key": "nope"}) == {
        "key": "nope",
        "value": None,
        "version": 0,
    }
    result(repo, "A", "ctx_put", {"key": "Gemini.a", "value": None})
    result(repo, "A", "ctx_put", {"key": "Grok.b", "value": "x"})
    assert result(repo, "A", "ctx_keys", {"prefix": "Gemini."}) == {"keys": ["Gemini.a"]}
    assert result(repo, "A", "ctx_keys", {}) == {"keys": ["Gemini.a", "Grok.b", "k"]}


def test_compare_and_swap_modes(ws: Workspace, repo: Path) -> None:
    assert result(repo, "A", "ctx_put", {"key": "c", "value": 1, "mode": "if_absent"})["ok"]
    assert result(repo, "A", "ctx_put", {"key": "c", "value": 2, "mode": "if_absent"}) == {
        "ok": False,
        "error": "version_mismatch",  # the seed's one error string, for if_absent too
        "version": 1,
    }
    lost = result(
        repo, "A", "ctx_put", {"key": "c", "value": 3, "mode": "if_version", "expected_version": 7}
    )
    assert lost == {"ok": False, "error": "version_mismatch", "version": 1}
    won = result(
        repo, "A", "ctx_put", {"key": "c", "value": 3, "mode": "if_version", "expected_version": 1}
    )
    assert won == {"ok": True, "key": "c", "version": 2}
    assert result(repo, "A", "ctx_get", {"key": "c"})["value"] == 3
    created = result(
        repo,
        "A",
        "ctx_put",
        {"key": "new", "value": 0, "mode": "if_version", "expected_version": 0},
    )
    assert created["ok"] and created["version"] == 1
    missing = error(repo, "A", "ctx_put", {"key": "c", "value": 1, "mode": "if_version"})
    assert missing["code"] == "invalid_input" and "expected_version" in missing["error"]


def test_hostile_input_is_refused_and_nothing_changes(ws: Workspace, repo: Path) -> None:
    result(repo, "A", "ctx_put", {"key": "safe", "value": 1})
    for args in (
        {"key": 5, "value": 1},
        {"value": 1},
        {"key": "safe"},
        {"key": "", "value": 1},
        {"key": "x" * 300, "value": 1},
        {"key": "safe", "value": 1, "mode": "sometimes"},
        {"key": "safe", "value": 1, "expected_version": "1"},
        {"key": "safe", "value": 1, "bogus": True},
        {"key": "safe", "value": "x" * 1_100_000},
        {"key": "a\nb", "value": 1},
    ):
        assert error(repo, "A", "ctx_put", args)["code"] in ("invalid_arguments", "invalid_input")
    assert error(repo, "A", "ctx_get", {"key": ["k"]})["code"] == "invalid_arguments"
    assert error(repo, "A", "ctx_put", "not an object")["code"] == "invalid_arguments"
    assert result(repo, "A", "ctx_get", {"key": "safe"}) == {
        "key": "safe",
        "value": 1,
        "version": 1,
    }


def test_findings_convention_is_validated(ws: Workspace, repo: Path) -> None:
    stored = result(repo, "Gemini", "ctx_put", {"key": "Gemini.list_code_files", "value": FINDING})
    assert stored["ok"]
    for broken, words in (
        ({**FINDING, "ts": "yesterday"}, "ISO 8601"),
        ({**FINDING, "ok": "yes"}, "'ok'"),
        ({k: v for k, v in FINDING.items() if k != "data"}, "missing data"),
        ({**FINDING, "agent": "Grok"}, "'agent'"),
        ({**FINDING, "task": "other"}, "'task'"),
    ):
        refused = error(
            repo, "Gemini", "ctx_put", {"key": "Gemini.list_code_files", "value": broken}
        )
        assert refused["code"] == "invalid_input" and words in refused["error"], refused
    # Not findings: other key shapes, or objects without findings fields.
    assert result(repo, "A", "ctx_put", {"key": "notes", "value": {"ok": 1}})["ok"]
    assert result(repo, "A", "ctx_put", {"key": "Cfg.db", "value": {"host": "h"}})["ok"]
    assert result(repo, "A", "ctx_get", {"key": "Gemini.list_code_files"})["value"] == FINDING


def test_phase_keys_hold_phase_numbers(ws: Workspace, repo: Path) -> None:
    assert result(repo, "orch", "ctx_put", {"key": "phase", "value": 2})["ok"]
    for key, bad in (
        ("phase", "two"),
        ("phase", -1),
        ("phase", True),
        ("phase_ready.A", 1.5),
        ("phase_ready", {"A": "x"}),
    ):
        assert error(repo, "orch", "ctx_put", {"key": key, "value": bad})["code"] == "invalid_input"
    assert result(repo, "A", "ctx_put", {"key": "phase_ready", "value": {"A": 2}})["ok"]
    assert result(repo, "A", "coord_status", {})["phase"] == 2


def test_an_agent_tests_and_waits_for_a_phase(ws: Workspace, repo: Path) -> None:
    tested = result(repo, "A", "ctx_wait", {"key": "phase", "at_least": 1, "timeout_sec": 0})
    assert tested["met"] is False and tested["version"] == 0

    def orchestrator() -> None:
        time.sleep(0.4)
        call(repo, "orch", "ctx_put", {"key": "phase", "value": 1})

    thread = threading.Thread(target=orchestrator)
    thread.start()
    started = time.monotonic()
    waited = result(repo, "A", "ctx_wait", {"key": "phase", "at_least": 1, "timeout_sec": 300})
    thread.join()
    assert waited["met"] is True and waited["value"] == 1
    # it waited for the put, and ended with it, not at its 300 s timeout (a bound with
    # room for a loaded machine)
    assert 0.3 < time.monotonic() - started < 120
    # A barrier: every agent's phase_ready.<agent> reaches the phase.
    for agent in ("A", "B"):
        result(repo, agent, "ctx_put", {"key": f"phase_ready.{agent}", "value": 1})
    for agent in ("A", "B"):
        assert result(
            repo,
            "orch",
            "ctx_wait",
            {"key": f"phase_ready.{agent}", "at_least": 1, "timeout_sec": 1},
        )["met"]
    timed_out = result(repo, "A", "ctx_wait", {"key": "phase", "equals": 5, "timeout_sec": 0.3})
    assert timed_out["met"] is False and timed_out["waited_sec"] >= 0.29
    assert error(repo, "A", "ctx_wait", {"key": "phase", "timeout_sec": 10_000})["code"] == (
        "invalid_arguments"
    )


def test_eight_processes_incrementing_with_if_version_lose_nothing(
    ws: Workspace, repo: Path
) -> None:
    per_worker = 25
    counts = run_workers(
        repo,
        f"""
        ctx = CallContext(root=repo, agent=f"W{{worker}}")
        done = retries = 0
        while done < {per_worker}:
            got = call_tool(ctx, "ctx_get", {{"key": "counter"}})["result"]
            put = call_tool(ctx, "ctx_put", {{"key": "counter", "value": (got["value"] or 0) + 1,
                            "mode": "if_version", "expected_version": got["version"]}})["result"]
            if put["ok"]:
                done += 1
            else:
                assert put["error"] == "version_mismatch", put
                retries += 1
        print(json.dumps(retries))
        """,
        count=8,
    )
    final = result(repo, "A", "ctx_get", {"key": "counter"})
    assert final["value"] == 8 * per_worker
    assert final["version"] == 8 * per_worker
    assert len(counts) == 8


def test_state_lives_in_the_common_git_dir_and_is_shared_by_worktrees(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    from tests.conftest import git

    result(repo, "A", "ctx_put", {"key": "shared", "value": "from main"})
    other = tmp_path / "other"
    git(repo, "worktree", "add", "-q", str(other), "-b", "other")
    assert result(other, "B", "ctx_get", {"key": "shared"})["value"] == "from main"
    store = repo / ".git" / "hive" / "coord.sqlite3"
    with sqlite3.connect(store) as db:  # people can inspect it with sqlite3 as well
        assert db.execute("SELECT version FROM ctx WHERE key = 'shared'").fetchone() == (1,)
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    from tests.conftest import git as run_git

    assert run_git(repo, "status", "--porcelain") == ""


def test_a_damaged_store_is_a_clear_error(ws: Workspace, repo: Path) -> None:
    state = repo / ".git" / "hive"
    state.mkdir(parents=True, exist_ok=True)
    (state / "coord.sqlite3").write_bytes(b"this is not a database" * 100)
    broken = error(repo, "A", "ctx_get", {"key": "k"})
    assert broken["code"] == "corrupt_file" and "move it aside" in broken["error"]


def test_ctx_cli(ws: Workspace, repo: Path) -> None:
    code, out = cli(repo, "ctx", "put", "Gemini.x", '{"a": 1}')
    assert code == 0 and "v1" in out
    code, out = cli(repo, "ctx", "get", "Gemini.x", "--json")
    assert code == 0 and '"version": 1' in out
    code, _ = cli(
        repo, "ctx", "put", "Gemini.x", "2", "--mode", "if_version", "--expected-version", "9"
    )
    assert code == 4
    lost = hive(repo, "--actor", "alice", "ctx", "put", "Gemini.x", "2", "--mode", "if_absent")
    assert lost.returncode == 4
    assert lost.stderr.strip() == "error: version_mismatch: Gemini.x is already set (now v1)"
    code, out = cli(repo, "ctx", "phase", "3")
    assert code == 0 and "phase 3" in out
    code, out = cli(repo, "ctx", "list")
    assert "Gemini.x" in out and "alice" in out
    code, _ = cli(repo, "ctx", "wait", "phase", "--at-least", "4", "--timeout", "0")
    assert code == 1
    code, out = cli(repo, "ctx", "keys", "Gem")
    assert out.split() == ["Gemini.x"]
    code, out = cli(repo, "ctx", "rm", "Gemini.x")
    assert code == 0 and result(repo, "A", "ctx_get", {"key": "Gemini.x"})["version"] == 0
    assert out == "removed Gemini.x (was v1)\n"
    code, out = cli(repo, "ctx", "rm", "Gemini.x")  # said 'removed Gemini.x (was v0)'
    assert code == 0 and out == "Gemini.x was not set: nothing removed\n"


def test_an_agent_writes_only_its_own_phase_and_findings(ws: Workspace, repo: Path) -> None:
    """phase_ready.<Agent> and <Agent>.task findings name the agent that writes them: one
    agent could set another's barrier (or overwrite its findings) and the orchestrator
    moved on for it."""
    from hive.domain.identity import register_agent

    register_agent(ws, name="B")
    assert result(repo, "B", "ctx_put", {"key": "phase_ready.B", "value": 1})["ok"]
    forged = error(repo, "A", "ctx_put", {"key": "phase_ready.B", "value": 3})
    assert forged["code"] == "not_owner" and forged["owner"] == "B"
    assert "write your own: phase_ready.A" in forged["error"]
    assert result(repo, "orch", "ctx_get", {"key": "phase_ready.B"})["value"] == 1
    # the object form: each agent changes only its own entry
    assert result(repo, "B", "ctx_put", {"key": "phase_ready", "value": {"B": 1}})["ok"]
    assert result(repo, "A", "ctx_put", {"key": "phase_ready", "value": {"B": 1, "A": 2}})["ok"]
    for value in ({"B": 5, "A": 2}, {"A": 3}):
        refused = error(repo, "A", "ctx_put", {"key": "phase_ready", "value": value})
        assert refused["code"] == "not_owner" and refused["owner"] == "B"
    # findings: B's key, whatever the value, while B is registered; any finding named B
    finding = {**FINDING, "agent": "B", "task": "review"}
    assert result(repo, "B", "ctx_put", {"key": "B.review", "value": finding})["ok"]
    for key, value in (
        ("B.review", "junk"),
        ("B.review", finding),
        ("C.x", {**finding, "agent": "C", "task": "x"}),
    ):
        assert error(repo, "A", "ctx_put", {"key": key, "value": value})["code"] == "not_owner"
    assert result(repo, "A", "ctx_put", {"key": "Cfg.db", "value": {"host": "h"}})["ok"]
    assert result(repo, "orch", "ctx_get", {"key": "B.review"})["value"] == finding
    # nor removes them at the command line ('hive ctx rm' is the same write)
    for key in ("B.review", "phase_ready.B", "phase_ready"):
        removed = hive(repo, "--actor", "A", "ctx", "rm", key, actor="A")
        assert removed.returncode == 5 and "only B writes or removes it" in removed.stderr, key
    assert result(repo, "orch", "ctx_get", {"key": "B.review"})["value"] == finding
    assert result(repo, "orch", "ctx_get", {"key": "phase_ready"})["value"] == {"B": 1, "A": 2}
    assert cli(repo, "ctx", "rm", "B.review", actor="B")[0] == 0  # B removes its own
    set_coordinators(repo, ["orch"])  # a coordinator may write any
    assert result(repo, "orch", "ctx_put", {"key": "phase_ready.B", "value": 0})["ok"]
    assert cli(repo, "ctx", "rm", "phase_ready.B", actor="orch")[0] == 0
