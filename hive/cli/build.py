"""CLI commands generated from operation descriptions (``hive/ops/spec.py``).

Each ``Command`` of an ``Operation`` becomes a typer command: its positional
arguments and options come from the operation's parameter model (help text from
the field descriptions), ``--json`` prints the result model, and everything else
is the presenter's (``hive/cli/present.py``): a table, a line, a colour. Only
public typer APIs are used: the command is an ordinary function whose signature
is built from the model.
"""

from __future__ import annotations

import contextlib
import inspect
import os
import sys
import time
import types
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Union, get_args, get_origin

import typer
from pydantic import ValidationError
from pydantic.fields import FieldInfo
from typer.core import TyperCommand

from hive.cli import answer_stands, output, reader_gone
from hive.cli.common import OPTIONS, run_op, show, use_json, workspace
from hive.errors import HiveError
from hive.ops.spec import OVERRIDE, PROGRESS, Command, Operation, Params, Progress

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

JSON = "json_output"
VIEW: dict[str, Any] = {}  # the presentation options of the command being run
KEYWORD = inspect.Parameter.KEYWORD_ONLY


@dataclass(frozen=True)
class Extra:
    """A command-line input mode beyond the operation's parameters (``create --from
    FILE``): its own option, and what takes over when it is given: ``read(given)``
    reads the input, ``run(given, input)`` acts on it (both raise hive's errors, which
    the caller reports); ``claims(input)``: the globs
    the cells it creates claim as their owned files (an agent's meet the path rules of
    the operation's tool, as that tool's ``files`` do)."""

    name: str
    flag: str
    annotation: Any
    read: Callable[[dict[str, Any]], Any]
    run: Callable[[dict[str, Any], Any], None]
    claims: Callable[[Any], list[str]]


@dataclass(frozen=True)
class Presenter:
    """How a command shows its result to a person. ``render(result, params, ws)``;
    ``notes(ws, result)`` runs also with ``--json`` (warnings on stderr).
    ``views``: options that only choose how the result is shown (name -> (typer
    annotation, default)); ``render`` finds their values in ``VIEW``.
    ``inputs(ws, given)`` reads what a person types the way a shell means it (``-``
    for standard input, paths relative to the current directory) before the values
    are validated as the operation's parameters. ``explain(error)``: what a person
    needs to see about a failure beyond its one line (a failed gate's output).
    ``opens``: how the command opens the repository when not as the acting identity
    (registration: the name asked for is the one to register). ``progress(params)``:
    a context giving the progress reporter of a long call (a bar on a terminal; see
    ``hive.ops.spec.PROGRESS``). ``json(result, params, ws)``: how ``--json`` prints
    a result that is a stream rather than one document (a log: JSON lines)."""

    render: Callable[[Any, Any, Any], None]
    notes: Callable[[Any, Any], None] | None = None
    inputs: Callable[[Any, dict[str, Any]], None] | None = None  # (ws, given) -> in place
    extra: Extra | None = None
    exit_code: Callable[[Any], int] | None = None  # what a result means (a lost CAS: 4)
    views: Mapping[str, tuple[Any, Any]] = field(default_factory=dict)
    explain: Callable[[HiveError], None] | None = None
    opens: Callable[[], Workspace] | None = None
    progress: Callable[[Any], AbstractContextManager[Progress | None]] | None = None
    json: Callable[[Any, Any, Any], None] | None = None


