"""A tool call's priority as the command line takes it: 0-4 or ``P0``-``P4`` in any case
(``hive_create``, ``hive_update``, ``hive_query``), published so in the schemas; out of
range refused naming the range."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool
from tests.conftest import git
from tests.test_tool_schema_budget import schema_of


def _call(repo: Path, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return call_tool(CallContext(root=str(repo), agent="alice"), name, args)


def test_p_words_are_taken_as_the_command_line_takes_them(ws: Workspace, repo: Path) -> None:
    made = [
        _call(repo, "hive_create", {"title": t, "priority": p})
        for t, p in (("a", "P1"), ("b", "p0"), ("c", 3), ("d", " P4 "))
    ]
    assert [m["result"]["priority"] for m in made] == [1, 0, 3, 4], made
    cell = made[0]["result"]["id"]
    updated = _call(repo, "hive_update", {"id": cell, "priority": "p3"})
    assert updated["result"]["priority"] == 3, updated
    found = _call(repo, "hive_query", {"priority": "P0"})["result"]
    assert [row["id"] for row in found] == [made[1]["result"]["id"]]
    stored = git(repo, "show", f"HEAD:.hive/cells/{cell.split('-')[1][0]}/{cell}.yaml")
    assert "priority: 3" in stored  # written as the number, as ever


@pytest.mark.parametrize("given", ["P7", "p-1", "Px", 9, -1, "high", "", "2"])
def test_out_of_range_is_refused_naming_the_range(ws: Workspace, repo: Path, given: object) -> None:
    head = git(repo, "rev-parse", "HEAD")
    for name, args in (("hive_create", {"title": "x"}), ("hive_query", {})):
        refused = _call(repo, name, {**args, "priority": given})
        assert refused["code"] == "invalid_arguments" and refused["field"] == "priority"
        if isinstance(given, int) or given.startswith(("P", "p")):  # a priority out of range
            assert "0-4" in refused["error"] and "P0-P4" in refused["error"], refused
        else:  # no priority at all: a number without quotes, as before
            assert "send a whole number without quotes" in refused["error"], refused
    assert git(repo, "rev-parse", "HEAD") == head


def test_the_schemas_say_so_in_a_few_characters() -> None:
    for name in ("hive_create", "hive_update", "hive_query"):
        schema = schema_of(name)
        for taken in ("P2", "p4", 0, 4):
            jsonschema.validate({"id": "hv-1", "title": "t", "priority": taken}, schema)
        for refused in ("P5", "urgent", "2", 5, -1):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({"id": "hv-1", "title": "t", "priority": refused}, schema)
        assert len(json.dumps(schema["properties"]["priority"])) < 140, name
