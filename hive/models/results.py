"""Result models returned by domain operations (beyond Cell itself)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, computed_field

from hive.models.base import HiveModel
from hive.models.cell import Cell
from hive.models.cellresults import BlockedCell as BlockedCell
from hive.models.cellresults import BlockedSummary as BlockedSummary
from hive.models.cellresults import CellDetail as CellDetail
from hive.models.cellresults import CellRef as CellRef
from hive.models.cellresults import CellStats as CellStats
from hive.models.cellresults import DependencyNode as DependencyNode
from hive.models.cellresults import LeadTime as LeadTime
from hive.models.reservation import Contest


class HookResult(HiveModel):
    """What ``hive hooks install/uninstall`` did to the pre-commit hook (and, in
    ``also``, to the other hooks hive installs: ``commit-msg``)."""

    path: str
    action: str
    chained: str | None = None
    set_aside: str | None = None  # a hook of the user's moved out of the way, kept there
    also: list[HookResult] = Field(default_factory=list)


class InitResult(HiveModel):
    root: str
    prefix: str
    created: bool
    commit: str | None = None
    attributes: str = ""  # hive's .gitattributes lines: "added", "moved last" or "" (as they were)
    merge_driver: str = ""
    remotes: list[str] = Field(default_factory=list)  # those carrying hive's refs
    remotes_configured: list[str] = Field(default_factory=list)  # by this call
    settings_from: str | None = None  # the remote whose hive's config.yaml init took
    remote_note: str = ""  # why the remote's hive could not be read (init used defaults)
    notes: list[str] = Field(default_factory=list)  # what this call changed for plain git


class EpicStatus(HiveModel):
    epic: Cell
    total: int
    by_status: dict[str, int]
    closed: int
    percent_complete: int
    ready: list[str] = Field(default_factory=list)
    blocked: list[str] = Field(default_factory=list)
    children: list[Cell] = Field(default_factory=list)


class LogEntry(HiveModel):
    commit: str
    time: int
    author: str
    subject: str
    cells: list[str]
    agent: str | None = None
    event: str | None = None


class Problem(HiveModel):
    kind: str
    message: str
    path: str | None = None
    cell: str | None = None


class ObjectStoreHealth(HiveModel):
    """The git object store: loose objects (what hive writes) and packs.

    Sizes are disk usage in bytes, as ``git count-objects -v`` reports them
    (in KiB). ``loose_estimate`` is git's own ``gc --auto`` estimate (the
    entries of ``objects/17`` times 256); ``gc_auto`` and ``gc_auto_pack_limit``
    are the git config values in force (0: automatic packing is off).
    """

    loose_objects: int
    loose_size: int
    loose_estimate: int
    packs: int
    kept_packs: int = 0
    pack_size: int
    garbage: list[str] = Field(default_factory=list)
    gc_auto: int
    gc_auto_pack_limit: int
    last_failure: str | None = None
    warnings: list[str] = Field(default_factory=list)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def healthy(self) -> bool:
        return not self.warnings


class PackReport(HiveModel):
    """What ``hive gc`` did: loose objects packed, packs merged, and the store after."""

    packed: int
    removed_loose: int
    merged_packs: int
    new_packs: list[str] = Field(default_factory=list)
    seconds: float
    skipped: str | None = None
    store: ObjectStoreHealth


class DoctorReport(HiveModel):
    cells: int
    problems: list[Problem] = Field(default_factory=list)
    # Worth a look, but not broken: overrides, commits naming unregistered identities,
    # .hive/ changes committed without hive's trailers (edited by hand).
    warnings: list[Problem] = Field(default_factory=list)  # reported, not failures
    objects: ObjectStoreHealth | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


class CreatedCells(HiveModel):
    """What bulk creation made: the new ids in input order, and the id of each key."""

    count: int
    ids: list[str]
    keys: dict[str, str] = Field(default_factory=dict)
    commit: str | None = None


class BeadsImportResult(HiveModel):
    """What ``hive import beads`` did: counts, the commit, and what was mapped."""

    source: str
    records: int
    imported: int
    updated: int = 0
    skipped: int = 0
    # of the skipped: records whose cell differs from the file (``--update`` replaces them)
    differing: int = 0
    differing_ids: list[str] = Field(default_factory=list)  # the first ten of them
    # of the skipped, with --update: records whose cell here is as new or newer (its
    # updated_at is not before the record's), kept as it is here; --overwrite replaces them
    kept: int = 0
    kept_ids: list[str] = Field(default_factory=list)  # every one of them
    # what a person should hear of: records skipped as their cell here cannot be read;
    # links: missing targets and parents, ordering cycles
    warnings: list[str] = Field(default_factory=list)
    commit: str | None = None
    mapped_statuses: dict[str, int] = Field(default_factory=dict)
    mapped_types: dict[str, int] = Field(default_factory=dict)


class BeadsExportResult(HiveModel):
    path: str | None
    records: int
    text: str | None = None


class SyncResult(HiveModel):
    """What ``hive sync`` did."""

    remote: str
    attempts: int
    commit: str | None = None  # the commit that brought the remote's changes to this branch
    state: str | None = None  # refs/hive/state after the sync
    received_cells: int = 0  # .hive/ files changed here by the merge
    sent_cells: int = 0  # cell files the remote did not have in this version
    mail_received: int = 0
    conflicts: list[dict[str, Any]] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)
    contested: list[Contest] = Field(default_factory=list)
    # dependency cycles the merge made (each clone added one edge): cell ids, a -> b -> a
    cycles: list[list[str]] = Field(default_factory=list)
