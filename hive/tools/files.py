"""File tools for agents, sandboxed to the repository: list, read, search, and
write *proposals* (queued for an arbiter, applied only with ``--allow-write``)."""

from __future__ import annotations

import json
import os
import re
import secrets
import time
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hive.domain.globs import glob_matches, normalize_pattern
from hive.errors import InvalidInput, NotFound, PathOutsideRepository

PROPOSALS_DIR = "proposals"
SKIPPED_DIRS = {".git", ".venv", "node_modules", "__pycache__"}
MAX_READ = 1_000_000
MAX_WRITE = 1_000_000


def resolve(root: str, path: str) -> tuple[str, str]:
    """(absolute, repository-relative) for ``path``; refuses escapes (also via symlinks)."""
    if not isinstance(path, str) or "\0" in path:
        raise InvalidInput(f"invalid path {path!r}")
    candidate = os.path.normpath(os.path.join(root, path.strip() or "."))
    real_root = os.path.realpath(root)
    if candidate != os.path.normpath(root) and not candidate.startswith(
        os.path.normpath(root) + os.sep
    ):
        raise PathOutsideRepository(f"{path!r} is outside the repository")
    real = os.path.realpath(candidate)
    if real != real_root and not real.startswith(real_root + os.sep):
        raise PathOutsideRepository(f"{path!r} resolves (through a symlink) outside the repository")
    relative = os.path.relpath(candidate, root).replace(os.sep, "/")
    if relative.split("/")[0] == ".git":
        raise PathOutsideRepository(f"{path!r} is inside .git, which tools may not touch")
    return candidate, relative


def permission_path(path: str) -> str:
    """The canonical repository-relative form used for permission checks."""
    return normalize_pattern(path)


def fs_list(
    root: str, *, dir: str = ".", pattern: str | None = None, max_results: int = 200
) -> dict[str, Any]:
    base, _ = resolve(root, dir)
    if not os.path.isdir(base):
        raise NotFound(f"no directory {dir!r}")
    matcher = _matcher(pattern)
    files: list[str] = []
    for current, dirs, names in os.walk(base):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        for name in sorted(names):
            path = os.path.relpath(os.path.join(current, name), root).replace(os.sep, "/")
            if matcher(path):
                files.append(path)
                if len(files) >= max_results:
                    return {"files": files, "count": len(files), "truncated": True}
    return {"files": files, "count": len(files), "truncated": False}


def _matcher(pattern: str | None) -> Any:
    if not pattern:
        return lambda path: True
    if pattern.startswith("regex:"):
        try:
            compiled = re.compile(pattern[len("regex:") :])
        except re.error as exc:
            raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
        return lambda path: compiled.search(path) is not None
    glob = pattern if "/" in pattern else f"**/{pattern}"
    return lambda path: glob_matches(glob, path)


def fs_read(root: str, *, path: str, max_bytes: int = 50_000) -> dict[str, Any]:
    full, relative = resolve(root, path)
    if not os.path.isfile(full):
        raise NotFound(f"no file {path!r}")
    size = os.path.getsize(full)
    with open(full, "rb") as handle:
        data = handle.read(min(max_bytes, MAX_READ))
    return {
        "path": relative,
        "bytes": size,
        "truncated": size > len(data),
        "content": data.decode("utf-8", errors="replace"),
    }


def search_text(
    root: str, *, pattern: str, dir: str = ".", max_matches: int = 200
) -> dict[str, Any]:
    try:
        compiled = re.compile(pattern)
    except re.error as exc:
        raise InvalidInput(f"invalid regex {pattern!r}: {exc}") from None
    listing = fs_list(root, dir=dir, max_results=20_000)["files"]
    matches: list[dict[str, Any]] = []
    for path in listing:
        full = os.path.join(root, path)
        try:
            if os.path.getsize(full) > MAX_READ:
                continue
            with open(full, encoding="utf-8") as handle:
                lines = handle.read().splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, start=1):
            if compiled.search(line):
                matches.append({"file": path, "line": number, "text": line[:500]})
                if len(matches) >= max_matches:
                    return {"matches": matches, "truncated": True}
    return {"matches": matches, "truncated": False}


# ------------------------------------------------------------------ proposals


