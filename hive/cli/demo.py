"""``hive demo``: a real swarm in a scratch repository, end to end, in seconds.

It makes a small Python codebase, plans a task as an epic with dependent
subtasks (strategy, validated decomposition, one commit), runs a swarm of
example agents on it in parallel with ``hive swarm run`` (each worker a real
process that reserves its files, reports progress and finishes with
``swarm_complete`` through hive's tools), then prints the board, the review
diff of one subtask, the newest commits as ``git log --oneline`` prints them
and the strategy insights. ``--keep DIR`` leaves the repository to explore;
``--json`` prints one JSON object per line instead.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from typing import Any

from hive.cli import output
from hive.domain.cells import list_cells
from hive.domain.hooks import install_hook
from hive.domain.identity import mail_init
from hive.domain.setup import init_hive
from hive.domain.swarm.decompose import (
    hive_create_epic,
    swarm_decompose,
    swarm_validate_decomposition,
)
from hive.domain.swarm.learning import insights
from hive.domain.swarm.review import review
from hive.domain.swarm.runner import run_swarm
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.repo import Change, Snapshot, init_repository
from hive.models import Cell
from hive.models.swarm import Review
from hive.models.swarm_run import SwarmEvent, SwarmRunResult

COORDINATOR = "coordinator"
WORKERS = 3
PACE = 0.2  # seconds the example agents wait between steps, so the swarm can be watched
TASK = "Add user accounts: password hashing, sign-up and login endpoints, tests and docs"
PLAN = """The plan, as an LLM planner would answer the prompt:
```json
{"epic": {"title": "Add user accounts",
          "description": "Password hashing, sign-up and login endpoints, tests and docs."},
 "subtasks": [
   {"title": "User model with a password hash", "files": ["app/models.py"], "priority": 0},
   {"title": "Password hashing helpers", "files": ["app/security.py"], "priority": 0},
   {"title": "Sign-up and login endpoints", "files": ["app/api.py"], "dependencies": [0, 1]},
   {"title": "Tests for sign-up and login", "files": ["tests/test_accounts.py"],
    "dependencies": [2]},
   {"title": "Document user accounts", "files": ["docs/accounts.md"]}]}
```"""
REVIEWED = 2  # the subtask whose review diff is shown
LOG_SHOWN = 12  # the newest commits shown, as `git log --oneline` prints them
CODEBASE = {
    "README.md": "# shop\n\nA small web shop.\n",
    "app/__init__.py": '"""The shop application."""\n',
    "app/models.py": "class User:\n    def __init__(self, email: str) -> None:\n"
    "        self.email = email\n",
    "app/api.py": "ROUTES: dict[str, str] = {}\n\n\ndef route(path: str, handler: str) -> None:\n"
    "    ROUTES[path] = handler\n",
    "tests/test_models.py": "from app.models import User\n\n\ndef test_user() -> None:\n"
    '    assert User("a@b.c").email == "a@b.c"\n',
}

Emit = Callable[[str, Any], None]


def run_demo(directory: str | None = None, *, json_mode: bool = False) -> SwarmRunResult:
    """Make the scratch repository, plan, run the swarm, show what it did."""
    root = _scratch_dir(directory)
    emit = _json_emitter() if json_mode else _text_emitter()
    try:
        emit("demo_started", {"repository": root, "kept": directory is not None})
        coordinator = _codebase(root)
        epic, subtasks = _plan(coordinator, emit)
        result = _swarm(coordinator, epic, emit, json_mode)
        _report(coordinator, epic, subtasks, result, emit)
    finally:
        if directory is None:
            shutil.rmtree(root, ignore_errors=True)
    emit("demo_finished", {"repository": root if directory else None, "epic": epic.id})
    return result


# ------------------------------------------------------------------ the steps


def _codebase(root: str) -> Workspace:
    init_repository(root)
    ws = Workspace(root, actor=COORDINATOR, session=f"demo:{COORDINATOR}")

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        changes = [Change(path, text.encode()) for path, text in CODEBASE.items()]
        return changes, "shop: a small codebase\n", None

    ws.write_files(plan)
    init_hive(ws, prefix="demo")
    install_hook(ws)
    mail_init(ws, agent_name=COORDINATOR, task_description="the demo")
    return ws


def _plan(ws: Workspace, emit: Emit) -> tuple[Cell, list[Cell]]:
    prompt = swarm_decompose(ws, task=TASK, query_cass=False)
    checked = swarm_validate_decomposition(ws, response=PLAN)
    if checked.data is None:
        raise InvalidInput("the demo's decomposition did not validate")
    cells = hive_create_epic(
        ws,
        epic_title=str(checked.data.epic["title"]),
        epic_description=str(checked.data.epic.get("description", "")),
        subtasks=checked.data.subtasks,
        strategy=prompt.strategy.strategy,
    )
    epic, subtasks = cells[0], cells[1:]
    emit(
        "planned",
        {
            "task": TASK,
            "strategy": prompt.strategy.strategy,
            "prompt_lines": len(prompt.prompt.splitlines()),
            "valid": checked.valid,
            "epic": epic,
            "subtasks": subtasks,
        },
    )
    return epic, subtasks


def _swarm(ws: Workspace, epic: Cell, emit: Emit, json_mode: bool) -> SwarmRunResult:
    agent = f"{shlex.quote(sys.executable)} -m hive.agents.example --pace {PACE} {{prompt_file}}"
    shown = f"python -m hive.agents.example --pace {PACE} {{prompt_file}}"
    emit(
        "swarm", {"command": f"hive swarm run {epic.id} --agent-cmd '{shown}' --workers {WORKERS}"}
    )
    from hive.cli import swarm_view

    def run(view: Callable[[SwarmEvent], None]) -> SwarmRunResult:
        return run_swarm(ws, epic_id=epic.id, agent_cmd=agent, workers=WORKERS, on_event=view)

    if json_mode:
        return run(swarm_view.json_lines)
    if sys.stdout.isatty():
        with swarm_view.LiveView() as live:
            return run(live)
    return run(swarm_view.PlainView())


def _report(
    ws: Workspace, epic: Cell, subtasks: list[Cell], result: SwarmRunResult, emit: Emit
) -> None:
    board = [*list_cells(ws, parent=epic.id, status="all"), *list_cells(ws, type="epic")]
    emit("board", {"cells": board, "result": result})
    emit("review", review(ws, target=subtasks[REVIEWED].id, with_patch=True))
    emit("log", _git_log(ws))
    emit("insights", insights(ws))


def _git_log(ws: Workspace) -> dict[str, Any]:
    """The branch's commits, newest first (the newest LOG_SHOWN of them) and how many."""
    commits = list(ws.git.iter_commits())
    shown = [{"commit": c.sha, "subject": c.subject} for c in commits[:LOG_SHOWN]]
    return {"commits": shown, "total": len(commits)}


