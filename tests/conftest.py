"""Shared fixtures: real git repositories in temporary directories, checked with real git."""

from __future__ import annotations

import contextlib
import gc
import gzip
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings

from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from tests import hivefork

if TYPE_CHECKING:
    from tests.serve_sample import Sample

# No wall-clock deadline per example (hypothesis' default is 200 ms, which an example
# waiting for a core on a loaded machine exceeds: DeadlineExceeded, or Flaky when the
# retry is quick). A property test that claims a speed measures CPU time instead.
settings.register_profile("hive", deadline=None)
settings.load_profile("hive")


def _build_click_commands_once() -> None:
    """typer's test runner (``CliRunner.invoke``) builds an app's whole click command
    tree on every call (~50 ms for hive's); the tree of an app is the same each time
    (every command is registered at import), so it is built once per app."""
    import typer.main
    import typer.testing

    built: dict[int, tuple[typer.Typer, Any]] = {}

    def get_command(app: typer.Typer) -> Any:
        known = built.get(id(app))
        if known is None or known[0] is not app:
            known = built[id(app)] = (app, typer.main.get_command(app))
        return known[1]

    typer.testing._get_command = get_command  # type: ignore[attr-defined,assignment]


_build_click_commands_once()

# pytest imports readline before this file (_pytest.capture's _readline_workaround), and
# GNU readline sets COLUMNS and LINES in the C environment, not in os.environ: a process
# a test started with the inherited environment ran 80 columns wide (``hive doctor``
# wrapped its lines) in a run without pytest-xdist, though no test had set $COLUMNS.
for _name in ("COLUMNS", "LINES"):
    if _name not in os.environ:
        os.unsetenv(_name)

# ----------------------------------------------------------------- how the suite runs
# `pytest` alone (no paths, -k, -m or --lf: the whole suite) runs as scripts/test.sh
# runs it: in parallel (pytest-xdist, `-n auto --dist worksteal`: one worker per CPU and
# one more, as the tests wait on the processes they start; HIVE_TEST_WORKERS=N to
# choose, 0 for one process). Every run keeps compiled bytecode (even where
# PYTHONDONTWRITEBYTECODE is set: else every worker compiles the test modules and every
# Python process a test starts compiles hive afresh; see _prepare_environment) and puts
# the temporary directories (tmp_path, TMPDIR of the processes the tests start) on a RAM
# file system when there is one (see _tests_tmpdir).
TESTS_TMPDIR_FREE = 4 << 30


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    if os.environ.get("HIVE_TEST_WORKERS"):
        return int(os.environ["HIVE_TEST_WORKERS"])
    return len(os.sched_getaffinity(0)) + 1


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    option = config.option
    if (
        not hasattr(config, "workerinput")  # not a worker (it is told -n None)
        and "PYTEST_XDIST_WORKER" not in os.environ
        and getattr(option, "numprocesses", "") is None  # pytest-xdist is there, no -n given
        and config.args_source == pytest.Config.ArgsSource.TESTPATHS
        and not (option.keyword or option.markexpr or option.collectonly or option.usepdb)
        and not getattr(option, "lf", False)
    ):
        option.numprocesses = "auto"
        if option.dist == "no":
            option.dist = "worksteal"


