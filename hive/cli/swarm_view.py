"""Showing a ``hive swarm run`` as it happens.

Three renderers of the same :class:`SwarmEvent` stream: a live rich view on a
terminal (subtasks, workers, reservations, recent messages), one plain line
per event when the output is piped, and one JSON object per line with
``--json``. Each is built only from the events, so what a program reads and
what a person sees are the same facts.
"""

from __future__ import annotations

import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from hive.cli import output
from hive.models.swarm_run import SwarmEvent, SwarmRunResult
from hive.text import counted

if TYPE_CHECKING:
    from rich.table import Table
    from rich.text import Text

STATUS_STYLE = {**output.STATUS_STYLE, "open": "white"}


def json_lines(event: SwarmEvent) -> None:
    """``--json``: one event per line."""
    sys.stdout.write(event.model_dump_json(exclude_none=True) + "\n")
    sys.stdout.flush()


class PlainView:
    """One line per event that matters to a person reading a log."""

    def __init__(self, say: Callable[[str], None] | None = None) -> None:
        self.say = say or output.say

    def __call__(self, event: SwarmEvent) -> None:
        line = describe(event)
        if line:
            self.say(line)


def describe(event: SwarmEvent) -> str | None:
    """A one-line description of ``event`` (None for events only the live view uses)."""
    cell = event.cell_id or ""
    title = f"  {event.title}" if event.title else ""
    kind = event.event
    if kind == "run_started":
        settings = event.settings or {}
        subtasks = counted(len(event.subtasks or []), "subtask")
        workers = counted(int(settings.get("workers") or 0), "worker")
        note = f"\nnote      {event.reason}" if event.reason else ""
        return (
            f"swarm run {event.epic_id}{title}: {subtasks},"
            f" {workers}, {settings.get('isolation')} isolation{note}"
        )
    if kind == "worker_started":
        where = f", worktree {event.worktree}" if event.worktree else ""
        again = f"; {event.reason}" if event.reason else ""
        return f"started   {cell}{title} -> {event.agent} (pid {event.pid}{where}){again}"
    if kind == "completed":
        spent = f" in {event.seconds:.1f}s" if event.seconds else ""
        merged = f", merged {event.branch}" if event.branch else ""
        kept = f"; {event.reason}" if event.reason else ""
        return f"completed {cell}{title} by {event.agent}{spent}{merged}{kept}"
    if kind in ("blocked", "requeued", "skipped", "resumed"):
        log = f" (log: {event.log})" if event.log and kind == "blocked" else ""
        return f"{kind:<9} {cell}: {event.reason}{log}"
    if kind == "message" and event.message:
        return f"message   {event.message.get('from')}: {message_line(event.message)}"
    if kind == "reservations" and event.reservations:
        held = ", ".join(f"{r['agent']}:{r['path']}" for r in event.reservations)
        return f"reserved  {held}"
    if kind == "interrupted":
        return f"stopping  {event.reason}"
    if kind in ("worktree_removed", "worktree_kept"):
        return f"{kind.removeprefix('worktree_'):<9} {event.reason}"
    if kind == "epic_closed":
        return f"closed    epic {cell}{title}: {event.reason}"
    if kind == "epic_open":
        return f"open      epic {cell}{title}: not closed: {event.reason}"
    if kind == "run_finished" and event.totals:
        t = event.totals
        return (
            f"finished  {t['completed']}/{t['subtasks']} subtasks completed, {t['blocked']}"
            f" blocked, {t['remaining']} remaining ({counted(t['workers_run'], 'worker')} ran)"
        )
    return None


def message_line(message: dict[str, Any]) -> str:
    """A message as one short line: its subject and the first line of its body (a
    progress note's time stamp dropped)."""
    body = str(message.get("body") or "").splitlines()
    first = re.sub(r"^\[[^\]]*\]\s*", "", body[0]) if body else ""
    text = f"{message.get('subject')}" + (f" - {first}" if first else "")
    return text[:140]


