"""A repository whose git objects are missing or damaged: hive says so (exit 7,
``corrupt_file``) and names ``git fsck``, on the CLI's lean and full paths and as a
tool error, instead of an internal error (exit 70) that blames hive."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hive.errors import damaged_repository
from hive.tools.registry import CallContext, call_tool
from tests.conftest import copy_repo, git
from tests.hivefork import hive_command

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
