"""The one tool registry every agent surface is generated from, and the call path
every call takes: validate -> permissions (lexical and real path) -> sandbox (a path
inside the repository, or the context directory) -> rate-limit check -> pre hooks ->
rate-limit token -> handler -> post hooks -> event log.
Errors come back as ``{"error": ..., "code": ...}``; nothing raises."""

from __future__ import annotations

import json
import os
import posixpath
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from hive.domain import files, governance, policy
from hive.domain.agents import (
    tool_settings,
    with_real_paths,
)
from hive.domain.agents import write_check as agents_write_check
from hive.domain.workspace import Workspace
from hive.errors import HiveError, NameTaken, NotOwner, NotYourIdentity, not_a_bug
from hive.jsontext import nesting_depth
from hive.models.agents_config import AgentProfile
from hive.ops.spec import OPERATIONS, Operation, path_parameter
from hive.ops.toolindex import STATUS_SHAPED, TOOL_MODULES
from hive.times import format_time

if TYPE_CHECKING:
    from pydantic.fields import FieldInfo

MAX_ARGS_BYTES = 2_000_000
MAX_ARGS_DEPTH = 32


@dataclass(frozen=True)
class Tool:
    """One tool: its name, a one-line description, an argument model and a handler."""

    name: str
    description: str
    args: type[BaseModel]
    handler: Callable[[CallContext, Any], Any]
    paths: Callable[[Any], list[str]] = lambda args: []
    dirs: Callable[[Any], list[str]] = lambda args: []  # directories to list or search
    patterns: Callable[[Any], list[str]] = lambda args: []  # globs claimed (owned files)
    operation: Operation | None = None  # the operation it was generated from


@dataclass
class CallContext:
    """Who is calling, where. ``agent`` is the session's bound identity: fixed by its
    registration (``swarmmail_init``, ``--agent`` at start, or a credential in
    ``HIVE_AGENT_TOKEN``) and proven by ``token``, the credential the session holds
    in memory. ``agent`` None: nobody registered yet (reads and creates work; claims,
    reservations and mail answer ``not_registered``). ``bind_error``: the name asked
    for at start could not be bound (held by someone else); calls that act say so.
    In-process code may set ``agent`` directly (trusted): such a context acts as that
    agent on its name alone, and no credential re-issue or retirement stops it. A runner
    that starts workers, or anything acting for code it does not trust, passes the
    worker's ``token`` (``open_context(..., token=...)``), re-checked at every call, as
    the example agent does. Workspaces are cached."""

    root: str
    agent: str | None = None
    session: str | None = None
    token: str | None = None
    issued: bool = False  # the token was issued to this session (swarmmail_init shows it)
    wanted: str | None = None  # the name asked for at start (--agent / HIVE_AGENT)
    bind_error: HiveError | None = None
    context_dir: str | None = None  # file_read / list_files sandbox (default: root)
    _workspaces: dict[str, Workspace] = field(default_factory=dict)

    @property
    def context_root(self) -> str:
        return self.context_dir or self.root

    @property
    def session_key(self) -> str:
        """The session per-session state (reads, call counts) is kept for."""
        return self.session or f"tools:{self.name}"

    def workspace(self) -> Workspace:
        key = self.agent or ""
        cached = self._workspaces.get(key)
        if cached is None:
            session = self.session or f"tools:{key or 'unregistered'}"
            if self.agent:
                cached = Workspace(self.root, actor=self.agent, session=session, from_env=False)
            else:
                cached = Workspace(self.root, session=session, from_env=False, unregistered=True)
                cached.identity_error = self.bind_error
            self._workspaces[key] = cached
        return cached

    def bind(self, agent: str, token: str | None, *, issued: bool = False) -> None:
        """Act as ``agent`` (proven by ``token``) from now on."""
        self.agent = agent
        self.token = token
        self.issued = issued
        self.bind_error = None
        self._workspaces.pop("", None)

    @property
    def name(self) -> str:
        """The caller's name for logs, rate limits and permissions (``*`` rules only
        apply to a caller that has not registered)."""
        return self.agent or "-"

    @property
    def from_tool(self) -> bool:
        return True

    def allows(self, tool: str) -> files.PathFilter:
        """May this caller reach a file with ``tool`` (the permission rules)?"""
        return path_filter(self, tool)

    def reads_before_writes(self) -> bool:
        """Must this caller read a file before writing it (its agent profile)?"""
        return bool(profile_of(self).read_before_write)

    @property
    def state_dir(self) -> str:
        return self.workspace().git.paths.hive_state_dir


