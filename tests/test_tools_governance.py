"""Governance of tool calls: the tools: config, allowlists, hooks, rate limits."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from hive.domain.workspace import Workspace
from tests.conftest import agent_env, git
from tests.hivefork import mcp_server
from tests.inprocess import fork_hive
from tests.test_tools import configure, envelope, hive


def _events(repo: Path) -> list[dict[str, object]]:
    events: list[dict[str, object]] = json.loads(hive(repo, "events", "--json", "-n", "200").stdout)
    return events


def test_a_misspelt_config_key_fails_closed_and_doctor_reports_it(
    ws: Workspace, repo: Path
) -> None:
    configure(repo, {"permissions": {"*": {"*": {"deny_paths": ["README.md"]}}}})
    result = envelope(repo, [{"name": "fs_read", "args": {"path": "README.md"}}])["results"][0]
    assert result["code"] == "invalid_input"
    assert "tools.permissions.*.*.deny_paths" in result["error"]
    doctor = hive(repo, "--json", "doctor")
    assert "deny_paths" in doctor.stdout


def test_bad_config_types_name_the_key(ws: Workspace, repo: Path) -> None:
    for config, key in (
        ({"rate_limits": {"fs_read": {"capacity": "abc"}}}, "tools.rate_limits.fs_read.capacity"),
        (
            {"permissions": {"*": {"*": {"denied_paths": "secrets/**"}}}},
            "tools.permissions.*.*.denied_paths",
        ),
        (
            {"permissions": {"*": {"*": {"denied_paths": ["/etc/**"]}}}},
            "tools.permissions.*.*.denied_paths",
        ),
        (
            {"hooks": {"pre_tool_use": [{"matcher": "(", "command": "true"}]}},
            "tools.hooks.pre_tool_use.0.matcher",
        ),
    ):
        configure(repo, config)
        result = envelope(repo, [{"name": "hive_ready", "args": {}}])["results"][0]
        assert result["code"] == "invalid_input" and key in result["error"], result


def test_a_bucket_too_small_for_one_call_is_refused_as_config(ws: Workspace, repo: Path) -> None:
    """``capacity: 0.5`` never holds a whole token: every call was refused for good as
    ``rate_limited`` (with a ``reset_sec`` that never came). It is a config error."""
    configure(repo, {"rate_limits": {"hive_stats": {"capacity": 0.5, "per_seconds": 1}}})
    result = envelope(repo, [{"name": "hive_stats", "args": {}}])["results"][0]
    assert result["code"] == "invalid_input", result
    assert "tools.rate_limits.hive_stats.capacity" in result["error"], result
    assert hive(repo, "doctor").returncode == 1


def _config_with(repo: Path, base: str, section: str) -> int:
    """Commit the config ``base`` + ``section`` (YAML text); the line the section starts on."""
    (repo / ".hive" / "config.yaml").write_text(base + section)
    git(repo, "commit", "-qam", "config section")
    return base.count("\n") + 1


def test_bad_config_sections_name_their_line(ws: Workspace, repo: Path) -> None:
    """A bad ``tools:``, ``agents:`` or ``permission_policy:`` entry is refused with the
    line it is on, as a bad ``verify:`` entry is: by tool calls, by doctor, by a reserve."""
    base = (repo / ".hive" / "config.yaml").read_text()
    start = _config_with(repo, base, "tools:\n  rate_limits:\n    fs_read:\n      capacity: abc\n")
    result = envelope(repo, [{"name": "hive_ready", "args": {}}])["results"][0]
    assert result["code"] == "invalid_input", result
    assert result["error"].startswith(
        f".hive/config.yaml:{start + 3}: tools.rate_limits.fs_read.capacity: "
    ), result
    assert result["line"] == start + 3 and result["path"] == ".hive/config.yaml"
    doctor = hive(repo, "doctor")
    assert doctor.returncode == 1
    assert f".hive/config.yaml:{start + 3}: tools.rate_limits.fs_read.capacity" in doctor.stdout

    section = "tools:\n  permissions:\n    '*':\n      '*':\n        denied_paths: ['/etc/**']\n"
    start = _config_with(repo, base, section)
    reserve = hive(repo, "reserve", "src/**")
    assert reserve.returncode == 2, reserve.stderr
    assert f".hive/config.yaml:{start + 4}: tools.permissions.*.*.denied_paths" in reserve.stderr

    start = _config_with(repo, base, "agents:\n  alice:\n    tool_call_limit: many\n")
    result = envelope(repo, [{"name": "hive_ready", "args": {}}], agent="alice")["results"][0]
    assert f".hive/config.yaml:{start + 2}: agents.alice.tool_call_limit: " in result["error"]

    start = _config_with(repo, base, "permission_policy:\n  default: maybe\n")
    doctor = hive(repo, "doctor")
    assert f".hive/config.yaml:{start + 1}: permission_policy.default: " in doctor.stdout


def test_doctor_reports_what_fails_every_tool_call(ws: Workspace, repo: Path) -> None:
    """A hook matcher that is not a regular expression, or a path rule that is not a
    glob, fails every tool call; doctor says so, with the line (it said "no problems").
    An agent's own hooks are named under agents:, not tools:."""
    base = (repo / ".hive" / "config.yaml").read_text()
    for section, line, key in (
        (
            "tools:\n  hooks:\n    pre_tool_use:\n      - {matcher: '(', command: 'true'}\n",
            4,
            "tools.hooks.pre_tool_use.0.matcher",
        ),
        (
            "tools:\n  permissions:\n    '*':\n      '*':\n        denied_paths: ['[ab']\n",
            5,
            "tools.permissions.*.*.denied_paths",
        ),
        (
            "agents:\n  alice:\n    hooks:\n      post_tool_use:\n"
            "        - {matcher: 'fs_(', command: 'true'}\n",
            5,
            "agents.alice.hooks.post_tool_use.0.matcher",
        ),
    ):
        start = _config_with(repo, base, section)
        where = f".hive/config.yaml:{start + line - 1}: {key}"
        result = envelope(repo, [{"name": "hive_ready", "args": {}}], agent="alice")
        assert result["results"][0]["code"] == "invalid_input", result
        assert result["results"][0]["error"].startswith(where), result
        doctor = hive(repo, "doctor")
        assert doctor.returncode == 1, doctor.stdout
        assert where in doctor.stdout, doctor.stdout


