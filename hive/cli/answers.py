"""Answers to repeated read commands, served before the CLI is even imported.

The ``--json`` output of ``hive ready``, ``hive list`` and ``hive show`` is a
pure function of hive's version, the ``.hive`` tree of the commit HEAD points
at and the command line. Agents ask these questions over and over, and a
fresh process spends most of its time importing typer and pydantic and
unpickling 10,000 cells, so two things are kept under ``<git common dir>/hive/``:

* ``answers/<key>``: the bytes a read command printed, keyed by a hash of
  exactly those inputs, served to the next identical command line;
* ``ready.answer``: the ready list saved by the last process that read or
  wrote the cells of a commit (see ``hive.store.ready_answer``), which answers
  ``hive ready --json [--limit N]`` even the first time it is asked.

An answer is stored only when the command exited 0 and wrote nothing to
stderr (no corrupt-cell warnings); HIVE_AUTOCOMMIT=0 (reads see the index) and
an unreadable HEAD are never cached. A commit that changes ``.hive`` changes
the key, so nothing is ever invalidated by hand (a commit of code only keeps
the answers); old answers are pruned to the newest :data:`KEEP`. This module
imports only the standard library and hive's dulwich-free git readers.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import sys
import time
from typing import TYPE_CHECKING

from hive import __version__

if TYPE_CHECKING:
    from hive.git.refs import RepoPaths

READ_COMMANDS = frozenset({"ready", "list", "show"})
KEEP = 64
PENDING_WAIT = 100  # x 10 ms at most for a ready list another process is saving
VALUED_GLOBALS = ("-C", "--actor")


HeadState = tuple["RepoPaths", str, "str | None"]  # repository, HEAD's commit, its .hive tree


def cache_key(argv: list[str], state: HeadState | None) -> tuple[str, str] | None:
    """(answers directory, key) for a cacheable command line at ``state``, else None."""
    if state is None or not _cacheable(argv):
        return None
    paths, commit, tree = state
    # Any commit with the same .hive tree has the same answers (a code commit keeps them).
    version = tree or f"commit:{commit}"
    material = "\0".join([__version__, paths.git_dir, version, *argv])
    digest = hashlib.sha256(material.encode("utf-8", "surrogateescape")).hexdigest()
    return os.path.join(paths.hive_state_dir, "answers"), digest


def head_state(argv: list[str]) -> HeadState | None:
    """The repository, HEAD's commit and its ``.hive`` tree (when loose), read cheaply."""
    from hive.errors import HiveError
    from hive.git.loose import hive_tree
    from hive.git.refs import discover, read_head_fast

    try:
        paths = discover(_directory(argv))
    except (HiveError, OSError):
        return None
    if os.path.lexists(paths.index_twin):
        return None  # a hive write is under way or was killed: the full path recovers it
    head = read_head_fast(paths)
    if head is None or head.commit is None:
        return None
    return paths, head.commit, hive_tree(paths, head.commit)


def _cacheable(argv: list[str]) -> bool:
    if os.environ.get("HIVE_AUTOCOMMIT", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    if "--json" not in argv or "--claim" in argv or "--help" in argv:
        return False
    return _command(argv) in READ_COMMANDS


def _command(argv: list[str]) -> str | None:
    position = command_position(argv)
    return None if position is None else argv[position]


def command_position(argv: list[str]) -> int | None:
    """Where the command name is in ``argv`` (after the global options), if anywhere."""
    position = 0
    while position < len(argv):
        token = argv[position]
        if token in VALUED_GLOBALS:
            position += 2
        elif token.startswith(("-C", "--actor=")) or token == "--json":
            position += 1
        else:
            return None if token.startswith("-") else position
    return None


def _directory(argv: list[str]) -> str:
    directory = "."
    position = 0
    while position < len(argv):
        token = argv[position]
        if token == "-C" and position + 1 < len(argv):
            directory = argv[position + 1]
            position += 2
            continue
        if token.startswith("-C") and len(token) > 2:
            directory = token[2:]
        if not token.startswith("-"):
            break
        position += 1
    return directory


def serve(argv: list[str], state: HeadState | None) -> bool:
    """Print the stored answer for ``argv`` at ``state`` if there is one; True when served."""
    if state is None:
        return False
    try:
        answer = _stored_answer(argv, state) or _saved_ready_list(argv, state)
    except Exception:  # a cache must never break a command: the full CLI answers instead
        return False
    if answer is None:
        return False
    try:
        sys.stdout.buffer.write(answer)
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`hive ready --json | head`)
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return True


