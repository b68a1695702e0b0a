"""The policy an agent's call meets, whatever surface it comes by: the tool call path
(``hive/tools/registry.py``: MCP, ``hive tools run``) and an agent's command line
(``hive/cli/build.py``, the principal proven by ``HIVE_AGENT_TOKEN``). One sequence,
:func:`gated`, so the surfaces only adapt and cannot drift:

credential -> count the call (``toolCallLimit``; failed calls count too) -> the
surface resolves the call (unknown tool, invalid arguments) -> the agent's tools list
-> its working directory (a path parameter rebased) -> ``tools.permissions`` path
rules -> the file sandbox -> ``permission_policy.protected_tools`` -> rate-limit
check -> ``pre_tool_use`` hooks (global, then the agent's) -> rate-limit token ->
handler -> ``post_tool_use`` hooks.

A refusal raises its ``HiveError`` (the tool surface answers ``exc.to_dict()``, the
command line its message and exit code); the handler's own outcome comes back as
``{"result": ...}`` or ``{"error": ..., "code": ...}`` with the hooks' notes.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from hive import eventargs
from hive.domain import files, governance
from hive.domain.agents import (
    check_enabled,
    check_path_rules,
    count_call,
    profile,
    tool_settings,
    working_directory,
)
from hive.domain.context import state_dir
from hive.domain.workspace import Workspace
from hive.errors import HiveError, NotInitialized, NotYourIdentity, PermissionDenied
from hive.models.agents_config import AgentProfile

Outcome = dict[str, Any]


class HookBlocked(PermissionDenied):
    """A ``pre_tool_use`` hook refused the call (exit 2): its stderr is the reason."""

    code = "hook_blocked"


class HookFailed(HiveError):
    """A ``pre_tool_use`` hook failed (another exit code, a signal, a timeout): the
    call was not run (hooks fail closed)."""

    code = "hook_failed"


class Caller(Protocol):
    """Who calls (``hive.ops.spec.Caller``, the part the gate reads): ``name`` is the
    name rules, limits and grants are kept for; ``token`` the session's credential."""

    @property
    def root(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def agent(self) -> str | None: ...

    @property
    def token(self) -> str | None: ...

    @property
    def session(self) -> str | None: ...

    @property
    def session_key(self) -> str: ...

    @property
    def context_root(self) -> str: ...

    def workspace(self) -> Workspace: ...


def _none(params: Any) -> list[str]:
    return []


def _same(result: Any) -> Any:
    return result


@dataclass(frozen=True)
class Call:
    """One call as the gate sees it: the tool, the parameters its handler gets, what
    they name for the path rules (paths touched, directories listed or searched, globs
    claimed; in the rules' form, ``files.permission_path``), the parameter holding a
    path relative to the agent's working directory (its name, and whether it is in
    the context directory rather than the repository: ``hive.ops.spec.PathParam``),
    and the handler, which answers ``{"result": ...}`` or ``{"error": ..., "code": ...}``;
    ``shown``: the result as the post hooks get it (JSON values), made only for them."""

    tool: str
    params: Any
    handler: Callable[[Any], Outcome]
    paths: Callable[[Any], list[str]] = _none
    dirs: Callable[[Any], list[str]] = _none
    patterns: Callable[[Any], list[str]] = _none
    path_param: tuple[str, bool] | None = None
    shown: Callable[[Any], Any] = _same


def gated(
    caller: Caller,
    resolve: Callable[[], Call | Outcome],
    *,
    agent: str | None,
    known: list[str],
    hooks: list[governance.HookRun],
) -> Outcome:
    """Run one call through the policy (see the module's docstring). ``resolve``: the
    call, or the surface's refusal of it (an unknown tool, invalid arguments), made
    after the call is counted; ``agent``: the caller's name in the hooks' payload
    (None: not registered); ``known``: every tool's name; ``hooks``: the hook runs,
    for the event log. Raises the HiveError of a refusal."""
    ws = caller.workspace()
    check_credential(caller)
    found = profile(ws, caller.name)
    count_call(ws, found, caller.name, caller.session_key)  # every call counts
    call = resolve()
    if not isinstance(call, Call):
        return call
    check_enabled(found, caller.name, call.tool, known)
    settings = tool_settings(ws)
    workdir = working_directory(ws, found, caller.name)
    params = _rebased(caller, workdir, call)
    if not found.bypass_permissions:
        check_path_rules(
            caller.root,
            settings,
            caller.name,
            call.tool,
            paths=call.paths(params),
            dirs=call.dirs(params),
            patterns=call.patterns(params),
        )
    check_sandbox(caller, call, params)
    check_protected(ws, caller.name, call.tool)
    governance.take_token(state_dir(ws), settings, caller.name, call.tool, spend=False)
    payload = {"tool": call.tool, "agent": agent, "args": _args(params)}
    cwd = os.path.join(caller.root, workdir) if workdir else caller.root
    pre = governance.run_hooks(
        settings.pre_hooks + _agent_hooks(found, "pre_tool_use"),
        "pre_tool_use",
        cwd,
        call.tool,
        payload,
    )
    hooks += pre
    _refuse_blocked(pre)
    governance.take_token(state_dir(ws), settings, caller.name, call.tool)
    outcome = call.handler(params)
    post_hooks = settings.post_hooks + _agent_hooks(found, "post_tool_use")
    post: list[governance.HookRun] = []
    if any(hook.matcher.fullmatch(call.tool) for hook in post_hooks):
        shown = {"result": call.shown(outcome["result"])} if "result" in outcome else {}
        post = governance.run_hooks(
            post_hooks, "post_tool_use", cwd, call.tool, {**payload, **outcome, **shown}
        )
    hooks += post
    return _with_hook_notes(outcome, pre, post)


def call_event(
    caller: Caller,
    agent: str | None,
    tool: str,
    args: Any,
    *,
    outcome: Outcome,
    started: float,
    hooks: list[governance.HookRun],
    surface: str | None = None,
) -> dict[str, Any]:
    """The event log's line for one call (``hive events``), whatever surface made it:
    who (``agent``), the caller's session, the tool, its arguments (redacted and capped
    as the config's ``tools.events`` says) and their digest, the duration since
    ``started`` (``time.monotonic``), the outcome (``ok`` or the error's code) with
    the error, the hook runs, and the ``surface`` when it is not the tools' (``cli``:
    an agent's command)."""
    try:
        settings = tool_settings(caller.workspace())
    except HiveError:
        settings = governance.Settings()  # a config that cannot be read: the defaults
    return eventargs.call_line(
        agent=agent,
        session=caller.session,
        tool=tool,
        args=args,
        outcome=outcome,
        started=started,
        redact=settings.redact,
        max_bytes=settings.max_args_bytes,
        hooks=[run.log_entry() for run in hooks],
        surface=surface,
    )


def check_credential(caller: Caller) -> None:
    """A bound session's credential must still be its agent's: once a coordinator or
    a person retires the identity or re-issues its credential, the session stops
    acting as it (``not_your_identity``) instead of acting on as a stale twin. (The
    command line proves its credential each time it opens the repository.)"""
    if not (caller.agent and caller.token):
        return  # unbound, or in-process code that named a trusted agent
    from hive.store import credentials

    holder = credentials.name_of_token(state_dir(caller.workspace()), caller.token)
    if holder != caller.agent:
        raise NotYourIdentity(
            f"this session's credential for {caller.agent} is no longer valid (the identity"
            " was retired or its credential re-issued; see 'hive agent list'): start a new"
            " session with a current credential",
            agent=caller.agent,
        )


def check_sandbox(caller: Caller, call: Call, params: Any) -> None:
    """A path leading out of the call's sandbox (``..``, a symlink, ``.git``) is refused
    before the call is counted against a rate limit, as a path a permission rule denies
    is: the handler's own check, made early (the repository for the fs_* tools, the
    context directory for file_read and list_files)."""
    if call.path_param is None:
        return
    name, in_context = call.path_param
    value = getattr(params, name)
    if in_context:
        from hive.domain.debate import resolve_in_context

        resolve_in_context(caller.context_root, value)
    else:
        files.resolve(caller.root, value)


def check_protected(ws: Workspace, agent: str, tool: str) -> None:
    """A tool listed in ``permission_policy.protected_tools`` needs a live grant."""
    try:
        if ws.config().extra_settings().get("permission_policy") is None:
            return  # nothing protected (the policy's models are not even loaded)
        from hive.domain.permissions import protected_resource, require_grant

        resource = protected_resource(ws, tool)
    except NotInitialized:
        return
    if resource is not None:
        require_grant(ws, agent=agent, resource=resource, what=tool)


def _rebased(caller: Caller, workdir: str | None, call: Call) -> Any:
    """Relative paths of an agent with a working directory are relative to it (the
    parameter its operation marks as a path: ``hive.ops.spec.PathParam``)."""
    params = call.params
    if workdir is None or call.path_param is None:
        return params
    name, absolute = call.path_param
    value = getattr(params, name)
    if absolute and caller.context_root != caller.root:
        return params
    if not isinstance(value, str) or os.path.isabs(value):
        return params
    if absolute and ".." in value.replace("\\", "/").split("/"):
        return params  # refused as it is by the context-directory check
    joined = posixpath.normpath(posixpath.join(workdir, value or "."))
    if absolute:
        joined = os.path.join(os.path.realpath(caller.root), joined)
    return params.model_copy(update={name: joined})


def _args(params: Any) -> Any:
    """The parameters as the hooks' payload shows them (as JSON, by their aliases)."""
    dump = getattr(params, "model_dump", None)
    return dump(mode="json", by_alias=True) if dump is not None else params


def _agent_hooks(found: AgentProfile, phase: str) -> list[governance.Hook]:
    if found.hooks is None:
        return []
    return governance.hooks_of(getattr(found.hooks, phase), phase)


def _refuse_blocked(runs: list[governance.HookRun]) -> None:
    for run in runs:
        if run.exit_code == governance.BLOCK:
            reason = run.stderr.strip() or "blocked by a pre_tool_use hook"
            raise HookBlocked(reason, hook=run.command)
        if run.failed:
            what = "timed out" if run.timed_out else f"exited {run.exit_code}"
            detail = run.stderr.strip()[-500:]
            raise HookFailed(
                f"pre_tool_use hook {what}; the call was not run"
                + (f": {detail}" if detail else ""),
                hook=run.command,
                exit_code=run.exit_code,
            )


def _with_hook_notes(
    outcome: Outcome, pre: list[governance.HookRun], post: list[governance.HookRun]
) -> Outcome:
    """Warnings (exit 1, failed post hooks) and post-hook feedback (exit 2) go to the
    agent; exit-0 output only goes to the event log."""
    warnings = [r.stderr.strip() or r.stdout.strip() for r in pre + post if r.exit_code == 1]
    warnings += [
        f"post_tool_use hook failed ({r.exit_code}): {r.stderr.strip()[-500:]}"
        for r in post
        if r.failed
    ]
    feedback = [r.stderr.strip() for r in post if r.exit_code == governance.BLOCK]
    if warnings:
        outcome["warnings"] = warnings
    if feedback:
        outcome["hook_feedback"] = feedback
    return outcome
