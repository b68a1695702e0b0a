"""The agent tool surfaces end to end: envelope, MCP over real stdio, governance."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio

from hive.domain.workspace import Workspace
from hive.tools.docs import render_tools_docs
from hive.tools.registry import CallContext, call_tool, tools
from hive.tools.schemas import FORMATS, input_schema, token_estimate
from tests.conftest import agent_env, git
from tests.hivefork import hive_command
from tests.inprocess import console_probe, fork_hive, run_hive

ROOT = Path(__file__).resolve().parent.parent
SEED_TOOLS = {
    "hive_create",
    "hive_create_epic",
    "hive_query",
    "hive_update",
    "hive_start",
    "hive_close",
    "hive_ready",
    "swarmmail_init",
    "swarmmail_send",
    "swarmmail_inbox",
    "swarmmail_read_message",
    "swarmmail_reserve",
    "swarmmail_release",
    "swarmmail_ack",
    "swarm_init",
    "swarm_select_strategy",
    "swarm_decompose",
    "swarm_plan_prompt",
    "swarm_validate_decomposition",
    "swarm_subtask_prompt",
    "swarm_spawn_subtask",
    "swarm_status",
    "swarm_progress",
    "swarm_complete",
    "swarm_record_outcome",
    "swarm_evaluation_prompt",
}


def hive(
    repo: Path, *args: str, stdin: str = "", actor: str = "bob"
) -> subprocess.CompletedProcess[str]:
    """Run hive as agent ``actor``, proven by its credential (as a runner starts it)."""
    return run_hive(
        ["-C", str(repo), "--actor", actor, *args],
        input=stdin,
        env=agent_env(repo, actor),
        module="hive.cli.main",
    )


def arbiter(repo: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run hive as a person (no credential): who decides file-write proposals."""
    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    return run_hive(["-C", str(repo), *args], input=stdin, env=person, module="hive.cli.main")


def envelope(
    repo: Path, calls: list[dict[str, Any]], agent: str = "bob", *, process: bool = False
) -> dict[str, Any]:
    """``hive tools run`` as ``agent`` (in this process; ``process``: in a process of its own)."""
    text = "Plan:\n```json\n" + json.dumps({"tool_calls": calls}) + "\n```\nDone."
    if process:
        argv = ["-C", str(repo), "--actor", agent, "tools", "run", "--agent", agent]
        child = fork_hive(argv, env=agent_env(repo, agent), input=text, module="hive.cli.main")
        out, err = child.communicate(timeout=120)
        assert "Traceback" not in err
        answer: dict[str, Any] = json.loads(out)
        return answer
    result = hive(repo, "tools", "run", "--agent", agent, stdin=text, actor=agent)
    assert "Traceback" not in result.stderr
    transcript: dict[str, Any] = json.loads(result.stdout)
    return transcript


def configure(repo: Path, tools_config: dict[str, Any]) -> None:
    from hive.store.yamlio import dumps

    config = repo / ".hive" / "config.yaml"
    base = config.read_text().split("tools:")[0]
    config.write_text(base + dumps({"tools": tools_config}))
    git(repo, "commit", "-qam", "tools config")


def test_registry_covers_the_seed_tools_and_fits_the_budget() -> None:
    names = {tool.name for tool in tools()}
    assert names >= SEED_TOOLS
    for format in FORMATS:
        assert token_estimate(format) <= 8000, format
    for tool in tools():
        assert tool.description and len(tool.description) < 120


def test_schemas_leave_string_lengths_to_the_server(ws: Workspace, repo: Path) -> None:
    """String lengths are not published (they cost ~230 tokens of every agent's
    context, in every format, and the budget must hold however the JSON is spaced);
    the server still refuses an over-long value, naming the limit."""
    from hive.tools.registry import CallContext, call_tool
    from hive.tools.schemas import render

    for format in FORMATS:
        published = json.dumps(render(format))  # with json's default spacing
        assert "maxLength" not in published and "minLength" not in published
        assert len(published) / 4 < 8000, format
    refused = call_tool(CallContext(root=str(repo)), "hive_create", {"title": "x" * 501})
    assert refused["code"] == "invalid_arguments", refused
    assert "at most 500 characters" in refused["error"]