@dataclass
class ShellCaller:
    """The command line as an operation's caller (``hive.ops.spec.Caller``): the
    process's workspace; a shell is never bound to an identity, each command proves
    it with the credential in ``HIVE_AGENT_TOKEN`` (``token``); ``wanted``: the name
    claimed with ``--actor`` / ``HIVE_AGENT``. A person's shell reaches every file."""

    opened: Workspace
    agent: str | None = None
    token: str | None = None
    issued: bool = False
    wanted: str | None = None

    @classmethod
    def of(cls, opened: Workspace) -> ShellCaller:
        token = os.environ.get("HIVE_AGENT_TOKEN") or None
        wanted = OPTIONS.actor or os.environ.get("HIVE_AGENT") or None
        return cls(opened, token=token, wanted=wanted)

    @property
    def root(self) -> str:
        return self.opened.root

    @property
    def session(self) -> str | None:
        return self.opened.session

    @property
    def context_root(self) -> str:
        return os.getcwd()

    @property
    def session_key(self) -> str:
        return self.opened.session

    @property
    def name(self) -> str:
        return self.opened.actor

    @property
    def from_tool(self) -> bool:
        return False

    def workspace(self) -> Workspace:
        return self.opened

    def bind(self, agent: str, token: str | None, *, issued: bool = False) -> None:
        self.token, self.issued = token, issued

    def allows(self, tool: str) -> Callable[[str], bool]:
        return lambda path: True

    def reads_before_writes(self) -> bool:
        return False


def option_names(name: str, command: Command, info: FieldInfo) -> tuple[str, ...]:
    dashed = "--" + name.replace("_", "-")
    names = [dashed, *command.short.get(name, ())]
    if info.annotation is bool and _flag_default(name, command, info) is not False:
        # a flag that is on by default, or must be given: the short names are its "off"
        # names (--exclusive/--shared, --success/--failure, --query-cass/--no-cass)
        negatives = command.short.get(name, (f"--no-{name.replace('_', '-')}",))
        return (f"{dashed}/{negatives[0]}", *(f" /{other}" for other in negatives[1:]))
    return tuple(dict.fromkeys(names))


def _flag_default(name: str, command: Command, info: FieldInfo) -> bool | None:
    """A flag's default on the command line (None: the flag must be given)."""
    if info.is_required():
        return None
    return bool(command.defaults.get(name, info.default))


def _cli_type(annotation: Any) -> Any:
    """The type a command-line value is read as (text, number, flag, repeatable)."""
    origin = get_origin(annotation)
    if origin is Annotated:
        return _cli_type(get_args(annotation)[0])
    if origin in (Union, types.UnionType):
        concrete = [a for a in get_args(annotation) if a is not type(None)]
        return _cli_type(concrete[0]) if len(concrete) == 1 else str
    if origin is list:
        return list[str]
    if annotation in (bool, int, float):
        return annotation
    return str


def _bounds(info: FieldInfo) -> dict[str, Any]:
    """``min``/``max`` of an integer option, from the field's constraints."""
    found: dict[str, Any] = {}
    for item in info.metadata:
        if getattr(item, "ge", None) is not None:
            found["min"] = item.ge
        if getattr(item, "le", None) is not None:
            found["max"] = item.le
    return found


def offered(op: Operation, command: Command) -> list[str]:
    """The fields ``command`` offers on the command line."""
    return [
        name
        for name in op.params.model_fields
        if name not in command.fixed and name not in command.hidden
    ]


METAVARS: dict[Any, str] = {int: "N", float: "NUMBER", str: "TEXT", list[str]: "TEXT"}


def _choices(annotation: Any) -> list[str]:
    """The values a ``Literal`` field takes (also inside ``X | None``)."""
    origin = get_origin(annotation)
    if origin is Literal:
        return [str(value) for value in get_args(annotation)]
    if origin in (Union, types.UnionType, Annotated):
        return [choice for arg in get_args(annotation) for choice in _choices(arg)]
    return []


def unlimited(info: FieldInfo) -> bool:
    """A count whose null means "no limit" (``limit: int | None = 50``): on the command
    line it reads ``N`` or ``all``."""
    kinds = set(get_args(info.annotation))
    return kinds == {int, type(None)} and isinstance(info.default, int)


NO_LIMIT = "all"


# who may override on the command line: an agent (a tool's caller) needs to be a
# coordinator (and say why), a person (no credential: git's user.name) may too
PERSON_OVERRIDE = "not yours: people, and coordinators with --reason"


