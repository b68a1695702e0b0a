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

import json
import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any

from hive import eventargs
from hive.domain import path_rules
from hive.domain.events import (  # the event log lives in the domain (overrides use it)
    events_path as events_path,
)
from hive.domain.events import events_size as events_size
from hive.domain.events import log_event as log_event
from hive.domain.events import parse_event_lines as parse_event_lines
from hive.domain.events import read_appended as read_appended
from hive.domain.events import read_events as read_events
from hive.domain.path_rules import GLOB_CHARS as GLOB_CHARS
from hive.domain.path_rules import PathPermissionDenied as PathPermissionDenied
from hive.domain.process import run_killable
from hive.errors import HiveError, InvalidInput
from hive.eventargs import args_digest as args_digest
from hive.models.tools_config import (
    DEFAULT_REDACT,
    HookSpec,
    RateLimit,
    ToolsConfig,
    parse_tools_config,
)

RATE_FILE = "ratelimit.json"
HOOK_OUTPUT_LIMIT = 4000
HOOK_LOG_LIMIT = 1000
IDLE_BUCKET_SECONDS = 7 * 86_400


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
    # not the config's: the path rules fold case where this clone's file system ignores
    # it (``core.ignorecase``; set by ``agents.tool_settings``)
    fold_case: bool = False


def parse_settings(raw: Any) -> Settings:
    """Parse the section; InvalidInput naming the key when anything is wrong."""
    config: ToolsConfig = parse_tools_config(raw)
    return Settings(
        permissions=path_rules.parse_permissions(config),
        rate_limits=_limits(config.rate_limits),
        agent_rate_limits={
            agent: _limits(limits) for agent, limits in config.agent_rate_limits.items()
        },
        pre_hooks=hooks_of(config.hooks.pre_tool_use, "pre_tool_use"),
        post_hooks=hooks_of(config.hooks.post_tool_use, "post_tool_use"),
        max_args_bytes=config.events.max_args_bytes,
        redact=eventargs.redact_words(config.events.redact),
    )


def _limits(raw: dict[str, RateLimit]) -> dict[str, tuple[float, float]]:
    return {name: (limit.capacity, limit.per_seconds) for name, limit in raw.items()}


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
# The path rules live in hive.domain.path_rules (the domain enforces them too: the
# pre-commit hook and reservations); these adapters take the parsed Settings.


def check_paths(settings: Settings, agent: str, tool: str, paths: list[str]) -> None:
    path_rules.check_paths(settings.permissions, agent, tool, paths, fold_case=settings.fold_case)


def check_directories(settings: Settings, agent: str, tool: str, directories: list[str]) -> None:
    path_rules.check_directories(
        settings.permissions, agent, tool, directories, fold_case=settings.fold_case
    )


def check_patterns(settings: Settings, agent: str, tool: str, patterns: list[str]) -> None:
    """Refuse a claimed glob that names only files ``agent`` may not touch with ``tool``."""
    for pattern in patterns:
        path_rules.pattern_only_denied(
            settings.permissions, agent, tool, pattern, fold_case=settings.fold_case
        )


def has_rules(settings: Settings, agent: str, tool: str) -> bool:
    return path_rules.has_rules(settings.permissions, agent, tool)


# ------------------------------------------------------------------ rate limits


class RateLimited(HiveError):
    code = "rate_limited"
    exit_code = 10

    def to_dict(self) -> dict[str, Any]:
        return {"error": "rate_limited", "code": 429, **self.details}


def rate_limit(settings: Settings, agent: str, tool: str) -> tuple[float, float] | None:
    """The bucket for (agent, tool): agent+tool, agent default, tool, default."""
    mine = settings.agent_rate_limits.get(agent, {})
    for table, key in (
        (mine, tool),
        (mine, "default"),
        (settings.rate_limits, tool),
        (settings.rate_limits, "default"),
    ):
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
    from hive.store.layout import make_state_dir

    make_state_dir(state_dir)
    path = os.path.join(state_dir, RATE_FILE)
    from filelock import FileLock, Timeout  # here: a process that counts no call skips it

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
    """One hook's run. A credential (``swarmmail_init``'s new one in a post hook's
    input, the agent's own if the hook prints its environment) is masked in what the
    hook is given and in what it printed, which the event log keeps."""
    from hive.store.credentials import masked

    env = {**os.environ, "HIVE_TOOL": tool, "HIVE_AGENT": str(payload.get("agent") or "")}
    data = masked(json.dumps(payload, default=str)).encode()
    run = run_killable(hook.command, cwd=root, timeout=hook.timeout, stdin_data=data, env=env)
    code, out, err = run.exit_code, run.stdout, run.stderr
    if code is None:
        err += f"hook timed out after {hook.timeout:g}s".encode()
    return HookRun(
        phase=phase,
        command=hook.command,
        exit_code=code,
        stdout=masked(out.decode("utf-8", "replace"))[-HOOK_OUTPUT_LIMIT:],
        stderr=masked(err.decode("utf-8", "replace"))[-HOOK_OUTPUT_LIMIT:],
    )


# ------------------------------------------------------------------ events


def logged_args(args: Any, settings: Settings) -> Any:
    """The call's arguments as the event log keeps them (``hive.eventargs.logged_args``
    with the config's ``tools.events``)."""
    return eventargs.logged_args(args, settings.redact, settings.max_args_bytes)
