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

_GROUP = ("group", "true", "1")
_EVERYBODY = ("all", "world", "everybody", "2")


def shared_directory_mode(paths: RepoPaths, mode: int) -> int:
    """``mode`` (a new directory's) as ``core.sharedRepository`` wants it: unchanged
    when the repository is not shared, group-writable and set-group-id when it is (for
    an octal value, exactly those bits, with search where there is read)."""
    from hive.git.configfile import Unsure, config_value

    try:
        value = (config_value(paths, "core", "sharedrepository") or "").strip().lower()
    except Unsure:
        return mode  # a value hive cannot read for sure: git's umask, as if not shared
    if value in _GROUP:
        return mode | 0o2070
    if value in _EVERYBODY:
        return mode | 0o2075
    if len(value) > 1 and value.startswith("0") and all(c in "01234567" for c in value):
        bits = int(value, 8) & 0o777
        return bits | ((bits & 0o444) >> 2) | 0o2000
    return mode


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
