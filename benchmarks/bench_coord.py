"""Swarm mail and reservation benchmark: 500 active reservations, 10,000 messages.

Usage::

    python benchmarks/bench_coord.py               # prints a table
    python benchmarks/bench_coord.py --write-docs  # also updates docs/performance.md
    python benchmarks/bench_coord.py --runs 1 --cells 20 --agents 2 --messages 20  # smoke run

Builds a scratch repository (2,000 source files, 1,000 cells), registers 50
agents holding 10 exclusive reservations each (500 in all), and seeds 10,000
messages on ``refs/hive/mail`` with ``git fast-import`` (the same event format
hive writes), and an epic with six subtasks (one the sender's, in progress). Then
measures, in-process, medians of: reserve one pattern (checked against all 500),
release it, send a message, read an inbox, send on the epic's thread (it reaches
everyone working in the epic) and to ``coordinator`` (the coordinator of the epic
above the sender's work); and, as the baseline, ``git add && git commit`` of a
one-file change. ``--cells 10000`` shows whether the last two grow with the cells.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import GIT_ENV, Row, build_repo, git_baseline_ms, median_ms, run_single  # noqa: E402

from hive.domain.cells import create_cell, update_cell  # noqa: E402
from hive.domain.identity import mail_init  # noqa: E402
from hive.domain.mail import inbox, send_message  # noqa: E402
from hive.domain.maillog import MAIL_REF  # noqa: E402
from hive.domain.reservations import encode_file, release, reserve  # noqa: E402
from hive.domain.reservecore import reservation_path  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402
from hive.git.repo import Change  # noqa: E402
from hive.models import utc_now  # noqa: E402
from hive.models.reservation import Reservation, ReservationFile  # noqa: E402
from hive.store.cells import format_time  # noqa: E402

AGENTS = 50
PER_AGENT = 10
MESSAGES = 10_000


def seed_reservations(ws: Workspace, agents: int = AGENTS) -> None:
    now = utc_now()
    changes = []
    for number in range(agents):
        agent = f"agent{number:02d}"
        held = [
            Reservation(
                id=slot + 1,
                agent=agent,
                path_pattern=f"src/pkg{number % 40:02d}/mod{number}{slot}*.py",
                reason="bench",
                created_at=now,
                expires_at=now + timedelta(hours=8),
            )
            for slot in range(PER_AGENT)
        ]
        data = ReservationFile(agent=agent, reservations=held)
        changes.append(Change(reservation_path(agent), encode_file(data)))

    message = f"bench: {agents * PER_AGENT} reservations\n\nHive-Event: reserve\n"

    def plan(snap: object) -> tuple[list[Change], str, None]:
        return changes, message, None

    ws.write_files(plan)


def seed_messages(repo: Path, agents: int = AGENTS, messages: int = MESSAGES) -> None:
    """Agents and 10,000 message events as commits on refs/hive/mail, via fast-import."""
    now = format_time(utc_now())
    events: list[dict[str, object]] = [
        {
            "type": "agent_registered",
            "name": f"agent{n:02d}",
            "session": f"bench:{n}",
            "task": None,
            "project": str(repo),
            "at": now,
        }
        for n in range(agents)
    ]
    events += [
        {
            "type": "message_sent",
            "id": number + 1,
            "from": f"agent{number % agents:02d}",
            "to": [f"agent{(number + 1) % agents:02d}"],
            "subject": f"status {number}",
            "body": f"Progress report number {number}.",
            "thread_id": None,
            "importance": "urgent" if number % 97 == 0 else "normal",
            "ack_required": False,
            "at": now,
        }
        for number in range(messages)
    ]
    stamp = int(time.time())
    lines: list[bytes] = []
    for mark, event in enumerate(events, start=1):
        message = f"hive-mail: bench\n\n{json.dumps(event, sort_keys=True)}\n".encode()
        lines.append(f"commit {MAIL_REF}\nmark :{mark}\n".encode())
        lines.append(f"committer bench <bench@hive.local> {stamp} +0000\n".encode())
        lines.append(f"data {len(message)}\n".encode() + message)
        if mark > 1:
            lines.append(f"from :{mark - 1}\n".encode())
        lines.append(b"deleteall\n\n")
    subprocess.run(
        ["git", "-C", str(repo), "fast-import", "--quiet"],
        input=b"".join(lines),
        check=True,
        env={**os.environ, **GIT_ENV},
    )


def seed_epic(ws: Workspace, agents: int) -> str:
    """An epic coordinated by agent00 with five subtasks assigned to agents and one to
    ``ws``'s agent (in progress): its id."""
    epic = create_cell(ws, title="bench epic", type="epic", metadata={"coordinator": "agent00"})
    for number in range(5):
        agent = f"agent{number % agents:02d}"
        create_cell(ws, title=f"bench subtask {number}", parent=epic.id, assignee=agent)
    mine = create_cell(ws, title="bench: the sender's subtask", parent=epic.id)
    update_cell(ws, cell_id=mine.id, status="in_progress", assignee=ws.actor)
    return epic.id


