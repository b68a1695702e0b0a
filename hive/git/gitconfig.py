"""Reading and writing the repository's own git config with the real ``git config``.

Only settings that matter to the ``git`` program itself are written here (the
merge driver, remote refspecs): without a ``git`` binary nobody runs ``git
merge`` or ``git fetch``, so :func:`git_available` being False just means
there is nothing to configure.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Sequence

from hive.errors import GitError
from hive.git.remote import run_git


@functools.cache
def git_available() -> bool:
    return shutil.which("git") is not None


def _git_config(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_git(root, "config", *args)


def get_all(root: str, key: str) -> list[str]:
    """Every value of ``key`` in the repository's effective config ([] when unset)."""
    if not git_available():
        return []
    result = _git_config(root, "--get-all", key)
    if result.returncode not in (0, 1):  # 1: the key is not set
        raise GitError(f"git config --get-all {key}: {result.stderr.strip()}")
    return [line for line in result.stdout.splitlines() if line]


def set_value(root: str, key: str, value: str) -> bool:
    """Set ``key`` in the repository's config; False when it already had that value."""
    if get_all(root, key) == [value]:
        return False
    result = _git_config(root, "--local", "--replace-all", key, value)
    if result.returncode != 0:
        raise GitError(f"cannot set git config {key}: {result.stderr.strip()}")
    return True


def add_value(root: str, key: str, value: str) -> bool:
    """Add ``value`` to the multi-valued ``key`` unless present; True when added."""
    if value in get_all(root, key):
        return False
    result = _git_config(root, "--local", "--add", key, value)
    if result.returncode != 0:
        raise GitError(f"cannot set git config {key}: {result.stderr.strip()}")
    return True


def remotes(root: str) -> list[str]:
    """Names of the configured remotes."""
    if not git_available():
        return []
    result = _git_config(root, "--get-regexp", r"^remote\..*\.url$")
    names = []
    for line in result.stdout.splitlines():
        key = line.split(" ", 1)[0]
        names.append(key[len("remote.") : -len(".url")])
    return names


def check_attribute(root: str, paths: Sequence[str], attribute: str) -> dict[str, str | None]:
    """The value git gives ``attribute`` for each of ``paths`` (any attributes file), or
    None; one ``git check-attr`` for all of them ({} when git fails or is missing)."""
    if not git_available() or not paths:
        return {}
    result = run_git(root, "check-attr", "-z", attribute, "--", *paths)
    if result.returncode != 0:
        return {}
    fields = result.stdout.split("\0")
    values: dict[str, str | None] = {}
    for start in range(0, len(fields) - 2, 3):  # path, attribute, value; a NUL after each
        path, value = fields[start], fields[start + 2]
        values[path] = None if value in ("unspecified", "unset", "") else value
    return values
