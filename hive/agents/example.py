"""The example agent: a worker ``hive swarm run`` can start, with no LLM.

    hive swarm run EPIC --agent-cmd 'python -m hive.agents.example {prompt_file}'

It does what an agent does, through hive's tools (the JSON tool-call envelope
an LLM would emit, run in-process, or piped to ``hive tools run`` with
``--via cli``): reads its brief, registers, looks up its subtask, reserves the
files it owns, claims the subtask, makes a small change to each file, reports
progress, and finishes with ``swarm_complete`` (code, closed cell, released
reservations and outcome in one commit). Its identity comes from the
environment the runner sets: ``HIVE_AGENT``, ``HIVE_CELL``, ``HIVE_PROJECT``
(and ``HIVE_AGENT_TOKEN`` where registration issues one).

``--also-edit PATH`` edits a file it did not reserve as well (the scope
violation then shows in the outcome and in ``hive review``); ``--fail`` exits
with code 1 before completing; ``--pace S`` waits S seconds between steps.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import re
import subprocess
import sys
import time
from typing import Any

GLOB_CHARS = re.compile(r"[*?\[{]")
SKIPPED_DIRS = {".git", ".hive", "node_modules", ".venv", "__pycache__"}


class ToolError(Exception):
    """A tool call answered with ``{"error", "code"}``."""


class Agent:
    """One worker: its identity and how it calls hive's tools."""

    def __init__(
        self,
        project: str,
        name: str,
        cell_id: str,
        via: str,
        pace: float,
        token: str | None = None,
    ) -> None:
        self.project = project
        self.name = name
        self.token = token  # HIVE_AGENT_TOKEN: the credential the runner issued for it
        self.cell_id = cell_id
        self.via = via
        self.pace = pace
        self._context: Any = None

    def say(self, text: str) -> None:
        print(f"[{self.name}] {text}", flush=True)

    def call(self, tool: str, **args: Any) -> Any:
        """One tool call in a ``{"tool_calls": [...]}`` envelope; its result or ToolError."""
        envelope = json.dumps({"tool_calls": [{"name": tool, "args": args}]})
        transcript = self._run(envelope)
        results = transcript.get("results") or []
        answer = results[0] if results else transcript
        if "error" in answer:
            raise ToolError(f"{tool}: {answer['error']} ({answer.get('code')})")
        self.say(f"{tool} ok")
        if self.pace:
            time.sleep(self.pace)
        return answer.get("result")

    def _run(self, envelope: str) -> dict[str, Any]:
        if self.via == "cli":
            done = subprocess.run(
                ["hive", "-C", self.project, "tools", "run"],
                input=envelope,
                capture_output=True,
                text=True,
                check=False,
            )
            try:
                parsed: dict[str, Any] = json.loads(done.stdout)
            except ValueError:
                return {"error": done.stderr.strip() or "hive tools run failed", "code": "cli"}
            return parsed
        from hive.errors import HiveError
        from hive.tools.envelope import run_envelope

        if self._context is None:
            try:
                self._context = self._open()
            except HiveError as exc:
                return exc.to_dict()
        return run_envelope(self._context, envelope)

    def _open(self) -> Any:
        """The tool context, bound as ``hive mcp`` and ``hive tools run`` bind theirs:
        by the credential (re-checked at every call, so a worker whose credential was
        re-issued or retired is refused with ``not_your_identity``), else by
        registering the name (which fails if someone else holds it)."""
        from hive.tools.registry import open_context

        session = os.environ.get("HIVE_SESSION") or f"tools:{self.name}"
        return open_context(self.project, agent=self.name, token=self.token, session=session)


TOOLS = (
    "swarmmail_init",
    "hive_query",
    "swarmmail_reserve",
    "hive_start",
    "swarm_progress",
    "swarm_complete",
)
"""The tools :func:`work` calls."""


def preload() -> None:
    """What a worker forked by ``hive swarm run`` should find ready
    (``hive/domain/swarm/forked.py``), made once in the runner instead of in every worker:
    the in-process tool envelope, the modules the calls of :data:`TOOLS` load on first use,
    the validators of the models they use, and the command-line parser."""
    import hive.domain.cells
    import hive.domain.identity
    import hive.domain.reservations
    import hive.domain.stats
    import hive.domain.swarm.complete
    import hive.domain.swarm.progress
    import hive.git.arrivals  # reserve: the commits that came by git pull (reservecore)
    import hive.git.dulwichrepo  # a read racing another writer falls back on dulwich's
    import hive.tools.envelope  # noqa: F401
    from hive.models.config import VerifySettings
    from hive.models.mail import SendResult
    from hive.models.outcome import Outcome
    from hive.models.reservation import Reservation, ReservationFile
    from hive.tools.registry import prepare

    prepare(TOOLS, (VerifySettings, SendResult, Outcome, Reservation, ReservationFile))
    _parser()


def main(argv: list[str] | None = None) -> int:
    options = _parse(argv)
    missing = [
        key for key in ("HIVE_AGENT", "HIVE_CELL", "HIVE_PROJECT") if not os.environ.get(key)
    ]
    if missing:
        print(
            f"example agent: {', '.join(missing)} not set; run me with 'hive swarm run'",
            file=sys.stderr,
        )
        return 2
    agent = Agent(
        os.environ["HIVE_PROJECT"],
        os.environ["HIVE_AGENT"],
        os.environ["HIVE_CELL"],
        options.via,
        options.pace,
        os.environ.get("HIVE_AGENT_TOKEN") or None,
    )
    try:
        return work(agent, options)
    except (ToolError, OSError) as exc:
        agent.say(f"giving up: {exc}")
        return 1


