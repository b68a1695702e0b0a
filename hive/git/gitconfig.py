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

from hive.errors import GitError, InvalidInput
from hive.git.remote import run_git


@functools.cache
def git_available() -> bool:
    return shutil.which("git") is not None


def _git_config(root: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run_git(root, "config", *args)


def _why(root: str, stderr: str) -> str:
    """git's reason for refusing a config command: for a repository git will not use
    (``safe.directory``: another user's), ``git config --local`` says only "can only be
    used inside a git repository"; ``git rev-parse`` says why, and how to allow it."""
    said = stderr.strip()
    if "can only be used inside a git repository" in said:
        probe = run_git(root, "rev-parse", "--git-dir")
        if probe.returncode != 0 and probe.stderr.strip():
            return probe.stderr.strip()
    return said


def get_all(root: str, key: str) -> list[str]:
    """Every value of ``key`` in the repository's effective config ([] when unset)."""
    if not git_available():
        return []
    result = _git_config(root, "--get-all", key)
    if result.returncode not in (0, 1):  # 1: the key is not set
        raise GitError(f"git config --get-all {key}: {_why(root, result.stderr)}")
    return [line for line in result.stdout.splitlines() if line]


def _canonical(key: str) -> str:
    """``key`` as ``git config --list`` names it: section and variable lower-cased, a
    subsection (``remote.<name>.url``) as it is."""
    section, _, rest = key.partition(".")
    subsection, dot, variable = rest.rpartition(".")
    return f"{section.lower()}.{subsection}{dot}{variable.lower()}"


class GitConfig:
    """The repository's effective git config, read with one ``git config --list``, for a
    command that asks for several keys and sets a few. A value added through it is added
    here too (the repository's file is read last); a key replaced is asked of git again
    (what other scopes give it is git's to combine)."""

    def __init__(self, root: str) -> None:
        self.root = root
        result = _git_config(root, "--list", "-z")
        if result.returncode != 0:
            raise GitError(f"git config --list: {result.stderr.strip()}")
        self._values: dict[str, list[str]] = {}
        for entry in result.stdout.split("\0"):
            key, newline, value = entry.partition("\n")
            if key:  # a key without "=" has no value (and no newline)
                self._values.setdefault(key, []).extend([value] if newline else [])
        self._changed: set[str] = set()

    def get_all(self, key: str) -> list[str]:
        """Every value of ``key`` ([] when unset)."""
        name = _canonical(key)
        if name in self._changed:
            return get_all(self.root, key)
        return [value for value in self._values.get(name, []) if value]

    def set_value(self, key: str, value: str) -> bool:
        """Set ``key`` in the repository's config; False when it already had that value."""
        if self.get_all(key) == [value]:
            return False
        self._write(key, "--replace-all", value)
        return True

    def add_value(self, key: str, value: str) -> bool:
        """Add ``value`` to the multi-valued ``key`` unless present; True when added."""
        if value in self.get_all(key):
            return False
        self._write(key, "--add", value)
        return True

    def remove_value(self, key: str, value: str) -> bool:
        """Remove ``value`` from the multi-valued ``key`` (every copy); True when it was
        there."""
        if value not in self.get_all(key):
            return False
        self._write(key, "--unset-all", value, "--fixed-value")
        return True

    def default_remote(self, branch: str | None, command: str) -> str:
        """The remote ``command`` (``hive sync``) talks to when none is named, chosen as
        ``git fetch`` chooses: the upstream remote of ``branch`` (``refs/heads/<b>``:
        ``branch.<b>.remote``), else the only remote, else ``origin`` (with no remote at
        all, the fetch then says how to add one); several remotes and none of these is an
        InvalidInput naming them."""
        names = self.remotes()
        name = branch.removeprefix("refs/heads/") if branch else ""
        upstream = self.get_all(f"branch.{name}.remote")[-1:] if name else []
        if upstream and upstream[0] in names:
            return upstream[0]
        if len(names) == 1:
            return names[0]
        if not names or "origin" in names:
            return "origin"
        tracking = f" and {name} tracks none of them" if name else ""
        raise InvalidInput(
            f"which remote? this clone has {len(names)} remotes ({', '.join(sorted(names))}),"
            f" none named origin{tracking}: name one ('{command} REMOTE'), or give the"
            f" branch an upstream ('git branch --set-upstream-to REMOTE/BRANCH')"
        )

    def remotes(self) -> list[str]:
        """Names of the configured remotes."""
        return [
            key[len("remote.") : -len(".url")]
            for key in self._values
            if key.startswith("remote.") and key.endswith(".url") and key.count(".") >= 2
        ]

    def pushes_elsewhere(self, remote: str) -> bool:
        """Whether a push to ``remote`` may go somewhere its fetch does not read from: a
        ``remote.<name>.pushurl`` or any ``url.<base>.pushInsteadOf`` is configured."""
        if self.get_all(f"remote.{remote}.pushurl"):
            return True
        rewrites = (key for key in self._values if key.startswith("url."))
        return any(key.endswith(".pushinsteadof") for key in rewrites)

    def _write(self, key: str, how: str, value: str, *options: str) -> None:
        result = _git_config(self.root, "--local", *options, how, key, value)
        name = _canonical(key)
        if result.returncode == 0 and how == "--add":  # the local file is read last
            self._values.setdefault(name, []).append(value)
        else:
            self._changed.add(name)
        if result.returncode != 0:
            raise GitError(f"cannot set git config {key}: {_why(self.root, result.stderr)}")


def check_attribute(root: str, paths: Sequence[str], attribute: str) -> dict[str, str | None]:
    """The value git gives ``attribute`` for each of ``paths`` (any attributes file):
    the value, ``set``, ``unset`` (``-merge``) or None (unspecified); one ``git
    check-attr`` for all of them ({} when git fails or is missing)."""
    if not git_available() or not paths:
        return {}
    result = run_git(root, "check-attr", "-z", attribute, "--", *paths)
    if result.returncode != 0:
        return {}
    fields = result.stdout.split("\0")
    values: dict[str, str | None] = {}
    for start in range(0, len(fields) - 2, 3):  # path, attribute, value; a NUL after each
        path, value = fields[start], fields[start + 2]
        values[path] = None if value in ("unspecified", "") else value
    return values
