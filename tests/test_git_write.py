"""The git write path: atomic commits, the user's work untouched, concurrency, odd repos."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import threading
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, list_cells, show_cell, update_cell
from hive.domain.doctor import diagnose
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import (
    CorruptFile,
    DirtyHiveFile,
    GitError,
    LockTimeout,
    NotAGitRepository,
    NotInitialized,
)
from hive.git.repo import Change, Plan
from hive.store.layout import CONFIG_PATH, cell_path
from tests.conftest import assert_clean, git, make_repo
from tests.inprocess import run_hive


def test_users_staged_and_unstaged_work_is_untouched(ws: Workspace, repo: Path) -> None:
    (repo / "README.md").write_text("# staged change\n")
    git(repo, "add", "README.md")
    (repo / "README.md").write_text("# staged change\nplus unstaged\n")
    (repo / "notes.txt").write_text("untracked\n")
    cell = create_cell(ws, title="does not sweep")
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [cell_path(cell.id)]
    assert git(repo, "diff", "--cached", "--name-only").split() == ["README.md"]
    assert git(repo, "diff", "--name-only").split() == ["README.md"]
    assert (repo / "README.md").read_text() == "# staged change\nplus unstaged\n"
    assert git(repo, "show", ":README.md") == "# staged change\n"
    status = git(repo, "status", "--porcelain").splitlines()
    assert sorted(status) == ["?? notes.txt", "MM README.md"]


def test_init_is_idempotent_and_works_without_commits(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "fresh", commit=False)
    ws = Workspace(str(repo), actor="alice")
    first = init_hive(ws, prefix="ab")
    second = init_hive(ws)
    assert first.created and not second.created
    assert second.prefix == "ab"
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 1
    cell = create_cell(ws, title="first cell")
    assert cell.id.startswith("ab-")
    assert_clean(repo)


def test_not_a_repository_and_not_initialised(tmp_path: Path, repo: Path) -> None:
    (tmp_path / "plain").mkdir()
    with pytest.raises(NotAGitRepository, match="not inside a git repository"):
        Workspace(str(tmp_path / "plain"))
    with pytest.raises(NotInitialized, match="hive init"):
        list_cells(Workspace(str(repo)))
    (tmp_path / "afile").write_text("x")
    with pytest.raises(NotAGitRepository, match="afile: is a file, not a directory"):
        Workspace(str(tmp_path / "afile"))
    with pytest.raises(NotAGitRepository, match="missing: no such directory"):
        Workspace(str(tmp_path / "missing"))


def test_detached_head_commits_on_head_when_allowed(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    git(repo, "checkout", "-q", "--detach")
    monkeypatch.setenv("HIVE_ALLOW_DETACHED", "1")  # refused without (tests/reliability)
    cell = create_cell(ws, title="detached")
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "HEAD"
    assert cell.id in git(repo, "log", "-1", "--format=%B")
    assert cell.id not in git(repo, "log", "-1", "--format=%B", "main")
    assert_clean(repo)


def test_inside_a_git_worktree(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    side = Workspace(str(tmp_path / "wt"), actor="bob")
    cell = create_cell(side, title="from worktree")
    assert cell.id in git(repo, "log", "-1", "--format=%B", "side")
    assert cell.id not in git(repo, "log", "-1", "--format=%B", "main")
    assert_clean(tmp_path / "wt")
    assert_clean(repo)


def test_autocommit_off_stages_for_the_users_commit(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setenv("HIVE_AUTOCOMMIT", "0")
    staged_ws = Workspace(str(repo), actor="alice")
    cell = create_cell(staged_ws, title="lands with code")
    update_cell(staged_ws, cell_id=cell.id, priority=0)
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "diff", "--cached", "--name-only").split() == [cell_path(cell.id)]
    assert show_cell(staged_ws, cell_id=cell.id).priority == 0
    monkeypatch.delenv("HIVE_AUTOCOMMIT")  # a committing process reads HEAD: it says why
    shown = run_hive(["-C", str(repo), "show", cell.id])
    assert shown.exit_code == 3 and "Traceback" not in shown.output
    assert f"{cell.id} is staged but not committed (made with HIVE_AUTOCOMMIT=0)" in shown.stderr
    other = run_hive(["-C", str(repo), "show", "hv-nothere"])
    assert other.exit_code == 3 and "staged" not in other.stderr
    (repo / "app.py").write_text("print('hi')\n")
    git(repo, "add", "app.py")
    git(repo, "commit", "-q", "-m", "code and cell together")
    files = sorted(git(repo, "show", "--name-only", "--format=", "HEAD").split())
    assert files == sorted(["app.py", cell_path(cell.id)])
    assert_clean(repo)


def test_local_edits_to_a_cell_file_are_never_overwritten(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="edited by hand")
    path = repo / cell_path(cell.id)
    path.write_text(path.read_text() + "# my local note\n")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DirtyHiveFile, match="local edits"):
        update_cell(ws, cell_id=cell.id, priority=0)
    assert git(repo, "rev-parse", "HEAD") == head
    assert path.read_text().endswith("# my local note\n")


def test_a_same_size_edit_with_its_mtime_put_back_is_never_overwritten(
    ws: Workspace, repo: Path
) -> None:
    """The stat data a write trusts without reading the file is git's whole rule (ctime
    and inode too, racy entries read): a hand edit of the same size whose mtime was put
    back (an editor, ``touch -r``, a restore tool) is still seen as a local edit."""
    cell = create_cell(ws, title="edited by hand")
    path = repo / cell_path(cell.id)
    past = path.stat().st_mtime_ns - 5 * 10**9
    os.utime(path, ns=(past, past))
    git(repo, "update-index", "--refresh")  # staged stat data: not racy, written later
    text = path.read_text()
    path.write_text(text.replace("edited by hand", "edited by HAND"))
    os.utime(path, ns=(past, past))
    assert path.stat().st_size == len(text.encode())
    # (git's default build compares ctime to the second, so `git diff` may miss an edit
    # made in the same second; hive compares it to the nanosecond)
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(DirtyHiveFile, match="local edits"):
        update_cell(ws, cell_id=cell.id, priority=0)
    assert git(repo, "rev-parse", "HEAD") == head
    assert "edited by HAND" in path.read_text()


def test_corrupt_cell_is_reported_and_others_still_work(ws: Workspace, repo: Path) -> None:
    good = create_cell(ws, title="good")
    bad = create_cell(ws, title="bad")
    bad_path = repo / cell_path(bad.id)
    bad_path.write_text("id: " + bad.id + "\ntitle: [unclosed\nstatus: open\n")
    git(repo, "commit", "-q", "-am", "oops")
    fresh = Workspace(str(repo), actor="alice")
    assert [c.id for c in list_cells(fresh)] == [good.id]
    with pytest.raises(CorruptFile, match=rf"{cell_path(bad.id)}:\d+"):
        show_cell(fresh, cell_id=bad.id)
    update_cell(fresh, cell_id=good.id, priority=1)
    report = diagnose(fresh)
    assert [p.kind for p in report.problems] == ["corrupt"]
    assert report.problems[0].path == cell_path(bad.id)


def test_doctor_finds_dangling_dependencies_and_uncommitted_breakage(
    ws: Workspace, repo: Path
) -> None:
    cell = create_cell(ws, title="points nowhere")
    text = (repo / cell_path(cell.id)).read_text()
    text = text.replace(
        "status: open\n", "status: open\ndependencies:\n  - type: blocks\n    target: hv-gone\n"
    )
    (repo / cell_path(cell.id)).write_text(text)
    git(repo, "commit", "-q", "-am", "hand edit")
    other = create_cell(ws, title="later broken")
    (repo / cell_path(other.id)).write_text("priority: [\n")
    kinds = sorted(p.kind for p in diagnose(ws).problems)
    assert kinds == ["corrupt-uncommitted", "dangling-dependency"]


def test_corrupt_config_is_a_clear_error(ws: Workspace, repo: Path) -> None:
    (repo / CONFIG_PATH).write_text("prefix: [\n")
    git(repo, "commit", "-q", "-am", "break config")
    with pytest.raises(CorruptFile, match=r"config.yaml:\d+"):
        create_cell(Workspace(str(repo)), title="x")


def test_lock_held_too_long_is_a_clear_error(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "0.2")
    head = git(repo, "rev-parse", "HEAD")
    holding = threading.Event()
    release = threading.Event()

    def hold() -> None:
        with ws.git.write_lock(5):
            holding.set()
            release.wait(60)  # set as the test ends: a bound only for a failure

    thread = threading.Thread(target=hold)
    thread.start()
    holding.wait(60)
    try:
        other = Workspace(str(repo), actor="bob")
        with pytest.raises(LockTimeout, match="lock") as refused:
            create_cell(other, title="waits")
        # the way to wait longer names the setting that decided: HIVE_LOCK_TIMEOUT here
        assert "HIVE_LOCK_TIMEOUT" in str(refused.value), refused.value
    finally:
        release.set()
        thread.join()
    assert git(repo, "rev-parse", "HEAD") == head


def test_state_directory_that_is_a_file_is_named_not_blamed_on_a_lock(repo: Path) -> None:
    """``.git/hive`` a file: the write fails at once saying so (not "another hive process
    held the lock"), on the lean and the full path; nothing is committed."""
    from tests.inprocess import run_hive

    head = git(repo, "rev-parse", "HEAD")
    state = repo / ".git" / "hive"
    shutil.rmtree(state, ignore_errors=True)
    state.write_text("not a directory")
    for module in ("hive", "hive.cli.main"):
        result = run_hive(["create", "blocked write"], cwd=repo, module=module)
        assert result.returncode == 8, result.stderr
        assert f"{state} is not a directory" in result.stderr
        assert "another hive process" not in result.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert state.read_text() == "not a directory"


def _writer(repo: str, worker: int, count: int) -> None:
    ws = Workspace(repo, actor=f"agent{worker}")
    for number in range(count):
        create_cell(ws, title=f"w{worker}-{number}")


def test_eight_processes_fifty_writes_each_lose_nothing(ws: Workspace, repo: Path) -> None:
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_writer, args=(str(repo), n, 50)) for n in range(8)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(120)
        assert proc.exitcode == 0
    titles = {c.title for c in list_cells(Workspace(str(repo), persist_cache=False))}
    assert titles == {f"w{w}-{n}" for w in range(8) for n in range(50)}
    tracked = git(repo, "ls-tree", "-r", "--name-only", "HEAD", ".hive/cells").split()
    assert len(tracked) == 400
    assert int(git(repo, "rev-list", "--count", "HEAD")) == 402
    assert_clean(repo)