def test_schema_descriptions_hold_no_docstring_markup() -> None:
    """A model's docstring is its schema's description, in every agent's tool list:
    hive_create_epic's subtask read "One planned subtask; ``dependencies`` are indexes
    of sibling subtasks it waits for. Keys a planner adds beyond these are ignored." --
    reST markup, and ~20 tokens repeating its field's own description."""
    import re

    from hive.tools.schemas import render

    for format in FORMATS:
        published = json.dumps(render(format))
        assert not re.findall(r"(?<!`)``(?!`)", published), format
        assert "One planned subtask (other keys are ignored)." in published


def test_docs_are_generated_from_the_registry() -> None:
    current = (ROOT / "docs" / "tools.md").read_text()
    assert current == render_tools_docs(), "docs/tools.md is stale: run python -m hive.tools.docs"


def test_schema_formats(ws: Workspace, repo: Path) -> None:
    for format, key in (("mcp", "inputSchema"), ("anthropic", "input_schema")):
        listed = json.loads(hive(repo, "tools", "schema", "--format", format).stdout)
        create = next(t for t in listed if t["name"] == "hive_create")
        assert create[key]["required"] == ["title"]
    openai = json.loads(hive(repo, "tools", "schema", "--format", "openai").stdout)
    assert openai[0]["type"] == "function" and "parameters" in openai[0]["function"]
    bad = hive(repo, "tools", "schema", "--format", "xml")
    assert bad.returncode == 2 and "unknown schema format" in bad.stderr


def test_envelope_runs_calls_in_order_with_structured_errors(ws: Workspace, repo: Path) -> None:
    transcript = envelope(
        repo,
        [
            {"name": "swarmmail_init", "args": {"agent_name": "bob"}},
            {"name": "hive_create", "args": {"title": "from an agent", "priority": 1}},
            {"name": "hive_ready", "args": {"limit": 5}},
            {"name": "no_such_tool", "args": {}},
            {"name": "hive_create", "args": {"title": ["not", "a", "string"]}},
            {"name": "hive_update", "args": {"id": "hv-zzzzzz", "priority": 1}},
            {"name": "hive_create", "args": {"title": "x", "description": "y" * 30_000}},
            {"name": "fs_read", "args": {"path": "../outside"}},
            "not an object",
        ],
    )
    results = transcript["results"]
    assert results[0]["result"]["name"] == "bob"
    created = results[1]["result"]
    assert results[2]["result"][0]["id"] == created["id"]
    assert results[3]["code"] == "unknown_tool"
    assert results[4]["code"] == "invalid_arguments" and results[4]["field"] == "title"
    assert results[5]["code"] == "not_found"
    assert results[6]["code"] == "invalid_arguments" and results[6]["field"] == "description"
    assert results[7]["code"] == "path_outside_repository"
    assert results[8]["code"] == "invalid_call"
    assert git(repo, "log", "-1", "--format=%s").startswith(f"hive: create {created['id']}")


def test_a_call_with_arguments_under_another_key_is_refused_not_run_without_them(
    ws: Workspace, repo: Path
) -> None:
    """OpenAI's tool calls say ``arguments``, Anthropic's ``input``: run without them,
    ``hive_ready {"claim": true}`` would list instead of claiming and say nothing."""
    from hive.domain.cells import create_cell

    create_cell(ws, title="ready work")
    before = git(repo, "rev-parse", "HEAD")
    transcript = envelope(
        repo,
        [
            {"name": "hive_ready", "arguments": {"claim": True}},
            {"name": "hive_create", "input": {"title": "from an agent"}},
        ],
    )
    for result in transcript["results"]:
        assert result["code"] == "invalid_call" and "result" not in result, result
    assert "'arguments'" in transcript["results"][0]["error"]
    assert '"args"' in transcript["results"][1]["error"]
    assert git(repo, "rev-parse", "HEAD") == before  # nothing claimed, nothing created


