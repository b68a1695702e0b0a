"""Decomposition: the coordinator's planning prompt, validation of the plan it
returns, and turning a valid plan into an epic with subtasks in one commit."""

from __future__ import annotations

import json
import re
import shutil
from typing import Any

from pydantic import ValidationError

from hive.domain.epics import create_epic
from hive.domain.globs import intersection_witness, normalize_pattern
from hive.domain.limits import MAX_TITLE
from hive.domain.outcomes import load_outcomes
from hive.domain.process import run_killable
from hive.domain.swarm.learning import (
    anti_patterns,
    ordered_tokens,
    select_strategy,
    similarity,
    tokens,
)
from hive.domain.swarm.strategies import STRATEGIES, STRATEGY_NAMES
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput, NotInitialized
from hive.models import Cell
from hive.models.cell import check_title
from hive.models.outcome import Outcome
from hive.models.swarm import (
    Decomposition,
    PlannedSubtask,
    PlanPrompt,
    StrategyChoice,
    SwarmInit,
    ValidationIssue,
    ValidationResult,
)

MAX_SUBTASKS = 30
MAX_RESPONSE = 200_000
CASS_TIMEOUT = 5.0
DEFAULT_CASS_LIMIT = 3
MAX_CASS_LIMIT = 50
AUTO = "auto"
_FENCE = re.compile(r"```(?:json)?\s*\n(.*?)```", re.S)
_VERB = r"(?:use|using|call|add|enable|store|return|keep)"
_SUBJECT = r"(?P<subject>[\w./\-]+(?:[ \t]+[\w./\-]+){0,2})"
_NEGATIVE = re.compile(
    rf"\b(?:never|must not|mustn't|do not|don't|should not|shouldn't|avoid)\s+"
    rf"(?:{_VERB}\s+)?{_SUBJECT}",
    re.I,
)
_POSITIVE = re.compile(
    rf"\b(?:always\s+(?:{_VERB}\s+)?|(?:must|should)\s+{_VERB}\s+|{_VERB}\s+){_SUBJECT}",
    re.I,
)
_NEGATION = re.compile(
    r"\b(?:do not|don't|must not|never|without)\s+(?:modify|touch|edit|change)\s+([\w./*{}\-]+)",
    re.I,
)


# ------------------------------------------------------------------ the prompt


def swarm_plan_prompt(
    ws: Workspace,
    *,
    task: str,
    strategy: str | None = None,
    max_subtasks: int = 5,
    context: str | None = None,
    query_cass: bool = True,
    cass_limit: int = DEFAULT_CASS_LIMIT,
) -> PlanPrompt:
    """A prompt asking the coordinator for a decomposition, with this repo's history.

    ``strategy`` ``None`` or ``"auto"`` lets :func:`select_strategy` choose.
    """
    if not 1 <= max_subtasks <= MAX_SUBTASKS:
        raise InvalidInput(f"max_subtasks must be between 1 and {MAX_SUBTASKS}")
    if not 1 <= cass_limit <= MAX_CASS_LIMIT:
        raise InvalidInput(f"cass_limit must be between 1 and {MAX_CASS_LIMIT}")
    outcomes = load_outcomes(ws)
    choice = select_strategy(ws, task=task, context=context, outcomes=outcomes)
    if strategy is not None and strategy != AUTO:
        choice = _forced(choice, strategy)
    similar = similar_epics(ws, task, outcomes)
    lessons = anti_patterns(outcomes)
    cass_status, cass_hits = cass_search(task, cass_limit) if query_cass else ("skipped", [])
    prompt = _render_prompt(task, context, choice, max_subtasks, similar, lessons, cass_hits)
    return PlanPrompt(
        prompt=prompt,
        strategy=choice,
        response_schema=decomposition_schema(),
        similar_epics=similar,
        anti_patterns=lessons,
        cass=cass_status,
    )


def swarm_decompose(
    ws: Workspace,
    *,
    task: str,
    max_subtasks: int = 5,
    context: str | None = None,
    query_cass: bool = True,
    cass_limit: int = DEFAULT_CASS_LIMIT,
) -> PlanPrompt:
    """Same as :func:`swarm_plan_prompt` with the strategy chosen automatically."""
    return swarm_plan_prompt(
        ws,
        task=task,
        max_subtasks=max_subtasks,
        context=context,
        query_cass=query_cass,
        cass_limit=cass_limit,
    )


