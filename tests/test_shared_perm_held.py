"""``core.sharedRepository`` is read once per write (``hive.git.shared.PermHeld``), as git
reads its config once per command, not once per object, ref and log the write makes; a
value set between two writes is the second one's."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import create_cell
from hive.domain.workspace import Workspace
from hive.git import configfile
from hive.git.refs import discover
from hive.git.shared import PERM_GROUP, PermHeld, shared_perm
from tests.conftest import git


def test_a_write_reads_core_shared_repository_once(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []
    setting = configfile.setting

    def counted(paths: Any, section: str, key: str, **options: Any) -> str | None:
        if key == "sharedRepository":
            asked.append(key)
        return setting(paths, section, key, **options)

    monkeypatch.setattr(configfile, "setting", counted)
    create_cell(ws, title="one write")
    assert len(asked) == 1  # the write made objects, a ref, its log and the index
    asked.clear()
    shared_perm(ws.git.paths)  # outside a write: read again
    assert len(asked) == 1


def test_a_shared_repository_set_between_two_writes_is_the_seconds(
    ws: Workspace, repo: Path
) -> None:
    create_cell(ws, title="not shared yet")
    git(repo, "config", "core.sharedRepository", "group")
    before = os.umask(0o077)
    try:
        create_cell(ws, title="shared now")
        (repo / "by-git.txt").write_text("an object git writes\n")
        made_by_git = git(repo, "hash-object", "-w", "by-git.txt").strip()
    finally:
        os.umask(before)
    head = git(repo, "rev-parse", "HEAD").strip()
    objects = repo / ".git" / "objects"

    def mode(sha: str) -> int:
        return (objects / sha[:2] / sha[2:]).stat().st_mode & 0o7777

    assert mode(head) == mode(made_by_git) == 0o440
    ref_mode = (repo / ".git" / "refs" / "heads" / "main").stat().st_mode & 0o7777
    assert ref_mode == 0o660


def test_the_held_value_is_one_worktrees_own(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    """A linked worktree's own config (``config.worktree``) may share it otherwise: the
    value held for the main worktree's write is not the linked one's answer."""
    side = tmp_path / "side"
    git(repo, "worktree", "add", "-q", "-b", "side", str(side))
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(side, "config", "--worktree", "core.sharedRepository", "group")
    main_paths, side_paths = ws.git.paths, discover(str(side))
    assert main_paths.common_dir == side_paths.common_dir
    with PermHeld(main_paths) as held:
        assert held == 0 == shared_perm(main_paths)
        assert shared_perm(side_paths) == PERM_GROUP