def test_a_name_the_session_cannot_prove_is_a_warning_in_the_transcript(
    ws: Workspace, repo: Path
) -> None:
    """``tools run --agent NAME`` for a name registered elsewhere runs unbound: the
    transcript says why, not only ``"agent": null``."""
    agent_env(repo, "bob")  # bob is registered, with a credential this process lacks
    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    text = json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}]})
    argv = ["-C", str(repo), "tools", "run", "--agent", "bob"]
    result = run_hive(argv, input=text, env=person, module="hive.cli.main")
    transcript = json.loads(result.stdout)
    assert transcript["agent"] is None and "result" in transcript["results"][0]
    warning = transcript["warnings"][0]
    assert "cannot prove" in warning and "bob" in warning
    # the way out is the session's own (it is bound at start), not "choose another name"
    assert "start it again with bob's credential" in warning and "choose" not in warning
    proven = hive(repo, "tools", "run", "--agent", "bob", stdin=text)
    assert "warnings" not in json.loads(proven.stdout)


def test_an_envelope_that_registers_its_agent_shows_the_credential_once(
    ws: Workspace, repo: Path
) -> None:
    """``tools run --agent NAME`` for a new NAME registers it with a credential that lives
    only as long as the process: the transcript gives it (as swarmmail_init does), so a
    later envelope can act as NAME (its rate limits and ownership); without it the name
    was taken for good and every later ``--agent NAME`` ran unbound."""
    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    text = json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}]})
    argv = ["-C", str(repo), "tools", "run", "--agent", "Fresh"]
    first = json.loads(run_hive(argv, input=text, env=person, module="hive.cli.main").stdout)
    assert first["agent"] == "Fresh", first
    credential = first["credential"]
    assert credential["agent"] == "Fresh" and credential["token"].startswith("hive_")
    assert "HIVE_AGENT_TOKEN" in credential["note"]
    again = run_hive(
        argv,
        input=text,
        env={**person, "HIVE_AGENT": "Fresh", "HIVE_AGENT_TOKEN": credential["token"]},
        module="hive.cli.main",
    )
    second = json.loads(again.stdout)
    assert second["agent"] == "Fresh" and "warnings" not in second, second
    assert "credential" not in second  # proven, not issued: nothing to show
    shown = json.dumps({"tool_calls": [{"name": "swarmmail_init", "args": {}}]})
    argv = ["-C", str(repo), "tools", "run", "--agent", "Other"]
    third = json.loads(run_hive(argv, input=shown, env=person, module="hive.cli.main").stdout)
    assert third["results"][0]["result"]["token"].startswith("hive_")
    assert "credential" not in third  # swarmmail_init's result gave it already


def test_malformed_envelopes(ws: Workspace, repo: Path) -> None:
    for text in ("{not json", "no json here at all", '{"tool_calls": "nope"}'):
        result = hive(repo, "tools", "run", stdin=text)
        assert result.returncode == 2 and "Traceback" not in result.stderr
        assert json.loads(result.stdout)["code"] == "invalid_envelope"