def _parse(argv: list[str] | None) -> argparse.Namespace:
    return _parser().parse_args(argv)


@functools.cache
def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m hive.agents.example",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("prompt_file", help="the subtask brief written by hive swarm run")
    parser.add_argument(
        "--via",
        choices=("library", "cli"),
        default="library",
        help="run the tool envelope in-process or pipe it to 'hive tools run'",
    )
    parser.add_argument(
        "--also-edit",
        action="append",
        default=[],
        metavar="PATH",
        help="also edit PATH without reserving it (a scope violation)",
    )
    parser.add_argument("--fail", action="store_true", help="exit 1 instead of completing")
    parser.add_argument("--pace", type=float, default=0.0, help="seconds to wait between steps")
    return parser


def work(agent: Agent, options: argparse.Namespace) -> int:
    with open(options.prompt_file, encoding="utf-8") as handle:
        brief = handle.read()
    agent.say(f"brief: {brief.splitlines()[0] if brief else '(empty)'}")
    agent.call(
        "swarmmail_init",
        project_path=agent.project,
        agent_name=agent.name,
        task_description=f"subtask {agent.cell_id}",
    )
    cell = agent.call("hive_query", id=agent.cell_id)
    title = str(cell["title"])
    targets = files_to_change(agent.project, cell)
    patterns = list(cell.get("files_owned") or []) or targets
    agent.call("swarmmail_reserve", paths=patterns, reason=title, cell=agent.cell_id)
    agent.call("hive_start", id=agent.cell_id)
    agent.call(
        "swarm_progress",
        cell_id=agent.cell_id,
        status="in_progress",
        progress_percent=20,
        message=f"reserved {', '.join(patterns)}",
    )
    for path in targets + options.also_edit:
        change_file(agent.project, path, title, agent.cell_id, agent.name)
        agent.say(f"changed {path}")
    touched = list(dict.fromkeys(targets + options.also_edit))
    agent.call(
        "swarm_progress",
        cell_id=agent.cell_id,
        status="in_progress",
        progress_percent=80,
        message=f"changed {', '.join(touched)}",
    )
    if options.fail:
        agent.say("failing on purpose (--fail)")
        return 1
    evaluation = {
        "passed": True,
        "criteria": {"scope": not options.also_edit},
        "notes": "example agent: one small change per owned file",
    }
    done = agent.call(
        "swarm_complete",
        project_key=agent.project,
        agent_name=agent.name,
        cell_id=agent.cell_id,
        summary=f"{title}: changed {', '.join(touched)}",
        files_touched=touched,
        evaluation=evaluation,
    )
    agent.say(f"completed in commit {str(done.get('commit') or '')[:10]}")
    return 0


# ------------------------------------------------------------------ the change


def files_to_change(project: str, cell: dict[str, Any]) -> list[str]:
    """Concrete files for the subtask's ``files_owned``: literal paths as they are, a
    glob's existing files (or one new file under its fixed part)."""
    owned = [str(p) for p in cell.get("files_owned") or []]
    if not owned:
        return [f"notes/{cell['id']}.md"]
    found: list[str] = []
    for pattern in owned:
        if GLOB_CHARS.search(pattern) is None:
            found.append(pattern)
            continue
        matches = _existing(project, pattern)
        found += matches[:3] or [_new_file_under(pattern, str(cell["title"]))]
    return list(dict.fromkeys(found))


def _existing(project: str, pattern: str) -> list[str]:
    from hive.domain.globs import glob_matches

    start = GLOB_CHARS.split(pattern, maxsplit=1)[0].rsplit("/", 1)[0] if "/" in pattern else ""
    matches: list[str] = []
    for directory, dirs, files in os.walk(os.path.join(project, start) if start else project):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(files):
            relative = os.path.relpath(os.path.join(directory, name), project).replace(os.sep, "/")
            if glob_matches(pattern, relative):
                matches.append(relative)
    return matches


def _new_file_under(pattern: str, title: str) -> str:
    fixed = GLOB_CHARS.split(pattern, maxsplit=1)[0]
    directory = fixed.rsplit("/", 1)[0] if "/" in fixed else ""
    extension = ".md" if pattern.endswith(".md") else ".py"
    name = _slug(title) + extension
    return f"{directory}/{name}" if directory else name


def _slug(title: str) -> str:
    words = re.findall(r"[a-z0-9]+", title.lower())
    return "_".join(words[:5]) or "change"


def change_file(project: str, path: str, title: str, cell_id: str, agent: str) -> None:
    """Append a small, recognisable piece of work to ``path`` (created if missing)."""
    full = os.path.join(project, path)
    os.makedirs(os.path.dirname(full) or project, exist_ok=True)
    exists = os.path.exists(full)
    if path.endswith(".py"):
        head = "" if exists else f'"""{title}."""\n'
        name = _slug(title)
        name = f"task_{name}" if name[0].isdigit() else name
        text = (
            f'{head}\n\ndef {name}() -> str:\n    """{title} ({cell_id}, by {agent})."""\n'
            f"    return {title!r}\n"
        )
    elif path.endswith(".md"):
        head = "" if exists else f"# {title}\n"
        text = f"{head}\n## {title}\n\nDone by {agent} for {cell_id}.\n"
    else:
        text = f"{title} ({cell_id}, by {agent})\n"
    with open(full, "a", encoding="utf-8") as handle:
        handle.write(text)


if __name__ == "__main__":
    sys.exit(main())
