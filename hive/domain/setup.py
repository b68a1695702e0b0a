"""``hive init``: create .hive/config.yaml in one commit, install the merge driver
and the remotes' refspecs for hive's refs (all idempotent)."""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from typing import Any

from pydantic import ValidationError

from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.gitconfig import get_all, git_available, set_value
from hive.git.repo import Change, Snapshot, format_message
from hive.models import HiveConfig
from hive.models.cell import first_error
from hive.models.results import InitResult, Problem
from hive.store.cells import encode_config
from hive.store.layout import CONFIG_PATH, HIVE_DIR

ATTRIBUTES_PATH = f"{HIVE_DIR}/.gitattributes"
ATTRIBUTE_LINES = ("cells/** merge=hive", "reservations/** merge=hive")
ATTRIBUTES = (
    "# Written by 'hive init': git merges hive's files field by field (never with\n"
    "# conflict markers) through the driver 'hive init' configures in each clone.\n"
    + "".join(line + "\n" for line in ATTRIBUTE_LINES)
)
DRIVER_KEY = "merge.hive.driver"
DRIVER_NAME_KEY = "merge.hive.name"
DRIVER_MODULE = "hive.cli.merge_driver"


def init_hive(ws: Workspace, *, prefix: str | None = None) -> InitResult:
    """Create the hive in this repository; a second run changes nothing."""
    try:
        config = HiveConfig(prefix=prefix) if prefix else HiveConfig()
    except ValidationError as exc:
        raise InvalidInput(f"invalid prefix {prefix!r}: {first_error(exc)[1]}") from None

    def plan(snap: Snapshot) -> tuple[list[Change], str, Any]:
        changes: list[Change] = []
        created = snap.blob_sha(CONFIG_PATH) is None
        if created:
            changes.append(Change(CONFIG_PATH, encode_config(config)))
        attributes = _attributes_change(snap)
        if attributes is not None:
            changes.append(attributes)
        if not changes:
            return [], "", False
        subject = (
            f"hive: init (prefix {config.prefix})" if created else "hive: init merge attributes"
        )
        return changes, format_message(subject, ws.trailers("init")), created

    written = ws.write_files(plan)
    existing = ws.config()
    from hive.domain.sync import configure_remotes

    return InitResult(
        root=ws.root,
        prefix=existing.prefix,
        created=bool(written.result),
        commit=written.commit if written.result else None,
        merge_driver=install_merge_driver(ws),
        remotes=configure_remotes(ws),
    )


def _attributes_change(snap: Snapshot) -> Change | None:
    """``.hive/.gitattributes`` with hive's lines (kept: anything else in it)."""
    current = snap.read(ATTRIBUTES_PATH)
    if current is None:
        return Change(ATTRIBUTES_PATH, ATTRIBUTES.encode())
    text = current.decode("utf-8", errors="replace")
    missing = [line for line in ATTRIBUTE_LINES if line not in text.splitlines()]
    if not missing:
        return None
    joined = text if text.endswith("\n") or not text else text + "\n"
    return Change(ATTRIBUTES_PATH, (joined + "".join(m + "\n" for m in missing)).encode())


def driver_command() -> str:
    """The merge driver command line git runs (this interpreter, like the hook)."""
    return f"{shlex.quote(sys.executable)} -m {DRIVER_MODULE} %O %A %B %P"


def install_merge_driver(ws: Workspace) -> str:
    """Configure ``merge.hive.driver`` in this clone: installed, unchanged, or why not."""
    if not git_available():
        return "skipped: no git program found (nothing to configure)"
    changed = set_value(ws.root, DRIVER_KEY, driver_command())
    set_value(ws.root, DRIVER_NAME_KEY, "hive field-level merge of .hive/ files")
    return "installed" if changed else "unchanged"


def merge_setup_problems(ws: Workspace, snap: Snapshot) -> list[Problem]:
    """What keeps ``git merge`` from merging cells field by field in this clone."""
    found: list[Problem] = []
    attributes = snap.read(ATTRIBUTES_PATH)
    lines = attributes.decode("utf-8", errors="replace").splitlines() if attributes else []
    if any(line not in lines for line in ATTRIBUTE_LINES):
        found.append(
            Problem(
                kind="merge-driver",
                message=f"{ATTRIBUTES_PATH} does not route cells to hive's merge driver;"
                " run 'hive init' to add it",
                path=ATTRIBUTES_PATH,
            )
        )
    if not git_available():
        return found
    configured = get_all(ws.root, DRIVER_KEY)
    if not configured:
        found.append(
            Problem(
                kind="merge-driver",
                message="git merge driver 'hive' is not configured in this clone, so git"
                " merges cells line by line (conflict markers); run 'hive init'",
            )
        )
    elif not _driver_runs(configured[-1]):
        found.append(
            Problem(
                kind="merge-driver",
                message=f"git merge driver 'hive' runs {configured[-1]!r}, which is not"
                " available; run 'hive init' to point it at this hive",
            )
        )
    return found


def _driver_runs(command: str) -> bool:
    try:
        program = shlex.split(command)[0]
    except (ValueError, IndexError):
        return False
    if os.path.isabs(program):
        return os.access(program, os.X_OK)
    return shutil.which(program) is not None
