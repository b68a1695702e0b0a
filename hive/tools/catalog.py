"""Every agent tool: an argument model and a handler calling one library function.

Descriptions are deliberately terse: agents pay for schemas in context tokens.
"""

from __future__ import annotations

import os
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from hive.domain.limits import (
    MAX_DEPS,
    MAX_GLOB,
    MAX_ID,
    MAX_ITEMS,
    MAX_LABELS,
    MAX_SHORT,
    MAX_TEXT,
    MAX_TITLE,
)
from hive.errors import InvalidInput, NameTaken, NotYourIdentity
from hive.models.identity import Registration
from hive.tools import files
from hive.tools.registry import CallContext, Tool, path_filter, profile_of, register

Str: Any = Field(default="", max_length=MAX_TEXT)
Id: Any = Field(min_length=1, max_length=MAX_ID)
PathList: Any = Field(default_factory=list, max_length=1000)
Short = Annotated[str, Field(max_length=MAX_SHORT)]
Glob = Annotated[str, Field(max_length=MAX_GLOB)]
MAX_INBOX = 5
OVERRIDE = "someone else's: coordinators only, with a reason"


class Args(BaseModel):
    """Unknown keys are refused; ints and bools are not coerced from other types."""

    model_config = ConfigDict(extra="forbid", strict=True)


# ------------------------------------------------------------------ cells


class CreateArgs(Args):
    title: str = Field(min_length=1, max_length=MAX_TITLE)
    type: Literal["bug", "feature", "task", "epic", "chore"] = "task"
    priority: int = Field(default=2, ge=0, le=4, description="0 most urgent")
    description: str = Str
    parent: Short | None = None
    deps: list[Short] = Field(
        default_factory=list, max_length=MAX_DEPS, description="TYPE:ID, e.g. blocks:hv-ab12"
    )
    labels: list[Short] = Field(default_factory=list, max_length=MAX_LABELS)
    files: list[Glob] = Field(default_factory=list, max_length=MAX_ITEMS, description="owned globs")


def _create(ctx: CallContext, a: CreateArgs) -> Any:
    from hive.domain.cells import create_cell

    return create_cell(
        ctx.workspace(),
        title=a.title,
        type=a.type,
        priority=a.priority,
        description=a.description,
        parent=a.parent,
        deps=a.deps,
        labels=a.labels,
        files=a.files,
    )


class EpicSubtask(Args):
    title: str = Field(min_length=1, max_length=500)
    description: str = ""
    files: list[str] = Field(default_factory=list)
    dependencies: list[int] = Field(default_factory=list, description="indexes of subtasks")
    estimated_complexity: int = Field(default=2, ge=1, le=5)
    type: Literal["bug", "feature", "task", "chore"] = "task"
    priority: int | None = Field(default=None, ge=0, le=4)


class CreateEpicArgs(Args):
    epic_title: str = Field(min_length=1, max_length=500)
    epic_description: str = ""
    subtasks: list[EpicSubtask] = Field(min_length=1, max_length=50)
    strategy: (
        Literal["file-based", "feature-based", "risk-based", "research-based", "auto"] | None
    ) = None


def _create_epic(ctx: CallContext, a: CreateEpicArgs) -> Any:
    from hive.domain.swarm.decompose import hive_create_epic

    return hive_create_epic(
        ctx.workspace(),
        epic_title=a.epic_title,
        epic_description=a.epic_description,
        subtasks=[s.model_dump() for s in a.subtasks],
        strategy=a.strategy,
    )


class QueryArgs(Args):
    id: Short | None = Field(default=None, description="show one cell")
    status: Short | None = Field(default=None, description="open|in_progress|blocked|closed|all")
    type: Short | None = None
    priority: int | None = Field(default=None, ge=0, le=4)
    parent: Short | None = None
    label: Short | None = None
    assignee: Short | None = None
    include_deleted: bool = False
    limit: int = Field(default=50, ge=1, le=1000)