def test_text_that_is_not_unicode_is_refused_not_an_internal_error(
    ws: Workspace, repo: Path
) -> None:
    """A lone surrogate (a JSON escape such as \\udcff, or bytes that are not UTF-8 on
    standard input) crashed the event log's size count: the envelope ended with an
    internal error and printed no transcript, though the calls before it had run;
    hive scratchpad write - failed the same way."""
    ctx = CallContext(root=str(repo), agent="carol")
    for args in ({"key": "\udcff"}, {"key": "k", "value": ["\ud800"]}):
        refused = call_tool(ctx, "ctx_put", {"value": 1, **args})
        assert refused["code"] == "invalid_arguments" and "surrogate" in refused["error"]
    text = '{"tool_calls": [{"name": "ctx_put", "args": {"key": "a", "value": 1}},'
    text += ' {"name": "ctx_get", "args": {"key": "\\udcff"}}]}'
    ran = hive(repo, "tools", "run", stdin=text)
    assert ran.returncode == 2 and "internal error" not in ran.stderr, ran.stderr
    first, second = json.loads(ran.stdout)["results"]
    assert first["result"]["ok"] is True and second["code"] == "invalid_arguments"
    # bytes that are not UTF-8 on a process's standard input, as a new interpreter reads
    # it: each process forked from the tests' warm fork server with ``finalize``
    # (tests/hivefork.py: standard streams made as the interpreter makes them, the
    # console script's code; ~0.1 s of CPU each instead of ~0.3 s)
    env = agent_env(repo, "bob")
    for argv, data in (
        (["tools", "run"], b'{"tool_calls": [{"name": "ctx_get", "args": {"key": "\xff"}}]}'),
        (["scratchpad", "write", "notes", "-"], b"caf\xe9"),
        (["mail", "send", "bob", "-s", "hi", "-b", "-"], b"caf\xe9"),
        (["proposals", "decide", "-"], b"\xff"),
    ):
        done = subprocess.run(
            hive_command(["-C", str(repo), *argv], finalize=True),
            input=data,
            capture_output=True,
            env=env,
            timeout=60,
        )
        stderr = done.stderr.decode()
        assert done.returncode == 2 and "not UTF-8 text" in stderr, (argv, stderr)
        assert "internal error" not in stderr and "Traceback" not in stderr


def test_file_tools_are_sandboxed(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("def main():\n    return 42\n")
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    os.symlink(outside, repo / "src/link.txt")
    results = envelope(
        repo,
        [
            {"name": "fs_list", "args": {"dir": "src", "pattern": "*.py"}},
            {"name": "fs_read", "args": {"path": "src/app.py"}},
            {"name": "search_text", "args": {"pattern": "return \\d+"}},
            {"name": "fs_read", "args": {"path": "src/link.txt"}},
            {"name": "fs_read", "args": {"path": ".git/config"}},
            {"name": "fs_list", "args": {"dir": "../.."}},
        ],
    )["results"]
    assert results[0]["result"]["files"] == ["src/app.py"]
    assert "return 42" in results[1]["result"]["content"]
    assert results[2]["result"]["matches"][0] == {
        "file": "src/app.py",
        "line": 2,
        "text": "    return 42",
    }
    assert results[3]["code"] == "path_outside_repository" and "symlink" in results[3]["error"]
    assert results[4]["code"] == "path_outside_repository"
    assert results[5]["code"] == "path_outside_repository"


def test_permissions_denied_wins_and_allowlists_restrict(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "permissions": {
                "*": {"*": {"denied_paths": ["secrets/**"]}},
                "bob": {"fs_write": {"allowed_paths": ["docs/**"]}},
            }
        },
    )
    (repo / "secrets").mkdir()
    (repo / "secrets/key").write_text("k")
    results = envelope(
        repo,
        [
            {"name": "fs_read", "args": {"path": "secrets/key"}},
            {"name": "fs_write", "args": {"path": "src/a.py", "content": "x"}},
            {"name": "fs_write", "args": {"path": "docs/a.md", "content": "x"}},
            {"name": "fs_write", "args": {"path": "docs/../secrets/b", "content": "x"}},
            {"name": "swarmmail_reserve", "args": {"paths": ["secrets/*"]}},
        ],
    )["results"]
    assert results[0]["code"] == "permission_denied" and results[0]["path"] == "secrets/key"
    assert results[0]["rule"] == "*.*.denied_paths: secrets/**"
    assert results[1]["code"] == "permission_denied" and "allowed_paths" in results[1]["error"]
    assert results[2]["result"]["queued"] is True
    assert results[3]["code"] == "permission_denied"
    assert results[4]["code"] == "permission_denied"
    other = envelope(
        repo, [{"name": "fs_write", "args": {"path": "src/a.py", "content": "x"}}], "amy"
    )
    assert "result" in other["results"][0]


