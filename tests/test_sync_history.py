"""What ``hive sync`` reads of the histories: only what came since it last read them
(hive/git/historycache.py), with the same answers as reading everything."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, update_cell
from hive.domain.workspace import Workspace
from hive.git.historycache import CACHE_NAME
from hive.git.syncref import _history_blobs_read, history_blobs
from tests.conftest import GIT_ENV, git
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)


def _uncached(ws: Workspace, tip: str, limit: int) -> set[str]:
    """history_blobs as a repository that never remembered anything answers it."""
    cache = Path(ws.git.paths.hive_state_dir) / CACHE_NAME
    kept = cache.read_bytes() if cache.exists() else None
    cache.unlink(missing_ok=True)
    try:
        return history_blobs(ws.git, tip, limit=limit)
    finally:
        cache.unlink(missing_ok=True)
        if kept is not None:
            cache.write_bytes(kept)


def _head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize("limit", [2000, 9])
def test_remembered_versions_plus_the_new_commits_answer_as_a_whole_read(
    repo: Path, ws: Workspace, limit: int
) -> None:
    """A remembered tip's versions and the commits since (merges of an older-dated side
    branch, a merge that kept one side's file) are the versions a read of the whole
    history finds; with a small ``limit`` the new commits reach the window's edge and
    the history is read whole, as before."""
    first = create_cell(ws, title="v1")
    answers = [history_blobs(ws.git, _head(repo), limit=limit)]
    git(repo, "branch", "side")
    update_cell(ws, cell_id=first.id, title="v2 on main")
    git(repo, "checkout", "-q", "side")
    old = {**os.environ, **GIT_ENV, "GIT_COMMITTER_DATE": "2001-01-01T00:00:00Z"}
    for number in range(3):  # commits dated before every other: the walk meets them last
        update_cell(ws, cell_id=first.id, title=f"v{number} on side")
        amend = ["git", "-C", str(repo), "commit", "-q", "--amend", "--no-edit"]
        subprocess.run(amend, env=old, check=True)
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "-s", "ours", "--no-edit", "side")
    for number in range(4):
        create_cell(ws, title=f"later {number}")
        head = _head(repo)
        answers.append(history_blobs(ws.git, head, limit=limit))
        assert answers[-1] == _uncached(ws, head, limit)
        assert answers[-1] == _history_blobs_read(ws.git, head, limit=limit) or limit < 2000
    assert answers[0] < answers[-1]
    changed = git(repo, "rev-list", "--count", "--full-history", "HEAD", "--", ".hive")
    assert (int(changed) > limit) == (limit == 9)  # the small window's edge was reached


def test_a_sync_that_sends_reads_only_the_commits_since_the_last(
    clones: Clones,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each sync that sends asks which versions both histories hold; the second one
    reads only the commits since the first (``git log ... ^TIP``), not both whole
    histories again (which grew with every sync)."""
    for number in range(3):
        create_cell(clones.ws("a"), title=f"before {number}")
        clones.sync("a")
    create_cell(clones.ws("a"), title="sent now")
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    result = clones.sync("a")
    assert result.sent_cells == 1
    logs = [line for line in trace.read_text().splitlines() if "git log" in line]
    assert len(logs) == 2, logs  # the branch's history and the remote state's
    assert all(" ^" in line for line in logs), logs
