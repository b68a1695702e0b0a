"""Project memory (seed 003's ``inject_context`` / ``update_context``): the goals,
stack, decisions, milestones and banned approaches every agent should know,
committed as ``.hive/context.yaml`` so reviewers see each change in the history.

Sections and what ``update_context`` accepts:

| section | add | set | complete |
|---|---|---|---|
| decisions | an object (a string becomes ``{decision: ...}``) | - | - |
| milestones | an object with ``name`` (a string becomes ``{name: ...}``) | - | a milestone name |
| goals, banned | a string (kept once) | - | - |
| stack, project | - | an object merged key by key (null removes a key) | - |

Banned approaches are also put into every worker prompt (``swarm_subtask_prompt``).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import ConfigDict, Field, ValidationError

from hive.domain.limits import check_text
from hive.domain.workspace import Workspace
from hive.errors import CorruptFile, InvalidInput, NotFound
from hive.git.repo import Change, Snapshot, format_message
from hive.models.base import HiveModel
from hive.models.cell import utc_now
from hive.models.seeds import ContextUpdate
from hive.store import layout
from hive.store.yamlio import dumps, load_mapping

CONTEXT_PATH = layout.CONTEXT_PATH
SECTIONS = ("decisions", "milestones", "stack", "goals", "banned", "project")
MAX_ITEM_BYTES = 20_000
MAX_FILE_BYTES = 1_000_000
# the change each section takes, but milestones (add or complete)
_CHANGE_OF_SECTION = {
    "decisions": "add",
    "goals": "add",
    "banned": "add",
    "stack": "set",
    "project": "set",
}


class ProjectContext(HiveModel):
    model_config = ConfigDict(extra="forbid")

    project: dict[str, Any] = Field(default_factory=dict)
    goals: list[str] = Field(default_factory=list)
    stack: dict[str, Any] = Field(default_factory=dict)
    decisions: list[dict[str, Any]] = Field(default_factory=list)
    milestones: list[dict[str, Any]] = Field(default_factory=list)
    banned: list[str] = Field(default_factory=list)


def decode_context(content: bytes, path: str = CONTEXT_PATH) -> ProjectContext:
    mapping = load_mapping(content.decode("utf-8", errors="replace"), path)
    try:
        return ProjectContext.model_validate(mapping)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise CorruptFile(f"{path}: invalid field {where!r}: {error['msg']}", path=path) from None


def encode_context(context: ProjectContext) -> bytes:
    """The file's bytes (the same for equal contexts)."""
    return dumps(context.model_dump(mode="json")).encode("utf-8")


def load_context(ws: Workspace, snap: Snapshot | None = None) -> ProjectContext:
    snap = snap or ws.snapshot()
    sha = snap.blob_sha(CONTEXT_PATH)
    if sha is None:
        return ProjectContext()
    return decode_context(ws.git.read_blob(sha))


def _size_checked(item: Any, what: str) -> Any:
    try:
        size = len(json.dumps(item, ensure_ascii=False, default=str).encode("utf-8"))
    except (TypeError, ValueError, RecursionError):
        raise InvalidInput(f"{what} is not JSON") from None
    if size > MAX_ITEM_BYTES:
        raise InvalidInput(f"{what} is larger than {MAX_ITEM_BYTES} bytes")
    return item


def _text(item: Any, section: str) -> str:
    if not isinstance(item, str) or not item.strip():
        raise InvalidInput(
            f"update_context: add for {section} must be a non-empty string", field="add"
        )
    return str(_size_checked(item.strip(), f"{section} entry"))


def _object(item: Any, section: str, key: str) -> dict[str, Any]:
    if isinstance(item, str) and item.strip():
        item = {key: item.strip()}
    if not isinstance(item, dict) or not item:
        raise InvalidInput(
            f"update_context: add for {section} must be an object or a string", field="add"
        )
    checked: dict[str, Any] = _size_checked(item, f"{section} entry")
    return checked


def apply_update(
    current: ProjectContext, section: str, add: Any, set_: Any, complete: str | None, by: str
) -> ProjectContext:
    """``current`` with one change applied (InvalidInput for a change the section
    does not take)."""
    _check_change(section, add, set_, complete)
    updated = current.model_copy(deep=True)
    stamp = {"recorded_at": utc_now().strftime("%Y-%m-%dT%H:%M:%SZ"), "by": by}
    if section in ("goals", "banned"):
        entries: list[str] = getattr(updated, section)
        text = _text(add, section)
        if text not in entries:
            entries.append(text)
    elif section == "decisions":
        updated.decisions.append({**_object(add, section, "decision"), **stamp})
    elif section == "milestones" and complete is not None:
        _complete(updated, complete)
    elif section == "milestones":
        _add_milestone(updated, add, stamp)
    else:
        _set_values(updated, section, set_)
    return updated


def _check_change(section: str, add: Any, set_: Any, complete: str | None) -> None:
    """One change (add, set or complete) of printable text, of the kind ``section`` takes."""
    if section not in SECTIONS:
        raise InvalidInput(f"section must be one of {', '.join(SECTIONS)}", field="section")
    given = [
        name
        for name, value in (("add", add), ("set", set_), ("complete", complete))
        if value is not None
    ]
    if len(given) != 1:
        raise InvalidInput("update_context needs exactly one of add, set or complete")
    _printable(add if given[0] == "add" else set_ if given[0] == "set" else complete, given[0])
    if section == "milestones":
        if given[0] == "set":
            raise InvalidInput("milestones take add or complete, not set")
    elif given[0] != _CHANGE_OF_SECTION[section]:
        raise InvalidInput(f"{section} takes {_CHANGE_OF_SECTION[section]}, not {given[0]}")


