"""Seed 004 (context_search, file_read, list_files in a context directory, per-agent
tool lists and toolCallLimit) and seed 002 (scratchpad, todo lists, read-before-write,
per-agent working directories, hooks and bypass_permissions, the event log's
arguments), through the tool registry, the envelope and MCP."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool
from tests.hivefork import mcp_server
from tests.inprocess import run_hive
from tests.seedkit import (
    call,
    call_beside_a_pipe,
    cli,
    configure,
    error,
    hive,
    result,
    run_workers,
)

OUTSIDE = "Access denied: path is outside the context directory"


def _files(repo: Path, tmp_path: Path) -> Path:
    (repo / "docs").mkdir()
    (repo / "docs/guide.md").write_text("# Guide\nrate limiting with buckets\n")
    (repo / "docs/sub").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("TOP SECRET")
    os.symlink(outside / "secret.txt", repo / "docs/leak.txt")
    os.symlink(outside, repo / "docs/leakdir")
    os.symlink("guide.md", repo / "docs/alias.md")
    return outside


# ------------------------------------------------------------------ seed 004: files


def test_file_read_in_the_context_directory(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    outside = _files(repo, tmp_path)
    relative = result(repo, "A", "file_read", {"path": "docs/guide.md"})
    assert relative == {
        "status": "success",
        "result": {"content": "# Guide\nrate limiting with buckets\n"},
    }
    absolute = result(repo, "A", "file_read", {"path": str(repo / "docs/alias.md")})
    assert absolute["result"]["content"].startswith("# Guide")
    for hostile in (
        "../outside/secret.txt",
        "docs/../../outside/secret.txt",
        str(outside / "secret.txt"),
        "docs/leak.txt",
        "/etc/passwd",
        "docs/../README.md",
    ):
        denied = error(repo, "A", "file_read", {"path": hostile})
        assert denied["error"] == OUTSIDE, hostile
        assert denied["status"] == "error"
    missing = error(repo, "A", "file_read", {"path": "docs/none.md"})
    assert missing["error"] == f"File not found: {repo / 'docs/none.md'}"
    assert missing["status"] == "error"
    assert "directory" in error(repo, "A", "file_read", {"path": "docs"})["error"]
    for args in ({}, {"path": 5}, {"path": ""}, {"path": "x" * 5000}, {"path": "a", "b": 1}):
        bad = error(repo, "A", "file_read", args)  # the seed's error shape: status too
        assert bad["code"] == "invalid_arguments" and bad["status"] == "error", args
    for name, args in (("list_files", {}), ("context_search", {"term": ""})):
        assert error(repo, "A", name, args)["status"] == "error", name
    assert "status" not in error(repo, "A", "fs_read", {})  # only seed 004's tools


def test_file_read_of_a_fifo_answers_instead_of_hanging(ws: Workspace, repo: Path) -> None:
    """file_read opened whatever the path named: a named pipe in the context directory
    blocked the call (and its server thread) until some process wrote to it."""
    os.mkfifo(repo / "pipe")
    assert call_beside_a_pipe(repo / "pipe", repo, "file_read", {"path": "pipe"}) == {
        "error": f"Path is not a regular file: {repo / 'pipe'}",
        "code": "invalid_input",
        "status": "error",
    }


def test_list_files_in_the_context_directory(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    _files(repo, tmp_path)
    listed = result(repo, "A", "list_files", {"path": "docs"})
    assert listed["status"] == "success"
    assert listed["result"]["entries"] == [
        {"path": str(repo / "docs/alias.md"), "type": "file"},
        {"path": str(repo / "docs/guide.md"), "type": "file"},
        {"path": str(repo / "docs/sub"), "type": "directory"},
    ]  # the symlinks leading out are left out
    assert result(repo, "A", "list_files", {"path": str(repo / "docs/sub")})["result"] == {
        "entries": []
    }
    root = result(repo, "A", "list_files", {"path": "."})["result"]["entries"]
    assert {"path": str(repo / "docs"), "type": "directory"} in root
    assert not any(e["path"].endswith("/.git") for e in root)
    for hostile in ("..", "docs/leakdir", str(tmp_path), "docs/../.."):
        assert error(repo, "A", "list_files", {"path": hostile})["error"] == OUTSIDE
    assert "file" in error(repo, "A", "list_files", {"path": "docs/guide.md"})["error"]
    assert error(repo, "A", "list_files", {"path": "nope"})["error"].startswith(
        "Directory not found"
    )


def test_context_option_confines_to_another_directory(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    _files(repo, tmp_path)
    calls = [
        {"name": "list_files", "args": {"path": "."}},
        {"name": "file_read", "args": {"path": "guide.md"}},
        {"name": "file_read", "args": {"path": str(repo / "README.md")}},
    ]
    text = json.dumps({"tool_calls": calls})
    run = run_hive(
        ["-C", str(repo), "tools", "run", "--agent", "A", "--context", "docs"],
        input=text,
        module="hive.cli.main",
    )
    results = json.loads(run.stdout)["results"]
    assert str(repo / "docs/guide.md") in json.dumps(results[0]["result"])
    assert results[1]["result"]["result"]["content"].startswith("# Guide")
    assert results[2]["error"] == OUTSIDE


# ------------------------------------------------------------------ seed 004: search


def test_context_search_over_hive_history(ws: Workspace, repo: Path) -> None:
    first = result(repo, "orch", "hive_create", {"title": "Design rate limiting"})
    epic = result(
        repo,
        "orch",
        "hive_create_epic",
        {
            "epic_title": "Caching layer",
            "subtasks": [
                {"title": "Add cache", "description": "Use a token bucket for RATE LIMITING"}
            ],
        },
    )
    sub = epic[1]["id"]
    result(repo, "worker", "hive_start", {"id": sub})  # notes count as the assignee's
    result(repo, "worker", "hive_update", {"id": sub, "append_notes": "rate limiting is tricky"})
    result(
        repo,
        "worker",
        "swarm_record_outcome",
        {"cell_id": sub, "success": True, "summary": "Added rate limiting to the cache"},
    )
    result(repo, "worker", "swarmmail_init", {"agent_name": "worker"})
    result(repo, "orch", "swarmmail_init", {"agent_name": "orch"})
    result(
        repo,
        "worker",
        "swarmmail_send",
        {"to": ["orch"], "subject": "Rate limiting done", "body": "see notes", "thread_id": sub},
    )
    found = result(repo, "orch", "context_search", {"term": "Rate Limiting"})
    assert found["status"] == "success"
    matches = found["result"]["matches"]
    seed_keys = {"roundNumber", "agentId", "agentRole", "type", "contentSnippet"}
    for m in matches:  # and where each is: its cell, a message's id
        assert set(m) == seed_keys | {"cellId"} | (
            {"messageId"} if m["type"] == "message" else set()
        )
    where = {(m["type"], m["cellId"]) for m in matches}
    assert ("cell", first["id"]) in where and ("notes", sub) in where, where
    assert ("outcome", sub) in where and ("message", sub) in where, where
    (message,) = (m for m in matches if m["type"] == "message")
    lines = cli(repo, "search", "rate limiting", actor="orch")[1].splitlines()
    assert lines[0].startswith(f"{first['id']}  round 1  orch (coordinator, cell):"), lines
    assert f"mail #{message['messageId']} {sub}  round 2  worker (worker, message):" in lines[-1]
    kinds = {(m["roundNumber"], m["type"], m["agentId"], m["agentRole"]) for m in matches}
    assert (1, "cell", "orch", "coordinator") in kinds  # the first top-level cell: round 1
    assert (2, "cell", "orch", "coordinator") in kinds  # the epic's subtask: round 2
    assert (2, "notes", "worker", "worker") in kinds
    assert (2, "outcome", "worker", "worker") in kinds
    assert (2, "message", "worker", "worker") in kinds
    assert [m["roundNumber"] for m in matches] == sorted(m["roundNumber"] for m in matches)
    first_two = result(repo, "orch", "context_search", {"term": "Rate Limiting", "limit": 2})
    assert first_two["result"] == {"matches": matches[:2], "total": len(matches)}
    # mail is searched only by who may read it (its sender and recipients)
    others = result(repo, "x", "context_search", {"term": "Rate Limiting"})["result"]["matches"]
    assert "message" not in {m["type"] for m in others} and len(others) == len(matches) - 1
    assert all(len(m["contentSnippet"]) <= 200 for m in matches)
    assert result(repo, "x", "context_search", {"term": "no such words"})["result"] == {
        "matches": [],
        "total": 0,
    }
    assert first["id"]
    for args in ({}, {"term": ""}, {"term": 3}, {"term": "x" * 1000}):
        assert error(repo, "x", "context_search", args)["code"] == "invalid_arguments"


def test_context_search_finds_comments_design_and_acceptance(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A cell's comments (the discussion on it), design and acceptance criteria were
    not searched: only its title, description, notes and close reason."""
    cell = result(repo, "orch", "hive_create", {"title": "Cache"})
    result(repo, "critic", "hive_comment", {"id": cell["id"], "text": "The flux CAPACITOR leaks"})
    lines = tmp_path / "cells.jsonl"
    lines.write_text(
        json.dumps({"title": "Filter", "design": "a bloom filter", "acceptance": "p99 < 5 ms"})
    )
    assert cli(repo, "create", "--from", str(lines), actor="orch")[0] == 0
    (said,) = result(repo, "x", "context_search", {"term": "capacitor"})["result"]["matches"]
    assert said == {
        "roundNumber": 1,
        "agentId": "critic",
        "agentRole": "worker",
        "type": "comment",
        "contentSnippet": "The flux CAPACITOR leaks",
        "cellId": cell["id"],
    }
    for term in ("BLOOM", "p99"):
        (found,) = result(repo, "x", "context_search", {"term": term})["result"]["matches"]
        assert (found["roundNumber"], found["type"], found["agentId"]) == (2, "cell", "orch")
        assert term.lower() in found["contentSnippet"].lower()