def open_context(root: str, *, agent: str | None, token: str | None, session: str) -> CallContext:
    """The context of a tool surface started by a runner: bound by the credential
    ``token`` (whose name must be ``agent`` when both are given), else by
    registering ``agent`` (a fresh credential held in memory); a name held by
    someone else leaves the session unbound with the reason (``bind_error``)."""
    from hive.domain.identity import register_agent, verify_token

    ctx = CallContext(root=root, session=session)
    probe = Workspace(root, session=session, from_env=False)
    if token:
        name = verify_token(probe, token)
        if agent and agent != name:
            raise NotYourIdentity(
                f"you are {name} (by HIVE_AGENT_TOKEN), not {agent} (named by --agent,"
                " --actor or HIVE_AGENT)",
                agent=name,
            )
        ctx.bind(name, token)
        return ctx
    if agent:
        ctx.wanted = agent
        try:
            registered = register_agent(probe, name=agent, session=session)
        except (NameTaken, NotOwner) as exc:
            why = exc.message.split(";")[0]  # its advice is for a caller free to choose
            ctx.bind_error = NotYourIdentity(
                f"this session was started as {agent}, which it cannot prove ({why}): start"
                f" it again with {agent}'s credential in HIVE_AGENT_TOKEN, or under another"
                " name (--agent, HIVE_AGENT)",
                agent=agent,
            )
            return ctx
        ctx.bind(registered.name, registered.token, issued=True)
    return ctx


def operation_tool(op: Operation) -> Tool:
    """The agent tool of an operation described in ``hive/ops``."""

    def paths(args: Any) -> list[str]:
        return [files.permission_path(p) for p in op.paths(args)] if op.paths else []

    def dirs(args: Any) -> list[str]:
        return [files.permission_path(p) for p in op.dirs(args)] if op.dirs else []

    def patterns(args: Any) -> list[str]:
        return [files.permission_path(p) for p in op.patterns(args)] if op.patterns else []

    def handler(ctx: CallContext, args: Any) -> Any:
        if op.access == "registered":  # the seed's rule: swarmmail_init comes first
            from hive.domain.mail import require_registered

            ws = ctx.workspace()
            require_registered(ws, ws.require_agent(op.name))
        result = op.call(ctx, args)
        return result if op.answer is None else op.answer(result, args)

    return Tool(op.name, op.summary, op.params, handler, paths, dirs, patterns, operation=op)


_REGISTRY: dict[str, Tool] = {}
_MADE: dict[str, Tool] = {}  # tools made one by one (get_tool) before the registry was


def _registry() -> dict[str, Tool]:
    """Every agent tool by name: one for each operation described in ``hive/ops`` that
    agents are offered (same name, parameters and result as its CLI command), made on
    first use. Descriptions are deliberately terse: agents pay for schemas in tokens."""
    if not _REGISTRY:
        from hive.ops.catalog import declare

        declare()  # every operation declared

        # in the index's order (the catalogue's), whatever get_tool imported first
        _REGISTRY.update(
            {name: _MADE.get(name) or operation_tool(OPERATIONS[name]) for name in TOOL_MODULES}
        )
    return _REGISTRY


def tools() -> list[Tool]:
    return list(_registry().values())


def get_tool(name: str) -> Tool | None:
    """The tool ``name``; before the whole registry is needed, made from the one
    operation module that declares it (``hive/ops/toolindex.py``)."""
    if _REGISTRY or name not in TOOL_MODULES:
        return _registry().get(name)
    made = _MADE.get(name)
    if made is None:
        __import__(f"hive.ops.{TOOL_MODULES[name]}")
        made = _MADE[name] = operation_tool(OPERATIONS[name])
    return made


