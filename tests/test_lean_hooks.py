"""An agent's own ``git commit`` checked and attributed in the hook's own process.

``hive hooks run pre-commit`` and ``hive hooks run commit-msg FILE`` with an agent's
credential are answered by ``hive/cli/lean.py`` when the answer is sure, and handed to
the full check (``hive/cli/hookrun.py``: a Workspace, the models) otherwise. Each case
here is decided both ways, in process: whenever the lean path answers, its exit code
and what it writes are the full path's."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hive.cli import entry, hookrun, parse
from hive.domain.cells import create_cell, delete_cell, start_cell
from hive.domain.hooks import install_hook
from hive.domain.reservations import reserve
from hive.domain.reservecore import reservation_path
from hive.domain.workspace import Workspace
from tests.conftest import agent_env, credential, git
from tests.seedkit import configure

HEAVY = ("typer", "click", "pydantic", "rich", "dulwich", "ruamel")
# what a person's quick check does without (tests/test_state_index.py), and json: not
# contextlib (the credential store's writer) nor warnings (hmac, its constant-time check)
FRESH_READ_COSTLY = ("re", "datetime", "sqlite3", "importlib", "json")
Outcome = tuple[int | None, str]


def _lean(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    code = entry.dispatch(parse(["-C", str(repo), "hooks", "run", *args]))
    return code, capsys.readouterr().err


def _full(repo: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> Outcome:
    code = hookrun.hook(parse(["-C", str(repo), "hooks", "run", *args]))
    return code, capsys.readouterr().err


def _environment(monkeypatch: pytest.MonkeyPatch, env: dict[str, str]) -> None:
    for key in ("HIVE_AGENT", "HIVE_AGENT_TOKEN", "HIVE_BYPASS", "HIVE_CELL"):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)


def _stage(repo: Path, path: str, text: str = "changed\n") -> None:
    full = repo / path
    full.parent.mkdir(parents=True, exist_ok=True)
    full.write_text(text)
    git(repo, "add", path)


def _expire(repo: Path, holder: str) -> None:
    """``holder``'s reservations end when they began (committed by git, as a pull
    brings them; the plain reader still reads the file)."""
    path = repo / reservation_path(holder)
    lines = path.read_text().splitlines(keepends=True)
    began = next(line for line in lines if "created_at:" in line).split(":", 1)[1]
    path.write_text(
        "".join(
            line.split(":", 1)[0] + ":" + began if "expires_at:" in line else line for line in lines
        )
    )
    git(repo, "commit", "-qm", "expired", "--no-verify", "--", str(path))


def _bee(repo: Path, **extra: str) -> dict[str, str]:
    return {"HIVE_AGENT": "Bee", "HIVE_AGENT_TOKEN": credential(repo, "Bee"), **extra}


# (case, set-up, the environment, whether the lean path answers, the full verdict)
Case = tuple[str, Callable[[Path], None], Callable[[Path], dict[str, str]], bool, int]


def _hold(
    holder: str, pattern: str = "src/**", *, exclusive: bool = True
) -> Callable[[Path], None]:
    def setup(repo: Path) -> None:
        reserve(Workspace(str(repo), actor=holder), paths=[pattern], exclusive=exclusive)

    return setup


def _nothing(repo: Path) -> None:
    return None


def _expired(repo: Path) -> None:
    _hold("Ant")(repo)
    _expire(repo, "Ant")


def _rules(key: str, pattern: str, agent: str = "Bee") -> Callable[[Path], None]:
    def setup(repo: Path) -> None:
        configure(repo, tools={"permissions": {agent: {"*": {key: [pattern]}}}})

    return setup


def _tools_without_rules(repo: Path) -> None:
    configure(repo, tools={"permissions": {}})


def _broken_config(repo: Path) -> None:
    config = repo / ".hive" / "config.yaml"
    config.write_text(config.read_text().replace("prefix: hv", "prefix: 5"))
    git(repo, "commit", "-qam", "broken", "--no-verify")


def _hive_file_staged(repo: Path) -> None:
    create_cell(Workspace(str(repo), actor="Ant"), title="staged by hand")
    cell = next((repo / ".hive" / "cells").glob("*/*.yaml"))
    cell.write_text(cell.read_text().replace("priority: 2", "priority: 1"))
    git(repo, "add", str(cell))


PRECOMMIT_CASES: list[Case] = [
    ("a person, nothing reserved", _nothing, lambda repo: {}, True, 0),
    ("an agent, nothing reserved", _nothing, _bee, True, 0),
    ("its own exclusive reservation", _hold("Bee"), _bee, True, 0),
    (
        "its own, claiming another name",  # the token decides: a note only if blocked
        _hold("Bee"),
        lambda repo: _bee(repo, HIVE_AGENT="Ant"),
        True,
        0,
    ),
    (
        "another's, claiming that name",
        _hold("Ant"),
        lambda repo: _bee(repo, HIVE_AGENT="Ant"),
        False,
        1,
    ),
    ("another agent's exclusive reservation", _hold("Ant"), _bee, False, 1),
    ("another agent's reservation elsewhere", _hold("Ant", "docs/**"), _bee, True, 0),
    ("another agent's shared reservation", _hold("Ant", exclusive=False), _bee, True, 0),
    ("another agent's expired reservation", _expired, _bee, True, 0),
    ("its own, with another's elsewhere", _hold("Ant", "lib/**"), _bee, True, 0),
    ("bypassed", _hold("Ant"), lambda repo: _bee(repo, HIVE_BYPASS="1"), True, 0),
    ("a token of nobody", _nothing, lambda repo: {"HIVE_AGENT_TOKEN": "hive_nobody"}, False, 1),
    (
        "a token of nobody, another's reservation",
        _hold("Ant"),
        lambda repo: {"HIVE_AGENT": "Bee", "HIVE_AGENT_TOKEN": "hive_nobody"},
        False,
        1,
    ),
    ("a name without its token", _hold("Bee"), lambda repo: {"HIVE_AGENT": "Bee"}, False, 1),
    ("a deny rule it hits", _rules("denied_paths", "src/**"), _bee, False, 1),
    ("a deny rule it misses", _rules("denied_paths", "secrets/**"), _bee, True, 0),
    ("another agent's deny rule", _rules("denied_paths", "src/**", "Ant"), _bee, True, 0),
    ("an allowlist without it", _rules("allowed_paths", "docs/**"), _bee, False, 1),
    ("an allowlist with it", _rules("allowed_paths", "src/**"), _bee, True, 0),
    ("a tools section without rules", _tools_without_rules, _bee, True, 0),
    ("a config the full check refuses", _broken_config, _bee, False, 1),
    ("a .hive/ file staged", _hive_file_staged, _bee, False, 0),
]


@pytest.mark.parametrize(
    ("setup", "env", "answered", "code"),
    [case[1:] for case in PRECOMMIT_CASES],
    ids=[case[0] for case in PRECOMMIT_CASES],
)
def test_the_lean_pre_commit_verdict_is_the_full_check_s(
    ws: Workspace,
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    setup: Callable[[Path], None],
    env: Callable[[Path], dict[str, str]],
    answered: bool,
    code: int,
) -> None:
    credential(repo, "Ant")
    environment = env(repo)  # the credential issued before the set-up (a broken config)
    setup(repo)
    _stage(repo, "src/a.py")
    _environment(monkeypatch, environment)
    lean = _lean(repo, ["pre-commit"], capsys)
    full = _full(repo, ["pre-commit"], capsys)
    assert full[0] == code, full
    if "tools" in (repo / ".hive" / "config.yaml").read_text():
        assert lean[0] is None  # rules the full check has not parsed yet: it decides
        lean = _lean(repo, ["pre-commit"], capsys)  # then reads the rules it stored
    assert (lean[0] is not None) == answered, lean
    if lean[0] is not None:
        assert lean == full
    if code:
        assert full[1].endswith("hive: commit blocked (HIVE_BYPASS=1 or --no-verify to skip)\n")


def test_an_agent_s_commit_is_checked_without_the_models(ws: Workspace, repo: Path) -> None:
    """The lean path really answers an agent's commit, in a fresh process: exit 0 from
    ``dispatch`` and none of the full check's imports. With no reservation file, not
    the modules a person's quick check does without either (the credential store and
    the config are read without ``json``, ``re`` or ``datetime``)."""
    env = agent_env(repo, "Bee")
    _stage(repo, "src/a.py")
    modules, code = _modules_after(repo, env, ["pre-commit"])
    assert code == "0"
    unwanted = modules & {*HEAVY, *FRESH_READ_COSTLY}
    assert not unwanted, sorted(unwanted)
    reserve(Workspace(str(repo), actor="Bee"), paths=["src/**"])
    reserve(Workspace(str(repo), actor="Ant"), paths=["docs/**"])
    message = repo.parent / "message.txt"
    message.write_text("work\n")
    cell = start_cell(Workspace(str(repo), actor="Bee"), cell_id=create_cell(ws, title="w").id)
    for args in (["pre-commit"], ["commit-msg", str(message)]):
        modules, code = _modules_after(repo, env, args)
        assert code == "0", args
        unwanted = modules & {*HEAVY, "json", "subprocess"}  # git run by posix_spawn
        assert not unwanted, (args, sorted(unwanted))
    assert message.read_text() == f"work\n\nHive-Committer: Bee\nHive-Cell: {cell.id}\n"


def test_an_agent_s_rules_are_read_without_the_models(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the full check has parsed a config's ``tools.permissions`` rules (the first
    commit under that config version), the quick check reads them from the state index
    and applies them without pydantic: a file they allow is answered there, one they
    deny still goes to the full check."""
    env = agent_env(repo, "Bee")
    _rules("denied_paths", "secrets/**")(repo)
    _stage(repo, "src/a.py")
    assert _modules_after(repo, env, ["pre-commit"])[1] == "None"
    _environment(monkeypatch, env)
    assert hookrun.check(str(repo)).ok  # the full check, which keeps the rules it parsed
    modules, code = _modules_after(repo, env, ["pre-commit"])
    assert code == "0"
    assert not modules & set(HEAVY), sorted(modules & set(HEAVY))
    _stage(repo, "secrets/key.txt")
    assert _modules_after(repo, env, ["pre-commit"])[1] == "None"