def test_doctor_warns_of_tool_names_no_tool_has(ws: Workspace, repo: Path) -> None:
    """A deny rule, a limit or a hook written for a misspelt tool never applies, silently
    (fail open): doctor names each, with the tool meant."""
    configure(
        repo,
        {
            "permissions": {
                "*": {
                    "fs_raed": {"denied_paths": [".env"]},
                    "git_commit": {"denied_paths": ["x"]},
                    "*": {"denied_paths": ["y"]},
                }
            },
            "rate_limits": {"default": {"capacity": 9}, "hive_redy": {"capacity": 9}},
            "agent_rate_limits": {"bob": {"swarm_complet": {"capacity": 9}}},
            "hooks": {
                "pre_tool_use": [
                    {"matcher": "hive_create", "command": "true"},
                    {"matcher": "fs_", "command": "true"},
                ]
            },
        },
    )
    report = json.loads(hive(repo, "--json", "doctor").stdout)
    messages = [w["message"] for w in report["warnings"] if w["kind"] == "unknown-tool"]
    assert messages == [
        "tools.permissions.*.fs_raed: no tool is called 'fs_raed' (did you mean 'fs_read'?):"
        " these rules never apply",
        "tools.rate_limits.hive_redy: no tool is called 'hive_redy' (did you mean"
        " 'hive_ready'?): this limit never applies",
        "tools.agent_rate_limits.bob.swarm_complet: no tool is called 'swarm_complet' (did you"
        " mean 'swarm_complete'?): this limit never applies",
        "tools.hooks.pre_tool_use.1.matcher: 'fs_' matches no tool name (the whole name must"
        " match): this hook never runs",
    ], report["warnings"]


