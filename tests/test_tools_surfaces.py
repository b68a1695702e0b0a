"""Tool coverage of the CLI, hostile input on every surface, the event log."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from hive.domain import governance
from hive.domain.workspace import Workspace
from hive.tools.envelope import MAX_ENVELOPE, parse_envelope
from hive.tools.registry import CallContext, call_tool
from tests.conftest import at_a_terminal, git
from tests.hivefork import hive_command
from tests.inprocess import fork_hive
from tests.test_tools import arbiter, envelope, hive


def test_tools_cover_deps_reopen_delete_log_review_and_insights(ws: Workspace, repo: Path) -> None:
    ctx = CallContext(root=str(repo), agent="bob")
    a = call_tool(ctx, "hive_create", {"title": "a"})["result"]["id"]
    b = call_tool(ctx, "hive_create", {"title": "b"})["result"]["id"]
    added = call_tool(ctx, "hive_dep", {"id": a, "action": "add", "target": b})["result"]
    assert added["dependencies"][0]["target"] == b
    tree = call_tool(ctx, "hive_dep", {"id": a})["result"]
    assert b in json.dumps(tree)
    assert call_tool(ctx, "hive_dep", {"id": a, "action": "add"})["field"] == "target"
    removed = call_tool(ctx, "hive_dep", {"id": a, "action": "remove", "target": b})["result"]
    assert removed["dependencies"] == []
    # a related link and a blocker to one cell: removing the link keeps the blocker
    for kind in ("related", "blocks"):
        call_tool(ctx, "hive_dep", {"id": a, "action": "add", "target": b, "type": kind})
    unlink = {"id": a, "action": "remove", "target": b, "type": "related"}
    kept = call_tool(ctx, "hive_dep", unlink)["result"]["dependencies"]
    assert kept == [{"type": "blocks", "target": b}]
    assert call_tool(ctx, "hive_dep", unlink)["code"] == "not_found"
    removed = call_tool(ctx, "hive_dep", {"id": a, "action": "remove", "target": b})["result"]
    assert removed["dependencies"] == []
    # the tree's options are refused with add/remove, not ignored: reverse with add
    # would otherwise add the edge the agent meant the other way round
    for option in ({"reverse": True}, {"direction": "up"}):
        flipped = call_tool(ctx, "hive_dep", {"id": b, "action": "add", "target": a, **option})
        assert flipped["code"] == "invalid_input" and flipped["field"] in option, flipped
        assert "swap id and target" in flipped["error"]
    assert call_tool(ctx, "hive_query", {"id": b})["result"]["dependencies"] == []
    update = {"id": a, "type": "bug", "add_labels": ["x"], "files": ["src/**"]}
    assert call_tool(ctx, "hive_update", update)["result"]["type"] == "bug"
    updated = call_tool(ctx, "hive_query", {"id": a})["result"]
    assert (updated["type"], updated["labels"], updated["files_owned"]) == (
        "bug",
        ["x"],
        ["src/**"],
    )
    call_tool(ctx, "hive_close", {"id": b})
    assert call_tool(ctx, "hive_reopen", {"id": b})["result"]["status"] == "open"
    assert "result" in call_tool(ctx, "hive_delete", {"id": b})
    listed = {c["id"] for c in call_tool(ctx, "hive_query", {"status": "all"})["result"]}
    assert b not in listed
    query = {"status": "all", "include_deleted": True}
    assert b in {c["id"] for c in call_tool(ctx, "hive_query", query)["result"]}
    log = call_tool(ctx, "hive_log", {"id": a})["result"]
    assert log and all(a in entry["cells"] for entry in log)
    assert call_tool(ctx, "hive_review", {"id": a})["result"]["target"] == a
    assert "result" in call_tool(ctx, "swarm_insights", {})
    assert git(repo, "log", "-1", "--format=%an").strip() == "bob"


def test_strict_types_and_bounded_lists(ws: Workspace, repo: Path) -> None:
    ctx = CallContext(root=str(repo), agent="bob")
    assert call_tool(ctx, "swarmmail_read_message", {"message_id": True})["field"] == "message_id"
    assert call_tool(ctx, "hive_create", {"title": "t", "priority": "1"})["field"] == "priority"
    labels = call_tool(ctx, "hive_create", {"title": "t", "labels": ["l" * 100] * 1000})
    assert labels["code"] == "invalid_arguments" and labels["field"] == "labels"
    long_label = call_tool(ctx, "hive_create", {"title": "t", "labels": ["l" * 1000]})
    assert long_label["field"] == "labels.0"
    union = call_tool(ctx, "swarm_validate_decomposition", {"response": 5})
    assert union["field"] == "response"


def test_a_misnamed_or_null_argument_says_what_to_send(ws: Workspace, repo: Path) -> None:
    """An LLM's camelCase, near-miss and null arguments get the name it meant (or the
    way out), not only pydantic's verdict; the field stays the one sent."""
    ctx = CallContext(root=str(repo), agent="bob")
    camel = call_tool(ctx, "swarmmail_reserve", {"paths": ["a"], "ttlSeconds": 60})
    assert camel["field"] == "ttlSeconds" and "did you mean 'ttl_seconds'?" in camel["error"]
    assert "its arguments: paths, reason, exclusive, ttl_seconds" in camel["error"]
    near = call_tool(ctx, "hive_update", {"id": "x", "labels": ["l"]})
    assert "did you mean 'add_labels'?" in near["error"]
    alias = call_tool(ctx, "delegate_task", {"targetAgent": "a", "taskPayload": {}, "time_out": 5})
    assert "did you mean 'timeout'?" in alias["error"]
    unrelated = call_tool(ctx, "swarmmail_send", {"to": ["a"], "subject": "s", "message": "m"})
    assert "did you mean" not in unrelated["error"] and "body" in unrelated["error"]
    missing = call_tool(ctx, "swarm_complete", {"cellId": "hv-1", "summary": "done"})
    assert missing["field"] == "cell_id" and "(given as 'cellId')" in missing["error"]
    null = call_tool(ctx, "hive_create", {"title": "t", "description": None})
    assert null["field"] == "description" and "leave the argument out" in null["error"]
    wrong = call_tool(ctx, "hive_create", {"title": "t", "priority": "1"})
    assert "Input should be a valid integer; send a whole number without quotes" in wrong["error"]