def test_context_search_snippets_show_the_match(ws: Workspace, repo: Path) -> None:
    long = "filler " * 100 + "the needle is here, and after it more words " * 5
    result(repo, "A", "hive_create", {"title": "Long", "description": long})
    match = result(repo, "A", "context_search", {"term": "NEEDLE"})["result"]["matches"][0]
    assert "needle" in match["contentSnippet"] and len(match["contentSnippet"]) <= 100
    args = {"term": "NEEDLE", "verbose": True}
    match = result(repo, "A", "context_search", args)["result"]["matches"][0]
    assert "needle" in match["contentSnippet"] and 100 < len(match["contentSnippet"]) <= 200


# ------------------------------------------------------------------ seed 004: agent tools


def test_per_agent_tool_lists(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        agents={
            "debater": {
                "tools": [{"name": "context_search"}, "file_read", {"name": "no_such_tool"}]
            }
        },
    )
    assert result(repo, "debater", "context_search", {"term": "x"})["status"] == "success"
    refused = error(repo, "debater", "fs_read", {"path": "README.md"})
    assert refused["code"] == "tool_not_enabled" and "context_search, file_read" in refused["error"]
    assert result(repo, "other", "fs_read", {"path": "README.md"})["content"] == "# project\n"
    code, out = cli(repo, "tools", "list", "--agent", "debater")
    assert code == 0 and out.split()[::1][0] == "context_search" and "fs_read" not in out
    code, out = cli(repo, "doctor")
    assert "no_such_tool" in out and "unknown-tool" in out
    envelope = json.dumps({"tool_calls": [{"name": "file_read", "args": {"path": "README.md"}}]})
    ran = hive(repo, "tools", "run", actor="debater", stdin=envelope)
    transcript = json.loads(ran.stdout)  # the unknown name is warned about, as hive mcp does
    assert ran.returncode == 0 and "result" in transcript["results"][0]
    assert any("'no_such_tool'" in w and "skipped" in w for w in transcript["warnings"])


