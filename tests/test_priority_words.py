"""A tool call's priority as the command line takes it: 0-4 or ``P0``-``P4`` in any case
(``hive_create``, ``hive_update``, ``hive_query``, ``hive_create_epic``'s epic and
subtasks), published so in the schemas; out of range refused naming the range."""

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


@pytest.mark.parametrize("given", ["P7", "p-1", "Px", 9, -1, "high", "", "2", True, 2.5])
def test_out_of_range_is_refused_naming_the_range(ws: Workspace, repo: Path, given: object) -> None:
    head = git(repo, "rev-parse", "HEAD")
    for name, args in (("hive_create", {"title": "x"}), ("hive_query", {})):
        refused = _call(repo, name, {**args, "priority": given})
        assert refused["code"] == "invalid_arguments" and refused["field"] == "priority"
        if given != "2":  # out of range, or no priority at all (high): what is taken
            said = f"invalid argument 'priority': invalid priority {given!r}: use 0-4"
            assert said in refused["error"] and "P0-P4" in refused["error"], refused
            assert "Value error" not in refused["error"], refused
        else:  # a number in quotes: without them, as every number argument
            assert "send a whole number without quotes" in refused["error"], refused
    assert git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])
def test_a_word_is_refused_in_the_same_words_by_the_cli_and_the_tool(
    ws: Workspace, repo: Path, module: str
) -> None:
    """hive_update with priority "high" said "Input should be a valid integer; send a
    whole number without quotes", not what a priority may be; it says what the command
    line says: 0-4 or P0-P4."""
    from tests.inprocess import run_hive

    cell = _call(repo, "hive_create", {"title": "t"})["result"]["id"]
    for word in ("high", "P5", "urgent"):
        tool = _call(repo, "hive_update", {"id": cell, "priority": word})["error"]
        done = run_hive(["-C", str(repo), "update", cell, "-p", word], module=module)
        assert done.returncode == 2, done.stderr
        said = done.stderr.removeprefix("error: ").strip()
        assert said == f"invalid priority {word!r}: use 0-4 (0 is most urgent) or P0-P4"
        assert tool == f"hive_update: invalid argument 'priority': {said}"


def test_the_schemas_say_so_in_a_few_characters() -> None:
    for name in ("hive_create", "hive_update", "hive_query"):
        schema = schema_of(name)
        for taken in ("P2", "p4", 0, 4):
            jsonschema.validate({"id": "hv-1", "title": "t", "priority": taken}, schema)
        for refused in ("P5", "urgent", "2", 5, -1):
            with pytest.raises(jsonschema.ValidationError):
                jsonschema.validate({"id": "hv-1", "title": "t", "priority": refused}, schema)
        assert len(json.dumps(schema["properties"]["priority"])) < 140, name


def test_create_epic_takes_p_words_for_the_epic_and_its_subtasks(ws: Workspace, repo: Path) -> None:
    """hive_create_epic took its priorities (the epic's, each subtask's) only as numbers
    while hive_create took P1."""
    subtasks = [{"title": "a", "priority": "p0"}, {"title": "b", "priority": 3}, {"title": "c"}]
    made = _call(
        repo, "hive_create_epic", {"epic_title": "E", "priority": " P1 ", "subtasks": subtasks}
    )
    cells = made["result"]
    assert [cell["priority"] for cell in cells] == [1, 0, 3, 1], made  # c: the epic's
    for given in ("P7", 9):
        for args in ({"priority": given}, {"subtasks": [{"title": "a", "priority": given}]}):
            call = {"epic_title": "E", "subtasks": [{"title": "a"}], **args}
            refused = _call(repo, "hive_create_epic", call)
            assert refused["code"] == "invalid_arguments", refused
            assert "0-4" in refused["error"] and "P0-P4" in refused["error"], refused
    schema = schema_of("hive_create_epic")
    for taken in ("P2", "p4", 0):
        jsonschema.validate(
            {"epic_title": "e", "subtasks": [{"title": "a", "priority": taken}], "priority": taken},
            schema,
        )
    for wrong in ("P5", "2", 5):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(
                {"epic_title": "e", "subtasks": [{"title": "a"}], "priority": wrong}, schema
            )
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(
                {"epic_title": "e", "subtasks": [{"title": "a", "priority": wrong}]}, schema
            )


def test_epic_create_on_the_command_line_takes_a_subtask_priority_word(
    ws: Workspace, repo: Path
) -> None:
    from tests.inprocess import run_hive

    subtask = json.dumps({"title": "a", "priority": "P3"})
    done = run_hive(
        ["-C", str(repo), "epic", "create", "E", "-p", "P1", "--subtask", subtask, "--json"]
    )
    assert done.returncode == 0, done.stderr
    assert [cell["priority"] for cell in json.loads(done.stdout)] == [1, 3]


@pytest.mark.parametrize(
    ("key", "given"),
    [("priority", "2"), ("estimated_complexity", "3"), ("dependencies", ["0"])],
)
def test_a_subtask_s_quoted_number_is_refused_as_hive_create_refuses_it(
    ws: Workspace, repo: Path, key: str, given: object
) -> None:
    """A subtask of hive_create_epic took "2" for a number (its model was not strict)
    while hive_create, and the schema both tools publish, refuse it."""
    head = git(repo, "rev-parse", "HEAD")
    subtasks = [{"title": "a"}, {"title": "b", key: given}]
    refused = _call(repo, "hive_create_epic", {"epic_title": "E", "subtasks": subtasks})
    assert refused["code"] == "invalid_arguments", refused
    assert refused["field"].startswith(f"subtasks.1.{key}"), refused
    assert "send a whole number without quotes" in refused["error"], refused
    assert git(repo, "rev-parse", "HEAD") == head  # nothing written
    whole = {**subtasks[1], key: 2 if key != "dependencies" else [0]}
    taken = _call(repo, "hive_create_epic", {"epic_title": "E", "subtasks": [subtasks[0], whole]})
    assert len(taken["result"]) == 3, taken


def test_epic_create_on_the_command_line_reads_a_subtask_s_numbers_as_text(
    ws: Workspace, repo: Path
) -> None:
    """A person's --subtask JSON is typed text, as every command-line value: "1" is 1."""
    from tests.inprocess import run_hive

    subtask = json.dumps({"title": "b", "priority": "1", "dependencies": ["0"]})
    done = run_hive(
        ["-C", str(repo), "epic", "create", "E", "--subtask", "a", "--subtask", subtask, "--json"]
    )
    assert done.returncode == 0, done.stderr
    cells = json.loads(done.stdout)
    assert [cell["priority"] for cell in cells] == [2, 2, 1]
    assert cells[2]["dependencies"] == [{"type": "blocks", "target": cells[1]["id"]}], cells[2]