def test_a_wrongly_typed_argument_says_how_to_write_it(ws: Workspace, repo: Path) -> None:
    """The usual slips of an LLM (one path for a list, text for a boolean or an
    object, a fraction for a count) get the form to send, not only pydantic's verdict."""
    ctx = CallContext(root=str(repo), agent="bob")
    one = call_tool(ctx, "swarmmail_reserve", {"paths": "src/a.py"})
    assert one["field"] == "paths" and 'send a list, even of one: ["src/a.py"]' in one["error"]
    flag = call_tool(ctx, "swarmmail_reserve", {"paths": ["a"], "exclusive": "true"})
    assert flag["field"] == "exclusive" and "send true or false without quotes" in flag["error"]
    payload = call_tool(ctx, "coord_enqueue", {"kind": "k", "payload": "do it"})
    assert payload["field"] == "payload" and "send a JSON object" in payload["error"]
    fraction = call_tool(ctx, "hive_ready", {"limit": 2.5})
    assert fraction["field"] == "limit" and "send a whole number" in fraction["error"]
    # an argument of several forms: every form, not only the first one pydantic tried
    strategy = call_tool(ctx, "swarm_plan_prompt", {"task": "t", "strategy": "weird"})
    assert strategy["error"].endswith(
        "Input should be 'file-based', 'feature-based', 'risk-based', 'research-based' or 'auto'"
    )
    response = call_tool(ctx, "swarm_validate_decomposition", {"response": 5})
    assert response["error"].endswith("Input should be a valid string or a valid dictionary")


