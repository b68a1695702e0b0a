"""The in-process runner (tests/inprocess.py) behaves as a `hive` process does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import agent_env, copy_repo, make_repo
from tests.inprocess import fork_call, fork_hive, run_hive


def test_output_and_exit_codes_match_a_real_process(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    real_repo, inside_repo = make_repo(tmp_path / "real"), make_repo(tmp_path / "inside")
    for argv in (["init", "--prefix", "hv"], ["list", "--json"], ["show", "nope"], ["--version"]):
        real = subprocess.run(
            [sys.executable, "-m", "hive", "-C", str(real_repo), *argv],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        inside = run_hive(["-C", str(inside_repo), *argv], env=env)
        assert inside.returncode == real.returncode, argv
        assert inside.stdout.replace("inside", "real") == real.stdout, argv
        assert inside.stderr.replace("inside", "real") == real.stderr, argv
    assert run_hive(["-C", str(inside_repo), "show", "nope"]).returncode == 3


def test_a_process_a_test_starts_has_the_tests_environment() -> None:
    """Not COLUMNS or LINES that readline (imported by pytest) put in the C environment
    only: the process ran 80 columns wide in a run without pytest-xdist."""
    assert "COLUMNS" not in os.environ and "LINES" not in os.environ  # conftest's _isolate
    probe = "import os; print(os.environ.get('COLUMNS'), os.environ.get('LINES'))"
    seen = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert seen.stdout == "None None\n", seen


def test_process_state_is_put_back(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cwd, argv, streams = os.getcwd(), list(sys.argv), (sys.stdin, sys.stdout, sys.stderr)
    handler = signal.getsignal(signal.SIGINT)
    monkeypatch.setenv("HIVE_KEEP_ME", "1")  # removed again after the test
    result = run_hive(["init"], cwd=repo, env={"PATH": os.environ["PATH"], "HOME": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert (repo / ".hive").is_dir()  # it ran in ``cwd``
    assert os.getcwd() == cwd and sys.argv == argv
    assert (sys.stdin, sys.stdout, sys.stderr) == streams
    assert signal.getsignal(signal.SIGINT) == handler
    assert os.environ["HIVE_KEEP_ME"] == "1"
    global_json = run_hive(["-C", str(repo), "--json", "list"])
    assert json.loads(global_json.stdout) == []
    plain = run_hive(["-C", str(repo), "list"])  # --json of the previous call is not kept
    assert not plain.stdout.startswith("[")


def test_environment_and_stdin_are_the_commands_own(repo: Path) -> None:
    assert run_hive(["-C", str(repo), "init"]).returncode == 0
    env = agent_env(repo, "bob")
    created = run_hive(
        ["-C", str(repo), "--json", "create", "--from", "-"],
        env=env,
        input=json.dumps([{"title": "from stdin"}]),
    )
    assert created.returncode == 0, created.stderr
    shown = json.loads(run_hive(["-C", str(repo), "--json", "list"], env=env).stdout)
    assert [cell["title"] for cell in shown] == ["from stdin"]
    assert shown[0]["created_by"] == "bob"  # HIVE_AGENT_TOKEN of ``env`` proved who acted
    assert "HIVE_AGENT_TOKEN" not in os.environ


def test_kill_points_need_a_real_process(repo: Path) -> None:
    with pytest.raises(ValueError, match="subprocess"):
        run_hive(["-C", str(repo), "list"], env={"HIVE_TEST_KILL_AT": "after-reflog"})


def test_forked_processes_are_real_and_report_like_popen(repo: Path) -> None:
    def report() -> int:
        print(os.getpid(), sys.argv[1:], sys.stdin.read(), os.environ.get("ONLY"), os.getcwd())
        return 3

    child = fork_call(report, argv=["a", "b"], env={"ONLY": "me"}, cwd=repo, input="piped")
    out, err = child.communicate(timeout=60)
    pid, *rest = out.split()
    assert int(pid) == child.pid != os.getpid() and child.returncode == 3, err
    assert rest == ["['a',", "'b']", "piped", "me", str(repo)]
    assert "ONLY" not in os.environ and os.getcwd() != str(repo)
    failed = fork_call(lambda: 1 / 0)
    assert (
        failed.communicate(timeout=60)[1].rstrip().endswith("ZeroDivisionError: division by zero")
    )
    assert failed.returncode == 1
    hive = fork_hive(["-C", str(repo), "--json", "init"], module="hive.cli.main")
    assert hive.wait(timeout=60) == 0 and (repo / ".hive").is_dir()


def test_a_copy_is_whole_when_the_collector_closes_a_connection_of_the_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A template a fixture built with Workspaces it dropped keeps its state index's
    ``-wal`` file until the cyclic collector closes their connection; a collection
    while ``copytree`` copied deleted the file it had listed (FileNotFoundError,
    shutil.Error). Here the collector runs just before each ``-wal`` file is copied."""
    import gc
    import shutil

    from hive.domain.cells import create_cell
    from hive.domain.setup import init_hive
    from hive.domain.workspace import Workspace

    template = make_repo(tmp_path / "template")

    def build() -> str:
        ws = Workspace(str(template), actor="alice")
        init_hive(ws, prefix="hv")
        return create_cell(ws, title="made in the template").id

    gc.disable()  # the fixture's garbage is not collected before the copy
    try:
        made = build()
        assert list((template / ".git" / "hive").glob("*-wal"))
        real = shutil.copyfile

        def collected_first(source: os.PathLike[str], target: str, **options: bool) -> str:
            if os.fspath(source).endswith("-wal"):  # (a DirEntry from copytree)
                gc.collect()
            return real(source, target, **options)

        monkeypatch.setattr(shutil, "copyfile", collected_first)
        copy = copy_repo(template, tmp_path / "copy")
    finally:
        gc.enable()
    monkeypatch.undo()
    listed = run_hive(["-C", str(copy), "list", "--json"], env={"HIVE_AGENT": ""})
    assert [cell["id"] for cell in json.loads(listed.stdout)] == [made]
