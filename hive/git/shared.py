"""``core.sharedRepository``: what hive makes under the git directory gets the
permissions git gives it in a repository several users share, so that another user's git
can still add objects and refs beside hive's (else: "insufficient permission for adding an
object to repository database"). Directories (an object fan-out directory, a directory of
refs or of their logs) become group-writable and set-group-id; files (loose objects, packs,
ref files and their locks, reflogs, the index) get git's file modes (``adjust_shared_perm``
in git's path.c, which this follows bit for bit)."""

from __future__ import annotations

import os
from contextvars import ContextVar, Token

from hive.record import suppress

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.git.refs import RepoPaths

_EVERYBODY = ("all", "world", "everybody")
PERM_GROUP = 0o660
PERM_EVERYBODY = 0o664


# The value held for one write (:class:`PermHeld`): ((the repository's common dir, the
# worktree's git dir: a worktree's own config may set it otherwise), perm).
_held: ContextVar[tuple[tuple[str, str], int] | None] = ContextVar("hive_shared_perm", default=None)


class PermHeld:
    """``core.sharedRepository`` read once for a whole write, as git reads its config
    once per command: within the block, :func:`shared_perm` of the same repository and
    worktree answers it without reading the config files again (a write makes several
    objects, a ref, its log and the index, each asking)."""

    def __init__(self, paths: RepoPaths) -> None:
        self.paths = paths
        self.token: Token[tuple[tuple[str, str], int] | None] | None = None

    def __enter__(self) -> int:
        perm = shared_perm(self.paths)
        self.token = _held.set(((self.paths.common_dir, self.paths.git_dir), perm))
        return perm

    def __exit__(self, *exc: object) -> None:
        if self.token is not None:
            _held.reset(self.token)
            self.token = None


def shared_perm(paths: RepoPaths) -> int:
    """``core.sharedRepository`` read as git reads it (``git_config_perm``): 0 when the
    repository is not shared (git's umask; also ``sharedRepository =``), 0o660 for group
    (also the key written without ``=``), 0o664 for everybody, and
    ``-mode`` for a file mode (``0640``: exactly those bits, never write for others);
    within :class:`PermHeld` for this repository, the value read there."""
    held = _held.get()
    if held is not None and held[0] == (paths.common_dir, paths.git_dir):
        return held[1]
    return _configured_perm(paths)


def _configured_perm(paths: RepoPaths) -> int:
    """:func:`shared_perm` from the config files (and the environment's settings)."""
    from hive.git.configfile import is_true, setting

    value = setting(paths, "core", "sharedRepository", valueless="group")
    if value is None or value == "umask":
        return 0
    if value == "group":
        return PERM_GROUP
    if value in _EVERYBODY:
        return PERM_EVERYBODY
    if not value or any(c not in "01234567" for c in value):  # not octal: a boolean
        return PERM_GROUP if is_true(value) else 0
    number = int(value, 8)
    if number in (0, 1, 2):
        return (0, PERM_GROUP, PERM_EVERYBODY)[number]
    if number & 0o600 != 0o600:
        return 0  # git refuses the value ("the owner ... must always have read and write")
    return -(number & 0o666)


def shared_mode(perm: int, mode: int, *, directory: bool = False) -> int:
    """The permission bits git gives a file (or directory) made with ``mode`` in a
    repository whose :func:`shared_perm` is ``perm`` (git's ``calc_shared_perm``, and for
    a directory: search where there is read, set-group-id when the group gains access)."""
    if perm == 0:
        return mode
    tweak = abs(perm)
    if not mode & 0o200:
        tweak &= ~0o222  # a read-only file (an object) stays read-only
    if mode & 0o100:
        tweak |= (tweak & 0o444) >> 2
    shared = (mode & ~0o777) | tweak if perm < 0 else mode | tweak
    if directory:
        shared |= (shared & 0o444) >> 2
        if shared & 0o060:
            shared |= 0o2000
    return shared


def share_descriptor(perm: int, descriptor: int) -> None:
    """Give the file open as ``descriptor``, just made, git's mode for ``perm`` (nothing
    when the repository is not shared); a file another user owns is left as it is."""
    if perm == 0:
        return
    mode = os.fstat(descriptor).st_mode & 0o7777
    wanted = shared_mode(perm, mode)
    if wanted != mode:
        with suppress(PermissionError):  # not ours: its owner's git gave it its mode
            os.fchmod(descriptor, wanted)


def shared_directory_mode(paths: RepoPaths, mode: int) -> int:
    """``mode`` (a new directory's) as ``core.sharedRepository`` wants it."""
    return shared_mode(shared_perm(paths), mode, directory=True)


def make_directories(
    paths: RepoPaths, directory: str, *, made: Callable[[str], None] | None = None
) -> None:
    """``os.makedirs(directory, exist_ok=True)``, each directory it makes given the
    permissions of a shared repository (see :func:`shared_directory_mode`).

    Race-free: the missing directories are made one at a time from the top, and one that
    another process makes meanwhile (``FileExistsError``) is that process's to set up,
    so it is neither chmodded nor stat'ed here. ``made`` (a test hook) is called with each
    directory found missing, just before it is made."""
    missing: list[str] = []
    current = directory
    while current and not os.path.isdir(current):
        missing.append(current)
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    perm = shared_perm(paths) if missing else 0
    for path in reversed(missing):
        if made is not None:
            made(path)
        try:
            os.mkdir(path)
        except FileExistsError:
            if not os.path.isdir(path):
                raise
            continue  # another process made it (and gives it its mode)
        if perm:
            mode = os.stat(path).st_mode & 0o7777
            wanted = shared_mode(perm, mode, directory=True)
            if wanted != mode:
                os.chmod(path, wanted)