def test_concurrent_updates_to_one_cell_are_all_applied(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="counter")
    context = multiprocessing.get_context("fork")
    procs = [context.Process(target=_label_adder, args=(str(repo), cell.id, n)) for n in range(4)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(60)
        assert proc.exitcode == 0
    labels = show_cell(Workspace(str(repo), persist_cache=False), cell_id=cell.id).labels
    assert sorted(labels) == sorted(f"p{n}-{i}" for n in range(4) for i in range(10))


def _label_adder(repo: str, cell_id: str, worker: int) -> None:
    ws = Workspace(repo, actor=f"agent{worker}")
    for i in range(10):
        update_cell(ws, cell_id=cell_id, add_labels=[f"p{worker}-{i}"])


def test_external_ref_move_is_detected_and_retried(ws: Workspace, repo: Path) -> None:
    """A commit made by plain git between hive's read and write is kept."""
    cell = create_cell(ws, title="x")
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "user commit")
    update_cell(ws, cell_id=cell.id, priority=4)
    assert "code.py" in git(repo, "ls-tree", "--name-only", "HEAD")
    assert git(repo, "log", "-2", "--format=%s").splitlines()[1] == "user commit"
    assert_clean(repo)
    assert os.path.exists(repo / "code.py")


def _history(repo: Path) -> tuple[str, str]:
    return git(repo, "rev-parse", "HEAD"), git(repo, "status", "--porcelain")


