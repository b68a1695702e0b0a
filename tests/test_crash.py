"""Crash safety (invariant 8): a hive write killed at any instant leaves nothing to repair.

Writes run in forked child processes (real processes, a real SIGKILL) that kill
themselves at a named point of the write path (``HIVE_TEST_KILL_AT``, see
``hive/git/killpoints.py``) or are killed by the test after a random delay.
After each kill the next hive command runs (opening a Workspace, as every
command does) and git itself checks the result: ``git fsck --strict``, the
index and working tree match HEAD for ``.hive/``, no lock or temporary file is
left, the write is wholly present or wholly absent, the user's staged and
unstaged work is unchanged, and an ordinary ``git commit`` afterwards does not
revert hive's write.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from hive.domain.cells import close_cell, create_cell, update_cell
from hive.domain.hooks import install_hook
from hive.domain.identity import mail_init
from hive.domain.mail import send_message
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.errors import LockTimeout
from hive.git import recovery
from hive.git.killpoints import POINTS
from hive.git.owners import owner_alive, owner_tag
from hive.git.recovery import INTENT, TWIN, Intent, clear_intent, write_intent
from hive.git.repo import Change, GitRepo, Identity, Plan, Snapshot
from hive.store.layout import cell_path
from tests.conftest import copy_repo, git, isolated_env, make_repo
from tests.inprocess import fork_hive, run_hive

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork and SIGKILL")

CRASH_DIR = ".hive/crash"
SHARED = f"{CRASH_DIR}/shared.txt"
AUTHOR = Identity("crash test", "crash@example.com")
STAGED_FILE = "user/staged.txt"
UNSTAGED_FILE = "user/unstaged.txt"
# Points after the ref moved: a write killed there is finished by the next command.
AFTER_COMMIT_POINT = {
    "after-ref-swap",
    "after-reflog",
    "worktree-tmp",
    "mid-worktree",
    "index-written",
    "after-index",
    "after-intent-cleared",
}
# Points where the write left nothing the user could see (no lock, no intent).
QUIET_POINTS = {"before-index-lock", "index-lock-twin", "after-intent-cleared"}


# ----------------------------------------------------------------- the writes


def state_number(snap: Snapshot) -> int:
    content = snap.read(SHARED)
    return int(content.decode().split()[0][1:]) if content is not None else -1


def state_changes(number: int, *, ghost: bool = False) -> list[Change]:
    """State ``number``: ``shared.txt`` says v<number>, only ``n<number>.txt`` exists.

    The writer's pid in the content makes every object of every attempt new.
    """
    writer = os.getpid()
    changes = [
        Change(f"{CRASH_DIR}/n{number}.txt", f"note {number} by {writer}\n".encode()),
        Change(SHARED, f"v{number} by {writer}\n".encode()),
        Change(f"{CRASH_DIR}/n{number - 1}.txt", None),
    ]
    if ghost:  # committed "as it is in the working tree", but missing: the write fails
        changes.append(Change(f"{CRASH_DIR}/ghost.txt", b"ghost\n", from_worktree=True))
    return changes


def next_state(repo: GitRepo, *, stage: bool = False, ghost: bool = False) -> None:
    def plan(snap: Snapshot) -> Plan:
        number = state_number(snap) + 1
        return Plan(state_changes(number, ghost=ghost), f"hive: crash state {number}")

    repo.transact(plan, author=AUTHOR, stage_only=stage)


def run_killed(root: Path, point: str | None, write: Callable[[str], None]) -> bool:
    """Run ``write`` in a forked child that dies at ``point``; True when it was killed."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 0
        try:
            if point is not None:
                os.environ["HIVE_TEST_KILL_AT"] = point
            write(str(root))
        except BaseException:
            code = 1
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    return os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL


def write_state(root: str) -> None:
    next_state(GitRepo.discover(root))


def stage_state(root: str) -> None:
    next_state(GitRepo.discover(root), stage=True)


def failing_write(root: str) -> None:
    next_state(GitRepo.discover(root), ghost=True)


# ----------------------------------------------------------------- the checks


