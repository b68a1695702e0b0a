"""File tools for agents, sandboxed to the repository: list, read, search, and
write *proposals* (queued for an arbiter, applied only with ``--allow-write``).

Symlinks are never followed out of the repository (or into ``.git``), and every
listed file passes the caller's permission predicate (lexical and real path)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import secrets
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ConfigDict, Field, ValidationError

from hive.domain.globs import glob_matches, normalize_pattern
from hive.errors import Conflict, HiveError, InvalidInput, NotFound, PathOutsideRepository
from hive.models.base import HiveModel
from hive.text import looks_binary

if TYPE_CHECKING:
    from filelock import FileLock

PROPOSALS_DIR = "proposals"
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__"}
MAX_READ = 1_000_000
MAX_WRITE = 1_000_000
MAX_SEARCH_LINE = 4000
SEARCH_SECONDS = 10.0
MAX_SEARCH_FILES = 20_000

PathFilter = Callable[[str], bool]
WriteCheck = Callable[[str, list[str]], None]


def resolve(root: str, path: str) -> tuple[str, str]:
    """(absolute, repository-relative) for ``path``; refuses escapes (also via symlinks)."""
    if not isinstance(path, str) or "\0" in path:
        raise InvalidInput(f"invalid path {path!r}")
    candidate = os.path.normpath(os.path.join(root, path.strip() or "."))
    if not _within(os.path.normpath(root), candidate):
        raise PathOutsideRepository(f"{path!r} is outside the repository")
    real = real_relative(root, candidate)
    if real is None:
        raise PathOutsideRepository(f"{path!r} resolves (through a symlink) outside the repository")
    from hive.store.layout import in_git_dir

    relative = os.path.relpath(candidate, root).replace(os.sep, "/")
    if in_git_dir(relative) or in_git_dir(real):  # any case; a nested repository's too
        raise PathOutsideRepository(f"{path!r} is inside .git, which tools may not touch")
    return candidate, relative


def _within(root: str, path: str) -> bool:
    return path == root or path.startswith(root + os.sep)


def real_relative(root: str, path: str) -> str | None:
    """The repository-relative form of ``path`` after following every symlink;
    None when it leads outside the repository."""
    real_root = os.path.realpath(root)
    real = os.path.realpath(os.path.join(root, path))
    if not _within(real_root, real):
        return None
    return os.path.relpath(real, real_root).replace(os.sep, "/")


def permission_path(path: str) -> str:
    """The canonical repository-relative form used for permission checks."""
    return normalize_pattern(path)


def fs_list(
    root: str,
    *,
    dir: str = ".",
    pattern: str | None = None,
    max_results: int = 200,
    allow: PathFilter | None = None,
) -> dict[str, Any]:
    """Files under ``dir`` that match ``pattern`` and ``allow``; symlinks leading out of
    the repository (or into .git) are left out, symlinked directories not entered.
    ``.hive/`` (hive's own records, which agents reach through the hive_* tools) is
    listed only when ``dir`` is in it: thousands of cells would crowd out the code."""
    # not at import: ops describe tools without it
    from hive.store.layout import HIVE_DIR, is_dot_git, is_hive_dir

    base, relative = resolve(root, dir)
    if not os.path.isdir(base):
        if os.path.exists(base):
            raise InvalidInput(f"{dir!r} is a file, not a directory: fs_read reads it")
        raise NotFound(f"no directory {dir!r}")
    matcher = _matcher(pattern)
    skipped = SKIPPED_DIRS if is_hive_dir(relative.split("/")[0]) else SKIPPED_DIRS | {HIVE_DIR}
    files: list[str] = []
    for current, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d.casefold() not in skipped and not is_dot_git(d))
        for name in sorted(names):
            path = os.path.relpath(os.path.join(current, name), root).replace(os.sep, "/")
            if not matcher(path) or not _reachable(root, path):
                continue
            if allow is not None and not allow(path):
                continue
            files.append(path)
            if len(files) >= max_results:
                return {"files": files, "count": len(files), "truncated": True}
    return {"files": files, "count": len(files), "truncated": False}


def _reachable(root: str, path: str) -> bool:
    """A listed file the tools may open: its real path is in the repository, not .git."""
    if not os.path.islink(os.path.join(root, path)):
        return True
    from hive.store.layout import in_git_dir

    real = real_relative(root, path)
    return real is not None and not in_git_dir(real)


def _matcher(pattern: str | None) -> Any:
    """A glob (``*.py``, one without a ``/`` at any depth); ``regex:RE`` is a regular
    expression searched in the path, and so is a pattern anchored with ``^`` or ``$``
    (a glob has no anchors; seed 000's own example lists with ``py$``)."""
    if not pattern:
        return lambda path: True
    if pattern.startswith("regex:") or pattern.startswith("^") or pattern.endswith("$"):
        try:
            compiled = re.compile(pattern.removeprefix("regex:"))
        except re.error as exc:
            raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
        return lambda path: compiled.search(path[:MAX_SEARCH_LINE]) is not None
    glob = pattern if "/" in pattern else f"**/{pattern}"
    return lambda path: glob_matches(glob, path)


def fs_read(root: str, *, path: str, max_bytes: int = 50_000) -> dict[str, Any]:
    full, relative = resolve(root, path)
    if not os.path.isfile(full):
        if os.path.isdir(full):
            raise InvalidInput(f"{path!r} is a directory, not a file: fs_list lists its files")
        if os.path.exists(full):
            raise InvalidInput(f"{path!r} is not a regular file (a pipe, a device or a socket)")
        raise NotFound(f"no file {path!r}")
    size = os.path.getsize(full)
    with open(full, "rb") as handle:
        data = handle.read(min(max_bytes, MAX_READ))
    if looks_binary(data):
        raise InvalidInput(
            f"{path!r} is a binary file ({size} bytes), not text: fs_read reads text files"
        )
    return {
        "path": relative,
        "bytes": size,
        "truncated": size > len(data),
        "content": _text(data, whole=size <= len(data)),
    }


def _text(data: bytes, *, whole: bool) -> str:
    """``data`` as text; a cut file's last character, when the cut split its UTF-8
    bytes, is left out rather than shown as U+FFFD (other bad bytes are)."""
    import codecs

    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=whole)


# The search runs in a child interpreter so a catastrophic regex such as (a+)+$
# can be stopped: it prints one JSON match per line; at the deadline it is killed
# and the matches printed so far are returned with "timed_out": true.
_SEARCH_CHILD = r"""
import json, os, re, stat, sys
job = json.load(sys.stdin)
compiled = re.compile(job["pattern"])
limit = job["max_line"]
for path in job["files"]:
    full = os.path.join(job["root"], path)
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NONBLOCK)  # a named pipe: never waited on
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            continue
        with open(fd, encoding="utf-8", newline=None) as handle:
            number = 0
            while True:
                line = handle.readline(limit)  # a line's first characters, memory bounded
                if not line:
                    break
                number += 1
                rest = line
                while rest and not rest.endswith("\n"):
                    rest = handle.readline(65536)  # the rest of a long line: not matched
                text = line.rstrip("\n")
                if compiled.search(text):
                    found = {"file": path, "line": number, "text": text[:500]}
                    print(json.dumps(found), flush=True)
    except (OSError, UnicodeDecodeError):
        continue
"""


def search_text(
    root: str,
    *,
    pattern: str,
    dir: str = ".",
    max_matches: int = 200,
    allow: PathFilter | None = None,
    seconds: float = SEARCH_SECONDS,
) -> dict[str, Any]:
    """Regex search over the files ``fs_list`` would show, however large (read line by
    line: a file over MAX_READ was skipped, and said nothing); lines are matched on
    their first MAX_SEARCH_LINE characters, and the whole search stops after ``seconds``."""
    try:
        re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
    listed = fs_list(root, dir=dir, max_results=MAX_SEARCH_FILES, allow=allow)
    job = {
        "pattern": pattern,
        "root": root,
        "files": listed["files"],
        "max_line": MAX_SEARCH_LINE,
    }
    output, timed_out = _run_search_child(job, seconds)
    matches: list[dict[str, Any]] = []
    for line in output.splitlines():
        with contextlib.suppress(ValueError):
            matches.append(json.loads(line))
        if len(matches) >= max_matches:
            return {"matches": matches, "truncated": True}
    # files past MAX_SEARCH_FILES were not searched: say so (a narrower dir searches them)
    result: dict[str, Any] = {"matches": matches, "truncated": timed_out or listed["truncated"]}
    if timed_out:
        result["timed_out"] = True
    return result


def _run_search_child(job: dict[str, Any], seconds: float) -> tuple[str, bool]:
    process = subprocess.Popen(
        [sys.executable, "-I", "-S", "-c", _SEARCH_CHILD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        out, _ = process.communicate(json.dumps(job).encode(), timeout=seconds)
        return out.decode("utf-8", "replace"), False
    except subprocess.TimeoutExpired:
        process.kill()
        out, _ = process.communicate()
        return out.decode("utf-8", "replace").rsplit("\n", 1)[0], True


# ------------------------------------------------------------------ proposals


class Proposal(HiveModel):
    id: str
    path: str
    content: str
    create_dirs: bool = True
    agent: str
    created_at: float
    base_sha256: str = Field(default="", description="the file when proposed; 'absent' if none")
    status: Literal["pending", "approved", "rejected", "applied", "failed"] = "pending"
    notes: str = ""
    result: str = ""


class Decision(HiveModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    path: str
    action: Literal["approve", "reject"]
    notes: str = ""


class Decisions(HiveModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    decisions: list[Decision] = Field(min_length=1)


def propose_write(
    root: str, state_dir: str, *, agent: str, path: str, content: str, create_dirs: bool = True
) -> dict[str, Any]:
    """Queue a write for the arbiter; nothing is written now."""
    full, relative = resolve(root, path)
    if path.strip().endswith(("/", os.sep)) or relative == "." or os.path.isdir(full):
        raise InvalidInput(f"fs_write needs a file path, not the directory {path!r}")
    from hive.store.layout import is_hive_dir

    if is_hive_dir(relative.split("/")[0]):
        raise InvalidInput("fs_write does not write .hive/: use the hive_* tools")
    if os.path.exists(full) and not os.path.isfile(full):  # a pipe: never opened, waited on
        raise InvalidInput(f"fs_write writes regular files only: {path!r} is not one")
    if len(content.encode("utf-8")) > MAX_WRITE:
        raise InvalidInput(f"content is larger than {MAX_WRITE} bytes")
    proposal = Proposal(
        id=f"p-{int(time.time())}-{secrets.token_hex(3)}",
        path=relative,
        content=content,
        create_dirs=create_dirs,
        agent=agent,
        created_at=time.time(),
        base_sha256=_digest(full),
    )
    _save(state_dir, proposal)
    return {"queued": True, "proposal_id": proposal.id, "path": relative, "status": "pending"}


def _digest(full: str) -> str:
    """The file's SHA-256; "absent", or "" for what is not a regular file (not read)."""
    try:
        with open(os.open(full, os.O_RDONLY | os.O_NONBLOCK), "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return ""
            return hashlib.sha256(handle.read()).hexdigest()
    except FileNotFoundError:
        return "absent"
    except OSError:
        return ""


def list_proposals(state_dir: str, status: str | None = None) -> list[Proposal]:
    directory = os.path.join(state_dir, PROPOSALS_DIR)
    found: list[Proposal] = []
    if not os.path.isdir(directory):
        return found
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".json"):
            continue
        try:
            with open(os.path.join(directory, name), encoding="utf-8") as handle:
                proposal = Proposal.model_validate_json(handle.read())
        except (OSError, ValidationError):
            continue
        if status is None or proposal.status == status:
            found.append(proposal)
    return sorted(found, key=lambda p: (p.created_at, p.id))


def _locked(state_dir: str) -> FileLock:
    """The proposals' lock (filelock is imported when proposals are decided, not by
    every command whose domain imports this module: ``hive doctor``)."""
    from filelock import FileLock

    from hive.store.layout import make_state_dir

    make_state_dir(state_dir)
    return FileLock(os.path.join(state_dir, "proposals.lock"), timeout=30)


def decide(
    root: str,
    state_dir: str,
    text: str,
    *,
    allow_write: bool,
    check: WriteCheck | None = None,
) -> list[dict[str, Any]]:
    """Apply an arbiter's strict-JSON decisions to the pending proposals, under a
    lock so two arbiters never apply one proposal twice."""
    from filelock import Timeout

    decisions = parse_decisions(text)
    try:
        with _locked(state_dir):
            return _decide(root, state_dir, decisions, allow_write, check)
    except Timeout:
        raise Conflict("another arbiter is deciding proposals; try again") from None


_OPEN = ("pending", "approved")  # a decision may still change these


def _decide(
    root: str, state_dir: str, decisions: Decisions, allow_write: bool, check: WriteCheck | None
) -> list[dict[str, Any]]:
    # Approved but not yet written is still open: deciding it again with allow_write
    # applies it (or a reject withdraws it), as deciding it first with allow_write would.
    # (status is read again for each decision: one that named the path before may
    # have applied it already).
    undecided = [p for p in list_proposals(state_dir) if p.status in _OPEN]
    report: list[dict[str, Any]] = []
    for decision in decisions.decisions:
        matching = [p for p in undecided if p.path == decision.path and p.status in _OPEN]
        if not matching:
            report.append({"path": decision.path, "status": "no_pending_proposal"})
            continue
        for proposal in matching:
            proposal.notes = decision.notes
            if decision.action == "reject":
                proposal.status = "rejected"
            elif allow_write:
                _apply(root, proposal, check)
            else:
                proposal.status = "approved"
                proposal.result = "approved; not written (run with --allow-write to apply)"
            _save(state_dir, proposal)
            report.append(_entry(proposal))
    return report


def _entry(proposal: Proposal) -> dict[str, Any]:
    return {
        "id": proposal.id,
        "path": proposal.path,
        "status": proposal.status,
        "result": proposal.result,
    }


def apply_approved(
    root: str, state_dir: str, check: WriteCheck | None = None
) -> list[dict[str, Any]]:
    """Write every approved (not yet applied) proposal."""
    from filelock import Timeout

    report = []
    try:
        with _locked(state_dir):
            for proposal in list_proposals(state_dir, "approved"):
                _apply(root, proposal, check)
                _save(state_dir, proposal)
                report.append(_entry(proposal))
    except Timeout:
        raise Conflict("another arbiter is applying proposals; try again") from None
    return report


def parse_decisions(text: str) -> Decisions:
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        message = exc.msg if isinstance(exc, json.JSONDecodeError) else "nested too deeply"
        raise InvalidInput(f"decisions are not valid JSON: {message}") from None
    try:
        return Decisions.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "document"
        raise InvalidInput(
            f'decisions must be {{"decisions": [{{"path", "action": "approve"|"reject", '
            f'"notes"}}]}}: {where}: {error["msg"]}'
        ) from None


def _apply(root: str, proposal: Proposal, check: WriteCheck | None) -> None:
    """Write one approved proposal: the target is resolved and permission-checked
    again now (lexical and real path), and refused if it changed since proposed."""
    try:
        full = _checked_target(root, proposal, check)
        directory = os.path.dirname(full)
        if not os.path.isdir(directory):
            if not proposal.create_dirs:
                raise InvalidInput(f"directory of {proposal.path} does not exist")
            os.makedirs(directory, exist_ok=True)
        _write_atomically(full, proposal.content)
        proposal.status = "applied"
        proposal.result = f"wrote {len(proposal.content.encode())} bytes"
    except (OSError, HiveError) as exc:
        proposal.status = "failed"
        proposal.result = exc.message if isinstance(exc, HiveError) else str(exc)


def _checked_target(root: str, proposal: Proposal, check: WriteCheck | None) -> str:
    full, relative = resolve(root, proposal.path)
    if os.path.isdir(full):
        raise InvalidInput(f"{proposal.path} is a directory")
    real = real_relative(root, relative) or relative
    from hive.store.layout import is_hive_dir

    if is_hive_dir(real.split("/")[0]):  # as propose_write checks the path given
        raise InvalidInput(f"{proposal.path} resolves into .hive/, which fs_write does not write")
    if check is not None:
        check(proposal.agent, list(dict.fromkeys([relative, real])))
    if proposal.base_sha256 and _digest(full) != proposal.base_sha256:
        raise Conflict(f"{proposal.path} changed since the write was proposed; propose again")
    return full


def _write_atomically(full: str, content: str) -> None:
    """Write a temporary file next to the target (inside the repository), then rename."""
    directory, name = os.path.split(full)
    temp = os.path.join(directory, f".{name}.hive-tmp-{os.getpid()}-{secrets.token_hex(3)}")
    try:
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(content)
        os.replace(temp, full)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)


def _save(state_dir: str, proposal: Proposal) -> None:
    directory = os.path.join(state_dir, PROPOSALS_DIR)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{proposal.id}.json")
    temp = f"{path}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(proposal.model_dump_json())
    os.replace(temp, path)