def _query(ctx: CallContext, a: QueryArgs) -> Any:
    from hive.domain.cells import list_cells, show_cell

    if a.id:
        return show_cell(ctx.workspace(), cell_id=a.id)
    return list_cells(
        ctx.workspace(),
        status=a.status,
        type=a.type,
        priority=a.priority,
        parent=a.parent,
        label=a.label,
        assignee=a.assignee,
        include_deleted=a.include_deleted,
        limit=a.limit,
    )


class UpdateArgs(Args):
    id: str = Id
    status: Short | None = None
    priority: int | None = Field(default=None, ge=0, le=4)
    type: Literal["bug", "feature", "task", "epic", "chore"] | None = None
    title: str | None = Field(default=None, max_length=MAX_TITLE)
    description: str | None = Field(default=None, max_length=MAX_TEXT)
    assignee: Short | None = None
    append_notes: str | None = Field(default=None, max_length=MAX_TEXT)
    add_labels: list[Short] = Field(default_factory=list, max_length=MAX_LABELS)
    remove_labels: list[Short] = Field(default_factory=list, max_length=MAX_LABELS)
    files: list[Glob] | None = Field(default=None, max_length=MAX_ITEMS, description="replaces")
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _update(ctx: CallContext, a: UpdateArgs) -> Any:
    from hive.domain.cells import update_cell

    return update_cell(
        ctx.workspace(),
        cell_id=a.id,
        status=a.status,
        priority=a.priority,
        title=a.title,
        description=a.description,
        assignee=a.assignee,
        append_notes=a.append_notes,
        type=a.type,
        add_labels=a.add_labels,
        remove_labels=a.remove_labels,
        files=a.files,
        force=a.force,
        reason=a.reason,
    )


class IdArgs(Args):
    id: str = Id


class StartArgs(Args):
    id: str = Id
    force: bool = Field(default=False, description="past open blockers (recorded)")
    reason: str | None = Field(default=None, max_length=5000)


def _start(ctx: CallContext, a: StartArgs) -> Any:
    from hive.domain.cells import start_cell

    return start_cell(ctx.workspace(), cell_id=a.id, force=a.force, reason=a.reason)


class BlockedArgs(Args):
    limit: int = Field(default=50, ge=1, le=1000)


def _blocked(ctx: CallContext, a: BlockedArgs) -> Any:
    from hive.domain.stats import blocked_cells

    return blocked_cells(ctx.workspace(), limit=a.limit)


def _stats(ctx: CallContext, a: NoArgs) -> Any:
    from hive.domain.stats import cell_stats

    return cell_stats(ctx.workspace())


class CloseArgs(Args):
    id: str = Id
    reason: str | None = Field(default=None, max_length=5000)
    force: bool = Field(default=False, description="past open blockers; " + OVERRIDE)


def _close(ctx: CallContext, a: CloseArgs) -> Any:
    from hive.domain.cells import close_cell

    return close_cell(ctx.workspace(), cell_id=a.id, reason=a.reason, force=a.force)


class ReadyArgs(Args):
    limit: int = Field(default=10, ge=1, le=1000)
    claim: bool = Field(default=False, description="atomically start the first")


def _ready(ctx: CallContext, a: ReadyArgs) -> Any:
    from hive.domain.cells import ready

    return ready(ctx.workspace(), limit=a.limit, claim=a.claim)


class DepArgs(Args):
    id: str = Id
    action: Literal["add", "remove", "tree"] = "tree"
    target: Short | None = Field(default=None, description="add/remove: the other cell")
    type: Literal["blocks", "parent-child", "related", "discovered-from"] = "blocks"


def _dep(ctx: CallContext, a: DepArgs) -> Any:
    from hive.domain.cells import add_dependency, dep_tree, remove_dependency

    if a.action == "tree":
        return dep_tree(ctx.workspace(), cell_id=a.id)
    if not a.target:
        raise InvalidInput(f"hive_dep {a.action} needs a target", field="target")
    if a.action == "add":
        return add_dependency(ctx.workspace(), cell_id=a.id, target=a.target, dep_type=a.type)
    return remove_dependency(ctx.workspace(), cell_id=a.id, target=a.target)