def test_a_list_or_object_sent_as_a_json_string_is_told_to_send_it_itself(
    ws: Workspace, repo: Path
) -> None:
    """An LLM often sends a nested list or object as a string holding its JSON. The hint
    said to wrap that string in a list (`["[{\"title\": ...}]"]`), which fails again;
    nor is one string a list of one where the items are objects or numbers."""
    ctx = CallContext(root=str(repo), agent="bob")
    subtasks = json.dumps([{"title": "a"}])
    epic = call_tool(ctx, "hive_create_epic", {"epic_title": "E", "subtasks": subtasks})
    assert epic["field"] == "subtasks" and "even of one" not in epic["error"]
    assert epic["error"].endswith("send the list itself as JSON, not a string holding it")
    todos = call_tool(ctx, "todo_write", {"todos": "write tests"})
    assert "even of one" not in todos["error"] and "send a JSON list ([...])" in todos["error"]
    ids = call_tool(ctx, "swarmmail_release", {"reservation_ids": "3"})
    assert "even of one" not in ids["error"], ids
    payload = call_tool(ctx, "coord_enqueue", {"kind": "k", "payload": '{"dir": "docs"}'})
    assert payload["error"].endswith("send the object itself as JSON, not a string holding it")
    paths = call_tool(ctx, "swarmmail_reserve", {"paths": '["src/a.py"]'})
    assert paths["error"].endswith("send the list itself as JSON, not a string holding it")
    again = call_tool(
        ctx, "hive_create_epic", {"epic_title": "E", "subtasks": json.loads(subtasks)}
    )
    assert "error" not in again, again


def test_an_error_a_tool_call_can_force_past_names_the_argument(ws: Workspace, repo: Path) -> None:
    """A blocked cell, an epic with open subtasks and a cell with subtasks said 'use
    --force' to an agent, whose tool has no such flag; resolve said '--use-other'. The
    tool's argument is named now (the flag beside it, for a person)."""
    ctx = CallContext(root=str(repo), agent="bob")
    blocker = call_tool(ctx, "hive_create", {"title": "blocker"})["result"]["id"]
    waiting = call_tool(ctx, "hive_create", {"title": "waiting", "deps": [blocker]})["result"]
    epic = call_tool(ctx, "hive_create_epic", {"epic_title": "E", "subtasks": [{"title": "a"}]})
    epic_id = epic["result"][0]["id"]
    refusals = [
        call_tool(ctx, "hive_close", {"id": waiting["id"]}),
        call_tool(ctx, "hive_close", {"id": epic_id}),
        call_tool(ctx, "hive_delete", {"id": epic_id}),
    ]
    for refused in refusals:
        assert "override with force (--force" in refused["error"], refused
    other = call_tool(ctx, "hive_resolve", {"id": blocker, "use_other": True})
    assert other["field"] == "field" and other["error"].startswith("use_other (--use-other)")
    forced = call_tool(ctx, "hive_close", {"id": waiting["id"], "force": True})
    assert forced["result"]["status"] == "closed"


def test_a_conflict_over_files_or_a_lease_names_the_way_on(ws: Workspace, repo: Path) -> None:
    """A reservation conflict said only who held the files until when, and a queue item
    leased to another only that the holder may claim it: an agent was left to guess
    whether anything was reserved and what to do next."""
    alice, bob = (CallContext(root=str(repo), agent=name) for name in ("alice", "bob"))
    for ctx, name in ((alice, "alice"), (bob, "bob")):
        call_tool(ctx, "swarmmail_init", {"agent_name": name})
    call_tool(alice, "swarmmail_reserve", {"paths": ["src/**"]})
    refused = call_tool(bob, "swarmmail_reserve", {"paths": ["docs/a.md", "src/a.py"]})
    assert refused["code"] == "reservation_conflict"
    assert refused["error"].endswith(
        "; nothing was reserved: ask alice to release it (a message), wait until it"
        " expires, or reserve other files"
    )
    assert call_tool(bob, "swarmmail_reservations", {"agent": "bob"})["result"] == []
    item = call_tool(alice, "coord_enqueue", {"kind": "k", "payload": {}})["result"]["id"]
    call_tool(alice, "coord_claim", {"id": item})
    taken = call_tool(bob, "coord_claim", {"id": item})
    assert taken["code"] == "already_claimed" and "take the next item instead" in taken["error"]
    call_tool(alice, "coord_complete", {"id": item})
    done = call_tool(bob, "coord_claim", {"id": item})
    assert done["error"].endswith("is already done: take the next item"), done