def _stored_answer(argv: list[str], state: HeadState) -> bytes | None:
    key = cache_key(argv, state)
    if key is None:
        return None
    directory, digest = key
    try:
        with open(os.path.join(directory, digest), "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _saved_ready_list(argv: list[str], state: HeadState) -> bytes | None:
    """``hive ready --json [--limit N]`` from the ready list saved for HEAD's commit."""
    if not _cacheable(argv) or _command(argv) != "ready":
        return None
    limit = _ready_limit(argv[argv.index("ready") + 1 :])
    if limit == -1:
        return None
    from hive.store import ready_answer

    paths, commit, tree = state
    documents = ready_answer.load(paths.hive_state_dir, commit, tree, __version__)
    waited = 0
    while (
        documents is None
        and waited < PENDING_WAIT
        and ready_answer.pending(paths.hive_state_dir, commit)
    ):  # the process that just wrote HEAD is saving its ready list: worth a short wait
        time.sleep(0.01)
        waited += 1
        documents = ready_answer.load(paths.hive_state_dir, commit, tree, __version__)
    if documents is None:
        return None
    return ready_answer.render(documents if limit is None else documents[:limit])


def _ready_limit(options: list[str]) -> int | None:
    """The --limit of ``ready``'s own options: None for all, -1 when not understood."""
    limit: str | None = None
    position = 0
    while position < len(options):
        token = options[position]
        if token == "--json":
            position += 1
        elif token in ("--limit", "-n") and position + 1 < len(options):
            limit = options[position + 1]
            position += 2
        elif token.startswith("--limit="):
            limit = token.partition("=")[2]
            position += 1
        else:
            return -1
    if limit is None:
        return None
    return int(limit) if limit.isdigit() and int(limit) >= 1 else -1


class Recorder:
    """Collects what a cacheable command prints, and stores it if all went well."""

    def __init__(self, key: tuple[str, str] | None) -> None:
        self.key = key
        self.parts: list[bytes] = []
        self.spoiled = False

    def stdout(self, data: bytes) -> None:
        if self.key is not None:
            self.parts.append(data)

    def stderr(self) -> None:
        self.spoiled = True

    def store(self) -> None:
        if self.key is None or self.spoiled or not self.parts:
            return
        directory, digest = self.key
        with contextlib.suppress(OSError):
            os.makedirs(directory, exist_ok=True)
            temp = os.path.join(directory, f".{digest}.{os.getpid()}.tmp")
            with open(temp, "wb") as handle:
                handle.write(b"".join(self.parts))
            os.replace(temp, os.path.join(directory, digest))
            _prune(directory)


def _prune(directory: str) -> None:
    entries = [entry for entry in os.scandir(directory) if not entry.name.startswith(".")]
    if len(entries) <= KEEP:
        return
    entries.sort(key=lambda entry: entry.stat().st_mtime_ns)
    for entry in entries[: len(entries) - KEEP]:
        with contextlib.suppress(OSError):
            os.unlink(entry.path)


RECORDER: Recorder | None = None


def main() -> None:
    """Console-script entry point: a stored answer, or the full CLI."""
    argv = sys.argv[1:]
    state = head_state(argv) if _cacheable(argv) else None  # read commands leave it as is
    if serve(argv, state):
        return
    global RECORDER
    RECORDER = Recorder(cache_key(argv, state))
    from hive.cli.main import run

    try:
        run()
    except SystemExit as exit_:
        if exit_.code in (None, 0):
            RECORDER.store()
        raise
    RECORDER.store()
