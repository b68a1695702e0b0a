"""``hive demo``: a small swarm in a scratch repository, end to end.

A coordinator plans an epic (strategy, validated decomposition, one commit),
three agents register for mail, claim work atomically, reserve their files,
are refused when they reach into someone else's files (by ``hive reserve``
and by git's own pre-commit hook), report progress and finish with
``swarm_complete``: code, cell, released reservations and outcome in one
commit. The coordinator then reads its inbox, the epic's status and the
review of the agents' work.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile

from hive.cli import output
from hive.domain.cells import list_cells, ready, start_cell
from hive.domain.hooks import install_hook
from hive.domain.mail import inbox, mail_init
from hive.domain.reservations import reserve
from hive.domain.setup import init_hive
from hive.domain.swarm.complete import swarm_complete
from hive.domain.swarm.decompose import hive_create_epic, swarm_validate_decomposition
from hive.domain.swarm.learning import swarm_select_strategy
from hive.domain.swarm.progress import swarm_progress, swarm_status
from hive.domain.swarm.review import review
from hive.domain.workspace import Workspace
from hive.errors import HiveError, InvalidInput
from hive.git.repo import init_repository
from hive.models import Cell

AGENTS = ("BlueLake", "RedStone", "GreenField")
TASK = "Add user authentication: sign-up, login and sessions for the web app"
PLAN = """Here is the plan:
```json
{"epic": {"title": "Add user authentication",
          "description": "Sign-up, login and sessions for the web app."},
 "subtasks": [
   {"title": "Design the user schema", "files": ["src/models/user.py"], "priority": 0},
   {"title": "Password hashing service", "files": ["src/auth/hashing.py"]},
   {"title": "Login and session endpoints", "files": ["src/api/auth/**"],
    "dependencies": [0, 1]},
   {"title": "Document the auth flow", "files": ["docs/auth.md"]}]}
```"""
CODE = {
    "src/models/user.py": "class User:\n    def __init__(self, email: str) -> None:\n"
    "        self.email = email\n",
    "src/auth/hashing.py": "import hashlib\n\n\ndef hash_password(raw: str) -> str:\n"
    "    return hashlib.sha256(raw.encode()).hexdigest()\n",
    "src/api/auth/login.py": "def login(email: str, password: str) -> bool:\n"
    "    return bool(email and password)\n",
    "docs/auth.md": "# Authentication\n\nSign up, log in, keep a session.\n",
}


def run_demo(directory: str | None = None) -> None:
    """Make a scratch repo, plan an epic, let three agents work, print the result."""
    root = _scratch_dir(directory)
    output.heading("hive demo: a small swarm")
    output.say(f"scratch repository: {root}")
    init_repository(root)
    coordinator = _agent_workspace(root, "coordinator")
    init_hive(coordinator, prefix="demo")
    hook = install_hook(coordinator)
    output.say(f"hive init, pre-commit hook installed ({os.path.relpath(hook.path, root)})")
    mail_init(coordinator, agent_name="coordinator")

    epic = _plan(coordinator)
    workers = {name: _register(root, name) for name in AGENTS}
    _work(root, workers, epic)
    _report(root, coordinator, epic)


def _plan(coordinator: Workspace) -> Cell:
    output.heading("coordinator plans")
    choice = swarm_select_strategy(coordinator, task=TASK)
    output.say(f"strategy {choice.strategy} (confidence {choice.confidence:.2f})")
    checked = swarm_validate_decomposition(coordinator, response=PLAN)
    output.say(f"decomposition valid: {checked.valid}, {len(checked.errors)} errors")
    if checked.data is None:
        raise InvalidInput("the demo's decomposition did not validate")
    cells = hive_create_epic(
        coordinator,
        epic_title=str(checked.data.epic["title"]),
        epic_description=str(checked.data.epic.get("description", "")),
        subtasks=checked.data.subtasks,
        strategy=choice.strategy,
    )
    output.say(
        f"epic {cells[0].id} and {len(cells) - 1} subtasks in one commit "
        "(files owned and dependencies kept)"
    )
    return cells[0]


def _register(root: str, name: str) -> Workspace:
    ws = _agent_workspace(root, name)
    agent = mail_init(ws, agent_name=name, task_description="auth epic")
    if agent.token:
        _TOKENS[agent.name] = agent.token
    output.say(f"{agent.name} registered for swarm mail (credential issued)")
    return ws


def _work(root: str, workers: dict[str, Workspace], epic: Cell) -> None:
    """Rounds of claim -> reserve -> code -> swarm_complete until nothing is ready."""
    round_number = 0
    while True:
        round_number += 1
        claimed = _claim_round(workers)
        if not claimed:
            return
        output.heading(f"round {round_number}")
        for name, cell in claimed:
            output.say(f"{name} claimed {cell.id}  {cell.title}")
            reserve(workers[name], paths=cell.files_owned, reason="implementing", cell=cell.id)
            output.say(f"  {name} reserved {', '.join(cell.files_owned)}")
        if round_number == 1:
            _show_refusals(root, workers, claimed)
        for name, cell in claimed:
            _finish(root, workers[name], name, cell)


def _claim_round(workers: dict[str, Workspace]) -> list[tuple[str, Cell]]:
    claimed = []
    for name, ws in workers.items():
        # The epic becomes ready once its subtasks are closed: that one is the coordinator's.
        if not any(cell.type != "epic" for cell in ready(ws)):
            break
        claimed += [(name, cell) for cell in ready(ws, claim=True)]
    return claimed


def _show_refusals(
    root: str, workers: dict[str, Workspace], claimed: list[tuple[str, Cell]]
) -> None:
    """Another agent reaching into a claimed cell's files: refused by reserve and by git."""
    owner, cell = claimed[0]
    intruder = next(name for name in AGENTS if name != owner)
    try:
        start_cell(workers[intruder], cell_id=cell.id)
    except HiveError as exc:
        output.say(f"  {intruder} tried to start {cell.id} too -> {exc.message}")
    try:
        reserve(workers[intruder], paths=["src/**"], reason="refactor everything")
    except HiveError as exc:
        output.say(f"  {intruder} asked to reserve src/**; refused:")
        output.say(f"    {exc.message}")
    target = cell.files_owned[0]
    _write(root, target, "# an edit nobody reserved\n")
    blocked = _git_commit(root, intruder, target)
    if blocked is not None:
        output.say(f"  {intruder} tried `git commit {target}`; the pre-commit hook said:")
        output.say(f"    {blocked}")
    _git(root, "reset", "-q", "--", target)


