"""Per-agent profiles from ``agents:`` in the committed config (seeds 002 and 004):
the agent's tool list and tool-call limit, working directory, read-before-write,
hooks and ``bypass_permissions``; and the per-session state they need (reads made,
calls counted per phase), kept in the local coordination store.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace

from hive.domain import files, governance
from hive.domain.config_sections import agent_profile, parsed_section
from hive.domain.context import current_phase, state_dir
from hive.domain.files import WriteCheck
from hive.domain.workspace import Workspace
from hive.errors import Conflict, InvalidInput
from hive.git.configfile import ignores_case
from hive.models.agents_config import AgentProfile, parse_agents_config
from hive.store import coord_db


class ToolCallLimit(Conflict):
    code = "tool_call_limit"


class ToolNotEnabled(Conflict):
    code = "tool_not_enabled"


class ReadBeforeWrite(Conflict):
    code = "read_before_write"


def profile(ws: Workspace, agent: str) -> AgentProfile:
    return agent_profile(ws, agent)


def tool_settings(ws: Workspace) -> governance.Settings:
    """The committed ``tools:`` section of .hive/config.yaml, parsed; its path rules
    fold case where this clone's file system ignores it (``core.ignorecase``)."""
    settings = parsed_section(ws, "tools", governance.parse_settings)
    return replace(settings, fold_case=ignores_case(ws.git.paths))


def write_check(ws: Workspace) -> WriteCheck:
    """The fs_write permissions of the proposing agent, checked again when an approved
    proposal is applied (whoever applies it)."""
    settings = tool_settings(ws)

    def check(agent: str, paths: list[str]) -> None:
        if not profile(ws, agent).bypass_permissions:
            governance.check_paths(settings, agent, "fs_write", paths)

    return check


def check_path_rules(
    root: str,
    settings: governance.Settings,
    agent: str,
    tool: str,
    *,
    paths: list[str],
    dirs: list[str],
    patterns: list[str],
) -> None:
    """The ``tools.permissions`` rules ``agent`` meets calling ``tool``: the paths it
    names (as given and as really reached through a symlink), the directories it lists
    or searches, and the globs it claims (a cell's owned files). Every surface checks
    a call here, in the policy every agent call meets (``hive.domain.policy.gated``)."""
    governance.check_paths(settings, agent, tool, with_real_paths(root, paths))
    governance.check_directories(settings, agent, tool, with_real_paths(root, dirs))
    governance.check_patterns(settings, agent, tool, patterns)


def with_real_paths(root: str, paths: list[str]) -> list[str]:
    """``paths``, each followed by the path it really reaches (through a symlink) when
    that is another path in the repository: a rule applies to both."""
    checked: list[str] = []
    for path in paths:
        checked.append(path)
        if governance.GLOB_CHARS.search(path):
            continue
        real = files.real_relative(root, path)
        if real is not None and real != "." and real != path:
            checked.append(real)
    return list(dict.fromkeys(checked))


def tool_list(profile: AgentProfile, known: list[str]) -> tuple[list[str] | None, list[str]]:
    """(the tools the agent may call, or None for all; warnings for unknown names,
    which are skipped)."""
    if profile.tools is None:
        return None, []
    allowed: list[str] = []
    warnings = []
    for ref in profile.tools:
        if ref.name in known:
            if ref.name not in allowed:
                allowed.append(ref.name)
        else:
            warnings.append(f"unknown tool {ref.name!r} in the agent's tools list: skipped")
    return allowed, warnings


def check_enabled(profile: AgentProfile, agent: str, tool: str, known: list[str]) -> None:
    allowed, _ = tool_list(profile, known)
    if allowed is not None and tool not in allowed:
        names = ", ".join(allowed) or "none"
        raise ToolNotEnabled(
            f"tool {tool} is not enabled for agent {agent} (its tools: {names})", tool=tool
        )


def count_call(ws: Workspace, profile: AgentProfile, agent: str, session: str) -> int | None:
    """Count one call of ``agent`` in ``session`` for the current phase; raise when the
    limit is reached (every call counts, failed ones too). None: no limit."""
    limit = profile.limit
    if limit is None:
        return None
    phase = str(current_phase(ws))
    with coord_db.write(state_dir(ws)) as db:
        row = db.execute(
            "SELECT calls FROM call_counts WHERE session = ? AND agent = ? AND phase = ?",
            (session, agent, phase),
        ).fetchone()
        calls = (row[0] if row else 0) + 1
        if calls > limit:
            raise ToolCallLimit(
                f"tool call limit reached: {agent} may make {limit} tool calls per phase"
                f" (phase {phase}); wait for the next phase",
                limit=limit,
                phase=int(phase),
            )
        db.execute(
            "INSERT INTO call_counts (session, agent, phase, calls, updated_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT(session, agent, phase)"
            " DO UPDATE SET calls = excluded.calls, updated_at = excluded.updated_at",
            (session, agent, phase, calls, time.time()),
        )
    return limit - calls


