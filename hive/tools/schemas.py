"""Tool schemas for MCP, OpenAI and Anthropic, generated from the registry and kept lean
(agents pay for every schema character in context)."""

from __future__ import annotations

import json
from typing import Any

from hive.tools.registry import Tool, tools

FORMATS = ("mcp", "openai", "anthropic")

# Estimated tokens (characters / 4) every format's schemas stay within, with json's default
# spacing or compact: issue 12's ceiling is 8,000; this keeps room for the tools to come.
BUDGET = 7_000


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


# What the schemas leave out is what an agent does not need to call a tool right the
# first time; the server still checks all of it on every call and refuses a value out of
# bounds as invalid_arguments, naming the limit. Keys never published: titles (the names
# say it) and the lengths of strings and lists (guards against runaway input).
UNPUBLISHED = ("title", "maxLength", "minLength", "maxItems", "minItems")

# A maximum at or above this is a guard no call comes near (a page of 5,000 matches, a
# lease of a week, a read of 1 MB), left out; a bound an agent chooses within (priority
# 0-4, a percentage, a page of at most 100) is published.
GUARD_BOUND = 1_000


def _lean(node: Any) -> Any:
    """``node`` as agents are given it: without UNPUBLISHED keys and guards; without
    what an agent assumes untold (an optional field's null: a missing argument is its
    default; a default of false, 0 or ""; a lower bound of 0 or 1 alone: counts are not
    negative, pages and ids start at 1; additionalProperties that JSON Schema assumes);
    a union of string choices as one enum."""
    if isinstance(node, list):
        return [_lean(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = _without_null(node)
    node = {k: v for k, v in node.items() if k not in UNPUBLISHED and not _assumed(k, v)}
    if "maximum" not in node:
        if node.get("minimum") in (0, 1):
            node.pop("minimum")
        if node.get("exclusiveMinimum") == 0:
            node.pop("exclusiveMinimum")
    if node.get("additionalProperties") is False and "properties" in node:
        node.pop("additionalProperties")
    return {
        key: {name: _lean(sub) for name, sub in value.items()}
        if key == "properties" and isinstance(value, dict)
        else _lean(value)
        for key, value in node.items()
    }


def _assumed(key: str, value: Any) -> bool:
    """Is ``key: value`` a guard, or what an agent assumes without being told?"""
    if key == "default":
        return value is None or value in (False, 0, "")  # the zero of its type
    if key == "maximum":
        return isinstance(value, int | float) and value >= GUARD_BOUND
    return key == "additionalProperties" and (value is True or value == {})


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    """An anyOf without its null member, collapsed to its one other member, or to one
    enum when every member is a string choice (``Literal[...] | Literal["auto"]``)."""
    options = node.get("anyOf")
    if not isinstance(options, list):
        return node
    concrete = [o for o in options if o != {"type": "null"}]
    rest = {key: value for key, value in node.items() if key != "anyOf"}
    if len(concrete) == 1:
        return {**concrete[0], **rest}
    if all(_choices(o) is not None for o in concrete):
        merged = [value for o in concrete for value in _choices(o) or []]
        return {"enum": merged, "type": "string", **rest}
    return {"anyOf": concrete, **rest}


def _choices(option: Any) -> list[str] | None:
    """The strings a ``{"type": "string", "enum"|"const": ...}`` member allows."""
    if not isinstance(option, dict) or option.get("type") != "string":
        return None
    if set(option) == {"type", "enum"}:
        return list(option["enum"])
    if set(option) == {"type", "const"}:
        return [option["const"]]
    return None


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
