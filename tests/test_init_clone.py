"""``hive init`` in a fresh clone of a remote whose hive travels by ``hive sync`` only
(the branch with ``.hive/`` not pushed yet): it takes the remote hive's settings."""

from __future__ import annotations

import contextlib
import http.server
import json
import socketserver
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.domain import setup
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


class _Asks(http.server.BaseHTTPRequestHandler):
    """A git server over http that wants a user name and password for everything."""

    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="hive test"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        return


@contextlib.contextmanager
def _server(handler: type[socketserver.BaseRequestHandler]) -> Iterator[int]:
    """A local TCP server of ``handler`` in a thread: its port."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_init_asks_for_no_password(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """init's fetch of the remote's hive asked for credentials (an askpass program, else
    the terminal): an agent's or a script's ``hive init`` waited for a password nobody
    would type. It now fails at once, with the defaults and a note."""
    asked = tmp_path / "asked"
    askpass = tmp_path / "askpass.sh"
    askpass.write_text(f"#!/bin/sh\necho asked >> {asked}\necho secret\n")
    askpass.chmod(0o755)
    monkeypatch.setenv("GIT_ASKPASS", str(askpass))
    repo = without_sample_hooks(make_repo(tmp_path / "r"))
    with _server(_Asks) as port:
        git(repo, "remote", "add", "origin", f"http://127.0.0.1:{port}/app.git")
        done = run_hive(["-C", str(repo), "init"])
    assert done.returncode == 0 and "(prefix hv)" in done.stdout, done.stderr
    assert not asked.exists()
    assert "note: could not read origin's hive (cannot fetch hive's refs from origin:" in (
        done.stderr
    )
    assert "terminal prompts disabled" in done.stderr  # git's own reason


class _Silent(socketserver.BaseRequestHandler):
    """A remote that takes the connection and never answers (a host gone quiet)."""

    def handle(self) -> None:
        while self.request.recv(4096):  # until git, given up on, is gone
            continue


def test_init_with_a_remote_that_does_not_answer_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A remote that never answers held init for git's full two minutes, then said
    "git -c failed: Command [...] timed out"; it now waits INIT_FETCH_SECONDS and says
    that the remote gave no answer (the defaults are used)."""
    monkeypatch.setattr(setup, "INIT_FETCH_SECONDS", 1.0)
    repo = without_sample_hooks(make_repo(tmp_path / "r"))
    with _server(_Silent) as port:
        git(repo, "remote", "add", "origin", f"git://127.0.0.1:{port}/app.git")
        started = time.monotonic()
        done = run_hive(["-C", str(repo), "init"])
        assert time.monotonic() - started < 8
    assert done.returncode == 0 and "(prefix hv)" in done.stdout, done.stderr
    assert (
        "note: could not read origin's hive (cannot fetch hive's refs from origin: git fetch"
        " gave no answer within 1 s): initialised with the defaults" in done.stderr
    )
