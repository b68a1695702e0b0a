"""``core.sharedRepository``: a directory hive makes under the git directory (an
object fan-out directory, a directory of refs or of their logs) gets the permissions git
gives it in a repository several users share, so that another user's git can still add
objects and refs beside hive's (else: "insufficient permission for adding an object to
repository database")."""

from __future__ import annotations

import os

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from hive.git.refs import RepoPaths

_EVERYBODY = ("all", "world", "everybody")


def shared_directory_mode(paths: RepoPaths, mode: int) -> int:
    """``mode`` (a new directory's) as ``core.sharedRepository`` wants it, read as git
    reads it (``git_config_perm``): unchanged when the repository is not shared,
    group-writable and set-group-id when it is (for a file mode, exactly those bits,
    with search where there is read)."""
    value = _setting(paths)
    if value is None or value == "umask":
        return mode
    if value == "group":
        return mode | 0o2070
    if value in _EVERYBODY:
        return mode | 0o2075
    if not value or any(c not in "01234567" for c in value):  # not octal: a boolean
        shared = value.lower() in ("true", "yes", "on") or (value.isdigit() and int(value) > 0)
        return mode | 0o2070 if shared else mode
    number = int(value, 8)
    if number in (0, 1, 2):
        return (mode, mode | 0o2070, mode | 0o2075)[number]
    if number & 0o600 != 0o600:
        return mode  # git refuses the value ("the owner ... must always have read and write")
    bits = number & 0o666
    return bits | ((bits & 0o444) >> 2) | 0o2000


def _setting(paths: RepoPaths) -> str | None:
    """``core.sharedRepository`` as written; a config hive cannot read for sure (a
    worktree's own config, includes) is asked of git (no git: None, git's umask)."""
    from hive.git.configfile import Unsure, config_value

    try:
        return config_value(paths, "core", "sharedrepository")
    except Unsure:
        from hive.errors import GitError
        from hive.git.rungit import run_git

        try:
            found = run_git(paths.root, "config", "--get", "core.sharedRepository")
        except GitError:
            return None
        return found.stdout.rstrip("\n") if found.returncode == 0 else None


def make_directories(paths: RepoPaths, directory: str) -> None:
    """``os.makedirs(directory, exist_ok=True)``, each directory it makes given the
    permissions of a shared repository (see :func:`shared_directory_mode`)."""
    missing: list[str] = []
    current = directory
    while current and not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    os.makedirs(directory, exist_ok=True)
    for made in reversed(missing):
        mode = os.stat(made).st_mode & 0o7777
        wanted = shared_directory_mode(paths, mode)
        if wanted != mode:
            os.chmod(made, wanted)