def test_rate_limits_hold_across_processes(ws: Workspace, repo: Path) -> None:
    configure(repo, {"rate_limits": {"hive_ready": {"capacity": 3, "per_seconds": 3600}}})
    calls = [{"name": "hive_ready", "args": {}}] * 2
    first = envelope(repo, calls, process=True)["results"]
    second = envelope(repo, calls, process=True)["results"]
    outcomes = [("result" in r) for r in first + second]
    assert outcomes == [True, True, True, False]
    limited = second[1]
    assert limited["error"] == "rate_limited" and limited["code"] == 429
    assert (limited["tool"], limited["limit"], limited["remaining"], limited["scope"]) == (
        "hive_ready",
        3,
        0,
        "bob",
    )
    assert limited["reset_sec"] > 0
    assert "result" in envelope(repo, calls[:1], agent="amy")["results"][0]


def test_hooks_continue_warn_block_and_time_out(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [
                    {"matcher": "^hive_ready$", "command": "echo checked"},
                    {"matcher": "^hive_query$", "command": "echo careful >&2; exit 1"},
                    {"matcher": "^hive_create$", "command": "echo no creating today >&2; exit 2"},
                    {"matcher": "^fs_list$", "command": "sleep 20", "timeout_seconds": 0.5},
                ],
                "post_tool_use": [{"matcher": "^hive_ready$", "command": "cat > post.json"}],
            }
        },
    )
    results = envelope(
        repo,
        [
            {"name": "hive_ready", "args": {}},
            {"name": "hive_query", "args": {}},
            {"name": "hive_create", "args": {"title": "blocked"}},
            {"name": "fs_list", "args": {}},
        ],
    )["results"]
    assert "hook_output" not in results[0] and "result" in results[0]
    assert json.loads((repo / "post.json").read_text())["tool"] == "hive_ready"
    assert results[1]["warnings"] == ["careful"] and "result" in results[1]
    assert results[2]["code"] == "hook_blocked" and results[2]["error"] == "no creating today"
    assert results[3]["code"] == "hook_failed" and "timed out" in results[3]["error"]
    assert "blocked" not in git(repo, "log", "--format=%s")
    events = json.loads(hive(repo, "events", "--json").stdout)
    ready_hook = events[-4]["hooks"][0]
    assert (ready_hook["phase"], ready_hook["exit_code"], ready_hook["stdout"]) == (
        "pre_tool_use",
        0,
        "checked\n",
    )
    timed_out = events[-1]["hooks"][0]
    assert timed_out["timed_out"] is True and timed_out["exit_code"] is None


def test_write_proposals_need_approval_and_allow_write(ws: Workspace, repo: Path) -> None:
    envelope(repo, [{"name": "fs_write", "args": {"path": "docs/new.md", "content": "# hi\n"}}])
    listed = json.loads(hive(repo, "--json", "proposals", "list").stdout)
    assert [(p["path"], p["status"]) for p in listed] == [("docs/new.md", "pending")]
    strictness = arbiter(repo, "proposals", "decide", "-", stdin='{"decisions": [{"path": 1}]}')
    assert strictness.returncode == 2 and "decisions must be" in strictness.stderr
    decision = json.dumps(
        {"decisions": [{"path": "docs/new.md", "action": "approve", "notes": "ok"}]}
    )
    # an agent is not its own arbiter: bob, who proposed it, may not approve it
    own = hive(repo, "proposals", "decide", "-", "--allow-write", stdin=decision)
    assert own.returncode == 5 and not (repo / "docs/new.md").exists()
    assert "or a person may decide file-write proposals" in own.stderr
    assert "bob is neither" in own.stderr
    assert json.loads(hive(repo, "--json", "proposals", "list").stdout)[0]["status"] == "pending"
    approved = json.loads(
        arbiter(repo, "--json", "proposals", "decide", "-", stdin=decision).stdout
    )
    assert approved[0]["status"] == "approved" and not (repo / "docs/new.md").exists()
    applied = json.loads(
        hive(repo, "tools", "run", "--allow-write", stdin='{"tool_calls": []}').stdout
    )
    assert applied["applied"][0]["status"] == "applied"
    assert (repo / "docs/new.md").read_text() == "# hi\n"