def _help(info: FieldInfo, kind: Any) -> str:
    """A field's help: its description, its choices, and whether it repeats."""
    description = (info.description or "").rstrip(".").replace(OVERRIDE, PERSON_OVERRIDE)
    if unlimited(info):
        description = description.replace("null: all", "").strip(" ()")
        alone = f"how many, or {NO_LIMIT}"
        description = f"{description} (or {NO_LIMIT})" if description else alone
    parts = [description]
    choices = _choices(info.annotation)
    if choices:
        parts.insert(0, "|".join(choices))
    if kind == list[str]:
        parts.append("(repeatable)")
    return " ".join(part for part in parts if part)


def _parameter(op: Operation, command: Command, presenter: Presenter, name: str) -> Any:
    """The typer parameter of field ``name``: an argument, a flag or an option."""
    info = op.params.model_fields[name]
    no_limit = unlimited(info)  # N or all
    kind: Any = _cli_type(info.annotation)
    if name in command.repeat:
        kind = list[str]  # words handed to the field's parser as a list
    elif name in op.parsers and kind != list[str]:
        kind = str  # the parser reads the text (``P1``)
    elif no_limit:
        kind = str  # ``N`` or ``all`` (parse_params)
    help_text = command.helps.get(name) or _help(info, kind)
    required = info.is_required()
    given = None if required else info.get_default(call_default_factory=True)
    shown = command.defaults.get(name, given)
    if shown is None and no_limit:
        shown = NO_LIMIT
    suffix = f" (default {shown})" if shown not in (None, "", [], {}) else ""
    spec: Any
    if name in command.arguments:
        required = _required_argument(op, command, presenter, name)
        required = required and name not in command.argument_options  # checked once joined
        if command.many and name == command.arguments[0]:
            kind = list[str]
            help_text = "one or more (one write for all)" if op.writes else "one or more"
        help_text = (help_text + suffix).strip()
        spec = typer.Argument(metavar=name.upper(), help=help_text or None, show_default=False)
    elif kind is bool:
        default_flag = _flag_default(name, command, info)
        flag = typer.Option(*option_names(name, command, info), help=help_text or None)
        return inspect.Parameter(
            name,
            KEYWORD,
            default=inspect.Parameter.empty if default_flag is None else default_flag,
            annotation=Annotated[bool, flag],
        )
    else:
        required = required and presenter.extra is None
        bounds = _bounds(info) if kind in (int, float) else {}
        spec = typer.Option(
            *option_names(name, command, info),
            help=(help_text + suffix).strip() or None,
            show_default=False,
            metavar=f"N|{NO_LIMIT}" if no_limit else METAVARS.get(kind, "TEXT"),
            min=bounds.get("min"),
            max=bounds.get("max"),
        )
    annotation: Any = Annotated[kind if required else (kind | None), spec]
    default: Any = inspect.Parameter.empty if required else None
    return inspect.Parameter(name, KEYWORD, default=default, annotation=annotation)


AS_OPTION = "_as_option"  # the parameter of an argument's option form: ``to_as_option``


def _required_argument(op: Operation, command: Command, presenter: Presenter, name: str) -> bool:
    """Whether the command line must give argument ``name``."""
    required = op.params.model_fields[name].is_required() and name not in command.defaults
    return (required or name in command.required) and presenter.extra is None


def _argument_option(op: Operation, command: Command, name: str) -> inspect.Parameter:
    """The repeatable option that also gives argument ``name`` (``--to NAME``)."""
    if command.arguments[-1:] != (name,) or not _a_list(op, command, name):
        raise LookupError(f"'hive {command.name}': only its last argument, a list, has options")
    described = (op.params.model_fields[name].description or "").rstrip(".")
    same = f"the same as {name.upper()} (repeatable)"
    spec = typer.Option(
        *command.argument_options[name],
        help=f"{described}; {same}" if described else same.capitalize(),
        show_default=False,
        metavar="TEXT",
    )
    annotation = Annotated[list[str] | None, spec]
    return inspect.Parameter(name + AS_OPTION, KEYWORD, default=None, annotation=annotation)