def _forced(choice: StrategyChoice, strategy: str) -> StrategyChoice:
    if strategy not in STRATEGIES:
        raise InvalidInput(
            f"unknown strategy {strategy!r}: use {', '.join(STRATEGY_NAMES)} or {AUTO}"
        )
    if strategy == choice.strategy:
        return choice
    return choice.model_copy(
        update={
            "strategy": strategy,
            "reasoning": f"{strategy} was requested (hive would have chosen {choice.strategy}).",
        }
    )


def decomposition_schema() -> dict[str, Any]:
    """The JSON shape the coordinator must answer with: the plan model's own fields
    (``PlannedSubtask``, the model validation and epic creation use)."""
    return {
        "type": "object",
        "required": ["epic", "subtasks"],
        "properties": {
            "epic": {
                "type": "object",
                "required": ["title"],
                "properties": {"title": {"type": "string"}, "description": {"type": "string"}},
            },
            "strategy": {"enum": list(STRATEGY_NAMES)},
            "subtasks": {
                "type": "array",
                "minItems": 1,
                "items": {
                    "type": "object",
                    "required": ["title", "files"],
                    "properties": _subtask_properties(),
                },
            },
        },
    }


PLAN_FIELDS = (
    "title",
    "description",
    "type",
    "priority",
    "files",
    "dependencies",
    "estimated_complexity",
)


def _subtask_properties() -> dict[str, Any]:
    """The fields of ``PlannedSubtask`` a planner fills in, as JSON schema (no titles,
    no defaults, ``null`` left out of optional numbers)."""
    found = PlannedSubtask.model_json_schema()["properties"]
    lean: dict[str, Any] = {}
    for name in PLAN_FIELDS:
        field = {k: v for k, v in found[name].items() if k not in ("title", "default")}
        options = field.pop("anyOf", None)
        if options:
            field.update(next(o for o in options if o != {"type": "null"}))
        lean[name] = field
    return lean


def _render_prompt(
    task: str,
    context: str | None,
    choice: StrategyChoice,
    max_subtasks: int,
    similar: list[dict[str, Any]],
    lessons: list[str],
    cass_hits: list[str],
) -> str:
    strategy = STRATEGIES[choice.strategy]
    parts = [
        f"Plan this task as an epic of at most {max_subtasks} subtasks for parallel agents.",
        f"\n## Task\n{task.strip()}",
    ]
    if context:
        parts.append(f"\n## Context\n{context.strip()}")
    parts.append(
        f"\n## Strategy: {strategy.name} (confidence {choice.confidence:.2f})\n"
        f"{strategy.summary}\nWhy: {choice.reasoning}\n"
        + "".join(f"- {line}\n" for line in strategy.guidelines)
        + "Avoid:\n"
        + "".join(f"- {line}\n" for line in strategy.anti_patterns)
        + f"Example: {strategy.example}"
    )
    if similar:
        parts.append("\n## Similar past epics in this repository")
        parts += [
            f"- {e['title']} (strategy {e['strategy'] or 'unknown'}): {e['closed']}/{e['subtasks']}"
            f" subtasks closed, outcomes {e['successes']} ok / {e['failures']} failed"
            for e in similar
        ]
    if lessons:
        parts.append("\n## Lessons from past failures (anti-patterns)")
        parts += [f"- {lesson}" for lesson in lessons]
    if cass_hits:
        parts.append("\n## Related past agent sessions (cass)")
        parts += [f"- {hit}" for hit in cass_hits]
    parts.append(
        "\n## Rules\n"
        "- Every subtask lists the files (globs allowed) it will edit; no two subtasks may"
        " own intersecting files.\n"
        "- dependencies are indexes of earlier subtasks that must finish first; no cycles.\n"
        "- estimated_complexity is 1 (trivial) to 5 (a day of work).\n"
        "\n## Answer\nOnly JSON in this shape (a ```json fence is fine):\n"
        '{"epic": {"title": "...", "description": "..."}, "strategy": "' + strategy.name + '",'
        ' "subtasks": [{"title": "...", "description": "...", "files": ["src/x/**"],'
        ' "dependencies": [], "estimated_complexity": 2}]}'
    )
    return "\n".join(parts)


# ------------------------------------------------------------------ history


