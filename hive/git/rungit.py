"""Running the real ``git`` (the standard library's ``subprocess`` only: a merge driver
process, started once per file, imports this and not the transport code in
``hive/git/remote.py``)."""

from __future__ import annotations

import os
import subprocess

from hive.errors import GitError

FETCH_TIMEOUT = 120


def run_git(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``git`` run in ``root`` (output captured; a missing git is a GitError).

    In English (``LC_ALL=C``): its messages are read (a failure's reason, a fetch racing
    another), and git speaks the user's language otherwise (``LANGUAGE=de``: "Fehler:")."""
    try:
        return subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=FETCH_TIMEOUT,
            env={**os.environ, "LC_ALL": "C"},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None


def add_trailer(root: str, message_file: str, key: str, value: str) -> None:
    """Add the trailer ``key: value`` to the commit message in ``message_file`` in
    place, by git's own rules (``git interpret-trailers``: with the message's other
    trailers, before its comments and scissors line; not when it is there already)."""
    done = run_git(
        root,
        "interpret-trailers",
        "--in-place",
        "--if-exists",
        "addIfDifferent",
        "--trailer",
        f"{key}: {value}",
        message_file,
    )
    if done.returncode != 0:
        said = done.stderr.strip() or f"exit code {done.returncode}"
        raise GitError(f"git interpret-trailers could not add {key}: {said}")