class LiveView:
    """A rich live display kept up to date from the events (use as a context manager)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.epic = ""
        self.title = ""
        self.settings: dict[str, Any] = {}
        self.subtasks: dict[str, dict[str, Any]] = {}
        self.workers: dict[str, dict[str, Any]] = {}
        self.reservations: list[dict[str, Any]] = []
        self.messages: deque[str] = deque(maxlen=6)
        self.notes: deque[str] = deque(maxlen=4)
        self.live: Any = None

    def __enter__(self) -> LiveView:
        from rich.live import Live

        self.live = Live(get_renderable=self.render, refresh_per_second=4, transient=False)
        self.live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.refresh()
            self.live.__exit__(None, None, None)

    def __call__(self, event: SwarmEvent) -> None:
        with self.lock:
            self._apply(event)

    def _apply(self, event: SwarmEvent) -> None:
        kind, cell = event.event, event.cell_id or ""
        if kind == "run_started":
            self.epic, self.title = event.epic_id or "", event.title or ""
            self.settings = event.settings or {}
            for item in event.subtasks or []:
                self.subtasks[item.id] = {
                    "title": item.title,
                    "status": item.status,
                    "agent": item.assignee,
                    "info": "",
                }
        elif kind == "worker_started":
            self.workers[cell] = {"agent": event.agent, "pid": event.pid, "since": time.time()}
            self._set(cell, status="in_progress", agent=event.agent, info="")
        elif kind == "worker_exited":
            self.workers.pop(cell, None)
        elif kind == "completed":
            self.workers.pop(cell, None)
            self._set(cell, status="closed", info=f"{event.seconds or 0:.1f}s")
            if event.reason:  # a worktree kept for what its worker left uncommitted
                self.notes.append(describe(event) or "")
        elif kind in ("blocked", "requeued", "skipped"):
            self.workers.pop(cell, None)
            status = {"blocked": "blocked", "requeued": "open"}.get(kind)
            self._set(cell, status=status, info=event.reason or "")
            self.notes.append(describe(event) or "")
        elif kind == "cell":
            self._set(cell, status=event.status, agent=event.agent)
        elif kind == "reservations":
            self.reservations = event.reservations or []
        elif kind == "message" and event.message:
            self.messages.append(f"{event.message.get('from')}: {message_line(event.message)}")
        elif kind in (
            "interrupted",
            "resumed",
            "epic_closed",
            "epic_open",
            "worktree_removed",
            "worktree_kept",
        ):
            self.notes.append(describe(event) or "")

    def _set(self, cell: str, **fields: Any) -> None:
        entry = self.subtasks.setdefault(cell, {"title": "", "status": "", "agent": None})
        entry.update({key: value for key, value in fields.items() if value is not None})

    def render(self) -> Any:
        from rich.console import Group

        with self.lock:
            parts: list[Any] = [self._table(), _plain(""), self._progress_line()]
            held = ", ".join(f"{r['agent']} {r['path']}" for r in self.reservations)
            parts.append(_plain(f"reservations: {held or '-'}"))
            parts.append(_plain("messages:" if self.messages else "messages: -"))
            parts += [_plain(f"  {line}", style="cyan") for line in self.messages]
            parts += [_plain(line, style="yellow") for line in self.notes if line]
            return Group(*parts)

    def _table(self) -> Table:
        """The subtasks: id, status, agent, title, and how long it runs (else why it ended)."""
        from rich.table import Table

        table = Table(
            title=_plain(f"{self.epic}  {self.title}"),
            title_justify="left",
            box=None,
            header_style="bold",
            pad_edge=False,
        )
        # a narrow terminal cuts the title and the reason, never an id, a status or a
        # name: rich narrows only the columns that may wrap, and these texts do not
        for column in ("SUBTASK", "STATUS", "AGENT"):
            table.add_column(column, no_wrap=True)
        for column in ("TITLE", ""):
            table.add_column(column)
        for cell, entry in self.subtasks.items():
            style = STATUS_STYLE.get(entry["status"], "white")
            info = entry.get("info") or ""
            if cell in self.workers:
                info = f"running {time.time() - self.workers[cell]['since']:.0f}s"
            table.add_row(
                _plain(cell),
                _plain(entry["status"] or "", style=style),
                _plain(entry.get("agent") or ""),
                _plain(entry["title"] or "", cut=True),
                _plain(info[:80], style="dim", cut=True),
            )
        return table

    def _progress_line(self) -> Text:
        done = sum(1 for e in self.subtasks.values() if e["status"] == "closed")
        return _plain(
            f"{done}/{len(self.subtasks)} done, {len(self.workers)} of"
            f" {self.settings.get('workers', '?')} workers busy"
            f" ({self.settings.get('isolation', '')} isolation) - Ctrl-C stops, run again"
            " to resume",
            style="bold",
        )


def _plain(text: str, style: str = "", *, cut: bool = False) -> Text:
    """Text as it is (never rich markup: titles, names, reasons), each control
    character shown as '?'; ``cut``: one line, ending in '…' when too long."""
    from rich.text import Text

    from hive.text import without_control

    if cut:
        return Text(without_control(text), style=style, no_wrap=True, overflow="ellipsis")
    return Text(without_control(text), style=style)


def summary_lines(result: SwarmRunResult) -> list[str]:
    """What to tell a person when the run is over."""
    lines = [_headline(result)]
    if result.epic_note:
        closed = result.epic_status == "closed"
        lines.append(f"  epic {result.epic_id} {'closed: ' if closed else ''}{result.epic_note}")
    lines += _blocked_lines(result)
    for run in result.runs:
        if run.outside_scope and run.reason:  # another worker's edits may be in its commit
            lines.append(f"  check {run.cell_id}: {run.reason}")
    if result.left_uncommitted:
        lines.append(
            "  left uncommitted in the working tree by this run's workers (the next commit"
            f" that takes them carries them as its own): {', '.join(result.left_uncommitted)};"
            " commit or discard them ('git diff', 'git status')"
        )
    if result.hooks_note:
        lines.append(f"  note: {result.hooks_note}")
    lines += _kept_lines(result)
    if not result.interrupted:
        lines += _not_run_lines(result)
    return lines


def _headline(result: SwarmRunResult) -> str:
    total = len(result.completed) + len(result.blocked) + len(result.remaining)
    return f"{result.epic_id}: {len(result.completed)}/{total} subtasks completed" + (
        " (interrupted: run the same command again to resume)" if result.interrupted else ""
    )


def _blocked_lines(result: SwarmRunResult) -> list[str]:
    """Each blocked subtask and why, then how to run them again."""
    lines = [f"  blocked {cell}: {reason}" for cell, reason in result.blocked.items()]
    if not result.blocked:
        return lines
    # The cells are still their workers' (claimed): reopening them is an override.
    ids = " ".join(result.blocked)
    lines.append("  to retry, fix the cause, reopen and run the same command again:")
    lines.append(f"    hive update {ids} --status open --force --reason 'retry'")
    if result.isolation == "worktree":
        lines.append(
            "  (a subtask resumes in the worktree kept for it, on its branch: remove both"
            " with 'git worktree remove --force PATH' and 'git branch -D BRANCH' to start"
            " it afresh)"
        )
    return lines


def _kept_lines(result: SwarmRunResult) -> list[str]:
    """The worktrees kept for work found nowhere else, and how to remove each."""
    lines = []
    for kept in result.kept_worktrees:
        where = f" on branch {kept.branch}" if kept.branch else ""
        lines.append(
            f"  kept: {kept.why}, {kept.worktree}{where}, holds work found nowhere else:"
            f" {', '.join(kept.files)}"
        )
        lines.append(f"    look at it, then remove it: {kept.command}")
    return lines


def _not_run_lines(result: SwarmRunResult) -> list[str]:
    """The subtasks a finished run left: waiting for blockers, skipped, or others'."""
    lines = []
    for cell, blockers in result.waiting.items():
        needs = ", ".join(f"{b} ({result.blocker_status.get(b, 'open')})" for b in blockers)
        lines.append(f"  not run: {cell} waits for {needs}")
    ran = {r.cell_id for r in result.runs if r.result == "unsettled"}
    for cell, why in result.skipped.items():
        if cell not in result.waiting:
            lines.append(f"  {'ran' if cell in ran else 'not run'}: {cell}: {why}")
    others = [c for c in result.remaining if c not in result.waiting and c not in result.skipped]
    if others:  # e.g. claimed by someone outside the run
        lines.append(f"  not run: {', '.join(others)} (see 'hive show ID')")
    return lines