def test_doctor_warns_of_a_setting_hive_does_not_read(ws: Workspace, repo: Path) -> None:
    """A top-level key of .hive/config.yaml that hive reads nowhere (a misspelt `tool:`,
    whose path rules would never apply, or `cordinators:`) is a doctor warning naming its
    line and the setting meant: such keys were kept and silently did nothing."""
    from tests.inprocess import run_hive

    config = repo / ".hive" / "config.yaml"
    lines = config.read_text().count("\n")
    typos = "tool:\n  permissions: {}\ncordinators: [lead]\nverify: {commands: []}\nmine: 1\n"
    config.write_text(config.read_text() + typos)
    git(repo, "commit", "-qam", "typos")
    report = json.loads(run_hive(["-C", str(repo), "--json", "doctor"]).stdout)
    messages = [w["message"] for w in report["warnings"] if w["kind"] == "unknown-setting"]
    assert messages == [
        f".hive/config.yaml:{lines + 1}: hive reads no setting 'tool' (did you mean 'tools'?):"
        " it has no effect",
        f".hive/config.yaml:{lines + 3}: hive reads no setting 'cordinators' (did you mean"
        " 'coordinators'?): it has no effect",
        f".hive/config.yaml:{lines + 5}: hive reads no setting 'mine': it has no effect",
    ], report["warnings"]
    assert report["problems"] == []  # a warning: the config still loads


def test_hook_timeout_key_is_accepted(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [{"matcher": "fs_list", "command": "sleep 300", "timeout": 0.5}]
            }
        },
    )
    started = time.monotonic()
    result = envelope(repo, [{"name": "fs_list", "args": {}}])["results"][0]
    assert result["code"] == "hook_failed" and "timed out after 0.5s" in result["error"]
    # the hook was stopped at its timeout, not waited out: well under its 300 s, with
    # room for a loaded machine
    assert time.monotonic() - started < 120