def test_a_message_that_reaches_nobody_names_the_coordinator_alias(
    ws: Workspace, repo: Path
) -> None:
    """A worker asking a question on its epic's thread before anyone else worked there
    was told only to give 'to'; 'coordinator' (the epic's coordinator) is what it
    wants. swarm_progress, which has no 'to', said the same about its own report."""
    alice, bob = (CallContext(root=str(repo), agent=name) for name in ("alice", "bob"))
    for ctx, name in ((alice, "alice"), (bob, "bob")):
        call_tool(ctx, "swarmmail_init", {"agent_name": name})
    plan = {"epic_title": "E", "subtasks": [{"title": "a"}]}
    epic = call_tool(alice, "hive_create_epic", plan)["result"][0]["id"]
    question = {"subject": "which db?", "body": "?", "thread_id": epic}
    refused = call_tool(bob, "swarmmail_send", question)
    assert refused["code"] == "invalid_input"
    assert "'coordinator' reaches the coordinator of the epic" in refused["error"]
    sent = call_tool(bob, "swarmmail_send", {**question, "to": ["coordinator"]})["result"]
    assert sent["recipients"] == ["alice"]
    lone = call_tool(bob, "hive_create", {"title": "mine"})["result"]["id"]
    call_tool(bob, "hive_start", {"id": lone})
    report = call_tool(bob, "swarm_progress", {"cell_id": lone, "status": "in_progress"})
    assert report["result"]["not_posted"] == (
        f"nobody to tell: nobody else works on thread {lone} (coordinator not registered:"
        " none known)"
    )


def test_a_whole_number_written_as_a_float_is_an_integer(ws: Workspace, repo: Path) -> None:
    """JSON Schema's ``integer`` (the schemas' type; the seeds say ``number``) admits
    ``5.0`` and ``1e3``, which a JSON parser gives as floats: taken as the integers they
    are, at the top level and inside lists; a fraction is still refused."""
    ctx = CallContext(root=str(repo), agent="bob")
    for title in ("a", "b", "c"):
        call_tool(ctx, "hive_create", {"title": title, "priority": 1.0})
    page = call_tool(ctx, "hive_ready", {"limit": 2.0})
    assert len(page["result"]) == 2
    created = call_tool(ctx, "hive_create", {"title": "d", "priority": 1e0})["result"]
    assert created["priority"] == 1
    call_tool(ctx, "swarmmail_init", {"agent_name": "bob"})
    granted = call_tool(ctx, "swarmmail_reserve", {"paths": ["x.py"], "ttl_seconds": 6e1})
    held = granted["result"]["granted"][0]
    assert held["id"] == 1
    released = call_tool(ctx, "swarmmail_release", {"reservation_ids": [1.0]})
    assert [r["id"] for r in released["result"]["released"]] == [1]
    outcome = {"cell_id": created["id"], "duration_ms": 1.2e6, "success": True}
    recorded = call_tool(ctx, "swarm_record_outcome", outcome)["result"]
    assert recorded["duration_seconds"] == 1200.0
    assert call_tool(ctx, "hive_ready", {"limit": 2.5})["code"] == "invalid_arguments"
    # the seed's duration_ms is a number, as performance.now() differences are
    timed = {"cell_id": created["id"], "duration_ms": 1234.5, "success": True}
    assert call_tool(ctx, "swarm_record_outcome", timed)["result"]["duration_seconds"] == 1.2345
    endless = call_tool(ctx, "swarm_record_outcome", {**timed, "duration_ms": float("inf")})
    assert endless["field"] == "duration_ms" and "finite" in endless["error"]
    flag = call_tool(ctx, "hive_ready", {"limit": True})  # a boolean is no number
    assert flag["code"] == "invalid_arguments"


def test_deep_nesting_is_a_structured_error_everywhere(ws: Workspace, repo: Path) -> None:
    ctx = CallContext(root=str(repo), agent="bob")
    deep: Any = []
    for _ in range(1200):
        deep = [deep]
    outcome = call_tool(ctx, "hive_create", {"title": "t", "labels": deep})
    assert outcome["code"] == "invalid_arguments" and "nested" in outcome["error"]
    text = '{"tool_calls":[{"name":"hive_ready","args":{"a":' + "[" * 5000 + "]" * 5000 + "}}]}"
    result = hive(repo, "tools", "run", stdin=text)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert json.loads(result.stdout)["code"] == "invalid_envelope"
    fenced = "see:\n```json\n" + text + "\n```\n"
    assert json.loads(hive(repo, "tools", "run", stdin=fenced).stdout)["code"] == (
        "invalid_envelope"
    )