@dataclass
class Scene:
    root: Path
    round: int = 0
    recovered: int = 0

    def git(self, *args: str) -> str:
        return git(self.root, *args)

    def head(self) -> str:
        return self.git("rev-parse", "HEAD").strip()

    def head_state(self) -> int:
        return int(self.git("show", f"HEAD:{SHARED}").split()[0][1:])

    def stage_user_work(self) -> None:
        (self.root / STAGED_FILE).write_text(f"staged {self.round}\n")
        self.git("add", STAGED_FILE)

    def next_command(self) -> list[str]:
        """What every hive command does first: open the repository (recovery runs)."""
        notes = Workspace(str(self.root), actor="alice").git.recovered
        self.recovered += bool(notes)
        return notes

    def check(self, *, staged_hive: list[str] | None = None) -> None:
        """git's view after recovery; the write's own wholeness is checked by callers."""
        fsck = subprocess.run(
            ["git", "-C", str(self.root), "fsck", "--strict", "--no-dangling"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert fsck.returncode == 0 and fsck.stderr == "", fsck.stderr
        expected = {f"M  {STAGED_FILE}", f" M {UNSTAGED_FILE}", *(staged_hive or [])}
        status = set(self.git("status", "--porcelain", "--untracked-files=all").splitlines())
        assert status == expected
        assert self.git("show", f":{STAGED_FILE}") == f"staged {self.round}\n"
        assert (self.root / UNSTAGED_FILE).read_text() == "unstaged work\n"
        assert debris(self.root) == []

    def commit_unrelated(self) -> None:
        """An ordinary commit after recovery must not carry (revert) any hive file."""
        (self.root / "unrelated.txt").write_text(f"round {self.round}\n")
        self.git("add", "unrelated.txt")
        self.git("commit", "-q", "-m", f"user commit {self.round}")
        files = self.git("show", "--name-only", "--format=", "HEAD").split()
        assert sorted(files) == ["unrelated.txt", STAGED_FILE]
        self.round += 1
        self.stage_user_work()


def debris(root: Path) -> list[str]:
    """Locks, intents and temporary files anywhere in the repository."""
    found = []
    for directory, _, files in os.walk(root):
        relative = os.path.relpath(directory, root)
        if relative == os.path.join(".git", "hive"):
            continue  # hive's own OS lock files (write.lock) live there for good
        for name in files:
            if (
                name.endswith(".lock")
                or name.startswith("tmp_obj_")
                or ".hive-tmp-" in name
                or name in (TWIN, INTENT)
            ):
                found.append(os.path.join(relative, name))
    return found


@pytest.fixture(scope="module")
def scene_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """What ``scene`` copies: made once per module."""
    with isolated_env(tmp_path_factory):
        root = make_repo(tmp_path_factory.mktemp("template") / "repo")
        # git's own auto gc (the user's commits between kills) runs inside `git commit`,
        # not detached: a background gc's .git/gc.log.lock is not a dead hive's debris
        git(root, "config", "gc.autoDetach", "false")
        (root / "user").mkdir()
        (root / STAGED_FILE).write_text("base\n")
        (root / UNSTAGED_FILE).write_text("base\n")
        git(root, "add", "user")
        git(root, "commit", "-q", "-m", "user files")
        init_hive(Workspace(str(root), actor="alice"), prefix="hv")
        next_state(GitRepo.discover(str(root)))  # state 0
        (root / UNSTAGED_FILE).write_text("unstaged work\n")
        Scene(root).stage_user_work()
    return root


@pytest.fixture
def scene(scene_template: Path, tmp_path: Path) -> Iterator[Scene]:
    """Crash state 0 committed by hive, the user's work staged and unstaged (a copy of
    one made once per module)."""
    yield Scene(copy_repo(scene_template, tmp_path / "repo"))


def whole_state(scene: Scene) -> int:
    """The state HEAD holds, checked to be whole: shared.txt says v<number> and the crash
    files are exactly it and n<number>.txt (one ``git show`` of the file and the folder)."""
    shown = scene.git("show", f"HEAD:{SHARED}", f"HEAD:{CRASH_DIR}/")
    content, folder, listing = shown.partition(f"tree HEAD:{CRASH_DIR}/\n\n")
    assert folder, shown
    number = int(content.split()[0][1:])
    assert sorted(listing.split()) == sorted(["shared.txt", f"n{number}.txt"])
    return number


def check_state_whole(scene: Scene, number: int) -> None:
    """HEAD holds exactly state ``number`` of the crash files."""
    assert whole_state(scene) == number


# ----------------------------------------------------------------- named points


COMMIT_POINTS = [
    "before-index-lock",
    "index-lock-twin",
    "after-index-lock",
    "object-tmp",
    "object-tmp@5",
    "object-tmp@6",
    "after-objects",
    "mid-intent",
    "after-intent",
    "ref-locked",
    "after-ref-swap",
    "after-reflog",
    "worktree-tmp",
    "worktree-tmp@2",
    "mid-worktree",
    "mid-worktree@2",
    "mid-worktree@3",
    "index-written",
    "after-index",
    "after-intent-cleared",
]


def test_every_point_is_listed_and_exercised() -> None:
    named = {point.partition("@")[0] for point in COMMIT_POINTS} | {"rollback-ref"}
    assert named == set(POINTS)


def test_a_write_killed_at_each_point_is_finished_or_undone(scene: Scene) -> None:
    before = scene.head_state()  # then carried: the user's commits never change it
    for repeat in range(2):
        for point in COMMIT_POINTS:
            assert run_killed(scene.root, point, write_state), f"{point} was never reached"
            notes = scene.next_command()
            committed = point.partition("@")[0] in AFTER_COMMIT_POINT
            if point in QUIET_POINTS:
                assert notes == []  # nothing a user could see was left (the twin goes quietly)
            else:
                assert len(notes) == 1 and notes[0].startswith("recovered an interrupted write")
                assert ("finished commit" in notes[0]) == committed, (point, notes)
            before += committed
            check_state_whole(scene, before)
            scene.check()
            if repeat == 0:  # the next hive write works at once (it failed with exit 6)
                next_state(GitRepo.discover(str(scene.root)))
                before += 1
                check_state_whole(scene, before)
            scene.commit_unrelated()
    assert scene.recovered == 2 * (len(COMMIT_POINTS) - len(QUIET_POINTS))


@pytest.mark.parametrize(
    "operation",
    ["create", "update", "close"],
)
def test_cell_operations_killed_around_the_commit_point(scene: Scene, operation: str) -> None:
    ws = Workspace(str(scene.root), actor="alice")
    target = create_cell(ws, title="the target").id
    scene.commit_unrelated()

    def write(root: str) -> None:
        child = Workspace(root, actor="alice")
        if operation == "create":
            create_cell(child, title="created while killed")
        elif operation == "update":
            update_cell(child, cell_id=target, priority=0, append_notes="more")
        else:
            close_cell(child, cell_id=target, reason="done")

    for point in ["after-intent", "ref-locked", "after-reflog", "mid-worktree", "index-written"]:
        head = scene.head()
        assert run_killed(scene.root, point, write), point
        scene.next_command()
        moved = scene.head() != head
        assert moved == (point in AFTER_COMMIT_POINT), point
        if moved:
            assert scene.git("rev-parse", "HEAD~1").strip() == head
            if operation != "create":
                text = scene.git("show", f"HEAD:{cell_path(target)}")
                assert ("priority: 0" in text) if operation == "update" else ("closed" in text)
                # restore the target for the next round
                update_cell(Workspace(str(scene.root)), cell_id=target, status="open", priority=2)
        scene.check()
        scene.commit_unrelated()


def test_a_failing_write_killed_while_rolling_back_is_undone(scene: Scene) -> None:
    for _ in range(3):
        before = scene.head_state()
        head = scene.head()
        assert run_killed(scene.root, "rollback-ref", failing_write)
        notes = scene.next_command()
        assert "had not been made" in notes[0] and "put back" in notes[0], notes
        assert scene.head() == head
        check_state_whole(scene, before)
        scene.check()
        scene.commit_unrelated()


STAGE_POINTS = [
    "before-index-lock",
    "after-index-lock",
    "object-tmp",
    "mid-intent",
    "after-intent",
    "worktree-tmp",
    "mid-worktree",
    "mid-worktree@2",
    "index-written",
    "after-index",
    "after-intent-cleared",
]
# Staging mode has no ref: once its intent is recorded, the write is finished.
STAGE_FINISHED = {
    "after-intent",
    "worktree-tmp",
    "mid-worktree",
    "index-written",
    "after-index",
    "after-intent-cleared",
}


def test_a_staging_write_killed_at_each_point_is_finished_or_undone(scene: Scene) -> None:
    for point in STAGE_POINTS:
        before = scene.head_state()
        assert run_killed(scene.root, point, stage_state), point
        scene.next_command()
        finished = point.partition("@")[0] in STAGE_FINISHED
        staged = [
            f"A  {CRASH_DIR}/n{before + 1}.txt",
            f"M  {SHARED}",
            f"D  {CRASH_DIR}/n{before}.txt",
        ]
        scene.check(staged_hive=staged if finished else [])
        if finished:  # the user's next commit carries the staged change, whole
            scene.git("commit", "-q", "-m", "with the staged hive change")
            check_state_whole(scene, before + 1)
            scene.round += 1
            scene.stage_user_work()
        else:
            scene.commit_unrelated()


# ----------------------------------------------------------------- random timing


RANDOM_KILLS = 48
# A fresh repository (a copy of the scene's) every this many kills: each check's git fsck
# reads every loose object, so in one repository it cost more the more kills it had seen.
KILLS_PER_REPOSITORY = 12


def test_writes_killed_at_random_moments(
    scene: Scene, scene_template: Path, tmp_path: Path
) -> None:
    chance = random.Random(8)
    recovered = 0
    before = scene.head_state()  # then carried: the user's commits never change it
    for kill in range(RANDOM_KILLS):
        if kill and kill % KILLS_PER_REPOSITORY == 0:
            recovered += scene.recovered
            scene = Scene(copy_repo(scene_template, tmp_path / f"repo{kill}"))
            before = scene.head_state()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # pragma: no cover - the child: write until killed
            os.close(read_end)
            repo = GitRepo.discover(str(scene.root))
            os.write(write_end, b"!")
            try:
                while True:
                    next_state(repo)
            finally:
                os._exit(1)
        os.close(write_end)
        os.read(read_end, 1)
        os.close(read_end)
        time.sleep(chance.uniform(0.0, 0.05))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        scene.next_command()
        now = whole_state(scene)
        assert now >= before
        before = now
        scene.check()
        scene.commit_unrelated()
    recovered += scene.recovered
    print(f"{recovered} of {RANDOM_KILLS} random kills left a write to finish or undo")
    assert recovered >= RANDOM_KILLS // 4  # most kills land inside a write


# ----------------------------------------------------------------- surfaces


def hive_cli(root: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A hive command: a real (forked) process when it is to be killed, else in this one."""
    argv = ["-C", str(root), *args]
    if "HIVE_TEST_KILL_AT" not in env:
        return run_hive(argv, env={**os.environ, **env}, module="hive.cli.main")
    process = fork_hive(argv, env={**os.environ, **env}, module="hive.cli.main")
    out, err = process.communicate(timeout=120)
    return subprocess.CompletedProcess(argv, process.wait(), out, err)


def test_the_next_cli_command_recovers_and_says_so(scene: Scene) -> None:
    killed = hive_cli(scene.root, "create", "killed mid-write", HIVE_TEST_KILL_AT="after-reflog")
    assert killed.returncode == -signal.SIGKILL
    assert (scene.root / ".git" / "index.lock").exists()  # what used to need a human
    head = scene.head()
    shown = hive_cli(scene.root, "list", "--json")
    assert shown.returncode == 0, shown.stderr
    lines = shown.stderr.splitlines()
    assert len(lines) == 1, lines
    assert lines[0].startswith("hive: recovered an interrupted write (hive process ")
    assert "removed its .git/index.lock" in lines[0]
    assert f"finished commit {head[:10]}" in lines[0]
    assert "killed mid-write" in shown.stdout
    scene.check()
    scene.commit_unrelated()
    again = hive_cli(scene.root, "list", "--json")
    assert again.stderr == ""


@pytest.mark.parametrize("how", ["plain", "all", "paths", "aborted", "bypassed"])
def test_the_pre_commit_hook_finishes_the_write_before_git_commits(scene: Scene, how: str) -> None:
    """Whatever the commit, and even with HIVE_BYPASS=1 (which skips the check, not
    the recovery: the commit must not revert hive's write)."""
    install_hook(Workspace(str(scene.root)))
    before = scene.head_state()
    assert run_killed(scene.root, "after-reflog", write_state)  # the index is behind HEAD
    hive_head = scene.head()
    os.remove(scene.root / ".git" / "index.lock")  # as a user following git's advice would
    (scene.root / "unrelated.txt").write_text("user's change\n")
    env = {**os.environ, "HIVE_BYPASS": "1"} if how == "bypassed" else None
    if how in ("plain", "bypassed"):
        scene.git("add", "unrelated.txt")
        args = ["commit", "-q", "-m", how]
    elif how == "all":
        scene.git("add", "unrelated.txt")
        args = ["commit", "-q", "-a", "-m", "all"]
    elif how == "paths":
        scene.git("add", "unrelated.txt")
        args = ["commit", "-q", "-m", "paths", "--", "unrelated.txt"]
    else:
        scene.git("add", "unrelated.txt")
        args = ["commit", "-q", "-a", "-F", os.devnull]  # empty message: git aborts
    result = subprocess.run(
        ["git", "-C", str(scene.root), *args], capture_output=True, text=True, check=False, env=env
    )
    assert "hive: recovered an interrupted write" in result.stderr
    if how == "aborted":  # .git/index was finished too: a later commit is right
        assert result.returncode != 0
        assert scene.head() == hive_head
        assert scene.git("diff", "--cached", "--name-only", "--", ".hive") == ""
        scene.git("commit", "-q", "-m", "after the abort")
    else:
        assert result.returncode == 0, result.stderr
    assert scene.git("rev-parse", "HEAD~1").strip() == hive_head
    files = scene.git("show", "--name-only", "--format=", "HEAD").split()
    assert not [name for name in files if name.startswith(".hive/")], files
    check_state_whole(scene, before + 1)
    status = scene.git("status", "--porcelain", "--", ".hive")
    assert status == ""
    assert scene.git("diff", "--cached", "--name-only", "--", ".hive") == ""
    assert debris(scene.root) == []


def test_a_write_a_hookless_commit_undid_is_named_with_the_way_back(scene: Scene) -> None:
    """Without the pre-commit hook, a user who removes the dead write's index.lock by
    hand (as git advises) and commits reverts hive's write; the next hive command
    cannot undo that commit, but it names the files and how to bring the write back."""
    killed = hive_cli(scene.root, "create", "undone by git", HIVE_TEST_KILL_AT="after-reflog")
    assert killed.returncode == -signal.SIGKILL
    hive_head = scene.head()
    made = scene.git("show", "--name-only", "--format=", "HEAD").split()
    assert len(made) == 1 and made[0].startswith(".hive/cells/")
    os.remove(scene.root / ".git" / "index.lock")
    (scene.root / "unrelated.txt").write_text("user's change\n")
    scene.git("add", "unrelated.txt")
    scene.git("commit", "-q", "-m", "plain commit, no hook")
    committed = scene.git("show", "--name-only", "--format=", "HEAD").split()
    assert made[0] in committed  # the stale index committed the cell's removal
    shown = hive_cli(scene.root, "list", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "undone by git" not in shown.stdout  # HEAD is what git holds
    way_back = f"git checkout {hive_head[:10]} -- {made[0]} && git commit"
    assert f"HEAD has undone its change to {made[0]}" in shown.stderr
    assert shown.stderr.rstrip().endswith(way_back), shown.stderr
    scene.git("checkout", hive_head[:10], "--", made[0])
    scene.git("commit", "-q", "-m", "the cell back")
    assert "undone by git" in hive_cli(scene.root, "list", "--json").stdout
    assert debris(scene.root) == []


# ----------------------------------------------------------------- locks of others


def test_a_lock_a_live_git_process_holds_is_never_removed(
    scene: Scene, monkeypatch: pytest.MonkeyPatch
) -> None:
    # how long recovery waits for git's lock before it gives up is not the point here
    monkeypatch.setattr(recovery, "RECOVERY_INDEX_WAIT", 0.1)
    assert run_killed(scene.root, "after-reflog", write_state)
    lock = scene.root / ".git" / "index.lock"
    os.remove(lock)
    lock.write_bytes(b"git's own lock")  # another git process took the index meanwhile
    notes = scene.next_command()
    assert notes and "could not recover" in notes[0] and "index.lock" in notes[0]
    assert lock.read_bytes() == b"git's own lock"
    with pytest.raises(LockTimeout, match="cannot be finished"):
        next_state(GitRepo.discover(str(scene.root)))
    assert lock.read_bytes() == b"git's own lock"
    lock.unlink()  # that git process is done
    notes = scene.next_command()
    assert "finished commit" in notes[0]
    scene.check()


def test_no_recovery_while_the_writer_is_alive(scene: Scene) -> None:
    """A live writer's twin, intent and index.lock are left alone: it holds hive's lock."""
    repo = GitRepo.discover(str(scene.root))
    head = scene.head()
    probe = (
        "import sys\n"
        "from hive.git.refs import discover\n"
        "from hive.git.recovery import recover\n"
        "print(recover(discover(sys.argv[1]), wait=0.2))\n"
    )
    with repo.write_lock(5.0), repo._index_lock(5.0) as index:
        index.keep_twin = True
        write_intent(repo.paths, Intent(ref="refs/heads/main", old=head, new=head, changes=()))
        result = subprocess.run(
            [sys.executable, "-c", probe, str(scene.root)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert result.stdout.strip() == "[]"
        assert (scene.root / ".git" / "index.lock").exists()
        assert (scene.root / ".git" / INTENT).exists()
        clear_intent(repo.paths)
        index.keep_twin = False
    scene.check()


def test_a_stale_ref_lock_from_a_dead_mail_writer_is_recovered(scene: Scene) -> None:
    ws = Workspace(str(scene.root), actor="Alice")
    mail_init(ws, agent_name="Alice")

    def send(root: str) -> None:
        child = Workspace(root, actor="Alice")
        send_message(child, to=["Alice"], subject="s", body="b")

    assert run_killed(scene.root, "ref-locked", send)
    assert (scene.root / ".git" / "refs" / "hive" / "mail.lock").exists()
    send_message(ws, to=["Alice"], subject="after", body="b")  # LockTimeout before
    assert not (scene.root / ".git" / "refs" / "hive" / "mail.lock").exists()
    assert [p for p in debris(scene.root) if "refs" in p] == []


def test_recovery_in_a_linked_worktree_is_per_worktree(scene: Scene, tmp_path: Path) -> None:
    scene.git("worktree", "add", "-q", "-b", "side", str(tmp_path / "wt"))
    side = Scene(tmp_path / "wt")
    (side.root / UNSTAGED_FILE).write_text("unstaged work\n")
    side.round = scene.round
    side.stage_user_work()
    assert run_killed(side.root, "after-reflog", write_state)
    assert scene.next_command() == []  # the main worktree has nothing to recover
    assert "finished commit" in side.next_command()[0]
    side.check()
    side.commit_unrelated()
    scene.check()


def test_the_check_is_cheap_and_dulwich_free(scene: Scene) -> None:
    code = (
        "import sys, time\n"
        "from hive.git.refs import discover\n"
        "from hive.git.recovery import recover\n"
        "paths = discover(sys.argv[1])\n"
        "start = time.perf_counter()\n"
        "for _ in range(1000): recover(paths)\n"
        "print((time.perf_counter() - start) / 1000, 'dulwich' in sys.modules)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, str(scene.root)], capture_output=True, text=True, check=True
    )
    seconds, dulwich = result.stdout.split()
    assert dulwich == "False"
    assert float(seconds) < 0.0005


def test_owner_tags_tell_dead_processes_from_live_ones() -> None:
    assert owner_alive(owner_tag())
    assert owner_alive("not-a-tag")  # unknown: never treated as dead
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert not owner_alive(f"{child.pid}-1")
    pid = os.fork()
    if pid == 0:  # pragma: no cover
        os._exit(0)
    if os.path.isdir("/proc/self"):  # a zombie until reaped: it holds nothing any more
        deadline = time.monotonic() + 60  # a state waited for, as on a loaded machine
        while b") Z " not in Path(f"/proc/{pid}/stat").read_bytes():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert not owner_alive(f"{pid}-0")
    os.waitpid(pid, 0)
    assert not owner_alive(f"{pid}-0")
