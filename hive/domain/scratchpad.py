"""The swarm's scratchpad (seed 002's ``scratchpad_*``) and per-agent todo lists
(``todo_write`` / ``todo_read``), in the local coordination store.

The scratchpad is shared by every agent of the clone: hierarchical paths
(``reports/security/audit``), content with a title, 1 MB per entry and 100 MB in
total (SwarmSDK's limits and messages). It lasts until cleared (``hive scratchpad
clear``), not only for one process. Each agent has one todo list; ``todo_write``
replaces it.
"""

from __future__ import annotations

import json
import time
from typing import Any

from hive.domain.context import state_dir
from hive.domain.limits import check_text
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput, NotFound
from hive.store import coord_db

MAX_ENTRY_SIZE = 1_000_000
MAX_TOTAL_SIZE = 100_000_000
MAX_PATH = 500
MAX_TODOS = 200
MAX_TODO_TEXT = 2000
TODO_STATUSES = ("pending", "in_progress", "completed")


def human_size(size: int) -> str:
    if size >= 1_000_000:
        return f"{size / 1_000_000:.1f}MB"
    if size >= 1000:
        return f"{size / 1000:.1f}KB"
    return f"{size}B"


def _check_path(file_path: Any) -> str:
    if not isinstance(file_path, str) or not file_path.strip():
        raise InvalidInput("file_path is required", field="file_path")
    cleaned = file_path.strip().removeprefix("scratchpad://")
    if len(cleaned) > MAX_PATH or any(ord(c) < 32 for c in cleaned):
        raise InvalidInput(
            f"file_path must be at most {MAX_PATH} printable characters", field="file_path"
        )
    return cleaned


def scratchpad_write(
    ws: Workspace, *, file_path: str, content: str, title: str = ""
) -> dict[str, Any]:
    path = _check_path(file_path)
    size = len(content.encode("utf-8"))
    if size > MAX_ENTRY_SIZE:
        raise InvalidInput(
            f"Content exceeds maximum size ({human_size(MAX_ENTRY_SIZE)}). Current:"
            f" {human_size(size)}",
            field="content",
        )
    now = time.time()
    with coord_db.write(state_dir(ws)) as db:
        total = db.execute("SELECT coalesce(sum(size), 0) FROM scratchpad").fetchone()[0]
        row = db.execute("SELECT size, created_at FROM scratchpad WHERE path = ?", (path,))
        existing = row.fetchone()
        new_total = total - (existing[0] if existing else 0) + size
        if new_total >= MAX_TOTAL_SIZE:
            raise InvalidInput(
                f"Scratchpad full ({human_size(MAX_TOTAL_SIZE)} limit). Current:"
                f" {human_size(total)}, Would be: {human_size(new_total)}. Clear old entries"
                " or use smaller content.",
                field="content",
            )
        db.execute(
            "INSERT INTO scratchpad (path, content, title, size, agent, created_at, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(path) DO UPDATE SET"
            " content = excluded.content, title = excluded.title, size = excluded.size,"
            " agent = excluded.agent, updated_at = excluded.updated_at",
            (path, content, title, size, ws.actor, now, now),
        )
    return {
        "path": f"scratchpad://{path}",
        "file_path": path,
        "title": title,
        "size": size,
        "message": f"Stored at scratchpad://{path} ({human_size(size)})",
    }


def scratchpad_read(ws: Workspace, *, file_path: str) -> str:
    """The entry's content."""
    path = _check_path(file_path)
    with coord_db.read(state_dir(ws)) as db:
        row = db.execute("SELECT content FROM scratchpad WHERE path = ?", (path,)).fetchone()
    if row is None:
        raise NotFound(f"scratchpad://{path} not found (see scratchpad_list)", file_path=path)
    content: str = row[0]
    return content