def similar_epics(
    ws: Workspace, task: str, outcomes: list[Outcome] | None = None, limit: int = 5
) -> list[dict[str, Any]]:
    """Past epics whose titles resemble ``task``, with how their subtasks went."""
    try:
        index = ws.cells()
    except NotInitialized:
        return []
    wanted = tokens(task)
    by_epic: dict[str, list[Outcome]] = {}
    for outcome in outcomes if outcomes is not None else load_outcomes(ws):
        if outcome.epic_id:
            by_epic.setdefault(outcome.epic_id, []).append(outcome)
    scored: list[tuple[float, Cell]] = []
    for cell_id, node in index.nodes.items():  # only the live epics are decoded
        if node.type != "epic" or node.deleted:
            continue
        cell = index.cells[cell_id]
        score = similarity(wanted, tokens(f"{cell.title} {cell.description[:300]}"))
        if score >= 0.2:
            scored.append((score, cell))
    scored.sort(key=lambda item: (-item[0], item[1].id))
    found = []
    for score, epic in scored[:limit]:
        children = [index.cells[c] for c in index.children_of(epic.id)]
        results = by_epic.get(epic.id, [])
        found.append(
            {
                "id": epic.id,
                "title": epic.title,
                "strategy": epic.metadata.get("strategy"),
                "similarity": round(score, 3),
                "subtasks": len(children),
                "closed": sum(1 for c in children if c.is_closed),
                "successes": sum(1 for o in results if o.success),
                "failures": sum(1 for o in results if not o.success),
            }
        )
    return found


def cass_search(query: str, limit: int = DEFAULT_CASS_LIMIT) -> tuple[str, list[str]]:
    """Up to ``limit`` hits from ``cass search --json`` when the binary is on PATH.

    Never raises. A cass that hangs is killed with its whole process group
    after ``CASS_TIMEOUT`` seconds.
    """
    binary = shutil.which("cass")
    if binary is None:
        return "unavailable", []
    # "--": a task that begins with "-" is the query, not an option of cass
    command = [binary, "search", "--json", "--limit", str(limit), "--", query[:500]]
    try:
        run = run_killable(command, cwd=None, timeout=CASS_TIMEOUT)
    except OSError as exc:
        return f"failed: {type(exc).__name__}", []
    if run.exit_code is None:
        return "failed: TimeoutExpired", []
    if run.exit_code != 0:
        return f"failed: exit {run.exit_code}", []
    try:
        data = json.loads(run.stdout or b"null")
    except json.JSONDecodeError:
        return "failed: not JSON", []
    hits = data.get("hits") or data.get("results") if isinstance(data, dict) else data
    if not isinstance(hits, list) or not hits:
        return "no hits", []
    return "ok", [_hit_text(hit) for hit in hits[:limit]]


def _hit_text(hit: Any) -> str:
    if isinstance(hit, dict):
        title = hit.get("title") or hit.get("source_path") or hit.get("path") or ""
        snippet = hit.get("snippet") or hit.get("content") or hit.get("text") or ""
        return f"{title}: {str(snippet)[:200]}".strip(": ")
    return str(hit)[:200]


# ------------------------------------------------------------------ validation


def swarm_validate_decomposition(
    ws: Workspace | None, *, response: str | dict[str, Any], max_subtasks: int = MAX_SUBTASKS
) -> ValidationResult:
    """Check a decomposition: schema, files (exact glob conflicts), dependencies."""
    try:
        raw = _parse_response(response)
    except InvalidInput as exc:
        return ValidationResult(
            valid=False, errors=[ValidationIssue(message=exc.message, hint=_JSON_HINT)]
        )
    try:
        plan = Decomposition.model_validate(raw)
    except ValidationError as exc:
        return ValidationResult(valid=False, errors=[_schema_issue(e) for e in exc.errors()])
    errors: list[ValidationIssue] = []
    warnings: list[ValidationIssue] = []
    _check_epic(plan, errors)
    if len(plan.subtasks) > max_subtasks:
        errors.append(
            ValidationIssue(
                message=f"{len(plan.subtasks)} subtasks, more than the {max_subtasks} allowed",
                hint="merge small subtasks or split the epic",
                path="subtasks",
            )
        )
    normalized = _check_files(plan.subtasks, errors, warnings)
    _check_dependencies(plan.subtasks, errors)
    _check_contradictions(plan.subtasks, normalized, warnings)
    if plan.strategy is not None and plan.strategy not in STRATEGIES:
        warnings.append(
            ValidationIssue(
                message=f"unknown strategy {plan.strategy!r}",
                hint=f"use one of {', '.join(STRATEGY_NAMES)}",
                path="strategy",
            )
        )
    if not errors:
        plan = plan.model_copy(
            update={
                "subtasks": [
                    s.model_copy(update={"files": files})
                    for s, files in zip(plan.subtasks, normalized, strict=True)
                ]
            }
        )
    return ValidationResult(valid=not errors, errors=errors, warnings=warnings, data=plan)


