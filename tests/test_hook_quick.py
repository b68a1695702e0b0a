"""The pre-commit hook's quick check with fewer imports (``hive/cli/leanhook.py``):
each shortcut it takes instead of the module it used to import gives that module's
answer, and an agent's own commit is checked without ``re``, ``datetime``, ``sqlite3``,
``hashlib``/``hmac``, ``contextlib``, ``functools`` or the state index.

* ``globquick.quick_match``: ``globs.glob_matches``'s answer, or None;
* ``reserveplain.plain_name`` and the reservation file's slug: their regular expressions;
* ``digests.same_digest``: ``hmac.compare_digest``;
* ``hive.times``' classes: ``datetime``'s.
"""

from __future__ import annotations

import hmac
import re
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.cli import entry, hookrun, parse
from hive.digests import same_digest
from hive.domain.cells import create_cell, start_cell
from hive.domain.globquick import quick_match, simple
from hive.domain.globs import glob_matches, normalize_pattern
from hive.domain.hooks import HOOKS, install_hook
from hive.domain.reservations import reserve
from hive.domain.reserveplain import MAX_PLAIN_NAME, RESERVATIONS_DIR, plain_name
from hive.domain.reserveplain import reservation_path as plain_reservation_path
from hive.domain.workspace import Workspace
from tests.conftest import agent_env, credential, git, make_repo

# ------------------------------------------------------------------ quick_match

SEGMENTS = ["a", "b", "ab", "a.py", ".x", "A", "*", "**", "?", "a*", "*.py", "a?b", "a**b"]
ODD = [".", "..", "", "[ab]", "{a,b}", "\\*", "~", " a", "é", "a:b", "a b", "[!a]*"]
PATTERN = st.lists(st.sampled_from(SEGMENTS + ODD), min_size=1, max_size=5).map("/".join)
PATTERN = PATTERN | PATTERN.map(lambda text: text + "/") | PATTERN.map(lambda text: "/" + text)
NAMES = ["a", "b", "ab", "a.py", ".x", "A", "x", "b.py", "a:b", "", ".", "é"]
PATH = st.lists(st.sampled_from(NAMES), min_size=1, max_size=5).map("/".join)


@settings(max_examples=1500, deadline=None)
@given(pattern=PATTERN, path=PATH)
def test_a_quick_answer_is_the_glob_matcher_s(pattern: str, path: str) -> None:
    """Whenever ``quick_match`` answers, ``glob_matches`` answers the same; a simple
    pattern is its own normal form (so the parser never refuses it)."""
    quick = quick_match(pattern, path)
    if simple(pattern):
        assert normalize_pattern(pattern) == pattern
    else:
        assert quick is None
    if quick is not None:
        assert quick == glob_matches(pattern, path), (pattern, path)


@pytest.mark.parametrize(
    ("pattern", "path", "quick"),
    [
        ("src/a.py", "src/a.py", True),  # a plain path: itself
        ("src/a.py", "src/b.py", False),
        ("src/a.py", "src/a.py/c", False),
        ("docs/**", "src/a.py", False),  # plainly elsewhere
        ("src/b*.py", "src/a.py", False),
        ("src/a?", "src/b", False),
        ("src/**", "src/a.py", None),  # may match: the parser decides
        ("src/a*", "src/a.py", None),
        ("**/*.md", "src/a.py", None),  # no literal prefix
        ("./src/a.py", "src/a.py", None),  # not its own normal form
        ("src//a.py", "src/a.py", None),
        ("src/../a.py", "a.py", None),
        ("src/", "src/a.py", None),
        ("src/[ab].py", "src/c.py", None),  # a class, braces, an escape: the parser's
        ("src/{a,b}.py", "src/c.py", None),
        ("a" * 1001, "b", None),  # longer than a pattern may be: refused by the parser
        ("src/a.py", "", False),  # no name: nothing matches
    ],
)
def test_quick_answers(pattern: str, path: str, quick: bool | None) -> None:
    assert quick_match(pattern, path) == quick


# ------------------------------------------------------------------ names, digests, times

_PLAIN_NAME = re.compile(r"[a-z0-9_@+-][a-z0-9._@+-]*")
NAME = st.text(st.sampled_from("ab.-_@+Z~ é/0"), max_size=70) | st.text(max_size=8)