def prepare(names: Iterable[str], models: Iterable[type[BaseModel]] = ()) -> None:
    """Load in this process what a call of each of these tools would load on first use:
    its operation module, the modules every call consults, and the validators of the
    models every call uses, of the tool's parameters and result, and of ``models``
    (``hive/models/base.py``). For a process that forks workers calling them (an
    agent's ``preload``, ``hive/domain/swarm/forked.py``): done once, not per worker."""
    from hive.domain import permissions  # noqa: F401  (check_protected, every call)
    from hive.models.base import build_models, models_in
    from hive.models.policy import PermissionPolicy
    from hive.models.tools_config import EventsConfig, HookLists, ToolsConfig

    used: list[type[BaseModel]] = [AgentProfile, PermissionPolicy, ToolsConfig, HookLists]
    used += [EventsConfig, *models]
    for name in names:
        tool = get_tool(name)
        if tool is not None:
            used.append(tool.args)
            used += models_in(tool.operation.result) if tool.operation else []
    build_models(used)


# ------------------------------------------------------------------ calling


def call_tool(ctx: CallContext, name: str, args: Any) -> dict[str, Any]:
    """Run one tool call; never raises. Success: ``{"result": ...}``."""
    started = time.monotonic()
    hooks: list[governance.HookRun] = []
    try:
        outcome = _call(ctx, name, args, hooks)
    except Exception as exc:  # the last line of defence: never a traceback
        outcome = _internal(exc)
    if "error" in outcome and isinstance(name, str) and name in STATUS_SHAPED:
        outcome.setdefault("status", "error")
    _log(ctx, name, args, outcome, started, hooks)
    return outcome


def _unknown_tool(name: Any) -> dict[str, Any]:
    """The error of a call to no tool: the tool meant (``hive_redy``: ``hive_ready``),
    then every tool's name."""
    known = sorted(_registry())
    meant = _closest(name, known) if isinstance(name, str) else None
    named = f"did you mean {meant!r}? " if meant else ""
    return {
        "error": f"unknown tool {name!r}; {named}known tools: {', '.join(known)}",
        "code": "unknown_tool",
    }


def _internal(exc: BaseException) -> dict[str, Any]:
    if isinstance(exc, RecursionError):
        return {"error": "arguments or data are nested too deeply", "code": "invalid_arguments"}
    known = not_a_bug(exc)  # a full disk, a damaged repository: as the CLI says it
    if known is not None:
        return known.to_dict()
    return {"error": f"internal error: {type(exc).__name__}: {exc}", "code": "internal_error"}


def _call(
    ctx: CallContext, name: str, args: Any, hooks: list[governance.HookRun]
) -> dict[str, Any]:
    """One call through the policy every agent call meets (``hive.domain.policy``)."""

    def resolve() -> policy.Call | dict[str, Any]:
        tool = get_tool(name) if isinstance(name, str) else None
        if tool is None:
            return _unknown_tool(name)
        parsed = _validate(tool, args)
        if isinstance(parsed, dict):
            return parsed
        parsed = repo_relative(ctx, tool, parsed)
        return policy_call(tool, parsed, lambda checked: _handle(ctx, tool, checked))

    try:
        return policy.gated(ctx, resolve, agent=ctx.agent, known=list(TOOL_MODULES), hooks=hooks)
    except HiveError as exc:
        return exc.to_dict()


def repo_relative(ctx: CallContext, tool: Tool, parsed: BaseModel) -> BaseModel:
    """``parsed`` with each absolute path inside the repository that the tool takes as a
    repository path (its operation's ``paths``, ``dirs`` and ``patterns``: fs_read's
    path, files_touched, a cell's files) given from the repository's top directory, as
    swarmmail_reserve and swarm_record_outcome already took them: an agent that
    reserved ``/repo/src/a.py`` then had ``swarm_complete`` refuse the same path as
    "absolute; use a path inside the repository". A path outside is left to be refused."""
    op = tool.operation
    if op is None:
        return parsed
    named = [
        path
        for extract in (op.paths, op.dirs, op.patterns)
        if extract is not None
        for path in extract(parsed)
    ]
    inside = {path: rel for path in named if (rel := _inside(ctx.root, path)) is not None}
    if not inside:
        return parsed
    changed: dict[str, Any] = {}
    for name in type(parsed).model_fields:
        value = getattr(parsed, name)
        if isinstance(value, str) and value in inside:
            changed[name] = inside[value]
        elif isinstance(value, list) and any(isinstance(v, str) and v in inside for v in value):
            changed[name] = [inside.get(v, v) if isinstance(v, str) else v for v in value]
    marked = path_parameter(op.params)
    if marked is not None and marked[0] in changed:  # rebased on the agent's directory next
        workdir = _working_directory(ctx)
        if workdir:
            changed[marked[0]] = posixpath.relpath(changed[marked[0]], workdir)
    return parsed.model_copy(update=changed)