def _add_milestone(context: ProjectContext, add: Any, stamp: dict[str, str]) -> None:
    milestone = _object(add, "milestones", "name")
    if not isinstance(milestone.get("name"), str) or not milestone["name"].strip():
        raise InvalidInput("a milestone needs a name", field="add")
    context.milestones.append({"status": "pending", **milestone, **stamp})


def _set_values(context: ProjectContext, section: str, set_: Any) -> None:
    """``set_``'s keys set in ``section`` (stack or project); a None value removes its key."""
    if not isinstance(set_, dict) or not set_:
        raise InvalidInput(f"set for {section} must be a non-empty object", field="set")
    target: dict[str, Any] = getattr(context, section)
    for key, value in _size_checked(set_, f"{section} values").items():
        if value is None:
            target.pop(key, None)
        else:
            target[key] = value


def _printable(value: Any, what: str) -> None:
    """Every string in ``value`` (keys too) is text a person may print: no control
    characters but tab and line breaks (an escape sequence would reach the terminal of
    whoever runs ``hive memory show``, and every worker prompt)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            check_text(item, f"update_context {what}", limit=MAX_FILE_BYTES)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, list | tuple):
            pending.extend(item)


def _complete(context: ProjectContext, name: str) -> None:
    for milestone in context.milestones:
        if milestone.get("name") == name:
            milestone["status"] = "completed"
            milestone["completed_at"] = utc_now().strftime("%Y-%m-%dT%H:%M:%SZ")
            return
    known = ", ".join(str(m.get("name")) for m in context.milestones) or "none"
    raise NotFound(f"no milestone named {name!r} (milestones: {known})", field="complete")


def update_context(
    ws: Workspace,
    *,
    section: str,
    add: Any = None,
    set: Any = None,
    complete: str | None = None,
) -> ContextUpdate:
    """Apply one change to ``.hive/context.yaml`` (read and written in one transaction)."""
    agent = ws.actor

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        current = load_context(ws, snap)
        updated = apply_update(current, section, add, set, complete, agent)
        value = getattr(updated, section)
        if updated == current:
            return [], "", ContextUpdate(section=section, value=value, changed=False)
        content = encode_context(updated)
        if len(content) > MAX_FILE_BYTES:
            raise InvalidInput(f"{CONTEXT_PATH} would exceed {MAX_FILE_BYTES} bytes")
        message = format_message(f"hive: context {section} ({agent})", ws.trailers("context"))
        return (
            [Change(CONTEXT_PATH, content)],
            message,
            ContextUpdate(section=section, value=value, changed=True),
        )

    outcome = ws.write_files(plan)
    result: ContextUpdate = outcome.result
    result.commit = outcome.commit if result.changed else None
    return result


# ------------------------------------------------------------------ rendering


def inject_context(ws: Workspace) -> str:
    """The project context as a markdown block for an agent's system prompt."""
    return render_markdown(load_context(ws))


def render_markdown(context: ProjectContext) -> str:
    lines = ["## Project context", ""]
    if context == ProjectContext():
        return "\n".join([*lines, "_Nothing recorded yet (update_context adds to it)._", ""])
    for key, value in context.project.items():
        lines.append(f"**{one_line(key)}:** {one_line(value)}")
    if context.project:
        lines.append("")
    _bullets(lines, "Goals", context.goals)
    _bullets(
        lines, "Tech stack", [f"{one_line(k)}: {one_line(v)}" for k, v in context.stack.items()]
    )
    _bullets(lines, "Decisions", [_decision(d) for d in context.decisions])
    _bullets(
        lines,
        "Milestones",
        [
            f"[{'x' if m.get('status') == 'completed' else ' '}] {one_line(m.get('name'))}"
            + (f" ({one_line(m['due'])})" if m.get("due") else "")
            for m in context.milestones
        ],
    )
    lines += banned_lines(context.banned)
    return "\n".join(lines).rstrip() + "\n"


def _bullets(lines: list[str], title: str, items: list[str]) -> None:
    """One bullet a line: an entry written over several lines is joined into one (its
    later lines would leave the list, a '## ...' line becoming a heading)."""
    if items:
        lines += [f"### {title}", *(f"- {one_line(item)}" for item in items), ""]


def banned_lines(banned: list[str]) -> list[str]:
    if not banned:
        return []
    title = "### Banned approaches (never use these)"
    return [title, *(f"- {one_line(item)}" for item in banned), ""]


def _decision(entry: dict[str, Any]) -> str:
    main = entry.get("decision") or entry.get("title") or entry.get("name")
    rest = {
        k: v
        for k, v in entry.items()
        if k not in ("decision", "title", "name", "by", "recorded_at")
    }
    text = one_line(main) if main is not None else one_line(rest)
    if main is not None and rest:
        text += " — " + "; ".join(f"{one_line(k)}: {one_line(v)}" for k, v in rest.items())
    return text + (f" ({entry['recorded_at'][:10]})" if entry.get("recorded_at") else "")


def one_line(value: Any) -> str:
    """``value`` as one line of text (JSON unless a string; runs of whitespace as one space)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return " ".join(str(text).split())