def _a_list(op: Operation, command: Command, name: str) -> bool:
    """Whether argument ``name`` takes one or more words."""
    if _cli_type(op.params.model_fields[name].annotation) == list[str] or name in command.repeat:
        return True
    return command.many and command.arguments == (name,)


class ArgumentOptions(TyperCommand):
    """A command whose last argument may also be given as an option
    (``Command.argument_options``): each value of such an option joins the argument's
    values where it stands on the command line (``A --to B C``: A, B, C)."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, as_arguments(args, self.params))


def as_arguments(args: list[str], params: list[Any]) -> list[str]:
    """``args`` with each ``--to NAME`` / ``--to=NAME`` (an option of a parameter
    named ``*_as_option``) given as the word ``NAME`` in its place, read as click reads
    the command's options (the value of ``-b --to`` is ``--to``, never a recipient). A
    value before the command's earlier arguments waits until they are given (they take
    the first words); one that looks like an option is left to the option."""
    forms = {opt for p in params if p.name.endswith(AS_OPTION) for opt in p.opts}
    valued = {opt for p in params if _valued(p) for opt in p.opts} - forms
    before = sum(p.param_type_name == "argument" for p in params) - 1  # one word each
    words: list[str] = []
    waiting: list[str] = []
    rewritten: list[str] = []
    literal, position = False, 0
    while position < len(args):
        token = args[position]
        value, taken = (None, 1) if literal else _form_value(token, forms, args[position + 1 :])
        if value is not None and not value.startswith("-"):
            (waiting if len(words) < before else rewritten).append(value)
            position += taken
            continue
        rewritten.append(token)
        position += 1
        if not literal and token == "--":
            literal = True
        elif not literal and token.startswith("-") and token != "-":
            if _takes_next(token, valued) and position < len(args):
                rewritten.append(args[position])
                position += 1
        else:
            words.append(token)
            if len(words) == before:
                rewritten += waiting
                waiting = []
    form = min(forms, key=len, default="")  # still waiting: the option's, before any ``--``
    return [item for value in waiting for item in (form, value)] + rewritten


def _valued(param: Any) -> bool:
    """Whether click option ``param`` takes a value."""
    return bool(param.param_type_name == "option" and not param.is_flag and not param.count)


def _form_value(token: str, forms: set[str], rest: list[str]) -> tuple[str | None, int]:
    """The value ``token`` gives by an option form, and how many words it takes."""
    if token in forms:
        return (rest[0], 2) if rest else (None, 1)
    for form in forms:
        attached = form + "=" if form.startswith("--") else form
        if token.startswith(attached) and len(token) > len(attached):
            return token[len(attached) :], 1
    return None, 1


def _takes_next(token: str, valued: set[str]) -> bool:
    """Whether option word ``token`` takes the next word as its value (``-s``, ``--body``,
    a cluster ending in one: ``-as``; not ``-sTEXT`` or ``--body=TEXT``)."""
    if token.startswith("--"):
        return token in valued
    for index in range(1, len(token)):
        if "-" + token[index] in valued:
            return index == len(token) - 1
    return False


def command_function(op: Operation, command: Command, presenter: Presenter) -> Callable[..., None]:
    """A function typer turns into ``command``: parameters from ``op.params``."""
    parameters = _command_parameters(op, command, presenter)
    needed = {n for n in command.argument_options if _required_argument(op, command, presenter, n)}

    def run_command(**given: Any) -> None:
        _run_command(op, command, presenter, needed, given)

    run_command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run_command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    run_command.__doc__ = command.help or op.help or op.summary
    run_command.__name__ = "_".join(command.path)
    return run_command


def _command_parameters(
    op: Operation, command: Command, presenter: Presenter
) -> list[inspect.Parameter]:
    """The command's parameters: the operation's, the option forms of its arguments,
    the presenter's extra input and view options, and ``--json``."""
    parameters = [_parameter(op, command, presenter, name) for name in offered(op, command)]
    parameters += [_argument_option(op, command, name) for name in command.argument_options]
    if presenter.extra is not None:
        parameters.append(
            inspect.Parameter(
                presenter.extra.name,
                inspect.Parameter.KEYWORD_ONLY,
                default=None,
                annotation=presenter.extra.annotation,
            )
        )
    for view, (annotation, default) in presenter.views.items():
        parameters.append(inspect.Parameter(view, KEYWORD, default=default, annotation=annotation))
    json_option = typer.Option("--json", help="Print machine-readable JSON.")
    parameters.append(
        inspect.Parameter(
            JSON,
            inspect.Parameter.KEYWORD_ONLY,
            default=False,
            annotation=Annotated[bool, json_option],
        )
    )
    return parameters


