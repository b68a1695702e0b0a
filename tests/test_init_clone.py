"""``hive init`` in a fresh clone of a remote whose hive travels by ``hive sync`` only
(the branch with ``.hive/`` not pushed yet): it takes the remote hive's settings."""

from __future__ import annotations

import json
from pathlib import Path

from hive.domain.cells import create_cell
from hive.domain.setup import init_hive
from hive.domain.sync import sync
from hive.domain.workspace import Workspace
from tests.conftest import git, make_repo
from tests.inprocess import run_hive
from tests.templates import without_sample_hooks


def _first_clone(tmp_path: Path) -> Path:
    """``origin`` and a clone whose hive (prefix app, a coordinator) reached origin by
    ``hive sync``, its branch not pushed since the commit before ``hive init``."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    first = without_sample_hooks(make_repo(tmp_path / "a"))
    git(first, "remote", "add", "origin", str(origin))
    git(first, "push", "-q", "origin", "main")
    ws = Workspace(str(first), actor="alice")
    init_hive(ws, prefix="app")
    config = first / ".hive" / "config.yaml"
    config.write_text(config.read_text().replace("coordinators: []", "coordinators: [lead]"))
    git(first, "commit", "-q", "-m", "coordinators", "--", ".hive/config.yaml")
    create_cell(ws, title="from a")
    sync(ws, remote="origin")
    return origin


def test_init_in_a_fresh_clone_takes_the_remote_hive_s_settings(tmp_path: Path) -> None:
    """Following docs/sync.md (git clone, hive init, hive sync) in a second clone wrote
    the default settings (prefix hv): the first sync then recorded a merge conflict in
    .hive/config.yaml, and the clone's new cells had the wrong prefix."""
    origin = _first_clone(tmp_path)
    second = tmp_path / "b"
    git(tmp_path, "clone", "-q", str(origin), str(second))
    without_sample_hooks(second)
    assert not (second / ".hive").exists()

    done = run_hive(["-C", str(second), "init"])
    assert done.returncode == 0, done.stderr
    assert "hive initialised in" in done.stdout and "(prefix app)" in done.stdout
    assert "settings from origin's hive" in done.stdout
    shown = git(second, "show", "HEAD:.hive/config.yaml")
    assert "prefix: app" in shown and "coordinators: [lead]" in shown
    assert git(second, "status", "--porcelain") == ""

    synced = sync(Workspace(str(second), actor="bob"), remote="origin")
    assert not synced.conflicts
    assert "hive merge conflict" not in (second / ".hive" / "config.yaml").read_text()
    made = json.loads(run_hive(["-C", str(second), "--json", "create", "from b"]).stdout)
    assert made["id"].startswith("app-")


def test_init_without_a_reachable_remote_hive_keeps_the_defaults(tmp_path: Path) -> None:
    """A remote with no hive, or one out of reach, leaves init as it was (the defaults),
    saying so when the remote could not be read."""
    empty = tmp_path / "empty.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(empty))
    repo = without_sample_hooks(make_repo(tmp_path / "r"))
    git(repo, "remote", "add", "origin", str(empty))
    done = run_hive(["-C", str(repo), "init"])
    assert done.returncode == 0 and "(prefix hv)" in done.stdout and not done.stderr
    gone = without_sample_hooks(make_repo(tmp_path / "g"))
    git(gone, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    done = run_hive(["-C", str(gone), "init", "--prefix", "xy"])
    assert done.returncode == 0 and "(prefix xy)" in done.stdout
    assert "could not read origin's hive" in done.stderr
