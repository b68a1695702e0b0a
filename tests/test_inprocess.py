"""The in-process runner (tests/inprocess.py) behaves as a `hive` process does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests import conftest
from tests.conftest import agent_env, compile_once, copy_repo, make_repo
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
    shutil.Error). Here the collector runs just before each ``-wal`` file is copied
    (``conftest.copy_file``, which ``copy_repo`` copies each file with)."""
    import gc

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
        real = conftest.copy_file

        def collected_first(source: str, target: str) -> None:
            if source.endswith("-wal"):
                gc.collect()
            real(source, target)

        monkeypatch.setattr(conftest, "copy_file", collected_first)
        copy = copy_repo(template, tmp_path / "copy")
    finally:
        gc.enable()
    monkeypatch.undo()
    listed = run_hive(["-C", str(copy), "list", "--json"], env={"HIVE_AGENT": ""})
    assert [cell["id"] for cell in json.loads(listed.stdout)] == [made]


def test_a_copied_tree_is_what_shutil_copytree_makes(tmp_path: Path) -> None:
    """``conftest.copy_tree`` (what ``copy_repo`` copies a template with) makes what
    ``shutil.copytree(symlinks=True)`` makes: each file's bytes, permission bits and
    modification time, each directory's, links as links (one dangling), empty
    directories and files; the source left as it was."""
    import shutil

    source = tmp_path / "source"
    (source / "objects" / "ab").mkdir(parents=True)
    (source / "empty").mkdir()
    (source / "objects" / "ab" / "cdef").write_bytes(os.urandom(70_000))
    (source / "hook").write_text("#!/bin/sh\nexit 0\n")
    (source / "nothing").write_bytes(b"")
    (source / "link").symlink_to("hook")
    (source / "dangling").symlink_to("nowhere/at/all")
    for path, mode in (("hook", 0o755), ("objects/ab/cdef", 0o444), ("empty", 0o700)):
        (source / path).chmod(mode)
    for number, path in enumerate(sorted(source.rglob("*"), reverse=True)):
        times = (1_600_000_000_123_456_789 + number, 1_500_000_000_987_654_321 + number)
        os.utime(path, ns=times, follow_symlinks=False)

    def described(root: Path) -> list[tuple[object, ...]]:
        found = []
        for path in sorted([root, *root.rglob("*")]):
            status = path.lstat()
            kind = "link" if path.is_symlink() else "dir" if path.is_dir() else "file"
            content = os.readlink(path) if kind == "link" else None
            if kind == "file":
                content = path.read_bytes()
            mode = status.st_mode & 0o7777 if kind != "link" else None
            found.append((str(path.relative_to(root)), kind, mode, status.st_mtime_ns, content))
        return found

    before = described(source)
    shutil.copytree(source, tmp_path / "by_shutil", symlinks=True)
    conftest.copy_tree(source, tmp_path / "by_conftest")
    assert described(tmp_path / "by_conftest") == described(tmp_path / "by_shutil")
    assert described(tmp_path / "by_conftest")[1:] == before[1:]  # (the root's name differs)
    assert described(source) == before


def test_the_suite_is_compiled_once_before_the_workers_start(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    """``conftest.compile_once`` (what the process starting pytest-xdist's workers runs)
    leaves the bytecode each worker would otherwise write itself: hive's and the tests'
    helpers' as ``import`` writes it, each test module's and conftest's with its asserts
    rewritten as pytest writes it (pytest reads it back, and the assert explains
    itself), those a forked helper took (``test_thing``, with two cores) as well; a
    module that does not compile is left to the worker to report."""
    import importlib.util

    from _pytest.assertion import rewrite

    (tmp_path / "hive").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "hive" / "thing.py").write_text("VALUE = 1\n")
    (tmp_path / "tests" / "helper.py").write_text("HELP = 2\n")
    (tmp_path / "tests" / "conftest.py").write_text("X = 3\n")
    (tmp_path / "tests" / "test_thing.py").write_text(
        "def test_it():\n    left, right = 1, 2\n    assert left == right\n"
    )
    (tmp_path / "tests" / "test_broken.py").write_text("def test_it(:\n")
    (tmp_path / "tests" / "test_other.py").write_text("def test_it():\n    assert True\n")
    compile_once(pytestconfig, tmp_path)

    for module in ("hive/thing.py", "tests/helper.py"):
        assert Path(importlib.util.cache_from_source(str(tmp_path / module))).is_file()
    assert not Path(
        importlib.util.cache_from_source(str(tmp_path / "tests/test_thing.py"))
    ).exists()
    state = pytestconfig.stash[rewrite.assertstate_key]
    for name in ("test_thing", "conftest", "test_other"):
        source = tmp_path / "tests" / f"{name}.py"
        pyc = rewrite.get_cache_dir(source) / f"{name}{rewrite.PYC_TAIL}"
        assert rewrite._read_pyc(source, pyc, state.trace) is not None, name
    code = rewrite._read_pyc(
        tmp_path / "tests" / "test_thing.py",
        rewrite.get_cache_dir(tmp_path / "tests" / "test_thing.py")
        / f"test_thing{rewrite.PYC_TAIL}",
    )
    namespace: dict[str, object] = {}
    assert code is not None
    exec(code, namespace)  # the rewritten module
    with pytest.raises(AssertionError) as failed:
        namespace["test_it"]()  # type: ignore[operator]
    assert "assert 1 == 2" in str(failed.value)
    broken = tmp_path / "tests" / "test_broken.py"
    assert not list(rewrite.get_cache_dir(broken).glob("test_broken*"))


def test_each_test_has_a_new_empty_home_outside_the_numbered_directories(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """HOME (conftest's autouse ``_isolated_env``) is new and empty for each test and
    kept in the base temporary directory's ``homes``: pytest numbers ``tmp_path`` and
    ``mktemp`` directories by listing the base directory, which a HOME per test there
    made a thousand entries long in each worker."""
    home = Path(os.environ["HOME"])
    assert home.is_dir() and list(home.iterdir()) == []
    assert home.parent == tmp_path_factory.getbasetemp() / "homes"
    another = conftest.new_home(tmp_path_factory)
    assert another != home and another.parent == home.parent
