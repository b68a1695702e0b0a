"""A repository whose git objects are missing or damaged: hive says so (exit 7,
``corrupt_file``) and names ``git fsck``, on the CLI's lean and full paths and as a
tool error, instead of an internal error (exit 70) that blames hive."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import create_cell
from hive.domain.setup import init_hive
from hive.domain.sync import sync
from hive.domain.workspace import Workspace
from hive.errors import damaged_repository
from hive.tools.registry import CallContext, call_tool
from tests.conftest import copy_repo, git, make_repo
from tests.hivefork import hive_command
from tests.inprocess import run_hive

SAID = "a git object hive needs cannot be read ("
ADVICE = "the repository is damaged; 'git fsck' names what is broken"


def hive(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        hive_command(["-C", str(repo), *args]),
        capture_output=True,
        text=True,
        env={**os.environ, "HIVE_AGENT": ""},
        timeout=120,
    )


def damaged(hive_template: Path, where: Path, how: str) -> Path:
    """A hive with one cell whose HEAD tree object is ``missing`` or ``garbled``."""
    repo = copy_repo(hive_template, where)
    assert hive(repo, "create", "first").returncode == 0
    tree = git(repo, "rev-parse", "HEAD^{tree}").strip()
    loose = repo / ".git" / "objects" / tree[:2] / tree[2:]
    assert loose.is_file()  # hive writes loose objects; nothing packed them yet
    loose.chmod(0o644)
    if how == "missing":
        loose.unlink()
    else:
        loose.write_bytes(b"not a zlib stream of a git object")
    return repo


@pytest.mark.parametrize("how", ["missing", "garbled"])
@pytest.mark.parametrize("command", [["create", "second"], ["update", "--title", "x"]])
def test_a_write_in_a_damaged_repository_says_so(
    hive_template: Path, tmp_path: Path, how: str, command: list[str]
) -> None:
    repo = damaged(hive_template, tmp_path / "repo", how)
    head = git(repo, "rev-parse", "HEAD").strip()
    if command[0] == "update":  # the full CLI's path (an update of the one cell)
        cell = json.loads(hive(repo, "list", "--json").stdout)[0]["id"]
        command = ["update", cell, *command[1:]]
    done = hive(repo, *command)
    assert done.returncode == 7, (done.returncode, done.stderr)
    assert done.stderr.startswith("error: " + SAID), done.stderr
    assert ADVICE in done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr
    assert git(repo, "rev-parse", "HEAD").strip() == head  # nothing committed
    as_json = hive(repo, *command, "--json")
    assert as_json.returncode == 7
    assert json.loads(as_json.stdout)["code"] == "corrupt_file"


def test_a_tool_call_in_a_damaged_repository_is_a_corrupt_file_error(
    hive_template: Path, tmp_path: Path
) -> None:
    repo = damaged(hive_template, tmp_path / "repo", "missing")
    answer = call_tool(CallContext(root=str(repo)), "hive_create", {"title": "second"})
    assert answer["code"] == "corrupt_file", answer
    assert answer["error"].startswith(SAID) and "is missing" in answer["error"]


def test_only_an_object_store_error_is_called_damage() -> None:
    """An ordinary bug stays an internal error: a KeyError of a name, a ValueError."""
    assert damaged_repository(KeyError(b"e599717bd399c6b2818ea8537c5c8fd24e6dc719"))
    assert damaged_repository(KeyError("title")) is None
    assert damaged_repository(KeyError(b"not-hex-not-an-object-id-00000000000000")) is None
    assert damaged_repository(ValueError("Not a known type 6")) is None


def test_a_loose_object_made_a_directory_during_a_full_sync_is_damage(tmp_path: Path) -> None:
    """An object of the remote's state whose loose file a broken tool made a directory
    (``.git/objects/ab/cdef...``): a full sync ended in "internal error:
    IsADirectoryError" (exit 70) instead of naming the damage and git fsck."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(origin))
    clones = {}
    for name in ("a", "b"):
        clone = make_repo(tmp_path / name)
        git(clone, "remote", "add", "origin", str(origin))
        init_hive(Workspace(str(clone), actor=name))
        clones[name] = clone
    ws = Workspace(str(clones["a"]), actor="a")
    create_cell(ws, title="from a")
    sync(ws, remote="origin")
    git(clones["b"], "fetch", "-q", "origin", "+refs/hive/*:refs/hive-remotes/origin/*")
    tree = git(clones["b"], "rev-parse", "refs/hive-remotes/origin/state^{tree}").strip()
    loose = clones["b"] / ".git" / "objects" / tree[:2] / tree[2:]
    loose.unlink()  # a small fetch leaves its objects loose
    loose.mkdir()
    for module in ("hive.cli.main", "hive"):  # the full CLI, and the lean sync first
        done = run_hive(["-C", str(clones["b"]), "sync"], module=module)
        assert done.returncode == 7, (module, done.stderr)
        assert done.stderr.startswith("error: " + SAID), done.stderr
        assert f"objects/{tree[:2]}/{tree[2:]} is not a file" in done.stderr
        assert ADVICE in done.stderr and "internal error" not in done.stderr


def test_only_a_git_object_s_file_is_called_damage() -> None:
    """A directory where hive expected a file of its own is not the object store's."""
    loose = "/r/.git/objects/ab/" + "c" * 38
    assert damaged_repository(IsADirectoryError(21, "Is a directory", loose))
    packed = "/r/.git/objects/pack/pack-" + "d" * 40 + ".idx"
    assert damaged_repository(NotADirectoryError(20, "Not a directory", packed))
    assert damaged_repository(IsADirectoryError(21, "Is a directory", "/r/.hive/x.yaml")) is None
    assert (
        damaged_repository(IsADirectoryError(21, "Is a directory", "/r/objects/zz/" + "c" * 38))
        is None
    )