def _prepare_environment() -> None:
    """Bytecode kept and the temporary directories chosen, for this process and every
    one it starts (pytest-xdist's workers inherit them).

    Bytecode goes where Python keeps it by default, ``__pycache__`` beside each source
    (git ignores it): the standard library's and the installed packages' were compiled
    when they were installed. A cache prefix (``PYTHONPYCACHEPREFIX``, which a run set
    to .venv/pycache until session 40) makes Python ignore those: in a fresh clone each
    worker, the fork server and every process a test started before the prefix filled
    compiled pydantic, hypothesis, the MCP SDK and the standard library again (~9 s of
    CPU per worker; ~35 s of a clean clone's ~330)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    chosen = _tests_tmpdir()
    if chosen:
        os.makedirs(chosen, exist_ok=True)
        os.environ["TMPDIR"] = chosen
        tempfile.tempdir = None  # read again


def _tests_tmpdir() -> str | None:
    """HIVE_TEST_TMPDIR if set (empty: TMPDIR as it is); else /dev/shm/hive-tests-UID
    when /dev/shm is a tmpfs with 4 GiB free, mounted where a script may be executed
    (git runs the hooks the tests install). On a disk the tests' many small files,
    fsyncs and deletions wait behind other disk traffic (the whole suite: 347 s wall
    there, 214 s on tmpfs, for the same CPU, on two shared cores)."""
    if "HIVE_TEST_TMPDIR" in os.environ:
        return os.environ["HIVE_TEST_TMPDIR"] or None
    try:
        mounts = Path("/proc/mounts").read_text().splitlines()
        free = os.statvfs("/dev/shm")
    except OSError:
        return None
    for line in mounts:
        _, where, kind, options, *_ = line.split()
        if where == "/dev/shm":
            usable = kind == "tmpfs" and "noexec" not in options.split(",")
            if usable and free.f_bavail * free.f_frsize > TESTS_TMPDIR_FREE:
                return f"/dev/shm/hive-tests-{os.getuid()}"
    return None


GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test User",
    "GIT_AUTHOR_EMAIL": "test@example.com",
    "GIT_COMMITTER_NAME": "Test User",
    "GIT_COMMITTER_EMAIL": "test@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
    # no `git maintenance run --auto` after each commit, fetch and merge of git's (a process
    # of its own, ~750 in a run, which packs nothing in a test's few objects; hive packs
    # by gc.auto itself, and tests/test_packing.py runs git's gc when it compares)
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "maintenance.auto",
    "GIT_CONFIG_VALUE_0": "false",
}


# ----------------------------------------------------------- order of the test modules
# pytest-xdist (scripts/test.sh: --dist worksteal) hands each worker a contiguous share of
# the collection and lets an idle worker take the back half of another's queue: run in
# collection order, a run ends with whatever the last modules hold (property tests of
# seconds each) on one worker while the other waits. So modules run slowest first, by
# the seconds each took when it last ran here (pytest's cache, read once by the process
# that starts the workers and handed to them: every worker must collect the same order);
# a module stays whole (its fixtures are made once) and one not measured yet is put
# where the median module is (estimated_seconds).
# A fresh clone (CI) has no cache: it orders by tests/module_seconds.json, the seconds of
# a whole run kept in the repository (refresh it now and then from
# .pytest_cache/v/hive/module-seconds; a stale figure only costs a worse order).
MODULE_SECONDS = "hive/module-seconds"
GC_YOUNG_THRESHOLD = 7000  # Python's default: 700
KEPT_SECONDS = Path(__file__).with_name("module_seconds.json")
_measured: dict[str, float] = {}
_known: list[dict[str, float]] = []


def _module_seconds(config: pytest.Config) -> dict[str, float]:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:
        return dict(workerinput.get(MODULE_SECONDS, {}))
    if not _known:
        cache = getattr(config, "cache", None)
        cached = cache.get(MODULE_SECONDS, {}) if cache is not None else {}
        _known.append(cached or json.loads(KEPT_SECONDS.read_text(encoding="utf-8")))
    return _known[0]


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:  # pytest-xdist: a worker is being started
    node.workerinput[MODULE_SECONDS] = _module_seconds(node.config)
    node.workerinput[FORK_SERVER] = _fork_server_path()


# ----------------------------------------------------------------- one fork server
# tests/hivefork.py forks ``hive mcp`` and ``hive serve`` processes from a warm process
# (which imports for about a second of CPU). Under pytest-xdist the process that starts
# the workers starts one for all of them once a worker has collected a test of a module
# that uses it (its text names hivefork), and stops it at its end; a worker waits for
# its socket when it first needs it. A process of its own starts its own.
FORK_SERVER = "hive/fork-server"
_fork_server: dict[str, str] = {}


def _fork_server_path() -> str:
    if "path" not in _fork_server:
        _fork_server["path"] = hivefork.server_path()
    return _fork_server["path"]


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    if "started" not in _fork_server and _use_fork_server(node.config, ids):
        _fork_server["started"] = hivefork.start_server(_fork_server_path())


def _use_fork_server(config: pytest.Config, ids: list[str]) -> bool:
    """Whether a collected module names hivefork, or a test module it imports from does
    (``from tests.test_identity_surfaces import _server``)."""
    import re

    for name in {nodeid.split("::")[0] for nodeid in ids}:
        text = (config.rootpath / name).read_text("utf-8")
        imported = re.findall(r"^\s*from tests\.(\w+) import", text, re.MULTILINE)
        others = [f"tests/{other}.py" for other in imported if other != "conftest"]
        for module in [name, *others]:
            path = config.rootpath / module
            if path.is_file() and "hivefork" in path.read_text("utf-8"):
                return True
    return False


def pytest_configure(config: pytest.Config) -> None:
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None:
        _prepare_environment()
        if getattr(config.option, "numprocesses", None):
            compile_once(config, Path(__file__).resolve().parents[1])
    elif workerinput.get(FORK_SERVER):
        hivefork.share_server(workerinput[FORK_SERVER])


# ----------------------------------------------------------------- compiled once
# In a fresh clone nothing of hive or of the tests is compiled yet: each pytest-xdist
# worker rewrote the asserts of every test module it collects (pytest's assertion
# rewriting, ~6 s of CPU for the ~120 modules: most of collecting them) and compiled
# hive, all three at the same moment, and the fork server and every process a test
# started before a worker had written a module's bytecode compiled it again. The
# process that starts the workers does it once before it starts them (the cached
# files are what the workers then read; nothing to do when they are up to date).
def compile_once(config: pytest.Config, root: Path) -> None:
    """Write the bytecode of ``root``'s hive and of its tests' helpers (``compileall``),
    and its test modules' and conftest's assert-rewritten bytecode as pytest writes it
    when it imports them, where it is missing or stale: with two cores or more, half of
    it in a forked process (a fresh clone's ~6 s of CPU in half the wall time). Pytest's
    rewriting is not a public interface: if it is not as expected, the workers rewrite
    as before (and a module that does not compile is left to the worker that reports
    it)."""
    import compileall
    import re

    if sys.dont_write_bytecode or config.getoption("assertmode", "rewrite") != "rewrite":
        return
    tests = root / "tests"
    stale = _stale_rewrites(config, tests)
    helper = os.fork() if len(stale) > 1 and len(os.sched_getaffinity(0)) > 1 else -1
    try:
        if helper <= 0:  # the helper's share (or the whole, without one)
            compileall.compile_dir(root / "hive", quiet=2)
            helpers = re.compile(r"(^|/)(test_[^/]*|conftest)\.py$")
            compileall.compile_dir(tests, quiet=2, rx=helpers)
        _rewrite_tests(config, stale[1::2] if helper == 0 else stale[0::2] if helper > 0 else stale)
    finally:
        if helper == 0:
            os._exit(0)  # the forked helper: nothing of this process's to flush or run
    if helper > 0:
        os.waitpid(helper, 0)


def _stale_rewrites(config: pytest.Config, tests: Path) -> list[tuple[Path, Path]]:
    """Each test module and conftest under ``tests`` whose assert-rewritten bytecode is
    missing or stale, with the file it goes to (none if pytest is not as expected)."""
    try:
        from _pytest.assertion import rewrite

        state = config.stash[rewrite.assertstate_key]
        stale = []
        for path in sorted(tests.rglob("*.py")):
            if path.name.startswith("test_") or path.name == "conftest.py":
                pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
                if rewrite._read_pyc(path, pyc, state.trace) is None:
                    stale.append((path, pyc))
        return stale
    except (ImportError, AttributeError, KeyError, TypeError):
        return []


def _rewrite_tests(config: pytest.Config, stale: list[tuple[Path, Path]]) -> None:
    """Rewrite and write each of ``stale`` (``_stale_rewrites``) as pytest does."""
    from _pytest.assertion import rewrite

    state = config.stash[rewrite.assertstate_key]
    for path, pyc in stale:
        try:
            source_hash, code = rewrite._rewrite_test(path, config)
        except (SyntaxError, ValueError, OSError):
            continue  # the worker that imports it reports it
        except (AttributeError, TypeError):
            return  # not the pytest this was written for: the workers rewrite
        rewrite.try_makedirs(pyc.parent)
        rewrite._write_pyc(state, code, source_hash, pyc)


def pytest_collection_finish(session: pytest.Session) -> None:
    """What a test process imported and built while collecting lives to its end: out of the
    cyclic collector's sight (gc.freeze) it is not traversed again at every full collection,
    and the young generation is collected after 10 times the allocations (hypothesis and
    pydantic allocate a lot: the collector took ~12% of the property tests' CPU)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, 10, 10)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    known = _module_seconds(config)
    if known:
        seconds = estimated_seconds(known)
        items.sort(key=lambda item: -seconds(item.nodeid.split("::")[0]))


def estimated_seconds(known: dict[str, float]) -> Callable[[str], float]:
    """A module's seconds as last measured (``known``); one not measured yet (a test
    file added since), the median of the measured ones: a new module is as likely slow
    as fast, and run after every other one (as 0 s), a slow one is the run's tail (16
    modules were missing from tests/module_seconds.json, two of 6-8 s among them)."""
    unmeasured = statistics.median(known.values())
    return lambda module: known.get(module, unmeasured)


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    module = report.nodeid.split("::")[0]
    _measured[module] = _measured.get(module, 0.0) + report.duration


def pytest_sessionfinish(session: pytest.Session) -> None:
    cache = getattr(session.config, "cache", None)
    if cache is None or hasattr(session.config, "workerinput") or not _measured:
        return  # a worker: the process that started it sees every report and keeps them
    cache.set(MODULE_SECONDS, {**cache.get(MODULE_SECONDS, {}), **_measured})


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    _isolate(monkeypatch, new_home(tmp_path_factory))


def new_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new empty HOME for a test, in the folder ``homes`` of the test process's base
    temporary directory (kept as long as pytest keeps that). Not ``mktemp("home")``:
    pytest numbers such a directory by listing every one in the base directory, where
    every test of the process left its HOME (~1,000 a worker by the end of a run), and
    moves a ``homecurrent`` link each time: ~1 ms of CPU per test, twice for a test
    with a ``tmp_path`` (numbered the same way, in the same base directory)."""
    homes = tmp_path_factory.getbasetemp() / "homes"
    homes.mkdir(exist_ok=True)
    return Path(tempfile.mkdtemp(prefix="home", dir=homes))


@contextlib.contextmanager
def isolated_env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The environment every test runs in, for a fixture shared by several tests
    (module or session scope, set up before the per-test one)."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        _isolate(monkeypatch, new_home(tmp_path_factory))
        yield


def _isolate(monkeypatch: pytest.MonkeyPatch, home: Path) -> None:
    monkeypatch.setenv("HOME", str(home))
    for key, value in GIT_ENV.items():
        monkeypatch.setenv(key, value)
    for key in (
        "HIVE_AGENT",
        "HIVE_AGENT_TOKEN",
        "HIVE_AUTOCOMMIT",
        "HIVE_BYPASS",
        "HIVE_LOCK_TIMEOUT",
        "GIT_DIR",
        "COLUMNS",  # output width: a test sets it when it checks fitting
    ):
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


@pytest.fixture(scope="session")
def plain_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``repo`` copies: made once per test process."""
    with isolated_env(tmp_path_factory):
        root = make_repo(tmp_path_factory.mktemp("template") / "repo")
    for sample in (root / ".git" / "hooks").glob("*.sample"):  # inert; a third of a copy's files
        sample.unlink()
    return root


@pytest.fixture(scope="session")
def hive_template(tmp_path_factory: pytest.TempPathFactory, plain_template: Path) -> Path:
    """What ``repo`` copies for a test that uses ``ws``: hive initialised (prefix hv)."""
    with isolated_env(tmp_path_factory):
        root = copy_repo(plain_template, tmp_path_factory.mktemp("template") / "repo")
        init_hive(Workspace(str(root), actor="alice"), prefix="hv")
        return root


@pytest.fixture(scope="session")
def built_sample(tmp_path_factory: pytest.TempPathFactory) -> Sample:
    """The web views' sample hive (``tests/serve_sample.py``: its expired reservation
    takes a second), built once per test process; ``sample`` copies it."""
    from tests.serve_sample import build_sample

    with isolated_env(tmp_path_factory):
        return build_sample(tmp_path_factory.mktemp("sample") / "repo")


@pytest.fixture
def sample(built_sample: Sample, tmp_path: Path) -> Sample:
    """A copy of the sample hive, a repository of its own for the test."""
    from tests.serve_sample import copy_sample

    return copy_sample(built_sample, tmp_path / "repo")


def copy_repo(template: Path, path: Path) -> Path:
    """A copy of the repository ``template`` at ``path`` (working tree and .git): a
    repository of its own, as it would be had it been made there (credentials issued
    in the template by ``credential`` are known for the copy too)."""
    close_dropped_connections(template)
    copy_tree(template, path)
    for (root, name), token in list(_TOKENS.items()):
        if root == str(template):
            _TOKENS[(str(path), name)] = token
    return path


def copy_tree(source: Path | str, target: Path | str) -> None:
    """``shutil.copytree(source, target, symlinks=True)`` as the tests use it (each
    file's bytes, permission bits and access and modification times, each directory's
    and symbolic link's likewise, links copied as links) in half its CPU: copytree's
    ``copy2`` also asks every file for extended attributes (none in a test's
    repository) and changes its mode and times by path, not on the open file (~10 ms
    for a module template of ~200 files, ~3 s of ``test_lean_coord.py``'s CPU). A
    file ``target`` may not be; ``source`` is not changed."""
    entry = os.stat(source, follow_symlinks=False)
    os.mkdir(target)
    with os.scandir(source) as listed:
        entries = list(listed)
    for child in entries:
        there = os.path.join(target, child.name)
        if child.is_symlink():
            os.symlink(os.readlink(child.path), there)
            status = child.stat(follow_symlinks=False)
            os.utime(there, ns=(status.st_atime_ns, status.st_mtime_ns), follow_symlinks=False)
        elif child.is_dir(follow_symlinks=False):
            copy_tree(child.path, there)
        else:
            copy_file(child.path, there)
    os.chmod(target, entry.st_mode & 0o7777)
    os.utime(target, ns=(entry.st_atime_ns, entry.st_mtime_ns))


def copy_file(source: str, target: str) -> None:
    """One file of :func:`copy_tree`: its bytes, permission bits and times."""
    reading = os.open(source, os.O_RDONLY | os.O_CLOEXEC)
    try:
        status = os.fstat(reading)
        writing = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            offset = 0
            while offset < status.st_size:
                sent = os.sendfile(writing, reading, offset, status.st_size - offset)
                if not sent:
                    break  # the file shrank while it was copied
                offset += sent
            os.fchmod(writing, status.st_mode & 0o7777)
            os.utime(writing, ns=(status.st_atime_ns, status.st_mtime_ns))
        finally:
            os.close(writing)
    finally:
        os.close(reading)


def close_dropped_connections(repo: Path) -> None:
    """Close this process's connections to ``repo``'s SQLite files (the state index,
    the coordination database) that nothing refers to any more, before it is copied.

    A connection is closed when the cyclic collector frees it (sqlite3's statement
    cache refers back to its connection), at any allocation: during a copy, that close
    deleted the ``-wal`` file ``copytree`` had listed (FileNotFoundError; seen once in
    a full run). Only while such a file exists, as a full collection is not free."""
    for git_dir in (repo / ".git", repo):  # a working tree's, or a bare repository
        if any((git_dir / "hive").glob("*-wal")):
            gc.collect()
            return


@pytest.fixture
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A git repository with one commit and no hive yet; for a test that uses ``ws``, hive
    initialised in it as well. Each test gets a copy of one made once (``make_repo``,
    ``init_hive``), which is cheaper than making it again."""
    template = "hive_template" if "ws" in request.fixturenames else "plain_template"
    return copy_repo(request.getfixturevalue(template), tmp_path / "repo")


@pytest.fixture
def ws(repo: Path) -> Iterator[Workspace]:
    """An initialised hive, acting as 'alice'."""
    workspace = Workspace(str(repo), actor="alice")
    if not (repo / ".hive").exists():  # not a copy of the hive template
        init_hive(workspace, prefix="hv")
    yield workspace


def assert_clean(repo: Path) -> None:
    """git status shows nothing and fsck is clean."""
    assert git(repo, "status", "--porcelain") == ""
    fsck = subprocess.run(
        ["git", "-C", str(repo), *_no_graphs_to_verify(repo), "fsck", "--strict"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert fsck.returncode == 0, fsck.stderr + fsck.stdout


def _no_graphs_to_verify(repo: Path) -> list[str]:
    """git fsck runs ``git commit-graph verify`` and ``git multi-pack-index verify`` (two
    processes) for each object directory even when it has no such file to verify: the
    options that skip them when no object directory of ``repo`` has one."""
    git_dir = repo / ".git"
    if git_dir.is_file():  # a worktree's: "gitdir: PATH", and PATH/commondir
        git_dir = repo / git_dir.read_text().partition(":")[2].strip()
        if (git_dir / "commondir").is_file():
            git_dir = git_dir / (git_dir / "commondir").read_text().strip()
    objects = git_dir / "objects"
    if not objects.is_dir():
        return []  # not a layout known here: verify them
    alternates = objects / "info" / "alternates"
    folders = [objects]
    if alternates.exists():
        lines = alternates.read_text().splitlines()
        folders += [objects / line for line in lines if line and not line.startswith("#")]
    names = ("info/commit-graph", "info/commit-graphs", "pack/multi-pack-index")
    if any((folder / name).exists() for folder in folders for name in names):
        return []
    return ["-c", "core.commitGraph=false", "-c", "core.multiPackIndex=false"]


_TOKENS: dict[tuple[str, str], str] = {}


def credential(repo: Path | str, name: str) -> str:
    """A credential for agent ``name``, as a runner obtains it (issued once per test
    repository; re-issued when the name was registered otherwise)."""
    from hive.domain.identity import issue_credential
    from hive.store import credentials

    workspace = Workspace(str(repo), from_env=False)
    known = _TOKENS.get((str(repo), name))
    state_dir = workspace.git.paths.hive_state_dir
    if known is not None and credentials.name_of_token(state_dir, known) == name:
        return known
    token = issue_credential(workspace, name=name, replace=True).token
    _TOKENS[(str(repo), name)] = token
    return token


def agent_env(repo: Path | str, name: str, base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which hive commands (and the pre-commit hook) act as agent
    ``name``, proven by its credential."""
    env = {k: v for k, v in (base or os.environ).items() if not k.startswith("HIVE_")}
    env.update(HIVE_AGENT=name, HIVE_AGENT_TOKEN=credential(repo, name))
    return env


def set_coordinators(repo: Path | str, names: list[str]) -> None:
    """Grant ``names`` the coordinator role in .hive/config.yaml (one commit by git)."""
    from hive.store.yamlio import dumps, load_mapping

    config = Path(repo) / ".hive" / "config.yaml"
    settings = load_mapping(config.read_text(), "config")
    settings["coordinators"] = list(names)
    config.write_text(dumps(settings))
    git(repo, "commit", "-qm", "coordinators", "--no-verify", "--", ".hive/config.yaml")


class HeldClock:
    """hive's clock held still by a test and moved on when it says (:meth:`advance`): an
    expiry (a lease, a TTL, a delegated task's deadline) is tested without waiting for
    it, and a check meant for before it cannot run after it because a loaded machine
    was slow (a one-second lease ran out before the next call looked). It holds
    ``hive.times.utc_now`` (which every module's ``utc_now`` is: the ``datetime`` it
    asks is replaced, so a module imported meanwhile keeps nothing of the test's) and
    ``time.time`` in ``modules`` (those that read it for their expiries), in this
    process only."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, modules: tuple[str, ...] = ()) -> None:
        import importlib
        import time
        from datetime import datetime, tzinfo

        from hive import times

        self.seconds = time.time()
        clock = self

        class AnyDatetime(type):
            def __instancecheck__(cls, value: object) -> bool:
                return isinstance(value, datetime)

        class HeldDatetime(datetime, metaclass=AnyDatetime):
            @classmethod
            def now(cls, tz: tzinfo | None = None) -> datetime:
                return datetime.fromtimestamp(clock.seconds, tz)

            @classmethod
            def fromisoformat(cls, text: str) -> datetime:
                return datetime.fromisoformat(text)

        monkeypatch.setattr(times, "datetime", HeldDatetime)
        for name in modules:
            monkeypatch.setattr(importlib.import_module(name), "time", _HeldTime(self))

    def advance(self, seconds: float) -> None:
        self.seconds += seconds


class _HeldTime:
    """The ``time`` module as a module of :class:`HeldClock` sees it."""

    def __init__(self, clock: HeldClock) -> None:
        self._clock = clock

    def time(self) -> float:
        return self._clock.seconds

    def __getattr__(self, name: str) -> Any:
        import time

        return getattr(time, name)


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


def ctrl_c_as_at_a_terminal() -> None:
    """SIGINT as a terminal's shell leaves it, for a process a test starts and interrupts
    (``preexec_fn``): a test run started in the background by a shell without job control
    inherits it ignored, and Python then ignores it."""
    import signal

    signal.signal(signal.SIGINT, signal.SIG_DFL)


def script_run(
    script: str,
    repo: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 60,
    stdin: int | None = None,
) -> tuple[int, str, str]:
    """``python -c SCRIPT ARGS`` in ``repo`` with Ctrl-C as a terminal leaves it
    (``env``: else a person's; ``stdin``: else this process's): exit code, stdout,
    stderr (killed past ``timeout``)."""
    child = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=repo,
        stdin=stdin,
        capture_output=True,
        text=True,
        env=env or {**os.environ, "HIVE_AGENT": ""},
        preexec_fn=ctrl_c_as_at_a_terminal,
        check=False,
        timeout=timeout,
    )
    return child.returncode, child.stdout, child.stderr


def on_terminal(command: list[str], *, timeout: float = 120) -> tuple[int, bytes]:
    """Run ``command`` with stdout and stderr on a pseudo-terminal: (exit code, output)."""
    import pty

    from tests.inprocess import read_terminal

    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdout=follower, stderr=follower)
    os.close(follower)
    seen = read_terminal(leader)
    return proc.wait(timeout=timeout), seen


def at_a_terminal(repo: Path, args: list[str], typed: bytes) -> tuple[str, str, int]:
    """``hive ARGS`` with a terminal on standard input: (the first line it said on
    stderr before reading, its stdout, its exit code) after ``typed`` and Ctrl-D."""
    import pty
    import select

    leader, follower = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "hive", "-C", str(repo), *args],
        stdin=follower,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    os.close(follower)
    assert process.stderr is not None
    if not select.select([process.stderr], [], [], 30)[0]:  # it waits without a word
        process.kill()
        process.wait()
        os.close(leader)
        raise AssertionError(f"hive {' '.join(args)}: nothing said before reading the terminal")
    said = process.stderr.readline().decode()
    os.write(leader, typed + b"\n\x04")
    out, _ = process.communicate(timeout=60)
    os.close(leader)
    return said, out.decode(), process.returncode