@settings(max_examples=500, deadline=None)
@given(name=NAME)
def test_a_reservation_file_s_name_is_the_regular_expressions(name: str) -> None:
    """``plain_name`` and the slug decide with string methods what the expressions the
    reservation files were named by decided."""
    from hive.digests import sha256_hex

    expected_plain = bool(_PLAIN_NAME.fullmatch(name)) and len(name) <= MAX_PLAIN_NAME
    assert plain_name(name) == expected_plain
    if expected_plain:
        expected = f"{RESERVATIONS_DIR}/{name}.yaml"
    else:
        slug = re.sub(r"[^a-z0-9._@+-]", "_", name.lower())[:MAX_PLAIN_NAME].lstrip(".")
        digest = sha256_hex(name.encode("utf-8"))[:12]
        expected = f"{RESERVATIONS_DIR}/{slug or 'agent'}~{digest}.yaml"
    assert plain_reservation_path(name) == expected


DIGEST = st.text(st.sampled_from("0123456789abcdef"), max_size=66)


@given(given_=DIGEST | st.text(max_size=4), stored=DIGEST | st.text(max_size=4))
def test_same_digest_is_hmac_s_comparison(given_: str, stored: str) -> None:
    try:
        expected: object = hmac.compare_digest(given_, stored)
    except TypeError:
        expected = TypeError
    try:
        got: object = same_digest(given_, stored)
    except TypeError:
        got = TypeError
    assert got == expected


def test_the_times_are_datetime_s_classes() -> None:
    import datetime

    from hive import times

    assert vars(times)["datetime"] is datetime.datetime  # what hive.times compares and makes
    assert vars(times)["UTC"] is datetime.UTC


# ------------------------------------------------------------------ the hook itself

COSTLY = {
    "re",
    "datetime",
    "_sqlite3",
    "sqlite3",
    "hashlib",
    "_hashlib",
    "hmac",
    "contextlib",
    "functools",
    "collections",
    "enum",
    "hive.store.index",
    "hive.cli.lean",
    "hive.domain.globs",
    "hive.domain.reservecore",
}


def _only_hook(ws: Workspace, name: str) -> None:
    """hive's hook ``name`` installed, alone (as the benchmark's agent rows have it)."""
    install_hook(ws)
    for other in HOOKS:
        if other != name:
            (Path(ws.git.paths.common_dir) / "hooks" / other).unlink()


def _hook_process(repo: Path, env: dict[str, str]) -> tuple[int, set[str]]:
    """``git commit``'s exit code with one of hive's hooks installed (:func:`_only_hook`),
    and every module the hook's process imported (Python's own import log, on git's
    stderr)."""
    done = subprocess.run(
        ["git", "commit", "-q", "-m", "work"],
        cwd=repo,
        env={**env, "PYTHONPROFILEIMPORTTIME": "1"},
        capture_output=True,
        text=True,
    )
    logged = [line for line in done.stderr.splitlines() if line.startswith("import time:")]
    assert logged, done.stderr  # the hook ran Python
    return done.returncode, {line.rsplit("|", 1)[1].strip() for line in logged[1:]}


def _stage(repo: Path, path: str, text: str = "changed\n") -> None:
    full = repo / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    git(repo, "add", path)


def test_an_agent_s_commit_under_its_own_reservation_imports_nothing_costly(
    ws: Workspace, repo: Path
) -> None:
    """An agent's own commit (the benchmark's "pre-commit hook, agent" row): its own
    exclusive reservation over the file, another's elsewhere (``docs/**``, and a plain
    path). Answered (exit 0) without any module of ``COSTLY``; a reservation of
    another's that may apply (``**/*.md``: no literal prefix) brings the glob parser."""
    _only_hook(ws, "pre-commit")
    env = agent_env(repo, "Bee")
    reserve(Workspace(str(repo), actor="Bee"), paths=["src/a.py"])
    reserve(Workspace(str(repo), actor="Ant"), paths=["docs/**", "lib/b.py"])
    _stage(repo, "src/a.py")
    code, modules = _hook_process(repo, env)
    assert code == 0
    assert "hive.cli.leanhook" in modules
    assert not modules & COSTLY, sorted(modules & COSTLY)
    reserve(Workspace(str(repo), actor="Ant"), paths=["**/*.md"])
    _stage(repo, "src/a.py", "changed again\n")
    code, modules = _hook_process(repo, env)
    assert code == 0
    assert "hive.domain.globs" in modules
    assert git(repo, "log", "--format=%s").splitlines().count("work") == 2


