"""The lean sync's actor (``hive/cli/lean_sync.py``): imported only by a sync with
something to do, so a sync with nothing to do loads none of ``hive.domain.sync``."""

from __future__ import annotations

from hive.domain.sync import Syncing, Uncommon

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable

    from hive.cli.lean_write import Prepared
    from hive.git.repo import Change, GitRepo, Identity, Snapshot
    from hive.models.reservation import Contest


class LeanSyncing(Syncing):
    """The lean session as the sync's actor (``sync.WorkspaceSyncing`` is the full
    path's): who commits and how long it waits as ``prepare`` found them, the mail log
    through ``lean_coord.MailHost``; a state that might hold a reservation contest is
    left to the full sync (``Uncommon``: settling one needs pydantic's models)."""

    def __init__(
        self,
        prepared: Prepared,
        contest_possible: Callable[[GitRepo, Snapshot, list[Change]], bool],
    ) -> None:
        self.prepared = prepared
        self.contest_possible = contest_possible  # lean_sync's, which imports this module
        self.git = prepared.session.repo
        self.root = self.git.paths.root

    def identity(self) -> Identity:
        return self.prepared.author

    def trailers(self, event: str) -> list[tuple[str, str]]:
        from hive.domain.actors import event_trailers

        return event_trailers(self.prepared.session.principal, event)

    def lock_timeout(self) -> float:
        return self.prepared.timeout

    def settle(self, snap: Snapshot, changes: list[Change]) -> tuple[list[Change], list[Contest]]:
        if self.contest_possible(self.git, snap, changes):
            raise Uncommon("a reservation contest to settle")
        return changes, []  # as settle_contests answers a state with no contest

    def join_mail(self, theirs: str, remote: str) -> int:
        from hive.cli.lean_coord import MailHost
        from hive.domain.maillog import join_log

        return join_log(MailHost(self.prepared), theirs, remote)

    def edges_added(self, cell_ids: list[str]) -> None:
        raise Uncommon("dependencies added: the full sync looks for cycles through them")

    def cycles(self, cell_ids: list[str]) -> list[list[str]]:
        return []  # never asked: ``edges_added`` hands the round over first

    def notify(self, contested: list[Contest]) -> None:
        """Never anything to tell: ``settle`` finds no contest here."""
