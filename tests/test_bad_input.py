"""Hostile surroundings of a ``hive`` process in a real repository: standard streams it
was started without, git config files git itself skips or refuses, repositories hive
cannot write. Each answer is a clear message and an exit code, never "internal error"
or a traceback, and nothing is written when refused.

The standard-stream tests start a real process (``_hive``: its descriptors are what is
tested); the others run the command line in this process (``_run``, tests/inprocess.py:
the exit code, stdout and stderr a process gives, its environment its own)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hive.domain.cells import create_cell
from hive.domain.epics import create_epic
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from tests.conftest import agent_env, assert_clean, credential, git, make_repo
from tests.inprocess import Outcome, run_hive

HIVE = [sys.executable, "-m", "hive"]


def _hive(
    repo: Path,
    *args: str,
    close: tuple[int, ...] = (),
    stdin: bytes | None = b"",
) -> subprocess.CompletedProcess[bytes]:
    """``hive -C REPO ARGS`` as a new process, started without the descriptors in
    ``close`` (as a shell's ``>&-`` starts it)."""

    def closing() -> None:
        for number in close:
            os.close(number)

    return subprocess.run(
        [*HIVE, "-C", str(repo), *args],
        input=None if 0 in close else stdin,
        capture_output=True,
        preexec_fn=closing if close else None,
        timeout=120,
        check=False,
    )


def _run(
    repo: Path, *args: str, stdin: str | None = None, env: dict[str, str] | None = None
) -> Outcome:
    """``hive -C REPO ARGS`` in this process (``env``: its whole environment)."""
    return run_hive(["-C", str(repo), *args], input=stdin, env=env)


def _said(done: subprocess.CompletedProcess[bytes] | Outcome) -> str:
    if isinstance(done, Outcome):
        text = done.stdout + done.stderr
    else:
        text = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def _said_text(done: subprocess.CompletedProcess[str]) -> str:
    """What an in-process run said (no traceback, no internal error)."""
    text = done.stdout + done.stderr
    assert "Traceback" not in text and "internal error" not in text, text
    return text


def _commits(repo: Path) -> str:
    return git(repo, "rev-list", "--all")


# ----------------------------------------------------------------- standard streams


@pytest.mark.parametrize("encoding", ["ascii", "latin-1"])
def test_output_declared_in_another_charset_is_written_as_utf8(repo: Path, encoding: str) -> None:
    """A standard output declared ASCII or Latin-1 (PYTHONIOENCODING, a LANG of
    another charset): showing a title in another script ended in 'internal error:
    UnicodeEncodeError' (exit 70); hive writes UTF-8, as git does. Each command is a
    process forked from the tests' warm fork server with ``finalize`` (tests/hivefork.py:
    the console script's code on standard streams made as a new interpreter makes them,
    PYTHONIOENCODING's encoding included, ending as that process ends), not a fresh
    interpreter (18 of them: ~1.4 s of CPU saved)."""
    from tests.hivefork import hive_command

    title = "caf\u00e9 \u2603 \u4e2d\u6587"
    env = {**os.environ, "PYTHONIOENCODING": encoding, "HIVE_AGENT": ""}

    def run(*args: str) -> subprocess.CompletedProcess[bytes]:
        command = hive_command(["-C", str(repo), *args], finalize=True)
        return subprocess.run(command, capture_output=True, env=env, timeout=120)

    assert run("init").returncode == 0
    created = run("create", title)
    assert created.returncode == 0, _said(created)
    cell = created.stdout.decode("utf-8").split()[1]
    for args in (["show", cell], ["list"], ["comment", cell, title], ["stats"]):
        done = run(*args)
        said = _said(done)
        assert done.returncode == 0, (args, said)
    shown = run("show", cell)
    assert title in shown.stdout.decode("utf-8")
    for args in (["--json", "show", cell], ["--json", "log", cell]):
        done = run(*args)
        assert done.returncode == 0, (args, _said(done))
        assert title in json.dumps(json.loads(done.stdout.decode("utf-8")), ensure_ascii=False)


def test_a_closed_standard_output_is_refused_before_anything_is_done(
    ws: Workspace, repo: Path
) -> None:
    before = _commits(repo)
    for args in (["create", "never written"], ["list"], ["agent", "register", "Bob"]):
        done = _hive(repo, *args, close=(1,))
        said = _said(done)
        assert done.returncode == 2, said
        assert "standard output is closed" in said and "nothing was done" in said
    assert _commits(repo) == before  # no cell written, no credential issued unseen
    assert "Bob" not in _run(repo, "agent", "list").stdout
    assert_clean(repo)


def test_the_hook_runs_with_a_closed_standard_output(ws: Workspace, repo: Path) -> None:
    (repo / "README.md").write_text("# changed\n")
    git(repo, "add", "README.md")
    done = _hive(repo, "hooks", "run", "pre-commit", close=(1,))
    assert done.returncode == 0, _said(done)


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["tools", "run"], 2, '"code":"invalid_envelope"'),
        (["create", "--from", "-"], 2, "no cells to create"),
        (["swarm", "validate-decomposition", "-"], 2, "the decomposition is empty"),
        (["qa", "run", "-"], 2, "not JSON"),
    ],
)
def test_a_closed_standard_input_reads_as_empty(
    ws: Workspace, repo: Path, args: list[str], code: int, words: str
) -> None:
    before = _commits(repo)
    done = _hive(repo, *args, close=(0,))
    said = _said(done)
    assert done.returncode == code, said
    assert words in said
    assert _commits(repo) == before