def test_held_index_lock_refuses_the_write_before_anything_lands(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "0.3")
    before = _history(repo)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    try:
        with pytest.raises(LockTimeout, match=r"index\.lock"):
            create_cell(Workspace(str(repo), actor="bob"), title="waits for the index")
    finally:
        lock.unlink()
    assert _history(repo) == before
    assert_clean(repo)
    create_cell(ws, title="after the lock is gone")
    assert_clean(repo)


class _GitHoldingTheIndex:
    """Stands in for the ``time`` module of hive/waits.py (the lock waits' backoff): its
    clock moves only when the lock wait sleeps (a second a sleep), and the ``index.lock``
    a git process holds is removed once ``held_for`` seconds have passed on it: a long
    wait without waiting."""

    def __init__(self, lock: Path, held_for: float) -> None:
        self.lock, self.held_for, self.now = lock, held_for, 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, _seconds: float) -> None:
        self.now += 1.0
        if self.now >= self.held_for and self.lock.exists():
            self.lock.unlink()


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["lean", "full"])
def test_index_lock_is_waited_for_as_long_as_the_configured_lock_wait(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    """git's ``index.lock`` held 12 s (20 agents committing in one tree): a write whose
    HIVE_LOCK_TIMEOUT is 30 waits it out, on the lean and the full path (hive used to give
    up after 10 s whatever the setting); with 5 it gives up, naming the wait and the way to
    wait longer, and nothing lands."""
    import hive.waits as waits_module

    before = _history(repo)
    lock = repo / ".git" / "index.lock"
    lock.write_text("")
    monkeypatch.setattr(waits_module, "time", _GitHoldingTheIndex(lock, 12.0))
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "5")
    refused = run_hive(["create", "gives up"], cwd=repo, module=module)
    assert refused.returncode == 6, refused.stderr
    assert "more than 5s" in refused.stderr and "HIVE_LOCK_TIMEOUT" in refused.stderr
    assert _history(repo) == before
    monkeypatch.setattr(waits_module, "time", _GitHoldingTheIndex(lock, 12.0))
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "30")
    waited = run_hive(["create", "waits it out"], cwd=repo, module=module)
    assert waited.returncode == 0, waited.stderr
    assert not lock.exists()
    assert "waits it out" in git(repo, "log", "-1", "--format=%s")
    assert_clean(repo)