def measure(base: Path, args: argparse.Namespace) -> list[Row]:
    runs, agents, messages = args.runs, args.agents, args.messages
    if agents < 2:
        raise SystemExit("--agents: at least 2 (agent01 reads its inbox)")
    repo = build_repo(base, args.cells, args.source_files)
    seed_messages(repo, agents, messages)
    ws = Workspace(str(repo), actor="bench", session="bench:main")
    seed_reservations(ws, agents)
    mail_init(ws, agent_name="bench")
    epic = seed_epic(ws, agents)
    reader = ws.for_actor("agent01")  # another agent's view, sharing this process's caches
    inbox(reader)  # replay the log once, as a long-lived agent process has
    baseline = git_baseline_ms(repo, runs)
    patterns = iter(f"src/pkg39/bench{number}.py" for number in range(10**6))
    held: list[str] = []
    reserve_ms = median_ms(lambda: held.append(_reserve_one(ws, next(patterns))), runs)
    releasing = iter(held)
    release_ms = median_ms(lambda: release(ws, paths=[next(releasing)]), runs)
    send_ms = median_ms(
        lambda: send_message(ws, to=["agent01"], subject="bench", body="hello"), runs
    )
    inbox_ms = median_ms(lambda: inbox(reader), runs)
    thread_ms = median_ms(
        lambda: send_message(ws, to=["agent01"], subject="bench", body="hi", thread_id=epic), runs
    )
    coordinator_ms = median_ms(
        lambda: send_message(ws, to=["coordinator"], subject="bench", body="hi"), runs
    )
    cells = f"{args.cells + 7:,} cells"
    target = "<= 10 ms"
    size = agents * PER_AGENT
    return [
        Row(size, "baseline: git add + git commit", baseline, None, ""),
        Row(size, f"reserve (vs {size:,} held, commit)", reserve_ms, baseline, target),
        Row(size, "release (commit)", release_ms, baseline, target),
        Row(size, f"send ({messages:,} messages in log)", send_ms, baseline, target),
        Row(size, f"inbox ({messages:,} messages in log)", inbox_ms, None, target),
        Row(size, f"send on an epic's thread ({cells})", thread_ms, baseline, target),
        Row(size, f"send to coordinator ({cells})", coordinator_ms, baseline, target),
    ]


def _reserve_one(ws: Workspace, pattern: str) -> str:
    reserve(ws, paths=[pattern], reason="bench")
    return pattern


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cells", type=int, default=1000, help="cells in the repository")
    parser.add_argument(
        "--agents", type=int, default=AGENTS, help=f"agents holding {PER_AGENT} reservations each"
    )
    parser.add_argument(
        "--messages", type=int, default=MESSAGES, help="messages in the mail log beforehand"
    )


def main() -> None:
    run_single(__doc__ or "", measure, marker="coord", first_column="reservations", options=options)


if __name__ == "__main__":
    main()
