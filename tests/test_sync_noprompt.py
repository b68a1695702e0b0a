"""Every git command hive runs against a remote asks nobody for anything: ``hive sync``
and ``hive mail sync`` fail at once, naming the remote, where a remote that wants
credentials held them on a password prompt (git's, an askpass program's, ssh's)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from tests.conftest import git, make_repo
from tests.inprocess import run_hive
from tests.templates import without_sample_hooks
from tests.test_init_clone import _Asks, _server

BOTH_PATHS = ("hive", "hive.cli.main")  # the lean sync first, and the full CLI


def _hive_repo(tmp_path: Path) -> Path:
    repo = without_sample_hooks(make_repo(tmp_path / "r"))
    init_hive(Workspace(str(repo), actor="alice"), prefix="hv")
    return repo


def _askpass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An askpass program that would answer, leaving a file behind when asked."""
    asked = tmp_path / "asked"
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho asked >> {asked}\necho secret\n")
    askpass.chmod(0o755)
    monkeypatch.setenv("GIT_ASKPASS", str(askpass))
    monkeypatch.setenv("SSH_ASKPASS", str(askpass))
    return asked


@pytest.mark.parametrize("module", BOTH_PATHS)
@pytest.mark.parametrize("command", [["sync"], ["mail", "sync"]])
def test_a_sync_with_an_https_remote_wanting_a_password_fails_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str, command: list[str]
) -> None:
    """hive init's fetch asked for no password; hive sync's and mail sync's did (the
    askpass program, else the terminal: an agent's sync waited for ever)."""
    asked = _askpass(tmp_path, monkeypatch)
    repo = _hive_repo(tmp_path)
    with _server(_Asks) as port:
        git(repo, "remote", "add", "origin", f"http://127.0.0.1:{port}/app.git")
        started = time.monotonic()
        done = run_hive(["-C", str(repo), *command], module=module)
        assert time.monotonic() - started < 30
    assert not asked.exists(), "an askpass program was asked"
    assert done.returncode == 8, (done.stdout, done.stderr)
    said = done.stderr.strip()
    assert said.startswith("error: cannot "), said  # fetch hive's refs from / read origin
    assert " origin: origin needs credentials and hive never asks for them" in said
    assert "terminal prompts disabled" in said and "'git ls-remote origin'" in said
    assert "Traceback" not in said and said.count("\n") == 0


def _fake_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A real ``ssh`` first on PATH that writes down how git ran it and fails as ssh
    does for a key the server refuses."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "ssh-run"
    ssh = bin_dir / "ssh"
    ssh.write_text(
        "#!/bin/sh\n"
        f'echo "args: $*" >> {record}\n'
        f'echo "prompt: $GIT_TERMINAL_PROMPT" >> {record}\n'
        'echo "git@example.invalid: Permission denied (publickey)." >&2\n'
        "exit 255\n"
    )
    ssh.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("GIT_SSH_COMMAND", raising=False)
    monkeypatch.delenv("GIT_SSH", raising=False)
    return record


@pytest.mark.parametrize("module", BOTH_PATHS)
def test_ssh_runs_in_batch_mode_and_a_refused_key_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    """ssh asks on the terminal itself (a passphrase, a password, a new host's key):
    hive runs it with BatchMode=yes, and says the remote wants credentials."""
    record = _fake_ssh(tmp_path, monkeypatch)
    repo = _hive_repo(tmp_path)
    git(repo, "remote", "add", "up", "ssh://git@example.invalid/app.git")
    done = run_hive(["-C", str(repo), "sync", "up"], module=module)
    assert done.returncode == 8, (done.stdout, done.stderr)
    ran = record.read_text()
    assert "args: -o BatchMode=yes " in ran and "example.invalid" in ran, ran
    assert "prompt: 0" in ran
    said = done.stderr.strip()
    assert said.startswith("error: cannot fetch hive's refs from up: up needs credentials"), said
    assert "(git@example.invalid: Permission denied (publickey).)" in said


@pytest.mark.parametrize("how", ["environment", "config"])
def test_an_ssh_command_of_the_user_s_own_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    """The user's own ssh command (GIT_SSH_COMMAND, core.sshCommand) is run as they set it."""
    record = _fake_ssh(tmp_path, monkeypatch)
    repo = _hive_repo(tmp_path)
    git(repo, "remote", "add", "up", "ssh://git@example.invalid/app.git")
    if how == "environment":
        monkeypatch.setenv("GIT_SSH_COMMAND", "ssh -o Mine=yes")
    else:
        git(repo, "config", "core.sshCommand", "ssh -o Mine=yes")
    done = run_hive(["-C", str(repo), "sync", "up"])
    assert done.returncode == 8, (done.stdout, done.stderr)
    ran = record.read_text()
    assert "args: -o Mine=yes " in ran and "BatchMode" not in ran, ran
