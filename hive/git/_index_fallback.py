"""Temporary stand-in for hive.git.index built on dulwich's Index (slow, correct)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class IndexUpdate:
    path: str
    sha: bytes | None
    mode: int = 0o100644
    stat: os.stat_result | None = None


@dataclass(frozen=True)
class IndexEntry:
    path: str
    sha: bytes
    mode: int
    stage: int
    size: int
    mtime_ns: int
    ctime_ns: int
    ino: int
    dev: int


def _load(index_path: str) -> Any:
    from dulwich.index import Index

    return Index(index_path, read=os.path.exists(index_path))


def _entry(path: str, value: Any) -> IndexEntry | None:
    if not hasattr(value, "sha"):
        return None
    mtime = value.mtime if isinstance(value.mtime, tuple) else (int(value.mtime), 0)
    ctime = value.ctime if isinstance(value.ctime, tuple) else (int(value.ctime), 0)
    return IndexEntry(
        path=path,
        sha=value.sha,
        mode=value.mode,
        stage=0,
        size=value.size,
        mtime_ns=mtime[0] * 10**9 + mtime[1],
        ctime_ns=ctime[0] * 10**9 + ctime[1],
        ino=value.ino,
        dev=value.dev,
    )


def read_entries(index_path: str, prefix: str = "") -> dict[str, IndexEntry]:
    found: dict[str, IndexEntry] = {}
    for name, value in _load(index_path).items():
        path = name.decode()
        if path.startswith(prefix):
            entry = _entry(path, value)
            if entry is not None:
                found[path] = entry
    return found


def lookup_entries(index_path: str, paths: Sequence[str]) -> dict[str, IndexEntry]:
    wanted = set(paths)
    return {p: e for p, e in read_entries(index_path).items() if p in wanted}


def update_index(
    index_path: str, updates: Sequence[IndexUpdate], *, lock_timeout: float = 10.0
) -> None:
    from dulwich.index import IndexEntry as DEntry

    index = _load(index_path)
    for update in updates:
        key = update.path.encode()
        if update.sha is None:
            if key in index:
                del index[key]
            continue
        st = update.stat
        index[key] = DEntry(
            ctime=(int(st.st_ctime), st.st_ctime_ns % 10**9) if st else (0, 0),
            mtime=(int(st.st_mtime), st.st_mtime_ns % 10**9) if st else (0, 0),
            dev=(st.st_dev & 0xFFFFFFFF) if st else 0,
            ino=(st.st_ino & 0xFFFFFFFF) if st else 0,
            mode=update.mode,
            uid=st.st_uid if st else 0,
            gid=st.st_gid if st else 0,
            size=st.st_size if st else 0,
            sha=update.sha,
        )
    index.write()
