"""An agent at the command line (its credential in ``HIVE_AGENT_TOKEN``) meets the policy
its tool calls meet (``hive.domain.policy.gated``): its tools list, its call limit per
phase, protected tools, rate limits and hooks; a person meets none of them. The lean
fast paths defer an agent's command to the full CLI when the committed config has any
of that policy, and answer as before otherwise."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hive.cli import entry
from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from hive.ops.catalog import operations
from hive.ops.spec import Command, Operation
from hive.ops.toolindex import TOOL_MODULES
from tests.conftest import agent_env, copy_repo, git, isolated_env
from tests.inprocess import Outcome, run_hive
from tests.seedkit import configure


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    """``hive -C repo ARGS`` in-process (the console script: lean path first), as the
    person of git's identity unless ``env`` says otherwise; never a traceback."""
    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    ran = run_hive(["-C", str(repo), *args], env=env if env is not None else person)
    assert "Traceback" not in ran.stderr and "internal error" not in ran.stderr, ran
    return ran


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def status_of(repo: Path, cell_id: str) -> str:
    shown = json.loads(hive(repo, "--json", "show", cell_id).stdout)
    return str((shown[0] if isinstance(shown, list) else shown)["status"])


def new_cell(repo: Path, title: str = "a task") -> str:
    return create_cell(Workspace(str(repo), actor="alice"), title=title).id


# ------------------------------------------------------------------ every command


def tool_commands() -> list[tuple[Operation, Command]]:
    """Every command of the CLI whose operation is an agent tool."""
    return [(op, c) for op in operations() if op.name in TOOL_MODULES for c in op.commands]


# the arguments that reach the call for a command the sample values below do not
CALLS = {
    "queue add": ["x", '{"a": 1}'],
    "queue extend": ["x", "5"],
    "todo set": ['[{"content": "x", "status": "pending"}]'],
    "mail read": ["1"],
    "mail ack": ["1"],
    "release": ["x"],
    "delegate": ["x", '{"a": 1}'],
    "epic spawn": ["task=do it"],
    "memory set": ["decisions", "k=v"],
    "qa run": ["QA"],
    "swarm validate": ["PLAN"],
    "swarm validate-decomposition": ["PLAN"],
    "swarm record-outcome": ["x", "--success"],
}


def command_line(op: Operation, command: Command, files: dict[str, str]) -> list[str]:
    """A command line of ``command`` whose arguments pass the parameter model."""
    from hive.cli.build import _choices, offered

    if command.name in CALLS:
        return [*command.path, *(files.get(arg, arg) for arg in CALLS[command.name])]
    words = list(command.path)
    for name in offered(op, command):
        info = op.params.model_fields[name]
        value = (_choices(info.annotation) or ["x"])[0]
        if name in command.arguments and (info.is_required() or name in command.required):
            words.append(value)
        elif name not in command.arguments and info.is_required():
            words += ["--" + name.replace("_", "-"), value]
    return words


@pytest.fixture(scope="module")
def no_tools(tmp_path_factory: pytest.TempPathFactory, hive_template: Path) -> Iterator[Path]:
    """A hive whose agent ``none`` has an empty tools list."""
    with isolated_env(tmp_path_factory):
        repo = copy_repo(hive_template, tmp_path_factory.mktemp("policy") / "repo")
        configure(repo, agents={"none": {"tools": []}})
        (repo / "plan.json").write_text('{"subtasks": [{"title": "a"}]}')
        scenario = {"id": "s1", "key": "k", "value": "v", "sourceAgent": "a"}
        (repo / "qa.json").write_text(json.dumps([scenario]))
        yield repo


@pytest.mark.parametrize(
    ("op", "command"), tool_commands(), ids=[c.name for _, c in tool_commands()]
)
def test_every_tool_command_is_refused_to_an_agent_without_the_tool(
    no_tools: Path, op: Operation, command: Command
) -> None:
    files = {"PLAN": str(no_tools / "plan.json"), "QA": str(no_tools / "qa.json")}
    before = head(no_tools)
    ran = hive(
        no_tools, "--json", *command_line(op, command, files), env=agent_env(no_tools, "none")
    )
    assert ran.returncode == 4, ran
    refused = json.loads(ran.stdout)
    assert refused["code"] == "tool_not_enabled" and refused["tool"] == op.name
    assert ran.stderr == f"error: tool {op.name} is not enabled for agent none (its tools: none)\n"
    assert head(no_tools) == before


