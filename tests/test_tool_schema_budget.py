"""The tool schemas' token budget (issue 12): every agent pays for every schema character
in context, so the schemas hold what an agent needs to call a tool right the first time
and leave the rest to the server's checks, the command line's help and docs/tools.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from hive.domain.workspace import Workspace
from hive.tools.registry import CallContext, call_tool, tools
from hive.tools.schemas import FORMATS, input_schema, render, token_estimate
from tests.seedkit import cli


def schema_of(name: str) -> dict[str, Any]:
    return input_schema(next(tool for tool in tools() if tool.name == name))


@pytest.mark.parametrize("format", FORMATS)
def test_every_format_keeps_room_under_the_8000_token_ceiling(format: str) -> None:
    """7,000 (characters / 4), compact and with json's default spacing alike: openai was at
    7,973 of 8,000, and the next field anyone added would have broken the build."""
    assert token_estimate(format) <= 7000, format
    assert len(json.dumps(render(format))) / 4 <= 7000, format


def test_each_format_is_a_valid_schema_for_its_runtime() -> None:
    """Every input schema is a JSON Schema object (MCP's inputSchema, OpenAI's function
    parameters, Anthropic's input_schema), and takes what the server takes."""
    for entry in render("openai"):
        assert entry["type"] == "function" and entry["function"]["parameters"]["type"] == "object"
    for format, key in (("mcp", "inputSchema"), ("anthropic", "input_schema")):
        for entry in render(format):
            assert entry[key]["type"] == "object", (format, entry["name"])
            jsonschema.Draft202012Validator.check_schema(entry[key])
    accepted = {
        "hive_create_epic": {"epic_title": "e", "subtasks": [{"title": "a"}], "strategy": "auto"},
        "swarm_plan_prompt": {"task": "t", "strategy": "risk-based"},
        "swarm_complete": {"cell_id": "hv-1", "summary": "s", "evaluation": {"passed": True}},
        "delegate_task": {"targetAgent": "b", "taskPayload": {"instruction": "x"}},
        "coord_enqueue": {"kind": "k", "payload": {"a": [1]}},
    }
    for name, args in accepted.items():
        jsonschema.validate(args, schema_of(name))
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"task": "t", "strategy": "none"}, schema_of("swarm_plan_prompt"))


def test_what_agents_assume_is_left_out_and_the_server_still_checks(
    ws: Workspace, repo: Path
) -> None:
    """Lengths of lists, guards (a maximum of 1,000 or more), a lower bound of 0 or 1
    alone, defaults of false/0/"" and JSON Schema's own defaults are not published; the
    bounds an agent chooses within are; the server refuses a value past any of them."""
    published = json.dumps(render("mcp"))
    for left_out in ('"maxItems"', '"minItems"', '"title": "', '"default": false', '"default": ""'):
        assert left_out not in published, left_out
    assert '"default": 0,' not in published and '"additionalProperties": {}' not in published
    assert '{"type": "null"}' not in published
    assert schema_of("hive_query")["properties"]["limit"] == {"default": 20, "type": "integer"}
    assert schema_of("hive_create")["properties"]["priority"]["maximum"] == 4
    assert schema_of("context_search")["properties"]["limit"]["maximum"] == 100
    assert schema_of("fs_write")["properties"]["create_dirs"]["default"] is True
    strategy = schema_of("hive_create_epic")["properties"]["strategy"]
    assert strategy == {"enum": [*STRATEGIES, "auto"], "type": "string"}

    ctx = CallContext(root=str(repo), agent="alice")
    refused = {
        "hive_query": ({"limit": 100_001}, "less than or equal to 100000"),
        "hive_ready": ({"limit": 0}, "greater than or equal to 1"),
        "swarmmail_reserve": ({"paths": []}, "at least 1 item"),
        "swarmmail_send": ({"subject": "s", "to": ["a"] * 65}, "at most 64 items"),
        "fs_list": ({"max_results": 5001}, "less than or equal to 5000"),
    }
    for name, (args, limit) in refused.items():
        outcome = call_tool(ctx, name, args)
        assert outcome["code"] == "invalid_arguments" and limit in outcome["error"], outcome


STRATEGIES = ["file-based", "feature-based", "risk-based", "research-based"]


def test_help_for_people_only_stays_on_the_command_line(ws: Workspace, repo: Path) -> None:
    """A description that restates its field's name, or a convention docs/tools.md gives
    once (a cell id's unique prefix, reason beside force), is not in the schemas; the
    command's --help still shows it."""
    comment = schema_of("hive_comment")["properties"]
    assert "description" not in comment["id"] and "description" not in comment["text"]
    assert "description" not in schema_of("hive_close")["properties"]["reason"]
    assert "coordinators only" in schema_of("hive_close")["properties"]["force"]["description"]
    code, out = cli(repo, "comment", "--help")
    assert code == 0 and "unique prefix" in out and "the comment" in out
    code, out = cli(repo, "close", "--help")
    assert code == 0 and "a coordinator must give one" in out