class _ProcessHoldingARef:
    """Another process holding ``<ref>.lock`` (created by it, as ``git update-ref`` does,
    with no hive twin beside it, so never taken for a dead hive writer's), and a stand-in
    for hive/waits.py's ``time`` whose clock moves a second at each sleep of the lock
    wait: once ``held_for`` seconds have passed on it, the holder is told to release the
    lock and has removed it before the wait goes on."""

    HOLD = (
        "import os, sys; lock = sys.argv[1]; fd = os.open(lock, os.O_WRONLY | os.O_CREAT"
        " | os.O_EXCL); os.write(fd, sys.argv[2].encode() + b'\\n'); os.close(fd);"
        " print('held', flush=True); sys.stdin.readline(); os.unlink(lock)"
    )

    def __init__(self, lock: Path, value: str, held_for: float) -> None:
        import subprocess
        import sys

        self.lock, self.held_for, self.now = lock, held_for, 0.0
        self.holder = subprocess.Popen(
            [sys.executable, "-c", self.HOLD, str(lock), value],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.holder.stdout is not None and self.holder.stdout.readline() == "held\n"

    def monotonic(self) -> float:
        return self.now

    def sleep(self, _seconds: float) -> None:
        self.now += 1.0
        if self.now >= self.held_for:
            self.release()

    def release(self) -> None:
        if self.holder.returncode is None:
            self.holder.communicate("\n")


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["lean", "full"])
def test_a_ref_lock_is_waited_for_as_long_as_the_configured_lock_wait(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    """Another process holds ``refs/heads/main.lock`` for 3 s, past the fixed second hive
    used to wait for a ref lock whatever HIVE_LOCK_TIMEOUT said: a write whose wait is 30
    waits it out, with the backoff of git's ``index.lock``, on the lean and the full path;
    with a wait of 2 it gives up, naming the wait and the way to wait longer, and nothing
    lands (the intent settled, the index as it was)."""
    import hive.waits as waits_module

    before = _history(repo)
    lock = repo / ".git" / "refs" / "heads" / "main.lock"
    head = before[0].strip()
    holder = _ProcessHoldingARef(lock, head, 3.0)
    try:
        monkeypatch.setattr(waits_module, "time", holder)
        monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "2")
        refused = run_hive(["create", "gives up"], cwd=repo, module=module)
        assert refused.returncode == 6, refused.stderr
        assert "main.lock exists" in refused.stderr and "more than 2s" in refused.stderr
        assert "HIVE_LOCK_TIMEOUT" in refused.stderr
        assert lock.exists() and _history(repo) == before
        assert_clean(repo)
        holder.now = 0.0
        monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "30")
        waited = run_hive(["create", "waits it out"], cwd=repo, module=module)
    finally:
        holder.release()
    assert waited.returncode == 0, waited.stderr
    assert holder.now >= 3.0 and not lock.exists()
    assert "waits it out" in git(repo, "log", "-1", "--format=%s")
    assert_clean(repo)