_JSON_HINT = 'answer with one JSON object: {"epic": {...}, "subtasks": [...]}'


def _parse_response(response: str | dict[str, Any]) -> Any:
    """The plan in ``response``: among every JSON object in it (fenced or inline),
    the last one that matches the schema, else the last one that looks like a plan."""
    if isinstance(response, dict):
        return response
    if not isinstance(response, str) or not response.strip():
        raise InvalidInput("the decomposition is empty")
    if len(response) > MAX_RESPONSE:
        raise InvalidInput(f"the decomposition is too large ({len(response)} characters)")
    candidates = _json_objects(response)
    if not candidates:
        raise InvalidInput(f"the decomposition is not valid JSON ({_json_error(response)})")
    valid = [c for c in candidates if _fits_schema(c)]
    if valid:
        return valid[-1]
    plans = [c for c in candidates if "subtasks" in c or "epic" in c]
    return (plans or candidates)[-1]


def _json_objects(text: str) -> list[dict[str, Any]]:
    """Every top-level JSON object in ``text``, decoded from each ``{`` in turn."""
    decoder = json.JSONDecoder()
    found: list[dict[str, Any]] = []
    position = text.find("{")
    while position != -1:
        try:
            value, end = decoder.raw_decode(text, position)
        except json.JSONDecodeError:
            position = text.find("{", position + 1)
            continue
        if isinstance(value, dict):
            found.append(value)
        position = text.find("{", end)
    return found


def _fits_schema(candidate: dict[str, Any]) -> bool:
    try:
        Decomposition.model_validate(candidate)
    except ValidationError:
        return False
    return True


def _json_error(response: str) -> str:
    """Where the first fenced block (or the whole text) stops being JSON."""
    fenced = [m.group(1) for m in _FENCE.finditer(response)]
    text = fenced[0] if fenced else response
    try:
        json.loads(text)
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno} column {exc.colno}: {exc.msg}"
    return "no JSON object found"


def _schema_issue(error: Any) -> ValidationIssue:
    location = "".join(
        f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]
    ).lstrip(".")
    return ValidationIssue(
        message=f"{location or 'document'}: {error['msg']}",
        hint="see the schema returned with the planning prompt",
        path=location,
    )


def _check_epic(plan: Decomposition, errors: list[ValidationIssue]) -> None:
    """The epic's title and the subtasks' titles, by the rules a cell's title follows
    (one line, no control characters), so a valid plan is one creation accepts."""
    title = plan.epic.get("title")
    if not isinstance(title, str) or not title.strip():
        errors.append(
            ValidationIssue(
                message="epic.title is missing or empty",
                hint="give the epic a one-line title",
                path="epic.title",
            )
        )
    titles = [("epic.title", title)] + [
        (f"subtasks[{number}].title", subtask.title) for number, subtask in enumerate(plan.subtasks)
    ]
    for path, text in titles:
        if not isinstance(text, str) or not text.strip():
            if path != "epic.title":
                errors.append(ValidationIssue(message=f"{path} is blank", hint=_TITLE, path=path))
            continue
        try:
            check_title(text.strip())
        except ValueError as exc:
            errors.append(ValidationIssue(message=f"{path}: {exc}", hint=_TITLE, path=path))
        if len(text.strip()) > MAX_TITLE:
            message = f"{path} is longer than {MAX_TITLE} characters"
            errors.append(ValidationIssue(message=message, hint=_TITLE, path=path))


_TITLE = f"a title is one line of text (at most {MAX_TITLE} characters) without control characters"