def test_every_call_is_in_the_event_log(ws: Workspace, repo: Path) -> None:
    envelope(repo, [{"name": "hive_ready", "args": {}}, {"name": "nope", "args": {"x": 1}}])
    events = json.loads(hive(repo, "events", "--json").stdout)
    assert [(e["agent"], e["tool"], e["outcome"]) for e in events[-2:]] == [
        ("bob", "hive_ready", "ok"),
        ("bob", "nope", "unknown_tool"),
    ]
    assert all(len(e["args_digest"]) == 16 and e["duration_ms"] >= 0 for e in events)
    assert not (repo / "events.jsonl").exists()  # outside the working tree


def test_in_process_calls_never_raise(ws: Workspace, repo: Path) -> None:
    ctx = CallContext(root=str(repo), agent="carol")
    assert call_tool(ctx, "hive_create", None)["code"] == "invalid_arguments"
    assert call_tool(ctx, "hive_create", {"title": "x", "bogus": 1})["field"] == "bogus"
    assert call_tool(ctx, 42, {})["code"] == "unknown_tool"  # type: ignore[arg-type]


def test_an_unknown_tool_names_the_one_meant(ws: Workspace, repo: Path) -> None:
    """A misspelt tool name is answered as a misspelt argument is: with the name meant."""
    ctx = CallContext(root=str(repo), agent="carol")
    typo = call_tool(ctx, "hive_redy", {})
    assert typo["code"] == "unknown_tool"
    assert typo["error"].startswith("unknown tool 'hive_redy'; did you mean 'hive_ready'? ")
    assert call_tool(ctx, "HIVE-READY", {})["error"].count("did you mean 'hive_ready'?") == 1
    unlike = call_tool(ctx, "zzzz", {})["error"]
    assert "did you mean" not in unlike and "known tools: context_search, " in unlike


def test_mcp_server_end_to_end_over_stdio(ws: Workspace, repo: Path) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hive", "-C", str(repo), "--actor", "mcp-agent", "mcp"],  # as agents run it
        env={**os.environ},
    )

    async def scenario() -> dict[str, Any]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            created = await session.call_tool("hive_create", {"title": "via mcp", "priority": 0})
            ready = await session.call_tool("hive_ready", {"limit": 3})
            bad = await session.call_tool("hive_create", {"priority": "high"})
            hidden = await session.call_tool("hive_create", {"title": "t", "labels": ["a\u202e"]})
            unknown = await session.call_tool("nope", {})
            saved = await _saved_for_head(repo)  # while the server still runs
            return {
                "saved": saved,
                "names": {t.name for t in listed.tools},
                "schemas": {t.name: t.input_schema for t in listed.tools},
                "created": created,
                "ready": ready,
                "bad": bad,
                "hidden": hidden,
                "unknown": unknown,
            }

    outcome = anyio.run(scenario)
    assert outcome["names"] >= SEED_TOOLS
    # the official client lists the lean schemas (tests/test_tool_schema_budget.py)
    assert outcome["schemas"] == {t.name: input_schema(t) for t in tools()}
    created = json.loads(outcome["created"].content[0].text)
    assert not outcome["created"].is_error and created["title"] == "via mcp"
    ready = json.loads(outcome["ready"].content[0].text)
    assert ready[0]["id"] == created["id"]
    assert outcome["bad"].is_error
    assert json.loads(outcome["bad"].content[0].text)["code"] == "invalid_arguments"
    # a label holding a right-to-left override: refused, naming it (the same error as
    # the envelope's and the command line's, tests/test_hidden_characters.py)
    hidden = json.loads(outcome["hidden"].content[0].text)
    assert outcome["hidden"].is_error and hidden["code"] == "invalid_input"
    assert (hidden["character"], hidden["position"]) == ("U+202E", 2)
    assert outcome["unknown"].is_error
    assert git(repo, "log", "-1", "--format=%an").strip() == "mcp-agent"
    assert outcome["saved"], "the server's write is in the state index before it answers"