def test_a_hook_that_leaves_a_background_process_is_judged_by_its_exit(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A hook that starts something in the background (``notify &``) and exits at once
    is done when it exits: its exit code decides, its output is kept, and what it left
    holding the output pipe is stopped. It used to be reported as timed out (the call
    blocked, after the whole timeout) because the pipe stayed open."""
    pid_file = tmp_path / "background.pid"
    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [
                    {
                        "matcher": "fs_list",
                        "command": f"sleep 600 & echo $! > {pid_file}; echo started; exit 1",
                        "timeout": 300,
                    }
                ]
            }
        },
    )
    started = time.monotonic()
    result = envelope(repo, [{"name": "fs_list", "args": {}}])["results"][0]
    # judged at its exit, not at its 300 s timeout: a bound with room for a loaded machine
    assert time.monotonic() - started < 120, result
    assert "result" in result and "code" not in result, result  # exit 1: a warning
    run = [e for e in _events(repo) if e["tool"] == "fs_list"][-1]["hooks"][0]
    assert run["exit_code"] == 1 and not run["timed_out"] and run["stdout"] == "started\n"
    stat = Path(f"/proc/{int(pid_file.read_text())}/stat")
    deadline = time.monotonic() + 60  # stopped: the state, waited for
    while _running(stat) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _running(stat)


def _running(stat: Path) -> bool:
    """Is the process of /proc/PID/stat alive (killed and not yet reaped: a zombie)?"""
    try:
        return stat.read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


def test_the_most_specific_allowlist_wins_and_deny_lists_add_up(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "permissions": {
                "*": {
                    "fs_write": {"allowed_paths": ["src/**"]},
                    "*": {"denied_paths": ["docs/private/**"]},
                },
                "T": {"fs_write": {"allowed_paths": ["docs/**"], "denied_paths": ["docs/x.md"]}},
            }
        },
    )
    writes = [
        {"name": "fs_write", "args": {"path": p, "content": "c"}}
        for p in ("docs/a.md", "src/a.py", "docs/x.md", "docs/private/k.md")
    ]
    mine = envelope(repo, writes, agent="T")["results"]
    assert ["result" in r for r in mine] == [True, False, False, False]
    assert "T.fs_write.allowed_paths" in mine[1]["error"]
    assert mine[3]["rule"] == "*.*.denied_paths: docs/private/**"
    others = envelope(repo, writes, agent="U")["results"]
    assert ["result" in r for r in others] == [False, True, False, False]


def test_hook_exit_codes_matcher_and_post_hooks_on_errors(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [
                    {"matcher": "hive_create", "command": "echo created >> created.log"},
                    {"matcher": "hive_query", "command": "exit 3"},
                    {"matcher": "hive_start", "command": "no-such-command-xyz"},
                ],
                "post_tool_use": [
                    {"matcher": "hive_update", "command": "cat > post.json; echo seen >&2; exit 2"}
                ],
            }
        },
    )
    results = envelope(
        repo,
        [
            {"name": "hive_create_epic", "args": {"epic_title": "e", "subtasks": [{"title": "s"}]}},
            {"name": "hive_query", "args": {}},
            {"name": "hive_start", "args": {"id": "hv-zzzz"}},
            {"name": "hive_update", "args": {"id": "hv-zzzz", "priority": 1}},
        ],
    )["results"]
    assert not (repo / "created.log").exists()  # the matcher is a full match
    assert results[1]["code"] == "hook_failed" and results[1]["exit_code"] == 3
    assert results[2]["code"] == "hook_failed" and results[2]["exit_code"] == 127
    assert results[3]["code"] == "not_found" and results[3]["hook_feedback"] == ["seen"]
    assert json.loads((repo / "post.json").read_text())["code"] == "not_found"


def test_a_call_blocked_by_a_pre_hook_spends_no_token(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "rate_limits": {"hive_ready": {"capacity": 1, "per_seconds": 3600}},
            "hooks": {
                "pre_tool_use": [{"matcher": "hive_ready", "command": "test -f allow || exit 2"}]
            },
        },
    )
    blocked = envelope(repo, [{"name": "hive_ready", "args": {}}])["results"][0]
    assert blocked["code"] == "hook_blocked"
    (repo / "allow").write_text("")
    calls = [{"name": "hive_ready", "args": {}}] * 2
    results = envelope(repo, calls)["results"]
    assert "result" in results[0] and results[1]["code"] == 429


def test_a_path_leading_out_of_the_sandbox_spends_no_token(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """fs_read of a symlink leading out of the repository (or of .git) was refused only
    once it had spent a rate-limit token, where a path a permission rule denies spends
    none: three refusals emptied a bucket of one. So did file_read's context directory."""
    configure(
        repo,
        {
            "rate_limits": {
                "fs_read": {"capacity": 1, "per_seconds": 3600},
                "file_read": {"capacity": 1, "per_seconds": 3600},
            }
        },
    )
    (tmp_path / "secret.txt").write_text("outside\n")
    (repo / "out").symlink_to(tmp_path / "secret.txt")
    escapes = [{"path": "out"}, {"path": ".git/config"}, {"path": "../secret.txt"}]
    for tool, code in (("fs_read", "path_outside_repository"), ("file_read", "access_denied")):
        calls = [{"name": tool, "args": args} for args in escapes]
        calls += [{"name": tool, "args": {"path": "README.md"}}] * 2
        results = envelope(repo, calls)["results"]
        assert [r.get("code") for r in results[:3]] == [code] * 3, results
        assert "result" in results[3], results  # the bucket's one token, still there
        assert results[4]["code"] == 429, results


def test_rate_limits_per_agent(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "rate_limits": {"default": {"capacity": 3, "per_seconds": 3600}},
            "agent_rate_limits": {"slow": {"default": {"capacity": 1, "per_seconds": 3600}}},
        },
    )
    calls = [{"name": "hive_ready", "args": {}}] * 2
    slow = envelope(repo, calls, agent="slow")["results"]
    fast = envelope(repo, calls, agent="fast")["results"]
    assert ["result" in r for r in slow] == [True, False]
    assert slow[1]["limit"] == 1
    assert ["result" in r for r in fast] == [True, True]


def test_rate_limits_hold_under_concurrent_processes(ws: Workspace, repo: Path) -> None:
    configure(repo, {"rate_limits": {"hive_ready": {"capacity": 5, "per_seconds": 3600}}})
    text = json.dumps({"tool_calls": [{"name": "hive_ready", "args": {}}] * 3})
    command = ["-C", str(repo), "tools", "run", "--agent", "bob"]
    env = agent_env(repo, "bob")
    processes = [  # forked: real processes at once
        fork_hive(command, env=env, input=text, module="hive.cli.main") for _ in range(4)
    ]
    outputs = [p.communicate(timeout=120)[0] for p in processes]
    results = [r for out in outputs for r in json.loads(out)["results"]]
    assert sum("result" in r for r in results) == 5
    assert sum(r.get("code") == 429 for r in results) == 7


