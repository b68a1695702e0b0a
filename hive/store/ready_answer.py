"""The ready list of one commit, kept serialized for fresh processes.

Whenever a process has the parsed cells of a commit at hand and saves them
for later processes, it also saves that commit's ready list here: one JSON
document per ready cell, in order. A fresh ``hive ready --json [--limit N]``
then needs neither pydantic nor typer: it reads HEAD from the ref files,
loads this file and joins the first N documents into exactly the bytes the
full CLI would print. Standard library only (imported before anything else).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import time

FORMAT = "hive-ready-1"
FILE_NAME = "ready.answer"
PENDING_NAME = "ready.pending"
PENDING_FRESH = 3.0  # seconds a pending mark is believed


def answer_path(state_dir: str) -> str:
    return os.path.join(state_dir, FILE_NAME)


def save(
    state_dir: str, commit: str, hive_tree: str | None, version: str, documents: list[bytes]
) -> None:
    """Store ``documents`` (each cell's JSON, indent 2) as the ready list of ``commit``
    and of any commit with the same ``.hive`` tree."""
    path = answer_path(state_dir)
    temp = f"{path}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        os.makedirs(state_dir, exist_ok=True)
        with open(temp, "wb") as handle:
            marshal.dump((FORMAT, version, commit, hive_tree, documents), handle)
        os.replace(temp, path)


def load(state_dir: str, commit: str, hive_tree: str | None, version: str) -> list[bytes] | None:
    """The ready documents saved by this version of hive for ``commit`` or for a
    commit with the same ``.hive`` tree, if any."""
    try:
        with open(answer_path(state_dir), "rb") as handle:
            payload = marshal.load(handle)
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not isinstance(payload, tuple) or len(payload) != 5:
        return None
    kind, saved_version, saved_commit, saved_tree, documents = payload
    if (kind, saved_version) != (FORMAT, version):
        return None
    if saved_commit != commit and (hive_tree is None or saved_tree != hive_tree):
        return None
    return documents if isinstance(documents, list) else None


def render(documents: list[bytes]) -> bytes:
    """The bytes ``pydantic_core.to_json(cells, indent=2)`` plus a newline would give."""
    if not documents:
        return b"[]\n"
    body = b",\n".join(b"  " + document.replace(b"\n", b"\n  ") for document in documents)
    return b"[\n" + body + b"\n]\n"


def mark_pending(state_dir: str, commit: str) -> None:
    """Say that the ready list of ``commit`` is being saved right now."""
    path = os.path.join(state_dir, PENDING_NAME)
    temp = f"{path}.{os.getpid()}.tmp"
    with contextlib.suppress(OSError):
        with open(temp, "w", encoding="ascii") as handle:
            handle.write(commit)
        os.replace(temp, path)


def pending(state_dir: str, commit: str) -> bool:
    """Whether a process said, moments ago, that it is saving ``commit``'s ready list."""
    path = os.path.join(state_dir, PENDING_NAME)
    try:
        with open(path, encoding="ascii") as handle:
            marked = handle.read().strip()
        age = time.time() - os.stat(path).st_mtime
    except (OSError, UnicodeDecodeError):
        return False
    return marked == commit and age < PENDING_FRESH
