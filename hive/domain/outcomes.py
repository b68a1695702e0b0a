"""Storage of outcome records: one YAML file per outcome under ``.hive/outcomes/``.

Outcomes are written in the same commit as the work they describe (see
``swarm_complete``), so the history of ``.hive/outcomes/`` *is* the learning
record: it travels with ``git push``/``fetch`` and merges without conflicts
(every record has its own file with a random id).
"""

from __future__ import annotations

import re
import secrets
from typing import Any

from pydantic import ValidationError

from hive.domain.workspace import Workspace
from hive.errors import CorruptFile
from hive.git.repo import Change, Snapshot
from hive.models.outcome import Outcome
from hive.store import layout
from hive.store.yamlio import dumps, load_mapping

OUTCOMES_DIR = layout.OUTCOMES_DIR
_BLOB_CACHE = "outcome_blobs"
_ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"
_UNSAFE = re.compile(r"[^A-Za-z0-9._~-]")


def new_outcome_id(cell_id: str) -> str:
    suffix = "".join(secrets.choice(_ID_ALPHABET) for _ in range(8))
    return f"{cell_id}~{suffix}"


def outcome_path(outcome_id: str) -> str:
    return f"{OUTCOMES_DIR}/{_UNSAFE.sub('_', outcome_id)}.yaml"


def encode_outcome(outcome: Outcome) -> bytes:
    from hive.store.cells import format_time

    document: dict[str, Any] = outcome.model_dump(mode="json", exclude_none=True)
    document["recorded_at"] = format_time(outcome.recorded_at)
    return dumps(document).encode("utf-8")


def decode_outcome(content: bytes, path: str) -> Outcome:
    mapping = load_mapping(content.decode("utf-8", errors="replace"), path)
    try:
        return Outcome.model_validate(mapping)
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"])
        raise CorruptFile(f"{path}: invalid field {where!r}: {error['msg']}", path=path) from None


def outcome_change(outcome: Outcome) -> Change:
    """The file change that stores ``outcome`` (to include in a transaction)."""
    return Change(outcome_path(outcome.id), encode_outcome(outcome))


def load_outcomes(ws: Workspace, snap: Snapshot | None = None) -> list[Outcome]:
    """Every readable outcome at ``snap`` (default: now), oldest first.

    Parsed blobs are cached in the workspace by blob id, so repeated calls
    in one process only parse new records. Corrupt files are skipped (``hive
    doctor`` reports them).
    """
    snap = snap or ws.snapshot()
    cache: dict[str, Outcome | None] = ws.state.setdefault(_BLOB_CACHE, {})
    found: list[Outcome] = []
    for path, sha in snap.listing(OUTCOMES_DIR).items():
        if sha not in cache:
            try:
                cache[sha] = decode_outcome(ws.git.read_blob(sha), path)
            except CorruptFile:
                cache[sha] = None
        parsed = cache[sha]
        if parsed is not None:
            found.append(parsed)
    return sorted(found, key=lambda o: (o.recorded_at, o.id))
