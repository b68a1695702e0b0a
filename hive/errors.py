"""The one error hierarchy of hive.

Every error a user or an agent can cause is a ``HiveError``. Each class carries a
stable machine ``code`` (used in structured tool errors) and a process
``exit_code`` (used by the CLI). Nothing below the surfaces prints or exits: the
surfaces turn these into a one-line message or ``{"error": ..., "code": ...}``.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from typing import Any, ClassVar


class HiveError(Exception):
    """Base class: a clear, one-line message plus a code."""

    code: ClassVar[str] = "hive_error"
    exit_code: ClassVar[int] = 1

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        payload: dict[str, Any] = {"error": self.message, "code": self.code}
        payload.update(self.details)
        return payload


class NotAGitRepository(HiveError):
    code = "not_a_git_repository"
    exit_code = 2


class NotInitialized(HiveError):
    code = "not_initialized"
    exit_code = 2


class InvalidInput(HiveError):
    """Bad arguments: bad priority, bad status, bad glob, bad JSON, ..."""

    code = "invalid_input"
    exit_code = 2


class PathOutsideRepository(InvalidInput):
    code = "path_outside_repository"


class NotFound(HiveError):
    code = "not_found"
    exit_code = 3


class AmbiguousId(HiveError):
    code = "ambiguous_id"
    exit_code = 3


class Conflict(HiveError):
    """The operation is valid but the current state refuses it."""

    code = "conflict"
    exit_code = 4


class AlreadyClaimed(Conflict):
    code = "already_claimed"


class DependencyCycle(Conflict):
    code = "dependency_cycle"


class BlockedByDependency(Conflict):
    code = "blocked_by_dependency"


class DirtyHiveFile(Conflict):
    """A .hive file hive must rewrite has local edits that are not committed."""

    code = "dirty_hive_file"


class DirtySourceFile(Conflict):
    """A file outside .hive/ that a hive write commits (``swarm_complete``'s touched
    files) has changes in the working tree the write would lose."""

    code = "dirty_source_file"


class StagedSourceFile(DirtySourceFile):
    """A file outside .hive/ that a hive write commits is staged (``git add``) with
    content the write would replace, or is unmerged."""

    code = "staged_source_file"


class ReservationConflict(Conflict):
    code = "reservation_conflict"


class GitStateConflict(Conflict):
    """The user's git is mid-operation (merge, rebase, cherry-pick, bisect, ...) or on a
    detached HEAD: a hive commit now could be dropped by the way out, so none is made."""

    code = "git_state"


class PermissionDenied(HiveError):
    code = "permission_denied"
    exit_code = 5


class NotYourIdentity(PermissionDenied):
    """A call names (or a process claims) an identity it cannot prove."""

    code = "not_your_identity"


class NotOwner(PermissionDenied):
    """The cell, reservation or message belongs to someone else (override: force + reason)."""

    code = "not_owner"


class NotRegistered(PermissionDenied):
    """The operation acts as an agent, and the caller has not registered one."""

    code = "not_registered"


class NameTaken(Conflict):
    """The agent name is registered to someone holding its credential."""

    code = "name_taken"


class AgentRetired(Conflict):
    """Work handed to an agent whose identity was retired here (and not registered again)."""

    code = "agent_retired"


class SymlinkRefused(Conflict):
    """A symlink where hive keeps its own files: hive never writes through one."""

    code = "symlink_refused"


class LockTimeout(HiveError):
    code = "lock_timeout"
    exit_code = 6


class CorruptFile(HiveError):
    """A stored file that cannot be parsed or does not validate."""

    code = "corrupt_file"
    exit_code = 7


class GitError(HiveError):
    """The repository is in a state hive cannot write to."""

    code = "git_error"
    exit_code = 8


class GateFailed(HiveError):
    """A verification gate (or an evaluation) did not pass; nothing was written."""

    code = "gate_failed"
    exit_code = 9


# Tool-error codes that no HiveError class carries (the tool surfaces make them), as
# exit codes of the table in docs/cli.md.
_SURFACE_EXIT_CODES = {
    "invalid_envelope": 2,
    "invalid_call": 2,
    "invalid_arguments": 2,
    "unknown_tool": 2,
    "internal_error": 70,
}


def exit_code_of(code: str) -> int:
    """The process exit code for a structured tool error's ``code``: the exit code of
    the HiveError class with that code (1 when none is known)."""
    if code in _SURFACE_EXIT_CODES:
        return _SURFACE_EXIT_CODES[code]
    pending: list[type[HiveError]] = [HiveError]
    while pending:
        cls = pending.pop()
        if cls.code == code:
            return cls.exit_code
        pending.extend(cls.__subclasses__())
    return 1


def no_room(exc: BaseException) -> str | None:
    """What to say of a write that found no room (a full disk, a quota, a file size
    limit: ``OSError`` ENOSPC, EDQUOT, EFBIG, or SQLite's "database or disk is full"),
    else None. Such an error can come after a commit landed (updating the state
    index), so the words do not say nothing was written."""
    import errno

    if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG):
        where = f" to {exc.filename}" if exc.filename else ""
        why = exc.strerror or str(exc)
    elif type(exc).__name__ == "OperationalError" and "disk is full" in str(exc):
        where, why = " to hive's state index", str(exc)
    else:
        return None
    return (
        f"a write{where} failed: {why} (the disk is full, or a quota or file size limit was"
        " reached): free some space, then see with 'hive log' whether the change was made"
        " before running the command again"
    )


# dulwich's errors of an object it cannot read as what its id says (named, not imported:
# dulwich is the git layer's alone, and this module is imported by every process)
_DAMAGED_OBJECT_ERRORS = frozenset(
    {
        "ObjectFormatException",
        "ChecksumMismatch",
        "NotTreeError",
        "NotCommitError",
        "NotBlobError",
        "NotTagError",
        "ApplyDeltaError",
    }
)


def damaged_repository(exc: BaseException) -> str | None:
    """What to say of a git object hive needed and could not read (a missing object, a
    damaged loose object or pack: dulwich's ``KeyError`` of an object id, its format
    and checksum errors, zlib's), else None: the repository is at fault, not hive,
    and ``git fsck`` names what is broken."""
    kind = type(exc)
    if kind.__module__.startswith("dulwich") and kind.__name__ in _DAMAGED_OBJECT_ERRORS:
        what = f"{kind.__name__}: {exc}"
    elif kind.__module__ == "zlib":
        what = f"a compressed object does not inflate: {exc}"
    elif isinstance(exc, KeyError) and (missing := _object_id(exc.args)):
        what = f"object {missing} is missing"
    elif isinstance(exc, IsADirectoryError | NotADirectoryError) and (
        stored := _object_file(exc.filename)
    ):
        what = f"{stored} is not a file"
    else:
        return None
    return (
        f"a git object hive needs cannot be read ({what}): the repository is damaged;"
        " 'git fsck' names what is broken; restore it (from another clone or a backup),"
        " then run the command again"
    )


def _object_file(filename: object) -> str | None:
    """The object store's part of ``filename`` (``objects/ab/cdef...``) when it names a
    loose object or a pack's file (one a broken tool made a directory, or whose folder
    it made a file), else None."""
    if not isinstance(filename, str):
        return None
    parts = filename.replace("\\", "/").split("/")[-3:]
    if len(parts) < 3 or parts[0] != "objects":
        return None
    folder, name = parts[1], parts[2]
    loose = len(folder) == 2 and _is_hex(folder) and len(name) in (38, 62) and _is_hex(name)
    packed = folder == "pack" and name.startswith("pack-") and name.endswith((".pack", ".idx"))
    return "/".join(parts) if loose or packed else None


def _is_hex(text: str) -> bool:
    return all(char in "0123456789abcdef" for char in text)


def _object_id(args: tuple[object, ...]) -> str | None:
    """The hex object id a ``KeyError`` of dulwich's object store names, else None."""
    if len(args) != 1 or not isinstance(args[0], (bytes, str)):
        return None
    text = args[0].decode("ascii", "replace") if isinstance(args[0], bytes) else args[0]
    return text if len(text) in (40, 64) and _is_hex(text) else None


def not_a_bug(exc: BaseException) -> HiveError | None:
    """An exception that is not hive's bug, as the error the surfaces answer with (the
    CLI's last line of defence, the tool registry's): a write that found no room
    (:func:`no_room`, a ``GitError``) or a damaged repository
    (:func:`damaged_repository`, a ``CorruptFile``); None for anything else."""
    full = no_room(exc)
    if full is not None:
        return GitError(full)
    damaged = damaged_repository(exc)
    if damaged is not None:
        return CorruptFile(damaged)
    return None