def test_the_envelope_scan_is_bounded(ws: Workspace, repo: Path) -> None:
    hostile = ('{"a":"' + "x" * 100) * (MAX_ENVELOPE // 110)
    started = time.process_time()  # CPU: the work, not the wait for a core
    try:
        parse_envelope(hostile)
    except Exception as exc:
        assert "no tool-call envelope" in str(exc)
    assert time.process_time() - started < 5


def test_a_second_envelope_is_reported(ws: Workspace, repo: Path) -> None:
    one = json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}]})
    two = json.dumps({"tool_calls": [{"name": "hive_create", "args": {"title": "second"}}]})
    text = f"First:\n```json\n{one}\n```\nThen:\n```json\n{two}\n```\n"
    transcript = json.loads(hive(repo, "tools", "run", "--agent", "bob", stdin=text).stdout)
    assert [r["name"] for r in transcript["results"]] == ["hive_ready"]
    assert "1 more tool-call envelope" in transcript["warnings"][0]


OPENING = [  # a raw client's first two lines to hive mcp
    json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
    ),
    json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}),
]


def test_mcp_answers_malformed_json_rpc(ws: Workspace, repo: Path) -> None:
    deep = '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hive_ready",'
    deep += '"arguments":{"a":' + "[" * 1100 + "]" * 1100 + "}}}"
    lines = [
        *OPENING,
        "{not json",
        deep,
        json.dumps({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}),
    ]
    replies = _exchange(repo, lines, last_id=9)
    errors = [r for r in replies if "error" in r]
    assert [(e["id"], e["error"]["code"]) for e in errors] == [(None, -32700), (7, -32700)]
    assert any(r.get("id") == 9 and "tools" in r["result"] for r in replies)


def test_mcp_names_what_is_wrong_with_a_tool_call_s_params(ws: Workspace, repo: Path) -> None:
    """A tools/call whose arguments are a list or whose name is missing got the SDK's
    bare "Invalid request parameters": the answer now says which and how to send it."""
    calls = [
        {"name": "hive_ready", "arguments": ["limit", 5]},
        {"arguments": {}},
        {"name": "hive_ready"},
    ]
    lines = [
        *OPENING,
        *(
            json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": params})
            for n, params in enumerate(calls, start=2)
        ),
    ]
    replies = {r.get("id"): r for r in _exchange(repo, lines, last_id=4)}
    listed = replies[2]["error"]
    assert listed["code"] == -32602
    assert listed["message"].startswith(
        "Invalid params of tools/call: 'arguments' must be a JSON object, not a list; send"
        ' {"name": "hive_ready", "arguments": {"limit": 5}}'
    )
    nameless = replies[3]["error"]["message"]
    assert "'name' must be a tool's name (a string), not null" in nameless
    assert replies[4]["result"]["isError"] is False  # no arguments: the defaults


def test_events_tail_follow_and_rotation(ws: Workspace, repo: Path) -> None:
    envelope(repo, [{"name": "hive_ready", "args": {}}] * 3)
    tail = json.loads(hive(repo, "events", "--json", "-n", "2").stdout)
    assert len(tail) == 2 and tail[-1]["tool"] == "hive_ready"
    command = [
        sys.executable,
        "-m",
        "hive.cli.main",
        "-C",
        str(repo),
        "events",
        "--json",
        "-n",
        "1",
        "--follow",
    ]
    follower = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert follower.stdout is not None
        first = json.loads(follower.stdout.readline())
        assert first["tool"] == "hive_ready"
        envelope(repo, [{"name": "hive_query", "args": {"limit": 1}}])
        appended = json.loads(follower.stdout.readline())
        assert appended["tool"] == "hive_query"
    finally:
        follower.kill()
        follower.wait()
    state = str(repo / ".git" / "hive")
    for number in range(50):
        governance.log_event(state, {"n": number, "pad": "x" * 100}, max_bytes=2000)
    assert os.path.getsize(os.path.join(state, "events.jsonl")) <= 2200
    assert os.path.exists(os.path.join(state, "events.jsonl.1"))
    assert governance.read_events(state, 1)[0]["n"] == 49