def test_split_index_is_refused_clearly_and_nothing_lands(ws: Workspace, repo: Path) -> None:
    git(repo, "update-index", "--split-index")
    before = _history(repo)
    with pytest.raises(GitError, match="split"):
        create_cell(ws, title="split index")
    assert _history(repo) == before
    git(repo, "update-index", "--no-split-index")
    create_cell(ws, title="plain index again")
    assert_clean(repo)


def test_failure_after_the_ref_moved_is_rolled_back(ws: Workspace, repo: Path) -> None:
    """A file name the filesystem accepts but whose temporary sibling it does not:
    the commit is made and the ref moved before the working-tree write fails."""
    before = _history(repo)
    name = "n" * 250 + ".txt"
    cell_change = Change(".hive/notes.txt", b"kept only if everything lands\n")

    def plan(snap: object) -> Plan:
        return Plan(changes=[cell_change, Change(name, b"x\n")], message="hive: test\n")

    with pytest.raises(GitError, match="nothing was committed"):
        ws.git.transact(plan, author=ws.identity())
    assert _history(repo) == before
    assert not (repo / ".hive" / "notes.txt").exists()
    assert_clean(repo)


def test_hive_commits_are_in_the_reflog_like_git_commits(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="logged")
    branch = git(repo, "reflog", "-1", "--format=%gs", "main").strip()
    head = git(repo, "reflog", "-1", "--format=%gs", "HEAD").strip()
    assert branch == head == f"commit: hive: create {cell.id} logged"
    assert_clean(repo)