def _run_command(
    op: Operation, command: Command, presenter: Presenter, needed: set[str], given: dict[str, Any]
) -> None:
    """Run ``command`` with the values typer parsed (``given``) and show its result."""
    use_json(bool(given.pop(JSON, False)))
    _join_argument_options(command, given, needed)
    VIEW.clear()
    VIEW.update({name: given.pop(name) for name in presenter.views})
    extra = presenter.extra
    if extra is not None and given.get(extra.name) is not None:
        _run_extra(op, extra, given)
        return
    if extra is not None:
        given.pop(extra.name, None)
        _require_arguments(command, given, extra)
    ws = run_op(presenter.opens or workspace)
    if presenter.inputs is not None:
        inputs = presenter.inputs
        run_op(lambda: inputs(ws, given))  # standard input that is not text: refused
    ids = _many(command, given)
    params = run_op(lambda: parse_params(op, command, given))
    caller = ShellCaller.of(ws)
    with _progress(presenter, params):
        first = command.arguments[0] if command.many else None
        result = run_op(lambda: _explained(presenter, lambda: _run(op, caller, params, ids, first)))
    if op.writes:  # committed: a Ctrl-C from here on would call a done write interrupted
        answer_stands()
    _present(presenter, ws, result, params)


def _present(presenter: Presenter, ws: Workspace, result: Any, params: Params) -> None:
    """Show ``result`` (its notes, then JSON or the rendering); exit with the code the
    presenter gives it, when not 0."""
    if presenter.notes is not None:
        presenter.notes(ws, result)
    try:
        if OPTIONS.json and presenter.json is not None:
            presenter.json(result, params, ws)
        else:
            show(result, OPTIONS.json, lambda: presenter.render(result, params, ws))
        sys.stdout.flush()
    except BrokenPipeError:
        reader_gone()
    code = presenter.exit_code(result) if presenter.exit_code is not None else 0
    if code:
        raise typer.Exit(code)


def _run_extra(op: Operation, extra: Extra, given: dict[str, Any]) -> None:
    """An input mode beyond the parameters (``hive create --from FILE``) calls the same
    tool: an agent's meets its policy, its input read once the call is counted (as a
    tool's arguments are checked then) and the globs its cells claim checked against
    the path rules as the tool's ``files`` are."""
    from hive.ops.toolindex import TOOL_MODULES

    ws = run_op(workspace)
    if op.name not in TOOL_MODULES or run_op(lambda: ws.principal.kind) != "agent":
        run_op(lambda: extra.run(given, extra.read(given)))
        return
    from hive.domain import policy

    args = {name: value for name, value in given.items() if value not in (None, False)}
    failed: list[HiveError] = []

    def resolve() -> policy.Call:
        found = extra.read(given)
        claimed = _claimable(extra.claims(found))

        def handler(checked: dict[str, Any]) -> dict[str, Any]:
            try:
                extra.run(given, found)
            except HiveError as exc:
                failed.append(exc)
                return exc.to_dict()
            return {"result": None}

        return policy.Call(op.name, args, handler, patterns=lambda checked: claimed)

    caller, logged = ShellCaller.of(ws), list[dict[str, Any]]()
    try:
        run_op(lambda: _gate(caller, op.name, args, resolve, logged))
    finally:
        _log_calls(caller, logged)
    if failed:
        run_op(lambda: _raise(failed[0]))