def test_a_closed_standard_error_keeps_the_exit_code(ws: Workspace, repo: Path) -> None:
    done = _hive(repo, "show", "hv-nosuch", close=(2,))
    assert done.returncode == 3  # not found, as with stderr open (was 1: stderr None)
    assert done.stdout == b""
    done = _hive(repo, "create", "written", close=(2,))
    assert done.returncode == 0 and done.stdout.startswith(b"created ")


# ----------------------------------------------------------------- git config files


def _home(repo: Path, tmp_path: Path, make: Callable[[Path], None]) -> dict[str, str]:
    """The environment of a HOME that ``make`` makes; the repository's own config no
    longer names the user, so hive asks the global files (as git does)."""
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    home = tmp_path / "home"
    make(home)
    return {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


@pytest.mark.parametrize(
    "make",
    [
        lambda home: home.write_text("HOME is a file\n"),
        lambda home: (home / ".gitconfig").mkdir(parents=True),
    ],
    ids=["home-is-a-file", "gitconfig-is-a-directory"],
)
def test_a_global_git_config_git_skips_is_skipped(
    ws: Workspace, repo: Path, tmp_path: Path, make: Callable[[Path], None]
) -> None:
    """Reading the config, hive skips what git skips; a ``.gitconfig`` that is a directory
    makes ``git commit`` refuse ("unknown error occurred while reading the configuration
    files") where no identity is configured elsewhere, and hive then commits as the person
    at ``hive.local`` (tests/test_git_identity.py); an agent writes as itself."""
    env = _home(repo, tmp_path, make)
    for args in (["create", "written"], ["agent", "register", "Bob"], ["comment", "hv", "x"]):
        done = _run(repo, *args, env=env)
        assert done.returncode == 0, _said(done)
    agent = {**env, "HIVE_AGENT_TOKEN": credential(repo, "Bob")}
    done = _run(repo, "create", "written", env=agent)
    assert done.returncode == 0, _said(done)
    assert "written" in git(repo, "log", "-1", "--format=%s")
    assert_clean(repo)


def test_a_global_git_config_git_refuses_is_named(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    def bad(home: Path) -> None:
        home.mkdir()
        (home / ".gitconfig").write_text("[user\n\tname = x\n")

    env = _home(repo, tmp_path, bad)
    assert subprocess.run(["git", "-C", str(repo), "status"], env=env, check=False).returncode
    before = _commits(repo)
    for args in (["create", "never written"], ["reserve", "README.md"]):
        done = _run(repo, *args, env=env)
        said = _said(done)
        assert done.returncode == 7, said
        assert f"{env['HOME']}/.gitconfig: not a valid git config file" in said
    done = _run(
        repo,
        "tools",
        "run",
        env=env,
        stdin='{"tool_calls": [{"name": "hive_create", "args": {"title": "never written"}}]}',
    )
    result = json.loads(done.stdout)["results"][0]
    assert result["code"] == "corrupt_file" and ".gitconfig" in result["error"]
    assert _commits(repo) == before


def test_a_repository_git_config_git_refuses_is_named(ws: Workspace, repo: Path) -> None:
    before = _commits(repo)
    config = repo / ".git" / "config"
    good = config.read_text()
    config.write_text(good + "[core\n")
    for args in (["create", "never written"], ["agent", "register", "Bob"]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 7, said
        assert f"{repo}/.git/config: not a valid git config file" in said
    config.write_text(good)
    assert _commits(repo) == before


# ----------------------------------------------------------------- repositories


def test_a_sha256_repository_is_refused_and_left_as_it_was(tmp_path: Path) -> None:
    repo = tmp_path / "sha256"
    repo.mkdir()
    git(repo, "init", "-q", "--object-format=sha256")
    (repo / "README.md").write_text("# project\n")
    git(repo, "add", "README.md")
    git(repo, "commit", "-qm", "initial")
    head = git(repo, "rev-parse", "HEAD")
    for args in (["init"], ["create", "never written"], ["list"]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 2, said
        assert "SHA-256" in said and "hive cannot work in this repository" in said
    done = _run(repo, "tools", "run", stdin='{"tool_calls": [{"name": "hive_ready"}]}')
    assert done.returncode == 2 and "SHA-256" in _said(done)
    assert git(repo, "rev-parse", "HEAD") == head  # nothing written: git still reads it
    assert not (repo / ".hive").exists()
    assert_clean(repo)


def test_a_reftable_repository_is_refused(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "reftable")
    with (repo / ".git" / "config").open("a") as config:
        config.write("[extensions]\n\trefStorage = reftable\n")
    done = _run(repo, "init")
    assert done.returncode == 2 and "reftable" in _said(done)
    assert not (repo / ".hive").exists()


# ----------------------------------------------------------------- text that is not UTF-8


def test_bytes_that_are_not_utf8_in_any_text_are_refused_before_a_commit(
    ws: Workspace, repo: Path
) -> None:
    """A description took the lone surrogates of such bytes (no length limit, so no
    check): the epic was committed with an escape YAML has not, unreadable after."""
    before = _commits(repo)
    bad = os.fsdecode(b"\xff\xfe")
    done = _run(repo, "epic", "create", "E", "-s", "a", "--epic-description", bad)
    said = _said(done)
    assert done.returncode == 2, said
    assert "invalid --epic-description" in said and "not UTF-8 text" in said
    subtask = '{"title": "b", "description": "' + bad + '"}'
    done = _run(repo, "epic", "create", "E", "-s", subtask)
    said = _said(done)
    assert done.returncode == 2 and "not UTF-8 text" in said and "nothing was written" in said
    with pytest.raises(InvalidInput, match="not UTF-8 text"):
        create_epic(ws, title="E", subtasks=["a"], description="\udcff")
    assert _commits(repo) == before
    assert _run(repo, "doctor").returncode == 0
    assert_clean(repo)


def test_a_nul_in_a_project_path_is_invalid_input(ws: Workspace, repo: Path) -> None:
    envelope = {"tool_calls": [{"name": "swarmmail_init", "args": {"project_path": "a\0b"}}]}
    done = _run(repo, "tools", "run", stdin=json.dumps(envelope))
    result = json.loads(done.stdout)["results"][0]
    assert result["code"] == "invalid_input" and result["field"] == "project_path"
    assert "NUL" in result["error"]


# ----------------------------------------------------------------- hive's own files


def test_a_file_in_place_of_the_state_directory_is_named(ws: Workspace, repo: Path) -> None:
    """``.git/hive`` a file: the coordination store, the credential store and doctor
    ended in "internal error" (FileExistsError, NotADirectoryError)."""
    state = repo / ".git" / "hive"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("not a directory\n")
    for args in (["ctx", "get", "k"], ["queue", "status"], ["create", "x"], ["todo", "list"]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 8, said
        assert f"{state} is not a directory: hive keeps its lock and state there" in said
    for args in (["agent", "list"], ["list"]):
        done = _run(repo, *args)
        assert done.returncode == 0, _said(done)
    doctor = _run(repo, "--json", "doctor")  # reads work (an index in memory); doctor
    assert doctor.returncode == 1, _said(doctor)  # says what is wrong
    found = {p["path"]: p for p in json.loads(doctor.stdout)["problems"]}
    assert found[str(state)]["kind"] == "not-a-directory"
    assert f"{state} is not a directory" in found[str(state)]["message"]
    assert state.read_text() == "not a directory\n"


def test_a_file_where_hive_keeps_a_directory_is_not_called_a_symlink(
    ws: Workspace, repo: Path
) -> None:
    before = _commits(repo)
    cells = repo / ".hive" / "cells"
    shutil.rmtree(cells, ignore_errors=True)
    cells.write_text("a file\n")
    done = _run(repo, "create", "never written")
    said = _said(done)
    assert done.returncode == 4, said
    assert ".hive/cells is a file in the working tree where hive keeps a directory" in said
    assert "symlink" not in said
    assert _commits(repo) == before and cells.read_text() == "a file\n"
    doctor = _run(repo, "doctor")
    assert doctor.returncode == 1, _said(doctor)
    assert "not-a-directory: .hive/cells is a file, not the directory of cell files" in (
        _said(doctor)
    )
    git(repo, "add", ".hive/cells")
    git(repo, "commit", "-qm", "a file committed where the cells go")
    committed = _run(repo, "doctor")
    assert committed.returncode == 1 and ".hive/cells is a file" in _said(committed)


# ----------------------------------------------------------------- text people read


def test_control_characters_in_a_close_reason_or_an_outcome_are_refused(
    ws: Workspace, repo: Path
) -> None:
    """A close reason, an outcome's summary and criteria were stored with escape
    sequences that 'hive show', 'hive review' and 'hive search' then printed raw to
    a person's terminal (other text fields refuse them already)."""
    cell = create_cell(ws, title="t").id
    before = _commits(repo)
    red = "\x1b[31mred"
    for args in (
        ["close", cell, "--reason", red],
        ["close", cell, "-r", red, "--json"],
        ["swarm", "record-outcome", cell, "--success", "-s", red],
        ["swarm", "record-outcome", cell, "--failure", "--criteria", red],
        ["swarm", "complete", cell, "-s", red, "--no-gate"],
    ):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 2, said
        assert "control characters (found U+001B)" in said
    envelope = {"tool_calls": [{"name": "hive_close", "args": {"id": cell, "reason": red}}]}
    done = _run(repo, "tools", "run", stdin=json.dumps(envelope))
    assert json.loads(done.stdout)["results"][0]["code"] == "invalid_input"
    assert _commits(repo) == before
    closed = _run(repo, "close", cell, "--reason", "two lines\n\tof reason")
    assert closed.returncode == 0, _said(closed)


# ----------------------------------------------------------------- damaged repositories


@pytest.mark.parametrize(
    ("damage", "words"),
    [
        (lambda repo: (repo / ".git" / "HEAD").write_text("garbage\n"), "not a commit id"),
        (
            lambda repo: (repo / ".git" / "refs" / "heads" / "main").write_text("1" * 40 + "\n"),
            "is missing from .git/objects",
        ),
    ],
    ids=["head-garbage", "branch-to-a-missing-commit"],
)
def test_a_broken_head_is_named(
    ws: Workspace, repo: Path, damage: Callable[[Path], object], words: str
) -> None:
    """git calls such a branch broken; hive ended in "internal error" (an
    AssertionError, a KeyError) for every command."""
    damage(repo)
    for args in (["list"], ["create", "x"], ["doctor"], ["show", "hv-x"]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 8, said
        assert words in said


# ----------------------------------------------------------------- nesting


def _deep(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_a_cell_file_nested_too_deeply_is_one_corrupt_cell(ws: Workspace, repo: Path) -> None:
    """ruamel's C parser recursed once a level: such a file crashed hive (SIGSEGV,
    100,000 levels) or, parsed, made every command fail (20,000): one corrupt cell
    must leave the others readable."""
    good = create_cell(ws, title="still readable").id
    bad = create_cell(ws, title="to be damaged").id
    path = next((repo / ".hive" / "cells").rglob(f"{bad}.yaml"))
    for levels in (20_000, 100_000):
        path.write_text(path.read_text() + f'metadata: {{"x": {_deep(levels)}}}\n')
        git(repo, "commit", "-qam", f"a cell nested {levels} levels")
        listed = _run(repo, "--json", "list", "--all")
        said = _said(listed)
        assert listed.returncode == 0, said
        assert good in listed.stdout
        assert "nested more than 100 levels deep" in said
        doctor = _run(repo, "doctor")
        assert doctor.returncode == 1 and "nested more than 100 levels deep" in _said(doctor)
        git(repo, "checkout", "-q", "HEAD~1", "--", str(path))
        git(repo, "commit", "-qm", "repaired")


def test_input_nested_too_deeply_is_invalid_input(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    deep = _deep(3000)
    for args in (["ctx", "put", "k", deep], ["queue", "add", "kind", deep], ["todo", "set", deep]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 2 and "nested too deeply" in said, said
    deep_file = tmp_path / "deep.json"
    deep_file.write_text(_deep(100_000) + "\n")
    for args in (
        ["create", "--from", str(deep_file)],
        ["import", "beads", str(deep_file)],
        ["qa", "run", str(deep_file)],
    ):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 2 and "nested" in said, said


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"gitdir: ../nowhere\n", "which is not a git directory"),
        (b"\xff\xfe not text\n", "not a gitdir link"),
    ],
    ids=["missing-gitdir", "not-text"],
)
def test_a_dot_git_file_that_names_no_repository_is_refused_and_nothing_written(
    tmp_path: Path, content: bytes, words: str
) -> None:
    """A ``.git`` file naming a directory that does not exist: 'hive init' made it and
    wrote git objects there before failing; a .git file that is not text ended in
    "internal error"."""
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_bytes(content)
    for args in (["init"], ["list"], ["create", "x"]):
        done = _run(work, *args)
        said = _said(done)
        assert done.returncode == 2, said
        assert words in said
    assert sorted(p.name for p in tmp_path.iterdir()) == ["work"]
    assert sorted(p.name for p in work.iterdir()) == [".git"]


def test_hooks_install_names_what_stands_in_its_way(ws: Workspace, repo: Path) -> None:
    """A file where .git/hooks should be, a directory where the hook should be: both
    ended in "internal error"."""
    hooks = repo / ".git" / "hooks"
    shutil.rmtree(hooks, ignore_errors=True)
    hooks.write_text("not a directory\n")
    done = _run(repo, "hooks", "install")
    said = _said(done)
    assert done.returncode == 4 and "cannot hold git's hooks" in said, said
    hooks.unlink()
    (hooks / "pre-commit").mkdir(parents=True)
    for args in (["hooks", "install"], ["hooks", "uninstall"]):
        done = _run(repo, *args)
        said = _said(done)
        assert done.returncode == 4 and "is a directory, not a hook" in said, said
        assert f"run 'hive {' '.join(args)}' again" in said, said
    assert (hooks / "pre-commit").is_dir()


@pytest.mark.parametrize("blocker", ["directory", "socket"])
def test_hooks_uninstall_changes_nothing_when_a_hook_cannot_be_read(
    ws: Workspace, repo: Path, blocker: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A commit-msg hook hive cannot read (a directory; a socket, which root cannot
    read either) ended uninstall in a traceback, or after pre-commit was removed."""
    assert _run(repo, "hooks", "install").returncode == 0
    hooks = repo / ".git" / "hooks"
    hook = hooks / "commit-msg"
    hook.unlink()
    if blocker == "directory":
        hook.mkdir()
    else:
        monkeypatch.chdir(hooks)  # a socket's path has at most 107 bytes
        server = socket.socket(socket.AF_UNIX)
        server.bind(hook.name)
        server.close()
    for command in ("uninstall", "install"):
        done = _run(repo, "hooks", command)
        said = _said(done)
        assert done.returncode == 4 and str(hook) in said, said
        assert f"then run 'hive hooks {command}' again" in said, said
    assert "# installed by hive" in (hooks / "pre-commit").read_text()
    json_done = _run(repo, "--json", "hooks", "uninstall")
    assert json.loads(json_done.stdout)["code"] == "conflict"


@pytest.mark.parametrize("blocker", ["directory", "fifo"])
def test_hooks_uninstall_refuses_a_chained_hook_that_is_no_file(
    ws: Workspace, repo: Path, blocker: str
) -> None:
    """A ``commit-msg.hive-chained`` that is a directory (or a fifo) was moved into the
    hook's place; now refused, naming it, before any hook is changed."""
    assert _run(repo, "hooks", "install").returncode == 0
    hooks = repo / ".git" / "hooks"
    chained = hooks / "commit-msg.hive-chained"
    if blocker == "directory":
        chained.mkdir()
        (chained / "inside").write_text("kept\n")
    else:
        os.mkfifo(chained)
    before = {p.name: p.read_text() for p in hooks.iterdir() if p.is_file()}
    done = _run(repo, "hooks", "uninstall")
    said = _said(done)
    assert done.returncode == 4 and str(chained) in said, said
    assert "then run 'hive hooks uninstall' again" in said, said
    assert {p.name: p.read_text() for p in hooks.iterdir() if p.is_file()} == before
    assert "# installed by hive" in (hooks / "commit-msg").read_text()
    assert chained.is_dir() if blocker == "directory" else chained.is_fifo()
    json_done = _run(repo, "--json", "hooks", "uninstall")
    assert json.loads(json_done.stdout)["code"] == "conflict"


@pytest.mark.parametrize("value", ["nan", "-1", "inf", "-inf", "1e308", "86401", "soon", "5s"])
def test_a_lock_timeout_hive_cannot_wait_is_refused_before_anything_is_written(
    ws: Workspace, repo: Path, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HIVE_LOCK_TIMEOUT: not a number of seconds from 0 to a day is refused, naming it,
    on the command line (exit 2, the lean path too) and as a structured tool error; was:
    nan and negatives read as 0.01 s, inf and huge values waited without end."""
    from hive.tools.registry import CallContext, call_tool
    from tests.inprocess import run_hive

    before = _commits(repo)
    env = {**os.environ, "HIVE_LOCK_TIMEOUT": value}
    for args in (["create", "a cell"], ["--json", "create", "a cell", "--priority", "1"]):
        done = run_hive(["-C", str(repo), *args], env=env)
        assert done.returncode == 2, done.stdout + done.stderr
        assert (
            f"HIVE_LOCK_TIMEOUT must be a number of seconds from 0 to 86400 (a day), got {value!r}"
            in _said_text(done)
        )
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", value)
    answer = call_tool(CallContext(root=str(repo), session="s"), "hive_create", {"title": "t"})
    assert answer["code"] == "invalid_input" and "HIVE_LOCK_TIMEOUT" in answer["error"]
    assert _commits(repo) == before
    assert_clean(repo)


def test_a_blank_or_zero_lock_timeout_works(ws: Workspace, repo: Path) -> None:
    """A blank HIVE_LOCK_TIMEOUT is as if unset (the config's wait); 0 is one try."""
    from tests.inprocess import run_hive

    for value in ("", "  ", "0", " 2.5 "):
        done = run_hive(
            ["-C", str(repo), "create", f"cell {value!r}"],
            env={**os.environ, "HIVE_LOCK_TIMEOUT": value},
        )
        assert done.returncode == 0, done.stderr
    assert git(repo, "rev-list", "--count", "HEAD~4..HEAD").strip() == "4"


def _config_lock_timeout(repo: Path, value: str) -> subprocess.CompletedProcess[str]:
    """``hive create`` after ``lock_timeout_seconds: VALUE`` was committed to the config."""
    config = repo / ".hive" / "config.yaml"
    kept = [line for line in config.read_text().splitlines() if "lock_timeout" not in line]
    config.write_text("\n".join([*kept, f"lock_timeout_seconds: {value}", ""]))
    git(repo, "commit", "-qam", "set a lock timeout")
    return _create_without_the_variable(repo)


def _create_without_the_variable(repo: Path) -> subprocess.CompletedProcess[str]:
    from tests.inprocess import run_hive

    plain = {k: v for k, v in os.environ.items() if k != "HIVE_LOCK_TIMEOUT"}
    return run_hive(["-C", str(repo), "create", "a cell"], env=plain)


@pytest.mark.parametrize(
    ("value", "shown"),
    [(".inf", "inf"), (".nan", "nan"), ("100000", "100000"), ("-1", "-1"), ("5s", "'5s'")],
)
def test_a_config_lock_timeout_hive_cannot_wait_is_named(
    ws: Workspace, repo: Path, value: str, shown: str
) -> None:
    """lock_timeout_seconds in .hive/config.yaml: more than a day, inf, nan or a
    negative is a clear error naming the setting in HIVE_LOCK_TIMEOUT's words, never a
    wait without end."""
    done = _config_lock_timeout(repo, value)
    said = _said_text(done)
    assert done.returncode == 7 and "duplicate" not in said
    assert (
        "invalid field 'lock_timeout_seconds': lock_timeout_seconds must be a number of"
        f" seconds from 0 to 86400 (a day), got {shown}: hive never waits for a lock" in said
    )


@pytest.mark.parametrize("value", ["0", "0.0"])
def test_a_config_lock_timeout_of_0_is_one_try_as_the_environments_is(
    ws: Workspace, repo: Path, value: str
) -> None:
    """One rule for ``lock_timeout_seconds`` and ``HIVE_LOCK_TIMEOUT``: 0 to 86400 seconds,
    0 being one try (the config refused 0, which the variable took)."""
    from hive.git.flock import try_lock
    from tests.inprocess import run_hive

    done = _config_lock_timeout(repo, value)
    assert done.returncode == 0, _said_text(done)
    held = try_lock(str(repo / ".git" / "hive" / "write.lock"), 0)
    assert held is not None
    try:
        waited = _create_without_the_variable(repo)  # not the default 30 s
        variable = run_hive(
            ["-C", str(repo), "create", "a cell"], env={**os.environ, "HIVE_LOCK_TIMEOUT": value}
        )
    finally:
        held.release()
    for done in (waited, variable):
        assert done.returncode == 6, _said_text(done)
        assert "held the repository lock for more than 0.01s" in done.stderr


def _to_a_gone_reader(command: list[str], stream: str, env: dict[str, str] | None = None) -> int:
    """``command`` as a new process whose standard ``stream`` ("stdout" or "stderr")
    is a pipe nobody reads any more (``... 2>&1 | head -0``): its exit code."""
    reader, writer = os.pipe()
    os.close(reader)
    try:
        done = subprocess.run(
            command,
            stdin=subprocess.DEVNULL,
            stdout=writer if stream == "stdout" else subprocess.DEVNULL,
            stderr=writer if stream == "stderr" else subprocess.DEVNULL,
            env=env,
            timeout=120,
            check=False,
        )
    finally:
        os.close(writer)
    return done.returncode


@pytest.mark.parametrize(
    ("args", "stream", "code"),
    [
        (["show", "hv-nosuch"], "stderr", 3),  # the lean read's refusal
        (["--json", "show", "hv-nosuch"], "stdout", 3),
        (["--json", "close", "hv-nosuch"], "stdout", 3),  # the lean write's
        (["--json", "dep", "add", "hv-nosuch", "hv-other"], "stdout", 3),  # the full CLI's
        (["dep", "add", "hv-nosuch", "hv-other"], "stderr", 3),
        (["show", "hv-nosuch", "--bogus"], "stderr", 2),  # a usage error
        (["--json", "frobnicate"], "stdout", 2),  # an unknown command, said lean
    ],
)
def test_an_error_keeps_its_exit_code_when_its_reader_is_gone(
    ws: Workspace, repo: Path, args: list[str], stream: str, code: int
) -> None:
    """``hive show X 2>&1 | head -1`` (or a reader that stopped before the error came)
    ended 0: the error's words could not be written and the refusal passed for a
    success under ``set -o pipefail``. The words are dropped; the code stands."""
    before = _commits(repo)
    assert _to_a_gone_reader([*HIVE, "-C", str(repo), *args], stream) == code
    assert _commits(repo) == before


def test_a_commit_against_a_reservation_is_blocked_when_the_hooks_reader_is_gone(
    ws: Workspace, repo: Path
) -> None:
    """``git commit -m x 2>&1 | head -1`` (or any reader that stops early) by an agent
    committing a file another agent reserved: the pre-commit hook's refusal could not
    be written, it ended 0, and git made the commit. The refusal stands."""
    assert _run(repo, "hooks", "install").returncode == 0
    assert _run(repo, "reserve", "src/held.py", env=agent_env(repo, "Ann")).returncode == 0
    (repo / "src").mkdir()
    (repo / "src" / "held.py").write_text("print('mine')\n")
    git(repo, "add", "src/held.py")
    before = git(repo, "rev-parse", "HEAD")
    commit = ["git", "-C", str(repo), "commit", "-qm", "over Ann's reservation"]
    assert _to_a_gone_reader(commit, "stderr", env=agent_env(repo, "Ben")) == 1
    assert git(repo, "rev-parse", "HEAD") == before


# ----------------------------------------------------------------- a byte order mark


def test_a_byte_order_mark_opening_a_text_or_a_file_read_is_not_kept(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """Notepad and PowerShell save UTF-8 with a byte order mark: ``hive create X -d -``
    kept it as a leading ``<U+FEFF>`` of the description, and ``hive qa run FILE``
    refused the file ("not JSON: Unexpected UTF-8 BOM"), where ``create --from`` and
    ``tools run`` read such a file. A BOM that opens the text is its encoding's mark,
    never part of it; one further on is kept (and shown by its code point)."""
    made = _run(repo, "--json", "create", "From Notepad", "-d", "-", stdin="\ufeffthe notes")
    assert made.returncode == 0, made.stderr
    cell = json.loads(made.stdout)
    assert cell["description"] == "the notes"
    inner = _run(repo, "--json", "update", cell["id"], "-d", "-", stdin="a\ufeffb")
    assert json.loads(inner.stdout)["description"] == "a\ufeffb"
    scenarios = tmp_path / "scenarios.json"
    body = '[{"id": "a", "key": "k", "value": "the answer", "sourceAgent": "x", "minScore": 0}]'
    scenarios.write_text("\ufeff" + body, encoding="utf-8")
    scored = _run(repo, "qa", "run", str(scenarios))
    assert scored.returncode == 0, _said(scored)
    assert "pass rate 100%" in scored.stdout
    scenarios.write_bytes(b"\xef\xbb\xbf[\xff]")
    refused = _run(repo, "qa", "run", str(scenarios))
    assert refused.returncode == 2
    assert f"{scenarios}: not UTF-8 text (byte 5)" in _said(refused)  # the file's byte
    cells = tmp_path / "cells.yaml"  # create --from reads its file alike (was byte 2)
    cells.write_bytes(b"\xef\xbb\xbf- \xff")
    refused = _run(repo, "create", "--from", str(cells))
    assert refused.returncode == 2 and f"{cells}: not UTF-8 text (byte 6)" in _said(refused)


# ----------------------------------------------------------------- a removed directory


def test_a_current_directory_that_was_removed_is_named_not_a_traceback(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """A shell left in a directory that was removed (``git worktree remove`` from
    another shell, a cleaned temporary directory): every hive command, ``--version``
    included, ended in a Python traceback (FileNotFoundError, exit 1). A command that
    needs the repository now says what happened and what to do (exit 2); ``--version``
    and ``-C`` with an absolute path still work."""
    gone = tmp_path / "gone"

    def in_gone(*args: str) -> subprocess.CompletedProcess[bytes]:
        gone.mkdir()
        script = 'cd "$1" && rmdir "$1" && shift && exec "$@"'
        command = ["sh", "-c", script, "sh", str(gone), *HIVE, *args]
        return subprocess.run(command, capture_output=True, timeout=120, check=False)

    for args in (["list"], ["create", "never written"], ["doctor"]):
        done = in_gone(*args)
        said = _said(done)
        assert done.returncode == 2, said
        assert "the current directory no longer exists" in said and "-C DIR" in said
    assert in_gone("--version").returncode == 0
    listed = in_gone("-C", str(repo), "list")
    assert listed.returncode == 0, _said(listed)
    assert not gone.exists()


# ----------------------------------------------------------------- no room to write


def _limited(limit: int) -> Callable[[], None]:
    def apply() -> None:
        import resource

        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return apply


def test_a_write_that_finds_no_room_is_named_not_an_internal_error(
    ws: Workspace, repo: Path
) -> None:
    """A full disk, a quota or a file size limit (here ``ulimit -f``, which fails a
    write as a full disk does, with no privileges needed): every write ended in
    "internal error: OSError: [Errno 28] No space left on device" (exit 70), as if hive
    had a bug. It is named with what to do (exit 8, code ``git_error``); nothing is
    left half-written."""
    before = _commits(repo)
    text = os.urandom(9000).hex()  # a blob git cannot compress below the limit
    # Python's own .pyc writes are cut short by the limit without an error (CPython
    # does not check the count written): none is written
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    for args in (["create", "big", "-d", text], ["--json", "create", "big", "-d", text]):
        done = subprocess.run(
            [*HIVE, "-C", str(repo), *args],
            capture_output=True,
            env=env,
            preexec_fn=_limited(4096),
            timeout=120,
            check=False,
        )
        said = _said(done)
        assert done.returncode == 8, said
        assert "(the disk is full, or a quota or file size limit was reached)" in said
        assert "free some space" in said and "hive log" in said
    assert json.loads(done.stdout)["code"] == "git_error"
    call = {"name": "hive_create", "args": {"title": "big", "description": text}}
    done = subprocess.run(
        [*HIVE, "-C", str(repo), "tools", "run"],
        input=json.dumps({"tool_calls": [call]}).encode(),
        capture_output=True,
        env=env,
        preexec_fn=_limited(4096),
        timeout=120,
        check=False,
    )
    answer = json.loads(done.stdout)["results"][0]  # a tool's error, as the CLI's
    assert answer["code"] == "git_error" and "free some space" in answer["error"], answer
    assert _commits(repo) == before
    git(repo, "fsck")
    assert_clean(repo)


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])
def test_a_config_line_that_is_not_utf8_is_a_corrupt_file(
    ws: Workspace, repo: Path, module: str
) -> None:
    """A line of .hive/config.yaml in Latin-1 was read with replacement characters,
    silently: it is a corrupt file naming the file and the line (exit 7), refused by a
    write, reported by doctor, and the hook refuses to commit it."""
    config = repo / ".hive" / "config.yaml"
    lines = config.read_bytes().count(b"\n")
    config.write_bytes(config.read_bytes() + b"# caf\xe9 au lait\n")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-q", "-am", "by hand")
    said = f".hive/config.yaml:{lines + 1}: not valid UTF-8 (invalid continuation byte)"
    done = run_hive(["-C", str(repo), "create", "one"], module=module)
    assert done.returncode == 7 and done.stderr.startswith(f"error: {said}"), done.stderr
    doctor = run_hive(["-C", str(repo), "doctor"], module=module)
    assert doctor.returncode == 1 and f"corrupt: {said}" in doctor.stdout, doctor.stdout
    config.write_bytes(config.read_bytes() + b"# \xff\n")
    hooked = run_hive(["-C", str(repo), "hooks", "install"])
    assert hooked.returncode == 0, hooked.stderr
    refused = subprocess.run(
        ["git", "-C", str(repo), "commit", "-qam", "again"], capture_output=True, text=True
    )
    assert refused.returncode != 0 and ".hive/config.yaml:" in refused.stderr, refused.stderr
