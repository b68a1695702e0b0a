"""Text hive did not write itself (a cell file edited by hand) reaches a terminal as no
command, on every output path: the JSON encoders (``--json`` of the lean paths and the
full CLI, the tool envelope's transcript, the MCP server's replies, the JSON errors)
write the control characters JSON leaves raw (DEL and U+0080-U+009F: U+009B is CSI to
a terminal) as ``\\u`` escapes, and the plain-text answers show every control character
as ``?``. Each encoder does it itself (``hive.jsontext``): no caller escapes, so none
can forget to. The lean paths and the full CLI give the same bytes."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.cli.output import json_line
from hive.jsontext import dumps
from hive.serve.app import JSONResponse
from hive.store.celldoc import json_of, printed_by_python
from tests.conftest import copy_repo, git, isolated_env, make_repo
from tests.hivefork import hive_command
from tests.inprocess import Outcome, run_hive
from tests.test_tools_surfaces import OPENING

CELL = "hv-ctl001"
# a colour, the bell, a line separator, CSI, NEL and DEL: written by hand into a title
TITLE = "red \x1b[31m bell \x07 sep \u2028 csi \x9b nel \x85 del \x7f end"
WRITTEN = "hv-ctl002"  # its description only: a write refuses a title it would refuse
RAW_IN_JSON = ("\x7f", "\x85", "\x9b")  # what JSON itself would leave raw


def _hand_written(repo: Path, cell_id: str, title: str) -> None:
    cell = {
        "id": cell_id,
        "title": title,
        "type": "task",
        "status": "open",
        "priority": 1,
        "description": f"desc {TITLE}",
        "created_at": "2026-11-01T10:00:00.000Z",
        "updated_at": "2026-11-01T10:00:00.000Z",
        "created_by": "maker",
    }
    path = repo / ".hive" / "cells" / "c" / f"{cell_id}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cell, indent=2))  # JSON is YAML
    git(repo, "add", str(path))
    git(repo, "commit", "-qm", "a cell written by hand", "--no-verify")


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with isolated_env(tmp_path_factory):
        repo = make_repo(tmp_path_factory.mktemp("inert") / "repo")
        assert run_hive(["-C", str(repo), "init"]).returncode == 0
        _hand_written(repo, CELL, TITLE)
        _hand_written(repo, WRITTEN, "a title hive takes")
        yield repo


def assert_inert(text: str, *, json_text: bool) -> None:
    """No control character but the line feed (and in JSON, U+2028 as JSON leaves it)."""
    controls = [c for c in text if (c < " " and c != "\n") or "\x7f" <= c <= "\x9f"]
    assert controls == [], text
    if not json_text:
        assert "\u2028" not in text, text


def both(repo: Path, *args: str, stdin: str = "") -> Outcome:
    """The lean answer, checked to be the full CLI's byte for byte."""
    lean = run_hive(["-C", str(repo), *args], input=stdin)
    full = run_hive(["-C", str(repo), *args], input=stdin, module="hive.cli.main")
    assert (lean.returncode, lean.stdout, lean.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    ), args
    return lean


@pytest.mark.parametrize(
    "args",
    [
        ["--json", "show", CELL],
        ["--json", "list", "-s", "all"],
        ["--json", "ready"],
        ["--json", "list", "--parent", CELL],
    ],
    ids=["show", "list", "ready", "empty"],
)
def test_json_answers_escape_what_json_leaves_raw(made: Path, args: list[str]) -> None:
    done = both(made, *args)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, json_text=True)
    answer = json.loads(done.stdout)
    cells = answer if isinstance(answer, list) else [answer]
    assert [cell["title"] for cell in cells if cell["id"] == CELL] == (
        [] if "--parent" in args else [TITLE]
    )


@pytest.mark.parametrize("args", [["show", CELL], ["list"], ["ready"]])
def test_plain_answers_show_each_control_character_as_a_mark(made: Path, args: list[str]) -> None:
    done = both(made, *args)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, json_text=False)
    assert "red ?[31m bell ? sep ? csi ? nel ? del ? end" in done.stdout


def test_a_json_error_escapes_them_too(made: Path) -> None:
    done = both(made, "--json", "\x9bgo")  # a command word no command has
    assert done.returncode == 2
    assert_inert(done.stdout, json_text=True)
    assert "go'" in json.loads(done.stdout)["error"]  # named (shown as hive shows it)


def test_a_write_answers_with_them_escaped(made: Path, tmp_path: Path) -> None:
    for module in ("hive", "hive.cli.main"):  # the lean write and the full CLI's
        repo = copy_repo(made, tmp_path / module)
        args = ["-C", str(repo), "--json", "update", WRITTEN, "-p", "2"]
        done = run_hive(args, module=module)
        assert done.returncode == 0, done.stderr
        assert_inert(done.stdout, json_text=True)
        answer = json.loads(done.stdout)
        assert (answer["description"], answer["priority"]) == (f"desc {TITLE}", 2)


def test_the_tool_envelope_escapes_them(made: Path) -> None:
    calls = json.dumps({"tool_calls": [{"name": "hive_query", "args": {"id": CELL}}]})
    done = both(made, "tools", "run", stdin=calls)
    assert done.returncode == 0, done.stderr
    assert_inert(done.stdout, json_text=True)
    (result,) = json.loads(done.stdout)["results"]
    assert result["result"]["title"] == TITLE


def test_the_mcp_server_escapes_them(made: Path) -> None:
    call = {"name": "hive_query", "arguments": {"id": CELL}}
    lines = [
        *OPENING,
        json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}),
    ]
    server = subprocess.run(
        hive_command(["-C", str(made), "--actor", "raw", "mcp"]),
        input=("\n".join(lines) + "\n").encode(),
        capture_output=True,
        timeout=120,
        check=False,
    )
    replies = [json.loads(line) for line in server.stdout.splitlines()]
    (answer,) = [reply for reply in replies if reply.get("id") == 2]
    assert answer["result"]["structuredContent"]["title"] == TITLE
    assert json.loads(answer["result"]["content"][0]["text"])["title"] == TITLE
    assert_inert(server.stdout.decode(), json_text=True)


def test_each_encoder_escapes_them() -> None:
    """The encoders themselves (every JSON answer is made by one of these)."""
    value = {"title": TITLE, "list": [TITLE]}
    for text in (
        dumps(value),
        dumps(value, indent=2),
        json_of(value).decode(),
        printed_by_python(value).decode(),
        json_line(value).decode(),
        bytes(JSONResponse(value).body).decode(),  # the web board's JSON API
    ):
        assert json.loads(text) == value
        assert not any(raw in text for raw in RAW_IN_JSON), text
