"""One set of input limits for every surface: the library, the CLI and the tool
envelope (which MCP shares) accept and refuse the same values."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive.domain.beads import import_beads
from hive.domain.cells import create_cell
from hive.domain.limits import MAX_GLOB, MAX_SHORT, MAX_TEXT
from hive.domain.reservations import reserve
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.tools.registry import CallContext, call_tool
from tests.inprocess import run_hive

LONG_GLOB = "src/" + "a" * (MAX_GLOB - 4 + 1)  # one character over
OK_GLOB = "src/" + "a" * (MAX_GLOB - 4)
STAMP = "2026-01-01T00:00:00Z"


def _cli(repo: Path, *args: str) -> int:
    return run_hive(["-C", str(repo), *args], module="hive.cli.main").exit_code


def _tool(repo: Path, name: str, args: dict[str, Any]) -> dict[str, Any]:
    outcome = call_tool(CallContext(root=str(repo), agent="alice"), name, args)
    json.dumps(outcome)
    return outcome


def _everywhere_refuses(
    library: Callable[[], object], cli: list[str], tool: tuple[str, dict[str, Any]], repo: Path
) -> None:
    with pytest.raises(InvalidInput):
        library()
    assert _cli(repo, *cli) == 2
    outcome = _tool(repo, *tool)
    # refused by the tool's schema (same number) or by the domain (same check)
    assert outcome.get("code") in ("invalid_arguments", "invalid_input"), outcome


def test_a_glob_over_the_limit_is_refused_everywhere(ws: Workspace, repo: Path) -> None:
    assert len(LONG_GLOB) == MAX_GLOB + 1
    _everywhere_refuses(
        lambda: reserve(ws, paths=[LONG_GLOB]),
        ["reserve", LONG_GLOB],
        ("swarmmail_reserve", {"paths": [LONG_GLOB]}),
        repo,
    )
    _everywhere_refuses(
        lambda: create_cell(ws, title="t", files=[LONG_GLOB]),
        ["create", "t", "--files", LONG_GLOB],
        ("hive_create", {"title": "t", "files": [LONG_GLOB]}),
        repo,
    )
    assert reserve(ws, paths=[OK_GLOB]).granted  # the limit itself is fine
    assert _cli(repo, "create", "t", "--files", OK_GLOB) == 0


@pytest.mark.parametrize("label", ["two\nlines", "tab\there", "x" * (MAX_SHORT + 1), "esc\x1b[31m"])
def test_bad_labels_are_refused_everywhere(ws: Workspace, repo: Path, label: str) -> None:
    _everywhere_refuses(
        lambda: create_cell(ws, title="t", labels=[label]),
        ["create", "t", "--label", label],
        ("hive_create", {"title": "t", "labels": [label]}),
        repo,
    )


def test_text_over_the_limit_is_refused_everywhere(ws: Workspace, repo: Path) -> None:
    long = "x" * (MAX_TEXT + 1)
    _everywhere_refuses(
        lambda: create_cell(ws, title="t", description=long),
        ["create", "t", "--description", long],
        ("hive_create", {"title": "t", "description": long}),
        repo,
    )
    create_cell(ws, title="t", description="x" * MAX_TEXT)


def test_titles_are_one_line_everywhere(ws: Workspace, repo: Path) -> None:
    _everywhere_refuses(
        lambda: create_cell(ws, title="a\nb"),
        ["create", "a\nb"],
        ("hive_create", {"title": "a\nb"}),
        repo,
    )


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("labels", ["two\nlines"], "label must be one line"),
        ("labels", ["x" * (MAX_SHORT + 1)], "label is too long"),
        ("assignee", "a\nb", "assignee must be one line"),
        ("description", "x" * (MAX_TEXT + 1), "description is too long"),
        ("notes", "bell\x07", "notes must not contain control characters"),
        (
            "comments",
            [{"text": "x" * (MAX_TEXT + 1), "created_at": STAMP}],
            r"comments\[0\]\.text is too long",
        ),
    ],
)
def test_a_beads_import_applies_the_same_limits(
    ws: Workspace, repo: Path, tmp_path: Path, field: str, value: Any, problem: str
) -> None:
    from tests.conftest import git

    good = {"id": "bd-1", "title": "ok", "status": "open", "created_at": STAMP}
    bad = {**good, "id": "bd-2", field: value}
    source = tmp_path / "limits.jsonl"
    source.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput, match=f"limits.jsonl:2: bd-2: {problem}"):
        import_beads(ws, path=str(source))
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    result = run_hive(["-C", str(repo), "import", "beads", str(source)], module="hive.cli.main")
    assert result.exit_code == 2 and "limits.jsonl:2:" in result.output
