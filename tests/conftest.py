"""Shared fixtures: real git repositories in temporary directories, checked with real git."""

from __future__ import annotations

import gzip
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for key in ("HIVE_AGENT", "HIVE_AUTOCOMMIT", "HIVE_BYPASS", "HIVE_LOCK_TIMEOUT", "GIT_DIR"):
        monkeypatch.delenv(key, raising=False)


def git(repo: Path | str, *args: str, check: bool = True) -> str:
    """Run the real git CLI in ``repo`` and return its stdout."""
    result = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **GIT_ENV},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


def make_repo(path: Path, *, commit: bool = True) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    if commit:
        (path / "README.md").write_text("# project\n")
        git(path, "add", "README.md")
        git(path, "commit", "-q", "-m", "initial")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository with one commit and no hive yet."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def ws(repo: Path) -> Iterator[Workspace]:
    """An initialised hive, acting as 'alice'."""
    workspace = Workspace(str(repo), actor="alice")
    init_hive(workspace, prefix="hv")
    yield workspace


def assert_clean(repo: Path) -> None:
    """git status shows nothing and fsck is clean."""
    assert git(repo, "status", "--porcelain") == ""
    fsck = subprocess.run(
        ["git", "-C", str(repo), "fsck", "--strict"], capture_output=True, text=True, check=False
    )
    assert fsck.returncode == 0, fsck.stderr + fsck.stdout


BEADS_COPIES = Path(__file__).parent / "data" / "beads"


def beads_export(name: str) -> Path:
    """One of beads' real tracker exports: from ``../shared/data/beads/`` next to the
    repository (or ``$HIVE_BEADS_DATA``) when present, else the gzipped copy in
    ``tests/data/beads/`` (so a fresh clone runs the same tests)."""
    root = Path(__file__).resolve().parents[1]
    candidates = [root.parent / "shared/data/beads", root.parent.parent / "shared/data/beads"]
    if os.environ.get("HIVE_BEADS_DATA"):
        candidates.insert(0, Path(os.environ["HIVE_BEADS_DATA"]))
    for directory in candidates:
        if (directory / name).is_file():
            return directory / name
    target = Path(tempfile.gettempdir()) / f"hive-beads-{os.getuid()}" / name
    if not target.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        temp = target.with_suffix(f".{os.getpid()}.tmp")
        temp.write_bytes(gzip.decompress((BEADS_COPIES / f"{name}.gz").read_bytes()))
        temp.replace(target)
    return target
