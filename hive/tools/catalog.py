"""Every agent tool: an argument model and a handler calling one library function.

Descriptions are deliberately terse: agents pay for schemas in context tokens.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from hive.domain import files
from hive.domain.limits import (
    MAX_GLOB,
    MAX_ID,
    MAX_SHORT,
    MAX_TEXT,
)
from hive.errors import InvalidInput, NameTaken, NotYourIdentity
from hive.models.epic import PlannedSubtask
from hive.models.identity import Registration
from hive.tools.registry import (
    CallContext,
    Tool,
    operation_tool,
    path_filter,
    profile_of,
    register,
)

Str: Any = Field(default="", max_length=MAX_TEXT)
Id: Any = Field(min_length=1, max_length=MAX_ID)
PathList: Any = Field(default_factory=list, max_length=1000)
Short = Annotated[str, Field(max_length=MAX_SHORT)]
Glob = Annotated[str, Field(max_length=MAX_GLOB)]
OVERRIDE = "someone else's: coordinators only, with a reason"


class Args(BaseModel):
    """Unknown keys are refused; ints and bools are not coerced from other types."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ------------------------------------------------------------------ cells


class CreateEpicArgs(Args):
    epic_title: str = Field(min_length=1, max_length=500)
    epic_description: str = ""
    subtasks: list[PlannedSubtask] = Field(min_length=1, max_length=50)
    strategy: (
        Literal["file-based", "feature-based", "risk-based", "research-based", "auto"] | None
    ) = None


def _create_epic(ctx: CallContext, a: CreateEpicArgs) -> Any:
    from hive.domain.swarm.decompose import hive_create_epic

    return hive_create_epic(
        ctx.workspace(),
        epic_title=a.epic_title,
        epic_description=a.epic_description,
        subtasks=a.subtasks,
        strategy=a.strategy,
    )


# ------------------------------------------------------------------ mail


class MailInitArgs(Args):
    project_path: str | None = Field(default=None, max_length=4096)
    agent_name: Short | None = Field(default=None, description="generated if omitted")
    task_description: str | None = Field(default=None, max_length=2000)


def _mail_init(ctx: CallContext, a: MailInitArgs) -> Any:
    """Register, then act as the returned name for the rest of this session. A session
    keeps the identity it registered: asking for another name is not_your_identity."""
    from hive.domain.mail import list_agents, mail_init

    if a.project_path:
        _check_project(ctx.root, a.project_path)
    if ctx.agent is not None:
        if a.agent_name and a.agent_name.strip() != ctx.agent:
            raise NotYourIdentity(
                f"this session is {ctx.agent}: its identity is fixed by its registration;"
                f" start another session to act as {a.agent_name}",
                agent=ctx.agent,
            )
        try:
            agent: Any = mail_init(
                ctx.workspace(),
                agent_name=ctx.agent,
                task_description=a.task_description,
                session=ctx.session,
                token=ctx.token,
            )
        except NameTaken:  # in-process code bound a name without its credential
            known = next(x for x in list_agents(ctx.workspace()) if x.name == ctx.agent)
            agent = Registration(**known.model_dump())
        if agent.token:
            ctx.bind(agent.name, agent.token, issued=True)
    else:
        agent = mail_init(
            ctx.workspace(),
            agent_name=a.agent_name or ctx.wanted,
            task_description=a.task_description,
            session=ctx.session,
            from_tool=True,
        )
        ctx.bind(agent.name, agent.token, issued=True)
    shown = {"agent_name": agent.name, **agent.model_dump(mode="json", exclude={"token"})}
    if ctx.issued and ctx.token:
        shown["token"] = ctx.token
        shown["credential"] = (
            f"this session acts as {agent.name}; to act as it from a shell (hive CLI, git"
            f" commit) export HIVE_AGENT={agent.name} HIVE_AGENT_TOKEN=<token>"
        )
    return shown


def _check_project(root: str, project_path: str) -> None:
    """``project_path`` must be this repository (or a directory inside it)."""
    real_root = os.path.realpath(root)
    given = os.path.realpath(os.path.join(root, os.path.expanduser(project_path)))
    if given != real_root and not given.startswith(real_root + os.sep):
        raise InvalidInput(
            f"project_path {project_path!r} is not this repository ({root}); start the"
            " tool server in that project instead",
            field="project_path",
        )


# ------------------------------------------------------------------ swarm

StrategyName = Literal["file-based", "feature-based", "risk-based", "research-based"]


class ValidateArgs(Args):
    response: str | dict[str, Any] = Field(description="plan JSON (a ```json fence is fine)")


def _validate(ctx: CallContext, a: ValidateArgs) -> Any:
    from hive.domain.swarm.decompose import swarm_validate_decomposition

    return swarm_validate_decomposition(None, response=a.response)