def test_a_ref_not_made_yet_is_absent_without_opening_dulwich(ws: Workspace, repo: Path) -> None:
    """``ref_value`` of a ref that does not exist (``refs/hive/mail`` before the first
    message, which ``hive doctor`` asks for) is None from the ref files themselves:
    dulwich (~15 ms to import) is opened only for what those cannot answer for sure."""
    head = git(repo, "rev-parse", "HEAD").strip()
    assert ws.git.ref_value("refs/hive/nothing") is None
    git(repo, "update-ref", "refs/hive/packed", head)
    git(repo, "pack-refs", "--all")
    assert ws.git.ref_value("refs/hive/packed") == head  # packed: still found
    assert ws.git.ref_value("refs/hive/pack") is None  # a prefix of a packed name
    assert ws.git._repo is None, "dulwich was opened to learn that a ref does not exist"
    git(repo, "symbolic-ref", "refs/hive/sym", "refs/heads/main")
    assert ws.git.ref_value("refs/hive/sym") == head  # a symbolic ref: dulwich reads it


def test_a_packed_ref_name_that_is_not_utf8_breaks_nothing(ws: Workspace, repo: Path) -> None:
    """git takes any bytes in a ref name: a tag named in Latin-1, packed with the branch,
    made every command fail ('internal error: UnicodeDecodeError') where HEAD's branch
    is read from packed-refs; the mail log's look for fetched logs reads it too."""
    git(repo, "tag", os.fsdecode(b"caf\xe9"))
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-ref", "refs/hive-remotes/origin/mail", head)
    git(repo, "pack-refs", "--all")
    created = run_hive(["create", "after packing"], cwd=repo)
    assert created.returncode == 0, created.stderr
    listed = run_hive(["list"], cwd=repo)
    assert listed.returncode == 0 and "after packing" in listed.stdout, listed.stderr
    assert ws.git.tracking_tips("mail") == {"refs/hive-remotes/origin/mail": head}
    assert_clean(repo)


def test_a_branch_whose_name_is_not_utf8_is_refused_with_what_to_do(
    ws: Workspace, repo: Path
) -> None:
    """On a branch git named in Latin-1 bytes, hive's commands failed with 'internal
    error: UnicodeDecodeError'; now they say what is wrong and write nothing."""
    git(repo, "checkout", "-q", "-b", os.fsdecode(b"caf\xe9"))
    before = git(repo, "rev-parse", "HEAD")
    for argv in (["create", "on that branch"], ["list"], ["--json", "ready"]):
        out = run_hive(argv, cwd=repo)
        assert out.returncode == 8, (argv, out.stderr, out.stdout)
        assert "not UTF-8" in out.stderr + out.stdout and "internal error" not in out.stderr
        assert "git branch -m" in out.stderr + out.stdout
    assert git(repo, "rev-parse", "HEAD") == before
    assert_clean(repo)