def _raise(error: HiveError) -> None:
    raise error


def _gate(
    caller: ShellCaller,
    tool: str,
    args: Any,
    resolve: Callable[[], Any],
    logged: list[dict[str, Any]],
) -> dict[str, Any]:
    """One call of an agent's command through ``policy.gated``: the hooks' notes on
    stderr, and the call's line of the event log (a tool call's, with ``"surface":
    "cli"``; ``args``: the parameters given) put first in ``logged`` (a batch's calls
    nest: the first ends last), for :func:`_log_calls`."""
    from hive.domain import policy
    from hive.ops.toolindex import TOOL_MODULES

    started, hooks = time.monotonic(), list[Any]()
    outcome: dict[str, Any] = {"error": "interrupted", "code": "interrupted"}
    try:
        outcome = policy.gated(
            caller, resolve, agent=caller.name, known=list(TOOL_MODULES), hooks=hooks
        )
    except HiveError as exc:
        outcome = exc.to_dict()
        raise
    except Exception as exc:
        outcome = _failure(exc)
        raise
    finally:
        line = policy.call_event(
            caller,
            caller.name,
            tool,
            args,
            outcome=outcome,
            started=started,
            hooks=hooks,
            surface="cli",
        )
        logged.insert(0, line)
    _hook_notes(outcome)
    return outcome


def _failure(exc: Exception) -> dict[str, Any]:
    """What the event log says of a call that ended by an error other than hive's."""
    import click

    if isinstance(exc, click.UsageError):
        return {"error": exc.format_message(), "code": "usage"}
    return {"error": f"internal error: {type(exc).__name__}: {exc}", "code": "internal_error"}


def _log_calls(caller: ShellCaller, logged: list[dict[str, Any]]) -> None:
    """The lines of an agent's calls, appended to the event log (best effort)."""
    from hive.domain import governance
    from hive.domain.context import state_dir

    try:
        where = state_dir(caller.workspace())
    except HiveError:
        return
    for event in logged:
        governance.log_event(where, event)


def _claimable(globs: list[str]) -> list[str]:
    """``globs`` in the form the path rules check (``files.permission_path``); one that
    is no valid glob is left to the input's own check, which says where it is."""
    from hive.domain.files import permission_path

    found = []
    for glob in globs:
        try:
            found.append(permission_path(glob))
        except HiveError:
            continue
    return found


def _hook_notes(outcome: dict[str, Any]) -> None:
    """The hooks' warnings and feedback to an agent's call, on stderr."""
    for note in [*outcome.get("warnings", []), *outcome.get("hook_feedback", [])]:
        output.err(f"warning: {note}")


def _join_argument_options(command: Command, given: dict[str, Any], needed: set[str]) -> None:
    """The values of an argument's option form that are still the option's (one that
    looks like an option: ``--to -x``) join the argument's; ``needed``: the arguments
    that must be given one way or the other."""
    from hive.cli.common import usage_error

    for name, forms in command.argument_options.items():
        joined = [*(given.get(name) or []), *(given.pop(name + AS_OPTION, None) or [])]
        given[name] = joined or given.get(name)
        if name in needed and not joined:
            usage_error(f"missing {name.upper()} (or {forms[0]})")


def _many(command: Command, given: dict[str, Any]) -> list[str] | None:
    """The values of a command's repeatable first argument (``hive close A B C``);
    the parameters are validated with the first."""
    if not command.many:
        return None
    first = command.arguments[0]
    ids = list(given.get(first) or [])
    given[first] = ids[0] if ids else None
    return ids


@contextlib.contextmanager
def _progress(presenter: Presenter, params: Params) -> Iterator[None]:
    """The call reports its progress to the presenter's bar, if it has one."""
    if presenter.progress is None:
        yield
        return
    with presenter.progress(params) as report:
        token = PROGRESS.set(report)
        try:
            yield
        finally:
            PROGRESS.reset(token)


