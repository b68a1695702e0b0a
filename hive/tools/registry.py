"""The one tool registry every agent surface is generated from, and the call path
every call takes: validate -> permissions -> rate limit -> pre hooks -> handler
-> post hooks -> event log. Errors come back as ``{"error": ..., "code": ...}``."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from hive.domain.workspace import Workspace
from hive.errors import HiveError, NotInitialized
from hive.tools import governance

MAX_ARGS_BYTES = 2_000_000


@dataclass(frozen=True)
class Tool:
    """One tool: its name, a one-line description, an argument model and a handler."""

    name: str
    description: str
    args: type[BaseModel]
    handler: Callable[[CallContext, Any], Any]
    paths: Callable[[Any], list[str]] = lambda args: []


@dataclass
class CallContext:
    """Who is calling, where; workspaces are cached per agent for long-lived servers."""

    root: str
    agent: str
    session: str | None = None
    _workspaces: dict[str, Workspace] = field(default_factory=dict)

    def workspace(self, agent: str | None = None) -> Workspace:
        name = agent or self.agent
        cached = self._workspaces.get(name)
        if cached is None:
            cached = Workspace(self.root, actor=name, session=self.session or f"tools:{name}")
            self._workspaces[name] = cached
        return cached

    @property
    def state_dir(self) -> str:
        return self.workspace().git.paths.hive_state_dir


REGISTRY: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    if tool.name in REGISTRY:
        raise ValueError(f"tool {tool.name} registered twice")
    REGISTRY[tool.name] = tool
    return tool


def tools() -> list[Tool]:
    from hive.tools import catalog  # noqa: F401  (registers the tools)

    return list(REGISTRY.values())


def get_tool(name: str) -> Tool | None:
    tools()
    return REGISTRY.get(name)


# ------------------------------------------------------------------ calling


def call_tool(ctx: CallContext, name: str, args: Any) -> dict[str, Any]:
    """Run one tool call; never raises. Success: ``{"result": ...}``."""
    started = time.monotonic()
    outcome = _call(ctx, name, args)
    _log(ctx, name, args, outcome, started)
    return outcome


def _call(ctx: CallContext, name: str, args: Any) -> dict[str, Any]:
    tool = get_tool(name) if isinstance(name, str) else None
    if tool is None:
        known = ", ".join(sorted(REGISTRY))
        return {"error": f"unknown tool {name!r}; known tools: {known}", "code": "unknown_tool"}
    parsed = _validate(tool, args)
    if isinstance(parsed, dict):
        return parsed
    try:
        settings = _settings(ctx)
        governance.check_paths(settings, ctx.agent, tool.name, tool.paths(parsed))
        governance.take_token(ctx.state_dir, settings, ctx.agent, tool.name)
        payload = {"tool": tool.name, "agent": ctx.agent, "args": parsed.model_dump(mode="json")}
        pre = governance.run_hooks(settings.pre_hooks, ctx.root, tool.name, payload)
        blocked = _blocking(pre)
        if blocked is not None:
            return blocked
        result = _jsonable(tool.handler(ctx, parsed))
        post = governance.run_hooks(
            settings.post_hooks, ctx.root, tool.name, {**payload, "result": result}
        )
        return _with_hook_notes({"result": result}, pre, post)
    except HiveError as exc:
        return exc.to_dict()
    except Exception as exc:  # the last line of defence: never a traceback
        return {"error": f"internal error: {type(exc).__name__}: {exc}", "code": "internal_error"}


def _validate(tool: Tool, args: Any) -> BaseModel | dict[str, Any]:
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return {"error": f"{tool.name}: args must be a JSON object", "code": "invalid_arguments"}
    size = len(json.dumps(args, default=str))
    if size > MAX_ARGS_BYTES:
        return {
            "error": f"{tool.name}: arguments are too large ({size} bytes > {MAX_ARGS_BYTES})",
            "code": "invalid_arguments",
        }
    try:
        return tool.args.model_validate(args)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "args"
        return {
            "error": f"{tool.name}: invalid argument {where!r}: {error['msg']}",
            "code": "invalid_arguments",
            "field": where,
        }


def _settings(ctx: CallContext) -> governance.Settings:
    try:
        raw = ctx.workspace().config().extra_settings().get("tools")
    except NotInitialized:
        raw = None
    return governance.parse_settings(raw)


def _blocking(runs: list[governance.HookRun]) -> dict[str, Any] | None:
    for run in runs:
        if run.exit_code not in (0, 1):
            reason = run.stderr.strip() or f"hook exited {run.exit_code}"
            return {"error": reason, "code": "hook_blocked", "hook": run.command}
    return None


def _with_hook_notes(
    outcome: dict[str, Any], pre: list[governance.HookRun], post: list[governance.HookRun]
) -> dict[str, Any]:
    warnings = [r.stderr.strip() or r.stdout.strip() for r in pre + post if r.exit_code == 1]
    feedback = [r.stderr.strip() for r in post if r.exit_code not in (0, 1)]
    if warnings:
        outcome["warnings"] = warnings
    if feedback:
        outcome["hook_feedback"] = feedback
    logged = [r.stdout.strip() for r in pre + post if r.exit_code == 0 and r.stdout.strip()]
    if logged:
        outcome["hook_output"] = logged
    return outcome


def _jsonable(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    return value


def _log(ctx: CallContext, name: Any, args: Any, outcome: dict[str, Any], started: float) -> None:
    try:
        state_dir = ctx.state_dir
    except HiveError:
        return
    governance.log_event(
        state_dir,
        {
            "ts": time.time(),
            "agent": ctx.agent,
            "tool": str(name),
            "args_digest": governance.args_digest(args),
            "duration_ms": round((time.monotonic() - started) * 1000, 2),
            "outcome": "ok" if "result" in outcome else str(outcome.get("code")),
            "pid": os.getpid(),
        },
    )