def test_hook_runs_are_in_the_event_log_not_in_results(ws: Workspace, repo: Path) -> None:
    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [
                    {"matcher": "hive_ready", "command": "echo hello-log; echo err-log >&2"}
                ]
            }
        },
    )
    result = envelope(repo, [{"name": "hive_ready", "args": {}}])["results"][0]
    assert "hello-log" not in json.dumps(result)
    event = _events(repo)[-1]
    hook = event["hooks"][0]  # type: ignore[index]
    assert hook["stdout"] == "hello-log\n" and hook["stderr"] == "err-log\n"
    assert hook["exit_code"] == 0 and hook["timed_out"] is False
    assert event["agent"] == "bob" and event["session"].startswith("cli:")
    assert git(repo, "status", "--porcelain").strip() == ""


def test_idle_rate_limit_buckets_are_pruned(ws: Workspace, repo: Path) -> None:
    configure(repo, {"rate_limits": {"default": {"capacity": 5, "per_seconds": 60}}})
    state = repo / ".git" / "hive"
    state.mkdir(exist_ok=True)
    stale = {f"gone-{n}\x1fhive_ready": [5, time.time() - 30 * 86_400] for n in range(50)}
    (state / "ratelimit.json").write_text(json.dumps(stale))
    envelope(repo, [{"name": "hive_ready", "args": {}}])
    assert list(json.loads((state / "ratelimit.json").read_text())) == ["bob\x1fhive_ready"]


def test_a_file_name_that_is_not_utf8_reaches_every_surface(ws: Workspace, repo: Path) -> None:
    """A file named with bytes that are not UTF-8 (``bad\\xffname.txt``) is listed with its
    bytes escaped: it made the MCP server die (its JSON encoder refused the name, and
    the client waited for an answer for ever) and the envelope print invalid UTF-8."""
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    with open(os.path.join(os.fsencode(repo), b"bad\xffname.txt"), "wb") as handle:
        handle.write(b"needle\n")
    (repo / "good.txt").write_text("needle\n")
    calls = [("fs_list", {}), ("search_text", {"pattern": "needle"}), ("hive_ready", {})]
    params = mcp_server(["-C", str(repo), "--actor", "m", "mcp"], env={**os.environ})

    async def scenario() -> list[object]:
        found = []
        with anyio.fail_after(60):  # the client waited for ever
            async with (
                stdio_client(params) as (read, write),
                ClientSession(read, write) as session,
            ):
                await session.initialize()
                for name, args in calls:
                    reply = await session.call_tool(name, args)
                    assert not reply.is_error, reply
                    found.append(json.loads(reply.content[0].text))
        return found

    listed, searched, ready = anyio.run(scenario)
    assert "bad\\xffname.txt" in listed["files"] and "good.txt" in listed["files"], listed
    assert {m["file"] for m in searched["matches"]} == {"bad\\xffname.txt", "good.txt"}
    assert ready == []
    text = json.dumps({"tool_calls": [{"name": "fs_list", "args": {}}]})
    out = subprocess.run(
        [sys.executable, "-m", "hive", "-C", str(repo), "tools", "run"],
        input=text.encode(),
        capture_output=True,
        check=False,
    )
    transcript = json.loads(out.stdout.decode("utf-8"))  # strict: UTF-8 or it raises
    assert "bad\\xffname.txt" in transcript["results"][0]["result"]["files"]