def _run(
    op: Operation, caller: ShellCaller, params: Params, ids: list[str] | None, first: str | None
) -> Any:
    """One call, or the operation's batch for several ids (one id: its result alone).
    An agent's command of an operation that is a tool (``op.name``) meets the policy
    that tool's calls meet (:func:`_gated`); a person is not an agent."""
    from hive.ops.toolindex import TOOL_MODULES

    if op.name in TOOL_MODULES and _an_agent(caller):
        return _gated(op, caller, params, ids, first)
    return _call(op, caller, params, ids)


def _an_agent(caller: ShellCaller) -> bool:
    """Whether an agent calls (its credential in ``HIVE_AGENT_TOKEN``). A claim the
    credential does not prove is its error here (a read does not resolve who acts, and
    would run past the agent's policy); with no credential, or one of nobody, who acts
    is resolved (and refused) only where the operation acts, as before."""
    ws = caller.workspace()
    try:
        return ws.principal.kind == "agent"
    except HiveError:
        if caller.token is None:
            return False
        from hive.store import credentials

        if credentials.name_of_token(ws.git.paths.hive_state_dir, caller.token) is None:
            return False
        raise


def _call(op: Operation, caller: ShellCaller, params: Params, ids: list[str] | None) -> Any:
    if ids is None or op.batch is None:
        return op.call(caller, params)
    found = op.call_many(caller, params, ids)
    return found[0] if len(ids) == 1 else found


def _gated(
    op: Operation, caller: ShellCaller, params: Params, ids: list[str] | None, first: str | None
) -> Any:
    """``_call`` through the policy of the tool ``op.name`` (``hive.domain.policy``):
    its tools list, call limit, path rules, protected tools, rate limits and hooks,
    as the agent's tool call meets them; a batch is one call per id (``hive close A
    B``: two ``hive_close`` calls, each admitted, then the batch run once). A refusal
    raises its error; the hooks' warnings and feedback go to stderr; each call is a
    line of the event log, as a tool call is (:func:`_gate`)."""
    from hive.tools.registry import get_tool, policy_call

    tool = get_tool(op.name)
    assert tool is not None
    each = [params.model_copy(update={first: i}) for i in ids] if first and ids else [params]
    several = len(each) > 1
    done: list[Any] = []
    failed: list[HiveError] = []
    logged: list[dict[str, Any]] = []

    def admit(index: int) -> None:
        def handler(checked: Params) -> dict[str, Any]:
            if index + 1 < len(each):
                admit(index + 1)
            elif not (done or failed):
                try:
                    done.append(_call(op, caller, checked if not several else params, ids))
                except HiveError as exc:
                    failed.append(exc)
            if failed:
                return failed[0].to_dict()
            result = done[0]
            if several and isinstance(result, list) and len(result) == len(each):
                result = result[index]
            return {"result": result}

        _gate(
            caller,
            op.name,
            _given(each[index]),
            lambda: policy_call(tool, each[index], handler, shown=True),
            logged,
        )

    try:
        admit(0)
    finally:
        _log_calls(caller, logged)
    if failed:
        raise failed[0]
    return done[0]


def _given(params: Params) -> dict[str, Any]:
    """A command's parameters as a tool call would give them: by their names in the
    tool's schema, without the values left at their defaults."""
    given: dict[str, Any] = params.model_dump(mode="json", by_alias=True, exclude_defaults=True)
    return given


def _explained(presenter: Presenter, call: Callable[[], Any]) -> Any:
    """``call()``; a failure is explained to a person before its one line."""
    try:
        return call()
    except HiveError as exc:
        if presenter.explain is not None and not OPTIONS.json:
            presenter.explain(exc)
        raise


def _require_arguments(command: Command, given: dict[str, Any], extra: Extra) -> None:
    from hive.cli.common import usage_error

    for name in command.arguments:
        if given.get(name) is None:
            usage_error(f"missing {name.upper()} (or {extra.flag})")


