"""Opening the workspace for a command: what the full CLI (``cli/common.py``) and the
pre-commit hook's full check (``cli/hookrun.py``) share, without typer."""

from __future__ import annotations

import os

from hive.cli import output

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from hive.domain.workspace import Workspace


def default_session() -> str:
    """The CLI's mail session: ``HIVE_SESSION`` when exported, else this process only
    (``hive.cli.leanlog.session``, which a lean command's event line names too)."""
    from hive.cli.leanlog import session

    return session()


def open_workspace(directory: str, actor: str | None, *, claim: bool = True) -> Workspace:
    """The repository at ``directory``, acting as whoever this process proves to be: the
    agent whose credential is in ``HIVE_AGENT_TOKEN``, else the person of the git
    identity. A name claimed (``actor``: ``--actor`` / ``HIVE_AGENT``) must match
    (``not_your_identity`` otherwise, when the command acts; with a credential, by
    every command, as is a credential that is nobody's). ``claim=False``:
    registration commands and the hook, where no claimed name is checked."""
    from hive.domain.actors import check_actor
    from hive.domain.workspace import Workspace

    if claim:
        opened = Workspace(directory, claim=actor, session=default_session())
        claimed = actor or os.environ.get("HIVE_AGENT")
        if claimed:  # refused even where nothing acts (a read), as a write refuses it
            check_actor(claimed)
        if os.environ.get("HIVE_AGENT_TOKEN"):
            # a credential of nobody (retired, re-issued) or proving another name than
            # the one claimed is refused by every command, a read too, as a write
            # refuses it; a person's shell (no credential) reads nothing more here
            opened.principal  # noqa: B018
    else:
        opened = Workspace(
            directory,
            from_env=False,
            token=os.environ.get("HIVE_AGENT_TOKEN") or None,
            session=default_session(),
        )
    for line in opened.git.recovered:  # a write a killed hive process left, now settled
        output.err(f"hive: {line}")
    output.attach_progress(opened)
    return opened