class CompleteArgs(Args):
    project_key: str | None = None
    agent_name: str | None = None
    cell_id: str = Id
    summary: str = Field(min_length=1, max_length=20_000)
    files_touched: list[str] = PathList
    evaluation: str | dict[str, Any] | None = Field(
        default=None, description='text, or {"passed": bool, "notes": ...}'
    )
    error_count: int = Field(default=0, ge=0)
    retry_count: int = Field(default=0, ge=0)
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _complete(ctx: CallContext, a: CompleteArgs) -> Any:
    from hive.domain.swarm.complete import swarm_complete

    return swarm_complete(
        ctx.workspace(),
        agent_name=a.agent_name,
        cell_id=a.cell_id,
        summary=a.summary,
        project_key=a.project_key,
        files_touched=a.files_touched,
        evaluation=a.evaluation,
        error_count=a.error_count,
        retry_count=a.retry_count,
        force=a.force,
        reason=a.reason,
    )


# ------------------------------------------------------------------ files


class ListArgs(Args):
    dir: str = Field(default=".", max_length=4096)
    pattern: str | None = Field(default=None, max_length=1000, description="glob, or regex:...")
    max_results: int = Field(default=200, ge=1, le=5000)


class ReadArgs(Args):
    path: str = Field(min_length=1, max_length=4096)
    max_bytes: int = Field(default=50_000, ge=1, le=files.MAX_READ)


class SearchArgs(Args):
    pattern: str = Field(min_length=1, max_length=1000, description="regex")
    dir: str = Field(default=".", max_length=4096)
    max_matches: int = Field(default=200, ge=1, le=5000)


class WriteArgs(Args):
    path: str = Field(min_length=1, max_length=4096)
    content: str = Field(max_length=files.MAX_WRITE)
    create_dirs: bool = True


def _fs_list(ctx: CallContext, a: ListArgs) -> Any:
    return files.fs_list(
        ctx.root,
        dir=a.dir,
        pattern=a.pattern,
        max_results=a.max_results,
        allow=path_filter(ctx, "fs_list"),
    )


def _fs_read(ctx: CallContext, a: ReadArgs) -> Any:
    from hive.domain.agents import record_read

    answer = files.fs_read(ctx.root, path=a.path, max_bytes=a.max_bytes)
    record_read(ctx.workspace(), session=ctx.session_key, agent=ctx.name, path=answer["path"])
    return answer


def _search(ctx: CallContext, a: SearchArgs) -> Any:
    return files.search_text(
        ctx.root,
        pattern=a.pattern,
        dir=a.dir,
        max_matches=a.max_matches,
        allow=path_filter(ctx, "search_text"),
    )


def _fs_write(ctx: CallContext, a: WriteArgs) -> Any:
    from hive.domain.agents import check_read_before_write

    if profile_of(ctx).read_before_write:
        full, relative = files.resolve(ctx.root, a.path)
        check_read_before_write(
            ctx.workspace(),
            session=ctx.session_key,
            agent=ctx.name,
            path=relative,
            exists=os.path.isfile(full),
        )
    return files.propose_write(
        ctx.root,
        ctx.state_dir,
        agent=ctx.name,
        path=a.path,
        content=a.content,
        create_dirs=a.create_dirs,
    )


# ------------------------------------------------------------------ the registry


def _one(field_name: str) -> Any:
    return lambda a: [files.permission_path(getattr(a, field_name))]


def _many(field_name: str) -> Any:
    return lambda a: [files.permission_path(p) for p in getattr(a, field_name) or []]


def _dir(field_name: str) -> Any:
    """A directory to list or search (checked by ``governance.check_directories``)."""
    return lambda a: [files.permission_path(getattr(a, field_name))]


TOOLS = [
    Tool(
        "hive_create_epic",
        "Create an epic and its subtasks in one commit.",
        CreateEpicArgs,
        _create_epic,
    ),
    Tool(
        "swarmmail_init",
        "Register as an agent (same session: same name).",
        MailInitArgs,
        _mail_init,
    ),
    Tool(
        "swarm_validate_decomposition",
        "Check a plan: schema, file conflicts, dependencies.",
        ValidateArgs,
        _validate,
    ),
    Tool(
        "swarm_complete",
        "Close cell, release reservations, record outcome, commit files: one commit.",
        CompleteArgs,
        _complete,
        _many("files_touched"),
    ),
    Tool("fs_list", "List files in the repository.", ListArgs, _fs_list, dirs=_dir("dir")),
    Tool("fs_read", "Read a file in the repository.", ReadArgs, _fs_read, _one("path")),
    Tool(
        "search_text",
        "Regex search across repository files.",
        SearchArgs,
        _search,
        dirs=_dir("dir"),
    ),
    Tool(
        "fs_write",
        "Propose a file write (applied after arbiter approval).",
        WriteArgs,
        _fs_write,
        _one("path"),
    ),
]


def _operation_tools() -> list[Tool]:
    """A tool for every operation described in ``hive/ops`` (same name, parameters and
    result as its CLI command)."""
    from hive.ops.spec import operations

    return [operation_tool(op) for op in operations()]


def _seed_tools() -> list[Tool]:
    """The tools of the other seeds, defined in their own modules."""
    from hive.tools import agent_tools, coord_tools, network_tools

    return [*coord_tools.TOOLS, *network_tools.TOOLS, *agent_tools.TOOLS]


for _tool in [*_operation_tools(), *TOOLS, *_seed_tools()]:
    register(_tool)