def test_mcp_lists_only_the_agents_tools(ws: Workspace, repo: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    configure(repo, agents={"debater": {"tools": ["list_files", "file_read", "bogus"]}})
    params = mcp_server(["-C", str(repo), "mcp", "--agent", "debater"], env={**os.environ})

    async def scenario() -> tuple[set[str], Any, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            read_ok = await session.call_tool("file_read", {"path": "README.md"})
            denied = await session.call_tool("file_read", {"path": "../x"})
            return {t.name for t in listed.tools}, read_ok, denied

    names, read_ok, denied = anyio.run(scenario)
    assert names == {"list_files", "file_read"}
    assert json.loads(read_ok.content[0].text)["result"]["content"] == "# project\n"
    assert denied.is_error and json.loads(denied.content[0].text)["error"] == OUTSIDE


def test_tool_schemas_for_an_agent_are_the_tools_mcp_lists_it(ws: Workspace, repo: Path) -> None:
    """A runtime that builds an agent's tool list from 'hive tools schema' offers what
    'hive mcp' lists to that agent (--agent): it offered every tool, most refused."""
    configure(repo, agents={"debater": {"tools": ["list_files", "file_read", "bogus"]}})
    for format, name in (("openai", lambda t: t["function"]["name"]), ("mcp", lambda t: t["name"])):
        code, out = cli(repo, "tools", "schema", "--format", format, "--agent", "debater")
        assert code == 0 and [name(t) for t in json.loads(out)] == ["file_read", "list_files"]
    code, out = cli(repo, "tools", "schema", "--format", "anthropic")
    assert code == 0 and len(json.loads(out)) > 60  # without --agent: every tool


def test_tool_call_limit_per_phase_counts_failures(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        agents={
            "d": {"tools": ["context_search", "ctx_put"], "toolCallLimit": 3},
            "e": {"tools": ["context_search"]},
        },
    )
    ctx = CallContext(root=str(repo), agent="d", session="s1")
    assert "result" in call_tool(ctx, "context_search", {"term": "x"})
    assert call_tool(ctx, "context_search", {"term": ""})["code"] == "invalid_arguments"
    assert call_tool(ctx, "fs_read", {"path": "README.md"})["code"] == "tool_not_enabled"
    over = call_tool(ctx, "context_search", {"term": "x"})
    assert over["code"] == "tool_call_limit" and "3 tool calls per phase" in over["error"]
    other_session = CallContext(root=str(repo), agent="d", session="s2")
    assert "result" in call_tool(other_session, "context_search", {"term": "x"})
    result(repo, "orch", "ctx_put", {"key": "phase", "value": 1})  # the next phase
    assert "result" in call_tool(ctx, "context_search", {"term": "x"})
    default = CallContext(root=str(repo), agent="e", session="s3")
    outcomes = [call_tool(default, "context_search", {"term": "x"}) for _ in range(11)]
    assert all("result" in o for o in outcomes[:10])
    assert outcomes[10]["code"] == "tool_call_limit"  # the default limit is 10
    unlimited = CallContext(root=str(repo), agent="free", session="s4")
    assert all("result" in call_tool(unlimited, "ctx_get", {"key": "k"}) for _ in range(15))


def test_bad_agents_config_is_a_clear_error(ws: Workspace, repo: Path) -> None:
    configure(repo, agents={"d": {"toolcalllimit": 3}})
    bad = error(repo, "d", "ctx_get", {"key": "k"})
    assert bad["code"] == "invalid_input" and "agents.d.toolcalllimit" in bad["error"]
    code, out = cli(repo, "doctor")
    assert code == 1 and "agents.d.toolcalllimit" in out


def test_doctor_finds_an_agents_missing_working_directory(ws: Workspace, repo: Path) -> None:
    """An agent whose directory does not exist (or lies outside the repository) has
    every tool call refused, but hive doctor said nothing of it."""
    (repo / "backend").mkdir()
    configure(repo, agents={"ok": {"directory": "backend"}, "gone": {"directory": "nothere"}})
    assert error(repo, "gone", "ctx_get", {"key": "k"})["code"] == "invalid_input"
    code, out = cli(repo, "doctor")
    assert code == 1 and "agents.gone.directory 'nothere' does not exist" in out
    assert "agents.ok" not in out
    configure(repo, agents={"out": {"directory": "../elsewhere"}})
    code, out = cli(repo, "doctor")
    assert code == 1 and "agents.out.directory '../elsewhere' is outside" in out
    configure(repo, agents={"ok": {"directory": "backend"}})
    assert cli(repo, "doctor")[0] == 0


# ------------------------------------------------------------------ seed 002: scratchpad


def test_scratchpad_write_read_list(ws: Workspace, repo: Path) -> None:
    stored = result(
        repo,
        "A",
        "scratchpad_write",
        {"file_path": "analysis/performance", "content": "x" * 450_500, "title": "Performance"},
    )
    assert stored["message"] == "Stored at scratchpad://analysis/performance (450.5KB)"
    result(
        repo,
        "B",
        "scratchpad_write",
        {"file_path": "analysis/memory", "content": "mem", "title": "Memory"},
    )
    result(repo, "B", "scratchpad_write", {"file_path": "other", "content": "o"})
    assert result(repo, "C", "scratchpad_read", {"file_path": "analysis/memory"}) == "mem"
    listed = result(repo, "C", "scratchpad_list", {"prefix": "analysis/"})
    assert listed["count"] == 2
    assert [(e["file_path"], e["title"], e["agent"]) for e in listed["entries"]] == [
        ("analysis/memory", "Memory", "B"),
        ("analysis/performance", "Performance", "A"),
    ]
    assert result(repo, "C", "scratchpad_list", {})["count"] == 3
    missing = error(repo, "C", "scratchpad_read", {"file_path": "nope"})
    assert missing["code"] == "not_found"
    blank = error(repo, "A", "scratchpad_write", {"file_path": "   ", "content": "x"})
    assert blank["error"] == "file_path is required"
    for args in (
        {"file_path": "a"},
        {"content": "x"},
        {"file_path": 1, "content": "x"},
        {"file_path": "a", "content": ["x"]},
    ):
        assert error(repo, "A", "scratchpad_write", args)["code"] == "invalid_arguments"
    _code, out = cli(repo, "scratchpad", "list", "analysis/")
    assert "Scratchpad contents (2 entries):" in out and "(450.5KB)" in out
    _code, out = cli(repo, "scratchpad", "read", "other")
    assert out == "o"


def test_scratchpad_list_gives_each_entrys_created_at(ws: Workspace, repo: Path) -> None:
    """Seed 002 lists entries as {path, title, size, created_at}: the listing had only
    updated_at, so a reader of the seed's field found nothing."""
    import time

    before = time.time()
    result(repo, "A", "scratchpad_write", {"file_path": "r", "content": "v1", "title": "T"})
    time.sleep(0.05)
    result(repo, "B", "scratchpad_write", {"file_path": "r", "content": "v2", "title": "T"})
    (entry,) = result(repo, "C", "scratchpad_list", {})["entries"]
    assert before - 0.01 <= entry["created_at"] < entry["updated_at"] <= time.time()
    assert entry["updated_at"] - entry["created_at"] >= 0.04  # the first write's time, kept


def test_scratchpad_limits(ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from hive.domain import scratchpad

    big = error(repo, "A", "scratchpad_write", {"file_path": "big", "content": "x" * 1_500_000})
    assert big["error"] == "Content exceeds maximum size (1.0MB). Current: 1.5MB"
    monkeypatch.setattr(scratchpad, "MAX_TOTAL_SIZE", 3_000_000)
    for n in range(2):
        result(repo, "A", "scratchpad_write", {"file_path": f"f{n}", "content": "x" * 1_000_000})
    full = error(repo, "A", "scratchpad_write", {"file_path": "f2", "content": "x" * 1_000_000})
    assert full["error"] == (
        "Scratchpad full (3.0MB limit). Current: 2.0MB, Would be: 3.0MB."
        " Clear old entries or use smaller content."
    )
    # Replacing an entry counts its old size out.
    result(repo, "A", "scratchpad_write", {"file_path": "f1", "content": "y" * 900_000})
    _code, out = cli(repo, "scratchpad", "clear")
    assert "removed 2 entries" in out


def test_a_non_ascii_entry_within_one_megabyte_is_stored(ws: Workspace, repo: Path) -> None:
    """The 2 MB cap on a call's arguments counted each non-ASCII character as its
    six-character JSON escape, so 1 MB of accented text (0.5 M characters) was refused
    as 3 MB of arguments before the scratchpad's own 1 MB limit was even asked."""
    text = "é" * 499_999  # 999,998 bytes of UTF-8
    stored = result(repo, "A", "scratchpad_write", {"file_path": "fr", "content": text})
    assert stored["size"] == 999_998
    assert result(repo, "B", "scratchpad_read", {"file_path": "fr"}) == text
    over = error(repo, "A", "scratchpad_write", {"file_path": "fr2", "content": text + "éé"})
    assert over["error"].startswith("Content exceeds maximum size (1.0MB)")
    # The cap itself is on bytes of UTF-8 JSON, whatever the characters.
    huge = error(repo, "A", "scratchpad_write", {"file_path": "x", "content": "é" * 1_000_001})
    assert huge["code"] == "invalid_arguments" and "too large" in huge["error"]


def test_scratchpad_writers_in_parallel(ws: Workspace, repo: Path) -> None:
    run_workers(
        repo,
        """
        ctx = CallContext(root=repo, agent=f"W{worker}")
        for n in range(10):
            out = call_tool(ctx, "scratchpad_write",
                            {"file_path": f"w{worker}/{n}", "content": "x" * 1000, "title": "t"})
            assert "result" in out, out
        print("0")
        """,
        count=8,
    )
    listed = result(repo, "A", "scratchpad_list", {})
    assert listed["count"] == 80 and listed["total_size"] == 80_000


# ------------------------------------------------------------------ seed 002: todos


def test_todo_lists_per_agent(ws: Workspace, repo: Path) -> None:
    todos = [
        {"content": "Write the test", "status": "completed"},
        {"content": "Make it pass", "status": "in_progress", "activeForm": "Making it pass"},
        {"content": "Refactor", "status": "pending"},
    ]
    written = result(repo, "A", "todo_write", {"todos": todos})
    assert written["completed"] == 1 and written["in_progress"] == 1 and written["pending"] == 1
    assert result(repo, "A", "todo_read", {})["todos"] == todos
    assert result(repo, "B", "todo_read", {})["todos"] == []
    result(repo, "A", "todo_write", {"todos": todos[:1]})
    assert result(repo, "A", "todo_read", {})["todos"] == todos[:1]
    for args in (
        {"todos": [{"content": "x", "status": "done"}]},
        {"todos": [{"content": "", "status": "pending"}]},
        {"todos": [{"status": "pending"}]},
        {"todos": "x"},
        {},
        {"todos": [{"content": "x", "status": "pending", "due": "now"}]},
    ):
        assert error(repo, "A", "todo_write", args)["code"] == "invalid_arguments", args
    _code, out = cli(repo, "todo", "list")
    assert "A: 1/1 done" in out and "[x] Write the test" in out


# ------------------------------------------------------------------ seed 002: agent profiles


def test_todos_with_terminal_escapes_are_refused(ws: Workspace, repo: Path) -> None:
    """A todo's text was printed raw by hive todo list: an agent's escape sequence
    rewrote the terminal of the person reading every agent's list."""
    result(repo, "A", "todo_write", {"todos": [{"content": "keep", "status": "pending"}]})
    for todo in (
        {"content": "red \x1b[31mALERT", "status": "pending"},
        {"content": "fine", "status": "pending", "activeForm": "doing \x1b[2J"},
    ):
        refused = error(repo, "A", "todo_write", {"todos": [todo]})
        assert refused["code"] == "invalid_input" and "U+001B" in refused["error"], todo
    assert [t["content"] for t in result(repo, "A", "todo_read", {})["todos"]] == ["keep"]


def test_read_before_write(ws: Workspace, repo: Path) -> None:
    configure(repo, agents={"careful": {"read_before_write": True}})
    (repo / "notes.md").write_text("old\n")
    ctx = CallContext(root=str(repo), agent="careful", session="one")
    refused = call_tool(ctx, "fs_write", {"path": "notes.md", "content": "new\n"})
    assert refused["code"] == "read_before_write" and "read it first" in refused["error"]
    assert "result" in call_tool(ctx, "fs_write", {"path": "fresh.md", "content": "x"})
    assert "result" in call_tool(ctx, "fs_read", {"path": "notes.md"})
    assert call_tool(ctx, "fs_write", {"path": "notes.md", "content": "new\n"})["result"]["queued"]
    later = CallContext(root=str(repo), agent="careful", session="two")
    assert call_tool(later, "fs_write", {"path": "notes.md", "content": "x"})["code"] == (
        "read_before_write"
    )
    assert "result" in call_tool(later, "file_read", {"path": "notes.md"})  # file_read counts
    assert "result" in call_tool(later, "fs_write", {"path": "notes.md", "content": "x"})
    other = CallContext(root=str(repo), agent="casual", session="one")
    assert "result" in call_tool(other, "fs_write", {"path": "notes.md", "content": "y"})


def test_envelopes_with_one_hive_session_are_one_session(ws: Workspace, repo: Path) -> None:
    """Each 'hive tools run' is its own session unless HIVE_SESSION names one (docs/seeds.md):
    a runner giving an agent's envelopes one HIVE_SESSION lets a read count for a write."""
    from tests.conftest import credential

    configure(repo, agents={"careful": {"read_before_write": True}})
    (repo / "notes.md").write_text("old\n")
    env = {**os.environ, "HIVE_AGENT": "careful", "HIVE_AGENT_TOKEN": credential(repo, "careful")}

    def envelope(session: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
        text = json.dumps({"tool_calls": [{"name": name, "args": args}]})
        ran = run_hive(
            ["-C", str(repo), "tools", "run"], env={**env, "HIVE_SESSION": session}, input=text
        )
        answer: dict[str, Any] = json.loads(ran.stdout)["results"][0]
        return answer

    assert "result" in envelope("turns", "fs_read", {"path": "notes.md"})
    write = {"path": "notes.md", "content": "new\n"}
    assert envelope("other", "fs_write", write)["code"] == "read_before_write"
    assert envelope("turns", "fs_write", write)["result"]["queued"]


def test_per_agent_working_directory_and_hooks(ws: Workspace, repo: Path) -> None:
    (repo / "backend").mkdir()
    (repo / "backend/api.py").write_text("API = 1\n")
    (repo / "frontend.js").write_text("x\n")
    configure(
        repo,
        agents={
            "back": {
                "directory": "backend",
                "hooks": {
                    "pre_tool_use": [
                        {"matcher": "fs_read", "type": "command", "command": "pwd >&2; exit 1"}
                    ]
                },
            },
            "gated": {
                "hooks": {
                    "pre_tool_use": [
                        {"matcher": "fs_.*", "command": "echo no fs for you >&2; exit 2"}
                    ]
                }
            },
            "lost": {"directory": "nowhere"},
        },
    )
    assert result(repo, "back", "fs_list", {})["files"] == ["backend/api.py"]
    read = call(repo, "back", "fs_read", {"path": "api.py"})
    assert read["result"]["path"] == "backend/api.py"
    assert read["warnings"][0].endswith("/backend")  # the hook ran in the agent's directory
    assert result(repo, "back", "file_read", {"path": "api.py"})["result"]["content"] == "API = 1\n"
    assert result(repo, "back", "fs_read", {"path": "../frontend.js"})["path"] == "frontend.js"
    assert error(repo, "back", "file_read", {"path": "../frontend.js"})["error"] == OUTSIDE
    blocked = error(repo, "gated", "fs_read", {"path": "frontend.js"})
    assert blocked["code"] == "hook_blocked" and blocked["error"] == "no fs for you"
    assert result(repo, "free", "fs_read", {"path": "frontend.js"})["path"] == "frontend.js"
    lost = error(repo, "lost", "fs_list", {})
    assert lost["code"] == "invalid_input" and "does not exist" in lost["error"]


def test_bypass_permissions(ws: Workspace, repo: Path) -> None:
    (repo / "secrets").mkdir()
    (repo / "secrets/k.txt").write_text("key\n")
    configure(
        repo,
        tools={"permissions": {"*": {"*": {"denied_paths": ["secrets/**"]}}}},
        agents={"admin": {"bypass_permissions": True}},
    )
    assert error(repo, "worker", "fs_read", {"path": "secrets/k.txt"})["code"] == (
        "permission_denied"
    )
    assert result(repo, "admin", "fs_read", {"path": "secrets/k.txt"})["content"] == "key\n"
    assert "secrets/k.txt" in result(repo, "admin", "fs_list", {})["files"]
    assert "secrets/k.txt" not in result(repo, "worker", "fs_list", {})["files"]
    assert error(repo, "worker", "file_read", {"path": "secrets/k.txt"})["code"] == (
        "permission_denied"
    )


def test_bypass_permissions_covers_reservations_and_the_commit_hook(
    ws: Workspace, repo: Path
) -> None:
    """The path rules a bypassing agent skips are skipped where the domain applies them
    too: its reservations (tool and command line) and its commits (the pre-commit hook's
    ``git_commit`` rules). They were refused there while its file tools were allowed."""
    import subprocess

    from hive.domain.hooks import install_hook
    from tests.conftest import agent_env, credential, git

    configure(
        repo,
        tools={"permissions": {"*": {"*": {"denied_paths": ["secrets/**"]}}}},
        agents={"admin": {"bypass_permissions": True}},
    )
    for name in ("worker", "admin"):
        credential(repo, name)  # registered, as reserving needs
    denied = error(repo, "worker", "swarmmail_reserve", {"paths": ["secrets/a.txt"]})
    assert denied["code"] == "permission_denied", denied
    granted = result(repo, "admin", "swarmmail_reserve", {"paths": ["secrets/a.txt"]})
    assert [r["path_pattern"] for r in granted["granted"]] == ["secrets/a.txt"]
    assert hive(repo, "reserve", "secrets/b.txt", actor="worker").returncode == 5
    assert hive(repo, "reserve", "secrets/b.txt", actor="admin").returncode == 0
    install_hook(ws)
    (repo / "secrets").mkdir()
    (repo / "secrets/a.txt").write_text("key\n")
    git(repo, "add", "secrets/a.txt")
    for name, code in (("worker", 1), ("admin", 0)):
        done = subprocess.run(
            ["git", "-C", str(repo), "commit", "-qm", f"by {name}"],
            env=agent_env(repo, name),
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == code, (name, done.stderr)
    assert git(repo, "log", "-1", "--format=%s").strip() == "by admin"


# ------------------------------------------------------------------ seed 002: event log


def test_event_log_keeps_capped_redacted_arguments(ws: Workspace, repo: Path) -> None:
    from hive.domain.governance import read_events

    configure(repo, tools={"events": {"max_args_bytes": 3000, "redact": ["password", "pin"]}})
    result(
        repo,
        "A",
        "ctx_put",
        {
            "key": "login",
            "value": {"user": "u", "password": "hunter2", "PIN_code": 1234, "note": "n" * 5000},
        },
    )
    result(repo, "A", "scratchpad_write", {"file_path": "big", "content": "z" * 50_000})
    state = repo / ".git" / "hive"
    events = read_events(str(state), 2)
    first, second = events
    assert first["tool"] == "ctx_put"
    assert first["args"]["key"] == "login"
    assert first["args"]["value"]["password"] == "[redacted]"
    assert first["args"]["value"]["PIN_code"] == "[redacted]"
    assert first["args"]["value"]["user"] == "u"
    assert first["args"]["value"]["note"].endswith("...[+4000 chars]")
    assert "hunter2" not in json.dumps(events)
    assert second["args"]["file_path"] == "big"
    assert len(json.dumps(second["args"])) < 3000
    _code, out = cli(repo, "events", "-n", "2")
    assert '"file_path": "big"' in out


def test_configured_redact_words_add_to_the_defaults(ws: Workspace, repo: Path) -> None:
    """``tools.events.redact: [pin]`` replaced the default words: from then on the
    event log kept passwords, tokens and API keys in clear. A configured word is
    added to them, on the full path and on the lean one (``hive.cli.leanlog``)."""
    from hive.cli.leanlog import events_settings
    from hive.domain.governance import read_events

    configure(repo, tools={"events": {"redact": ["PIN"]}})
    value = {"password": "hunter2", "api_key": "k-123", "pin_code": 1234, "user": "u"}
    result(repo, "A", "ctx_put", {"key": "login", "value": value})
    logged = read_events(str(repo / ".git" / "hive"), 1)[0]["args"]["value"]
    assert logged == {
        "password": "[redacted]",
        "api_key": "[redacted]",
        "pin_code": "[redacted]",
        "user": "u",
    }
    words, _most = events_settings({"events": {"redact": ["PIN"]}})
    assert {"password", "token", "api_key", "pin"} <= set(words)


# ------------------------------------------------------------------ the commands a person uses


def test_search_scratchpad_and_todo_commands(ws: Workspace, repo: Path) -> None:
    result(repo, "orch", "hive_create", {"title": "Design rate limiting"})
    found = hive(repo, "search", "RATE limiting")
    cell = json.loads(hive(repo, "list", "--json").stdout)[0]["id"]
    assert found.stdout == f"{cell}  round 1  orch (coordinator, cell): Design rate limiting\n"
    assert "nothing matches" in hive(repo, "search", "no such words").stdout
    as_json = json.loads(hive(repo, "search", "rate", "--json").stdout)
    assert as_json == result(repo, "alice", "context_search", {"term": "rate"})

    written = hive(repo, "scratchpad", "write", "notes/a", "-", "--title", "A", stdin="from stdin")
    assert written.stdout == "Stored at scratchpad://notes/a (10B)\n"
    hive(repo, "scratchpad", "write", "other/b", "b")
    assert hive(repo, "scratchpad", "read", "notes/a").stdout == "from stdin"
    assert json.loads(hive(repo, "scratchpad", "read", "notes/a", "--json").stdout) == "from stdin"
    missing = hive(repo, "scratchpad", "read", "notes/none")
    assert missing.returncode == 3 and "scratchpad://notes/none not found" in missing.stderr
    assert hive(repo, "scratchpad", "clear", "notes/").stdout == "removed 1 entries\n"
    assert result(repo, "x", "scratchpad_list", {})["count"] == 1

    todos = [{"content": "Write the test", "status": "completed"}]
    todos.append({"content": "Pass it", "status": "pending", "activeForm": "Passing it"})
    assert hive(repo, "todo", "set", json.dumps(todos)).stdout == "2 todos for alice\n"
    one_by_one = [json.dumps(todo) for todo in todos[:1]]
    assert hive(repo, "todo", "set", *one_by_one, actor="bob").stdout == "1 todos for bob\n"
    shown = json.loads(hive(repo, "todo", "show", "--json").stdout)
    assert shown["todos"] == todos == result(repo, "alice", "todo_read", {})["todos"]
    listed = hive(repo, "todo", "list").stdout
    assert "alice: 1/2 done" in listed and "bob: 1/1 done" in listed and "[ ] Pass it" in listed
    only = json.loads(hive(repo, "todo", "list", "--agent", "bob", "--json").stdout)
    assert [entry["agent"] for entry in only] == ["bob"]
    bad = hive(repo, "todo", "set", '[{"content": "x", "status": "done"}]', "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["code"] == "invalid_input"


def test_scratchpad_read_ends_its_line_on_a_terminal_only(ws: Workspace, repo: Path) -> None:
    """The content printed without a line break at its end put the shell's next prompt
    on its last line; piped and in --json it stays as stored."""
    from tests.inprocess import fork_on_terminal

    hive(repo, "scratchpad", "write", "notes/a", "no break")
    hive(repo, "scratchpad", "write", "notes/b", "broken\n")
    code, seen = fork_on_terminal(["-C", str(repo), "scratchpad", "read", "notes/a"])
    assert (code, seen) == (0, b"no break\r\n")
    code, seen = fork_on_terminal(["-C", str(repo), "scratchpad", "read", "notes/b"])
    assert (code, seen) == (0, b"broken\r\n")
    assert hive(repo, "scratchpad", "read", "notes/a").stdout == "no break"
    assert json.loads(hive(repo, "scratchpad", "read", "notes/a", "--json").stdout) == "no break"


def test_an_approved_write_through_a_symlink_into_hive_in_any_case_is_refused(
    tmp_path: Path,
) -> None:
    """The write an arbiter approves is checked again where it really lands: a path
    that resolves into hive's directory in any case (``.HIVE``, as propose_write checks
    the path given) is refused, not written."""
    from hive.domain.files import decide, propose_write

    root, state = tmp_path / "repo", tmp_path / "state"
    (root / ".HIVE").mkdir(parents=True)
    state.mkdir()
    os.symlink(".HIVE", root / "alias")
    propose_write(str(root), str(state), agent="a", path="alias/x.yaml", content="x: 1\n")
    text = '{"decisions": [{"path": "alias/x.yaml", "action": "approve"}]}'
    report = decide(str(root), str(state), text, allow_write=True)
    assert [entry["status"] for entry in report] == ["failed"], report
    assert "resolves into .hive/" in report[0]["result"]
    assert not (root / ".HIVE" / "x.yaml").exists()


def test_a_read_cut_short_does_not_count_for_read_before_write(ws: Workspace, repo: Path) -> None:
    """fs_read with max_bytes below the file's size counted as a read: the agent could
    then rewrite a file it saw the first 10 bytes of. A truncated read does not count;
    the refusal says how to read all of it (max_bytes its size), and that read does."""
    configure(repo, agents={"careful": {"read_before_write": True}})
    (repo / "notes.md").write_text("0123456789" * 30)
    ctx = CallContext(root=str(repo), agent="careful", session="one")
    assert call_tool(ctx, "fs_read", {"path": "notes.md", "max_bytes": 10})["result"]["truncated"]
    refused = call_tool(ctx, "fs_write", {"path": "notes.md", "content": "new\n"})
    assert refused["code"] == "read_before_write", refused
    assert "not read it whole" in refused["error"], refused
    assert "all 300 bytes: fs_read with max_bytes 300" in refused["error"], refused
    assert not call_tool(ctx, "fs_read", {"path": "notes.md", "max_bytes": 300})["result"][
        "truncated"
    ]
    assert call_tool(ctx, "fs_write", {"path": "notes.md", "content": "new\n"})["result"]["queued"]
