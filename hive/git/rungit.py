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
    root: str,
    *args: str,
    input_text: str | None = None,
    timeout: float = FETCH_TIMEOUT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """The real ``git`` run in ``root`` (output captured, ``input_text`` its standard
    input; a missing git, or one that does not finish within ``timeout`` seconds, is a
    GitError). ``env``: the environment git runs in (None: :func:`git_environment`; a
    command that talks to a remote gets ``remote.no_prompt_environment``'s).

    In English (``LC_ALL=C``): its messages are read (a failure's reason, a fetch racing
    another), and git speaks the user's language otherwise (``LANGUAGE=de``: "Fehler:")."""
    result: subprocess.CompletedProcess[str] = _run(
        root, args, text=True, input_text=input_text, timeout=timeout, env=env
    )
    return result


def run_git_bytes(root: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    """:func:`run_git` with its output as git wrote it (bytes: a file's content)."""
    result: subprocess.CompletedProcess[bytes] = _run(root, args, text=False)
    return result


def _run(
    root: str,
    args: tuple[str, ...],
    *,
    text: bool,
    input_text: str | None = None,
    timeout: float = FETCH_TIMEOUT,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[Any]:
    import subprocess

    try:
        return subprocess.run(
            ["git", "-C", root, *args],
            input=input_text,
            capture_output=True,
            text=text,
            check=False,
            timeout=timeout,
            env=git_environment() if env is None else env,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"git {_command(args)} gave no answer within {timeout:g} s") from None
    except OSError as exc:
        raise GitError(f"git {_command(args)} failed: {exc}") from None


def _command(args: tuple[str, ...]) -> str:
    """git's command among ``args`` (``fetch`` of ``-c maintenance.auto=false fetch``)."""
    words = list(args)
    while len(words) > 2 and words[0] == "-c":
        del words[:2]
    return words[0] if words else ""


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