def test_events_of_an_empty_log_say_so_in_words_or_as_an_empty_list(
    ws: Workspace, repo: Path
) -> None:
    """No tool calls yet: one line saying so (it printed nothing); --json printed
    nothing at all, which no JSON reader takes: it is ``[]``, as every command that
    answers once prints its list (JSON lines only for --follow, a stream)."""
    plain = hive(repo, "events")
    assert (plain.returncode, plain.stdout, plain.stderr) == (0, "no tool calls recorded yet\n", "")
    empty = hive(repo, "events", "--json")
    assert (empty.returncode, json.loads(empty.stdout), empty.stderr) == (0, [], "")
    envelope(repo, [{"name": "hive_ready", "args": {}}])
    shown = hive(repo, "events").stdout
    assert "hive_ready" in shown and "no tool calls" not in shown


def test_events_show_lines_hive_did_not_write(ws: Workspace, repo: Path) -> None:
    """A log line with other types than hive writes (by hand, by another program) is
    shown as written, in both forms: ``hive events`` ended in an internal error
    (exit 70) and pydantic's serializer warnings on stderr."""
    envelope(repo, [{"name": "hive_ready", "args": {}}])
    with open(repo / ".git" / "hive" / "events.jsonl", "a") as log:
        log.write('{"ts": "yesterday", "tool": 5, "duration_ms": "slow", "agent": ["a"]}\n')
        log.write('{"ts": 1e300, "tool": "hive_ready", "outcome": "ok"}\n')
    table = hive(repo, "events", "-n", "3")
    assert table.returncode == 0 and table.stderr == "", table
    lines = table.stdout.splitlines()
    assert len(lines) == 3 and "hive_ready" in lines[0], lines
    assert lines[1].startswith("--:--:--  ['a']") and " 5 " in lines[1], lines
    assert lines[2].startswith("--:--:--  -") and "hive_ready" in lines[2], lines
    as_json = hive(repo, "events", "--json", "-n", "2")
    assert as_json.returncode == 0 and as_json.stderr == "", as_json
    assert json.loads(as_json.stdout)[0] == {
        "ts": "yesterday",
        "tool": 5,
        "duration_ms": "slow",
        "agent": ["a"],
    }


def test_reading_a_terminal_says_so(ws: Workspace, repo: Path) -> None:
    """``hive tools run`` and ``hive proposals decide`` read standard input; at a
    terminal they waited without a word (``hive create --from -`` says it reads)."""
    said, out, code = at_a_terminal(
        repo, ["tools", "run"], b'{"tool_calls": [{"name": "hive_ready", "args": {}}]}'
    )
    assert said.startswith("reading a tool-call envelope"), said
    assert code == 0 and json.loads(out)["results"][0]["name"] == "hive_ready"
    decision = b'{"decisions": [{"path": "x.md", "action": "reject"}]}'
    said, out, code = at_a_terminal(repo, ["proposals", "decide"], decision)
    assert said.startswith("reading the decisions from standard input (Ctrl-D ends)"), said
    assert code == 3 and "no_pending_proposal" in out, out  # it read what was typed


