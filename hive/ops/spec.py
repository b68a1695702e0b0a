"""One description per operation.

An ``Operation`` says, once, everything the surfaces need to know about one
thing hive does: its name, what it does, its typed parameters (a pydantic model
whose field descriptions are the help text), its typed result, the errors it
raises, whether it writes, who may call it, and how it is spelled on the
command line. The agent tools (``hive/tools/registry.py``: MCP, the JSON
envelope, the schemas and docs/tools.md) and the CLI commands
(``hive/cli/build.py``, docs/cli.md) are generated from it; a person-facing
command adds only its presentation.

This module sits between the domain and the surfaces: it imports pydantic and
the models, never a surface (no typer, no MCP).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal, Protocol

from pydantic import ConfigDict, Field

from hive.domain.limits import MAX_GLOB, MAX_SHORT
from hive.errors import HiveError, NotFound
from hive.models.base import HiveModel

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

Access = Literal["anyone", "agent", "registered", "owner", "coordinator"]
"""Who may call: ``anyone`` (also an unregistered session); ``agent`` (acts as a
proven identity); ``registered`` (an agent registered for swarm mail: agents call
``swarmmail_init`` first); ``owner`` (the owner of what it changes, or a
coordinator/person with ``force`` and a ``reason``); ``coordinator``."""

Surface = Literal["cli", "tool"]
"""Where an operation is offered: ``cli`` (its commands) and ``tool`` (an agent
tool: MCP, the JSON envelope, docs/tools.md)."""
EVERYWHERE: frozenset[Surface] = frozenset({"cli", "tool"})
CLI_ONLY: frozenset[Surface] = frozenset({"cli"})
"""For people (and coordinators at a shell), not a tool: setting up a repository,
its hook, identities, exchanges with remotes and other trackers, maintenance. Each
agent tool's schema costs every agent context tokens, so a tool must earn it."""
AGENT_ONLY: frozenset[Surface] = frozenset({"tool"})
"""For agents only: a person has a shell (to list, read and search files)."""