@pytest.mark.parametrize(
    ("argv", "tool"),
    [
        (["create", "--from", "{cells}"], "hive_create"),
        (["swarm", "create-epic", "{plan}"], "hive_create_epic"),
    ],
)
def test_an_input_mode_beyond_the_parameters_calls_the_same_tool(
    no_tools: Path, argv: list[str], tool: str
) -> None:
    """``hive create --from FILE`` and ``hive swarm create-epic SOURCE`` are the calls of
    their tools too."""
    (no_tools / "cells.yaml").write_text("- title: from a file\n")
    files = {"cells": str(no_tools / "cells.yaml"), "plan": str(no_tools / "plan.json")}
    before = head(no_tools)
    words = [word.format(**files) for word in argv]
    ran = hive(no_tools, "--json", *words, env=agent_env(no_tools, "none"))
    assert ran.returncode == 4 and json.loads(ran.stdout)["tool"] == tool, ran
    assert head(no_tools) == before


def test_the_commands_written_by_hand_call_no_tool() -> None:
    """The commands not generated from an operation: none of them is a tool's command
    (``hive tools run`` and ``hive mcp`` call the tools through the registry, which
    runs the same policy). A new one must be placed here, gated if it is a tool's."""
    import typer

    from hive.cli.main import build

    def paths(group: Any, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
        for name, command in group.commands.items():
            if hasattr(command, "commands"):  # a group (typer's own click)
                yield from paths(command, (*prefix, name))
            else:
                yield (*prefix, name)

    every = set(paths(typer.main.get_group(build()), ()))
    generated = {c.path for op in operations() for c in op.commands}
    by_hand = {" ".join(path) for path in every - generated}
    assert by_hand == {
        *("hooks run", "demo", "mcp", "serve", "swarm run"),
        *("tools schema", "tools list", "tools docs", "tools run"),
    }


# ------------------------------------------------------------------ each rule


def test_an_agents_tools_list_holds_at_the_command_line(ws: Workspace, repo: Path) -> None:
    cell = new_cell(repo)
    configure(repo, agents={"narrow": {"tools": ["hive_query", "hive_ready"]}})
    before = head(repo)
    env = agent_env(repo, "narrow")
    ran = hive(repo, "close", cell, env=env)
    assert ran.returncode == 4 and ran.stdout == ""
    assert ran.stderr == (
        "error: tool hive_close is not enabled for agent narrow (its tools: hive_query,"
        " hive_ready)\n"
    )
    assert head(repo) == before and status_of(repo, cell) == "open"
    assert hive(repo, "--json", "show", cell, env=env).returncode == 0  # a tool it has
    assert hive(repo, "close", cell).returncode == 0  # a person is not an agent
    assert status_of(repo, cell) == "closed"
    assert "hive: close" in git(repo, "log", "-1", "--format=%s")


def test_the_call_limit_counts_the_commands_of_one_session(ws: Workspace, repo: Path) -> None:
    """``HIVE_SESSION`` gives an agent's commands one session (a runner sets it); without
    it each command is a session of its own."""
    configure(repo, agents={"lim": {"tools": ["hive_stats"], "toolCallLimit": 2}})
    env = agent_env(repo, "lim")
    turns = {**env, "HIVE_SESSION": "turns"}
    assert [hive(repo, "stats", env=turns).returncode for _ in range(2)] == [0, 0]
    over = hive(repo, "--json", "stats", env=turns)
    assert over.returncode == 4 and json.loads(over.stdout)["code"] == "tool_call_limit"
    assert "lim may make 2 tool calls per phase" in over.stderr
    assert hive(repo, "stats", env={**env, "HIVE_SESSION": "other"}).returncode == 0
    assert [hive(repo, "stats", env=env).returncode for _ in range(3)] == [0, 0, 0]


def test_a_protected_tool_needs_a_grant_at_the_command_line(ws: Workspace, repo: Path) -> None:
    first, second = new_cell(repo, "one"), new_cell(repo, "two")
    configure(
        repo,
        permission_policy={
            "rules": [{"agent": "orch", "resource": "FILE_EXPORT"}],
            "protected_tools": {"hive_close": "FILE_EXPORT"},
        },
    )
    env = agent_env(repo, "orch")
    before = head(repo)
    refused = hive(repo, "--json", "close", first, env=env)
    assert refused.returncode == 5 and json.loads(refused.stdout)["code"] == "auth_required"
    assert "hive_close requires auth: orch holds no live FILE_EXPORT grant" in refused.stderr
    assert head(repo) == before and status_of(repo, first) == "open"
    assert (
        hive(repo, "permissions", "request", "FILE_EXPORT", "close cells", env=env).returncode == 0
    )
    assert hive(repo, "close", first, env=env).returncode == 0
    assert status_of(repo, first) == "closed"
    assert hive(repo, "close", second).returncode == 0  # a person needs no grant


def test_a_rate_limit_refuses_an_agents_command_with_exit_10(ws: Workspace, repo: Path) -> None:
    configure(repo, tools={"rate_limits": {"hive_stats": {"capacity": 2, "per_seconds": 3600}}})
    env = agent_env(repo, "busy")
    assert [hive(repo, "stats", env=env).returncode for _ in range(2)] == [0, 0]
    limited = hive(repo, "--json", "stats", env=env)
    assert (
        limited.returncode == 10 and limited.stderr == "error: rate limited: hive_stats for busy\n"
    )
    answer = json.loads(limited.stdout)
    assert answer["error"] == "rate_limited" and answer["code"] == 429 and answer["limit"] == 2
    assert [hive(repo, "stats").returncode for _ in range(3)] == [0, 0, 0]  # a person: none


def test_a_blocking_pre_hook_refuses_an_agents_close(ws: Workspace, repo: Path) -> None:
    cell = new_cell(repo)
    configure(
        repo,
        tools={
            "hooks": {
                "pre_tool_use": [
                    {"matcher": "hive_close", "command": "echo not before review >&2; exit 2"}
                ]
            }
        },
        agents={
            "careful": {
                "hooks": {"pre_tool_use": [{"matcher": "hive_update", "command": "exit 2"}]}
            },
            "broken": {
                "hooks": {"pre_tool_use": [{"matcher": "hive_update", "command": "exit 3"}]}
            },
        },
    )
    before = head(repo)
    env = agent_env(repo, "worker")
    ran = hive(repo, "--json", "close", cell, env=env)
    assert ran.returncode == 5 and ran.stderr == "error: not before review\n"
    assert json.loads(ran.stdout) == {
        "error": "not before review",
        "code": "hook_blocked",
        "hook": "echo not before review >&2; exit 2",
    }
    assert head(repo) == before and "configure" in git(repo, "show", "-s", "--format=%s", "HEAD")
    careful = hive(repo, "update", cell, "-p", "1", env=agent_env(repo, "careful"))
    assert careful.returncode == 5 and careful.stderr == "error: blocked by a pre_tool_use hook\n"
    failed = hive(repo, "--json", "update", cell, "-p", "1", env=agent_env(repo, "broken"))
    assert failed.returncode == 1 and json.loads(failed.stdout)["code"] == "hook_failed"
    assert failed.stderr == "error: pre_tool_use hook exited 3; the call was not run\n"
    envelope = json.dumps({"tool_calls": [{"name": "hive_close", "args": {"id": cell}}]})
    tool = run_hive(["-C", str(repo), "tools", "run"], env=env, input=envelope)
    assert tool.returncode == 5 and json.loads(tool.stdout)["results"][0]["code"] == "hook_blocked"
    assert head(repo) == before
    assert hive(repo, "update", cell, "-p", "1", env=env).returncode == 0  # not its hook
    assert head(repo) != before
    assert hive(repo, "close", cell).returncode == 0  # a person runs no hook


def test_a_post_hook_sees_an_agents_command_and_warns(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    cell = new_cell(repo)
    seen = tmp_path / "seen.jsonl"
    command = f"cat >> {seen}; echo; echo looked at it >&2; exit 1"
    configure(
        repo, tools={"hooks": {"post_tool_use": [{"matcher": "hive_update", "command": command}]}}
    )
    ran = hive(repo, "update", cell, "-p", "1", env=agent_env(repo, "worker"))
    assert ran.returncode == 0 and ran.stderr == "warning: looked at it\n"
    payload = json.loads(seen.read_text())
    assert payload["tool"] == "hive_update" and payload["agent"] == "worker"
    assert payload["args"]["id"] == cell and payload["args"]["priority"] == 1
    assert payload["result"]["id"] == cell and payload["result"]["priority"] == 1
    assert hive(repo, "update", cell, "-p", "2").returncode == 0  # a person's: no hook
    assert len(seen.read_text().splitlines()) == 1


def test_a_batch_is_one_call_per_id(ws: Workspace, repo: Path) -> None:
    """``hive close A B`` is two ``hive_close`` calls: a hook refusing B refuses the
    command, and nothing is closed."""
    first, second = new_cell(repo, "one"), new_cell(repo, "two")
    guard = f"grep -q '{second}' && {{ echo not {second} >&2; exit 2; }}; exit 0"
    configure(
        repo, tools={"hooks": {"pre_tool_use": [{"matcher": "hive_close", "command": guard}]}}
    )
    before = head(repo)
    ran = hive(repo, "close", first, second, env=agent_env(repo, "worker"))
    assert ran.returncode == 5 and ran.stderr == f"error: not {second}\n"
    assert head(repo) == before and status_of(repo, first) == "open"


# ------------------------------------------------------------------ the lean paths


POLICY = {"agents": {"someone": {"tools": ["hive_ready"]}}}


def lean(repo: Path, *args: str) -> int | None:
    """The lean path's exit code for ``hive ARGS`` (None: deferred to the full CLI)."""
    return entry.dispatch(entry.parse(["-C", str(repo), *args]))


def test_the_lean_paths_defer_an_agent_with_a_policy(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lean paths answer an agent as before in a hive without a policy for agents
    (and a person always); an agent's command with one is the full CLI's, and the lean
    path writes nothing before it defers."""
    cell = new_cell(repo)
    env = agent_env(repo, "worker")
    monkeypatch.setenv("HIVE_AGENT", env["HIVE_AGENT"])
    monkeypatch.setenv("HIVE_AGENT_TOKEN", env["HIVE_AGENT_TOKEN"])

    def commands(message: str) -> list[list[str]]:
        return [
            ["--json", "ready"],
            ["--json", "list"],
            ["--json", "show", cell],
            ["create", "lean one"],
            ["update", cell, "-p", "1"],
            ["reserve", "src/a.py"],
            ["release", "src/a.py"],
            ["mail", "send", "worker", "-s", "hello"],
            ["--json", "mail", "read", message],
            ["--json", "mail", "inbox"],
            ["close", cell],
        ]

    answered = [lean(repo, *args) for args in commands("1")[:-3]]
    capsys.readouterr()
    assert [*answered, lean(repo, "--json", "mail", "inbox")] == [0] * (len(answered) + 1)
    message = str(json.loads(capsys.readouterr().out)[0]["id"])
    assert lean(repo, "--json", "mail", "read", message) == 0
    for name, value in POLICY.items():
        configure(repo, **{name: value})
    before = head(repo), git(repo, "for-each-ref")
    assert [lean(repo, *args) for args in commands(message)] == [None] * len(commands(message))
    assert (head(repo), git(repo, "for-each-ref")) == before
    monkeypatch.delenv("HIVE_AGENT")
    monkeypatch.delenv("HIVE_AGENT_TOKEN")
    assert lean(repo, "close", cell) == 0  # a person's: lean
    capsys.readouterr()


@pytest.mark.parametrize(
    "section",
    [
        {"tools": {"hooks": {"post_tool_use": [{"matcher": "x", "command": "true"}]}}},
        {"tools": {"rate_limits": {"default": {"capacity": 5, "per_seconds": 1}}}},
        {"tools": {"agent_rate_limits": {"a": {"default": {"capacity": 5, "per_seconds": 1}}}}},
        {"permission_policy": {"protected_tools": {"hive_close": "FILE_EXPORT"}}},
        {"agents": {"*": {"toolCallLimit": 50}}},
    ],
)
def test_what_makes_a_lean_path_defer_an_agent(section: dict[str, Any]) -> None:
    from hive.store.configdoc import agent_policy

    assert agent_policy(section)
    assert not agent_policy({"agents": {}, "tools": {"permissions": {"*": {}}, "hooks": {}}})


def fresh(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``hive`` as a process of its own."""
    return subprocess.run(
        [sys.executable, "-m", "hive", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )


@pytest.mark.parametrize(
    ("args", "tool"),
    [
        (["close", "{cell}"], "hive_close"),  # lean_write
        (["reserve", "src/a.py"], "swarmmail_reserve"),  # lean_coord
        (["--json", "show", "{cell}"], "hive_query"),  # lean (reads)
    ],
)
def test_a_fresh_agent_command_is_refused_past_the_lean_path(
    ws: Workspace, repo: Path, args: list[str], tool: str
) -> None:
    cell = new_cell(repo)
    configure(repo, agents={"narrow": {"tools": ["hive_stats"]}})
    before = head(repo)
    ran = fresh(repo, agent_env(repo, "narrow"), *(arg.format(cell=cell) for arg in args))
    assert ran.returncode == 4, ran.stderr
    assert ran.stderr == (
        f"error: tool {tool} is not enabled for agent narrow (its tools: hive_stats)\n"
    )
    assert head(repo) == before


@pytest.mark.parametrize(
    "args", [["ready"], ["list"], ["show", "{cell}"]], ids=["ready", "list", "show"]
)
def test_a_lean_read_refuses_a_name_its_credential_does_not_prove(
    ws: Workspace, repo: Path, args: list[str]
) -> None:
    """``HIVE_AGENT`` naming another agent than ``HIVE_AGENT_TOKEN``'s: the lean reads
    answered it (in a hive without a policy for agents) where the full CLI refuses it;
    now the same words, code and exit code on both paths (``--actor`` too), while the
    agent's own name and a person's reads are answered as before."""
    cell = new_cell(repo)
    mine = agent_env(repo, "worker")
    words = [arg.format(cell=cell) for arg in ["--json", *args]]
    for env, argv in (
        ({**mine, "HIVE_AGENT": "other"}, words),
        ({k: v for k, v in mine.items() if k != "HIVE_AGENT"}, ["--actor", "other", *words]),
    ):
        answers = [
            run_hive(["-C", str(repo), *argv], env=env, module=module)
            for module in ("hive", "hive.cli.main")
        ]
        for ran in answers:
            assert ran.returncode == 5, ran
            assert ran.stderr == "error: you are worker (by HIVE_AGENT_TOKEN), not other\n"
            assert json.loads(ran.stdout)["code"] == "not_your_identity"
        assert answers[0].stdout == answers[1].stdout
    assert hive(repo, *words, env=mine).returncode == 0
    assert hive(repo, *words).returncode == 0  # a person's


def test_a_fresh_lean_read_refuses_a_name_its_credential_does_not_prove(
    ws: Workspace, repo: Path
) -> None:
    ran = fresh(repo, {**agent_env(repo, "worker"), "HIVE_AGENT": "other"}, "--json", "ready")
    assert ran.returncode == 5, ran.stderr
    assert ran.stderr == "error: you are worker (by HIVE_AGENT_TOKEN), not other\n"


# ------------------------------------------------------------------ the event log


def test_an_agents_commands_are_lines_of_the_event_log(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """An agent's commands met its tools' policy but left no line in the event log,
    which only tool calls wrote. Now each call of its command (each id of a batch) is
    a line as a tool call's: its arguments redacted as ``tools.events`` says, its
    outcome or its refusal's code, ``"surface": "cli"``. A person's are not logged."""
    from hive.domain.events import read_events

    first, second = new_cell(repo, "one"), new_cell(repo, "two")
    configure(
        repo,
        agents={"narrow": {"tools": ["hive_close", "hive_comment"]}},
        tools={"events": {"redact": ["text"]}},
    )
    state = git(repo, "rev-parse", "--git-common-dir").strip()
    state_dir = str((repo / state / "hive").resolve())
    env = {**agent_env(repo, "narrow"), "HIVE_SESSION": "turns"}
    assert hive(repo, "comment", first, "the password is x", env=env).returncode == 0
    assert hive(repo, "close", first, second, "--reason", "done", env=env).returncode == 0
    assert hive(repo, "update", second, "-p", "1", env=env).returncode == 4
    (tmp_path / "cells.yaml").write_text("- title: more\n")
    assert hive(repo, "create", "--from", str(tmp_path / "cells.yaml"), env=env).returncode == 4
    assert hive(repo, "reopen", first).returncode == 0  # a person's: no line
    events = read_events(state_dir)
    assert [(e["tool"], e["outcome"]) for e in events] == [
        ("hive_comment", "ok"),
        ("hive_close", "ok"),
        ("hive_close", "ok"),
        ("hive_update", "tool_not_enabled"),
        ("hive_create", "tool_not_enabled"),
    ]
    assert {(e["agent"], e["session"], e["surface"]) for e in events} == {
        ("narrow", "turns", "cli")
    }
    assert events[0]["args"] == {"id": first, "text": "[redacted]"}
    assert [e["args"] for e in events[1:3]] == [
        {"id": first, "reason": "done"},
        {"id": second, "reason": "done"},
    ]
    assert events[3]["error"].startswith("tool hive_update is not enabled for agent narrow")
    assert events[4]["args"] == {"from_file": str(tmp_path / "cells.yaml")}
    shown = hive(repo, "events")
    assert shown.returncode == 0 and "hive_close (cli)" in shown.stdout
    assert json.loads(hive(repo, "--json", "events").stdout)[0]["surface"] == "cli"