def _finish(root: str, ws: Workspace, name: str, cell: Cell) -> None:
    files = [path for path in CODE if any(_owns(pattern, path) for pattern in cell.files_owned)]
    for path in files:
        _write(root, path, CODE[path])
    swarm_progress(ws, agent_name=name, cell_id=cell.id, status="in_progress",
                   progress_percent=80, message="code written, tests pass")  # fmt: skip
    done = swarm_complete(ws, agent_name=name, cell_id=cell.id,
                          summary=f"{cell.title}: done", files_touched=files)  # fmt: skip
    output.say(
        f"{name} swarm_complete {cell.id}: one commit {(done.commit or '')[:7]} with "
        f"{len(files)} code file(s), the closed cell, {len(done.released)} released "
        "reservation(s) and the outcome"
    )


def _report(root: str, coordinator: Workspace, epic: Cell) -> None:
    output.heading("coordinator reads")
    for header in inbox(coordinator, limit=3):
        output.say(f"mail from {header.sender}: {header.subject}")
    status = swarm_status(coordinator, epic_id=epic.id)
    output.say(
        f"epic {epic.id}: {status.completed}/{status.total} completed "
        "(the epic itself stays open for the coordinator to close)"
    )
    seen = review(coordinator, target=epic.id, with_patch=False)
    touched = sorted({path for cell in seen.cells for path in cell.files_touched})
    violations = sum(len(cell.scope_violations) for cell in seen.cells)
    output.say(
        f"review: {len(seen.commits)} commits, files touched {', '.join(touched)}; "
        f"scope violations: {violations}"
    )
    output.heading("hive list")
    output.cell_table(list_cells(coordinator, status="all"))
    output.heading("git log --oneline")
    log = _git(root, "log", "--oneline")
    output.say(log.stdout.rstrip() if log else "(git is not installed: see `hive log`)")
    output.say(f"\nexplore it: cd {root} && hive review {epic.id} && git log --stat")


# ------------------------------------------------------------------ helpers


_TOKENS: dict[str, str] = {}


def _agent_workspace(root: str, name: str) -> Workspace:
    return Workspace(root, actor=name, session=f"demo:{name}")


def _owns(pattern: str, path: str) -> bool:
    from hive.domain.globs import glob_matches

    return glob_matches(pattern, path)


def _write(root: str, path: str, content: str) -> None:
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as handle:
        handle.write(content)


def _git(root: str, *args: str, agent: str = "demo") -> subprocess.CompletedProcess[str] | None:
    """Run the real git CLI as ``agent`` (None when git is not installed)."""
    if shutil.which("git") is None:
        return None
    env = {**os.environ, "HIVE_AGENT": agent, "PATH": _path_with_hive()}
    env.pop("HIVE_AGENT_TOKEN", None)
    if agent in _TOKENS:  # the hook knows an agent by its credential
        env["HIVE_AGENT_TOKEN"] = _TOKENS[agent]
    else:
        env.pop("HIVE_AGENT")
    for role in ("AUTHOR", "COMMITTER"):
        env[f"GIT_{role}_NAME"] = agent
        env[f"GIT_{role}_EMAIL"] = "demo@hive.local"
    env.pop("HIVE_BYPASS", None)
    return subprocess.run(
        ["git", "-C", root, *args], capture_output=True, text=True, check=False, env=env
    )


def _git_commit(root: str, agent: str, path: str) -> str | None:
    """The hook's first line when it blocks ``agent`` committing ``path``, else None."""
    _git(root, "add", "--", path, agent=agent)
    result = _git(root, "commit", "-q", "-m", "sneaky edit", agent=agent)
    if result is None or result.returncode == 0:
        return None
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    return lines[0] if lines else f"exit {result.returncode}"


def _path_with_hive() -> str:
    return os.pathsep.join([os.path.dirname(sys.executable), os.environ.get("PATH", "")])


def _scratch_dir(directory: str | None) -> str:
    """A new temporary directory, or ``directory`` if it is new or empty."""
    if directory is None:
        return tempfile.mkdtemp(prefix="hive-demo-")
    root = os.path.abspath(directory)
    if os.path.exists(root) and (not os.path.isdir(root) or os.listdir(root)):
        raise InvalidInput(f"--dir {directory}: not an empty directory; give a new or empty one")
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as exc:
        raise InvalidInput(f"--dir {directory}: cannot create it ({exc.strerror})") from None
    return root
