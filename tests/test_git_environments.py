"""hive in the shapes real repositories take (session 30's environment trial): shallow
clones, and the like. Each test failed before the fix it names. Real repositories in
temporary directories; the command line runs in-process (``run_hive``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from hive.git.configfile import shared_config_files
from hive.git.repo import GitRepo
from tests.conftest import agent_env, git, make_repo
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


def test_a_branch_that_is_a_symbolic_ref_is_followed_as_git_follows_it(tmp_path: Path) -> None:
    """HEAD on ``alias``, a symbolic ref to ``main`` (``git symbolic-ref
    refs/heads/alias refs/heads/main``: an old name kept for a renamed branch). hive
    took the branch for an unborn one: "no hive yet: run 'hive init' first", and that
    ``hive init`` made a root commit on ``alias``, replacing the symbolic ref and leaving
    every file of the project staged for deletion. git follows the chain to ``main``."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init"))
    first = json.loads(ok(hive(repo, "--json", "create", "Made on main")))["id"]
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    git(repo, "checkout", "-q", "alias")
    assert first in ok(hive(repo, "list"))
    assert first in ok(run_hive(["-C", str(repo), "list"], module="hive.cli.main"))
    ok(hive(repo, "create", "Made on alias"))  # the lean write
    ok(run_hive(["-C", str(repo), "update", first, "-p", "0"], module="hive.cli.main"))
    assert "already initialised" in ok(hive(repo, "init"))
    assert git(repo, "symbolic-ref", "refs/heads/alias").strip() == "refs/heads/main"
    log = git(repo, "log", "--format=%s", "main")
    assert "hive: create" in log and f"hive: update {first}" in log and "initial" in log
    assert f"hive: update {first}" in git(repo, "reflog", "-1", "--format=%gs", "HEAD")
    assert git(repo, "status", "--porcelain") == ""


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


HUSKY_H = """#!/usr/bin/env sh
n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
c=$?
[ $c != 0 ] && echo "husky - $n script failed (code $c)"
exit $c
"""


def test_a_chained_husky_hook_still_runs_the_users_script(tmp_path: Path) -> None:
    """husky (v9) sets ``core.hooksPath=.husky/_``, whose ``pre-commit`` is a stub that
    sources ``h``, and ``h`` runs the user's ``.husky/<basename $0>``. Chained by hive,
    the stub ran as ``pre-commit.hive-chained``: husky found no such script and the
    user's own checks silently stopped running (a failing one no longer blocked). A
    chained shell script now runs with git's name for the hook as its ``$0``."""
    repo = make_repo(tmp_path / "repo")
    stubs = repo / ".husky" / "_"
    stubs.mkdir(parents=True)
    (stubs / "h").write_text(HUSKY_H)
    (stubs / "pre-commit").write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    for stub in stubs.iterdir():
        stub.chmod(0o755)
    ran = tmp_path / "lint-ran"
    (repo / ".husky" / "pre-commit").write_text(f'echo "$0" >> "{ran}"\nexit 3\n')
    git(repo, "config", "core.hooksPath", ".husky/_")
    ok(hive(repo, "init", "--prefix", "hv"))
    assert "chains" in ok(hive(repo, "hooks", "install"))

    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    blocked = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", "a"], capture_output=True, text=True
    )
    assert blocked.returncode == 1, blocked.stderr
    assert "husky - pre-commit script failed (code 3)" in blocked.stdout + blocked.stderr
    assert ran.read_text().strip().endswith(".husky/pre-commit")
    assert "a.txt" in git(repo, "diff", "--cached", "--name-only")

    (repo / ".husky" / "pre-commit").write_text(f'echo "$0" >> "{ran}"\n')
    git(repo, "commit", "-q", "-m", "a")
    assert len(ran.read_text().splitlines()) == 2
    assert git(repo, "status", "--porcelain") == "?? .husky/\n"


def test_a_chained_hook_in_another_language_runs_as_itself(tmp_path: Path) -> None:
    """A chained hook that is not a shell script (here python, and ``#!/bin/sh -e``'s
    flag) runs as before: as a program of its own, its flags kept."""
    repo = make_repo(tmp_path / "repo")
    ran = tmp_path / "ran"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!{sys.executable}\nimport sys\nopen({str(ran)!r}, 'w').write(sys.argv[0])\n")
    hook.chmod(0o755)
    ok(hive(repo, "init", "--prefix", "hv"))
    ok(hive(repo, "hooks", "install"))
    (repo / "a.txt").write_text("a\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-q", "-m", "a")
    assert ran.read_text().endswith("pre-commit.hive-chained")

    chained = repo / ".git" / "hooks" / "pre-commit.hive-chained"
    chained.write_text(f'#!/bin/sh -e\necho "$0" > "{ran}"\nfalse\necho past > "{ran}"\n')
    (repo / "b.txt").write_text("b\n")
    git(repo, "add", "b.txt")
    refused = subprocess.run(["git", "-C", str(repo), "commit", "-q", "-m", "b"])
    assert refused.returncode == 1
    assert ran.read_text().strip().endswith("hooks/pre-commit")


