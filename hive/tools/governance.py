"""Governance around every tool call: path permissions, rate limits (token buckets
shared by all processes), shell hooks, and the JSONL event log.

Configured under ``tools:`` in ``.hive/config.yaml`` (parsed by
``hive.models.tools_config``; see docs/tools.md)::

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
      agent_rate_limits:
        BlueLake: {default: {capacity: 10, per_seconds: 60}}
      hooks:
        pre_tool_use:
          - {matcher: "fs_.*", command: "./scripts/check.sh", timeout: 5}
        post_tool_use: []
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from filelock import FileLock, Timeout

from hive.domain.globs import glob_matches, normalize_pattern, patterns_intersect
from hive.domain.process import run_killable
from hive.errors import HiveError, InvalidInput
from hive.models.tools_config import (
    DEFAULT_REDACT,
    HookSpec,
    RateLimit,
    ToolsConfig,
    parse_tools_config,
)

GLOB_CHARS = re.compile(r"[*?\[{]")
EVENTS_FILE = "events.jsonl"
RATE_FILE = "ratelimit.json"
HOOK_OUTPUT_LIMIT = 4000
HOOK_LOG_LIMIT = 1000
MAX_EVENTS_BYTES = 20_000_000
IDLE_BUCKET_SECONDS = 7 * 86_400
ANY = "*"


@dataclass(frozen=True)
class Hook:
    matcher: re.Pattern[str]
    command: str
    timeout: float


@dataclass(frozen=True)
class Settings:
    """The ``tools`` section of the config, parsed and normalised."""

    permissions: dict[str, dict[str, dict[str, list[str]]]] = field(default_factory=dict)
    rate_limits: dict[str, tuple[float, float]] = field(default_factory=dict)
    agent_rate_limits: dict[str, dict[str, tuple[float, float]]] = field(default_factory=dict)
    pre_hooks: list[Hook] = field(default_factory=list)
    post_hooks: list[Hook] = field(default_factory=list)
    max_args_bytes: int = 4096
    redact: tuple[str, ...] = DEFAULT_REDACT


def parse_settings(raw: Any) -> Settings:
    """Parse the section; InvalidInput naming the key when anything is wrong."""
    config: ToolsConfig = parse_tools_config(raw)
    return Settings(
        permissions=_permissions(config),
        rate_limits=_limits(config.rate_limits),
        agent_rate_limits={
            agent: _limits(limits) for agent, limits in config.agent_rate_limits.items()
        },
        pre_hooks=hooks_of(config.hooks.pre_tool_use, "pre_tool_use"),
        post_hooks=hooks_of(config.hooks.post_tool_use, "post_tool_use"),
        max_args_bytes=config.events.max_args_bytes,
        redact=tuple(word.lower() for word in config.events.redact),
    )


def _limits(raw: dict[str, RateLimit]) -> dict[str, tuple[float, float]]:
    return {name: (limit.capacity, limit.per_seconds) for name, limit in raw.items()}


def _permissions(config: ToolsConfig) -> dict[str, dict[str, dict[str, list[str]]]]:
    parsed: dict[str, dict[str, dict[str, list[str]]]] = {}
    for agent, tools in config.permissions.items():
        for tool, rules in tools.items():
            entry = {
                key: _patterns(getattr(rules, key), f"tools.permissions.{agent}.{tool}.{key}")
                for key in ("allowed_paths", "denied_paths")
            }
            parsed.setdefault(agent, {})[tool] = entry
    return parsed


def _patterns(patterns: list[str], key: str) -> list[str]:
    try:
        return [normalize_pattern(pattern) for pattern in patterns]
    except HiveError as exc:
        raise InvalidInput(f".hive/config.yaml: {key}: {exc.message}", key=key) from None


def hooks_of(raw: list[HookSpec], name: str) -> list[Hook]:
    hooks = []
    for number, spec in enumerate(raw):
        try:
            matcher = re.compile(spec.matcher)
        except re.error as exc:
            key = f"tools.hooks.{name}.{number}.matcher"
            raise InvalidInput(f".hive/config.yaml: {key}: {exc}", key=key) from None
        hooks.append(Hook(matcher=matcher, command=spec.command, timeout=spec.timeout_seconds))
    return hooks


# ------------------------------------------------------------------ permissions


class PathPermissionDenied(HiveError):
    code = "permission_denied"
    exit_code = 5


def check_paths(settings: Settings, agent: str, tool: str, paths: list[str]) -> None:
    """Deny lists of every matching scope apply (union); the most specific allowlist
    (agent+tool, agent+*, *+tool, *+*) alone decides what is allowed."""
    rules = _scopes(settings, agent, tool)
    for path in paths if rules else []:
        _check(rules, tool, path, path, denies=_touches, allows=_inside)


def check_directories(settings: Settings, agent: str, tool: str, directories: list[str]) -> None:
    """A directory to list or search is refused only when a deny rule covers all of
    it, or no allowed pattern lies in or above it (a directory above an allowed
    pattern is fine: its listing shows only the allowed files)."""
    rules = _scopes(settings, agent, tool)
    for given in directories if rules else []:
        inside = _everything_in(given)
        shown = "./" if inside == "**" else inside[:-2]
        _check(rules, tool, shown, inside, denies=_inside, allows=patterns_intersect)


Rules = list[tuple[str, dict[str, list[str]]]]


def _check(
    rules: Rules,
    tool: str,
    shown: str,
    probe: str,
    *,
    denies: Callable[[str, str], bool],
    allows: Callable[[str, str], bool],
) -> None:
    """Refuse ``probe`` (reported as ``shown``) when a deny rule ``denies`` it, or the
    most specific allowlist has no pattern that ``allows`` it."""
    for name, rule in rules:
        hit = next((p for p in rule["denied_paths"] if denies(p, probe)), None)
        if hit is not None:
            raise PathPermissionDenied(
                f"{tool} may not touch {shown}: denied by tools.permissions.{name}"
                f".denied_paths {hit!r}",
                path=shown,
                rule=f"{name}.denied_paths: {hit}",
            )
    allowlist = next(((name, rule["allowed_paths"]) for name, rule in rules
                      if rule["allowed_paths"]), None)  # fmt: skip
    if allowlist is not None and not any(allows(p, probe) for p in allowlist[1]):
        name, allowed = allowlist
        raise PathPermissionDenied(
            f"{tool} may not touch {shown}: not in tools.permissions.{name}.allowed_paths"
            f" ({', '.join(allowed)})",
            path=shown,
            rule=f"{name}.allowed_paths",
        )


def _everything_in(directory: str) -> str:
    if directory in ("", ".", "**") or directory.endswith("/**"):
        return directory if directory.endswith("**") else "**"
    return f"{directory.rstrip('/')}/**"


def has_rules(settings: Settings, agent: str, tool: str) -> bool:
    return bool(_scopes(settings, agent, tool))


def _scopes(settings: Settings, agent: str, tool: str) -> list[tuple[str, dict[str, list[str]]]]:
    """The rule sets in force, most specific first."""
    order = [(agent, tool), (agent, ANY), (ANY, tool), (ANY, ANY)]
    found: list[tuple[str, dict[str, list[str]]]] = []
    for who, which in dict.fromkeys(order):
        rule = settings.permissions.get(who, {}).get(which)
        if rule is not None:
            found.append((f"{who}.{which}", rule))
    return found


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


def rate_limit(settings: Settings, agent: str, tool: str) -> tuple[float, float] | None:
    """The bucket for (agent, tool): agent+tool, agent default, tool, default."""
    mine = settings.agent_rate_limits.get(agent, {})
    for table, key in ((mine, tool), (mine, "default"), (settings.rate_limits, tool),
                       (settings.rate_limits, "default")):  # fmt: skip
        if key in table:
            return table[key]
    return None


def take_token(
    state_dir: str, settings: Settings, agent: str, tool: str, *, spend: bool = True
) -> None:
    """Spend one token from the (agent, tool) bucket, or raise RateLimited.
    With ``spend=False`` only check that a token is available."""
    limit = rate_limit(settings, agent, tool)
    if limit is None:
        return
    capacity, per_seconds = limit
    rate = capacity / per_seconds
    os.makedirs(state_dir, exist_ok=True)
    path = os.path.join(state_dir, RATE_FILE)
    try:
        with FileLock(path + ".lock", timeout=10):
            now = time.time()
            buckets = _pruned(_read_json(path), now)
            key = f"{agent}\x1f{tool}"
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
            if spend:
                buckets[key] = (tokens - 1, now)
                _write_json(path, buckets)
    except Timeout:
        raise HiveError("the rate-limit state is locked by another process") from None


def _pruned(buckets: dict[str, Any], now: float) -> dict[str, Any]:
    """Forget buckets idle for a week (long refilled), so the file does not grow
    with every agent name ever seen."""
    return {
        key: value
        for key, value in buckets.items()
        if isinstance(value, list) and len(value) == 2 and now - value[1] < IDLE_BUCKET_SECONDS
    }


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
#
# Exit-code policy (documented in docs/tools.md): 0 continue (stdout only logged),
# 1 warn (stderr returned as a warning), 2 block (stderr returned to the agent).
# Any other code, a signal, a missing command (127) or a timeout is a *failed*
# hook: a pre hook fails closed (the call is refused with ``hook_failed``); a
# post hook's failure is returned as a warning.

CONTINUE, WARN, BLOCK = 0, 1, 2


@dataclass
class HookRun:
    phase: str
    command: str
    exit_code: int | None  # None: timed out
    stdout: str
    stderr: str

    @property
    def timed_out(self) -> bool:
        return self.exit_code is None

    @property
    def failed(self) -> bool:
        return self.exit_code not in (CONTINUE, WARN, BLOCK)

    def log_entry(self) -> dict[str, Any]:
        return {
            "phase": self.phase,
            "command": self.command[:HOOK_LOG_LIMIT],
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "stdout": self.stdout[-HOOK_LOG_LIMIT:],
            "stderr": self.stderr[-HOOK_LOG_LIMIT:],
        }


def run_hooks(
    hooks: list[Hook], phase: str, root: str, tool: str, payload: dict[str, Any]
) -> list[HookRun]:
    """Run the hooks whose matcher matches the whole tool name, in order; stop at the
    first that blocks or fails."""
    runs: list[HookRun] = []
    for hook in hooks:
        if not hook.matcher.fullmatch(tool):
            continue
        run = _run_hook(hook, phase, root, tool, payload)
        runs.append(run)
        if run.exit_code not in (CONTINUE, WARN):
            break
    return runs


def _run_hook(hook: Hook, phase: str, root: str, tool: str, payload: dict[str, Any]) -> HookRun:
    env = {**os.environ, "HIVE_TOOL": tool, "HIVE_AGENT": str(payload.get("agent") or "")}
    data = json.dumps(payload, default=str).encode()
    run = run_killable(hook.command, cwd=root, timeout=hook.timeout, stdin_data=data, env=env)
    code, out, err = run.exit_code, run.stdout, run.stderr
    if code is None:
        err += f"hook timed out after {hook.timeout:g}s".encode()
    return HookRun(
        phase=phase,
        command=hook.command,
        exit_code=code,
        stdout=out.decode("utf-8", "replace")[-HOOK_OUTPUT_LIMIT:],
        stderr=err.decode("utf-8", "replace")[-HOOK_OUTPUT_LIMIT:],
    )


# ------------------------------------------------------------------ events


def args_digest(args: Any) -> str:
    try:
        canonical = json.dumps(args, sort_keys=True, default=str, separators=(",", ":"))
    except (ValueError, TypeError, RecursionError):
        canonical = repr(type(args))
    return hashlib.sha256(canonical.encode("utf-8", "replace")).hexdigest()[:16]


REDACTED = "[redacted]"
MAX_LOGGED_STRING = 1000


def logged_args(args: Any, settings: Settings) -> Any:
    """The call's arguments as the event log keeps them: values under keys naming a
    secret (``tools.events.redact``, matched case-insensitively as substrings) are
    replaced, long strings cut, and the whole capped at ``max_args_bytes`` of JSON
    (beyond it only a cut JSON text is kept)."""
    cleaned = _redacted(args, settings.redact, 0)
    text = json.dumps(cleaned, default=str, ensure_ascii=False, separators=(",", ":"))
    if len(text.encode("utf-8")) <= settings.max_args_bytes:
        return cleaned
    cut = text.encode("utf-8")[: settings.max_args_bytes].decode("utf-8", "ignore")
    return {"_truncated": cut, "_bytes": len(text.encode("utf-8"))}


def _redacted(value: Any, words: tuple[str, ...], depth: int) -> Any:
    if depth > 40:
        return "..."
    if isinstance(value, dict):
        return {
            str(key): REDACTED
            if any(word in str(key).lower() for word in words)
            else _redacted(item, words, depth + 1)
            for key, item in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redacted(item, words, depth + 1) for item in value]
    if isinstance(value, str) and len(value) > MAX_LOGGED_STRING:
        return value[:MAX_LOGGED_STRING] + f"...[+{len(value) - MAX_LOGGED_STRING} chars]"
    return value


def events_path(state_dir: str) -> str:
    return os.path.join(state_dir, EVENTS_FILE)


def log_event(state_dir: str, event: dict[str, Any], max_bytes: int = MAX_EVENTS_BYTES) -> None:
    """Append one event to ``<git common dir>/hive/events.jsonl`` (best effort); past
    ``max_bytes`` the file is rotated to ``events.jsonl.1`` (one old generation kept)."""
    try:
        os.makedirs(state_dir, exist_ok=True)
        path = events_path(state_dir)
        line = json.dumps(event, default=str, separators=(",", ":")) + "\n"
        with open(path, "a", encoding="utf-8") as handle:
            handle.write(line)
        if os.path.getsize(path) > max_bytes:
            _rotate(path, max_bytes)
    except (OSError, Timeout):
        return


def _rotate(path: str, max_bytes: int) -> None:
    with FileLock(path + ".lock", timeout=5):
        if os.path.exists(path) and os.path.getsize(path) > max_bytes:
            os.replace(path, path + ".1")


def read_events(state_dir: str, limit: int | None = None) -> list[dict[str, Any]]:
    """The last ``limit`` events (all without a limit), read from the end of the file."""
    path = events_path(state_dir)
    try:
        with open(path, "rb") as handle:
            lines = _tail_lines(handle, limit) if limit is not None else handle.readlines()
    except OSError:
        return []
    return parse_event_lines(lines)


def parse_event_lines(lines: list[bytes]) -> list[dict[str, Any]]:
    events = []
    for line in lines:
        with contextlib.suppress(ValueError):
            value = json.loads(line)
            if isinstance(value, dict):
                events.append(value)
    return events


def _tail_lines(handle: Any, limit: int, block: int = 65_536) -> list[bytes]:
    """The last ``limit`` complete lines, reading backwards block by block."""
    end = handle.seek(0, os.SEEK_END)
    position, data = end, b""
    while position > 0 and data.count(b"\n") <= limit:
        step = min(block, position)
        position -= step
        handle.seek(position)
        data = handle.read(step) + data
    lines = data.splitlines(keepends=True)
    if position > 0:
        lines = lines[1:]  # the first line may be cut
    return lines[-limit:] if limit else []


def read_appended(state_dir: str, offset: int) -> tuple[list[dict[str, Any]], int]:
    """Events appended after byte ``offset`` and the new offset (restarts at 0 when
    the file was rotated or truncated; a half-written last line waits)."""
    path = events_path(state_dir)
    try:
        with open(path, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            if end < offset:
                offset = 0
            handle.seek(offset)
            data = handle.read(end - offset)
    except OSError:
        return [], 0
    complete = data[: data.rfind(b"\n") + 1]
    return parse_event_lines(complete.splitlines()), offset + len(complete)


def events_size(state_dir: str) -> int:
    try:
        return os.path.getsize(events_path(state_dir))
    except OSError:
        return 0
