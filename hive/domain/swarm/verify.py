"""swarm_complete's verification gate settings (``verify:`` of .hive/config.yaml) and
``hive swarm run``'s (``swarm:``), read and checked apart from their users so that
``hive doctor`` checks them without importing the swarm's models."""

from __future__ import annotations

from hive.domain.workspace import Workspace
from hive.models.config import SwarmSettings, VerifySettings

VERIFY_FORM = (
    "verify: takes commands: (a list of shell commands; {files} is replaced by the"
    " touched files) and timeout_seconds: (a number)"
)


SWARM_FORM = (
    "swarm: takes disposable: (a list of name patterns, such as out or '*.log', of files"
    " git ignores that a worker's worktree may be removed with)"
)


def verify_settings(ws: Workspace) -> VerifySettings:
    """``verify:`` of .hive/config.yaml, checked: a malformed entry is an error naming
    its line (``.hive/config.yaml:7: invalid verify.commands.0: ...``)."""
    from hive.domain.config_sections import checked_section

    return checked_section(ws, "verify", VerifySettings, VERIFY_FORM)


def swarm_settings(ws: Workspace) -> SwarmSettings:
    """``swarm:`` of .hive/config.yaml (``hive swarm run``'s), checked as ``verify:``."""
    from hive.domain.config_sections import checked_section

    return checked_section(ws, "swarm", SwarmSettings, SWARM_FORM)