def _reopen(ctx: CallContext, a: IdArgs) -> Any:
    from hive.domain.cells import reopen_cell

    return reopen_cell(ctx.workspace(), cell_id=a.id)


class DeleteArgs(Args):
    id: str = Id
    force: bool = Field(default=False, description="also with live subtasks; " + OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _delete(ctx: CallContext, a: DeleteArgs) -> Any:
    from hive.domain.cells import delete_cell

    return delete_cell(ctx.workspace(), cell_id=a.id, force=a.force, reason=a.reason)


class LogArgs(Args):
    id: Short | None = Field(default=None, description="one cell's history")
    limit: int = Field(default=20, ge=1, le=500)


def _history(ctx: CallContext, a: LogArgs) -> Any:
    from hive.domain.history import cell_log

    return cell_log(ctx.workspace(), cell_id=a.id, limit=a.limit)


class ReviewArgs(Args):
    id: str = Id
    patch: bool = Field(default=False, description="include diffs")


def _review(ctx: CallContext, a: ReviewArgs) -> Any:
    from hive.domain.swarm.review import review

    return review(ctx.workspace(), target=a.id, with_patch=a.patch)


class NoArgs(Args):
    pass


def _insights(ctx: CallContext, a: NoArgs) -> Any:
    from hive.domain.swarm.learning import insights

    return insights(ctx.workspace())


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


class SendArgs(Args):
    to: list[str] = Field(default_factory=list, max_length=64)
    subject: str = Field(min_length=1, max_length=200)
    body: str = Field(default="", max_length=65_536)
    thread_id: str | None = Field(default=None, description="cell or epic id")
    importance: Literal["low", "normal", "high", "urgent"] = "normal"
    ack_required: bool = False


def _send(ctx: CallContext, a: SendArgs) -> Any:
    from hive.domain.mail import send_message

    return send_message(
        ctx.workspace(),
        to=a.to,
        subject=a.subject,
        body=a.body,
        thread_id=a.thread_id,
        importance=a.importance,
        ack_required=a.ack_required,
    )


class InboxArgs(Args):
    limit: int = Field(default=MAX_INBOX, ge=1, description="capped at 5")
    urgent_only: bool = False
    unread_only: bool = False

    @field_validator("limit")
    @classmethod
    def _cap(cls, value: int) -> int:
        return min(value, MAX_INBOX)


def _inbox(ctx: CallContext, a: InboxArgs) -> Any:
    from hive.domain.mail import inbox

    return inbox(
        ctx.workspace(), limit=a.limit, urgent_only=a.urgent_only, unread_only=a.unread_only
    )


class MessageArgs(Args):
    message_id: int = Field(ge=1)


def _read(ctx: CallContext, a: MessageArgs) -> Any:
    from hive.domain.mail import read_message

    return read_message(ctx.workspace(), message_id=a.message_id)


def _ack(ctx: CallContext, a: MessageArgs) -> Any:
    from hive.domain.mail import ack_message

    return ack_message(ctx.workspace(), message_id=a.message_id)


class ReserveArgs(Args):
    paths: list[Glob] = Field(min_length=1, max_length=200, description="paths or globs")
    reason: str | None = Field(default=None, max_length=500)
    exclusive: bool = True
    ttl_seconds: int = Field(default=3600, ge=1, le=7 * 24 * 3600)
    cell: str | None = None
    force: bool = Field(default=False, description=OVERRIDE)


def _reserve(ctx: CallContext, a: ReserveArgs) -> Any:
    from hive.domain.mail import require_registered
    from hive.domain.reservations import reserve

    require_registered(ctx.workspace(), ctx.workspace().require_agent("reserving files"))

    return reserve(
        ctx.workspace(),
        paths=a.paths,
        reason=a.reason,
        exclusive=a.exclusive,
        ttl_seconds=a.ttl_seconds,
        cell=a.cell,
        force=a.force,
    )


class ReleaseArgs(Args):
    paths: list[Glob] | None = Field(default=None, max_length=200)
    reservation_ids: list[int] | None = Field(default=None, max_length=200)
    agent: Short | None = Field(default=None, description="another holder: " + OVERRIDE)
    force: bool = False
    reason: str | None = Field(default=None, max_length=5000)


def _release(ctx: CallContext, a: ReleaseArgs) -> Any:
    from hive.domain.reservations import release

    return release(
        ctx.workspace(),
        paths=a.paths,
        reservation_ids=a.reservation_ids,
        agent=a.agent,
        force=a.force,
        reason=a.reason,
    )


class ReservationsArgs(Args):
    agent: Short | None = None


def _reservations(ctx: CallContext, a: ReservationsArgs) -> Any:
    from hive.domain.reservations import list_reservations

    return list_reservations(ctx.workspace(), agent=a.agent)


# ------------------------------------------------------------------ swarm

StrategyName = Literal["file-based", "feature-based", "risk-based", "research-based"]


class SwarmInitArgs(Args):
    project_path: str | None = None


def _swarm_init(ctx: CallContext, a: SwarmInitArgs) -> Any:
    from hive.domain.swarm.decompose import swarm_init

    return swarm_init(ctx.workspace(), project_path=a.project_path)


class SelectArgs(Args):
    task: str = Field(min_length=1, max_length=10_000)
    codebase_context: str | None = Field(default=None, max_length=20_000)
    context: str | None = Field(default=None, max_length=20_000)


def _select(ctx: CallContext, a: SelectArgs) -> Any:
    from hive.domain.swarm.learning import select_strategy

    return select_strategy(
        ctx.workspace(), task=a.task, context=a.context, codebase_context=a.codebase_context
    )


class DecomposeArgs(Args):
    task: str = Field(min_length=1, max_length=10_000)
    max_subtasks: int = Field(default=5, ge=1, le=30)
    query_cass: bool = True
    context: str | None = Field(default=None, max_length=20_000)
    cass_limit: int = Field(default=3, ge=1, le=50)


def _decompose(ctx: CallContext, a: DecomposeArgs) -> Any:
    from hive.domain.swarm.decompose import swarm_decompose

    return swarm_decompose(
        ctx.workspace(),
        task=a.task,
        max_subtasks=a.max_subtasks,
        context=a.context,
        query_cass=a.query_cass,
        cass_limit=a.cass_limit,
    )


class PlanArgs(DecomposeArgs):
    strategy: StrategyName | Literal["auto"] = "auto"


def _plan(ctx: CallContext, a: PlanArgs) -> Any:
    from hive.domain.swarm.decompose import swarm_plan_prompt

    return swarm_plan_prompt(
        ctx.workspace(),
        task=a.task,
        strategy=a.strategy,
        max_subtasks=a.max_subtasks,
        context=a.context,
        query_cass=a.query_cass,
        cass_limit=a.cass_limit,
    )


class ValidateArgs(Args):
    response: str | dict[str, Any] = Field(description="plan JSON (a ```json fence is fine)")


def _validate(ctx: CallContext, a: ValidateArgs) -> Any:
    from hive.domain.swarm.decompose import swarm_validate_decomposition

    return swarm_validate_decomposition(None, response=a.response)


class SubtaskArgs(Args):
    agent_name: str | None = None
    cell_id: str = Id
    epic_id: str | None = None
    subtask_title: str | None = Field(default=None, max_length=500)
    subtask_description: str | None = Field(default=None, max_length=20_000)
    files: list[str] = PathList
    shared_context: str | None = Field(default=None, max_length=20_000)
    context: str | None = Field(default=None, max_length=20_000)


def _subtask_prompt(ctx: CallContext, a: SubtaskArgs) -> Any:
    from hive.domain.swarm.prompts import swarm_subtask_prompt

    return swarm_subtask_prompt(ctx.workspace(), **_subtask_kwargs(a))


def _spawn(ctx: CallContext, a: SubtaskArgs) -> Any:
    from hive.domain.swarm.prompts import swarm_spawn_subtask

    return swarm_spawn_subtask(ctx.workspace(), **_subtask_kwargs(a))


def _subtask_kwargs(a: SubtaskArgs) -> dict[str, Any]:
    return {
        "cell_id": a.cell_id,
        "agent_name": a.agent_name,
        "context": a.context,
        "epic_id": a.epic_id,
        "subtask_title": a.subtask_title,
        "subtask_description": a.subtask_description,
        "files": a.files,
        "shared_context": a.shared_context,
    }


class StatusArgs(Args):
    epic_id: str = Id
    project_key: str | None = None


def _status(ctx: CallContext, a: StatusArgs) -> Any:
    from hive.domain.swarm.progress import swarm_status

    return swarm_status(ctx.workspace(), epic_id=a.epic_id, project_key=a.project_key)


class ProgressArgs(Args):
    project_key: str | None = None
    agent_name: str | None = None
    cell_id: str = Id
    status: Literal["in_progress", "blocked", "completed", "failed", "open"] = Field(
        description="completed: still call swarm_complete; failed: blocks the cell"
    )
    message: str | None = Field(default=None, max_length=5000)
    progress_percent: int | None = Field(default=None, ge=0, le=100)
    files_touched: list[str] = PathList
    force: bool = Field(default=False, description=OVERRIDE)
    reason: str | None = Field(default=None, max_length=5000)


def _progress(ctx: CallContext, a: ProgressArgs) -> Any:
    from hive.domain.swarm.progress import swarm_progress

    return swarm_progress(
        ctx.workspace(),
        agent_name=a.agent_name,
        cell_id=a.cell_id,
        status=a.status,
        progress_percent=a.progress_percent,
        message=a.message,
        files_touched=a.files_touched,
        project_key=a.project_key,
        force=a.force,
        reason=a.reason,
    )


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


class OutcomeArgs(Args):
    cell_id: str = Id
    duration_ms: int | None = Field(default=None, ge=0)
    success: bool
    error_count: int = Field(default=0, ge=0)
    retry_count: int = Field(default=0, ge=0)
    files_touched: list[str] = PathList
    strategy: StrategyName | None = None
    criteria: list[str] = Field(default_factory=list, max_length=100)
    summary: str = Field(default="", max_length=20_000)


def _outcome(ctx: CallContext, a: OutcomeArgs) -> Any:
    from hive.domain.swarm.progress import swarm_record_outcome

    return swarm_record_outcome(
        ctx.workspace(),
        cell_id=a.cell_id,
        success=a.success,
        duration_ms=a.duration_ms,
        error_count=a.error_count,
        retry_count=a.retry_count,
        files_touched=a.files_touched,
        strategy=a.strategy,
        criteria=a.criteria,
        summary=a.summary,
    )


class EvaluationArgs(Args):
    cell_id: str = Id
    subtask_title: str | None = Field(default=None, max_length=500)
    files_touched: list[str] = PathList


def _evaluation(ctx: CallContext, a: EvaluationArgs) -> Any:
    from hive.domain.swarm.prompts import swarm_evaluation_prompt

    return {
        "prompt": swarm_evaluation_prompt(
            ctx.workspace(),
            cell_id=a.cell_id,
            files_touched=a.files_touched,
            subtask_title=a.subtask_title,
        )
    }


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
    Tool("hive_create", "Create a cell (one commit).", CreateArgs, _create, _many("files")),
    Tool(
        "hive_create_epic",
        "Create an epic and its subtasks in one commit.",
        CreateEpicArgs,
        _create_epic,
    ),
    Tool("hive_query", "Show one cell (id) or list cells by filters.", QueryArgs, _query),
    Tool("hive_update", "Change fields of a cell.", UpdateArgs, _update),
    Tool("hive_start", "Claim a cell atomically.", StartArgs, _start),
    Tool("hive_close", "Close a cell.", CloseArgs, _close),
    Tool("hive_ready", "Ready work, most urgent first.", ReadyArgs, _ready),
    Tool(
        "swarmmail_init",
        "Register as an agent (same session: same name).",
        MailInitArgs,
        _mail_init,
    ),
    Tool("swarmmail_send", "Send a message; an epic thread reaches its workers.", SendArgs, _send),
    Tool("swarmmail_inbox", "Newest messages, headers only (max 5).", InboxArgs, _inbox),
    Tool("swarmmail_read_message", "Read one message (marks it read).", MessageArgs, _read),
    Tool("swarmmail_ack", "Acknowledge a message.", MessageArgs, _ack),
    Tool(
        "swarmmail_reserve",
        "Reserve files; refused if another agent holds them.",
        ReserveArgs,
        _reserve,
    ),
    Tool(
        "swarmmail_release", "Release reservations (none given: all yours).", ReleaseArgs, _release
    ),
    Tool("swarmmail_reservations", "Active reservations.", ReservationsArgs, _reservations),
    Tool("swarm_init", "What this repo offers a swarm.", SwarmInitArgs, _swarm_init),
    Tool(
        "swarm_select_strategy",
        "Choose a decomposition strategy from wording and history.",
        SelectArgs,
        _select,
    ),
    Tool(
        "swarm_decompose",
        "Planning prompt with the strategy chosen for you.",
        DecomposeArgs,
        _decompose,
    ),
    Tool("swarm_plan_prompt", "Planning prompt (history, lessons, schema).", PlanArgs, _plan),
    Tool(
        "swarm_validate_decomposition",
        "Check a plan: schema, file conflicts, dependencies.",
        ValidateArgs,
        _validate,
    ),
    Tool(
        "swarm_subtask_prompt", "Brief for a worker on one subtask.", SubtaskArgs, _subtask_prompt
    ),
    Tool("swarm_spawn_subtask", "Prepare a worker for a subtask.", SubtaskArgs, _spawn),
    Tool("swarm_status", "Subtask totals by state for an epic.", StatusArgs, _status),
    Tool(
        "swarm_progress",
        "Report progress; posts to the epic thread.",
        ProgressArgs,
        _progress,
        _many("files_touched"),
    ),
    Tool(
        "swarm_complete",
        "Close cell, release reservations, record outcome, commit files: one commit.",
        CompleteArgs,
        _complete,
        _many("files_touched"),
    ),
    Tool("swarm_record_outcome", "Record how work done elsewhere went.", OutcomeArgs, _outcome),
    Tool(
        "swarm_evaluation_prompt",
        "Self-review checklist before completing.",
        EvaluationArgs,
        _evaluation,
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

MORE_TOOLS = [
    Tool("hive_dep", "Add, remove or show (tree) a cell's dependencies.", DepArgs, _dep),
    Tool("hive_reopen", "Reopen a closed cell.", IdArgs, _reopen),
    Tool("hive_delete", "Delete (tombstone) a cell.", DeleteArgs, _delete),
    Tool("hive_blocked", "Cells waiting on open blockers, and which.", BlockedArgs, _blocked),
    Tool(
        "hive_stats", "Cell counts by status, type, priority, assignee; lead time.", NoArgs, _stats
    ),
    Tool("hive_log", "hive commits, newest first (one cell's with id).", LogArgs, _history),
    Tool("hive_review", "Commits, files and outcome of a cell or epic.", ReviewArgs, _review),
    Tool(
        "swarm_insights", "Strategy success rates, maturity and anti-patterns.", NoArgs, _insights
    ),
]


def _seed_tools() -> list[Tool]:
    """The tools of the other seeds, defined in their own modules."""
    from hive.tools import agent_tools, coord_tools, network_tools

    return [*coord_tools.TOOLS, *network_tools.TOOLS, *agent_tools.TOOLS]


for _tool in [*TOOLS, *MORE_TOOLS, *_seed_tools()]:
    register(_tool)