def _modules_after(repo: Path, env: dict[str, str], args: list[str]) -> tuple[set[str], str]:
    probe = (
        "import sys\n"
        "from hive.cli.entry import parse, dispatch\n"
        f"code = dispatch(parse({['hooks', 'run', *args]!r}))\n"
        "print(code)\n"
        "print(' '.join(sorted(m.split('.')[0] for m in sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    code, modules = done.stdout.splitlines()[-2:]
    return set(modules.split()), code


# ------------------------------------------------------------------ commit-msg


def _started(repo: Path, ws: Workspace, holder: str, title: str) -> str:
    return start_cell(
        Workspace(str(repo), actor=holder), cell_id=create_cell(ws, title=title).id
    ).id


MESSAGES = {
    "plain": "work on it\n",
    "trailers": "work on it\n\nCo-authored-by: A <a@example.com>\n",
    "comments": "work on it\n# Please enter the commit message\n",
    "empty": "\n# only comments\n",
}


@pytest.mark.parametrize("message", sorted(MESSAGES))
def test_the_lean_commit_msg_trailer_is_the_full_path_s(
    ws: Workspace,
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    message: str,
) -> None:
    mine = _started(repo, ws, "Bee", "mine")
    theirs = _started(repo, ws, "Ant", "theirs")
    gone = _started(repo, ws, "Bee", "gone")
    delete_cell(Workspace(str(repo), actor="Bee"), cell_id=gone)
    cases: list[tuple[dict[str, str], bool]] = [
        ({}, True),  # a person's commit
        (_bee(repo), True),  # its one cell in progress
        (_bee(repo, HIVE_CELL=mine), True),
        (_bee(repo, HIVE_CELL=theirs), True),  # not its cell: nothing
        (_bee(repo, HIVE_CELL=gone), True),  # deleted: nothing
        (_bee(repo, HIVE_CELL="hv-nothere"), True),
        ({"HIVE_AGENT_TOKEN": "hive_nobody"}, True),
    ]
    for number, (env, answered) in enumerate(cases):
        _environment(monkeypatch, env)
        lean_file, full_file = tmp_path / f"lean{number}", tmp_path / f"full{number}"
        lean_file.write_text(MESSAGES[message])
        full_file.write_text(MESSAGES[message])
        lean = _lean(repo, ["commit-msg", str(lean_file)], capsys)
        full = _full(repo, ["commit-msg", str(full_file)], capsys)
        assert (lean[0] is not None) == answered, (env, lean)
        assert lean == full == (0, ""), env
        assert lean_file.read_text() == full_file.read_text(), env
    _environment(monkeypatch, _bee(repo))
    start_cell(Workspace(str(repo), actor="Bee"), cell_id=create_cell(ws, title="second").id)
    said = tmp_path / "two"
    said.write_text(MESSAGES[message])
    assert _lean(repo, ["commit-msg", str(said)], capsys) == (0, "")  # two in progress: no cell
    named = "" if message == "empty" else "Hive-Committer: Bee"  # git refuses it as it is
    assert ("Hive-Cell" in said.read_text(), named in said.read_text()) == (False, True)


# What an agent's commit-msg hook needs no part of: the YAML and cell writers
# (``cli/lean_write.py``, only for a cell named by ``HIVE_CELL`` or a trailer git
# refused) and what they import.
COMMIT_MSG_SPARED = ("hive.cli.lean_write", "hive.store.yamlio", "functools", "_datetime")


def test_an_agents_commit_msg_hook_loads_no_cell_writer(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    _started(repo, ws, "Bee", "mine")
    message = tmp_path / "message"
    message.write_text("work on it\n")
    probe = (
        "import sys\n"
        "from hive.cli.entry import parse, dispatch\n"
        f"code = dispatch(parse(['hooks', 'run', 'commit-msg', {str(message)!r}]))\n"
        f"print(code, sorted(set({COMMIT_MSG_SPARED!r}) & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=repo,
        env={**os.environ, **_bee(repo)},
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[-2] == "0 []"
    assert "Hive-Cell: " in message.read_text()


def test_a_trailer_git_refuses_is_reported_as_the_full_path_reports_it(
    ws: Workspace,
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``git interpret-trailers`` failing (a ``core.commentChar`` this git refuses): the
    lean path hands the trailer to the full path's own call, which says why; the
    commit is never blocked by it (the hook script exits 0 whatever hive says)."""
    _started(repo, ws, "Bee", "mine")
    git(repo, "config", "core.commentChar", "ab")
    _environment(monkeypatch, _bee(repo))
    lean_file, full_file = tmp_path / "lean", tmp_path / "full"
    for path in (lean_file, full_file):
        path.write_text("work\n")
    lean = _lean(repo, ["commit-msg", str(lean_file)], capsys)
    full = _full(repo, ["commit-msg", str(full_file)], capsys)
    assert lean[0] is not None
    assert lean == full
    assert lean_file.read_text() == full_file.read_text()


def test_an_agent_s_commit_carries_its_cell_exactly_as_before(ws: Workspace, repo: Path) -> None:
    """Through the real ``git commit`` with the installed hooks (the lean path answers
    them): the message git records is the agent's, with one ``Hive-Cell:`` trailer
    after its own trailers; a commit over another agent's reservation is still
    refused, with the full check's words."""
    install_hook(ws)
    cell = _started(repo, ws, "Bee", "mine")
    reserve(Workspace(str(repo), actor="Bee"), paths=["src/**"])
    reserve(Workspace(str(repo), actor="Ant"), paths=["docs/**"])
    env = agent_env(repo, "Bee")
    _stage(repo, "src/a.py")
    message = "parser: first cut\n\nThe body.\n\nCo-authored-by: A <a@example.com>"
    done = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", message],
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    recorded = git(repo, "log", "-1", "--format=%B")
    assert recorded == f"{message}\nHive-Committer: Bee\nHive-Cell: {cell}\n\n"
    _stage(repo, "docs/guide.md")
    refused = subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", "docs"],
        env=env,
        capture_output=True,
        text=True,
    )
    assert refused.returncode == 1
    assert "hive: docs/guide.md is reserved by Ant" in refused.stderr


def test_the_hooks_in_a_repository_without_hive(
    repo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """No ``.hive`` at HEAD: nothing to enforce for an agent's commit either, and no
    trailer (the lean path says so, as the full path does)."""
    assert shutil.which("git")
    _stage(repo, "src/a.py")
    _environment(monkeypatch, {"HIVE_AGENT_TOKEN": "hive_nobody"})
    assert _lean(repo, ["pre-commit"], capsys) == _full(repo, ["pre-commit"], capsys) == (0, "")


JSON_DOCUMENTS = [
    '{"agents": {"Bee": {"token_sha256": "ab"}}, "retired": [], "version": 1}',
    ' \n\t{ "a" : [1, 2.5, -3e2, true, false, null, "\\u00e9\\ud83d\\ude00"] }\r\n ',
    '"plain"',
    "12345678901234567890123",
    "[NaN, Infinity, -Infinity]",
    '{"a": 1, "a": 2}',
    "[[[[[]]]]]",
    "",
    "   ",
    "{",
    '{"a": 1} x',
    '{"a": 1}{}',
    "\ufeff{}",
    "[1,]",
    '{"a" 1}',
    '"\x01"',
    "nan",
]


@pytest.mark.parametrize("text", JSON_DOCUMENTS)
def test_json_documents_are_read_as_json_reads_them(text: str) -> None:
    """The credential store is read by ``jsontext.loads`` (no ``json`` import): the value
    ``json.loads`` gives, or its very error."""
    import json

    from hive.jsontext import loads

    try:
        expected: object = json.loads(text)
    except ValueError as exc:
        with pytest.raises(type(exc)) as caught:
            loads(text)
        assert str(caught.value) == str(exc)
        return
    found = loads(text)
    assert json.dumps(found) == json.dumps(expected)
    assert type(found) is type(expected)
