"""Governance around every tool call: path permissions, rate limits (token buckets
shared by all processes), shell hooks, and the JSONL event log.

Configured under ``tools:`` in ``.hive/config.yaml`` (see docs/tools.md)::

    tools:
      permissions:
        "*":                      # every agent
          "*":                    # every tool
            denied_paths: [".env", "secrets/**"]
        BlueLake:
          fs_write:
            allowed_paths: ["docs/**"]
      rate_limits:
        default: {capacity: 120, per_seconds: 60}
        fs_read: {capacity: 30, per_seconds: 60}
      hooks:
        pre_tool_use:
          - {matcher: "^fs_", command: "./scripts/check.sh", timeout_seconds: 5}
        post_tool_use: []
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any

from filelock import FileLock, Timeout

from hive.domain.globs import glob_matches, normalize_pattern, patterns_intersect
from hive.errors import HiveError, InvalidInput

GLOB_CHARS = re.compile(r"[*?\[{]")
EVENTS_FILE = "events.jsonl"
RATE_FILE = "ratelimit.json"
HOOK_OUTPUT_LIMIT = 4000
DEFAULT_HOOK_TIMEOUT = 10.0


@dataclass(frozen=True)
class Settings:
    """The ``tools`` section of the config, parsed."""

    permissions: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)
    rate_limits: dict[str, tuple[float, float]] = field(default_factory=dict)
    pre_hooks: list[dict[str, Any]] = field(default_factory=list)
    post_hooks: list[dict[str, Any]] = field(default_factory=list)


def parse_settings(raw: Any) -> Settings:
    if raw is None:
        return Settings()
    if not isinstance(raw, dict):
        raise InvalidInput(".hive/config.yaml: 'tools' must be a mapping")
    limits: dict[str, tuple[float, float]] = {}
    for name, value in (raw.get("rate_limits") or {}).items():
        if not isinstance(value, dict):
            raise InvalidInput(f"tools.rate_limits.{name} must be {{capacity, per_seconds}}")
        capacity = float(value.get("capacity", 60))
        per_seconds = float(value.get("per_seconds", 60))
        if capacity <= 0 or per_seconds <= 0:
            raise InvalidInput(f"tools.rate_limits.{name}: capacity and per_seconds must be > 0")
        limits[str(name)] = (capacity, per_seconds)
    hooks = raw.get("hooks") or {}
    return Settings(
        permissions=_permissions(raw.get("permissions") or {}),
        rate_limits=limits,
        pre_hooks=_hooks(hooks.get("pre_tool_use"), "pre_tool_use"),
        post_hooks=_hooks(hooks.get("post_tool_use"), "post_tool_use"),
    )


def _permissions(raw: Any) -> dict[str, dict[str, dict[str, list[str]]]]:
    if not isinstance(raw, dict):
        raise InvalidInput("tools.permissions must map agent -> tool -> rules")
    parsed: dict[str, dict[str, dict[str, list[str]]]] = {}
    for agent, tools in raw.items():
        if not isinstance(tools, dict):
            raise InvalidInput(f"tools.permissions.{agent} must map tool names to rules")
        for tool, rules in tools.items():
            if not isinstance(rules, dict):
                raise InvalidInput(f"tools.permissions.{agent}.{tool} must be a mapping")
            entry = {
                key: [normalize_pattern(str(p)) for p in rules.get(key) or []]
                for key in ("allowed_paths", "denied_paths")
            }
            parsed.setdefault(str(agent), {})[str(tool)] = entry
    return parsed


def _hooks(raw: Any, name: str) -> list[dict[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise InvalidInput(f"tools.hooks.{name} must be a list of {{matcher, command}}")
    hooks = []
    for number, hook in enumerate(raw):
        if not isinstance(hook, dict) or not hook.get("command"):
            raise InvalidInput(f"tools.hooks.{name}[{number}] needs a command")
        try:
            matcher = re.compile(str(hook.get("matcher") or ".*"))
        except re.error as exc:
            raise InvalidInput(f"tools.hooks.{name}[{number}].matcher: {exc}") from None
        timeout = float(hook.get("timeout_seconds") or DEFAULT_HOOK_TIMEOUT)
        hooks.append({"matcher": matcher, "command": str(hook["command"]), "timeout": timeout})
    return hooks


# ------------------------------------------------------------------ permissions


class PathPermissionDenied(HiveError):
    code = "permission_denied"
    exit_code = 5


def check_paths(settings: Settings, agent: str, tool: str, paths: list[str]) -> None:
    """Denied wins; with any allowlist in force, a path must match one of its patterns."""
    rules = [
        (f"{who}.{which}", settings.permissions[who][which])
        for who in (agent, "*")
        if who in settings.permissions
        for which in (tool, "*")
        if which in settings.permissions[who]
    ]
    if not rules:
        return
    allowlists = [(name, rule["allowed_paths"]) for name, rule in rules if rule["allowed_paths"]]
    for path in paths:
        for name, rule in rules:
            hit = next((p for p in rule["denied_paths"] if _touches(p, path)), None)
            if hit is not None:
                raise PathPermissionDenied(
                    f"{tool} may not touch {path}: denied by tools.permissions.{name}"
                    f".denied_paths {hit!r}",
                    path=path,
                    rule=f"{name}.denied_paths: {hit}",
                )
        for name, allowed in allowlists:
            if not any(_inside(p, path) for p in allowed):
                raise PathPermissionDenied(
                    f"{tool} may not touch {path}: not in tools.permissions.{name}.allowed_paths"
                    f" ({', '.join(allowed)})",
                    path=path,
                    rule=f"{name}.allowed_paths",
                )


def _touches(rule: str, path: str) -> bool:
    """A requested path (or glob) touches a rule when some file matches both."""
    if GLOB_CHARS.search(path):
        return patterns_intersect(rule, path)
    return glob_matches(rule, path)


def _inside(rule: str, path: str) -> bool:
    """A requested path lies inside an allowed rule (a glob request must be contained)."""
    if not GLOB_CHARS.search(path):
        return glob_matches(rule, path)
    if rule == path:
        return True
    return rule.endswith("/**") and path.startswith(rule[:-2])


# ------------------------------------------------------------------ rate limits


class RateLimited(HiveError):
    code = "rate_limited"
    exit_code = 10

    def to_dict(self) -> dict[str, Any]:
        return {"error": "rate_limited", "code": 429, **self.details}


def take_token(state_dir: str, settings: Settings, agent: str, tool: str) -> None:
    """Spend one token from the (agent, tool) bucket, or raise RateLimited."""
    limit = settings.rate_limits.get(tool) or settings.rate_limits.get("default")
    if limit is None:
        return
    capacity, per_seconds = limit
    rate = capacity / per_seconds
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, RATE_FILE)
    try:
        with FileLock(path + ".lock", timeout=10):
            buckets = _read_json(path)
            key = f"{agent}\x1f{tool}"
            now = time.time()
            tokens, updated = buckets.get(key, (capacity, now))
            tokens = min(capacity, tokens + (now - updated) * rate)
            if tokens < 1:
                raise RateLimited(
                    f"rate limited: {tool} for {agent}",
                    tool=tool,
                    limit=int(capacity),
                    remaining=0,
                    reset_sec=math.ceil((1 - tokens) / rate),
                    scope=agent,
                )
            buckets[key] = (tokens - 1, now)
            _write_json(path, buckets)
    except Timeout:
        raise HiveError("the rate-limit state is locked by another process") from None


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_json(path: str, data: dict[str, Any]) -> None:
    temp = f"{path}.{os.getpid()}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
    os.replace(temp, path)


# ------------------------------------------------------------------ hooks


@dataclass
class HookRun:
    command: str
    exit_code: int | None  # None: timed out
    stdout: str
    stderr: str


def run_hooks(
    hooks: list[dict[str, Any]], root: str, tool: str, payload: dict[str, Any]
) -> list[HookRun]:
    """Run the hooks whose matcher matches ``tool``, in order; stop at the first block."""
    runs: list[HookRun] = []
    for hook in hooks:
        if not hook["matcher"].search(tool):
            continue
        run = _run_hook(hook, root, tool, payload)
        runs.append(run)
        if run.exit_code not in (0, 1):
            break
    return runs


def _run_hook(hook: dict[str, Any], root: str, tool: str, payload: dict[str, Any]) -> HookRun:
    env = {**os.environ, "HIVE_TOOL": tool, "HIVE_AGENT": str(payload.get("agent") or "")}
    process = subprocess.Popen(
        hook["command"],
        shell=True,
        cwd=root,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    data = json.dumps(payload, default=str).encode()
    try:
        out, err = process.communicate(data, timeout=hook["timeout"])
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        code = None
        err += f"hook timed out after {hook['timeout']:g}s".encode()
    return HookRun(
        command=hook["command"],
        exit_code=code,
        stdout=out.decode("utf-8", "replace")[-HOOK_OUTPUT_LIMIT:],
        stderr=err.decode("utf-8", "replace")[-HOOK_OUTPUT_LIMIT:],
    )


# ------------------------------------------------------------------ events


def args_digest(args: Any) -> str:
    canonical = json.dumps(args, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:16]


def log_event(state_dir: str, event: dict[str, Any]) -> None:
    """Append one event to ``<git common dir>/hive/events.jsonl`` (best effort)."""
    try:
        os.makedirs(state_dir, exist_ok=True)
        line = json.dumps(event, default=str, separators=(",", ":")) + "\n"
        with open(os.path.join(state_dir, EVENTS_FILE), "a", encoding="utf-8") as handle:
            handle.write(line)
    except OSError:
        return


def read_events(state_dir: str, limit: int | None = None) -> list[dict[str, Any]]:
    path = os.path.join(state_dir, EVENTS_FILE)
    try:
        with open(path, encoding="utf-8") as handle:
            lines = handle.readlines()
    except OSError:
        return []
    if limit is not None:
        lines = lines[-limit:]
    events = []
    for line in lines:
        with contextlib.suppress(ValueError):
            events.append(json.loads(line))
    return events
