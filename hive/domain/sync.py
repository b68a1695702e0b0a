"""``hive sync``: exchange hive's state with a git remote (placeholder)."""

from __future__ import annotations

from hive.domain.workspace import Workspace
from hive.git.gitconfig import add_value, get_all, git_available, remotes

HIVE_REFS = "refs/hive/*"
TRACKING_PREFIX = "refs/hive-remotes"


def fetch_refspec(remote: str) -> str:
    return f"+{HIVE_REFS}:{TRACKING_PREFIX}/{remote}/*"


PUSH_REFSPEC = f"{HIVE_REFS}:{HIVE_REFS}"


def configure_remotes(ws: Workspace, only: str | None = None) -> list[str]:
    """Make plain ``git fetch``/``git push`` of each remote carry ``refs/hive/*``.

    fetch: ``+refs/hive/*:refs/hive-remotes/<remote>/*`` (tracking refs, never
    hive's own); push: ``refs/hive/*:refs/hive/*`` (never forced). A remote with
    no push refspec yet also gets ``HEAD`` first, so ``git push`` keeps pushing
    the current branch. Returns the remotes that are configured.
    """
    if not git_available():
        return []
    names = [only] if only else remotes(ws.root)
    for name in names:
        add_value(ws.root, f"remote.{name}.fetch", fetch_refspec(name))
        push_key = f"remote.{name}.push"
        if PUSH_REFSPEC not in get_all(ws.root, push_key):
            if not get_all(ws.root, push_key):
                add_value(ws.root, push_key, "HEAD")
            add_value(ws.root, push_key, PUSH_REFSPEC)
    return names
