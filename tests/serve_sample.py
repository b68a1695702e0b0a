"""A small, lived-in hive for the web views' tests and screenshots: an epic with
dependent subtasks, loose cells, agents holding reservations (one stale), mail
threads and outcomes spread over two weeks."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from hive.domain.cells import close_cell, create_cell, start_cell, update_cell
from hive.domain.epics import create_epic
from hive.domain.identity import mail_init
from hive.domain.mail import send_message
from hive.domain.outcomes import new_outcome_id, outcome_change
from hive.domain.reservations import reserve
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.models import Cell, utc_now
from hive.models.outcome import Outcome
from hive.store.cells import encode_cell
from hive.store.ids import new_root_id
from hive.store.layout import cell_path

if TYPE_CHECKING:
    from hive.serve.runner import BackgroundServer

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.com",
}


@dataclass
class Sample:
    root: Path
    epic: str
    subtasks: list[str]
    bug: str
    feature: str
    chore: str
    stale_reservation: int
    active_reservation: int
    thread: str
    extra: dict[str, str] = field(default_factory=dict)


def git(repo: Path, *args: str, input: bytes = b"") -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        input=input,
        capture_output=True,
        check=True,
        env={**os.environ, **GIT_ENV},
    )
    return done.stdout.decode()


def new_repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    (path / "README.md").write_text("# project\n")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("print('hello')\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "initial")
    return path


def build_sample(path: Path, *, stale_wait: bool = True) -> Sample:
    """The sample hive in a new repository at ``path`` (acting person: Test User)."""
    root = new_repo(path)
    ws = Workspace(str(root), actor="coordinator")
    init_hive(ws, prefix="hv")
    epic, *subtasks = create_epic(
        ws,
        title="Add user authentication",
        description="Sign-up, login and password reset for the web app.",
        subtasks=[
            {"title": "Design the user schema", "files": ["src/models/**"], "priority": 1},
            {"title": "Password hashing service", "files": ["src/auth/**"], "dependencies": [0]},
            {"title": "Login endpoint", "files": ["src/api/login.py"], "dependencies": [0, 1]},
            {"title": "Document the auth flow", "files": ["docs/auth.md"], "dependencies": [2]},
            {"title": "Session tokens", "files": ["src/auth/session.py"], "dependencies": [0]},
        ],
        metadata={"strategy": "feature"},
        labels=["auth"],
    )
    bug = create_cell(
        ws, title="Login button misaligned on mobile", type="bug", priority=0, labels=["ui"]
    )
    feature = create_cell(
        ws, title="Export board as CSV", type="feature", priority=2, labels=["api", "export"]
    )
    chore = create_cell(ws, title="Bump dependencies", type="chore", priority=3)
    done = create_cell(ws, title="Set up CI", type="task", priority=1, labels=["infra"])
    close_cell(ws, cell_id=done.id, reason="pipeline green")

    blue = ws.for_actor("BlueLake")
    red = ws.for_actor("RedStone")
    green = ws.for_actor("GreenField")
    start_cell(blue, cell_id=subtasks[0].id)
    start_cell(red, cell_id=bug.id)
    update_cell(blue, cell_id=subtasks[0].id, append_notes="users table drafted; email unique")
    active = reserve(blue, paths=["src/models/**"], reason="schema", cell=subtasks[0].id)
    reserve(red, paths=["src/ui/*.css"], reason="mobile layout", cell=bug.id, ttl_seconds=7200)
    stale = reserve(green, paths=["docs/**"], reason="auth docs", ttl_seconds=1)

    for agent in ("coordinator", "BlueLake", "RedStone", "GreenField"):
        mail_init(ws.for_actor(agent), agent_name=agent)
    send_message(
        ws,
        to=["BlueLake", "RedStone"],
        subject="Kick-off: user authentication",
        body="Schema first; hashing waits for it. Reserve before you edit.",
        thread_id=epic.id,
    )
    send_message(
        blue,
        to=["coordinator"],
        subject="Schema question",
        body="Should emails be case-insensitive?\nI would store them lower-cased.",
        thread_id=epic.id,
        importance="high",
    )
    send_message(
        red, to=["coordinator"], subject="CI is flaky", body="Retried twice.", importance="urgent"
    )
    _outcomes(ws, epic.id)
    if stale_wait:
        time.sleep(1.1)  # GreenField's one-second reservation is now expired (stale)
    return Sample(
        root=root,
        epic=epic.id,
        subtasks=[s.id for s in subtasks],
        bug=bug.id,
        feature=feature.id,
        chore=chore.id,
        stale_reservation=stale.granted[0].id,
        active_reservation=active.granted[0].id,
        thread=epic.id,
        extra={"done": done.id},
    )


@contextlib.contextmanager
def serving(
    root: Path, *, allow_write: bool = False, clock_seconds: float = 30.0
) -> Iterator[BackgroundServer]:
    """``hive serve`` of ``root`` (acting person: Test User) on loopback, in a thread of
    this process. The server's modules (uvicorn, starlette, jinja2) are imported here,
    by the test process that serves, not by every one that collects the tests."""
    from hive.serve.app import ServeConfig
    from hive.serve.runner import BackgroundServer

    config = ServeConfig(
        root=str(root), actor="Test User", allow_write=allow_write, clock_seconds=clock_seconds
    )
    with BackgroundServer(config) as running:
        yield running


def copy_sample(sample: Sample, path: Path) -> Sample:
    """A copy of a built ``sample`` at ``path`` (a new repository, with its own .git):
    as good as ``build_sample(path)``, without the writes and the one-second wait."""
    from tests.conftest import copy_repo

    copy_repo(sample.root, path)
    return dataclasses.replace(
        sample, root=path, subtasks=list(sample.subtasks), extra=dict(sample.extra)
    )


def _outcomes(ws: Workspace, epic_id: str) -> None:
    """Outcomes of three strategies over the last two weeks (feature improves)."""
    now = utc_now()
    records = []
    for day in range(14):
        for number, strategy in enumerate(("feature", "file", "risk")):
            if (day + number) % 3 == 2:
                continue
            success = (day * 7 + number * 3) % 10 < (4 + day // 2 if strategy == "feature" else 6)
            cell = f"{epic_id}.x{day}{number}"
            records.append(
                Outcome(
                    id=new_outcome_id(cell),
                    cell_id=cell,
                    epic_id=epic_id,
                    agent=("BlueLake", "RedStone", "GreenField")[number],
                    title=f"sample subtask {day}-{number}",
                    strategy=strategy,
                    success=success,
                    duration_seconds=300 + 120 * number + 40 * ((day * 5) % 7),
                    recorded_at=now - timedelta(days=13 - day, hours=number),
                )
            )
    changes = [outcome_change(o) for o in records]
    ws.write_files(
        lambda snap: (changes, "hive: import sample outcomes\n\nHive-Event: import\n", None)
    )


def bulk_cells(ws: Workspace, count: int, prefix: str = "hv") -> list[str]:
    """``count`` cells (encoded by hive) in one commit on the current branch, written by
    git itself, as a merge or a pull brings them: ``git fast-import`` stores the blobs
    (one pack); ``update-index``, ``write-tree``, ``commit-tree`` and ``checkout-index``
    commit and check them out, the working tree clean after (less than half the CPU
    time of hive's own bulk write, which tests/test_bulk.py tests)."""
    taken: set[str] = set()
    now = utc_now()
    documents = []
    statuses = ("open", "in_progress", "blocked", "deferred", "closed")
    for number in range(count):
        cell_id = new_root_id(prefix, 6, taken.__contains__)
        taken.add(cell_id)
        cell = Cell(
            id=cell_id,
            title=f"bulk cell {number}",
            description=f"Synthetic cell number {number}.",
            priority=number % 5,
            type=("task", "bug", "feature", "chore")[number % 4],
            status=statuses[number % 5],  # type: ignore[arg-type]
            labels=[f"area-{number % 7}"],
            assignee=f"agent{number % 13}" if number % 2 else None,
            created_at=now,
            updated_at=now,
            created_by="bulk",
        )
        documents.append((cell_path(cell_id), encode_cell(cell)))
    _git_commit_files(Path(ws.root), documents, f"bulk: {count} cells\n\nHive-Event: import\n")
    return sorted(taken)


def _git_commit_files(root: Path, documents: list[tuple[str, bytes]], message: str) -> None:
    """Commit ``documents`` (path, content) on top of HEAD with git's plumbing, and
    check them out."""
    marks = root / ".git" / "bulk-marks"
    stream = b"".join(
        b"blob\nmark :%d\ndata %d\n%s\n" % (number, len(data), data)
        for number, (_, data) in enumerate(documents, 1)
    )
    git(root, "fast-import", "--quiet", f"--export-marks={marks}", input=stream)
    blobs = dict(line.split() for line in marks.read_text().splitlines())
    marks.unlink()
    listing = "".join(
        f"100644 {blobs[f':{number}']}\t{path}\n" for number, (path, _) in enumerate(documents, 1)
    )
    git(root, "update-index", "--add", "--index-info", input=listing.encode())
    tree = git(root, "write-tree").strip()
    commit = git(root, "commit-tree", tree, "-p", "HEAD", input=message.encode()).strip()
    git(root, "update-ref", "-m", "bulk cells", "HEAD", commit)
    git(root, "checkout-index", "--all", "--force")
    git(root, "update-index", "-q", "--refresh")


CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CHROMIUM_PATHS = ("/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome")


def find_chromium() -> str | None:
    """The system's Chromium (Debian's package), or None."""
    explicit = os.environ.get("HIVE_CHROMIUM")
    if explicit:
        return explicit if os.path.exists(explicit) else None
    return next((p for p in CHROMIUM_PATHS if os.path.exists(p)), None)


def launch_args() -> list[str]:
    """Chromium's flags for this machine. Playwright itself starts it with a new,
    empty profile directory (it refuses an explicit ``--user-data-dir``)."""
    return list(CHROMIUM_ARGS)
