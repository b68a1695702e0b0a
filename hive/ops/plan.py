"""Planning operations described once: choosing a strategy, the planning prompt,
checking a plan, creating its epic, and the brief of a worker on one subtask."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from hive.domain.limits import MAX_ID
from hive.errors import AmbiguousId, Conflict, InvalidInput, NotFound, NotOwner
from hive.models import Cell
from hive.models.cell import PlannedCell
from hive.models.epic import PlannedSubtask
from hive.models.results import EpicStatus
from hive.models.swarm import PlanPrompt, StrategyChoice, SubtaskPrompt, ValidationResult
from hive.ops.cells import LOOKUP, PRIORITY, IdParams, Priority
from hive.ops.spec import CLI_ONLY, Command, Operation, Params, cli_help_only, declare

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

StrategyName = Literal["file-based", "feature-based", "risk-based", "research-based"]
TASK = "the task to plan"
LONG_TEXT = 20_000


class SelectParams(Params):
    task: str = Field(
        min_length=1, max_length=10_000, description=TASK, json_schema_extra=cli_help_only
    )
    codebase_context: str | None = Field(default=None, max_length=LONG_TEXT)
    context: str | None = Field(default=None, max_length=LONG_TEXT)


def _select(ws: Workspace, a: SelectParams) -> StrategyChoice:
    from hive.domain.swarm.learning import select_strategy

    return select_strategy(ws, task=a.task, context=a.context, codebase_context=a.codebase_context)


class DecomposeParams(Params):
    task: str = Field(
        min_length=1, max_length=10_000, description=TASK, json_schema_extra=cli_help_only
    )
    max_subtasks: int = Field(default=5, ge=1, le=30)
    query_cass: bool = True
    context: str | None = Field(default=None, max_length=LONG_TEXT)
    cass_limit: int = Field(default=3, ge=1, le=50)


def _decompose(ws: Workspace, a: DecomposeParams) -> PlanPrompt:
    from hive.domain.swarm.decompose import swarm_decompose

    return swarm_decompose(
        ws,
        task=a.task,
        max_subtasks=a.max_subtasks,
        context=a.context,
        query_cass=a.query_cass,
        cass_limit=a.cass_limit,
    )


class PlanParams(DecomposeParams):
    strategy: StrategyName | Literal["auto"] = "auto"


def _plan(ws: Workspace, a: PlanParams) -> PlanPrompt:
    from hive.domain.swarm.decompose import swarm_plan_prompt

    return swarm_plan_prompt(
        ws,
        task=a.task,
        strategy=a.strategy,
        max_subtasks=a.max_subtasks,
        context=a.context,
        query_cass=a.query_cass,
        cass_limit=a.cass_limit,
    )


class ValidateParams(Params):
    response: str | dict[str, Any] = Field(description="plan JSON (a ```json fence is fine)")


def _validate(ws: Workspace, a: ValidateParams) -> ValidationResult:
    from hive.domain.swarm.decompose import swarm_validate_decomposition

    return swarm_validate_decomposition(None, response=a.response)


class EpicSubtask(PlannedSubtask):
    """One planned subtask (other keys are ignored)."""  # in every agent's tool list

    # strict as every tool's own arguments: "2" is not a number here either
    model_config = ConfigDict(extra="ignore", strict=True)

    priority: Priority | None = None  # also P0-P4, as hive_create takes it


class CreateEpicParams(Params):
    epic_title: str = Field(min_length=1, max_length=500)
    epic_description: str = ""
    subtasks: list[EpicSubtask] = Field(min_length=1, max_length=50)
    strategy: StrategyName | Literal["auto"] | None = None
    priority: Priority | None = Field(default=None, description="the epic's (default 2)")


def _create_epic(ws: Workspace, a: CreateEpicParams) -> list[Cell]:
    from hive.domain.swarm.decompose import hive_create_epic

    subtasks: list[PlannedSubtask] = [*a.subtasks]  # EpicSubtasks: planned subtasks
    return hive_create_epic(
        ws,
        epic_title=a.epic_title,
        epic_description=a.epic_description,
        subtasks=subtasks,
        strategy=a.strategy,
        priority=a.priority,
    )


def _epic_summaries(cells: list[Cell], a: CreateEpicParams) -> list[PlannedCell]:
    """An agent's answer: the epic then its subtasks in plan order, each its summary
    (id, title, status, ...) with its parent, files_owned and blocks edges (what the
    plan became: the ids its dependency indexes name): ~5 kB less per epic than the
    whole records, whose descriptions the agent sent itself."""
    return [PlannedCell.of(cell) for cell in cells]


def _subtask_globs(a: CreateEpicParams) -> list[str]:
    """The globs the subtasks claim (their ``files``), checked as ``hive_create``'s
    ``files`` are: an agent may not claim there what its path rules refuse it."""
    return [glob for subtask in a.subtasks for glob in subtask.files]


# what _subtasks reads, for a person's --help (the tool's schema shows the object)
SUBTASK_HELP = (
    'a title, or JSON: {"title": ..., "files": [...], "dependencies": [0]}'
    " (0 is the first --subtask) (repeatable)"
)


def _subtasks(values: Any) -> list[PlannedSubtask]:
    """A person's subtasks: each a title, or a JSON object like ``{"title": ...,
    "files": [...]}``."""
    import json

    found: list[PlannedSubtask] = []
    for raw in values if isinstance(values, list) else [values]:
        text = str(raw).strip()
        try:
            data = json.loads(text) if text.startswith("{") else {"title": text}
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--subtask is not valid JSON: {exc.msg}") from None
        try:
            found.append(EpicSubtask.model_validate(data, strict=False))  # text, as typed
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(part) for part in error["loc"])
            raise InvalidInput(f"invalid subtask {where}: {error['msg']}", field=where) from None
    return found


class SubtaskParams(Params):
    agent_name: str | None = None
    cell_id: str = Field(min_length=1, max_length=MAX_ID)
    epic_id: str | None = None
    subtask_title: str | None = Field(default=None, max_length=500)
    subtask_description: str | None = Field(default=None, max_length=LONG_TEXT)
    files: list[str] = Field(default_factory=list, max_length=1000)
    shared_context: str | None = Field(default=None, max_length=LONG_TEXT)
    context: str | None = Field(default=None, max_length=LONG_TEXT)


def _subtask_prompt(ws: Workspace, a: SubtaskParams) -> SubtaskPrompt:
    from hive.domain.swarm.prompts import swarm_subtask_prompt

    return swarm_subtask_prompt(ws, **_brief_kwargs(a))


def _spawn(ws: Workspace, a: SubtaskParams) -> SubtaskPrompt:
    from hive.domain.swarm.prompts import swarm_spawn_subtask

    return swarm_spawn_subtask(ws, **_brief_kwargs(a))


def _brief_kwargs(a: SubtaskParams) -> dict[str, Any]:
    return a.model_dump()


TASK_ARG = ("task",)
CASS = {"query_cass": ("--no-query-cass", "--no-cass")}
BRIEF_SHORT = {"agent_name": ("--agent",), "files": ("-f",)}

declare(
    Operation(
        name="swarm_validate_decomposition",
        summary="Check a plan: schema, file conflicts, dependencies.",
        params=ValidateParams,
        result=ValidationResult,
        run=_validate,
        writes=False,
        errors=(InvalidInput,),
        commands=(
            Command(("swarm", "validate-decomposition"), arguments=("response",)),
            Command(("swarm", "validate"), arguments=("response",), alias=True),
        ),
        help="Check a decomposition (exits 2 when it is invalid). RESPONSE: a file with"
        " the plan JSON, or '-' for standard input.",
    ),
    Operation(
        name="hive_create_epic",
        summary="Create an epic and its subtasks in one commit.",
        params=CreateEpicParams,
        result=list[Cell] | list[PlannedCell],  # an agent's answer: the summaries
        run=_create_epic,
        answer=_epic_summaries,
        writes=True,
        errors=(InvalidInput, NotFound, AmbiguousId),
        patterns=_subtask_globs,
        parsers={"subtasks": _subtasks, **PRIORITY},
        commands=(
            Command(
                ("epic", "create"),
                arguments=("epic_title",),
                short={
                    "subtasks": ("--subtask", "-s"),
                    "epic_description": ("-d", "--description"),
                    "priority": ("-p",),
                },
                helps={"subtasks": SUBTASK_HELP},
            ),
            Command(
                ("swarm", "create-epic"),
                short={"subtasks": ("--subtask",)},
                helps={"subtasks": SUBTASK_HELP},
                help="Create the epic and subtasks of a valid plan in one commit: a plan"
                " file (SOURCE, '-' for standard input) or --epic-title and --subtask.",
            ),
        ),
        help="Create an epic and its subtasks in one commit.",
    ),
    Operation(
        name="swarm_select_strategy",
        summary="Choose a decomposition strategy from wording and history.",
        params=SelectParams,
        result=StrategyChoice,
        run=_select,
        writes=False,
        errors=(InvalidInput,),
        commands=(Command(("swarm", "select-strategy"), arguments=TASK_ARG),),
        help="Choose a decomposition strategy from the wording and similar past outcomes.",
    ),
    Operation(
        name="swarm_decompose",
        summary="Planning prompt with the strategy chosen for you.",
        params=DecomposeParams,
        result=PlanPrompt,
        run=_decompose,
        writes=False,
        errors=(InvalidInput,),
        commands=(Command(("swarm", "decompose"), arguments=TASK_ARG, short=CASS),),
        help="Like plan-prompt, with the strategy chosen automatically.",
    ),
    Operation(
        name="swarm_plan_prompt",
        summary="Planning prompt (history, lessons, schema).",
        params=PlanParams,
        result=PlanPrompt,
        run=_plan,
        writes=False,
        errors=(InvalidInput,),
        commands=(Command(("swarm", "plan-prompt"), arguments=TASK_ARG, short=CASS),),
        help="The planning prompt for a coordinator (strategy, history, lessons, schema).",
    ),
    Operation(
        name="swarm_subtask_prompt",
        summary="Brief for a worker on one subtask.",
        params=SubtaskParams,
        result=SubtaskPrompt,
        run=_subtask_prompt,
        writes=False,
        errors=(NotFound, AmbiguousId),
        commands=(Command(("swarm", "subtask-prompt"), arguments=("cell_id",), short=BRIEF_SHORT),),
        help="The brief for a worker agent on one subtask.",
    ),
    Operation(
        name="swarm_spawn_subtask",
        summary="Prepare a worker for a subtask.",
        params=SubtaskParams,
        result=SubtaskPrompt,
        run=_spawn,
        writes=False,
        errors=(NotFound, AmbiguousId, Conflict, NotOwner),
        commands=(Command(("swarm", "spawn-subtask"), arguments=("cell_id",), short=BRIEF_SHORT),),
        help="Prepare a worker for a subtask (refuses closed or someone else's work).",
    ),
)


def _epic_status(ws: Workspace, a: IdParams) -> EpicStatus:
    from hive.domain.epics import epic_status

    return epic_status(ws, epic_id=a.id)


declare(
    Operation(
        name="hive_epic_status",
        summary="Progress of an epic's subtasks.",
        params=IdParams,
        result=EpicStatus,
        run=_epic_status,
        writes=False,
        errors=(*LOOKUP, InvalidInput),
        surfaces=CLI_ONLY,  # agents have swarm_status
        commands=(Command(("epic", "status"), arguments=("id",)),),
    ),
)
