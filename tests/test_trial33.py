"""Issue 12 tried once more as a demanding new user would (session 33's trial, helper
trial33): each test failed before the fix it names. The command line runs in-process
(``run_hive``, the console script's own entry point) on real repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.inprocess import Outcome, run_hive


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_hive(["-C", str(repo), *args], env=env)


def ok(result: Outcome) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_list_and_ready_fit_80_columns_with_the_long_ids_of_a_beads_import(
    repo: Path, tmp_path: Path
) -> None:
    """Cells imported from beads keep ids like ``bd-beads-polecat-obsidian``: at 80
    columns `hive list` and `hive ready` printed 85-column lines (the assignee column
    kept 16 columns while the title was squeezed below its minimum)."""
    ok(hive(repo, "init", "--prefix", "hv"))
    names = ("obsidian", "jasper", "quartz")
    records = [
        {
            "id": f"bd-beads-polecat-{name}",
            "title": f"Process the pending cleanup of polecat {name} and report back",
            "status": "in_progress" if name == "jasper" else "open",
            "priority": 2,
            "issue_type": "feature",
            "assignee": f"beads/polecats/{name}",
            "created_at": "2026-01-14T10:00:00Z",
            "updated_at": "2026-01-14T10:00:00Z",
        }
        for name in names
    ]
    jsonl = tmp_path / "issues.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    ok(hive(repo, "import", "beads", str(jsonl)))
    wide = {**os.environ, "COLUMNS": "80"}
    for command in ("list", "ready"):
        lines = ok(hive(repo, command, env=wide)).splitlines()
        assert len(lines) == (4 if command == "list" else 3), lines
        assert all(len(line) <= 80 for line in lines), (command, [len(x) for x in lines])
        for line in lines[1:]:
            assert line.split()[0].startswith("bd-beads-polecat-")  # ids whole
            assert line.split()[0].removeprefix("bd-beads-polecat-") in names
            assert "…  Process the pend" in line  # the assignee gave way to the title


INTERNAL = (
    "internal error: PermissionError: [Errno 13] Permission denied: '/somewhere'"
    " (set HIVE_DEBUG=1 for details)"
)


def _fault(*args: object, **kwargs: object) -> object:
    raise PermissionError(13, "Permission denied", "/somewhere")


def _ctrl_c(*args: object, **kwargs: object) -> object:
    raise KeyboardInterrupt


def test_an_internal_error_under_json_is_a_json_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 70 printed its line on stderr only, also under --json: a program that asked
    for JSON read nothing on stdout (every other error is {"error", "code"} there)."""
    from hive.cli import entry, main

    ok(hive(repo, "init"))
    monkeypatch.setattr(entry, "dispatch", _fault)  # a fault in a lean answer
    monkeypatch.setattr(main, "focused_app", _fault)  # and where the full CLI builds one
    for module in ("hive", "hive.cli.main"):
        done = run_hive(["-C", str(repo), "--json", "stats"], module=module)
        assert done.returncode == 70, done
        assert json.loads(done.stdout) == {"error": INTERNAL, "code": "internal_error"}
        assert done.stderr == INTERNAL + "\n"
        plain = run_hive(["-C", str(repo), "stats"], module=module)
        assert (plain.returncode, plain.stdout, plain.stderr) == (70, "", INTERNAL + "\n")


def test_ctrl_c_under_json_is_a_json_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C ended a command with 130 and 'interrupted' on stderr, also under --json:
    stdout stayed empty, where every other error is {"error", "code"}."""
    from hive.cli import entry, main

    ok(hive(repo, "init"))
    monkeypatch.setattr(entry, "dispatch", _ctrl_c)
    monkeypatch.setattr(main, "focused_app", _ctrl_c)
    for module in ("hive", "hive.cli.main"):
        done = run_hive(["-C", str(repo), "stats", "--json"], module=module)
        assert (done.returncode, done.stderr) == (130, "interrupted\n"), done
        assert json.loads(done.stdout) == {"error": "interrupted", "code": "interrupted"}
        plain = run_hive(["-C", str(repo), "stats"], module=module)
        assert (plain.returncode, plain.stdout, plain.stderr) == (130, "", "interrupted\n")
        server = run_hive(["-C", str(repo), "--json", "mcp"], module=module, input="")
        assert (server.returncode, server.stdout, server.stderr) == (0, "", "")  # stopped
