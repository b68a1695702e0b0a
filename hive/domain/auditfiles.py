"""Cell and reservation files decoded once over ``hive doctor``'s history audit, and
hive's merge of them made from the decoded versions (:mod:`hive.domain.history`,
:mod:`hive.domain.syncaudit`, :mod:`hive.domain.mergeaudit`,
:mod:`hive.domain.yieldaudit`).

Along a history a file's versions recur: the version a commit leaves is the one the
next commit that touches it starts from, and a merge (or a sync commit's merge) reads
the two sides' versions, which the claim check has just read. Decoding a cell with 100
comments takes ~5 ms, a reservation file of 100 grants ~10 ms, so each version is
decoded once (by blob id; a cell is frozen, and no audit changes a decoded file), and
the merges the audits compare with are made from the decoded versions
(:func:`hive.domain.merge.merge_cells`, :func:`hive.domain.mergefiles.
merge_reservations`: the rules git's driver and ``hive sync`` run) and compared
decoded: a version that decodes to the merged one is the merge's, however its file is
laid out, without encoding the merge again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hive.domain.workspace import Workspace

if TYPE_CHECKING:
    from hive.models.cell import Cell
    from hive.models.reservation import ReservationFile


class AuditFiles:
    """The cell versions an audit read, parsed and decoded once each."""

    def __init__(self, ws: Workspace) -> None:
        self.ws = ws
        self._documents: dict[str, dict[str, Any] | None] = {}
        self._cells: dict[str, Cell | None] = {}
        self._reservations: dict[str, ReservationFile | None] = {}

    def cell(self, sha: str, path: str) -> Cell | None:
        """The cell file ``sha`` (at ``path``) decoded, as ``store.cells.decode_cell``
        decodes it; None when it does not decode (``hive doctor``'s corrupt-file check
        reports that)."""
        if sha not in self._cells:
            from pydantic import ValidationError

            from hive.models.cell import Cell

            document = self._document(sha, path)
            try:
                self._cells[sha] = None if document is None else Cell.model_validate(document)
            except ValidationError:
                self._cells[sha] = None
        return self._cells[sha]

    def reservation_file(self, sha: str, path: str) -> ReservationFile | None:
        """The reservation file ``sha`` (at ``path``) decoded; None when it does not
        decode (``hive doctor`` reports it as corrupt)."""
        if sha not in self._reservations:
            from hive.domain.reservations import decode_file
            from hive.errors import HiveError

            try:
                self._reservations[sha] = decode_file(self.ws.git.read_blob(sha), path)
            except (HiveError, KeyError):
                self._reservations[sha] = None
        return self._reservations[sha]

    def plainly_not_taken(self, sha: str, path: str, actor: str) -> bool:
        """Whether the cell file ``sha``, as parsed (before the model), is claimed by
        no one but ``actor`` (closed, or assigned to nobody or to ``actor``): the model
        need not decode it. False when it does not parse."""
        document = self._document(sha, path)
        if document is None:
            return False
        assignee = document.get("assignee")
        return document.get("status") == "closed" or assignee in (None, "", actor)

    def _document(self, sha: str, path: str) -> dict[str, Any] | None:
        """The mapping the cell file ``sha`` holds (None: none that parses), read once."""
        if sha not in self._documents:
            from hive.errors import CorruptFile
            from hive.store.yamlio import load_mapping

            try:
                text = self.ws.git.read_blob(sha).decode("utf-8")
                self._documents[sha] = load_mapping(text, path)
            except (CorruptFile, KeyError, UnicodeDecodeError):
                self._documents[sha] = None
        return self._documents[sha]

    def taken(
        self, old_sha: str, new_sha: str | None, path: str, actor: str
    ) -> tuple[Cell, str] | None:
        """``ownership.claim_taken_between`` over the decoded versions: (the cell
        ``old_sha``, its assignee) when ``new_sha`` (None: deleted) takes it from its
        assignee; else None, also when either version does not decode."""
        from hive.domain.ownership import claim_taken

        old = self.cell(old_sha, path)
        new = None if new_sha is None else self.cell(new_sha, path)
        if old is None or (new_sha is not None and new is None):
            return None
        owner = claim_taken(old, new, actor)
        return None if owner is None else (old, owner)

    def merges_to(
        self, path: str, base: str | None, ours: str, theirs: str, made: str
    ) -> bool | None:
        """Whether hive's merge of the versions ``ours`` and ``theirs`` of a cell or
        reservation file against ``base`` (None: no base) is the version ``made``
        (compared decoded), as ``merge.merge_file`` merges them (a reservation file
        either way round); None when a version does not decode or ``path`` is
        neither (the caller then merges the files)."""
        from hive.domain.mergecore import is_cell_path, is_reservation_path, settled_sides

        settled = settled_sides(base, ours, theirs)
        if settled is not None:
            return settled == made or self._same(settled, made, path)
        if is_cell_path(path):
            return self._cell_merge(path, base, ours, theirs, made)
        if is_reservation_path(path):
            return self._reservation_merge(path, base, ours, theirs, made)
        return None

    def _cell_merge(
        self, path: str, base: str | None, ours: str, theirs: str, made: str
    ) -> bool | None:
        from hive.domain.merge import merge_cells

        mine, other, result = (self.cell(sha, path) for sha in (ours, theirs, made))
        if mine is None or other is None or result is None:
            return None
        original = None if base is None else self.cell(base, path)
        if original is not None and original.id != mine.id:
            original = None  # (merge_file's rule: a base of another cell is none)
        merged, _ = merge_cells(original, mine, other)  # (commutative in the two sides)
        return merged == result

    def _reservation_merge(
        self, path: str, base: str | None, ours: str, theirs: str, made: str
    ) -> bool | None:
        from hive.domain.merge import reservation_copy, reservation_tie
        from hive.domain.mergefiles import merge_reservations

        mine, other, result = (self.reservation_file(sha, path) for sha in (ours, theirs, made))
        if mine is None or other is None or result is None or mine.agent != other.agent:
            return None
        original = None if base is None else self.reservation_file(base, path)
        before = None if original is None else original.reservations
        for first, second in ((mine, other), (other, mine)):
            merged = merge_reservations(
                before,
                first.reservations,
                second.reservations,
                tie=reservation_tie,
                copy=reservation_copy,
            )
            if result.agent == mine.agent and list(result.reservations) == merged:
                return True
        return False

    def _same(self, sha: str, other: str, path: str) -> bool:
        from hive.domain.mergecore import is_cell_path

        read = self.cell if is_cell_path(path) else self.reservation_file
        first, second = read(sha, path), read(other, path)
        return first is not None and first == second