def test_hostile_input_through_mcp(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    configure(
        repo,
        {
            "rate_limits": {"hive_ready": {"capacity": 1, "per_seconds": 3600}},
            "hooks": {
                "pre_tool_use": [{"matcher": "fs_list", "command": "sleep 20", "timeout": 0.5}]
            },
        },
    )
    (tmp_path / "outside.txt").write_text("outside")
    os.symlink(tmp_path / "outside.txt", repo / "escape.txt")
    params = mcp_server(["-C", str(repo), "--actor", "m", "mcp"], env={**os.environ})
    calls = [
        ("hive_create", {"title": "x" * 3_000_000}),
        ("fs_read", {"path": "../outside.txt"}),
        ("fs_read", {"path": "escape.txt"}),
        ("fs_list", {}),
        ("hive_ready", {}),
        ("hive_ready", {}),
        ("hive_start", {"id": "hv-zzzz"}),
    ]

    async def scenario() -> list[dict[str, object]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            found = []
            for name, args in calls:
                reply = await session.call_tool(name, args)
                body = json.loads(reply.content[0].text)
                found.append(
                    {"error": reply.is_error, "code": body.get("code")}
                    if reply.is_error
                    else {"error": False}
                )
            return found

    results = anyio.run(scenario)
    codes = [r.get("code") if r["error"] else "ok" for r in results]
    assert codes[:5] == [
        "invalid_arguments",
        "path_outside_repository",
        "path_outside_repository",
        "hook_failed",
        "ok",
    ]
    assert codes[5] == 429 and codes[6] == "not_found"


def test_hook_warnings_and_feedback_reach_an_mcp_client(ws: Workspace, repo: Path) -> None:
    """A success's hook notes (exit 1: warnings; a post hook's exit 2: hook_feedback)
    reach the model over MCP as they do in the envelope: they were dropped there."""
    import os

    import anyio
    from mcp import ClientSession
    from mcp.client.stdio import stdio_client

    configure(
        repo,
        {
            "hooks": {
                "pre_tool_use": [{"matcher": "hive_create", "command": "echo mind >&2; exit 1"}],
                "post_tool_use": [{"matcher": "hive_ready", "command": "echo recheck >&2; exit 2"}],
            }
        },
    )
    params = mcp_server(["-C", str(repo), "--actor", "m", "mcp"], env={**os.environ})

    async def scenario() -> list[list[str]]:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            texts = []
            for name, args in [
                ("hive_create", {"title": "t"}),
                ("hive_ready", {}),
                ("hive_stats", {}),
            ]:
                reply = await session.call_tool(name, args)
                assert not reply.is_error
                texts.append([block.text for block in reply.content])  # type: ignore[union-attr]
            return texts

    created, ready, stats = anyio.run(scenario)
    assert json.loads(created[0])["title"] == "t"
    assert json.loads(created[1]) == {"warnings": ["mind"]}
    assert json.loads(ready[0])[0]["title"] == "t"
    assert json.loads(ready[1]) == {"hook_feedback": ["recheck"]}
    assert len(stats) == 1  # no hook, no second block
    transcript = envelope(repo, [{"name": "hive_ready", "args": {}}], agent="m")
    assert transcript["results"][0]["hook_feedback"] == ["recheck"]


def test_credentials_reach_neither_hooks_nor_the_event_log(ws: Workspace, repo: Path) -> None:
    """A credential is shown once, to whoever registered: a post hook's input (an
    audit hook often keeps it) has it masked, and what a hook prints (its input, its
    environment's HIVE_AGENT_TOKEN) reaches the event log, readable by every agent,
    masked too."""
    from tests.test_tools import arbiter

    audit = {"matcher": "swarmmail_init", "command": "cat > post.json; cat post.json"}
    shows_env = {"matcher": "hive_ready", "command": 'echo "$HIVE_AGENT_TOKEN"'}
    configure(repo, {"hooks": {"post_tool_use": [audit, shows_env]}})
    text = json.dumps(
        {"tool_calls": [{"name": "swarmmail_init", "args": {"agent_name": "newbie"}}]}
    )
    transcript = json.loads(arbiter(repo, "tools", "run", stdin=text).stdout)
    token = transcript["results"][0]["result"]["token"]
    assert token.startswith("hive_")  # the one who registered gets it
    posted = (repo / "post.json").read_text()
    assert token not in posted and '"token": "[redacted]"' in posted
    envelope(repo, [{"name": "hive_ready", "args": {}}])  # bob, by his credential
    bob = agent_env(repo, "bob")["HIVE_AGENT_TOKEN"]
    log = (repo / ".git" / "hive" / "events.jsonl").read_text()
    assert token not in log and bob not in log
    assert [e["hooks"][0]["stdout"] for e in _events(repo) if e.get("tool") == "hive_ready"] == [
        "[redacted]\n"
    ]
