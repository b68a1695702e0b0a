"""``hive swarm run``: run the ready subtasks of an epic with any agent program.

For every ready subtask (its blockers closed), up to ``workers`` at once, the
runner registers an agent, claims the subtask for it (the worker's log linked
from the cell), writes the subtask's brief (``swarm_subtask_prompt``) to a
file and starts the agent command in its own process group with the agent's
identity in its environment (:func:`worker_environment`); one of hive's own
Python agents on this interpreter is forked instead of started by the shell
(``forked.py``: the same kind of process, without a new interpreter). With ``worktree``
isolation each worker gets its own git worktree and branch, merged back when
it completes; with ``reservation`` isolation all workers share the working
tree and keep out of each other's files by reserving them.

When a worker exits, its subtask is either closed (it called
``swarm_complete``; with worktrees, its branch is then merged in one commit,
or the cell is blocked naming the conflicting files and nothing is merged) or
blocked with the reason (exit code, signal, timeout, no ``swarm_complete``),
the agent's reservations released and a failure outcome recorded, in one
commit. Output stays in the log file.

Stopping (the caller sets ``stop``, e.g. on Ctrl-C) terminates the workers'
process groups and puts their subtasks back to open, so running again resumes;
a run that was killed outright is recovered the same way by the next run (the
epic's run lock tells a dead runner from a live one).

Nothing here prints: progress is reported as :class:`SwarmEvent` objects to
``on_event``, and the result is a :class:`SwarmRunResult`.
"""

from __future__ import annotations

import contextlib
import difflib
import fnmatch
import json
import os
import re
import secrets
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from hive.domain.cells import close_cells, get_cell
from hive.domain.graph import open_blockers, ready_cells
from hive.domain.hooks import missing_hooks
from hive.domain.identity import holding_session, issue_credential, register_agent
from hive.domain.mail import append_registration, thread_messages
from hive.domain.outcomes import load_outcomes
from hive.domain.reservations import list_reservations, release
from hive.domain.swarm.dispatch import (
    RUNNER,
    block_subtask,
    claim_for_worker,
    merge_subtask,
    refresh_kept_branch,
    release_worker,
    requeue_subtask,
    run_info,
    uncommitted_in_scope,
)
from hive.domain.swarm.forked import ForkedWorker, forkable, start_forked
from hive.domain.swarm.prompts import swarm_subtask_prompt
from hive.domain.swarm.verify import swarm_settings
from hive.domain.workspace import Workspace
from hive.errors import Conflict, HiveError, InvalidInput, NotOwner
from hive.git.merge import (
    add_worktree,
    branch_changes,
    delete_branch,
    ignored_files,
    remove_worktree,
    unique_work,
    worktree_changes,
)
from hive.git.refs import HeadRef
from hive.git.repo import Snapshot
from hive.models import Cell
from hive.models.swarm_run import (
    ISOLATIONS,
    KeptWorktree,
    SubtaskState,
    SwarmEvent,
    SwarmRunResult,
    WorkerResult,
    WorkerRun,
)
from hive.store.cache import CellIndex
from hive.store.layout import HIVE_DIR
from hive.text import shell_word
from hive.times import format_time

DEFAULT_WORKERS = 3
MAX_WORKERS = 64
DEFAULT_TIMEOUT = 1800.0
STOP_GRACE = 5.0  # seconds between SIGTERM and SIGKILL
OBSERVE_EVERY = 0.5  # seconds between looks at cells, reservations and mail
MESSAGES_SEEN = 20  # the latest messages on the epic's thread looked at each time
PLACEHOLDERS = ("prompt_file", "cell", "agent", "epic", "project")
UNCHECKED = "(not checked: "  # a worktree whose state could not be read
KEPT_STATES = ("requeued", "blocked")  # a subtask put back so: it resumes in its worktree
# What git ignores in a worker's worktree and may be lost with it: build outputs and
# caches, which the tools make again (a path with a part matching one of these). Any
# other file git ignores there (a .env, notes) keeps the worktree, named with IGNORED.
DISPOSABLE = (
    "__pycache__",
    "*.py[cod]",
    "*.egg-info",
    ".eggs",
    ".pytest_cache",
    ".mypy_cache",
    ".ruff_cache",
    ".hypothesis",
    ".tox",
    ".nox",
    ".coverage",
    "htmlcov",
    ".venv",
    "node_modules",
    ".next",
    ".turbo",
    ".parcel-cache",
    ".gradle",
    "build",
    "dist",
    "target",
    "*.o",
    "*.so",
    "*.class",
    ".DS_Store",
)
IGNORED = " (ignored by git)"

EventSink = Callable[[SwarmEvent], None]