def _working_directory(ctx: CallContext) -> str | None:
    """The caller's working directory (``agents.NAME.directory``), repository-relative."""
    from hive.domain.agents import profile, working_directory

    ws = ctx.workspace()
    return working_directory(ws, profile(ws, ctx.name), ctx.name)


def _inside(root: str, path: str) -> str | None:
    """``path``, when absolute and inside ``root`` (as given, or as really reached), as
    the path from ``root``; else None."""
    if not isinstance(path, str) or not os.path.isabs(path) or "\0" in path:
        return None
    given = os.path.normpath(path)
    for base in dict.fromkeys((os.path.normpath(root), os.path.realpath(root))):
        if given == base or given.startswith(base + os.sep):
            return os.path.relpath(given, base).replace(os.sep, "/")
    return None


def policy_call(
    tool: Tool, parsed: BaseModel, handler: Callable[[Any], Any], shown: bool = False
) -> policy.Call:
    """A call of ``tool`` as the policy sees it (``hive.domain.policy.Call``);
    ``shown``: its handler's result is made JSON values only for the post hooks."""
    marked = path_parameter(tool.operation.params) if tool.operation else None
    return policy.Call(
        tool=tool.name,
        params=parsed,
        handler=handler,
        paths=tool.paths,
        dirs=tool.dirs,
        patterns=tool.patterns,
        path_param=None if marked is None else (marked[0], marked[1].in_context),
        **({"shown": jsonable} if shown else {}),
    )


def agent_tools(ctx: CallContext) -> tuple[list[Tool], list[str]]:
    """The tools ``ctx.agent`` may call (its ``tools`` list in ``agents:``, else all)
    and warnings for unknown names in that list (they are skipped)."""
    everything = tools()
    allowed, warnings = agent_tool_names(ctx)
    if allowed is None:
        return everything, warnings
    return [t for t in everything if t.name in allowed], warnings


def agent_tool_names(ctx: CallContext) -> tuple[list[str] | None, list[str]]:
    """What :func:`agent_tools` says, by name (None: every tool), without making the
    tools (which imports every operation module)."""
    from hive.domain.agents import tool_list

    return tool_list(profile_of(ctx), list(TOOL_MODULES))


def profile_of(ctx: CallContext) -> AgentProfile:
    """The calling agent's profile (``agents:`` in the committed config)."""
    from hive.domain.agents import profile

    return profile(ctx.workspace(), ctx.name)


def _handle(ctx: CallContext, tool: Tool, parsed: BaseModel) -> dict[str, Any]:
    try:
        return {"result": jsonable(tool.handler(ctx, parsed))}
    except HiveError as exc:
        return exc.to_dict()
    except Exception as exc:
        return _internal(exc)


def _validate(tool: Tool, args: Any) -> BaseModel | dict[str, Any]:
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return {"error": f"{tool.name}: args must be a JSON object", "code": "invalid_arguments"}
    if nesting_depth(args, MAX_ARGS_DEPTH) > MAX_ARGS_DEPTH:
        return {
            "error": f"{tool.name}: arguments are nested deeper than {MAX_ARGS_DEPTH} levels",
            "code": "invalid_arguments",
        }
    # Bytes of UTF-8, as the call arrived: not its \uXXXX escapes (6 bytes a character).
    text = json.dumps(args, default=str, ensure_ascii=False)
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as exc:  # JSON may escape one; no store or file takes it
        return {
            "error": f"{tool.name}: arguments hold a lone surrogate"
            f" (U+{ord(text[exc.start]):04X}), which is not text",
            "code": "invalid_arguments",
        }
    if size > MAX_ARGS_BYTES:
        return {
            "error": f"{tool.name}: arguments are too large ({size} bytes > {MAX_ARGS_BYTES})",
            "code": "invalid_arguments",
        }
    try:
        return _whole_numbers_validated(tool.args, args)
    except ValidationError as exc:
        errors = exc.errors()
        error = errors[0]
        where = field_path(args, error["loc"]) or "args"
        return {
            "error": f"{tool.name}: invalid argument {where!r}: {_verdict(args, errors)}"
            + argument_hint(tool.args, args, where, error),
            "code": "invalid_arguments",
            "field": where,
        }