def test_a_ref_made_between_two_looks_is_read_without_opening_dulwich(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another writer makes the ref after ``ref_value``'s first look found no file and
    before its second saw one: the ref file is read again rather than dulwich opened (a
    swarm worker forked ready imported dulwich's reader this way under load)."""
    import hive.git.refs as refs

    head = git(repo, "rev-parse", "HEAD").strip()
    real = refs.read_ref_fast
    looks: list[str] = []

    def first_look_before_the_write(paths: object, ref: str) -> str | None:
        looks.append(ref)
        if len(looks) == 1:
            found = real(paths, ref)  # type: ignore[arg-type]
            git(repo, "update-ref", ref, head)  # the other writer, in between
            return found
        return real(paths, ref)  # type: ignore[arg-type]

    monkeypatch.setattr(refs, "read_ref_fast", first_look_before_the_write)
    assert ws.git.ref_value("refs/hive/mail") == head
    assert looks == ["refs/hive/mail", "refs/hive/mail"]
    assert ws.git._repo is None, "dulwich was opened for a ref that had been made"


@pytest.mark.parametrize(
    "last_paragraph",
    [
        "Hive-Cell: hv-1\nHive-Agent: alice",
        "Hive-Cell: hv-1\u2028Hive-Agent: mallory",  # one line to git
        "Hive-Cell: hv-1\x85Hive-Agent: mallory",
        "Hive-Cell: hv-1\x0cHive-Agent: mallory",
        "Hive-Cell: hv-1\r\nHive-Agent: alice",
    ],
    ids=["lf", "u2028", "nel", "ff", "crlf"],
)
def test_trailers_are_the_lines_git_reads_as_trailers(repo: Path, last_paragraph: str) -> None:
    """``parse_trailers`` split the last paragraph at every line break Python knows
    (U+2028, NEL, FF...), git only at LF: a message git reads as one trailer was two to
    hive (a ``Hive-Agent:`` no git tool shows)."""
    import subprocess

    from hive.git.repo import parse_trailers

    message = f"subject\n\nbody\n\n{last_paragraph}\n"
    parsed = subprocess.run(
        ["git", "interpret-trailers", "--parse"],
        input=message.encode(),
        capture_output=True,
        check=True,
        cwd=repo,
    ).stdout.decode()
    gits: dict[str, list[str]] = {}
    for line in filter(None, parsed.split("\n")):  # git's lines end at LF only
        key, _, value = line.partition(": ")
        gits.setdefault(key, []).append(value.strip())
    assert parse_trailers(message) == gits


@pytest.mark.parametrize("given", ["maybe", "O", "disabled", "2"])
def test_an_autocommit_value_hive_does_not_know_is_refused(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch, given: str
) -> None:
    """HIVE_AUTOCOMMIT=O (a letter) or =disabled committed as if it were unset: someone
    who asked for staging got commits. It is refused (exit 2), naming what it takes;
    nothing is written."""
    head = git(repo, "rev-parse", "HEAD")
    monkeypatch.setenv("HIVE_AUTOCOMMIT", given)
    for args in (["create", "work"], ["list"]):
        refused = run_hive(["-C", str(repo), *args])
        assert refused.exit_code == 2, refused.output
        assert refused.stderr == (
            f"error: HIVE_AUTOCOMMIT must be 0 (stage hive's changes for your next commit)"
            f" or 1 (commit each one; also false/true, no/yes, off/on), got {given!r}\n"
        )
    assert git(repo, "rev-parse", "HEAD") == head and git(repo, "status", "--porcelain") == ""
    for taken in ("1", "TRUE", " yes ", "on", ""):
        monkeypatch.setenv("HIVE_AUTOCOMMIT", taken)
        assert run_hive(["-C", str(repo), "create", f"w{taken}"]).exit_code == 0
    assert git(repo, "status", "--porcelain") == ""


def test_packed_refs_are_found_by_exact_name_among_many(tmp_path: Path) -> None:
    """packed-refs is searched, not split whole: each ref is found by its exact name
    (not a longer name it begins, not a peeled ``^`` line, not another remote's), as
    git's own rev-parse finds it, and each remote's tracking tip likewise."""
    from hive.git.refs import discover, read_ref_fast, tracking_tips

    repo = make_repo(tmp_path / "r")
    head = git(repo, "rev-parse", "HEAD").strip()
    names = [f"refs/tags/v{n}" for n in range(300)] + [
        "refs/heads/main2",
        "refs/hive-remotes/origin/mail",
        "refs/hive-remotes/origin/mailbox",
        "refs/hive-remotes/up/mail",
        "refs/x/refs/hive-remotes/origin/mail",
    ]
    git(repo, "tag", "-a", "-m", "peeled", "annotated")
    for name in names:
        git(repo, "update-ref", name, head)
    git(repo, "pack-refs", "--all")
    paths = discover(str(repo))
    for name in ("refs/tags/v7", "refs/tags/v299", "refs/tags/annotated", "refs/heads/main2"):
        assert read_ref_fast(paths, name) == git(repo, "rev-parse", name).strip()
    assert read_ref_fast(paths, "refs/tags/v3000") is None
    assert read_ref_fast(paths, "refs/heads/mai") is None
    assert tracking_tips(paths, "mail") == {
        "refs/hive-remotes/origin/mail": head,
        "refs/hive-remotes/up/mail": head,
    }