def worker_environment(
    *,
    agent: str,
    cell_id: str,
    epic_id: str,
    project: str,
    prompt_file: str,
    session: str,
    log: str,
    token: str | None = None,
    base: dict[str, str] | None = None,
) -> dict[str, str]:
    """Everything a worker process gets in its environment (the one place to add to).

    ``HIVE_AGENT`` is its identity, ``HIVE_AGENT_TOKEN`` the credential that proves
    it (when registration issued one), ``HIVE_CELL`` its subtask, ``HIVE_PROJECT``
    the directory to work in (its worktree, with worktree isolation). ``hive`` is
    on ``PATH``, and ``HIVE_BYPASS`` is removed so the pre-commit hook applies.
    """
    env = dict(os.environ if base is None else base)
    for key in ("HIVE_BYPASS", "HIVE_AGENT_TOKEN", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        env.pop(key, None)
    env.update(
        HIVE_AGENT=agent,
        HIVE_CELL=cell_id,
        HIVE_EPIC=epic_id,
        HIVE_PROJECT=project,
        HIVE_PROMPT_FILE=prompt_file,
        HIVE_SESSION=session,
        HIVE_LOG=log,
    )
    if token:
        env["HIVE_AGENT_TOKEN"] = token
    tools = os.path.dirname(sys.executable)
    env["PATH"] = os.pathsep.join([tools, env.get("PATH", os.defpath)])
    return env


# In an agent command: ${VAR} (the shell's, left alone), {{word}} (a literal {word}),
# {word} (a placeholder).
_BRACES = re.compile(r"\$\{[^}]*\}|\{\{(\w+)\}\}|\{([A-Za-z_]\w*)\}")


def unknown_placeholders(template: str) -> list[str]:
    """The ``{word}`` placeholders of ``template`` that the runner does not fill."""
    found = (match.group(2) for match in _BRACES.finditer(template))
    return list(dict.fromkeys(name for name in found if name and name not in PLACEHOLDERS))


def check_command(template: str) -> None:
    """Refuse an agent command with a placeholder the runner does not know (before
    anything runs), naming it and the ones it knows."""
    unknown = unknown_placeholders(template)
    if not unknown:
        return
    named = ", ".join("{" + name + "}" for name in unknown)
    guesses = [
        "{" + close[0] + "}"
        for name in unknown
        for close in [difflib.get_close_matches(name, PLACEHOLDERS, n=1)]
        if close
    ]
    hint = f" (did you mean {', '.join(guesses)}?)" if guesses else ""
    known = ", ".join("{" + name + "}" for name in PLACEHOLDERS)
    raise InvalidInput(
        f"--agent-cmd has an unknown placeholder{'s' * (len(unknown) > 1)} {named}{hint}:"
        f" the placeholders are {known};"
        " write {{word}} for a literal {word} (${VAR} is the shell's and left alone)",
        unknown=unknown,
        placeholders=list(PLACEHOLDERS),
    )


def expand_command(template: str, values: dict[str, str]) -> str:
    """``template`` with each ``{placeholder}`` replaced by its shell-quoted value,
    ``{{word}}`` by ``{word}``; ``${VAR}`` and other braces are left as they are."""

    def expand(match: re.Match[str]) -> str:
        literal, name = match.group(1), match.group(2)
        if literal is not None:
            return "{" + literal + "}"
        if name is not None and name in values:
            return shlex.quote(values[name])
        return match.group(0)

    return _BRACES.sub(expand, template)


@dataclass
class RunSettings:
    """The options of one run."""

    epic_id: str
    agent_cmd: str
    workers: int = DEFAULT_WORKERS
    isolation: str = "reservation"
    timeout: float = DEFAULT_TIMEOUT
    grace: float = STOP_GRACE
    poll: float = 0.1
    close_epic: bool = True

    def check(self) -> None:
        if not self.agent_cmd.strip():
            raise InvalidInput("--agent-cmd is empty: give the command that runs one agent")
        check_command(self.agent_cmd)
        if not 1 <= self.workers <= MAX_WORKERS:
            raise InvalidInput(f"--workers must be between 1 and {MAX_WORKERS}")
        if self.isolation not in ISOLATIONS:
            raise InvalidInput(
                f"invalid isolation {self.isolation!r}: use {' or '.join(ISOLATIONS)}"
            )
        if not self.timeout > 0:
            raise InvalidInput("--timeout must be a positive number of seconds")


@dataclass
class _Job:
    """A subtask given to an agent: where its log is, where it works."""

    cell_id: str
    agent: str
    log: str
    worktree: str | None = None
    branch: str | None = None
    alongside: set[str] = field(default_factory=set)  # agents of workers running meanwhile


@dataclass
class _Worker:
    """A running worker process."""

    job: _Job
    process: subprocess.Popen[bytes] | ForkedWorker
    log_handle: IO[bytes]
    started: float
    prompt_file: str
    log_start: int = 0  # where the worker's own output begins in its log
    stop_sent: float | None = None
    killed: bool = False
    timed_out: bool = False
    interrupted: bool = False


def run_swarm(
    ws: Workspace,
    *,
    epic_id: str,
    agent_cmd: str,
    workers: int = DEFAULT_WORKERS,
    isolation: str = "reservation",
    timeout: float = DEFAULT_TIMEOUT,
    on_event: EventSink | None = None,
    stop: threading.Event | None = None,
    grace: float = STOP_GRACE,
    close_epic: bool = True,
) -> SwarmRunResult:
    """Run the epic's subtasks with ``agent_cmd`` until nothing more can run (or ``stop``).

    When every subtask is closed at the end (and the run was not stopped), the epic is
    closed too, in one commit of its own with the run's summary as its reason, unless
    ``close_epic`` is False."""
    settings = RunSettings(
        epic_id, agent_cmd, workers, isolation, timeout, grace, close_epic=close_epic
    )
    settings.check()
    if not ws.autocommit:
        raise InvalidInput("hive swarm run commits as it goes: unset HIVE_AUTOCOMMIT=0")
    epic = get_cell(ws.cells(), epic_id)
    if epic.type != "epic" and not ws.cells().children_of(epic.id):
        raise InvalidInput(f"{epic.id} is not an epic and has no subtasks")
    settings.epic_id = epic.id
    runner = _Runner(ws, settings, epic, on_event or (lambda event: None), stop)
    with _run_lock(ws, epic.id):
        return runner.run()


@contextlib.contextmanager
def _run_lock(ws: Workspace, epic_id: str) -> Any:
    """One runner per epic at a time (the OS releases the lock if the runner dies)."""
    from filelock import FileLock, Timeout

    directory = run_directory(ws, epic_id)
    lock = FileLock(os.path.join(directory, "run.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise Conflict(
            f"another 'hive swarm run' is already working on {epic_id}; wait for it or stop it"
        ) from None
    try:
        yield
    finally:
        lock.release()


def run_directory(ws: Workspace, epic_id: str) -> str:
    """Where a run keeps prompts, logs and worktrees: under the git directory, never
    committed, shared by every worktree of the repository."""
    path = os.path.join(ws.git.paths.hive_state_dir, "swarm", epic_id)
    for sub in ("logs", "prompts", "worktrees"):
        os.makedirs(os.path.join(path, sub), exist_ok=True)
    return path


class _Runner:
    """The loop of one run: dispatch, watch, settle, observe."""

    def __init__(
        self,
        ws: Workspace,
        settings: RunSettings,
        epic: Cell,
        emit: EventSink,
        stop: threading.Event | None,
    ) -> None:
        self.ws = ws
        self.settings = settings
        self.epic = epic
        self.emit = emit
        self.stop = stop or threading.Event()
        self.directory = run_directory(ws, epic.id)
        self.running: dict[str, _Worker] = {}
        self.tokens: dict[str, str] = {}  # agent -> the credential issued for its worker
        self.runs: list[WorkerRun] = []
        self.skipped: dict[str, str] = {}  # could not be dispatched this run -> why
        self.stopping = False
        self.seen: dict[str, tuple[str, str | None]] = {}
        self.seen_reservations: list[dict[str, Any]] | None = None
        self.seen_messages: set[int] = set()
        self.last_observed = 0.0
        self.dirty_before: dict[str, str | None] | None = None  # shared tree, at the start
        self.hooks_missing = missing_hooks(ws)
        self.disposable = (*DISPOSABLE, *swarm_settings(ws).disposable)

    # ------------------------------------------------------------ the loop

    def run(self) -> SwarmRunResult:
        self._register_coordinator()
        self._skip_earlier_messages()
        index = self.ws.cells()
        self._event(
            "run_started",
            title=self.epic.title,
            settings={
                "agent_cmd": self.settings.agent_cmd,
                "workers": self.settings.workers,
                "isolation": self.settings.isolation,
                "timeout": self.settings.timeout,
                "directory": self.directory,
            },
            subtasks=[self._state(c, index) for c in self._subtasks(index)],
            reason=_hooks_note(self.hooks_missing),
        )
        if self.settings.isolation == "reservation":
            self.dirty_before = self._dirty()
        try:
            self._recover()
            self._loop()
        finally:
            self._abandon()
        self._observe(force=True)
        return self._finish()

    def _loop(self) -> None:
        while True:
            if self.stop.is_set() and not self.stopping:
                self._begin_stop()
            self._reap()
            self._enforce_deadlines()
            if not self.stopping:
                self._dispatch()
            if not self.running and (self.stopping or not self._can_dispatch()):
                return
            self._observe()
            time.sleep(self.settings.poll)

    def _abandon(self) -> None:
        """On an unexpected error: kill what still runs. Its subtasks stay claimed and
        the next run recovers them, as after a killed runner."""
        for worker in self.running.values():
            self._signal(worker, signal.SIGKILL)
            with contextlib.suppress(OSError, subprocess.TimeoutExpired):
                worker.process.wait(timeout=5)
            worker.log_handle.close()
        self.running.clear()

    def _event(self, kind: str, **fields: Any) -> None:
        event = SwarmEvent.model_validate({"event": kind, "epic_id": self.epic.id, **fields})
        with contextlib.suppress(Exception):  # a broken display never breaks the run
            self.emit(event)

    def _register_coordinator(self) -> None:
        """Progress reports go to the epic's coordinator: make sure it can receive them."""
        name = self.epic.assignee or self.epic.created_by or self.ws.actor
        with contextlib.suppress(HiveError):  # a mail address only: no credential is issued
            append_registration(self.ws, name=name, session=self.ws.session, task="coordinator")

    # ------------------------------------------------------------ subtasks

    def _subtasks(self, index: CellIndex) -> list[Cell]:
        """Every live, non-epic descendant of the epic."""
        found: list[Cell] = []
        pending = [self.epic.id]
        while pending:
            for child_id in index.children_of(pending.pop(0)):
                child = index.cells.get(child_id)
                if child is None or child.is_deleted:
                    continue
                pending.append(child_id)
                if child.type != "epic":
                    found.append(child)
        return found

    def _state(self, cell: Cell, index: CellIndex) -> SubtaskState:
        return SubtaskState(
            id=cell.id,
            title=cell.title,
            status=cell.status,
            assignee=cell.assignee,
            blockers=open_blockers(cell, index),
        )

    def _ready(self) -> list[Cell]:
        """The epic's ready subtasks this run may start now: not running, not skipped,
        not assigned to the agent of a running worker (its credential is re-issued for
        each worker, which would cut off the one running: it waits its turn), and not
        waiting on a blocker whose worker is still running: a worker closes its cell
        with swarm_complete before it exits, and its subtask is settled (merged, its
        leftover reservations released, `completed` told) only once it has, so its
        dependents start after that, never before it is told."""
        index = self.ws.cells()
        family = {cell.id for cell in self._subtasks(index)}
        busy = {worker.job.agent for worker in self.running.values()}
        return [
            cell
            for cell in ready_cells(index)
            if cell.id in family
            and cell.id not in self.running
            and cell.id not in self.skipped
            and cell.assignee not in busy
            and not any(
                dep.type == "blocks" and dep.target in self.running for dep in cell.dependencies
            )
        ]

    def _can_dispatch(self) -> bool:
        return bool(self._ready())

    # ------------------------------------------------------------ starting workers

    def _dispatch(self) -> None:
        while len(self.running) < self.settings.workers:
            ready = self._ready()
            if not ready:
                return
            self._start(ready[0])

    def _start(self, cell: Cell) -> None:
        session = f"{self._worker_sessions(cell)}{secrets.token_hex(3)}"
        try:
            agent = self._agent_for(cell, session)
            log = self._new_file("logs", f"{cell.id}.{agent}", ".log")
            worktree, branch = self._worktree_names(cell)
            claimed = claim_for_worker(
                self.ws, cell_id=cell.id, agent=agent, log=log, worktree=worktree, branch=branch
            )
        except HiveError as exc:
            self.skipped[cell.id] = exc.message
            self._event(
                "skipped", cell_id=cell.id, title=cell.title, reason=exc.message, status=cell.status
            )
            return
        earlier = _earlier_attempt(cell)
        try:
            worker = self._launch(claimed, agent, session, log, worktree, branch, earlier)
        except (HiveError, OSError) as exc:
            reason = exc.message if isinstance(exc, HiveError) else f"could not start: {exc}"
            self._block(
                _Job(claimed.id, agent, log, worktree, branch), reason, exit_code=None, seconds=0.0
            )
            return
        for other in self.running.values():  # who shares the working tree with whom
            other.job.alongside.add(agent)
            worker.job.alongside.add(other.job.agent)
        self.running[cell.id] = worker
        self._save_state()  # before anyone hears of it: a killed runner's workers are found
        self._event(
            "worker_started",
            cell_id=cell.id,
            title=cell.title,
            agent=agent,
            pid=worker.process.pid,
            log=log,
            prompt_file=worker.prompt_file,
            worktree=worktree,
            branch=branch,
            reason=_again(cell) if earlier else None,
        )

    def _agent_for(self, cell: Cell, session: str) -> str:
        """The cell's assignee, else the agent an earlier run's worker was when it put
        the subtask back (:meth:`_resumable_agent`), else a new registered name
        (``BlueLake``); with a fresh credential the worker gets as ``HIVE_AGENT_TOKEN``
        (the credential of a name registered before is re-issued, which only a person
        or a coordinator may do)."""
        task = f"{cell.id} {cell.title}"[:2000]
        earlier = cell.assignee or self._resumable_agent(cell)
        if earlier:
            try:
                issued = issue_credential(
                    self.ws,
                    name=earlier,
                    task=task,
                    replace=True,
                    session=session,
                    successor_of=self._worker_sessions(cell),
                )
            except NotOwner as exc:
                if cell.assignee:
                    raise NotOwner(self._cannot_reissue(earlier), agent=earlier) from exc
                # Not the runner's to re-issue: the requeued subtask goes to a new name
                # (as before it was resumable), the earlier one left as it is.
            else:
                self.tokens[issued.name] = issued.token
                return issued.name
        registered = register_agent(self.ws, task=task, session=session)
        if registered.token:
            self.tokens[registered.name] = registered.token
        return registered.name

    def _resumable_agent(self, cell: Cell) -> str | None:
        """The agent whose worker a stop (Ctrl-C, a killed runner) took ``cell`` from,
        when the subtask resumes as that agent: its mail, its name on the cell's history
        and outcomes stay one identity instead of a new name per attempt. Only when that
        is safe, since re-issuing a credential cuts off whoever holds it: the name must
        still be live (a retired one was retired on purpose), its credential still held
        by a worker session this runner started for this very subtask (a name someone
        registered or took back since is theirs), and no worker of this run be it."""
        info = run_info(cell)
        name = info.get("agent")
        if info.get("state") != "requeued" or not isinstance(name, str) or not name:
            return None
        if any(worker.job.agent == name for worker in self.running.values()):
            return None
        holder = holding_session(self.ws, name)
        if holder is None or not holder.startswith(self._worker_sessions(cell)):
            return None
        return name

    def _worker_sessions(self, cell: Cell) -> str:
        """What the session of every worker a run starts for ``cell`` begins with: a
        credential such a session holds is the runner's own worker's, and re-issuing it
        to the next worker of the subtask overrides nobody (not so one held by anyone
        else, which stays an override, recorded)."""
        return f"swarm:{self.epic.id}:{cell.id}:"

    def _cannot_reissue(self, agent: str) -> str:
        """Why a subtask assigned to ``agent`` cannot be run by this runner, and what to
        do: re-issuing an agent's credential is a person's or a coordinator's act."""
        return (
            f"it is assigned to {agent}, whose credential only a person or a coordinator"
            f" may re-issue for its worker (this run acts as agent {self.ws.actor}): run"
            " 'hive swarm run' again as a person (without HIVE_AGENT_TOKEN), or as an agent"
            " listed under coordinators: in .hive/config.yaml"
        )

    def _new_file(self, sub: str, stem: str, suffix: str) -> str:
        """A path in the run directory that no earlier attempt used."""
        safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in stem)
        path = os.path.join(self.directory, sub, safe + suffix)
        number = 2
        while os.path.exists(path):
            path = os.path.join(self.directory, sub, f"{safe}.{number}{suffix}")
            number += 1
        return path

    def _worktree_names(self, cell: Cell) -> tuple[str | None, str | None]:
        if self.settings.isolation != "worktree":
            return None, None
        kept = self._kept_worktree(cell)
        if kept is not None:
            return kept
        path = self._new_file("worktrees", cell.id, "")
        suffix = os.path.basename(path)[len(cell.id) :]
        branch = f"hive/{cell.id}{suffix.replace('.', '-')}"
        number = 2
        while self.ws.git.ref_value(f"refs/heads/{branch}") is not None:
            branch = f"hive/{cell.id}-{number}"
            number += 1
        return path, branch

    def _kept_worktree(self, cell: Cell) -> tuple[str, str] | None:
        """The worktree and branch an earlier run kept for ``cell`` when it put it back
        (stopped with work in it) or blocked it (its worker failed, or its branch did not
        merge) and someone reopened it, when both are still there and the worktree is
        still on the branch: the subtask resumes there, so a retry finds what the failed
        attempt did. Only a worktree of this epic's run directory: the cell's metadata is
        anyone's to edit."""
        info = run_info(cell)
        worktree, branch = info.get("worktree"), info.get("branch")
        if info.get("state") not in KEPT_STATES or not isinstance(worktree, str):
            return None
        if not isinstance(branch, str) or not os.path.isdir(worktree):
            return None
        home = os.path.realpath(os.path.join(self.directory, "worktrees"))
        if os.path.dirname(os.path.realpath(worktree)) != home:
            return None
        try:
            on = Workspace(worktree).git.head().ref
        except (HiveError, OSError):
            return None
        return (worktree, branch) if on == f"refs/heads/{branch}" else None

    def _refresh_kept(self, cell: Cell, agent: str, worktree: str, branch: str) -> None:
        """Bring the current branch (the claim, what landed meanwhile) into the kept
        worktree's branch before the subtask resumes there; a conflict is the launch's
        failure (the cell is blocked naming the files, the worktree kept as it is)."""
        head = self.ws.git.head().commit
        if head is None:
            raise InvalidInput("the repository has no commit to resume from")
        kept = Workspace(worktree, actor=self.ws.actor)
        merged = refresh_kept_branch(kept, cell_id=cell.id, commit=head, agent=agent)
        if merged.conflicts:
            raise Conflict(
                f"cannot resume in its kept worktree {worktree}: the current branch conflicts"
                f" with its branch {branch} in {', '.join(merged.conflicts)} (resolve with"
                f" 'git merge' there, then run again)"
            )
        self._event(
            "resumed",
            cell_id=cell.id,
            agent=agent,
            reason=f"in its kept worktree {worktree} on branch {branch}, as its last worker"
            " left it",
        )

    def _launch(
        self,
        cell: Cell,
        agent: str,
        session: str,
        log: str,
        worktree: str | None,
        branch: str | None,
        earlier: str | None = None,
    ) -> _Worker:
        """Start ``agent``'s worker process for ``cell``: its working tree ready, its
        brief written, its output appended to ``log``."""
        project, earlier = self._worker_project(cell, agent, worktree, branch, earlier)
        prompt_file = self._write_brief(cell, agent, project, earlier)
        values = {
            "prompt_file": prompt_file,
            "cell": cell.id,
            "agent": agent,
            "epic": self.epic.id,
            "project": project,
        }
        command = expand_command(self.settings.agent_cmd, values)
        env = worker_environment(
            agent=agent,
            cell_id=cell.id,
            epic_id=self.epic.id,
            project=project,
            prompt_file=prompt_file,
            session=session,
            log=log,
            token=self.tokens.get(agent),
        )
        handle = open(log, "ab")  # noqa: SIM115  (closed when the worker is settled)
        handle.write(f"$ {command}\n".encode())
        handle.flush()
        start = handle.tell()  # now: the worker shares the file offset once it runs
        process = _start_worker_process(command, env, project, handle)
        job = _Job(cell.id, agent, log, worktree, branch)
        return _Worker(job, process, handle, time.monotonic(), prompt_file, start)

    def _worker_project(
        self,
        cell: Cell,
        agent: str,
        worktree: str | None,
        branch: str | None,
        earlier: str | None,
    ) -> tuple[str, str | None]:
        """Where the worker runs (its worktree, kept or added at HEAD, else the
        repository) and its earlier attempt's note (saying it resumes in a kept one)."""
        if worktree is None or branch is None:
            return self.ws.root, earlier
        if os.path.isdir(worktree):  # kept by an earlier run: the subtask resumes there
            self._refresh_kept(cell, agent, worktree, branch)
            if earlier:
                earlier += RESUMED_HERE
        else:
            head = self.ws.git.head().commit
            if head is None:
                raise InvalidInput("the repository has no commit to branch from")
            add_worktree(self.ws.git, worktree, branch=branch, commit=head)
        return worktree, earlier

    def _write_brief(self, cell: Cell, agent: str, project: str, earlier: str | None) -> str:
        """Write ``agent``'s brief for ``cell`` (as read in ``project``); its path."""
        brief_ws = Workspace(project, actor=agent)
        prompt = swarm_subtask_prompt(
            brief_ws, cell_id=cell.id, agent_name=agent, context=earlier
        ).prompt
        prompt_file = self._new_file("prompts", f"{cell.id}.{agent}", ".md")
        with open(prompt_file, "w", encoding="utf-8") as brief:
            brief.write(prompt + "\n")
        return prompt_file

    # ------------------------------------------------------------ watching

    def _enforce_deadlines(self) -> None:
        now = time.monotonic()
        for worker in self.running.values():
            if worker.stop_sent is None and now - worker.started > self.settings.timeout:
                worker.timed_out = True
                self._signal(worker, signal.SIGTERM)
                worker.stop_sent = now
            elif (
                worker.stop_sent is not None
                and not worker.killed
                and now - worker.stop_sent > self.settings.grace
            ):
                self._signal(worker, signal.SIGKILL)
                worker.killed = True

    @staticmethod
    def _signal(worker: _Worker, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(worker.process.pid, signum)

    def _begin_stop(self) -> None:
        self.stopping = True
        self._event("interrupted", reason="stop requested: stopping the workers")
        now = time.monotonic()
        for worker in self.running.values():
            worker.interrupted = True
            if worker.stop_sent is None:
                self._signal(worker, signal.SIGTERM)
                worker.stop_sent = now

    def _reap(self) -> None:
        codes = {cell_id: worker.process.poll() for cell_id, worker in self.running.items()}
        exited = [(cell_id, code) for cell_id, code in codes.items() if code is not None]
        if exited:  # what the workers reported before they exited is told before their end
            self._observe(force=True)
        for cell_id, code in exited:
            worker = self.running[cell_id]
            # The group may hold children that outlived the shell: end them too.
            self._signal(worker, signal.SIGKILL)
            worker.log_handle.close()
            del self.running[cell_id]
            try:
                self._settle(worker, code)
            except HiveError as exc:  # e.g. its cell file has uncommitted edits
                reason = self._unsettled(cell_id, worker.job, exc)
                seconds = round(time.monotonic() - worker.started, 3)
                self._record(worker.job, "unsettled", code, seconds, reason)
            self._save_state()

    def _unsettled(self, cell_id: str, job: _Job, exc: HiveError) -> str:
        """What became of a subtask could not be written: it stays claimed, as after a
        killed runner, for the next run to recover; this run goes on without it."""
        reason = (
            f"could not record what became of it: {exc.message}; it stays in progress for"
            " the next run to pick up"
        )
        self.skipped[cell_id] = reason
        self._event("skipped", cell_id=cell_id, agent=job.agent, reason=reason, log=job.log)
        return reason

    # ------------------------------------------------------------ settling

    def _settle(self, worker: _Worker, code: int) -> None:
        job = worker.job
        seconds = round(time.monotonic() - worker.started, 3)
        self._event(
            "worker_exited",
            cell_id=job.cell_id,
            agent=job.agent,
            exit_code=code,
            seconds=seconds,
            log=job.log,
        )
        if self._closed_by_worker(job):
            self._complete(job, code, seconds)
        elif worker.interrupted and not worker.timed_out:
            reason = "the run was stopped before it finished"
            left = self._left_behind(job) if job.worktree is None else []
            if left:
                reason += f"; uncommitted changes left in the working tree: {', '.join(left)}"
            self._requeue(job, reason, code, seconds)
        else:
            self._block(job, self._reason(worker, code), exit_code=code, seconds=seconds)

    def _reason(self, worker: _Worker, code: int) -> str:
        if worker.timed_out:
            why = f"timed out after {self.settings.timeout:g}s and was killed"
        elif code < 0:
            why = f"was killed by signal {_signal_name(-code)}"
        elif code != 0:
            why = f"exited with code {code}{_shell_code(code)} without calling swarm_complete"
        else:
            why = "exited (code 0) without calling swarm_complete"
        said = last_line(worker.job.log, worker.log_start)
        return f"worker {worker.job.agent} {why}" + (f"; its log ends: {said}" if said else "")

    def _closed_by_worker(self, job: _Job) -> bool:
        """Whether the job's subtask is closed where it worked (its branch)."""
        if job.branch is None:
            index = self.ws.cells()
        else:
            tip = self.ws.git.ref_value(f"refs/heads/{job.branch}")
            if tip is None:
                return False
            snap = Snapshot(
                repo=self.ws.git,
                head=HeadRef(ref=f"refs/heads/{job.branch}", commit=tip),
                tree=self.ws.git.commit_tree(tip),
            )
            index = self.ws.cells(snap)
        cell = index.cells.get(job.cell_id)
        return cell is not None and cell.is_closed

    def _complete(
        self, job: _Job, code: int | None, seconds: float, *, note: str | None = None
    ) -> None:
        commit = None
        kept = note
        if job.branch is not None:
            commit = self._merge(job, code, seconds)
            if commit is None:
                return
            left = self._kept_work(job, merged=True)
            if left:
                kept = (
                    f"uncommitted changes left in its worktree {job.worktree} (kept, on branch"
                    f" {job.branch}): {', '.join(left)}"
                )
            else:
                self._drop_worktree(job)
        self._release_leftovers(job)
        outside = self._outside_scope(job)
        if outside:
            kept = "; ".join(filter(None, [kept, self._outside_note(job, outside)]))
        self._record(job, "completed", code, seconds, kept, outside=outside)
        title = self.ws.cells().cells[job.cell_id].title
        self._event(
            "completed",
            cell_id=job.cell_id,
            title=title,
            agent=job.agent,
            commit=commit,
            seconds=seconds,
            worktree=job.worktree,
            branch=job.branch,
            log=job.log,
            reason=kept,
            files=outside or None,
        )

    def _outside_scope(self, job: _Job) -> list[str]:
        """With a shared working tree: the files the worker's completion committed
        outside its subtask's files and its reservations (its outcome's scope
        violations). Another worker's edits to a file it did not reserve end up in
        whichever commit takes that file next, and only the worker's scope tells what
        was its own; with worktrees, every worker commits on a branch of its own."""
        if job.worktree is not None:
            return []
        with contextlib.suppress(HiveError):
            cell = self.ws.cells().cells.get(job.cell_id)
            since = cell.started_at if cell is not None else None
            for outcome in reversed(load_outcomes(self.ws)):
                if outcome.cell_id == job.cell_id and outcome.source == "swarm_complete":
                    recent = since is None or outcome.recorded_at >= since
                    return list(outcome.scope_violations) if recent else []
        return []

    def _outside_note(self, job: _Job, outside: list[str]) -> str:
        """What the run says of a completion that committed files outside its scope."""
        note = (
            f"its commit carries {', '.join(outside)}, outside its subtask's files and reservations"
        )
        others = sorted(job.alongside - {job.agent})
        if others:
            note += (
                f", while {', '.join(others)} worked in the same working tree: they may hold"
                " their edits"
            )
        return note + f" (see 'hive review {job.cell_id}')"

    def _merge(self, job: _Job, code: int | None, seconds: float) -> str | None:
        """Merge the job's branch: the merge commit, or None (the cell is blocked)."""
        branch = job.branch or ""
        try:
            merged = merge_subtask(self.ws, cell_id=job.cell_id, branch=branch, agent=job.agent)
        except HiveError as exc:
            reason = f"its branch {branch} could not be merged: {exc.message}"
            self._block(job, reason, exit_code=code, seconds=seconds)
            return None
        if merged.conflicts:
            reason = (
                f"merge conflict: branch {branch} conflicts with the current branch in"
                f" {', '.join(merged.conflicts)}; nothing was merged (worktree {job.worktree}"
                f" kept; resolve with 'git merge {branch}')"
            )
            self._block(job, reason, exit_code=code, seconds=seconds, files=merged.conflicts)
            return None
        return self.ws.git.head().commit or ""

    def _kept_work(self, job: _Job, *, merged: bool) -> list[str]:
        """What only the job's worktree holds (outside .hive/): files it changed without
        committing and, unless its branch was merged, the files its branch changed. A
        worktree whose state cannot be read is taken to hold work."""
        if job.worktree is None:
            return []
        found: list[str] = []
        try:
            tip = self.ws.git.ref_value(f"refs/heads/{job.branch}") if job.branch else None
            head = self.ws.git.head().commit
            if not merged and tip is not None and head is not None:
                found += branch_changes(self.ws.git, head, tip)
            found += worktree_changes(job.worktree)
            found += worth_keeping(ignored_files(job.worktree), self.disposable)
        except HiveError as exc:
            return [f"{UNCHECKED}{exc.message})"]
        return sorted(p for p in set(found) if not p.startswith(HIVE_DIR + "/"))

    def _drop_worktree(self, job: _Job) -> None:
        if job.worktree is not None:
            remove_worktree(self.ws.git, job.worktree)
        if job.branch is not None:
            with contextlib.suppress(Exception):
                delete_branch(self.ws.git, job.branch)

    def _block(
        self,
        job: _Job,
        reason: str,
        *,
        exit_code: int | None,
        seconds: float,
        files: list[str] | None = None,
    ) -> None:
        left: list[str] = []
        if job.worktree is not None:
            # all its worktree holds is the worker's own: what it touched, for the outcome
            kept = self._kept_work(job, merged=False)
            left = [p for p in kept if not p.startswith(UNCHECKED) and not p.endswith(IGNORED)]
            self._release_on_branch(job)
        if job.worktree is not None and files is None:
            reason += f" (worktree {job.worktree} on branch {job.branch} kept)"
        elif job.worktree is None:
            left = self._left_behind(job)
            if left:
                reason += f"; uncommitted changes left in the working tree: {', '.join(left)}"
        settled = block_subtask(
            self.ws,
            cell_id=job.cell_id,
            agent=job.agent,
            reason=reason,
            log=job.log,
            files_touched=left,
            record_outcome=not self._reported_failure(job.cell_id),
            duration_seconds=seconds,
        )
        if not settled.changed:  # closed (or deleted) meanwhile after all
            self._settled_meanwhile(job, exit_code, seconds)
            return
        self._record(job, "blocked", exit_code, seconds, reason)
        self._event(
            "blocked",
            cell_id=job.cell_id,
            title=settled.cell.title,
            agent=job.agent,
            reason=reason,
            log=job.log,
            exit_code=exit_code,
            worktree=job.worktree,
            branch=job.branch,
            files=files,
        )

    def _record(
        self,
        job: _Job,
        result: WorkerResult,
        code: int | None,
        seconds: float,
        reason: str | None,
        *,
        outside: list[str] | None = None,
    ) -> None:
        """What became of one worker's subtask, for the run's result."""
        run = WorkerRun(
            cell_id=job.cell_id,
            agent=job.agent,
            result=result,
            exit_code=code,
            seconds=seconds,
            log=job.log,
            reason=reason,
            worktree=job.worktree,
            branch=job.branch,
            outside_scope=outside or [],
        )
        self.runs.append(run)

    def _settled_meanwhile(self, job: _Job, code: int | None, seconds: float) -> None:
        """The subtask was closed, deleted or taken from its worker while it ran: a
        closed one is reported completed; the others are not (nothing is written about
        them but the release of what the worker still held)."""
        cell = self.ws.cells().cells.get(job.cell_id)
        kept = self._leave_worktree(job)
        if cell is not None and not cell.is_deleted and cell.is_closed:
            self._complete(_Job(job.cell_id, job.agent, job.log), code, seconds, note=kept)
            return
        result: WorkerResult = "deleted"
        reason = f"deleted while worker {job.agent} ran; nothing was recorded"
        if cell is not None and not cell.is_deleted:
            result = "taken"
            holder = f"{cell.assignee}'s" if cell.assignee else "nobody's"
            reason = (
                f"taken from worker {job.agent} while it ran (now {cell.status},"
                f" {holder}); left as it is, nothing was recorded"
            )
        if kept:
            reason += f"; {kept}"
        self._release_leftovers(job)
        self._record(job, result, code, seconds, reason)
        self._event("skipped", cell_id=job.cell_id, agent=job.agent, reason=reason, log=job.log)

    def _leave_worktree(self, job: _Job) -> str | None:
        """The worktree of a worker whose subtask was settled by someone else: removed
        with its branch when it holds nothing that exists nowhere else, else kept and
        named (what it holds)."""
        if job.worktree is None or not os.path.isdir(job.worktree):
            return None
        left = self._kept_work(job, merged=False)
        if not left:
            self._drop_worktree(job)
            return None
        return f"its work is kept in worktree {job.worktree} on branch {job.branch}: " + (
            ", ".join(left)
        )

    def _release_leftovers(self, job: _Job) -> None:
        """The exited worker's reservations still active here (its subtask closed or
        deleted by someone else, or closed without swarm_complete) are released: the
        worker is gone, and they would block others' files and commits until they
        expired. One commit when there are any; none otherwise."""
        with contextlib.suppress(HiveError):  # not released now: they expire as before
            release_worker(self.ws, cell_id=job.cell_id, agent=job.agent)

    def _release_on_branch(self, job: _Job) -> None:
        """A failed worker's reservations on its kept branch are released there too, so
        merging the branch by hand later brings no stale reservations along."""
        if job.worktree is None or not os.path.isdir(job.worktree):
            return
        with contextlib.suppress(HiveError):
            if list_reservations(Workspace(job.worktree), agent=job.agent):
                release(Workspace(job.worktree, actor=job.agent))

    def _left_behind(self, job: _Job) -> list[str]:
        """Files of the subtask's scope (owned or reserved by its agent) that the failed
        worker changed without committing; they stay for a person to look at."""
        cell = self.ws.cells().cells.get(job.cell_id)
        patterns = list(cell.files_owned) if cell is not None else []
        with contextlib.suppress(HiveError):
            patterns += [r.path_pattern for r in list_reservations(self.ws, agent=job.agent)]
        try:
            return uncommitted_in_scope(self.ws, patterns)
        except (HiveError, OSError):
            return []

    def _reported_failure(self, cell_id: str) -> bool:
        """The worker itself reported failure: swarm_progress(status="failed") blocked
        the cell and recorded a failure outcome since it was claimed (status
        "blocked" alone records none)."""
        cell = self.ws.cells().cells.get(cell_id)
        if cell is None or cell.status != "blocked":
            return False
        return any(
            outcome.cell_id == cell_id
            and outcome.source == "swarm_progress"
            and not outcome.success
            and (cell.started_at is None or outcome.recorded_at >= cell.started_at)
            for outcome in load_outcomes(self.ws)
        )

    def _requeue_job(self, job: _Job, reason: str) -> tuple[bool, str]:
        """Put the job's subtask back to open: (whether the cell changed, the reason).
        A worktree holding work (commits on its branch, uncommitted changes) is kept,
        its reservations released there, and named in the reason; others are removed."""
        left = self._kept_work(job, merged=False)
        if left:
            reason += (
                f"; its work is kept in worktree {job.worktree} on branch {job.branch}"
                f" (the next run resumes it there): {', '.join(left)}"
            )
            self._release_on_branch(job)
        settled = requeue_subtask(self.ws, cell_id=job.cell_id, agent=job.agent, reason=reason)
        if not left:
            self._drop_worktree(job)
        return settled.changed, reason

    def _requeue(self, job: _Job, reason: str, code: int | None, seconds: float) -> None:
        changed, reason = self._requeue_job(job, reason)
        if not changed:  # closed (or deleted) meanwhile after all
            self._settled_meanwhile(job, code, seconds)
            return
        self._record(job, "requeued", code, seconds, reason)
        self._event("requeued", cell_id=job.cell_id, agent=job.agent, reason=reason, log=job.log)

    # ------------------------------------------------------------ resuming

    def _state_path(self) -> str:
        return os.path.join(self.directory, "run.json")

    def _save_state(self) -> None:
        """The live workers' pids, so a later run can stop any this run left behind."""
        data = {
            "runner": os.getpid(),
            "workers": {
                cid: {"pid": w.process.pid, "agent": w.job.agent} for cid, w in self.running.items()
            },
        }
        temp = self._state_path() + ".tmp"
        with open(temp, "w", encoding="utf-8") as handle:
            json.dump(data, handle)
        os.replace(temp, self._state_path())

    def _recover(self) -> None:
        """Subtasks an earlier run left in progress (it was killed): stop any of its
        workers still alive, merge what finished on its branch, requeue the rest."""
        self._stop_leftover_workers()
        for cell in self._subtasks(self.ws.cells()):
            info = run_info(cell)
            if cell.status != "in_progress" or info.get("state") != "running":
                continue
            agent = str(info.get("agent") or cell.assignee or "")
            if not agent:
                continue
            job = _Job(
                cell.id, agent, str(info.get("log") or ""), info.get("worktree"), info.get("branch")
            )
            try:
                self._recover_job(job)
            except HiveError as exc:
                self._unsettled(cell.id, job, exc)

    def _recover_job(self, job: _Job) -> None:
        """Merge a subtask a dead run's worker finished on its branch, else requeue it."""
        cell_id, agent = job.cell_id, job.agent
        if job.branch and self._closed_by_worker(job):
            self._event(
                "resumed",
                cell_id=cell_id,
                agent=agent,
                reason="finished on its branch before the last run stopped",
            )
            self._complete(job, None, 0.0)
            return
        changed, reason = self._requeue_job(
            job, "the run that started it stopped before it finished"
        )
        if changed:
            self._event("resumed", cell_id=cell_id, agent=agent, reason=f"requeued: {reason}")

    def _stop_leftover_workers(self) -> None:
        try:
            with open(self._state_path(), encoding="utf-8") as handle:
                data = json.load(handle)
        except (OSError, ValueError):
            return
        for entry in (data.get("workers") or {}).values():
            pid = entry.get("pid") if isinstance(entry, dict) else None
            if isinstance(pid, int) and pid > 1:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    if os.getpgid(pid) == pid:  # still the leader of the group we made
                        os.killpg(pid, signal.SIGKILL)

    # ------------------------------------------------------------ observing

    def _observe(self, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self.last_observed < OBSERVE_EVERY:
            return
        self.last_observed = now
        with contextlib.suppress(HiveError):
            self._observe_cells()
        with contextlib.suppress(HiveError):
            self._observe_reservations()
        with contextlib.suppress(HiveError):
            self._observe_messages()

    def _observe_cells(self) -> None:
        index = self.ws.cells()
        for cell in self._subtasks(index):
            key = (cell.status, cell.assignee)
            if self.seen.get(cell.id) != key:
                if cell.id in self.seen:
                    self._event(
                        "cell",
                        cell_id=cell.id,
                        title=cell.title,
                        status=cell.status,
                        agent=cell.assignee,
                    )
                self.seen[cell.id] = key

    def _observe_reservations(self) -> None:
        family = {cell.id for cell in self._subtasks(self.ws.cells())}
        agents = {w.job.agent for w in self.running.values()}
        places = [self.ws] + [
            Workspace(w.job.worktree)
            for w in self.running.values()
            if w.job.worktree is not None and os.path.isdir(w.job.worktree)
        ]
        held: dict[int | str, dict[str, Any]] = {}
        for place in places:
            for r in list_reservations(place):
                if r.cell in family or r.agent in agents:
                    held[f"{r.agent}:{r.id}"] = {
                        "agent": r.agent,
                        "path": r.path_pattern,
                        "cell": r.cell,
                        "id": r.id,
                    }
        current = sorted(held.values(), key=lambda r: (str(r["agent"]), str(r["path"])))
        if current != self.seen_reservations:
            self.seen_reservations = current
            self._event("reservations", reservations=current)

    def _skip_earlier_messages(self) -> None:
        """Messages already on the epic's thread (an earlier run's progress reports) are
        not news of this run: only those sent from now on are reported."""
        with contextlib.suppress(HiveError):
            found = thread_messages(self.ws, thread_id=self.epic.id, limit=MESSAGES_SEEN)
            self.seen_messages.update(message.id for message in found)

    def _observe_messages(self) -> None:
        for message in thread_messages(self.ws, thread_id=self.epic.id, limit=MESSAGES_SEEN):
            if message.id in self.seen_messages:
                continue
            self.seen_messages.add(message.id)
            self._event(
                "message",
                agent=message.sender,
                message={
                    "id": message.id,
                    "from": message.sender,
                    "subject": message.subject,
                    "body": message.body[:500],
                    "importance": message.importance,
                    "sent_at": format_time(message.sent_at),
                },
            )

    # ------------------------------------------------------------ the result

    def _close_epic(self, result: SwarmRunResult, index: CellIndex) -> None:
        """Every subtask is closed: close the epic (and the epics between it and its
        subtasks) in one commit, the run's summary as the reason, unless the run was
        told not to. A refusal (the epic is someone else's, or waits on an open blocker)
        leaves it open and says why."""
        epic = index.cells.get(self.epic.id)
        if epic is None or epic.is_deleted or epic.is_closed:
            result.epic_status = epic.status if epic is not None else None
            return
        if not self.settings.close_epic:
            result.epic_status = epic.status
            result.epic_note = "left open (--keep-epic-open)"
            return
        ran = sum(1 for run in self.runs if run.result == "completed")
        reason = epic_closing_reason(len(result.completed), ran)
        try:
            close_cells(self.ws, cell_ids=_epics_under(epic.id, index), reason=reason)
        except HiveError as exc:
            result.epic_status = epic.status
            result.epic_note = f"left open: {exc.message}"
            self._event("epic_open", cell_id=epic.id, title=epic.title, reason=exc.message)
            return
        result.epic_status = "closed"
        result.epic_note = reason
        commit = self.ws.git.head().commit
        self._event("epic_closed", cell_id=epic.id, title=epic.title, reason=reason, commit=commit)

    def _dirty(self) -> dict[str, str | None] | None:
        """The shared working tree's uncommitted files outside ``.hive/`` and their
        content (None: deleted), or None when it cannot be read."""
        from hive.git.worktree import blob_sha_of

        try:
            paths = worktree_changes(self.ws.root)
        except HiveError:
            return None
        found: dict[str, str | None] = {}
        for path in paths:
            if path.startswith(HIVE_DIR + "/"):
                continue
            try:
                with open(os.path.join(self.ws.root, path), "rb") as handle:
                    found[path] = blob_sha_of(handle.read())
            except OSError:
                found[path] = None
        return found

    def _left_uncommitted(self) -> list[str]:
        """With a shared working tree: the files this run's workers changed and left
        uncommitted (not so, or not as they are now, when the run started). No commit
        carries them yet, and the next one that takes them (any worker's ``git commit
        -a``, a ``files_touched``) will, as its own."""
        if self.dirty_before is None:
            return []
        after = self._dirty() or {}
        missing = object()
        return sorted(
            path for path, sha in after.items() if self.dirty_before.get(path, missing) != sha
        )

    def _tidy_worktrees(self, index: CellIndex) -> list[KeptWorktree]:
        """The worktrees of this epic's run directory that no subtask will resume (its
        subtask closed or deleted since, or an earlier attempt's): each is removed with
        its branch when it holds nothing found nowhere else (:func:`unique_work`, say
        its draft was committed on the current branch since); otherwise it is kept,
        since what only it holds is a person's to look at, and named with the command
        that removes it. Nothing a user left uncommitted is ever removed."""
        head = self.ws.git.head().commit
        home = os.path.join(self.directory, "worktrees")
        if head is None or not os.path.isdir(home):
            return []
        resumable = {
            os.path.realpath(str(run_info(cell)["worktree"]))
            for cell in self._subtasks(index)
            if not cell.is_closed and run_info(cell).get("worktree")
        }
        kept: list[KeptWorktree] = []
        for name in sorted(os.listdir(home)):
            path = os.path.join(home, name)
            if os.path.isdir(path) and os.path.realpath(path) not in resumable:
                found = self._tidy_worktree(path, _cell_of(name, index), head)
                if found is not None:
                    kept.append(found)
        return kept

    def _tidy_worktree(self, path: str, cell: Cell | None, head: str) -> KeptWorktree | None:
        """Remove the leftover worktree at ``path`` (and its ``hive/`` branch) unless it
        holds work of its own: then the KeptWorktree that names it."""
        why = _whose(cell)
        branch: str | None = None
        try:
            on = Workspace(path).git.head()  # its commits count also when detached
            ref = on.ref or ""
            branch = ref.removeprefix("refs/heads/") if ref.startswith("refs/heads/") else None
            files = unique_work(self.ws.git, head, path, on.commit)
            files += worth_keeping(ignored_files(path), self.disposable)
        except (HiveError, OSError) as exc:
            message = exc.message if isinstance(exc, HiveError) else str(exc)
            files = [f"{UNCHECKED}{message})"]
        cell_id = cell.id if cell is not None else None
        if files:
            command = f"git worktree remove --force {shell_word(path)}"
            if branch:
                command += f" && git branch -D {shell_word(branch)}"
            found = KeptWorktree(
                worktree=path, branch=branch, cell_id=cell_id, why=why, files=files, command=command
            )
            self._event(
                "worktree_kept",
                cell_id=cell_id,
                worktree=path,
                branch=branch,
                files=files,
                reason=f"{why} ({path}) holds work found nowhere else: {', '.join(files)};"
                f" look at it, then remove it with '{command}'",
            )
            return found
        remove_worktree(self.ws.git, path)
        if branch is not None and branch.startswith("hive/"):
            with contextlib.suppress(Exception):
                delete_branch(self.ws.git, branch)
        self._event(
            "worktree_removed",
            cell_id=cell_id,
            worktree=path,
            branch=branch,
            reason=f"{why} ({path}) and its branch: everything in them is on the current branch",
        )
        return None

    def _finish(self) -> SwarmRunResult:
        index = self.ws.cells()
        subtasks = self._subtasks(index)
        result = SwarmRunResult(
            epic_id=self.epic.id,
            title=self.epic.title,
            isolation=self.settings.isolation,
            workers=self.settings.workers,
            interrupted=self.stopping,
            completed=[c.id for c in subtasks if c.is_closed],
            blocked={c.id: _block_reason(c) for c in subtasks if c.status == "blocked"},
            remaining=[c.id for c in subtasks if not c.is_closed and c.status != "blocked"],
            runs=self.runs,
            hooks_missing=self.hooks_missing,
            hooks_note=_hooks_note(self.hooks_missing),
        )
        result.skipped = {c: why for c, why in self.skipped.items() if c in result.remaining}
        with contextlib.suppress(HiveError, OSError):  # tidying never fails the run
            result.kept_worktrees = self._tidy_worktrees(index)
        result.left_uncommitted = self._left_uncommitted()
        if result.finished and subtasks:
            self._close_epic(result, index)
        for cell_id in result.remaining:
            blockers = open_blockers(index.cells[cell_id], index)
            if blockers:
                result.waiting[cell_id] = blockers
            for blocker in blockers:
                found = index.cells.get(blocker)
                result.blocker_status[blocker] = found.status if found else "missing"
        self._event(
            "run_finished",
            epic_status=result.epic_status,
            title=self.epic.title,
            totals={
                "subtasks": len(subtasks),
                "completed": len(result.completed),
                "blocked": len(result.blocked),
                "remaining": len(result.remaining),
                "workers_run": len(self.runs),
            },
            reason="interrupted" if self.stopping else None,
            blocked=result.blocked or None,
            waiting=result.waiting or None,
            blocker_status=result.blocker_status or None,
            skipped=result.skipped or None,
            files=result.left_uncommitted or None,
        )
        return result


def _start_worker_process(
    command: str, env: dict[str, str], project: str, handle: IO[bytes]
) -> subprocess.Popen[bytes] | ForkedWorker:
    """Run ``command`` in ``project``, its output to ``handle``: forked from this
    process when it is a hive command that can be, else in a shell of its own
    session. ``handle`` is closed when it cannot start."""
    direct = forkable(command, env)
    try:
        process: subprocess.Popen[bytes] | ForkedWorker | None = None
        if direct is not None:
            module, args = direct
            process = start_forked(module, args, cwd=project, env=env, log_fd=handle.fileno())
        if process is None:
            process = subprocess.Popen(
                command,
                shell=True,
                cwd=project,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=handle,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
    except OSError:
        handle.close()
        raise
    return process


def worth_keeping(ignored: list[str], disposable: tuple[str, ...] = DISPOSABLE) -> list[str]:
    """Of the paths git ignores in a worktree, those that are not known to be disposable
    (no part of the path matches a pattern of ``disposable``: DISPOSABLE's build outputs
    and caches, and ``swarm.disposable`` of the config), marked IGNORED: removing the
    worktree would lose them, and nothing else has them."""
    return [path + IGNORED for path in ignored if not _disposable(path, disposable)]


def _disposable(path: str, patterns: tuple[str, ...]) -> bool:
    parts = path.rstrip("/").split("/")
    return any(fnmatch.fnmatchcase(part, pattern) for part in parts for pattern in patterns)


def epic_closing_reason(closed: int, ran: int) -> str:
    """The reason a run closes its epic with: how many subtasks are closed and how many
    of them this run closed ("all 1 subtasks closed, 1 of them" for a lone subtask)."""
    if closed == 1:
        return f"{RUNNER}: its one subtask closed, {'in' if ran else 'before'} this run"
    return f"{RUNNER}: all {closed} subtasks closed, {ran} of them in this run"


def _hooks_note(missing: list[str]) -> str | None:
    """What running without hive's git hooks means (None when none is missing)."""
    if not missing:
        return None
    lost = []
    if "pre-commit" in missing:
        lost.append("not checked against the reservations")
    elif "pre-merge-commit" in missing:
        lost.append("not checked against the reservations when git merge makes them")
    if "commit-msg" in missing:
        lost.append("not tied to their subtasks (hive review)")
    return (
        f"hive's git hooks are not installed here ({', '.join(missing)}): the workers' own"
        f" git commits are {' and '.join(lost)}; run 'hive hooks install' first"
    )


def _again(cell: Cell) -> str:
    """For the start of a subtask an earlier run blocked or stopped: which it was."""
    if run_info(cell).get("state") == "requeued":
        return "again: its last worker was stopped"
    return "again: its last attempt failed"


def _cell_of(name: str, index: CellIndex) -> Cell | None:
    """The subtask a run-directory worktree named ``name`` was made for (``ID`` or, for
    a later attempt's, ``ID.N``), None when there is none."""
    stem, _, number = name.rpartition(".")
    return index.cells.get(name) or (index.cells.get(stem) if number.isdigit() else None)


def _whose(cell: Cell | None) -> str:
    """Whose a leftover worktree is, for a person: 'the worktree of closed subtask ID'."""
    if cell is None:
        return "a worktree of no subtask of this epic"
    if cell.is_deleted:
        return f"the worktree of deleted subtask {cell.id}"
    if cell.is_closed:
        return f"the worktree of closed subtask {cell.id}"
    return f"a worktree of an earlier attempt at {cell.id}"


def _epics_under(epic_id: str, index: CellIndex) -> list[str]:
    """The open epics among ``epic_id``'s live descendants, then ``epic_id`` itself."""
    found: list[str] = []
    pending = [epic_id]
    while pending:
        for child_id in index.children_of(pending.pop(0)):
            child = index.cells.get(child_id)
            if child is not None and not child.is_deleted and child.type == "epic":
                pending.append(child_id)
                if not child.is_closed:
                    found.append(child_id)
    return [*found, epic_id]


LAST_LINE_CHARS = 200  # of a failed worker's log, in its block reason
RESUMED_HERE = (
    " You continue where it worked: this worktree and branch hold its commits and the"
    " edits it did not commit. Look at them (git log, git status, git diff) before you"
    " start, and build on them or undo them."
)


def _earlier_attempt(cell: Cell) -> str | None:
    """For the brief of a subtask an earlier run blocked or put back: what became of that
    attempt (the worker of a retry knows it is one, and why the last one failed)."""
    info = run_info(cell)
    state, reason = info.get("state"), info.get("reason")
    if state not in KEPT_STATES or not isinstance(reason, str) or not reason:
        return None
    outcome = "was stopped" if state == "requeued" else "failed and was blocked"
    return f"An earlier attempt at this subtask {outcome}: {reason}."


def last_line(log: str, start: int = 0) -> str | None:
    """The last non-blank line a worker wrote to ``log`` from byte ``start`` on (None
    when it wrote none), control characters shown as '?', cut to LAST_LINE_CHARS: why
    it failed, as often as not (``sh: 1: claude: not found``, a tool's error)."""
    from hive.text import without_control

    try:
        with open(log, "rb") as handle:
            end = handle.seek(0, os.SEEK_END)
            handle.seek(max(start, end - 8 * LAST_LINE_CHARS))
            tail = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    if not lines:
        return None
    line = without_control(lines[-1])
    return line if len(line) <= LAST_LINE_CHARS else line[: LAST_LINE_CHARS - 1] + "…"


def _block_reason(cell: Cell) -> str:
    return str(run_info(cell).get("reason") or "blocked")


def _shell_code(code: int) -> str:
    """What ``/bin/sh`` means by ``code``, which it also exits with when a command it
    ran failed so (the agent command runs in a shell, which does not replace itself
    with the command): not found, not runnable, killed by a signal."""
    if code == 127:
        return " (the shell's code for a command not found: see its log)"
    if code == 126:
        return " (the shell's code for a command that could not be run: see its log)"
    if 128 < code < 128 + signal.NSIG:
        return f" (the shell's code for a command killed by {_signal_name(code - 128)})"
    return ""


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)