def working_directory(ws: Workspace, profile: AgentProfile, agent: str) -> str | None:
    """The agent's directory, repository-relative, checked to exist inside it."""
    if not profile.directory:
        return None
    root = os.path.realpath(ws.root)
    full = os.path.realpath(os.path.join(root, profile.directory))
    if full != root and not full.startswith(root + os.sep):
        raise InvalidInput(
            f".hive/config.yaml: agents.{agent}.directory {profile.directory!r} is outside"
            " the repository"
        )
    if not os.path.isdir(full):
        raise InvalidInput(
            f".hive/config.yaml: agents.{agent}.directory {profile.directory!r} does not exist"
        )
    relative = os.path.relpath(full, root).replace(os.sep, "/")
    return None if relative == "." else relative


# ------------------------------------------------------------------ read-before-write


def record_read(ws: Workspace, *, session: str, agent: str, path: str) -> None:
    """Remember that ``agent`` read ``path`` (repository-relative) in ``session``."""
    with coord_db.write(state_dir(ws)) as db:
        db.execute(
            "INSERT INTO reads (session, agent, path, read_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT(session, agent, path) DO UPDATE SET read_at = excluded.read_at",
            (session, agent, path, time.time()),
        )


def check_read_before_write(
    ws: Workspace, *, session: str, agent: str, path: str, size: int | None
) -> None:
    """A write to an existing file (``size`` bytes; None: no file) needs a whole read of
    it in this session first: an ``fs_read`` cut short by ``max_bytes`` does not count."""
    if size is None:
        return
    with coord_db.read(state_dir(ws)) as db:
        row = db.execute(
            "SELECT 1 FROM reads WHERE session = ? AND agent = ? AND path = ?",
            (session, agent, path),
        ).fetchone()
    if row is None:
        raise ReadBeforeWrite(
            f"cannot write {path}: {agent} has not read it whole in this session"
            f" (read-before-write is on for this agent; a read cut short by max_bytes does"
            f" not count); {_how_to_read(size)}",
            path=path,
        )


def _how_to_read(size: int) -> str:
    """How an agent reads all ``size`` bytes of a file (or that no read can)."""
    if size > files.MAX_READ:
        most = files.MAX_READ
        return f"it is {size} bytes, more than a read gives ({most}): it cannot be rewritten"
    return f"read it first, all {size} bytes: fs_read with max_bytes {max(size, 1)}, or file_read"


def agent_tool_warnings(ws: Workspace, known: list[str]) -> list[str]:
    """Unknown tool names in agents' tools lists (``hive doctor`` warns about them)."""
    try:
        profiles = parsed_section(ws, "agents", parse_agents_config)
    except InvalidInput:
        return []  # a bad section is reported as a problem
    return [
        f"agents.{name}: {warning}"
        for name, entry in profiles.items()
        for warning in tool_list(entry, known)[1]
    ]


def agent_directory_problems(ws: Workspace) -> list[str]:
    """Agents' working directories that are missing or outside the repository: every
    tool call of such an agent is refused (``hive doctor`` reports them as problems)."""
    try:
        profiles = parsed_section(ws, "agents", parse_agents_config)
    except InvalidInput:
        return []  # a bad section is reported as a problem
    problems = []
    for name, entry in profiles.items():
        try:
            working_directory(ws, entry, name)
        except InvalidInput as exc:
            problems.append(exc.message)
    return problems


def tools_config_warnings(ws: Workspace, known: list[str]) -> list[str]:
    """Names in the ``tools:`` section that no tool has (a misspelt ``fs_raed``: its
    deny rule or limit would never apply, silently) and hook matchers that match no
    tool (``hive doctor`` warns about them)."""
    from difflib import get_close_matches

    from hive.domain.path_rules import COMMIT_TOOL  # (not precommit: its record readers)

    try:
        settings = tool_settings(ws)
    except InvalidInput:
        return []  # a bad section is reported as a problem
    tools = set(known)

    def unknown(key: str, tool: str, extra: set[str], what: str) -> list[str]:
        if tool in tools or tool in extra:
            return []
        near = get_close_matches(tool, sorted(tools | extra), n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        return [f"{key}: no tool is called {tool!r}{hint}: {what}"]

    warnings = []
    for agent, rules in settings.permissions.items():
        for tool in rules:
            key = f"tools.permissions.{agent}.{tool}"
            warnings += unknown(key, tool, {"*", COMMIT_TOOL}, "these rules never apply")
    for tool in settings.rate_limits:
        key = f"tools.rate_limits.{tool}"
        warnings += unknown(key, tool, {"default"}, "this limit never applies")
    for agent, limits in settings.agent_rate_limits.items():
        for tool in limits:
            key = f"tools.agent_rate_limits.{agent}.{tool}"
            warnings += unknown(key, tool, {"default"}, "this limit never applies")
    for phase, hooks in (
        ("pre_tool_use", settings.pre_hooks),
        ("post_tool_use", settings.post_hooks),
    ):
        for number, hook in enumerate(hooks):
            if not any(hook.matcher.fullmatch(tool) for tool in tools):
                warnings.append(
                    f"tools.hooks.{phase}.{number}.matcher: {hook.matcher.pattern!r} matches"
                    " no tool name (the whole name must match): this hook never runs"
                )
    return warnings
