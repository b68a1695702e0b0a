"""Seed 004's debate tools (``context_search``, ``file_read``, ``list_files``) and
seed 002's scratchpad and todo lists, described once: the agent tools and the ``hive
search``, ``hive scratchpad`` and ``hive todo`` commands are generated from these
descriptions. ``file_read`` and ``list_files`` are for agents only (confined to the
session's context directory; a person has a shell)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from hive.errors import InvalidInput, NotFound, PermissionDenied
from hive.models.seeds import (
    ContextSearchAnswer,
    DirListing,
    FileReadAnswer,
    ScratchpadCleared,
    ScratchpadListing,
    ScratchpadWritten,
    TodoList,
)
from hive.ops.context import json_or_text
from hive.ops.spec import (
    AGENT_ONLY,
    CLI_ONLY,
    CONTEXT_PATH,
    Caller,
    Command,
    NoParams,
    Operation,
    Params,
    cli_help_only,
    declare,
)

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

PadPath = Annotated[
    str, Field(max_length=500, description="e.g. analysis/report", json_schema_extra=cli_help_only)
]
FILE_ERRORS = (NotFound, InvalidInput, PermissionDenied)  # access_denied: outside the context


# ------------------------------------------------------------------ seed 004


class SearchParams(Params):
    term: str = Field(min_length=1, max_length=500)
    limit: int = Field(default=10, ge=1, le=100)
    verbose: bool = Field(default=False, description="200-character snippets")


def _context_search(ws: Workspace, a: SearchParams) -> ContextSearchAnswer:
    from hive.domain.debate import SNIPPET, context_search

    found = context_search(ws, term=a.term, limit=a.limit, snippet=SNIPPET if a.verbose else 100)
    return ContextSearchAnswer.model_validate(found)


class PathParams(Params):
    path: Annotated[str, Field(min_length=1, max_length=4096), CONTEXT_PATH]


def _repo_relative(caller: Caller, full: str) -> str | None:
    """``full`` (a real path) relative to the repository, or None when outside it."""
    from hive.domain.files import real_relative

    return real_relative(caller.root, full)


def _file_read(caller: Caller, a: PathParams) -> FileReadAnswer:
    from hive.domain.agents import record_read
    from hive.domain.debate import file_read, resolve_in_context
    from hive.domain.path_rules import PathPermissionDenied

    full = resolve_in_context(caller.context_root, a.path)
    relative = _repo_relative(caller, full)
    if relative is not None and not caller.allows("file_read")(relative):
        raise PathPermissionDenied(
            f"file_read may not touch {relative}", path=relative, status="error"
        )
    answer = FileReadAnswer.model_validate(file_read(caller.context_root, path=a.path))
    if relative is not None:
        record_read(
            caller.workspace(), session=caller.session_key, agent=caller.name, path=relative
        )
    return answer


def _list_files(caller: Caller, a: PathParams) -> DirListing:
    from hive.domain.debate import list_files

    answer = DirListing.model_validate(list_files(caller.context_root, path=a.path))
    allowed = caller.allows("list_files")
    answer.result.entries = [
        e
        for e in answer.result.entries
        if (rel := _repo_relative(caller, os.path.realpath(e.path))) is None
        or e.type == "directory"
        or allowed(rel)
    ]
    return answer


# ------------------------------------------------------------------ seed 002: scratchpad


class PadWriteParams(Params):
    file_path: PadPath
    content: str = Field(description="at most 1 MB", json_schema_extra=cli_help_only)
    title: str = Field(default="", max_length=500)


def _pad_write(ws: Workspace, a: PadWriteParams) -> ScratchpadWritten:
    from hive.domain.scratchpad import scratchpad_write

    written = scratchpad_write(ws, file_path=a.file_path, content=a.content, title=a.title)
    return ScratchpadWritten.model_validate(written)


class PadReadParams(Params):
    file_path: PadPath


def _pad_read(ws: Workspace, a: PadReadParams) -> str:
    from hive.domain.scratchpad import scratchpad_read

    return scratchpad_read(ws, file_path=a.file_path)


class PadListParams(Params):
    prefix: str | None = Field(default=None, max_length=500)
    limit: int | None = Field(default=20, ge=1, le=100_000, description="null: all")


def _pad_list(ws: Workspace, a: PadListParams) -> ScratchpadListing:
    from hive.domain.scratchpad import scratchpad_list

    found = scratchpad_list(ws, prefix=a.prefix, limit=a.limit)
    return ScratchpadListing.model_validate(found)


class PadClearParams(Params):
    prefix: str | None = Field(default=None, max_length=500, description="default: every entry")


def _pad_clear(ws: Workspace, a: PadClearParams) -> ScratchpadCleared:
    from hive.domain.scratchpad import scratchpad_clear

    return ScratchpadCleared(removed=scratchpad_clear(ws, prefix=a.prefix))


# ------------------------------------------------------------------ seed 002: todos


class Todo(Params):
    content: str = Field(min_length=1, max_length=2000)
    status: Literal["pending", "in_progress", "completed"]
    active_form: str | None = Field(default=None, alias="activeForm", max_length=2000)
    id: str | None = Field(default=None, max_length=200)
    priority: str | None = Field(default=None, max_length=20)


class TodoWriteParams(Params):
    todos: list[Todo] = Field(
        max_length=200, description="the whole list", json_schema_extra=cli_help_only
    )


def todo_words(given: list[str]) -> list[Any]:
    """Todos as typed on the command line: JSON objects, or one JSON list of them."""
    found = [json_or_text(word) for word in given]
    if len(found) == 1 and isinstance(found[0], list):
        return list(found[0])
    return found


def _todo_write(ws: Workspace, a: TodoWriteParams) -> TodoList:
    from hive.domain.scratchpad import todo_write

    todos = [t.model_dump(by_alias=True, exclude_none=True) for t in a.todos]
    return TodoList.model_validate(todo_write(ws, todos=todos))


def _todo_read(ws: Workspace, a: NoParams) -> TodoList:
    from hive.domain.scratchpad import todo_read

    return TodoList.model_validate(todo_read(ws))


class TodoListsParams(Params):
    agent: str | None = Field(default=None, max_length=64, description="only this agent's")


def _todo_lists(ws: Workspace, a: TodoListsParams) -> list[TodoList]:
    from hive.domain.scratchpad import todo_lists, todo_read

    found = [todo_read(ws, agent=a.agent)] if a.agent else todo_lists(ws)
    return [TodoList.model_validate(entry) for entry in found]


# ------------------------------------------------------------------ the operations

PAD_PATH = ("file_path",)
PAD_ERRORS = (InvalidInput,)

declare(
    Operation(
        name="context_search",
        summary="Search hive's history (cells, comments, notes, mail, outcomes).",
        params=SearchParams,
        result=ContextSearchAnswer,
        run=_context_search,
        writes=False,
        errors=(InvalidInput,),
        commands=(
            Command(
                ("search",),
                arguments=("term",),
                short={"limit": ("-n",)},
                defaults={"verbose": True, "limit": 50},
            ),
        ),
        help="Search hive's history (cells, comments, notes, mail you may read, outcomes) for"
        " TERM (case-insensitive), oldest round first. Each line starts with where the match"
        " is: the cell's id, or 'mail #ID' (and its cell) for a message.",
    ),
    Operation(
        name="file_read",
        surfaces=AGENT_ONLY,
        summary="Read a text file in the context directory.",
        params=PathParams,
        result=FileReadAnswer,
        session=_file_read,
        writes=False,
        errors=FILE_ERRORS,
    ),
    Operation(
        name="list_files",
        surfaces=AGENT_ONLY,
        summary="List a directory in the context directory.",
        params=PathParams,
        result=DirListing,
        session=_list_files,
        writes=False,
        errors=FILE_ERRORS,
    ),
    Operation(
        name="scratchpad_write",
        summary="Store shared notes at a path (1 MB each).",
        params=PadWriteParams,
        result=ScratchpadWritten,
        run=_pad_write,
        writes=True,
        errors=PAD_ERRORS,
        commands=(Command(("scratchpad", "write"), arguments=("file_path", "content")),),
        help="Store CONTENT at a scratchpad path ('-' reads standard input).",
    ),
    Operation(
        name="scratchpad_read",
        summary="Read a scratchpad entry.",
        params=PadReadParams,
        result=str,
        run=_pad_read,
        writes=False,
        errors=(InvalidInput, NotFound),
        commands=(Command(("scratchpad", "read"), arguments=PAD_PATH),),
        help=(
            "Print an entry's content (on a terminal, a line break is added after a"
            " content ending without one; --json gives it exactly)."
        ),
    ),
    Operation(
        name="scratchpad_list",
        summary="List scratchpad entries.",
        params=PadListParams,
        result=ScratchpadListing,
        run=_pad_list,
        writes=False,
        commands=(Command(("scratchpad", "list"), arguments=("prefix",), defaults={"limit": 50}),),
        help="Entries with title, size and writer (no content), the first 50 by path"
        " (--limit all for every one).",
    ),
    Operation(
        name="scratchpad_clear",
        surfaces=CLI_ONLY,
        summary="Remove scratchpad entries (under a prefix).",
        params=PadClearParams,
        result=ScratchpadCleared,
        run=_pad_clear,
        writes=True,
        commands=(Command(("scratchpad", "clear"), arguments=("prefix",)),),
        help="Remove entries (all of them without PREFIX).",
    ),
    Operation(
        name="todo_write",
        summary="Replace your todo list.",
        params=TodoWriteParams,
        result=TodoList,
        run=_todo_write,
        writes=True,
        errors=(InvalidInput,),
        parsers={"todos": todo_words},
        commands=(
            Command(
                ("todo", "set"),
                arguments=("todos",),
                help='Replace your (--actor) todo list: a JSON list of {"content", "status"}'
                " objects (or the objects one by one).",
            ),
        ),
    ),
    Operation(
        name="todo_read",
        summary="Your todo list.",
        params=NoParams,
        result=TodoList,
        run=_todo_read,
        writes=False,
        commands=(Command(("todo", "show"), help="Your (--actor) todo list."),),
    ),
    Operation(
        name="todo_lists",
        surfaces=CLI_ONLY,
        summary="Every agent's todo list (or one agent's).",
        params=TodoListsParams,
        result=list[TodoList],
        run=_todo_lists,
        writes=False,
        commands=(Command(("todo", "list")),),
    ),
)