def unprivileged() -> list[str]:
    """A command prefix under which file permissions hold: none for a user, and for
    root ``setpriv`` without the capabilities that override them (else a skip)."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        pytest.skip("root without setpriv: file permissions cannot be made to hold")
    caps = "-dac_override,-dac_read_search,-fowner"
    return ["setpriv", f"--inh-caps={caps}", f"--bounding-set={caps}"]


# Each command line of ``unprivileged_commands``, run by the full CLI (``python -m
# hive.cli.main ARGS``) in-process (tests/inprocess.py: its own environment, streams and
# module state per command, as a process of its own has), one after the other.
_RUN_EACH = """
import json, sys
from tests.inprocess import run_hive
answers = [run_hive(args, module="hive.cli.main") for args in json.loads(sys.argv[1])]
print(json.dumps([[done.returncode, done.stdout, done.stderr] for done in answers]))
"""


def unprivileged_commands(repo: Path, commands: list[list[str]]) -> list[Outcome]:
    """``hive ARGS`` (the full CLI) in ``repo`` for each of ``commands``, with file
    permissions holding (``unprivileged``). One process without the capabilities runs
    them all in-process: what is tested is hive's answer to files it may not write,
    not a process boundary, and a process per command cost ~0.2 s of CPU each to start
    (12 of them: most of this module's CPU)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root)}
    command = [*unprivileged(), sys.executable, "-c", _RUN_EACH, json.dumps(commands)]
    ran = subprocess.run(command, cwd=repo, capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    return [
        Outcome(["hive", *args], *answer)
        for args, answer in zip(commands, json.loads(ran.stdout), strict=True)
    ]


def test_a_read_only_git_directory_answers_readers_and_refuses_writers_clearly(
    tmp_path: Path,
) -> None:
    """With ``.git`` read-only, readers answer; writers that reached the identity lock
    (``agent register``, ``mail init``), the coordination store (``ctx``,
    ``scratchpad``, ``queue``) or the hook (``hooks uninstall``) ended in
    ``internal error: PermissionError`` / ``OperationalError`` (exit 70). Each now
    names the file it cannot write, and nothing is changed."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    ok(hive(repo, "create", "Kept"))
    ok(hive(repo, "hooks", "install"))
    ok(hive(repo, "ctx", "put", "k", "v"))
    head = git(repo, "rev-parse", "HEAD")
    readers = [["list"], ["ready"], ["log"], ["reservations"], ["doctor"]]
    writers = [
        (["create", "lost"], "write.lock"),
        (["agent", "register", "Bob"], "identities.lock"),
        (["mail", "init", "--name", "Bob"], "identities.lock"),
        (["ctx", "put", "k", "w"], "coord.sqlite3"),
        (["scratchpad", "write", "notes", "x"], "coord.sqlite3"),
        (["hooks", "uninstall"], "pre-commit"),
    ]
    subprocess.run(["chmod", "-R", "a-w", str(repo / ".git")], check=True)
    try:
        answers = unprivileged_commands(repo, [*readers, *(w for w, _ in writers)])
        for reader, answered in zip(readers, answers, strict=False):
            assert answered.returncode == 0, (reader, answered.stderr)
            assert "internal error" not in answered.stderr
        assert "Kept" in answers[0].stdout  # list
        for (writer, names), refused in zip(writers, answers[len(readers) :], strict=True):
            assert refused.returncode not in (0, 70), (writer, refused.stderr)
            assert refused.stderr.startswith("error: cannot "), (writer, refused.stderr)
            assert names in refused.stderr and "internal error" not in refused.stderr
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(repo / ".git")], check=True)
    assert git(repo, "rev-parse", "HEAD") == head
    assert (repo / ".git" / "hooks" / "pre-commit").exists()
    assert ok(hive(repo, "ctx", "get", "k")) == '"v"  (v1)\n'  # not "w"
    git(repo, "fsck")
    assert git(repo, "status", "--porcelain") == ""


def test_without_home_hive_reads_no_user_config_as_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``$HOME`` unset git reads no ``~/.gitconfig`` (a cron job, a sandbox that
    clears the environment); hive's ``~`` fell back to the password database's home and
    read that file: its person, hooksPath and the rest were not git's."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    monkeypatch.delenv("HOME")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    assert shared_config_files() == []  # GIT_CONFIG_NOSYSTEM=1 (conftest)
    asked = subprocess.run(["git", "-C", str(repo), "config", "user.name"], capture_output=True)
    assert asked.returncode == 1  # git: no name
    assert GitRepo.discover(str(repo)).config_value("user", "name") is None

    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".gitconfig").write_text("[user]\n\tname = Home User\n")
    assert shared_config_files() == [
        str(tmp_path / ".gitconfig"),
        str(tmp_path / ".config" / "git" / "config"),
    ]
    assert GitRepo.discover(str(repo)).config_value("user", "name") == "Home User"


def test_an_empty_home_is_read_as_git_reads_it_not_as_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``HOME=`` (set, empty): git reads ``/.gitconfig`` and ``/.config/git/config``;
    a ``.gitconfig`` in the current directory (a repository can commit one) is not the
    user's: its person and settings must not become hive's."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "--unset", "user.name")
    git(repo, "config", "--unset", "user.email")
    (repo / ".gitconfig").write_text("[user]\n\tname = Planted\n\temail = p@example.com\n")
    (repo / ".config" / "git").mkdir(parents=True)
    (repo / ".config" / "git" / "config").write_text("[user]\n\tname = Planted Too\n")
    monkeypatch.chdir(repo)
    monkeypatch.setenv("HOME", "")
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    if os.path.exists("/.gitconfig") or os.path.exists("/.config/git/config"):
        pytest.skip("this machine has a /.gitconfig")
    asked = subprocess.run(["git", "config", "user.name"], capture_output=True, cwd=repo)
    assert asked.returncode == 1  # git: no name (it read /.gitconfig, which is not there)
    assert shared_config_files() == ["/.gitconfig", "/.config/git/config"]
    assert GitRepo.discover(str(repo)).config_value("user", "name") is None


def test_a_submodule_bump_under_another_agents_reservation_is_blocked(tmp_path: Path) -> None:
    """In a superproject, ``git add sub`` stages the submodule's commit (a gitlink at
    ``sub``): the files below it all change, yet ``sub/**`` reserved by another agent
    did not block it (the path ``sub`` matched no pattern; the quick check and the full
    one both let it through). Its other files and the holder's own commit still pass."""
    library = make_repo(tmp_path / "library")
    top = make_repo(tmp_path / "top")
    git(top, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(top, "commit", "-q", "-m", "add sub")
    ok(hive(top, "init", "--prefix", "hv"))
    ok(hive(top, "hooks", "install"))
    alpha = agent_env(top, "Alpha")
    ok(hive(top, "reserve", "sub/**", "--reason", "upgrading the library", env=alpha))
    git(top / "sub", "commit", "-q", "--allow-empty", "-m", "newer library")
    git(top, "add", "sub")

    def commit(env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        argv = ["git", "-C", str(top), "commit", "-q", "-m", "work"]
        return subprocess.run(argv, capture_output=True, text=True, env=env)

    blocked = commit()
    assert blocked.returncode == 1
    assert "hive: sub is reserved by Alpha (sub/**)" in blocked.stderr
    git(top, "reset", "-q", "sub")
    (top / "notes.txt").write_text("mine\n")
    git(top, "add", "notes.txt")
    assert commit().returncode == 0  # the quick check: nothing reserved staged
    git(top, "add", "sub")
    done = commit(alpha)
    assert done.returncode == 0, done.stderr
    assert git(top, "status", "--porcelain") == ""


def test_worktree_isolation_from_a_linked_worktree(tmp_path: Path) -> None:
    """``hive swarm run --isolation worktree`` started in a linked worktree (``git
    worktree add``) ended in ``internal error: KeyError: b'HEAD'``: dulwich was handed
    the linked worktree as the repository and put the worker's worktree files under its
    own ``.git/worktrees/NAME/worktrees/``. They belong to the main git directory; and
    the worker's checkout is its branch alone (dulwich first checks a new worktree out
    at the main HEAD: its other files were left there, so the worktree was kept as one
    with "uncommitted changes")."""
    from hive.domain.epics import create_epic
    from hive.domain.swarm.runner import run_swarm
    from hive.domain.workspace import Workspace

    main = make_repo(tmp_path / "main")
    ok(hive(main, "init", "--prefix", "hv"))
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")
    (main / "only-on-main.txt").write_text("main's own\n")  # HEAD of the main checkout
    git(main, "add", "only-on-main.txt")
    git(main, "commit", "-q", "-m", "main moves on")
    ws = Workspace(str(linked), actor="alice")
    cells = create_epic(
        ws,
        title="Linked work",
        subtasks=[{"title": "One", "files": ["src/one.py"]}],
        metadata={"strategy": "file-based"},
    )
    command = f"{sys.executable} -m hive.agents.example {{prompt_file}}"
    result = run_swarm(ws, epic_id=cells[0].id, agent_cmd=command, isolation="worktree")
    assert result.finished, result.blocked
    assert "def one" in (linked / "src" / "one.py").read_text()
    assert sorted(os.listdir(main / ".git" / "worktrees")) == ["linked"]
    assert not (main / ".git" / "worktrees" / "linked" / "worktrees").exists()
    assert git(main, "worktree", "list").count("\n") == 2  # the worker's is gone
    assert not (linked / "only-on-main.txt").exists()
    assert git(linked, "status", "--porcelain") == ""
    assert git(main, "status", "--porcelain") == ""
    git(main, "fsck")


def test_doctor_says_hives_commits_are_not_signed_under_commit_gpgsign(tmp_path: Path) -> None:
    """With ``commit.gpgsign=true`` git signs the user's commits (or refuses without a
    key), while hive's own commits were made unsigned without a word: a remote that
    requires signatures refused them at push time. ``hive doctor`` says so."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    assert json.loads(ok(hive(repo, "--json", "doctor")))["warnings"] == []
    git(repo, "config", "commit.gpgsign", "true")
    ok(hive(repo, "create", "Made unsigned"))  # hive writes on, as before
    assert "gpgsig" not in git(repo, "cat-file", "commit", "HEAD")
    report = json.loads(ok(hive(repo, "--json", "doctor")))
    assert [w["kind"] for w in report["warnings"]] == ["unsigned-commits"]
    assert "not signed" in ok(hive(repo, "doctor"))


def test_files_touched_are_named_from_the_current_directory(tmp_path: Path) -> None:
    """``hive reserve a.py`` in ``src/`` reserves ``src/a.py`` (as in git), but ``hive
    swarm complete --files-touched a.py`` there looked for ``a.py`` at the top: "a.py
    exists neither in the working tree nor in HEAD". Both now read a relative path from
    the current directory (``-C`` included), as ``git add`` does."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(repo, "--json", "create", "Fix a")))["id"]
    ok(hive(repo, "start", cell))
    (repo / "src").mkdir()
    (repo / "src" / "a.py").write_text("print('fixed')\n")
    here = str(repo / "src")
    assert "src/a.py" in ok(run_hive(["reserve", "a.py", "--cell", cell], cwd=here))
    progress = ["swarm", "progress", cell, "--status", "in_progress", "-f", "a.py"]
    ok(run_hive(progress, cwd=here))
    done = run_hive(["swarm", "complete", cell, "-s", "fixed", "-f", "a.py", "--no-gate"], cwd=here)
    assert done.returncode == 0, done.stderr
    committed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert "src/a.py" in committed and "a.py" not in committed
    assert git(repo, "status", "--porcelain") == ""


def test_core_filemode_false_keeps_the_committed_mode(tmp_path: Path) -> None:
    """With ``core.filemode=false`` git ignores the executable bit on disk (a file
    system without it, a checkout shared with Windows: every file looks executable, or
    none does). ``swarm complete`` committed the bit anyway, flipping files' modes in
    history where ``git status`` showed nothing. A file keeps its index entry's mode
    (``git update-index --chmod`` changes it), and a new file is 100644, as ``git add``."""
    repo = make_repo(tmp_path / "repo")
    (repo / "tool.sh").write_text("echo 1\n")
    (repo / "run.sh").write_text("echo 2\n")
    (repo / "run.sh").chmod(0o755)
    git(repo, "add", "tool.sh", "run.sh")
    git(repo, "commit", "-q", "-m", "scripts")
    git(repo, "config", "core.filemode", "false")
    ok(hive(repo, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(repo, "--json", "create", "Edit scripts")))["id"]
    ok(hive(repo, "start", cell))
    (repo / "tool.sh").write_text("echo 1b\n")
    (repo / "tool.sh").chmod(0o755)  # the bit on disk says nothing here
    (repo / "run.sh").write_text("echo 2b\n")
    (repo / "run.sh").chmod(0o644)
    (repo / "new.sh").write_text("echo 3\n")
    (repo / "new.sh").chmod(0o755)
    (repo / "kept.sh").write_text("echo 4\n")
    git(repo, "add", "kept.sh")
    git(repo, "update-index", "--chmod=+x", "kept.sh")  # how such a user sets the bit
    files = ["-f", "tool.sh", "-f", "run.sh", "-f", "new.sh", "-f", "kept.sh"]
    ok(hive(repo, "swarm", "complete", cell, "-s", "edited", *files, "--no-gate"))
    modes = {line.split()[3]: line.split()[0] for line in git(repo, "ls-tree", "HEAD").splitlines()}
    assert modes["tool.sh"] == "100644" and modes["run.sh"] == "100755"
    assert modes["new.sh"] == "100644" and modes["kept.sh"] == "100755"
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "diff", "--cached", "--name-only") == ""


def test_init_adds_its_attributes_to_a_crlf_checkout_of_gitattributes(tmp_path: Path) -> None:
    """With ``core.autocrlf=true`` a committed ``.gitattributes`` is checked out with
    CRLF line ends: ``hive init`` took that for the user's own uncommitted edits and left
    the file alone, so doctor said "run 'hive init' to add them", which did nothing."""
    repo = make_repo(tmp_path / "repo")
    git(repo, "config", "core.autocrlf", "true")
    (repo / ".gitattributes").write_text("*.png binary\n")
    git(repo, "add", ".gitattributes")
    git(repo, "commit", "-q", "-m", "attributes")
    (repo / ".gitattributes").unlink()
    git(repo, "checkout", "--", ".gitattributes")
    assert (repo / ".gitattributes").read_bytes() == b"*.png binary\r\n"

    ok(hive(repo, "init", "--prefix", "hv"))
    committed = git(repo, "show", "HEAD:.gitattributes")
    assert committed.startswith("*.png binary\n") and ".hive/cells/** merge=hive" in committed
    assert json.loads(ok(hive(repo, "--json", "doctor")))["problems"] == []
    assert git(repo, "status", "--porcelain") == ""


def test_a_partial_clone_fetches_what_it_lacks_and_keeps_its_promisor_packs(
    tmp_path: Path,
) -> None:
    """``git clone --filter=blob:none`` leaves old file versions on the remote until
    they are needed: git fetches each on first use, dulwich does not, so ``hive
    review`` of a cell with history ended in ``internal error: KeyError``. And ``hive
    gc`` merged the clone's ``.promisor`` packs into a plain one, after which ``git
    fsck`` found broken links (exit 2). hive now asks git for a missing object (as
    git would fetch it) and never merges a promisor pack."""
    origin = make_repo(tmp_path / "origin")
    git(origin, "config", "uploadpack.allowFilter", "true")
    git(origin, "config", "uploadpack.allowAnySHA1InWant", "true")
    ok(hive(origin, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(origin, "--json", "create", "Has a history")))["id"]
    ok(hive(origin, "update", cell, "-p", "1"))
    ok(hive(origin, "comment", cell, "first version of the notes"))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", f"file://{origin}", str(clone))
    promisors = sorted(p.name for p in (clone / ".git/objects/pack").glob("*.promisor"))
    assert promisors
    ok(hive(clone, "init"))

    reviewed = ok(hive(clone, "review", cell, "--stat"))
    assert f"create {cell}" in reviewed and f"comment {cell}" in reviewed
    for number in range(3):  # packs of hive's own, merged by gc
        ok(hive(clone, "create", f"Local {number}"))
        ok(hive(clone, "gc"))
    after = sorted(p.name for p in (clone / ".git/objects/pack").glob("*.promisor"))
    assert set(promisors) <= set(after)
    for promisor in after:
        assert (clone / ".git/objects/pack" / promisor).with_suffix(".pack").exists()
    git(clone, "fsck")
    assert git(clone, "status", "--porcelain") == ""


def test_init_names_gits_reason_in_another_users_repository(tmp_path: Path) -> None:
    """In a repository another user owns git refuses to work (``safe.directory``), and
    ``git config --local`` says only "--local can only be used inside a git
    repository", which ``hive init`` passed on: in a repository. It now says git's
    reason (dubious ownership) and the command that allows the repository."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the repository to another user")
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    git(repo, "config", "--unset", "merge.hive.driver")
    subprocess.run(["chown", "-R", "65534:65534", str(repo)], check=True)
    try:
        refused = hive(repo, "init")
        assert refused.returncode == 8
        assert "dubious ownership" in refused.stderr and "safe.directory" in refused.stderr
        assert "can only be used inside a git repository" not in refused.stderr
    finally:
        subprocess.run(["chown", "-R", f"{os.geteuid()}:{os.getegid()}", str(repo)], check=True)


def test_a_linked_worktrees_own_config_applies_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With ``extensions.worktreeConfig`` (which ``git sparse-checkout`` sets in a
    linked worktree) ``git config --worktree`` writes the worktree's own
    ``config.worktree``. hive read the main worktree's file instead (dulwich's), and
    after the repository's, so in the linked worktree its ``core.hooksPath`` and
    ``user.name`` were not git's: ``hooks install`` put the hook where git does not look,
    and hive's commits had another author than git's (``user.name`` names the author
    where no ``GIT_AUTHOR_NAME`` comes before it)."""
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    main = make_repo(tmp_path / "main")
    ok(hive(main, "init", "--prefix", "hv"))
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")
    git(linked, "config", "extensions.worktreeConfig", "true")
    git(linked, "config", "--worktree", "core.hooksPath", ".wthooks")
    git(linked, "config", "--worktree", "user.name", "Worktree Person")

    assert str(linked / ".wthooks" / "pre-commit") in ok(hive(linked, "hooks", "install"))
    ok(hive(linked, "create", "Made in the linked worktree"))
    assert git(linked, "log", "-1", "--format=%an").strip() == "Worktree Person"
    ok(hive(main, "create", "Made in the main one"))
    assert git(main, "log", "-1", "--format=%an").strip() == "Test User"


def test_a_shared_repository_keeps_git_directories_group_writable(tmp_path: Path) -> None:
    """In a repository several users share (``git init --shared=group``) git makes its
    directories group-writable and set-group-id; hive made object fan-out directories
    and ``refs/hive`` with the process's umask (``drwxr-sr-x``), so another user's git
    could no longer add an object there ("insufficient permission for adding an object
    to repository database")."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--shared=group")
    git(repo, "commit", "-q", "--allow-empty", "-m", "initial")
    before = os.umask(0o022)
    try:
        ok(hive(repo, "init", "--prefix", "hv"))
        for number in range(5):
            ok(hive(repo, "create", f"Cell {number}"))
        agent_env(repo, "Mx")
        sent = hive(
            repo, "mail", "send", "Mx", "-s", "hi", "-b", "there", env=agent_env(repo, "Ax")
        )
        ok(sent)  # refs/hive/mail: a directory of refs hive makes
    finally:
        os.umask(before)
    made = [
        path
        for top in ("objects", "refs")
        for path in (repo / ".git" / top).rglob("*")
        if path.is_dir()
    ]
    assert (repo / ".git" / "refs" / "hive") in made
    not_shared = [str(p) for p in made if p.stat().st_mode & 0o2070 != 0o2070]
    assert not_shared == []


@pytest.mark.parametrize(
    "value",
    ["yes", "on", "true", "group", "1", "everybody", "2", "0640", "640", "0600", "01", "no"],
)
@pytest.mark.parametrize("worktree_config", [False, True])
def test_shared_repository_values_are_read_as_git_reads_them(
    tmp_path: Path, value: str, worktree_config: bool
) -> None:
    """Every spelling git takes (``git_config_perm``): a boolean ('yes', 'on'), a mode
    without its leading zero, the old 0/1/2; and from a config hive does not read itself
    (``extensions.worktreeConfig``), git's answer. hive's object directories get the mode
    git gives its own (hive took only group/true/1, all/world/everybody/2 and 0xxx, and
    nothing with a worktree config)."""
    repo = make_repo(tmp_path / "repo")
    if worktree_config:
        git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "config", "core.sharedRepository", value)
    objects = repo / ".git" / "objects"
    there = set(objects.glob("??"))
    before = os.umask(0o022)
    try:
        git(repo, "update-ref", "refs/gitmade/x", "HEAD")  # a directory git makes
        ok(hive(repo, "init", "--prefix", "hv"))
        ok(hive(repo, "create", "A cell"))
    finally:
        os.umask(before)
    wanted = (repo / ".git" / "refs" / "gitmade").stat().st_mode & 0o7777
    made = {path.stat().st_mode & 0o7777 for path in set(objects.glob("??")) - there}
    assert made == {wanted}, (oct(wanted), sorted(map(oct, made)))


def _modes(repo: Path, names: list[str]) -> dict[str, str]:
    git_dir = repo / ".git"
    return {name: oct((git_dir / name).stat().st_mode & 0o7777) for name in names}


@pytest.mark.parametrize(
    "value", ["group", "everybody", "0640", "0600", "umask", "(no value)", "(empty)"]
)
def test_a_shared_repositorys_files_get_gits_modes_from_hive_as_from_git(
    tmp_path: Path, value: str
) -> None:
    """In a shared repository git gives every file it writes a shared mode (loose
    objects ``0440`` under ``group``, refs, reflogs and the index ``0660``), whatever the
    umask; hive gave only its directories one, so under ``umask 077`` another user of
    the repository could not read hive's objects nor update the refs and the index it
    rewrote. Each kind of file hive writes now has the mode git gives the same kind.
    ``(no value)``: ``sharedRepository`` written without ``=``, "group" to git (hive
    read it as not shared); ``(empty)``: ``sharedRepository =``, not shared to git."""
    repo = tmp_path / "repo"
    repo.mkdir()
    if value.startswith("("):
        git(repo, "init", "-q")
        line = "sharedRepository" if value == "(no value)" else "sharedRepository ="
        with (repo / ".git" / "config").open("a") as config:
            config.write(f"[core]\n\t{line}\n")
    else:
        git(repo, "init", "-q", f"--shared={value}")
    before = os.umask(0o077)
    try:
        (repo / "code.py").write_text("x = 1\n")
        git(repo, "add", "code.py")
        git(repo, "commit", "-q", "-m", "initial")
        git(repo, "update-ref", "refs/gitmade/x", "HEAD")
        branch = git(repo, "symbolic-ref", "HEAD").strip()
        kinds = [branch, f"logs/{branch}", "index", "refs/gitmade/x"]
        by_git = _modes(repo, kinds)
        head = git(repo, "rev-parse", "HEAD").strip()
        gits_object = _modes(repo, [f"objects/{head[:2]}/{head[2:]}"])
        ok(hive(repo, "init", "--prefix", "hv"))
        ok(hive(repo, "create", "A cell"))
        agent_env(repo, "Mx")
        ok(hive(repo, "mail", "send", "Mx", "-s", "hi", "-b", "x", env=agent_env(repo, "Ax")))
    finally:
        os.umask(before)
    commit = git(repo, "rev-parse", "HEAD").strip()
    assert git(repo, "log", "-1", "--format=%an", commit)  # hive's commit, read by git
    by_hive = _modes(repo, [branch, f"logs/{branch}", "index", "refs/hive/mail"])
    assert by_hive == {
        branch: by_git[branch],
        f"logs/{branch}": by_git[f"logs/{branch}"],
        "index": by_git["index"],
        "refs/hive/mail": by_git["refs/gitmade/x"],
    }
    tree = git(repo, "rev-parse", f"{commit}^{{tree}}").strip()
    hives_objects = _modes(repo, [f"objects/{sha[:2]}/{sha[2:]}" for sha in (commit, tree)])
    assert set(hives_objects.values()) == set(gits_object.values())
    assert git(repo, "status", "--porcelain") == ""


def test_a_directory_another_process_makes_meanwhile_is_left_to_it(tmp_path: Path) -> None:
    """``make_directories`` in a shared repository: a directory another process makes
    between hive's look and its ``mkdir`` (another user's git adding an object to the
    same fan-out directory) is that process's; hive used to chmod (and stat) every
    directory it had found missing, which fails on a directory another user owns, and
    the write was lost. Now it goes on below it, and gives what it made itself the
    shared mode."""
    from hive.git.refs import discover
    from hive.git.shared import make_directories

    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "--shared=group")
    paths = discover(str(repo))
    target = repo / ".git" / "refs" / "raced" / "below" / "deepest"
    others = repo / ".git" / "refs" / "raced"

    def another_process_makes(path: str) -> None:
        if path == str(others):
            others.mkdir(mode=0o700)  # its own mode: its git is still to adjust it

    before = os.umask(0o022)
    try:
        make_directories(paths, str(target), made=another_process_makes)
    finally:
        os.umask(before)
    assert others.stat().st_mode & 0o777 == 0o700  # not touched: not ours
    mine = {oct(p.stat().st_mode & 0o7777) for p in (target.parent, target)}
    assert mine == {oct(0o2775)}


def test_sync_from_two_worktrees_records_both_claims_as_a_conflict(tmp_path: Path) -> None:
    """Two worktrees of one clone share ``refs/hive/state``. Alpha claims a cell on
    the main branch and syncs; Beta claims it on the other worktree's branch and syncs:
    the state (Alpha's version, from the other worktree) was taken as the base of
    Beta's branch, Beta's edit as the only change, and Alpha's claim was silently
    overwritten everywhere. That base is none for a branch that never had it: the two
    claims are merged from the version both had, and the conflict is recorded."""
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    main = make_repo(tmp_path / "main")
    git(main, "remote", "add", "origin", str(bare))
    ok(hive(main, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(main, "--json", "create", "Claimed twice")))["id"]
    ok(hive(main, "sync"))
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")
    ok(hive(main, "start", cell, env=agent_env(main, "Alpha")))
    ok(hive(linked, "start", cell, env=agent_env(main, "Beta")))

    ok(hive(main, "sync"))
    synced = json.loads(ok(hive(linked, "--json", "sync")))
    assert [(c["cell"], c["field"]) for c in synced["conflicts"]] == [(cell, "assignee")]
    shown = json.loads(ok(hive(linked, "--json", "show", cell)))
    [conflict] = shown["conflicts"]
    assert conflict["field"] == "assignee" and conflict["kept"] == shown["assignee"]
    assert {conflict["kept"], conflict["other"]} == {"Alpha", "Beta"}


def _hook(repo: Path, name: str, body: str) -> None:
    hook = repo / ".git" / "hooks" / name
    hook.write_text(f"#!/bin/sh\n{body}\n")
    hook.chmod(0o755)


def test_hive_in_a_linked_worktrees_hooks_acts_on_that_worktree(tmp_path: Path) -> None:
    """git runs a linked worktree's hooks with ``GIT_DIR`` (its own git directory) and
    ``GIT_INDEX_FILE`` exported. hive run there acts on that worktree, its branch and its
    index: from the post-commit hook it commits on the worktree's branch and ``git
    status`` stays clean; from the pre-commit hook of ``git commit -a`` (git committing
    from ``index.lock``, which it holds) a write is refused at once, naming the reason
    and the way out (hive waited for the lock until ``lock_timeout`` and then blamed
    "another git process"), and git's commit goes on."""
    main = make_repo(tmp_path / "main")
    ok(hive(main, "init", "--prefix", "hv"))
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked), "-b", "feature")
    log = tmp_path / "hook.log"
    command = f'HIVE_LOCK_TIMEOUT=0 "{sys.executable}" -m hive create'
    _hook(main, "post-commit", f'{command} "made by the post-commit hook" >> "{log}" 2>&1')
    (linked / "work.txt").write_text("one\n")
    git(linked, "add", "work.txt")
    git(linked, "commit", "-q", "-m", "work")
    assert "created" in log.read_text(), log.read_text()
    subjects = git(linked, "log", "-2", "--format=%s").splitlines()
    assert subjects[0].startswith("hive: create") and subjects[1] == "work"
    assert git(linked, "status", "--porcelain") == ""
    assert "made by the post-commit hook" not in git(main, "log", "--format=%s", "main")

    (main / ".git" / "hooks" / "post-commit").unlink()
    _hook(main, "pre-commit", f'{command} "made by the pre-commit hook" >> "{log}" 2>&1; true')
    (linked / "work.txt").write_text("two\n")
    git(linked, "commit", "-q", "-a", "-m", "more work")
    said = log.read_text().splitlines()[-1]
    assert "GIT_INDEX_FILE names" in said and "post-commit" in said, said
    assert git(linked, "log", "-1", "--format=%s").strip() == "more work"
    assert "made by the pre-commit hook" not in git(linked, "log", "--format=%s")
    assert git(linked, "status", "--porcelain") == ""


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["lean", "full"])
def test_git_dir_and_git_work_tree_are_honoured_as_git_honours_them(
    tmp_path: Path, module: str
) -> None:
    """``GIT_DIR=... GIT_WORK_TREE=... hive create`` from outside the repository acts on
    that repository, as ``git`` does (hive looked for ``.git`` from the current directory
    and said "not inside a git repository"); a ``GIT_DIR`` that is not a git directory is
    refused naming it, as git refuses it."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {**os.environ, "GIT_DIR": str(repo / ".git"), "GIT_WORK_TREE": str(repo)}
    made = run_hive(["create", "Made from elsewhere"], cwd=elsewhere, env=env, module=module)
    assert made.returncode == 0, made.stderr
    assert git(repo, "log", "-1", "--format=%s").startswith("hive: create")
    assert git(repo, "status", "--porcelain") == ""
    assert list(elsewhere.iterdir()) == []
    listed = run_hive(["list"], cwd=elsewhere, env=env, module=module)
    assert "Made from elsewhere" in listed.stdout, listed.stderr
    relative = {**os.environ, "GIT_DIR": ".git"}  # relative to the directory, as git reads it
    shown = run_hive(["list"], cwd=repo, env=relative, module=module)
    assert "Made from elsewhere" in shown.stdout, shown.stderr
    wrong = {**os.environ, "GIT_DIR": str(elsewhere)}
    refused = run_hive(["list"], cwd=repo, env=wrong, module=module)
    assert refused.returncode == 2
    assert f"GIT_DIR={elsewhere} is not a git directory" in refused.stderr


def test_a_read_only_git_directory_answers_the_coordination_readers_before_any_write(
    tmp_path: Path,
) -> None:
    """A read-only ``.git`` whose coordination store was never made (a fresh checkout
    owned by another user, a CI cache): ``ctx get``, ``queue list``, ``blackboard
    list``, ``scratchpad list``, ``todo list`` and ``qa history`` refused with
    "cannot write the coordination store" (exit 8), though nothing was written yet
    and the state is plainly empty. They now answer it (``ctx get``: no value yet,
    as in a new repository); a writer still names the store."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    store = repo / ".git" / "hive" / "coord.sqlite3"
    assert not store.exists()
    readers = [["queue", "list"], ["blackboard", "list"], ["scratchpad", "list"]]
    readers += [["todo", "list"], ["qa", "history"], ["ctx", "keys"]]
    subprocess.run(["chmod", "-R", "a-w", str(repo / ".git")], check=True)
    try:
        commands = [*readers, ["ctx", "get", "k"], ["ctx", "put", "k", "v"]]
        answers = unprivileged_commands(repo, commands)
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(repo / ".git")], check=True)
    for reader, answered in zip(readers, answers, strict=False):
        assert answered.returncode == 0, (reader, answered.stderr)
    missing, writer = answers[len(readers) :]
    assert (missing.returncode, missing.stdout) == (0, "null  (v0)\n"), missing.stderr
    assert writer.returncode == 8 and "cannot write the coordination store" in writer.stderr
    assert not store.exists()
    assert git(repo, "status", "--porcelain") == ""


def test_a_shallow_clone_says_why_a_cells_history_is_empty(tmp_path: Path) -> None:
    """``hive log CELL`` of a cell whose commits are all past a ``--depth 1`` clone's
    boundary said "no hive commits", as if the cell had none; it now says the history
    is not in this clone and how to fetch it (``--json``: the empty list it was)."""
    origin = make_repo(tmp_path / "origin")
    ok(hive(origin, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(origin, "--json", "create", "Made long ago")))["id"]
    ok(hive(origin, "create", "Made last"))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{origin}", str(clone))
    said = ok(hive(clone, "log", cell))
    assert "no hive commits" in said and "shallow" in said, said
    assert "git fetch --unshallow" in said
    assert json.loads(ok(hive(clone, "--json", "log", cell))) == []
    git(clone, "fetch", "-q", "--unshallow", "origin")
    said = ok(hive(clone, "log", cell))
    assert "Made long ago" in said and "shallow" not in said


def _loose_objects(repo: Path) -> set[str]:
    objects = repo / ".git" / "objects"
    return {f"{d.name}{f.name}" for d in objects.glob("??") for f in d.iterdir()}


@pytest.mark.parametrize(
    ("extension", "value"), [("partialClone", "origin"), ("preciousObjects", "true")]
)
def test_a_repository_extension_git_knows_is_honoured_not_an_internal_error(
    tmp_path: Path, extension: str, value: str
) -> None:
    """``extensions.partialClone`` (a repository made partial by ``git fetch
    --filter``, or cloned by an older git) and ``extensions.preciousObjects`` (objects
    shared with other repositories): ``hive review``, ``gc`` and ``sync`` ended in
    "internal error: UnsupportedExtension" (exit 70), as dulwich refuses extensions it
    does not know. Neither changes how objects or refs are read: hive opens such a
    repository, and in a precious-objects one never deletes an object (``hive gc``
    says so and leaves every loose object, as git refuses to prune there)."""
    origin = make_repo(tmp_path / "origin")
    ok(hive(origin, "init", "--prefix", "hv"))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", f"file://{origin}", str(clone))
    git(clone, "config", "user.name", "Clone")
    git(clone, "config", "user.email", "clone@example.com")
    git(clone, "config", "core.repositoryformatversion", "1")
    git(clone, "config", f"extensions.{extension}", value)
    ok(hive(clone, "init"))
    cell = json.loads(ok(hive(clone, "--json", "create", "Made here")))["id"]
    assert f"create {cell}" in ok(hive(clone, "review", cell, "--stat"))
    synced = ok(hive(clone, "sync"))
    assert "synced with origin" in synced and "0 sent" not in synced, synced
    loose = _loose_objects(clone)
    packed = ok(hive(clone, "gc"))
    if extension == "preciousObjects":
        assert "extensions.preciousObjects" in packed, packed
        assert _loose_objects(clone) == loose
        git(clone, "config", "gc.auto", "1")  # far too many loose objects, for git
        doctor = json.loads(ok(hive(clone, "--json", "doctor")))
        assert doctor["objects"]["warnings"] == []  # no "run hive gc": it would not pack
    else:
        assert not _loose_objects(clone)
    git(clone, "fsck")
    assert git(clone, "status", "--porcelain") == ""


def test_a_hook_installed_among_the_projects_files_says_what_committing_it_means(
    tmp_path: Path,
) -> None:
    """``core.hooksPath`` naming a directory of the project (``.githooks``, shared by
    a team): ``hive hooks install`` wrote hive's hook there, with this machine's path
    to Python, silently; committed, every clone without hive had each commit blocked.
    It says so (a note on stderr); in the git directory's hooks nothing is said."""
    repo = make_repo(tmp_path / "repo")
    ok(hive(repo, "init", "--prefix", "hv"))
    plain = hive(repo, "hooks", "install")
    assert plain.returncode == 0 and "note:" not in plain.stderr
    git(repo, "config", "core.hooksPath", ".githooks")
    shared = hive(repo, "hooks", "install")
    assert shared.returncode == 0, shared.stderr
    assert f"note: {repo / '.githooks' / 'pre-commit'} is in the working tree" in shared.stderr
    assert "commit it only if every clone has hive" in shared.stderr
    again = hive(repo, "hooks", "install")  # unchanged: said once, when written
    assert "note:" not in again.stderr