def _check_files(
    subtasks: list[PlannedSubtask], errors: list[ValidationIssue], warnings: list[ValidationIssue]
) -> list[list[str]]:
    normalized: list[list[str]] = []
    for number, subtask in enumerate(subtasks):
        files: list[str] = []
        for pattern in subtask.files:
            try:
                files.append(normalize_pattern(pattern))
            except HiveError as exc:
                errors.append(
                    ValidationIssue(
                        message=exc.message,
                        hint="use repository-relative paths or globs",
                        path=f"subtasks[{number}].files",
                    )
                )
        if not subtask.files:
            warnings.append(
                ValidationIssue(
                    message=f"subtask {number} ({subtask.title!r}) lists no files",
                    hint="list the files it will edit so reservations and review can check scope",
                    path=f"subtasks[{number}].files",
                )
            )
        normalized.append(files)
    for i, left in enumerate(normalized):
        for j in range(i + 1, len(normalized)):
            for a in left:
                for b in normalized[j]:
                    witness = intersection_witness(a, b)
                    if witness is not None:
                        errors.append(
                            ValidationIssue(
                                message=f"subtasks {i} and {j} both own {witness!r} ({a} vs {b})",
                                hint="give each file to exactly one subtask, or merge them",
                                path=f"subtasks[{j}].files",
                            )
                        )
    return normalized


def _check_dependencies(subtasks: list[PlannedSubtask], errors: list[ValidationIssue]) -> None:
    count = len(subtasks)
    graph: dict[int, list[int]] = {}
    for number, subtask in enumerate(subtasks):
        for dep in subtask.dependencies:
            path = f"subtasks[{number}].dependencies"
            if dep == number:
                errors.append(
                    ValidationIssue(
                        message=f"subtask {number} depends on itself", hint="remove it", path=path
                    )
                )
            elif not 0 <= dep < count:
                errors.append(
                    ValidationIssue(
                        message=f"subtask {number} depends on {dep}, which does not exist",
                        hint=f"dependencies are indexes 0..{count - 1}",
                        path=path,
                    )
                )
            else:
                graph.setdefault(number, []).append(dep)
    cycle = _find_cycle(graph, count)
    if cycle:
        errors.append(
            ValidationIssue(
                message="dependency cycle: " + " -> ".join(str(n) for n in cycle),
                hint="a subtask can only wait for work that does not wait for it",
                path="subtasks",
            )
        )


def _find_cycle(graph: dict[int, list[int]], count: int) -> list[int]:
    state = [0] * count
    stack: list[int] = []

    def visit(node: int) -> list[int]:
        state[node] = 1
        stack.append(node)
        for nxt in graph.get(node, []):
            if state[nxt] == 1:
                return [*stack[stack.index(nxt) :], nxt]
            if state[nxt] == 0:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return []

    for node in range(count):
        if state[node] == 0:
            found = visit(node)
            if found:
                return found
    return []


def _check_contradictions(
    subtasks: list[PlannedSubtask], normalized: list[list[str]], warnings: list[ValidationIssue]
) -> None:
    """Instructions that contradict: a subtask told not to change a file it owns, and
    one subtask saying always/use X while another says never/don't use X."""
    for number, subtask in enumerate(subtasks):
        for match in _NEGATION.finditer(subtask.description):
            target = match.group(1).rstrip(".,;:")
            try:
                pattern = normalize_pattern(target)
            except HiveError:
                continue
            if any(intersection_witness(pattern, own) for own in normalized[number]):
                warnings.append(
                    ValidationIssue(
                        message=f"subtask {number} says not to change {target} but owns it",
                        hint="drop the file from its files or fix the instruction",
                        path=f"subtasks[{number}].description",
                    )
                )
    _check_directive_conflicts(subtasks, warnings)


def _check_directive_conflicts(
    subtasks: list[PlannedSubtask], warnings: list[ValidationIssue]
) -> None:
    directives = [_directives(f"{s.title}. {s.description}") for s in subtasks]
    reported: set[tuple[int, int, str]] = set()
    for i, (positive, _) in enumerate(directives):
        for j, (_, negative) in enumerate(directives):
            if i == j:
                continue
            for subject, said in positive.items():
                if subject in negative and (min(i, j), max(i, j), subject) not in reported:
                    reported.add((min(i, j), max(i, j), subject))
                    warnings.append(
                        ValidationIssue(
                            message=(
                                f"subtasks {i} and {j} contradict each other on {subject!r}: "
                                f"{said!r} vs {negative[subject]!r}"
                            ),
                            hint="agree on one approach and state it the same way in both",
                            path=f"subtasks[{j}].description",
                        )
                    )