# ------------------------------------------------------------------ output


def _json_emitter() -> Emit:
    from hive.cli.output import json_line

    def emit(kind: str, value: Any) -> None:
        data = value.model_dump(mode="json") if hasattr(value, "model_dump") else value
        sys.stdout.buffer.write(json_line({"event": kind, **data}))
        sys.stdout.flush()

    return emit


def _text_emitter() -> Emit:
    from hive.cli import swarm_view
    from hive.cli.swarm_cmd import render_insights, render_review

    def emit(kind: str, value: Any) -> None:
        if kind == "demo_started":
            output.heading("hive demo: a swarm of example agents")
            output.say(f"scratch repository: {value['repository']} (a small Python codebase)")
        elif kind == "planned":
            output.heading("the coordinator plans")
            output.say(f"task: {value['task']}")
            output.say(
                f"strategy {value['strategy']}; planning prompt of {value['prompt_lines']} lines"
                f" for an LLM; its answer validated: {value['valid']}"
            )
            output.say(
                f"epic {value['epic'].id} with {len(value['subtasks'])} subtasks in one commit"
                " (files owned and dependencies kept)"
            )
        elif kind == "swarm":
            output.heading("the swarm runs")
            output.say(f"$ {value['command']}")
        elif kind == "board":
            output.heading("the board")
            output.cell_table(value["cells"])
            for line in swarm_view.summary_lines(value["result"]):
                output.say(line)
        elif kind == "review":
            output.heading(f"hive review {value.target}  (the code; hive's own files elided)")
            render_review(_code_only(value), per="commit")
        elif kind == "log":
            output.heading("git log --oneline")
            for commit in value["commits"]:
                output.say(f"{commit['commit'][:7]} {commit['subject']}")
            if value["total"] > len(value["commits"]):
                output.say(f"... and {value['total'] - len(value['commits'])} older commits")
        elif kind == "insights":
            output.heading("hive swarm insights")
            render_insights(value)
        elif kind == "demo_finished":
            where = value["repository"]
            if where:
                output.say(
                    f"\nexplore it: cd {where} && hive review {value['epic']}"
                    " && git log --graph --oneline"
                )
            else:
                output.say("\n(the scratch repository was removed; keep one with --keep DIR)")

    return emit


def _code_only(seen: Review) -> Review:
    """The review with patches cut down to the code (not .hive/ records)."""
    commits = []
    for commit in seen.commits:
        blocks = re.split(r"(?m)^(?=diff --git )", commit.patch)
        kept = "".join(b for b in blocks if b.startswith("diff --git a/") and " b/.hive/" not in b)
        commits.append(commit.model_copy(update={"patch": kept}))
    return seen.model_copy(update={"commits": commits})


def _scratch_dir(directory: str | None) -> str:
    """A new temporary directory, or ``directory`` if it is new or empty."""
    if directory is None:
        return tempfile.mkdtemp(prefix="hive-demo-")
    root = os.path.abspath(os.path.expanduser(directory))
    if os.path.exists(root) and (not os.path.isdir(root) or os.listdir(root)):
        raise InvalidInput(f"--keep {directory}: not an empty directory; give a new or empty one")
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--keep {directory}: cannot create it ({exc.strerror})") from None
    return root