def scratchpad_list(
    ws: Workspace, *, prefix: str | None = None, limit: int | None = None
) -> dict[str, Any]:
    """Entries (under ``prefix``; the first ``limit`` of them, by path) with title,
    size, last writer, when first written (``created_at``, the seed's) and last
    written; no content. ``count`` and ``total_size`` are of every entry matched."""
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute(
            "SELECT path, title, size, agent, created_at, updated_at FROM scratchpad ORDER BY path"
        ).fetchall()
    wanted = (prefix or "").removeprefix("scratchpad://")
    entries = [
        {
            "file_path": path,  # the seed's name, as scratchpad_read takes it
            "title": title,
            "size": size,
            "agent": agent,
            "created_at": round(created, 3),
            "updated_at": round(updated, 3),
        }
        for path, title, size, agent, created, updated in rows
        if path.startswith(wanted)
    ]
    return {
        "entries": entries if limit is None else entries[:limit],
        "count": len(entries),
        "total_size": sum(e["size"] for e in entries),
    }


def scratchpad_clear(ws: Workspace, *, prefix: str | None = None) -> int:
    """Remove the entries under ``prefix`` (all without one); how many went."""
    wanted = (prefix or "").removeprefix("scratchpad://")
    with coord_db.write(state_dir(ws)) as db:
        paths = [r[0] for r in db.execute("SELECT path FROM scratchpad") if r[0].startswith(wanted)]
        db.executemany("DELETE FROM scratchpad WHERE path = ?", [(p,) for p in paths])
    return len(paths)


# ------------------------------------------------------------------ todo


def _check_todos(todos: Any) -> list[dict[str, Any]]:
    if not isinstance(todos, list):
        raise InvalidInput("todos must be a list", field="todos")
    if len(todos) > MAX_TODOS:
        raise InvalidInput(f"at most {MAX_TODOS} todos", field="todos")
    checked = []
    for number, todo in enumerate(todos):
        where = f"todos.{number}"
        if not isinstance(todo, dict):
            raise InvalidInput(f"{where} must be an object", field=where)
        content = todo.get("content")
        if not isinstance(content, str) or not content.strip() or len(content) > MAX_TODO_TEXT:
            raise InvalidInput(f"{where}.content must be 1-{MAX_TODO_TEXT} characters", field=where)
        if todo.get("status") not in TODO_STATUSES:
            raise InvalidInput(
                f"{where}.status must be one of {', '.join(TODO_STATUSES)}", field=where
            )
        for key in ("content", "activeForm"):  # printed by hive todo list: no escapes
            if isinstance(todo.get(key), str):
                check_text(todo[key], f"{where}.{key}", limit=MAX_TODO_TEXT)
        checked.append({key: value for key, value in todo.items() if value is not None})
    return checked


def _summary(agent: str, todos: list[dict[str, Any]]) -> dict[str, Any]:
    counts = {status: sum(1 for t in todos if t["status"] == status) for status in TODO_STATUSES}
    return {"agent": agent, "todos": todos, **counts}


def todo_write(ws: Workspace, *, todos: list[dict[str, Any]]) -> dict[str, Any]:
    """Replace the calling agent's todo list."""
    checked = _check_todos(todos)
    agent = ws.actor
    with coord_db.write(state_dir(ws)) as db:
        db.execute(
            "INSERT INTO todos (agent, todos, updated_at) VALUES (?, ?, ?) ON CONFLICT(agent)"
            " DO UPDATE SET todos = excluded.todos, updated_at = excluded.updated_at",
            (agent, json.dumps(checked, ensure_ascii=False), time.time()),
        )
    return _summary(agent, checked)


def todo_read(ws: Workspace, *, agent: str | None = None) -> dict[str, Any]:
    """An agent's todo list (the caller's by default)."""
    who = agent or ws.actor
    with coord_db.read(state_dir(ws)) as db:
        row = db.execute("SELECT todos FROM todos WHERE agent = ?", (who,)).fetchone()
    return _summary(who, json.loads(row[0]) if row else [])


def todo_lists(ws: Workspace) -> list[dict[str, Any]]:
    """Every agent's list (for ``hive todo``)."""
    with coord_db.read(state_dir(ws)) as db:
        rows = db.execute("SELECT agent, todos FROM todos ORDER BY agent").fetchall()
    return [_summary(agent, json.loads(todos)) for agent, todos in rows]
