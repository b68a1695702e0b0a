"""hive in the shapes real repositories take (session 30's environment trial): shallow
clones, and the like. Each test failed before the fix it names. Real repositories in
temporary directories; the command line runs in-process (``run_hive``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import git, make_repo
from tests.inprocess import Outcome, run_hive


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_hive(["-C", str(repo), *args], env=env)


def ok(result: Outcome) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_history_readers_stop_at_a_shallow_clones_boundary(tmp_path: Path) -> None:
    """In a ``git clone --depth 1``, ``hive log``, ``review`` and ``doctor`` walked into
    the parent the clone does not have: ``internal error: KeyError`` (exit 70). History
    now ends at the boundary, as ``git log``'s does; ``--deepen`` shows more."""
    origin = make_repo(tmp_path / "origin")
    ok(hive(origin, "init", "--prefix", "hv"))
    ok(hive(origin, "create", "Made before the clone"))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    assert (clone / ".git" / "shallow").exists()
    ok(hive(clone, "init"))  # each clone once (docs/sync.md)

    cell = json.loads(ok(hive(clone, "--json", "create", "Made in the clone")))["id"]
    ok(hive(clone, "start", cell))
    ok(hive(clone, "swarm", "complete", cell, "-s", "done", "--no-gate"))

    log = ok(hive(clone, "log"))
    assert "Made in the clone" in log and "Made before the clone" in log
    assert "init" not in log  # past the boundary: not in this clone
    assert "complete" in ok(hive(clone, "log", cell))
    assert f"complete {cell}" in ok(hive(clone, "review", cell, "--stat"))
    assert "no problems" in ok(hive(clone, "doctor"))
    ok(hive(clone, "gc"))
    git(clone, "fsck")
    assert git(clone, "status", "--porcelain") == ""

    git(clone, "fetch", "-q", "--deepen=1", "origin")
    assert "init (prefix hv)" in ok(hive(clone, "log"))


def test_doctor_takes_crlf_checkouts_as_committed(tmp_path: Path) -> None:
    """With ``core.autocrlf=true`` git checks ``.hive/`` files out with CRLF line ends
    and ``git status`` calls them unchanged; ``hive doctor`` warned "config.yaml has
    uncommitted edits". Line ends alone are not an edit; a real edit still is."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "core.autocrlf", "true")
    ok(hive(repo, "init", "--prefix", "hv"))
    ok(hive(repo, "create", "Windows line ends"))
    shutil.rmtree(repo / ".hive")
    git(repo, "checkout", "--", ".hive")
    config = repo / ".hive" / "config.yaml"
    assert b"\r\n" in config.read_bytes()
    assert git(repo, "status", "--porcelain") == ""

    report = json.loads(ok(hive(repo, "--json", "doctor")))
    assert report["warnings"] == [] and report["problems"] == []

    config.write_bytes(config.read_bytes() + b"# mine\r\n")
    report = json.loads(ok(hive(repo, "--json", "doctor")))
    assert [w["kind"] for w in report["warnings"]] == ["config-uncommitted"]
