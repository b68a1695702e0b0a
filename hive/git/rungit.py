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
    from typing import Any

FETCH_TIMEOUT = 120


def run_git(
    root: str, *args: str, input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    """The real ``git`` run in ``root`` (output captured, ``input_text`` its standard
    input; a missing git is a GitError).

    In English (``LC_ALL=C``): its messages are read (a failure's reason, a fetch racing
    another), and git speaks the user's language otherwise (``LANGUAGE=de``: "Fehler:")."""
    result: subprocess.CompletedProcess[str] = _run(root, args, text=True, input_text=input_text)
    return result


def run_git_bytes(root: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """:func:`run_git` with its output as git wrote it (bytes: a file's content)."""
    result: subprocess.CompletedProcess[bytes] = _run(root, args, text=False)
    return result


def _run(
    root: str, args: tuple[str, ...], *, text: bool, input_text: str | None = None
) -> subprocess.CompletedProcess[Any]:
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", root, *args],
            input=input_text,
            capture_output=True,
            text=text,
            check=False,
            timeout=FETCH_TIMEOUT,
            env=git_environment(),
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {args[0]} failed: {exc}") from None


def git_environment() -> dict[str, str]:
    """The environment :func:`run_git` runs git in (this one, in English)."""
    return {**os.environ, "LC_ALL": "C"}


def add_trailers(root: str, message_file: str, trailers: list[tuple[str, str]]) -> None:
    """Add each trailer ``(key, value)`` to the commit message in ``message_file`` in
    place, by git's own rules (``git interpret-trailers``: with the message's other
    trailers, before its comments and scissors line; not when it is there already)."""
    done = run_git(root, *trailer_args(message_file, trailers))
    if done.returncode != 0:
        said = done.stderr.strip() or f"exit code {done.returncode}"
        keys = ", ".join(key for key, _ in trailers)
        raise GitError(f"git interpret-trailers could not add {keys}: {said}")


def trailer_args(message_file: str, trailers: list[tuple[str, str]]) -> list[str]:
    """git's arguments that add the trailers (:func:`add_trailers`)."""
    given = [part for key, value in trailers for part in ("--trailer", f"{key}: {value}")]
    return [
        "interpret-trailers",
        "--in-place",
        "--if-exists",
        "addIfDifferent",
        *given,
        message_file,
    ]