def test_an_agent_s_commit_msg_hook_reads_times_without_the_datetime_package(
    ws: Workspace, repo: Path
) -> None:
    """The commit-msg hook of an agent's commit (the benchmark's "commit-msg hook, agent"
    row) adds its trailers reading the cells' times with ``hive.times``' classes: not
    the ``datetime`` package's Python half (~2 ms of the process)."""
    _only_hook(ws, "commit-msg")
    env = agent_env(repo, "Bee")
    cell = start_cell(Workspace(str(repo), actor="Bee"), cell_id=create_cell(ws, title="w").id)
    _stage(repo, "src/a.py")
    code, modules = _hook_process(repo, env)
    assert code == 0
    assert "hive.cli.lean" in modules  # the lean attribution answered
    assert "datetime" not in modules
    assert f"Hive-Cell: {cell.id}" in git(repo, "log", "-1", "--format=%B")


@pytest.mark.parametrize(
    ("pattern", "code"),
    [
        ("src/a.py", 1),  # quick: a hit
        ("src/b.py", 0),  # quick: not this path
        ("src/b*", 0),  # quick: plainly elsewhere
        ("src/a*", 1),  # the parser: a hit
        ("**/*.md", 0),  # the parser: no hit
        ("src/{a,b}.py", 1),
    ],
)
def test_another_s_reservation_is_decided_as_the_full_check_decides(
    ws: Workspace,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    pattern: str,
    code: int,
) -> None:
    """Another agent's exclusive reservation, decided by the quick check (the glob
    shortcut or the parser) and by the full check: the same verdict, and a commit it
    would block is always left to the full check, which words it."""
    credential(repo, "Ant")
    for key, value in agent_env(repo, "Bee").items():
        if key.startswith("HIVE_"):
            monkeypatch.setenv(key, value)
    reserve(Workspace(str(repo), actor="Ant"), paths=[pattern])
    _stage(repo, "src/a.py")
    lean = entry.dispatch(parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    lean_err = capsys.readouterr().err
    full = hookrun.hook(parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    full_err = capsys.readouterr().err
    assert full == code, full_err
    assert lean == (None if code else 0), lean_err
    if lean is not None:
        assert lean_err == full_err


@pytest.mark.parametrize(
    "ignored",
    [["diff.ignoreSubmodules", "all"], ["submodule.sub.ignore", "all"]],
    ids=["diff.ignoreSubmodules", "submodule.NAME.ignore"],
)
def test_a_submodule_bump_is_seen_whatever_git_s_config_ignores(
    ws: Workspace,
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    ignored: list[str],
) -> None:
    """A staged submodule commit (a gitlink) under another's ``sub/**`` is the full
    check's to block. With git told to ignore submodules in diffs (``diff.ignoreSubmodules``
    or ``submodule.NAME.ignore``, which anybody committing can set), ``git diff --cached``
    left the gitlink out, and the quick check let the commit through."""
    library = make_repo(tmp_path / "library")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(library), "sub")
    git(repo, "commit", "-q", "-m", "add sub")
    reserve(Workspace(str(repo), actor="Ant"), paths=["sub/**"])
    git(library, "commit", "-q", "--allow-empty", "-m", "newer")
    git(repo / "sub", "pull", "-q")
    git(repo, "add", "sub")
    git(repo, "config", *ignored)
    for key, value in agent_env(repo, "Bee").items():
        if key.startswith("HIVE_"):
            monkeypatch.setenv(key, value)
    lean = entry.dispatch(parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    full = hookrun.hook(parse(["-C", str(repo), "hooks", "run", "pre-commit"]))
    assert "hive: sub is reserved by Ant (sub/**)" in capsys.readouterr().err
    assert (lean, full) == (None, 1)
