"""``hive init``: create .hive/config.yaml in one commit (idempotent)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.repo import Change, Snapshot, format_message
from hive.models import HiveConfig
from hive.models.cell import first_error
from hive.models.results import InitResult
from hive.store.cells import encode_config
from hive.store.layout import CONFIG_PATH


def init_hive(ws: Workspace, *, prefix: str | None = None) -> InitResult:
    """Create the hive in this repository; a second run changes nothing."""
    try:
        config = HiveConfig(prefix=prefix) if prefix else HiveConfig()
    except ValidationError as exc:
        raise InvalidInput(f"invalid prefix {prefix!r}: {first_error(exc)[1]}") from None

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        if snap.blob_sha(CONFIG_PATH) is not None:
            return [], "", False
        message = format_message(f"hive: init (prefix {config.prefix})", ws.trailers("init"))
        return [Change(CONFIG_PATH, encode_config(config))], message, True

    written = ws.write_files(plan)
    existing = ws.config()
    return InitResult(
        root=ws.root,
        prefix=existing.prefix,
        created=bool(written.result),
        commit=written.commit if written.result else None,
    )