def _verdict(args: dict[str, Any], errors: list[Any]) -> str:
    """Pydantic's message for the first error; for an argument that may take several
    forms (a strategy or ``"auto"``, text or an object), every form it may take, where
    pydantic gives one error a form."""
    first = field_path(args, errors[0]["loc"])
    alike = [e for e in errors if field_path(args, e["loc"]) == first]
    lead = "Input should be "
    if len(alike) < 2 or not all(e["msg"].startswith(lead) for e in alike):
        return str(errors[0]["msg"]).removeprefix("Value error, ")  # a validator's own words
    if all(e["type"] == "literal_error" for e in alike):
        values = [
            value
            for e in alike
            for value in str(e["ctx"]["expected"]).replace(" or ", ", ").split(", ")
        ]
        return lead + ", ".join(values[:-1]) + " or " + values[-1]
    forms = list(dict.fromkeys(e["msg"][len(lead) :] for e in alike))
    return lead + " or ".join(forms)


def _whole_numbers_validated(model: type[BaseModel], args: dict[str, Any]) -> BaseModel:
    """``model`` validated from ``args``, a whole number written as a JSON float (``5.0``,
    ``1e3``) taken as the integer it is wherever an integer is expected: JSON Schema's
    ``integer`` (the type the schemas declare; the seeds say ``number``) admits it. The
    models stay strict otherwise (no text for numbers, no numbers for booleans)."""
    try:
        return model.model_validate(args)
    except ValidationError as exc:
        fixed = _with_whole_numbers(args, exc.errors())
        if fixed is None:
            raise
    return model.model_validate(fixed)


def _with_whole_numbers(args: dict[str, Any], errors: list[Any]) -> dict[str, Any] | None:
    """A copy of ``args`` in which each integral float an ``int_type`` error is about
    is an int; None when no error is about one."""
    import copy

    fixed: dict[str, Any] | None = None
    for error in errors:
        value = error["input"]
        if error["type"] != "int_type" or not isinstance(value, float):
            continue
        if not value.is_integer():
            continue
        path = _argument_path(args, error["loc"])
        if not path:
            continue
        fixed = fixed if fixed is not None else copy.deepcopy(args)
        node: Any = fixed
        for part in path[:-1]:
            node = node[part]
        node[path[-1]] = int(value)
    return fixed


def argument_hint(model: type[BaseModel], args: dict[str, Any], where: str, error: Any) -> str:
    """The next step for a top-level argument an LLM got wrong: the name it meant
    (``ttlSeconds``, ``time_out``, ``labels``), or leaving out a null."""
    known = [f.alias or name for name, f in model.model_fields.items()]
    if error["type"] == "extra_forbidden" and where in args:
        meant = _closest(where, known)
        named = f"did you mean {meant!r}? " if meant else ""
        return f"; {named}its arguments: {', '.join(known)}"
    if error["type"] == "missing":
        given = [key for key in args if key not in known and _closest(key, [where])]
        return f" (given as {given[0]!r})" if given else ""
    field = next((f for name, f in model.model_fields.items() if where in (name, f.alias)), None)
    if where in args and args[where] is None and field is not None and not field.is_required():
        return "; null is not accepted: leave the argument out for its default"
    return _type_hint(error["type"], error["input"], field)


def _type_hint(kind: str, given: Any, field: FieldInfo | None = None) -> str:
    """How to write a value of the type an argument wants, for the usual slips: a
    number or a boolean in quotes, a fraction for a count, one string for a list, a
    list or an object sent as a string holding its JSON."""
    if kind == "int_type":
        return '; send a whole number without quotes (3, not "3" or 2.5)'
    if kind == "bool_type":
        return "; send true or false without quotes"
    wanted = {"list_type": list, "dict_type": dict}.get(kind)
    if wanted is not None and isinstance(given, str) and _holds_json(given, wanted):
        shape = "list" if wanted is list else "object"
        return f"; send the {shape} itself as JSON, not a string holding it"
    if kind == "list_type" and isinstance(given, str):
        if field is None or _items_are_text(field):
            return f"; send a list, even of one: {json.dumps([given[:60]], ensure_ascii=False)}"
        return "; send a JSON list ([...]) of the items its schema describes"
    if kind == "dict_type":
        return "; send a JSON object ({...})"
    return ""