def _directives(text: str) -> tuple[dict[str, str], dict[str, str]]:
    """(positive, negative) directives of ``text``: subject head word -> the phrase."""
    negative: dict[str, str] = {}
    spans: list[tuple[int, int]] = []
    for match in _NEGATIVE.finditer(text):
        head = ordered_tokens(match.group("subject"))
        if head:
            negative.setdefault(head[0], match.group(0).strip())
            spans.append(match.span())
    positive: dict[str, str] = {}
    for match in _POSITIVE.finditer(text):
        if any(start <= match.start() < end for start, end in spans):
            continue
        head = ordered_tokens(match.group("subject"))
        if head:
            positive.setdefault(head[0], match.group(0).strip())
    return positive, negative


# ------------------------------------------------------------------ creating the epic


def create_epic_from_decomposition(
    ws: Workspace,
    *,
    decomposition: str | dict[str, Any],
    strategy: str | None = None,
    priority: int | None = None,
) -> list[Cell]:
    """Validate, then create the epic and its subtasks in one commit (the epic's
    ``priority``: 2 unless given; a subtask without one takes the epic's)."""
    checked = swarm_validate_decomposition(ws, response=decomposition)
    if not checked.valid or checked.data is None:
        problems = "; ".join(
            f"{issue.message} ({issue.hint})" if issue.hint else issue.message
            for issue in checked.errors
        )
        raise InvalidInput(
            f"invalid decomposition: {problems}",
            errors=[issue.model_dump() for issue in checked.errors],
        )
    plan = checked.data
    title = str(plan.epic["title"])
    description = str(plan.epic.get("description") or "")
    chosen = strategy if strategy not in (None, AUTO) else plan.strategy
    if chosen is not None and chosen not in STRATEGIES:
        raise InvalidInput(f"unknown strategy {chosen!r}: use {', '.join(STRATEGY_NAMES)}")
    if chosen is None:  # the plan did not say: record what hive would choose for it
        chosen = select_strategy(ws, task=f"{title}\n{description}".strip()).strategy
    return create_epic(
        ws,
        title=title,
        description=description,
        subtasks=[
            {
                "title": s.title,
                "description": s.description,
                "type": s.type,
                "files": s.files,
                "dependencies": s.dependencies,
                "estimated_complexity": s.estimated_complexity,
                "priority": s.priority,
            }
            for s in plan.subtasks
        ],
        priority=2 if priority is None else priority,
        metadata={"strategy": chosen},
    )


def hive_create_epic(
    ws: Workspace,
    *,
    epic_title: str,
    subtasks: list[dict[str, Any]] | list[PlannedSubtask],
    epic_description: str = "",
    strategy: str | None = None,
    priority: int | None = None,
) -> list[Cell]:
    """The seed's ``hive_create_epic``: ``subtasks`` may be ``validation.data.subtasks``
    as they are (type and priority included)."""
    items = [s.model_dump() if isinstance(s, PlannedSubtask) else dict(s) for s in subtasks]
    plan = {"epic": {"title": epic_title, "description": epic_description}, "subtasks": items}
    return create_epic_from_decomposition(
        ws, decomposition=plan, strategy=strategy, priority=priority
    )


# ------------------------------------------------------------------ swarm_init


def swarm_init(ws: Workspace, *, project_path: str | None = None) -> SwarmInit:
    """What this repository offers a swarm: hive, mail, cass, outcomes so far;
    ``agent`` is the caller's identity when it acts as a registered agent."""
    from hive.domain.mail import list_agents
    from hive.domain.swarm.complete import check_project_path

    check_project_path(ws.root, project_path, field="project_path")
    try:
        cells = len(ws.cells().cells)
        available = True
    except NotInitialized:
        cells, available = 0, False
    try:
        agents = list_agents(ws)
        mail = True
    except HiveError:
        agents, mail = [], False
    outcomes = len(load_outcomes(ws)) if available else 0
    mine = next((a.name for a in agents if a.session == ws.session), None)
    if ws.principal.kind == "agent" and any(a.name == ws.actor for a in agents):
        mine = ws.actor  # registered earlier, by another session or 'hive agent register'
    return SwarmInit(
        project_path=project_path or ws.root,
        hive_available=available,
        swarmmail_available=mail,
        cass_available=shutil.which("cass") is not None,
        agent=mine,
        cells=cells,
        outcomes=outcomes,
        strategies=list(STRATEGY_NAMES),
    )
