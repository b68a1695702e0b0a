"""Seed 004's debate tools (context_search, file_read, list_files) and seed 002's
scratchpad and todo tools. Registered by ``hive.tools.catalog``."""

from __future__ import annotations

import os
from typing import Any, Literal

from pydantic import Field

from hive.ops.spec import NoParams as NoArgs
from hive.tools.catalog import Args
from hive.tools.registry import CallContext, Tool, path_filter

Path: Any = Field(min_length=1, max_length=4096)


class SearchArgs(Args):
    term: str = Field(min_length=1, max_length=500)


def _context_search(ctx: CallContext, a: SearchArgs) -> Any:
    from hive.domain.debate import context_search

    return context_search(ctx.workspace(), term=a.term)


class PathArgs(Args):
    path: str = Path


def repo_relative(ctx: CallContext, full: str) -> str | None:
    """``full`` relative to the repository, or None when it is outside it."""
    root = os.path.realpath(ctx.root)
    if full != root and not full.startswith(root + os.sep):
        return None
    return os.path.relpath(full, root).replace(os.sep, "/")


def _file_read(ctx: CallContext, a: PathArgs) -> Any:
    from hive.domain.agents import record_read
    from hive.domain.debate import file_read, resolve_in_context

    full = resolve_in_context(ctx.context_root, a.path)
    relative = repo_relative(ctx, full)
    if relative is not None and not path_filter(ctx, "file_read")(relative):
        from hive.domain.governance import PathPermissionDenied

        raise PathPermissionDenied(
            f"file_read may not touch {relative}", path=relative, status="error"
        )
    answer = file_read(ctx.context_root, path=a.path)
    if relative is not None:
        record_read(ctx.workspace(), session=ctx.session_key, agent=ctx.name, path=relative)
    return answer


def _list_files(ctx: CallContext, a: PathArgs) -> Any:
    from hive.domain.debate import list_files

    answer = list_files(ctx.context_root, path=a.path)
    allowed = path_filter(ctx, "list_files")
    entries = answer["result"]["entries"]
    answer["result"]["entries"] = [
        e
        for e in entries
        if (rel := repo_relative(ctx, os.path.realpath(e["path"]))) is None
        or e["type"] == "directory"
        or allowed(rel)
    ]
    return answer


class PadWriteArgs(Args):
    file_path: str = Field(max_length=500)
    content: str
    title: str = Field(default="", max_length=500)


def _pad_write(ctx: CallContext, a: PadWriteArgs) -> Any:
    from hive.domain.scratchpad import scratchpad_write

    return scratchpad_write(
        ctx.workspace(), file_path=a.file_path, content=a.content, title=a.title
    )


class PadReadArgs(Args):
    file_path: str = Field(max_length=500)


def _pad_read(ctx: CallContext, a: PadReadArgs) -> Any:
    from hive.domain.scratchpad import scratchpad_read

    return scratchpad_read(ctx.workspace(), file_path=a.file_path)


class PadListArgs(Args):
    prefix: str | None = Field(default=None, max_length=500)


def _pad_list(ctx: CallContext, a: PadListArgs) -> Any:
    from hive.domain.scratchpad import scratchpad_list

    return scratchpad_list(ctx.workspace(), prefix=a.prefix)


class Todo(Args):
    content: str = Field(min_length=1, max_length=2000)
    status: Literal["pending", "in_progress", "completed"]
    activeForm: str | None = Field(default=None, max_length=2000)
    id: str | None = Field(default=None, max_length=200)
    priority: str | None = Field(default=None, max_length=20)


class TodoWriteArgs(Args):
    todos: list[Todo] = Field(max_length=200)


def _todo_write(ctx: CallContext, a: TodoWriteArgs) -> Any:
    from hive.domain.scratchpad import todo_write

    return todo_write(ctx.workspace(), todos=[t.model_dump() for t in a.todos])


def _todo_read(ctx: CallContext, a: NoArgs) -> Any:
    from hive.domain.scratchpad import todo_read

    return todo_read(ctx.workspace())


TOOLS = [
    Tool(
        "context_search",
        "Search hive's history (cells, notes, mail, outcomes).",
        SearchArgs,
        _context_search,
    ),
    Tool("file_read", "Read a text file in the context directory.", PathArgs, _file_read),
    Tool("list_files", "List a directory in the context directory.", PathArgs, _list_files),
    Tool("scratchpad_write", "Store shared notes at a path (1 MB each).", PadWriteArgs, _pad_write),
    Tool("scratchpad_read", "Read a scratchpad entry.", PadReadArgs, _pad_read),
    Tool("scratchpad_list", "List scratchpad entries.", PadListArgs, _pad_list),
    Tool("todo_write", "Replace your todo list.", TodoWriteArgs, _todo_write),
    Tool("todo_read", "Your todo list.", NoArgs, _todo_read),
]
