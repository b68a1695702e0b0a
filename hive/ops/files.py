"""The repository file tools, described once: list, read, search and propose writes
inside the repository, within the permission rules that apply to the caller.
For agents only (a person has a shell), so no CLI commands."""

from __future__ import annotations

import os
from typing import Annotated

from pydantic import Field

from hive.domain import files
from hive.errors import InvalidInput, NotFound, PermissionDenied
from hive.models.files import FileContent, FileListing, SearchResult, WriteProposal
from hive.ops.spec import AGENT_ONLY, REPO_PATH, Caller, Operation, Params, cli_help_only, declare

ACCESS_ERRORS = (NotFound, InvalidInput, PermissionDenied)
Dir = Annotated[str, Field(max_length=4096), REPO_PATH]
FilePath = Annotated[str, Field(min_length=1, max_length=4096), REPO_PATH]


class ListParams(Params):
    dir: Dir = "."
    pattern: str | None = Field(
        default=None, max_length=1000, description="glob, or regex (regex:RE, or anchored ^ or $)"
    )
    max_results: int = Field(default=200, ge=1, le=5000)


class ReadParams(Params):
    path: FilePath
    max_bytes: int = Field(default=50_000, ge=1, le=files.MAX_READ)


class SearchParams(Params):
    pattern: str = Field(
        min_length=1, max_length=1000, description="regex", json_schema_extra=cli_help_only
    )
    dir: Dir = "."
    max_matches: int = Field(default=200, ge=1, le=5000)


class WriteParams(Params):
    path: FilePath
    content: str = Field(max_length=files.MAX_WRITE)
    create_dirs: bool = True


def _fs_list(caller: Caller, a: ListParams) -> FileListing:
    found = files.fs_list(
        caller.root,
        dir=a.dir,
        pattern=a.pattern,
        max_results=a.max_results,
        allow=caller.allows("fs_list"),
    )
    return FileListing.model_validate(found)


def _fs_read(caller: Caller, a: ReadParams) -> FileContent:
    from hive.domain.agents import record_read

    answer = FileContent.model_validate(
        files.fs_read(caller.root, path=a.path, max_bytes=a.max_bytes)
    )
    if not answer.truncated:  # a read cut short does not count for read-before-write
        ws = caller.workspace()
        record_read(ws, session=caller.session_key, agent=caller.name, path=answer.path)
    return answer


def _search(caller: Caller, a: SearchParams) -> SearchResult:
    found = files.search_text(
        caller.root,
        pattern=a.pattern,
        dir=a.dir,
        max_matches=a.max_matches,
        allow=caller.allows("search_text"),
    )
    return SearchResult.model_validate(found)


def _fs_write(caller: Caller, a: WriteParams) -> WriteProposal:
    from hive.domain.agents import check_read_before_write

    ws = caller.workspace()
    if caller.reads_before_writes():
        full, relative = files.resolve(caller.root, a.path)
        check_read_before_write(
            ws,
            session=caller.session_key,
            agent=caller.name,
            path=relative,
            size=os.path.getsize(full) if os.path.isfile(full) else None,
        )
    proposed = files.propose_write(
        caller.root,
        ws.git.paths.hive_state_dir,
        agent=caller.name,
        path=a.path,
        content=a.content,
        create_dirs=a.create_dirs,
    )
    return WriteProposal.model_validate(proposed)


def _path(a: ReadParams | WriteParams) -> list[str]:
    return [a.path]


def _dir(a: ListParams | SearchParams) -> list[str]:
    return [a.dir]


declare(
    Operation(
        name="fs_list",
        surfaces=AGENT_ONLY,
        summary="List files in the repository.",
        params=ListParams,
        result=FileListing,
        session=_fs_list,
        writes=False,
        errors=ACCESS_ERRORS,
        dirs=_dir,
    ),
    Operation(
        name="fs_read",
        surfaces=AGENT_ONLY,
        summary="Read a file in the repository.",
        params=ReadParams,
        result=FileContent,
        session=_fs_read,
        writes=False,
        errors=ACCESS_ERRORS,
        paths=_path,
    ),
    Operation(
        name="search_text",
        surfaces=AGENT_ONLY,
        summary="Regex search across repository files.",
        params=SearchParams,
        result=SearchResult,
        session=_search,
        writes=False,
        errors=ACCESS_ERRORS,
        dirs=_dir,
    ),
    Operation(
        name="fs_write",
        surfaces=AGENT_ONLY,
        summary="Propose a file write (applied after arbiter approval).",
        params=WriteParams,
        result=WriteProposal,
        session=_fs_write,
        writes=True,
        errors=ACCESS_ERRORS,
        paths=_path,
    ),
)
