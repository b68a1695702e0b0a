"""Results of the repository file tools (``fs_*``, ``search_text``)."""

from __future__ import annotations

from hive.models.base import HiveModel


class FileListing(HiveModel):
    """``fs_list``: repository-relative paths, at most ``max_results``."""

    files: list[str]
    count: int
    truncated: bool


class FileContent(HiveModel):
    """``fs_read``: the text of one file (``truncated`` when longer than asked)."""

    path: str
    bytes: int
    truncated: bool
    content: str


class SearchMatch(HiveModel):
    file: str
    line: int
    text: str


class SearchResult(HiveModel):
    """``search_text``: matching lines; ``timed_out``: the search was stopped."""

    matches: list[SearchMatch]
    truncated: bool
    timed_out: bool = False


class WriteProposal(HiveModel):
    """``fs_write``: the write waits for an arbiter (nothing is written yet)."""

    queued: bool
    proposal_id: str
    path: str
    status: str