def _shown(command: Command, name: str) -> str:
    """A parameter as the command line names it: ``NAME`` for an argument, else its
    ``--option``."""
    return name.upper() if name in command.arguments else "--" + name.replace("_", "-")


def _cli_problem(error: Any) -> str:
    """A validation error's words for a value typed on the command line: pydantic's,
    except where they name a Python type a person does not type."""
    if error["type"] == "dict_type":
        return 'expected a JSON object, in quotes for the shell: \'{"key": "value"}\''
    return str(error["msg"])


def parse_params(op: Operation, command: Command, given: dict[str, Any]) -> Params:
    """Command-line values -> the operation's parameters (the same model, validated
    without strict types: command-line values are text). Raises InvalidInput."""
    from hive.errors import InvalidInput

    model = op.params
    data: dict[str, Any] = {}
    for name, value in given.items():
        if value is None:
            continue
        parser = op.parsers.get(name)
        info = model.model_fields.get(name)
        if info is not None and unlimited(info) and str(value).lower() == NO_LIMIT:
            data[name] = None
            continue
        try:
            data[name] = parser(value) if parser is not None else value
        except RecursionError:  # JSON nested past Python's recursion limit
            raise InvalidInput(
                f"invalid {_shown(command, name)}: nested too deeply", field=name
            ) from None
    for name, value in command.defaults.items():
        data.setdefault(name, value)
    data.update(command.fixed)
    for name, value in data.items():
        if not _utf8(value):  # bytes that are not UTF-8 on the command line
            raise InvalidInput(
                f"invalid {_shown(command, name)} {_quoted(value)}: not UTF-8 text (a lone"
                " surrogate: a byte that is not UTF-8, or a \\udXXX escape)",
                field=name,
            )
    # a field with an alias (the seeds' camelCase names) is validated by its alias
    aliases = {name: info.alias for name, info in model.model_fields.items() if info.alias}
    fields = {alias: name for name, alias in aliases.items()}
    try:
        return model.model_validate(
            {aliases.get(name, name): value for name, value in data.items()}, strict=False
        )
    except ValidationError as exc:
        error = exc.errors()[0]
        where = str(error["loc"][0]) if error["loc"] else ""
        where = fields.get(where, where)
        shown = _shown(command, where)
        value = data.get(where)
        inside = ".".join(str(part) for part in error["loc"][1:])  # in a JSON value: where
        problem = f"{inside}: {error['msg']}" if inside else _cli_problem(error)
        raise InvalidInput(
            f"invalid {shown} {_quoted(value)}: {problem}"
            if where in data
            else f"missing {shown}: {error['msg']}",
            field=where,
        ) from None


def _utf8(value: Any) -> bool:
    """Whether every string in ``value`` is Unicode text (a byte of the command line
    that is not UTF-8 reaches Python as a lone surrogate, which nothing can store)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_utf8(key) and _utf8(item) for key, item in value.items())
    if isinstance(value, list | tuple):
        return all(_utf8(item) for item in value)
    return True


def _quoted(value: Any, limit: int = 60) -> str:
    """A value as an error quotes it: a 3,000-character title is not echoed whole."""
    text = repr(value)
    return text if len(text) <= limit else f"{text[: limit - 1]}… ({len(str(value))} characters)"


def add_commands(
    apps: dict[tuple[str, ...], typer.Typer],
    operations: list[Operation],
    presenters: dict[str, Presenter],
    words: set[str],
) -> None:
    """Register the commands whose first word is in ``words`` on their group's app
    (in the order the operations are declared)."""
    for op in operations:
        for command in op.commands:
            if command.path[0] not in words:
                continue
            presenter = presenters.get(command.name)
            if presenter is None:
                raise LookupError(f"no presenter for 'hive {command.name}'")
            group = apps[command.path[:-1]]
            kind = ArgumentOptions if command.argument_options else None
            group.command(command.path[-1], hidden=command.alias, cls=kind)(
                command_function(op, command, presenter)
            )
