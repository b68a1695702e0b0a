"""The lean paths in a linked worktree (``git worktree add``, as ``hive swarm run`` gives
each worker), with other worktrees present, and on a detached HEAD.

Every form the lean paths answer in the main worktree is answered in a linked one
too, exactly as the full CLI answers it there: the same output, the same commit
(with the clock and the ids fixed, the same commit id on the worktree's own branch),
the same files, git index rows, reflog, state index rows (the repository's, in the
common git directory) and reservation id sequence. Reservations of every worktree
still count: a grant is checked against the other worktrees' HEADs under the one
repository-wide write lock, and the quick pre-commit hook reads them too.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
import sqlite3
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from hive.cli import entry
from hive.domain import reservecore
from hive.domain.cells import create_cell, update_cell
from hive.domain.hooks import install_hook
from hive.domain.identity import mail_init
from hive.domain.mail import send_message
from hive.domain.reservations import list_reservations, reserve
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from tests.conftest import (
    agent_env,
    assert_clean,
    copy_repo,
    credential,
    git,
    isolated_env,
    make_repo,
)
from tests.gitchecks import assert_fsck_clean
from tests.templates import without_sample_hooks
from tests.test_lean_coord import FIXED_EPOCH, FIXED_NOW, full_run, lean_run
from tests.test_lean_write import reset_ids

AGENTS = ("alice", "bob", "carol", "dave")


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A repository with two cells (one open, one the person's), a reservation of the
    person's (README.md), four agents with credentials and the person registered for
    mail, and a message from alice to the person (made once per module)."""
    with isolated_env(tmp_path_factory):
        root = without_sample_hooks(make_repo(tmp_path_factory.mktemp("template") / "main"))
        ids = _fill_template(root)
    # the workspaces' index connections closed now, not by the collector while a test
    # copies the template (the last one's close deletes the -wal file copytree listed)
    gc.collect()
    return {"root": root, "ids": ids}