def _holds_json(text: str, wanted: type) -> bool:
    """Whether ``text`` is the JSON of a ``wanted`` (list or dict) value."""
    try:
        return isinstance(json.loads(text), wanted)
    except ValueError:
        return False


def _items_are_text(field: FieldInfo) -> bool:
    """Whether a list argument's items are strings (so one string is a list of one)."""
    import typing

    for annotation in (field.annotation, *typing.get_args(field.annotation)):
        if typing.get_origin(annotation) is list:
            item = (typing.get_args(annotation) or (str,))[0]
            if typing.get_origin(item) is typing.Annotated:
                item = typing.get_args(item)[0]
            return item is str
    return True


def _closest(name: str, known: list[str]) -> str | None:
    """The known argument ``name`` means: the same but for case, ``_`` and ``-``, else the
    closest spelling."""
    import difflib

    def plain(text: str) -> str:
        return text.lower().replace("_", "").replace("-", "")

    same = [k for k in known if plain(k) == plain(name)]
    if same:
        return same[0]
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
    return close[0] if close else None


_TYPE_TAGS = {"str", "int", "float", "bool", "list", "dict", "none", "function-after"}


def field_path(args: Any, loc: tuple[int | str, ...]) -> str:
    """The argument a validation error is about, without pydantic's union-member
    tags (``response``, not ``response.str``)."""
    return ".".join(str(part) for part in _argument_path(args, loc))


def _argument_path(args: Any, loc: tuple[int | str, ...]) -> list[int | str]:
    """The keys and indexes in ``args`` of the value a validation error's ``loc`` is
    about (pydantic's union-member tags left out)."""
    parts: list[int | str] = []
    node = args
    for part in loc:
        if isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        elif isinstance(node, dict) and isinstance(part, str) and part not in _TYPE_TAGS:
            if "[" in part:
                continue
            node = node.get(part)
        else:
            continue
        parts.append(part)
    return parts


def settings_for(ctx: CallContext) -> governance.Settings:
    """The committed ``tools:`` section of .hive/config.yaml, parsed."""
    return tool_settings(ctx.workspace())


def check_call_paths(
    ctx: CallContext, settings: governance.Settings, tool: str, paths: list[str]
) -> None:
    """Check each path as given and, when a symlink leads elsewhere, as really reached."""
    governance.check_paths(settings, ctx.name, tool, with_real_paths(ctx.root, paths))


def path_filter(ctx: CallContext, tool: str) -> files.PathFilter:
    """A per-file predicate: may ``ctx.agent`` reach this file with ``tool``?"""
    settings = settings_for(ctx)
    if not governance.has_rules(settings, ctx.name, tool) or profile_of(ctx).bypass_permissions:
        return lambda path: True

    def allowed(path: str) -> bool:
        try:
            check_call_paths(ctx, settings, tool, [path])
        except governance.PathPermissionDenied:
            return False
        return True

    return allowed


def write_check(ctx: CallContext) -> files.WriteCheck:
    """The fs_write permissions of the proposing agent, checked again at apply time."""
    return agents_write_check(ctx.workspace())


def jsonable(value: Any) -> Any:
    """A result as JSON values (models by their aliases, times as hive writes them)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", by_alias=True)
    if isinstance(value, datetime):
        return format_time(value)  # as the models' times (``hive.models.base.Time``)
    if isinstance(value, list | tuple):
        return [jsonable(item) for item in value]
    if isinstance(value, dict):
        return {key: jsonable(item) for key, item in value.items()}
    return value


def _log(
    ctx: CallContext,
    name: Any,
    args: Any,
    outcome: dict[str, Any],
    started: float,
    hooks: list[governance.HookRun],
) -> None:
    try:
        state_dir = ctx.state_dir
        event = policy.call_event(
            ctx, ctx.agent, str(name), args, outcome=outcome, started=started, hooks=hooks
        )
    except HiveError:
        return
    except Exception as exc:  # the settings could not be read: the call's answer says why
        if not_a_bug(exc) is None:
            raise
        return
    governance.log_event(state_dir, event)
