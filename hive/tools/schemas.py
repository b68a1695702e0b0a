"""Tool schemas for MCP, OpenAI and Anthropic, generated from the registry and kept lean
(agents pay for every schema character in context)."""

from __future__ import annotations

import json
from typing import Any

from hive.tools.registry import Tool, tools

FORMATS = ("mcp", "openai", "anthropic")


def input_schema(tool: Tool) -> dict[str, Any]:
    """The argument model's JSON schema without titles, null-unions or noise."""
    schema = tool.args.model_json_schema()
    definitions = schema.pop("$defs", {})
    lean: dict[str, Any] = _lean(_inline(schema, definitions))
    return lean


def _inline(node: Any, definitions: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            return _inline(definitions[ref.split("/")[-1]], definitions)
        return {key: _inline(value, definitions) for key, value in node.items()}
    if isinstance(node, list):
        return [_inline(item, definitions) for item in node]
    return node


# Schema keys left out of what agents are given: titles (the names say it), and the
# lengths of strings, guards against runaway input that the server checks on every call
# (a value over one is refused as invalid_arguments naming the limit), which cost ~700
# tokens of every agent's context for ~170 strings.
UNPUBLISHED = ("title", "maxLength", "minLength")


def _lean(node: Any) -> Any:
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    options = node.get("anyOf")
    if isinstance(options, list):
        concrete = [o for o in options if o != {"type": "null"}]
        if len(concrete) == 1 and len(concrete) < len(options):
            node = {key: value for key, value in node.items() if key != "anyOf"}
            node = {**concrete[0], **node}
    node = {k: v for k, v in node.items() if k not in UNPUBLISHED}
    if node.get("default", 0) is None:
        node.pop("default")
    if node.get("additionalProperties") is False and "properties" in node:
        node.pop("additionalProperties")
    return {
        key: {name: _lean(sub) for name, sub in value.items()}
        if key == "properties" and isinstance(value, dict)
        else _lean(value)
        for key, value in node.items()
    }


def render(format: str, only: list[Tool] | None = None) -> list[dict[str, Any]]:
    """Every tool's schema (``only``: those tools) in ``format``."""
    if format not in FORMATS:
        from hive.errors import InvalidInput

        raise InvalidInput(f"unknown schema format {format!r}: use {', '.join(FORMATS)}")
    rendered = []
    for tool in tools() if only is None else only:
        schema = input_schema(tool)
        if format == "mcp":
            rendered.append(
                {"name": tool.name, "description": tool.description, "inputSchema": schema}
            )
        elif format == "openai":
            rendered.append(
                {
                    "type": "function",
                    "function": {
                        "name": tool.name,
                        "description": tool.description,
                        "parameters": schema,
                    },
                }
            )
        else:
            rendered.append(
                {"name": tool.name, "description": tool.description, "input_schema": schema}
            )
    return rendered


def token_estimate(format: str) -> int:
    """Characters of the compact JSON divided by 4."""
    return len(json.dumps(render(format), separators=(",", ":"))) // 4
