"""Running the real ``git`` (the standard library's ``subprocess`` only, imported when
git is run: a merge driver process, started once per file, imports this and not the
transport code in ``hive/git/remote.py``, and the commit-msg hook's quick path, which
runs git itself, only :func:`trailer_args`)."""

from __future__ import annotations

import os

from hive.errors import GitError

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    import subprocess

FETCH_TIMEOUT = 120


def run_git(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    """The real ``git`` run in ``root`` (output captured; a missing git is a GitError).

    In English (``LC_ALL=C``): its messages are read (a failure's reason, a fetch racing
    another), and git speaks the user's language otherwise (``LANGUAGE=de``: "Fehler:")."""
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", root, *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=FETCH_TIMEOUT,
            env=git_environment(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None


def git_environment() -> dict[str, str]:
    """The environment :func:`run_git` runs git in (this one, in English)."""
    return {**os.environ, "LC_ALL": "C"}


def add_trailer(root: str, message_file: str, key: str, value: str) -> None:
    """Add the trailer ``key: value`` to the commit message in ``message_file`` in
    place, by git's own rules (``git interpret-trailers``: with the message's other
    trailers, before its comments and scissors line; not when it is there already)."""
    done = run_git(root, *trailer_args(message_file, key, value))
    if done.returncode != 0:
        said = done.stderr.strip() or f"exit code {done.returncode}"
        raise GitError(f"git interpret-trailers could not add {key}: {said}")


def trailer_args(message_file: str, key: str, value: str) -> list[str]:
    """git's arguments that add the trailer (:func:`add_trailer`)."""
    return [
        "interpret-trailers",
        "--in-place",
        "--if-exists",
        "addIfDifferent",
        "--trailer",
        f"{key}: {value}",
        message_file,
    ]
