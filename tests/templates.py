"""Helpers for the repositories a module makes once and each test copies."""

from __future__ import annotations

from pathlib import Path


def without_sample_hooks(repo: Path) -> Path:
    """``repo`` (a working tree, or a bare repository) without the ``*.sample`` hooks
    ``git init`` and ``git clone`` put in its hooks directory: inert (git runs a hook
    only without the suffix), and a sixth of a small repository's files, which every
    test copying it copied (``conftest.plain_template`` drops them likewise)."""
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    for sample in (git_dir / "hooks").glob("*.sample"):
        sample.unlink()
    return repo