async def _saved_for_head(repo: Path) -> bool:
    """Whether the state index knows HEAD's state (no waiting: the writer records it)."""
    import sqlite3

    head = git(repo, "rev-parse", "HEAD").strip()
    cells = git(repo, "rev-parse", "HEAD:.hive/cells").strip()
    db = sqlite3.connect(repo / ".git" / "hive" / "index.sqlite3")
    try:
        known = db.execute("SELECT cells FROM commits WHERE commit_id = ?", (head,)).fetchone()
        built = db.execute("SELECT 1 FROM states WHERE key = ?", (cells,)).fetchone()
    finally:
        db.close()
    return known == (cells,) and built is not None


def test_mcp_starts_without_the_full_cli_and_refuses_alike(ws: Workspace, repo: Path) -> None:
    """``hive mcp`` from the console script serves without the full CLI (typer and its
    command tree: a third of a start), and makes the tool list (every operation module,
    every schema) only when a client asks for it; a refusal before serving reads the
    same on both paths, and any other form (``--help``, a typo) is the full CLI's."""
    watched = ("hive.cli.main", "typer", "rich", "hive.ops.catalog")
    served = console_probe(repo, ["mcp", "--agent=probe", "--context", "."], watched)
    assert served.stdout.strip().splitlines()[-1] == "0 []", served.stdout + served.stderr
    assert "Traceback" not in served.stderr
    for args in (["mcp", "--context", "nope"], ["--json", "mcp", "--context=nope"]):
        lean = run_hive(["-C", str(repo), *args])
        full = run_hive(["-C", str(repo), *args], module="hive.cli.main")
        assert (lean.returncode, lean.stdout, lean.stderr) == (
            full.returncode,
            full.stdout,
            full.stderr,
        )
        assert lean.returncode == 2 and lean.stderr == "error: --context nope: not a directory\n"
    assert json.loads(lean.stdout)["code"] == "invalid_input"
    for args in (["mcp", "--help"], ["mcp", "--agent", "a", "--agent", "b", "--help"]):
        helped = run_hive(["-C", str(repo), *args])
        assert helped.returncode == 0 and "Usage: hive mcp" in helped.stdout
    typo = run_hive(["-C", str(repo), "mcp", "--agnet", "x"])
    assert typo.returncode == 2 and "No such option: --agnet" in typo.stderr


def test_mcp_outside_a_repository_completes_the_handshake_and_names_the_directory(
    tmp_path: Path,
) -> None:
    """``hive mcp`` outside a git repository exited before the handshake: the client saw
    the connection drop. It serves: the handshake completes, the tools are listed, and
    every call is answered ``not_a_git_repository`` naming the directory."""
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    plain = tmp_path / "plain"
    plain.mkdir()
    assert subprocess.run(["git", "-C", str(plain), "rev-parse"], capture_output=True).returncode
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "hive", "-C", str(plain), "mcp"], env={**os.environ}
    )

    async def scenario() -> tuple[Any, ...]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            listed = await session.list_tools()
            calls = [
                await session.call_tool(name, args)
                for name, args in (("hive_ready", {}), ("swarmmail_init", {"agent_name": "a"}))
            ]
            return listed, calls

    listed, calls = anyio.run(scenario)
    assert {tool.name for tool in listed.tools} >= {"hive_ready", "swarmmail_init"}
    for answer in calls:
        assert answer.is_error and answer.structured_content is not None, answer
        assert answer.structured_content["code"] == "not_a_git_repository"
        assert str(plain) in answer.structured_content["error"]
    assert not list(plain.iterdir())  # nothing made there
    other = run_hive(["-C", str(plain), "list"])  # the other commands: the plain exit
    assert other.returncode == 2 and "not inside a git repository" in other.stderr