def test_decide_reject_unknown_paths_and_applies_once(ws: Workspace, repo: Path) -> None:
    envelope(
        repo,
        [
            {"name": "fs_write", "args": {"path": "a.txt", "content": "A"}},
            {"name": "fs_write", "args": {"path": "b.txt", "content": "B"}},
        ],
    )
    reject = json.dumps({"decisions": [{"path": "b.txt", "action": "reject"}]})
    rejected = arbiter(repo, "--json", "proposals", "decide", "-", stdin=reject)
    assert json.loads(rejected.stdout)[0]["status"] == "rejected"
    unknown = json.dumps({"decisions": [{"path": "zz.txt", "action": "reject"}]})
    missing = arbiter(repo, "proposals", "decide", "-", stdin=unknown)
    assert missing.returncode == 3 and "no pending proposal for zz.txt" in missing.stderr
    approve = json.dumps({"decisions": [{"path": "a.txt", "action": "approve"}]})
    command = ["-C", str(repo), "--json", "proposals", "decide", "-", "--allow-write"]
    racers = [fork_hive(command, input=approve, module="hive.cli.main") for _ in range(2)]
    outputs = [r.communicate(timeout=120)[0] for r in racers]
    statuses = [e["status"] for out in outputs if out.strip() for e in json.loads(out)]
    assert statuses.count("applied") == 1
    assert (repo / "a.txt").read_text() == "A" and not (repo / "b.txt").exists()
    for malformed in ('{"decisions": []}', '[{"path": "a.txt"}]', '{"decisions": [{"path":'):
        bad = arbiter(repo, "proposals", "decide", "-", stdin=malformed)
        assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_an_approved_proposal_decided_again_with_allow_write_is_written(
    ws: Workspace, repo: Path
) -> None:
    """Approved without --allow-write, then the same decision with it: the write is
    applied (it answered 'no pending proposal', exit 3, and left the file unwritten)."""
    envelope(
        repo,
        [
            {"name": "fs_write", "args": {"path": "a.txt", "content": "A"}},
            {"name": "fs_write", "args": {"path": "b.txt", "content": "B"}},
        ],
    )
    both = json.dumps(
        {
            "decisions": [
                {"path": "a.txt", "action": "approve"},
                {"path": "b.txt", "action": "approve"},
            ]
        }
    )
    first = arbiter(repo, "--json", "proposals", "decide", "-", stdin=both)
    assert [e["status"] for e in json.loads(first.stdout)] == ["approved", "approved"], first
    assert not (repo / "a.txt").exists() and not (repo / "b.txt").exists()
    again = json.dumps({"decisions": [{"path": "a.txt", "action": "approve"}]})
    applied = arbiter(repo, "--json", "proposals", "decide", "-", "--allow-write", stdin=again)
    assert applied.returncode == 0, applied
    assert [e["status"] for e in json.loads(applied.stdout)] == ["applied"]
    assert (repo / "a.txt").read_text() == "A"
    withdraw = json.dumps({"decisions": [{"path": "b.txt", "action": "reject"}]})
    rejected = arbiter(repo, "--json", "proposals", "decide", "-", "--allow-write", stdin=withdraw)
    assert [e["status"] for e in json.loads(rejected.stdout)] == ["rejected"], rejected
    late = hive(repo, "tools", "run", "--allow-write", stdin='{"tool_calls": []}')
    assert "applied" not in json.loads(late.stdout) or not json.loads(late.stdout)["applied"]
    assert not (repo / "b.txt").exists()
    listed = json.loads(hive(repo, "--json", "proposals", "list").stdout)
    assert sorted((p["path"], p["status"]) for p in listed) == [
        ("a.txt", "applied"),
        ("b.txt", "rejected"),
    ]


def test_allow_write_with_a_broken_config_still_prints_the_transcript(
    ws: Workspace, repo: Path
) -> None:
    from tests.test_tools import configure

    envelope(repo, [{"name": "fs_write", "args": {"path": "a.txt", "content": "A"}}])
    approve = json.dumps({"decisions": [{"path": "a.txt", "action": "approve"}]})
    arbiter(repo, "proposals", "decide", "-", stdin=approve)
    configure(repo, {"permissions": {"*": {"*": {"deny": ["a.txt"]}}}})
    result = hive(repo, "tools", "run", "--allow-write", stdin='{"tool_calls": []}')
    transcript = json.loads(result.stdout)
    assert transcript["applied"] == [] and transcript["apply_error"]["code"] == "invalid_input"
    assert not (repo / "a.txt").exists()


def _exchange(repo: Path, lines: list[str], *, last_id: int) -> list[dict[str, Any]]:
    """Send raw lines to ``hive mcp`` and read replies until the one for ``last_id``."""
    server = subprocess.Popen(
        hive_command(["-C", str(repo), "--actor", "raw", "mcp"]),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write("\n".join(lines) + "\n")
    server.stdin.flush()
    replies: list[dict[str, Any]] = []
    timer = threading.Timer(60, server.kill)
    timer.start()
    try:
        for line in server.stdout:
            replies.append(json.loads(line))
            if replies[-1].get("id") == last_id:
                break
    finally:
        timer.cancel()
        server.stdin.close()
        server.wait(timeout=120)
    return replies