class Caller(Protocol):
    """Who calls an operation, through which surface: the agent tools' session
    (``hive/tools/registry.py``) or the command line (``hive/cli/build.py``).

    Most operations need only the caller's workspace; an operation with
    ``session`` needs the rest: the identity the session is bound to (``agent``,
    proven by ``token``; ``bind`` changes it), the file sandbox (``context_root``),
    the per-session state key (``session_key``) and the permission rules that apply
    to the caller (``allows``)."""

    @property
    def root(self) -> str: ...

    @property
    def agent(self) -> str | None: ...

    @property
    def session(self) -> str | None: ...

    @property
    def token(self) -> str | None: ...

    @property
    def issued(self) -> bool: ...

    @property
    def wanted(self) -> str | None: ...

    @property
    def context_root(self) -> str: ...

    @property
    def session_key(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def from_tool(self) -> bool: ...

    def workspace(self) -> Workspace: ...

    def bind(self, agent: str, token: str | None, *, issued: bool = False) -> None: ...

    def allows(self, tool: str) -> Callable[[str], bool]: ...

    def reads_before_writes(self) -> bool: ...


class Params(HiveModel):
    """Parameters of an operation. Agents' calls are validated strictly (unknown keys
    refused, no coercion of ints and bools; the registry takes a whole number written
    as a JSON float, ``3.0``, as the integer, as JSON Schema does); the CLI validates
    the same model with ``strict=False`` (command-line values are text)."""

    model_config = ConfigDict(extra="forbid", strict=True)


class NoParams(Params):
    pass


# field types and help shared by the operations' parameters
Short = Annotated[str, Field(max_length=MAX_SHORT)]
Glob = Annotated[str, Field(max_length=MAX_GLOB)]
OVERRIDE = "not yours: coordinators only, with reason"
REASON = "why (recorded; a coordinator must give one to override)"


def cli_help_only(schema: dict[str, Any]) -> None:
    """A field's ``json_schema_extra`` when its description is help for a person only:
    left out of the tool schemas (every agent pays for each of their characters), kept
    in ``--help``. For a description that restates the field's name or the tool's, or
    a convention docs/tools.md states once for every tool (a cell id's unique prefix,
    ``reason`` beside ``force``, ``project_key``, ``agent_name``)."""
    schema.pop("description", None)


@dataclass(frozen=True)
class PathParam:
    """Marks the parameter that holds a path (``Annotated[str, Field(...), REPO_PATH]``;
    not part of the schema an agent is sent): an agent with a working directory
    (``agents:`` in .hive/config.yaml) gives it relative to that directory, and the
    agent surfaces rebase it. ``in_context``: a path in the context directory
    (``file_read``, ``list_files``), handed on absolute."""

    in_context: bool = False


REPO_PATH = PathParam()
CONTEXT_PATH = PathParam(in_context=True)


def path_parameter(params: type[Params]) -> tuple[str, PathParam] | None:
    """The parameter of ``params`` marked as holding a path, with its marker."""
    for name, info in params.model_fields.items():
        for marker in info.metadata:
            if isinstance(marker, PathParam):
                return name, marker
    return None


@dataclass(frozen=True)
class Command:
    """How an operation is spelled on the command line.

    ``path``: the words of the command (``("dep", "add")``); ``arguments``: the
    fields given positionally, in order; ``short``: extra option names for a
    field (``{"type": ("-t",)}``); ``fixed``: fields this command sets itself
    (``{"action": "add"}`` for ``hive dep add``); ``hidden``: fields this command
    does not offer (their defaults apply); ``defaults``: a person's defaults where
    they differ from an agent's (a screenful rather than a context-sized page);
    ``required``: fields this command needs that the operation does not (``hive
    show ID``: the id of ``hive_query``); ``many``: the first argument takes one or
    more values (``hive close A B C``), run by the operation's ``batch``;
    ``repeat``: fields given as one or more command-line words, handed to the field's
    parser as a list (``hive memory set stack a=1 b=2``); ``help``: the command's help
    when it is not the operation's (a command that shows one facet of the operation);
    ``alias``: another spelling of a command, left out of the help; ``helps``: a
    field's help where the operation's description is not true of this command;
    ``argument_options``: the command's last argument, a list, may also be given as a
    repeatable option by these names (``{"to": ("--to",)}``: ``hive mail send A --to B``
    sends to A and B), its values taken in the order they stand on the command line.
    """

    path: tuple[str, ...]
    arguments: tuple[str, ...] = ()
    short: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    fixed: Mapping[str, Any] = field(default_factory=dict)
    hidden: frozenset[str] = frozenset()
    defaults: Mapping[str, Any] = field(default_factory=dict)
    required: frozenset[str] = frozenset()
    many: bool = False
    repeat: frozenset[str] = frozenset()
    help: str | None = None
    alias: bool = False
    helps: Mapping[str, str] = field(default_factory=dict)
    argument_options: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return " ".join(self.path)


@dataclass(frozen=True)
class Operation:
    """One operation, described once (see the module docstring).

    ``run(ws, params)`` calls the domain function and returns ``result``;
    ``session(caller, params)`` replaces it for an operation that needs more of
    its caller than the workspace (see ``Caller``).
    ``summary`` is the one-line description (the tool's description, the
    command's short help); ``help`` the longer text for ``--help``.
    ``paths``: the repository paths a call touches (checked against the
    permission rules by the agent surfaces). ``commands``: its CLI commands
    (none: the operation is for agents only, such as reading a file in the
    sandbox). ``parsers``: command-line text -> value, per field, where a
    person writes a value differently (``P1`` for priority 1). ``batch(ws, params,
    ids)``: the same call for several ids, all or nothing in one write (a command
    with ``many``); one id gives what ``run`` gives. ``dirs``: the directories a
    call lists or searches (checked like ``paths``, for what lies below them).
    ``patterns``: the globs a call claims (a cell's owned files), checked as a
    reservation's are: refused only when one names nothing but files the caller may not
    touch (a glob that merely could hold a denied file is fine: that file stays denied
    one by one, by the file tools and the pre-commit hook).
    ``surfaces``: where it is offered (``CLI_ONLY``: not an agent tool;
    ``AGENT_ONLY``: no command); it is reachable from each surface it names.
    ``answer(result, params)``: what the agent tool answers where the whole result
    grows with a cell's history (a write answers the cell's summary and what the call
    made; ``hive_query`` gives the whole cell); the CLI and the library keep the result.
    """

    name: str
    summary: str
    params: type[Params]
    result: Any
    writes: bool
    run: Callable[[Workspace, Any], Any] | None = None
    session: Callable[[Caller, Any], Any] | None = None
    access: Access = "anyone"
    errors: tuple[type[HiveError], ...] = ()
    commands: tuple[Command, ...] = ()
    help: str = ""
    paths: Callable[[Any], list[str]] | None = None
    dirs: Callable[[Any], list[str]] | None = None
    patterns: Callable[[Any], list[str]] | None = None
    parsers: Mapping[str, Callable[[Any], Any]] = field(default_factory=dict)
    batch: Callable[[Workspace, Any, list[str]], list[Any]] | None = None
    surfaces: frozenset[Surface] = EVERYWHERE
    answer: Callable[[Any, Any], Any] | None = None

    def __post_init__(self) -> None:
        if (self.run is None) == (self.session is None):
            raise ValueError(f"operation {self.name}: give run or session, not both")
        if ("cli" in self.surfaces) != bool(self.commands):
            raise ValueError(
                f"operation {self.name}: commands if and only if its surfaces name the cli"
                " (an agent-only operation: surfaces=AGENT_ONLY)"
            )

    @property
    def is_tool(self) -> bool:
        """Is it an agent tool (MCP, the JSON envelope)?"""
        return "tool" in self.surfaces

    def call(self, caller: Caller, params: Params) -> Any:
        """Run the operation for ``caller``."""
        if self.session is not None:
            return self.session(caller, params)
        assert self.run is not None
        run = self.run
        ws = caller.workspace()
        return _explaining(ws, lambda: run(ws, params))

    def call_many(self, caller: Caller, params: Params, ids: list[str]) -> list[Any]:
        """Run the operation's ``batch`` on several ids for ``caller``."""
        assert self.batch is not None
        batch = self.batch
        ws = caller.workspace()
        found: list[Any] = _explaining(ws, lambda: batch(ws, params, ids))
        return found


def _explaining(ws: Workspace, call: Callable[[], Any]) -> Any:
    """``call()``; a cell not found is explained when it is only staged."""
    try:
        return call()
    except NotFound as exc:
        from hive.domain.cells import explain_not_found

        raise explain_not_found(ws, exc) from None


Progress = Callable[[str, int, int], None]
PROGRESS: ContextVar[Progress | None] = ContextVar("hive_progress", default=None)
"""How far a long call has got, ``(phase, done, total)`` (total 0: not known yet):
set by a surface that shows it (the CLI's bar on a terminal), passed on to the domain
by the operations that report it (an import, a sync)."""


def progress() -> Progress | None:
    """The current call's progress reporter, if its surface shows one."""
    return PROGRESS.get()


OPERATIONS: dict[str, Operation] = {}
"""Every declared operation by name: complete once ``hive.ops.catalog.declare()`` (which
imports the modules that declare them; the catalogue is the surfaces' way to them) has
run. A command of the full CLI imports only the modules it needs."""


DECLARED_IN: dict[str, str] = {}
"""The module that declared each operation (by name): the catalogue orders operations
by its list of declaring modules, not by which of them happened to be imported first."""


def declare(*operations: Operation) -> None:
    import sys

    module = str(sys._getframe(1).f_globals.get("__name__", ""))
    for op in operations:
        if op.name in OPERATIONS:
            raise ValueError(f"operation {op.name} declared twice")
        OPERATIONS[op.name] = op
        DECLARED_IN[op.name] = module


def declared_tool_names() -> list[str]:
    """The name of every agent tool, for an operation that is itself reached through
    the catalogue (``hive doctor``), whose process may have imported only its own
    module: the tool index (``hive/ops/toolindex.py``, kept equal to the declarations
    by a test), as this module imports no module that declares operations."""
    from hive.ops.toolindex import TOOL_MODULES

    return list(TOOL_MODULES)
