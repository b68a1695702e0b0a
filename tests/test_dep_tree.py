"""``hive dep tree`` both ways (as beads' ``bd dep tree --direction`` / ``--reverse``): what
a cell depends on (down, the default), what depends on it (up) or both; text, ``--json``
and the ``hive_dep`` tool alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hive.domain.cells import create_cell, delete_cells, dep_tree
from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool
from tests.inprocess import run_hive


def _graph(ws: Workspace) -> tuple[str, str, str, str]:
    """base <- mid (blocks) <- top (blocks); top relates to base; gone (deleted) waited
    on base."""
    base = create_cell(ws, title="base").id
    mid = create_cell(ws, title="mid", deps=[base]).id
    top = create_cell(ws, title="top", deps=[mid, f"related:{base}"]).id
    gone = create_cell(ws, title="gone", deps=[base]).id
    delete_cells(ws, cell_ids=[gone])
    return base, mid, top, gone


def _ids(node: dict[str, Any], key: str) -> list[tuple[str, str | None, list[Any]]]:
    return [(child["id"], child["type"], _ids(child, key)) for child in node[key]]


def test_up_lists_what_depends_on_a_cell_recursively_with_each_type(ws: Workspace) -> None:
    base, mid, top, _ = _graph(ws)
    up = dep_tree(ws, cell_id=base, direction="up").model_dump(mode="json")
    # the deleted cell that waited on base is not listed (as hive show's "blocks")
    assert _ids(up, "dependents") == [(mid, "blocks", [(top, "blocks", [])]), (top, "related", [])]
    assert "depends_on" not in up and "depends_on" not in up["dependents"][0]
    down = dep_tree(ws, cell_id=top).model_dump(mode="json")
    assert "dependents" not in down  # the default tree is as it was
    chain = [(mid, "blocks", [(base, "blocks", [])]), (base, "related", [])]
    assert _ids(down, "depends_on") == chain
    both = dep_tree(ws, cell_id=mid, direction="both").model_dump(mode="json")
    assert _ids(both, "depends_on") == [(base, "blocks", [])]
    assert _ids(both, "dependents") == [(top, "blocks", [])]


def _hive(repo: Path, *args: str) -> tuple[int, str, str]:
    done = run_hive(["-C", str(repo), *args])
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr, done.stderr
    return done.returncode, done.stdout, done.stderr


def test_the_command_line_reverse_direction_and_json(ws: Workspace, repo: Path) -> None:
    base, mid, top, _ = _graph(ws)
    code, out, _ = _hive(repo, "dep", "tree", base, "--reverse")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == f"{base} [open] base"
    assert lines[1].endswith(f"{mid} [open] mid (blocks)") and lines[1].startswith("├── ")
    assert lines[2].endswith(f"{top} [open] top (blocks)") and lines[2].startswith("│   └── ")
    assert lines[3].endswith(f"{top} [open] top (related)") and len(lines) == 4
    code, out, _ = _hive(repo, "dep", "tree", mid, "--direction", "both")
    assert code == 0
    assert [line.strip("│├└─ ") for line in out.splitlines()] == [
        f"{mid} [open] mid",
        "depends on",
        f"{base} [open] base (blocks)",
        "dependents",
        f"{top} [open] top (blocks)",
    ]
    code, out, _ = _hive(repo, "dep", "tree", base, "--direction", "both")
    assert code == 0  # a heading with nothing under it says so
    assert out.splitlines()[1:3] == ["├── depends on (none)", "└── dependents"]
    code, out, _ = _hive(repo, "dep", "tree", top, "--direction", "both")
    assert out.splitlines()[-1] == "└── dependents (none)"
    code, out, _ = _hive(repo, "dep", "tree", base, "--direction", "both", "--json")
    assert code == 0 and json.loads(out)["depends_on"] == []
    code, out, _ = _hive(repo, "dep", "tree", base, "--direction", "up", "--json")
    assert code == 0 and [n["id"] for n in json.loads(out)["dependents"]] == [mid, top]
    code, _, err = _hive(repo, "dep", "tree", base, "--reverse", "--direction", "both")
    assert code == 2 and "reverse is the same as direction up" in err
    code, _, err = _hive(repo, "dep", "tree", base, "--direction", "sideways")
    assert code == 2 and "'down', 'up' or 'both'" in err
    code, _, err = _hive(repo, "dep", "add", base, top, "--reverse")
    assert code == 2 and "--reverse" in err  # only dep tree offers it


def test_the_tool_takes_the_direction(ws: Workspace, repo: Path) -> None:
    base, mid, top, _ = _graph(ws)
    ctx = CallContext(root=str(repo), agent="alice")
    outcome = call_tool(ctx, "hive_dep", {"id": base, "direction": "up"})
    assert [n["id"] for n in outcome["result"]["dependents"]] == [mid, top], outcome
    refused = call_tool(ctx, "hive_dep", {"id": base, "direction": "sideways"})
    assert refused["code"] == "invalid_arguments", refused