class Proposal(BaseModel):
    id: str
    path: str
    content: str
    create_dirs: bool = True
    agent: str
    created_at: float
    status: Literal["pending", "approved", "rejected", "applied", "failed"] = "pending"
    notes: str = ""
    result: str = ""


class Decision(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    path: str
    action: Literal["approve", "reject"]
    notes: str = ""


class Decisions(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    decisions: list[Decision] = Field(min_length=1)


def propose_write(
    root: str, state_dir: str, *, agent: str, path: str, content: str, create_dirs: bool = True
) -> dict[str, Any]:
    """Queue a write for the arbiter; nothing is written now."""
    _, relative = resolve(root, path)
    if relative.split("/")[0] == ".hive":
        raise InvalidInput("fs_write does not write .hive/: use the hive_* tools")
    if len(content.encode("utf-8")) > MAX_WRITE:
        raise InvalidInput(f"content is larger than {MAX_WRITE} bytes")
    proposal = Proposal(
        id=f"p-{int(time.time())}-{secrets.token_hex(3)}",
        path=relative,
        content=content,
        create_dirs=create_dirs,
        agent=agent,
        created_at=time.time(),
    )
    _save(state_dir, proposal)
    return {"queued": True, "proposal_id": proposal.id, "path": relative, "status": "pending"}


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


def decide(root: str, state_dir: str, text: str, *, allow_write: bool) -> list[dict[str, Any]]:
    """Apply an arbiter's strict-JSON decisions to the pending proposals."""
    decisions = parse_decisions(text)
    pending = list_proposals(state_dir, "pending")
    report: list[dict[str, Any]] = []
    for decision in decisions.decisions:
        matching = [p for p in pending if p.path == decision.path]
        if not matching:
            report.append({"path": decision.path, "status": "no_pending_proposal"})
            continue
        for proposal in matching:
            proposal.notes = decision.notes
            if decision.action == "reject":
                proposal.status = "rejected"
            elif allow_write:
                _apply(root, proposal)
            else:
                proposal.status = "approved"
                proposal.result = "approved; not written (run with --allow-write to apply)"
            _save(state_dir, proposal)
            report.append(
                {"id": proposal.id, "path": proposal.path, "status": proposal.status,
                 "result": proposal.result}
            )  # fmt: skip
    return report


def apply_approved(root: str, state_dir: str) -> list[dict[str, Any]]:
    """Write every approved (not yet applied) proposal."""
    report = []
    for proposal in list_proposals(state_dir, "approved"):
        _apply(root, proposal)
        _save(state_dir, proposal)
        report.append({"id": proposal.id, "path": proposal.path, "status": proposal.status,
                       "result": proposal.result})  # fmt: skip
    return report


def parse_decisions(text: str) -> Decisions:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"decisions are not valid JSON: {exc.msg} (line {exc.lineno})") from None
    try:
        return Decisions.model_validate(data)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "document"
        raise InvalidInput(
            f'decisions must be {{"decisions": [{{"path", "action": "approve"|"reject", '
            f'"notes"}}]}}: {where}: {error["msg"]}'
        ) from None


def _apply(root: str, proposal: Proposal) -> None:
    try:
        full, _ = resolve(root, proposal.path)
        directory = os.path.dirname(full)
        if not os.path.isdir(directory):
            if not proposal.create_dirs:
                raise InvalidInput(f"directory of {proposal.path} does not exist")
            os.makedirs(directory, exist_ok=True)
        temp = f"{full}.hive-tmp-{os.getpid()}"
        with open(temp, "w", encoding="utf-8") as handle:
            handle.write(proposal.content)
        os.replace(temp, full)
        proposal.status = "applied"
        proposal.result = f"wrote {len(proposal.content.encode())} bytes"
    except (OSError, InvalidInput, PathOutsideRepository) as exc:
        proposal.status = "failed"
        proposal.result = str(exc)


def _save(state_dir: str, proposal: Proposal) -> None:
    directory = os.path.join(state_dir, PROPOSALS_DIR)
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, f"{proposal.id}.json")
    temp = f"{path}.tmp"
    with open(temp, "w", encoding="utf-8") as handle:
        handle.write(proposal.model_dump_json())
    os.replace(temp, path)