def _fill_template(root: Path) -> dict[str, str]:
    """The template's files, hive, agents, cells, reservation and message."""
    for path in ("src/a.py", "src/b.py", "docs/x.md"):
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(f"{path}\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "files")
    person = Workspace(str(root))
    init_hive(person, prefix="hv")
    for name in AGENTS:
        credential(root, name)
    mail_init(Workspace(str(root), actor="Test User"), agent_name="Test User")
    ids = {"open": create_cell(person, title="open one", labels=["a"]).id}
    ids["mine"] = create_cell(person, title="mine", assignee="Test User").id
    update_cell(person, cell_id=ids["mine"], status="in_progress")
    reserve(person, paths=["README.md"], reason="docs")
    alice = Workspace(str(root), actor="alice")
    ids["hello"] = str(send_message(alice, to=["Test User"], subject="hello", body="hi").message_id)
    Workspace(str(root)).cells()  # the state index knows HEAD's state
    return ids


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """One clock for both paths, and the id sequence started again by the function it
    gives (so their commits are identical)."""
    import hive.cli.lean_coord
    import hive.cli.lean_write
    import hive.domain.cells
    import hive.domain.mail
    import hive.domain.reservations

    for module in (
        hive.domain.cells,
        hive.domain.reservations,
        hive.domain.mail,
        hive.cli.lean_write,
        hive.cli.lean_coord,
    ):
        monkeypatch.setattr(module, "utc_now", lambda: FIXED_NOW)
    monkeypatch.setattr(time, "time", lambda: float(FIXED_EPOCH))
    return lambda: reset_ids(monkeypatch)


def linked(template: dict[str, Any], tmp_path: Path, name: str, *, detach: bool = False) -> Path:
    """A copy of the template with a linked worktree on a new branch ``side`` (detached
    at the same commit with ``detach``): the linked worktree's path."""
    main = copy_repo(template["root"], tmp_path / name)
    side = tmp_path / f"{name}-side"
    if detach:
        git(main, "worktree", "add", "-q", "--detach", str(side))
    else:
        git(main, "worktree", "add", "-q", "-b", "side", str(side))
    return side


def common_dir(side: Path) -> Path:
    return Path(git(side, "rev-parse", "--path-format=absolute", "--git-common-dir").strip())


def places(side: Path) -> dict[str, str]:
    """Of the linked worktree ``side``, from one ``git rev-parse``, each as its own
    ``git rev-parse`` prints it: the common and the worktree's own git directory, the
    worktree's HEAD (the commit, and with ``--symbolic-full-name`` the branch, or
    ``HEAD`` when detached) and the main worktree's HEAD commit."""
    asked = ("--git-common-dir", "--git-dir", "HEAD", "main-worktree/HEAD")
    found = git(
        side, "rev-parse", "--path-format=absolute", *asked, "--symbolic-full-name", "HEAD"
    ).splitlines(keepends=True)
    names = ("common_dir", "git_dir", "head_id", "main_id", "branch")
    assert len(found) == len(names), found
    return dict(zip(names, found, strict=True))


def state_index(common: Path) -> list[list[Any]]:
    db = sqlite3.connect(common / "hive" / "index.sqlite3")
    try:
        return [
            db.execute(f"SELECT * FROM {table} ORDER BY 1, 2").fetchall()
            for table in ("blobs", "dirs", "commits", "mail_state")
        ]
    finally:
        db.close()


def outcome(side: Path) -> dict[str, Any]:
    """What a command in the linked worktree ``side`` leaves, read with git: HEAD and the
    mail ref as ``git show`` prints them, HEAD's reflog entry, the changed files and
    their index rows, both worktrees' status and branch, the state index, the id
    sequence."""
    changed = git(side, "show", "--name-only", "--format=", "HEAD").split()
    where = places(side)
    common = Path(where["common_dir"].strip())
    sequence = common / "hive" / reservecore.SEQUENCE_FILE
    main = common.parent
    return {
        "head": git(side, "show", "--format=fuller", "--stat", "HEAD"),
        "head_id": where["head_id"],
        "branch": where["branch"],
        "reflog": git(side, "reflog", "-1", "--format=%H %gs", "HEAD"),
        "mail": git(side, "show", "--format=fuller", "--stat", "refs/hive/mail"),
        "files": {path: (side / path).read_bytes() for path in changed if (side / path).exists()},
        "staged": git(side, "ls-files", "-s", "--", *changed) if changed else "",
        "status": git(side, "status", "--porcelain"),
        "main": (where["main_id"], git(main, "status", "--porcelain")),
        "index": state_index(common),
        "sequence": sequence.read_text() if sequence.exists() else None,
    }


def assert_settled(side: Path, *, status_checked: bool = False) -> None:
    """No twin, intent or lock left in the linked worktree's git dir; status clean
    (``status_checked``: the caller has just checked it) and fsck too."""
    git_dir = Path(git(side, "rev-parse", "--path-format=absolute", "--git-dir").strip())
    assert not [p.name for p in git_dir.iterdir() if "hive" in p.name or p.suffix == ".lock"]
    (assert_fsck_clean if status_checked else assert_clean)(side)


def same_answer(
    template: dict[str, Any],
    tmp_path: Path,
    args: list[str],
    capsys: pytest.CaptureFixture[str],
    frozen: Callable[[], None],
    *,
    detach: bool = False,
) -> dict[str, Any]:
    """``args`` run by the lean path and by the full CLI in the linked worktree of twin
    copies of the template: the lean path answered, and both left the same. Returns
    what the lean twin's worktree was before (its HEAD, the main worktree's, the mail
    ref as ``outcome`` shows them) and the outcome."""
    args = [part.format(**template["ids"]) for part in args]
    lean_side = linked(template, tmp_path, "lean", detach=detach)
    full_side = linked(template, tmp_path, "full", detach=detach)
    where = places(lean_side)
    before = {
        "head_id": where["head_id"],
        "main": (where["main_id"],),
        "mail": git(lean_side, "show", "--format=fuller", "--stat", "refs/hive/mail"),
    }
    frozen()
    lean = lean_run(lean_side, args, capsys)
    assert lean[0] == 0, f"the lean path deferred a form it answers: {lean[2]}"
    frozen()
    assert full_run(full_side, args, capsys) == lean
    after = outcome(lean_side)
    assert after == outcome(full_side)
    assert after["status"] == "" and after["main"][1] == ""
    assert_settled(lean_side, status_checked=True)
    return before, after


# ------------------------------------------------------------------ every form


FORMS: dict[str, tuple[list[str], str]] = {  # args, what moves: the branch, mail, nothing
    "create": (["create", "in a worktree", "-p", "1", "-l", "x", "-d", "two\nlines"], "head"),
    "create-json": (["--json", "create", "as json", "-t", "bug"], "head"),
    "update": (["update", "{open}", "-s", "in_progress", "--assignee", "Test User"], "head"),
    "update-notes": (["update", "{mine}", "--append-notes", "n", "--add-label", "y"], "head"),
    "close": (["close", "{mine}", "-r", "done", "--json"], "head"),
    "reserve": (["reserve", "src/b.py", "--reason", "r"], "head"),
    "reserve-json": (["--json", "reserve", "src/*.py", "docs", "--shared", "--ttl", "60"], "head"),
    "reserve-renew": (["reserve", "README.md"], "head"),
    "release": (["release", "README.md", "--json"], "head"),
    "mail-send": (["mail", "send", "alice", "bob", "-s", "from a worktree", "-b", "b"], "mail"),
    "mail-inbox": (["mail", "inbox"], ""),
    "mail-inbox-json": (["--json", "mail", "inbox", "--unread"], ""),
    "mail-read": (["mail", "read", "#{hello}"], "mail"),
    "mail-read-json": (["--json", "mail", "read", "{hello}"], "mail"),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_every_lean_form_answers_in_a_linked_worktree_as_the_full_cli(
    name: str,
    template: dict[str, Any],
    tmp_path: Path,
    frozen: Callable[[], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    args, moved = FORMS[name]
    before, after = same_answer(template, tmp_path, args, capsys, frozen)
    assert after["branch"] == "refs/heads/side\n"  # committed on the worktree's branch
    assert after["main"][0] == before["main"][0]  # the main worktree's branch is untouched
    assert (after["head_id"] != before["head_id"]) == (moved == "head")
    assert (after["mail"] != before["mail"]) == (moved == "mail")


READS = {  # args, the cell shown
    "list": (["list"], "open"),
    "list-json": (["list", "--json", "--status", "in_progress"], "mine"),
    "ready": (["ready"], "open"),
    "show": (["show", "{open}", "--json"], "open"),
}


@pytest.mark.parametrize("name", sorted(READS))
def test_reads_are_answered_in_a_linked_worktree(
    name: str, template: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    side = linked(template, tmp_path, "reads")
    given, shown = READS[name]
    args = [part.format(**template["ids"]) for part in given]
    lean = lean_run(side, args, capsys)
    assert lean[0] == 0, f"the lean path deferred: {lean[2]}"
    assert full_run(side, args, capsys) == lean
    assert template["ids"][shown] in lean[1]


def test_the_worktrees_own_head_is_read_not_the_main_ones(
    template: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A cell made in the linked worktree is on its branch only: listed there, not in
    the main worktree; one made in the main worktree likewise."""
    side = linked(template, tmp_path, "own")
    main = common_dir(side).parent
    assert lean_run(side, ["create", "side only"], capsys)[0] == 0
    assert lean_run(main, ["create", "main only"], capsys)[0] == 0
    side_list = lean_run(side, ["list"], capsys)
    main_list = lean_run(main, ["list"], capsys)
    assert side_list[0] == main_list[0] == 0
    assert "side only" in side_list[1] and "main only" not in side_list[1]
    assert "main only" in main_list[1] and "side only" not in main_list[1]
    assert git(side, "log", "-1", "--format=%s", "side").startswith("hive: create ")
    assert_settled(side)
    assert_clean(main)


def test_a_worktrees_own_git_config_is_read_as_git_reads_it(
    template: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With ``extensions.worktreeConfig`` a linked worktree may have its own
    ``user.name``: the lean path reads that file first, as git does, and writes as the
    worktree's person, as the full CLI does (no ``GIT_AUTHOR_NAME``, which git puts
    before any config)."""
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    for name, answer in (("lean", lean_run), ("full", full_run)):
        side = linked(template, tmp_path, f"config-{name}")
        git(side, "config", "extensions.worktreeConfig", "true")
        git(side, "config", "--worktree", "user.name", "Side Person")
        code, _, err = answer(side, ["create", "by the side person"], capsys)
        assert code == 0, f"{name}: {err}"
        assert git(side, "log", "-1", "--format=%an").strip() == "Side Person"


# ------------------------------------------------------------------ detached HEAD


DETACHED = ["create-json", "update", "reserve", "release", "mail-send", "mail-read"]


@pytest.mark.parametrize("name", DETACHED)
def test_a_detached_head_hive_may_commit_on_is_answered_lean(
    name: str,
    template: dict[str, Any],
    tmp_path: Path,
    frozen: Callable[[], None],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With HIVE_ALLOW_DETACHED=1 a write moves the detached HEAD itself, on both paths."""
    monkeypatch.setenv("HIVE_ALLOW_DETACHED", "1")
    _, after = same_answer(template, tmp_path, FORMS[name][0], capsys, frozen, detach=True)
    assert after["branch"] == "HEAD\n"  # still detached


def test_a_detached_head_hive_may_not_commit_on_is_refused_as_by_the_full_cli(
    template: dict[str, Any],
    tmp_path: Path,
    frozen: Callable[[], None],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without HIVE_ALLOW_DETACHED a cell write there is refused by the lean path's
    transaction as by the full CLI's (the same words and exit code); a reservation
    defers to the full CLI, which refuses it; mail, on its own ref, is answered all
    the same."""
    side = linked(template, tmp_path, "detached", detach=True)
    before = outcome(side)
    for args in (["create", "x"], ["--json", "create", "x"]):
        lean = lean_run(side, args, capsys)
        assert lean == full_run(side, args, capsys)
        assert lean[0] == 4 and "HEAD is detached" in lean[2]
    for args in (["reserve", "src/b.py"], ["release", "README.md"]):
        assert lean_run(side, args, capsys) == (None, "", "")
        code, _, err = full_run(side, args, capsys)
        assert code == 4 and "HEAD is detached" in err
    assert outcome(side) == before
    same_answer(template, tmp_path, FORMS["mail-send"][0], capsys, frozen, detach=True)


# ------------------------------------------------------------------ reservations


def as_agent(monkeypatch: pytest.MonkeyPatch, template: dict[str, Any], name: str) -> None:
    for key, value in agent_env(template["root"], name, {}).items():
        monkeypatch.setenv(key, value)


def test_two_worktrees_cannot_both_hold_an_overlapping_exclusive_reservation(
    template: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """alice reserves in the linked worktree through the lean path; bob's overlapping
    request in the main worktree is not granted there (deferred), and the full CLI
    refuses it naming alice and her branch; a disjoint one is granted lean; and the
    other way round."""
    side = linked(template, tmp_path, "held")
    main = common_dir(side).parent
    as_agent(monkeypatch, template, "alice")
    assert lean_run(side, ["reserve", "src/**"], capsys)[0] == 0
    as_agent(monkeypatch, template, "bob")
    head = git(main, "rev-parse", "HEAD")
    assert lean_run(main, ["reserve", "src/a.py"], capsys) == (None, "", "")
    code, _, err = full_run(main, ["reserve", "src/a.py"], capsys)
    assert code == 4 and "reserved by alice" in err and "worktree of branch side" in err
    assert git(main, "rev-parse", "HEAD") == head
    assert lean_run(main, ["reserve", "docs/x.md"], capsys)[0] == 0
    as_agent(monkeypatch, template, "alice")
    assert lean_run(side, ["reserve", "docs/**"], capsys) == (None, "", "")  # bob's, in main
    held = list_reservations(Workspace(str(main), persist_cache=False))
    held += list_reservations(Workspace(str(side), persist_cache=False))
    assert sorted((r.agent, r.path_pattern) for r in held if r.agent != "Test User") == [
        ("alice", "src/**"),
        ("bob", "docs/x.md"),
    ]


def _lean_racer(where: str, token: str, pattern: str, start_at: float, results: Any) -> None:
    os.environ.update(HIVE_AGENT_TOKEN=token)
    os.environ.pop("HIVE_AGENT", None)
    time.sleep(max(0.0, start_at - time.time()))
    code = entry.dispatch(entry.parse(["-C", where, "--json", "reserve", pattern]))
    results.put((token, code))


def test_lean_reserves_racing_in_two_worktrees_get_exactly_one_grant(
    template: dict[str, Any], tmp_path: Path
) -> None:
    """Four agents, two in each worktree, ask for intersecting exclusive patterns at the
    same instant, each through the lean path in a process of its own: one is granted,
    the others find it (under the repository-wide lock) and defer to the full CLI."""
    side = linked(template, tmp_path, "race")
    main = common_dir(side).parent
    tokens = {credential(template["root"], name): name for name in AGENTS}
    patterns = ["src/**", "src/a.py", "src/*.py", "**/a.py"]
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    start_at = time.time() + 0.5
    racers = [
        context.Process(
            target=_lean_racer,
            args=(str(side if n % 2 else main), token, patterns[n], start_at, results),
        )
        for n, token in enumerate(tokens)
    ]
    for racer in racers:
        racer.start()
    for racer in racers:
        racer.join(90)
        assert racer.exitcode == 0
    codes = dict(results.get(timeout=5) for _ in racers)
    granted = [tokens[token] for token, code in codes.items() if code == 0]
    assert len(granted) == 1 and sorted(codes.values(), key=str) == [0, None, None, None]
    held = list_reservations(Workspace(str(main), persist_cache=False))
    held += list_reservations(Workspace(str(side), persist_cache=False))
    assert {r.agent for r in held} - {"Test User"} == set(granted)
    assert_settled(side)
    assert_clean(main)


# ------------------------------------------------------------------ the pre-commit hook


def quick_hook(where: Path) -> int | None:
    """The lean hook's verdict (None: left to the full check)."""
    return entry.dispatch(entry.parse(["-C", str(where), "hooks", "run", "pre-commit"]))


def commit(where: Path, path: str) -> subprocess.CompletedProcess[str]:
    """``path`` changed, staged and committed by git (the installed hook runs)."""
    (where / path).write_text(f"{path} changed in {where.name}\n")
    git(where, "add", path)
    return subprocess.run(
        ["git", "-C", str(where), "commit", "-qm", f"change {path}"],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_quick_hook_answers_with_other_worktrees_and_counts_their_reservations(
    template: dict[str, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """With a linked worktree present the quick hook still answers "nothing can block"
    in either worktree; a path another worktree's agent reserved is left to the full
    check, which refuses the commit and names the holder."""
    side = linked(template, tmp_path, "hook")
    main = common_dir(side).parent
    install_hook(Workspace(str(main)))
    as_agent(monkeypatch, template, "alice")
    assert lean_run(side, ["reserve", "src/a.py"], capsys)[0] == 0  # on branch side only
    as_agent(monkeypatch, template, "bob")
    assert lean_run(main, ["reserve", "docs/x.md"], capsys)[0] == 0  # on branch main only
    for key in ("HIVE_AGENT", "HIVE_AGENT_TOKEN"):
        monkeypatch.delenv(key)  # the person commits
    for where, free, held, holder in (
        (main, "src/b.py", "src/a.py", "alice"),
        (side, "src/b.py", "docs/x.md", "bob"),
    ):
        (where / free).write_text("free\n")
        git(where, "add", free)
        assert quick_hook(where) == 0, "the quick hook left a free path to the full check"
        git(where, "reset", "-q", free)
        head = git(where, "rev-parse", "HEAD")
        blocked = commit(where, held)
        assert blocked.returncode != 0
        assert f"{held} is reserved by {holder}" in blocked.stderr
        assert quick_hook(where) is None  # still staged: the full check decides
        assert git(where, "rev-parse", "HEAD") == head
        git(where, "reset", "-q", held)
        git(where, "checkout", "-q", "--", held)
        done = commit(where, free)
        assert done.returncode == 0, done.stderr
        assert git(where, "show", "--name-only", "--format=", "HEAD").split() == [free]


def test_a_packed_other_worktree_is_left_to_the_full_check(
    template: dict[str, Any], tmp_path: Path
) -> None:
    """Another worktree's HEAD whose objects the quick reader cannot read for sure (here:
    a commit object that is not there) is left to the full check."""
    side = linked(template, tmp_path, "odd")
    main = common_dir(side).parent
    (main / "src/b.py").write_text("free\n")
    git(main, "add", "src/b.py")
    assert quick_hook(main) == 0
    git_dir = Path(git(side, "rev-parse", "--path-format=absolute", "--git-dir").strip())
    (git_dir / "HEAD").write_text("1" * 40 + "\n")  # detached at a commit nobody has
    assert quick_hook(main) is None


HAND_EDITS = {  # a reservation file changed by hand, as the full check reports it
    "misfiled": ("README.md", "someone.yaml"),
    "model-refuses": ("id: 1", "id: one"),
    "a stranger's entry": ("  - id: 1\n    agent: Test User", "  - id: 1\n    agent: mallory"),
}


@pytest.mark.parametrize("edit", sorted(HAND_EDITS))
def test_an_untrusted_reservation_file_is_left_to_the_full_check(
    edit: str, template: dict[str, Any], tmp_path: Path
) -> None:
    """A reservation file the full check cannot trust (misfiled, refused by the model,
    holding another agent's entry) refuses every commit on its branch until mended:
    the quick hook leaves it to the full check, with no other worktree (as before
    linked worktrees were read, it answered there) and in another worktree."""
    main = copy_repo(template["root"], tmp_path / "untrusted")
    install_hook(Workspace(str(main)))
    (held,) = (main / ".hive" / "reservations").iterdir()
    old, new = HAND_EDITS[edit]
    if edit == "misfiled":
        git(main, "mv", str(held), str(held.with_name(new)))
    else:
        held.write_text(held.read_text().replace(old, new, 1))
        git(main, "add", str(held))
    git(main, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "by hand")
    head = git(main, "rev-parse", "HEAD")
    blocked = commit(main, "src/b.py")
    assert blocked.returncode != 0 and ".hive/reservations/" in blocked.stderr
    assert quick_hook(main) is None  # src/b.py still staged: the full check decides
    assert git(main, "rev-parse", "HEAD") == head
    side = tmp_path / "untrusted-side"
    git(main, "worktree", "add", "-q", "-b", "side", str(side))
    (side / "src/b.py").write_text("free\n")
    git(side, "add", "src/b.py")
    assert quick_hook(side) is None  # not read for sure there either


# ------------------------------------------------------------------ recovery


@pytest.mark.parametrize("point", ["after-intent", "index-written"])
def test_a_lean_write_killed_in_a_linked_worktree_is_settled_there(
    template: dict[str, Any], tmp_path: Path, point: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A lean write killed midway in the linked worktree leaves its twin and intent in
    that worktree's git dir: the lean paths there defer to the full CLI, which settles
    it; the main worktree's lean writes are not held up meanwhile."""
    import signal
    import sys

    side = linked(template, tmp_path, "killed")
    main = common_dir(side).parent
    cell = template["ids"]["open"]
    before = git(side, "rev-parse", "HEAD")
    killed = subprocess.run(
        [sys.executable, "-m", "hive", "-C", str(side), "update", cell, "-p", "0"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "HIVE_TEST_KILL_AT": point},
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert lean_run(main, ["create", "meanwhile in main"], capsys)[0] == 0
    assert lean_run(side, ["update", cell, "-p", "1"], capsys) == (None, "", "")
    assert lean_run(side, ["list"], capsys) == (None, "", "")
    code, out, err = full_run(side, ["show", cell, "--json"], capsys)
    assert code == 0 and "hive: recovered an interrupted write" in err
    landed = git(side, "rev-parse", "HEAD") != before
    assert landed == (point == "index-written")
    assert f'"priority": {0 if landed else 2}' in out
    assert lean_run(side, ["update", cell, "-p", "1"], capsys)[0] == 0
    assert_settled(side)
    assert_clean(main)
