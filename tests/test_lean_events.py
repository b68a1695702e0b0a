"""An agent's command answered on a lean path (ready, list, show, create, update, close,
reserve, release, mail send/inbox/read) is logged in the event log as the full path
logs it (a tool call's line, ``"surface": "cli"``): same keys in the same order, same
tool, arguments, digest and outcome. They left no line at all in a hive without an
agent policy, while the full path logged every one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hive.cli import entry
from tests.conftest import agent_env, git
from tests.inprocess import run_hive

AGENT = "ann"
VARYING = ("ts", "duration_ms", "pid", "session")  # of each process, each run
FORMS = [
    ["ready"],
    ["ready", "-n", "3"],
    ["ready", "--all"],
    ["ready", "--limit=10"],  # the tool's own page: left out of the arguments
    ["list", "-s", "open", "-p", "P1", "-t", "Task"],
    ["list", "--all", "--limit", "20", "--label", "x"],
    ["--json", "list", "--deleted", "--assignee", AGENT],
    ["show", "{shown}"],
    ["create", "made", "-t", "Bug", "-p", "P0", "-d", "why", "-l", "a,b", "-l", "c"],
    ["create", "plain", "--assignee", AGENT],
    ["update", "{cell}", "-s", "in_progress", "-p", "3", "--title", "T", "--add-label", "x"],
    ["update", "{cell}", "--append-notes", "more", "--remove-label", "x", "-t", "Chore"],
    ["close", "{cell}", "-r", "done"],
    ["reserve", "src/{name}.py", "--reason", "work", "--ttl", "60", "--shared"],
    ["release", "src/{name}.py"],
    ["mail", "send", AGENT, "-s", "hi", "-b", "body", "--importance", "high", "--ack-required"],
    ["mail", "inbox", "-n", "2", "--unread"],
    ["mail", "read", "{message}"],
    ["mail", "read", "999"],  # refused: its error is in the line
]


def _last_event(repo: Path) -> dict[str, Any]:
    lines = (repo / ".git" / "hive" / "events.jsonl").read_text().splitlines()
    event: dict[str, Any] = json.loads(lines[-1])
    return event


def _events(repo: Path) -> int:
    path = repo / ".git" / "hive" / "events.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _lean(repo: Path, argv: list[str], capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """``argv`` answered by the lean path, in this process; the line it logged."""
    before = _events(repo)
    capsys.readouterr()
    code = entry.dispatch(entry.parse(["-C", str(repo), *argv]))
    assert code is not None, f"{argv}: left to the full CLI"
    capsys.readouterr()
    assert _events(repo) == before + 1, argv
    return _last_event(repo)


def _full(repo: Path, argv: list[str]) -> dict[str, Any]:
    """``argv`` run by the full CLI; the line it logged."""
    before = _events(repo)
    run_hive(["-C", str(repo), *argv], env=agent_env(repo, AGENT), module="hive.cli.main")
    assert _events(repo) == before + 1, argv
    return _last_event(repo)


def _made(repo: Path, title: str) -> str:
    done = run_hive(["-C", str(repo), "create", title, "--json"], env=agent_env(repo, AGENT))
    cell: str = json.loads(done.stdout)["id"]
    return cell


def _said(event: dict[str, Any], values: dict[str, str]) -> str:
    """The line without what varies, the run's own values named as in FORMS."""
    text = json.dumps({k: v for k, v in event.items() if k not in VARYING})
    for name, value in values.items():
        text = text.replace(value, "{" + name + "}")
    return text.replace(json.dumps(event["args_digest"]), '"DIGEST"')


def test_an_agents_lean_commands_are_logged_as_the_full_path_logs_them(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hive(["-C", str(repo), "init", "--prefix", "hv"])
    run_hive(["-C", str(repo), "agent", "register", AGENT])
    for key, value in agent_env(repo, AGENT, {}).items():
        monkeypatch.setenv(key, value)
    shown = _made(repo, "shown")
    run_hive(["-C", str(repo), "mail", "send", AGENT, "-s", "to read", "--json"])
    message = str(
        json.loads(run_hive(["-C", str(repo), "mail", "inbox", "--json"]).stdout)[0]["id"]
    )
    for form in FORMS:
        runs = []
        for name in ("lean", "full"):
            values = {"shown": shown, "message": message, "name": name}
            if "{cell}" in form:
                values["cell"] = _made(repo, f"for {name}")
            argv = [word.format(**values) for word in form]
            event = _lean(repo, argv, capsys) if name == "lean" else _full(repo, argv)
            assert event["agent"] == AGENT and event["surface"] == "cli", event
            assert event["session"].startswith("cli:") and event["pid"]
            runs.append((list(event), _said(event, values), event))
        (lean_keys, lean_said, lean), (full_keys, full_said, full) = runs
        assert lean_keys == full_keys and list(lean["args"]) == list(full["args"]), form
        assert lean_said == full_said, form
        if "{" not in json.dumps(lean["args"]):  # nothing of the run's own in them
            assert lean["args_digest"] == full["args_digest"], form
    assert _last_event(repo)["outcome"] == "not_found" and "no message #999" in full["error"]


def test_a_persons_lean_command_is_no_tool_call(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    run_hive(["-C", str(repo), "init", "--prefix", "hv"])
    for key in ("HIVE_AGENT", "HIVE_AGENT_TOKEN"):
        monkeypatch.delenv(key, raising=False)
    for argv in (["create", "mine"], ["ready"], ["list"]):
        assert entry.dispatch(entry.parse(["-C", str(repo), *argv])) == 0
    assert _events(repo) == 0
    assert git(repo, "log", "-1", "--format=%s").startswith("hive: create")


@pytest.mark.parametrize(
    "value",
    [
        {"b": 1, "a": [True, None, 2.5, -0.0, 1e300, 'é\u2028\x00"\\'], "c": {"d": ()}},
        ["x", float("nan"), float("inf"), 10**30, {"": ""}],
        {"ts": 1795826795.2672894, "duration_ms": 12.75, "args": {"paths": ["src/*.py"]}},
        {1: "a key json turns into a string"},
        {"when": Path("/tmp")},  # not plain: json's default
    ],
)
def test_event_lines_are_json_s_own_bytes(value: object) -> None:
    """hive.eventargs writes what ``json.dumps`` writes (both paths' lines and digests
    depend on it), without importing ``json`` for plain values."""
    from hive import eventargs

    for ascii_only in (True, False):
        for sort_keys in (False, True):
            if sort_keys and isinstance(value, dict) and 1 in value:
                continue
            expected = json.dumps(
                value,
                separators=(",", ":"),
                ensure_ascii=ascii_only,
                sort_keys=sort_keys,
                default=str,
            )
            given = eventargs.dumps(
                value, ensure_ascii=ascii_only, sort_keys=sort_keys, default=str
            )
            assert given == expected
