"""Where things live inside ``.hive/``.

Cells are sharded by the first character of their root hash (32 shards) so
that a commit rewrites two small trees instead of one tree with 10,000
entries; a child lives in its parent's shard::

    .hive/config.yaml
    .hive/cells/x/hv-x7k2q9.yaml
    .hive/cells/x/hv-x7k2q9.a3f8.yaml

Between 1,000 and 30,000 cells this keeps the bytes of tree objects rewritten
per commit smallest (see docs/performance.md).
"""

from __future__ import annotations

import os

from hive.errors import GitError, NotInitialized
from hive.store.ids import hash_part

HIVE_DIR = ".hive"


def is_hive_dir(name: str) -> bool:
    """Whether the path component ``name`` is hive's directory to some file system: in
    any case, as one that ignores case (macOS, Windows) takes ``.HIVE``."""
    return name.casefold() == HIVE_DIR


def is_dot_git(name: str) -> bool:
    """Whether the path component ``name`` is a git directory to some file system, as
    git's own check of a path it may track takes it (``verify_path``): ``.git`` in any
    case (``.GIT/config`` is git's config where case is ignored), with trailing dots
    or spaces (dropped by NTFS), or NTFS's short name ``git~1``. git refuses to check
    such a path out: a commit holding one breaks every clone's checkout."""
    folded = name.casefold()
    return folded.rstrip(". ") == ".git" or folded == "git~1"


def in_git_dir(relative: str) -> bool:
    """Whether a relative path (``/`` or the OS's separator) has a git directory among
    its components (:func:`is_dot_git`): at the top, or a nested repository's."""
    return any(is_dot_git(part) for part in relative.replace(os.sep, "/").split("/"))


CONFIG_PATH = f"{HIVE_DIR}/config.yaml"
CONTEXT_PATH = f"{HIVE_DIR}/context.yaml"  # the project memory (hive/domain/memory.py)
OUTCOMES_DIR = f"{HIVE_DIR}/outcomes"  # outcome records (hive/domain/outcomes.py)
PERMISSIONS_DIR = f"{HIVE_DIR}/permissions"  # permission decisions (domain/permissions.py)
CELLS_DIR = f"{HIVE_DIR}/cells"
CELL_SUFFIX = ".yaml"
# list/ready compare at most this many shown cells' files with the committed ones (a
# page; not every file of --all on a large hive), to warn of an edit that does not load
EDIT_CHECK_LIMIT = 200
SHARD_WIDTH = 1


def shard_of(cell_id: str) -> str:
    part = hash_part(cell_id)
    return part[:SHARD_WIDTH].ljust(SHARD_WIDTH, "_")


def cell_path(cell_id: str) -> str:
    """Repository-relative POSIX path of a cell's YAML file."""
    return f"{CELLS_DIR}/{shard_of(cell_id)}/{cell_id}{CELL_SUFFIX}"


def cell_id_from_path(path: str) -> str | None:
    """The id a cell file is named for, or None if ``path`` is not a cell file."""
    if not path.startswith(CELLS_DIR + "/") or not path.endswith(CELL_SUFFIX):
        return None
    name = path.rsplit("/", 1)[-1]
    return name[: -len(CELL_SUFFIX)]


def state_dir_not_a_directory(folder: str) -> GitError:
    """The error for hive's state directory (``.git/hive``) when a file stands there."""
    return GitError(
        f"{folder} is not a directory: hive keeps its lock and state there; "
        "move that file away and run the command again"
    )


def unwritable(path: str, error: OSError) -> GitError:
    """The error for a file or directory of hive's under the git directory that cannot
    be made or opened for writing (a read-only ``.git``, another user's files)."""
    return GitError(
        f"cannot write {path}: {error.strerror or error} (a command that changes anything"
        " needs to write hive's locks and state under the git directory; reading commands"
        " such as 'hive list' still work)"
    )


def make_state_dir(folder: str) -> None:
    """Make hive's state directory (``.git/hive``) if it is missing; a file in its
    place is named (GitError), never a traceback."""
    try:
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise state_dir_not_a_directory(folder) from None
    except OSError as exc:
        raise unwritable(folder, exc) from None


def not_initialized(root: str) -> NotInitialized:
    """The error of a repository without a hive; a ``.hive`` that is not a directory
    (which ``hive init`` refuses) is named with the way out (the full and the lean
    command-line paths word it alike)."""
    place = os.path.join(root, HIVE_DIR)
    if os.path.lexists(place) and not os.path.isdir(place):
        return NotInitialized(
            f"{root} has no hive yet, and {place} is a file, not a directory: hive keeps"
            " its cells in .hive/; move or rename it, then run 'hive init'"
        )
    return NotInitialized(f"{root} has no hive yet: run 'hive init' first")
