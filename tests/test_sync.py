"""hive sync between clones of a bare repository on disk (real git remotes)."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import (
    close_cell,
    create_cell,
    delete_cell,
    list_cells,
    show_cell,
    update_cell,
)
from hive.domain.contest import yielded_reservations
from hive.domain.identity import mail_init
from hive.domain.mail import inbox, send_message
from hive.domain.precommit import check_staged
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.reservecore import reservation_path
from hive.domain.setup import init_hive
from hive.domain.sync import sync
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.git.remote import STATE_REF
from hive.store.layout import cell_path
from tests.conftest import (
    GIT_ENV,
    agent_env,
    assert_clean,
    copy_repo,
    git,
    isolated_env,
    make_repo,
)
from tests.inprocess import fork_call, fork_hive, fork_on_terminal, run_hive
from tests.templates import without_sample_hooks


class Clones:
    """A bare ``origin`` and clones of it, each with hive initialised."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.origin = root / "origin.git"
        git(root, "init", "-q", "--bare", "-b", "main", str(self.origin))
        without_sample_hooks(self.origin)
        first = without_sample_hooks(make_repo(root / "a"))
        git(first, "remote", "add", "origin", str(self.origin))
        init_hive(Workspace(str(first), actor="alice"))
        git(first, "push", "-q", "origin", "main")
        self.paths = {"a": first}

    def clone(self, name: str) -> Path:
        path = self.root / name
        git(self.root, "clone", "-q", str(self.origin), str(path))
        without_sample_hooks(path)
        git(path, "config", "user.name", f"User {name}")
        git(path, "config", "user.email", f"{name}@example.com")
        init_hive(Workspace(str(path)))
        self.paths[name] = path
        return path

    def ws(self, name: str, actor: str | None = None) -> Workspace:
        return Workspace(str(self.paths[name]), actor=actor or f"agent-{name}")

    def sync(self, name: str, **kwargs: Any) -> Any:
        return sync(self.ws(name), remote="origin", **kwargs)

    def hive_files(self, name: str) -> str:
        return git(self.paths[name], "ls-tree", "-r", "HEAD", ".hive")


@pytest.fixture(scope="module")
def built_clones(tmp_path_factory: pytest.TempPathFactory) -> Clones:
    with isolated_env(tmp_path_factory):
        made = Clones(tmp_path_factory.mktemp("clones"))
        made.clone("b")
        return made


@pytest.fixture
def clones(built_clones: Clones, tmp_path: Path) -> Clones:
    """``origin`` and clones ``a`` and ``b``: a copy of ones made once for the module,
    the clones' remote pointed at the copied ``origin`` (the URL ``git remote set-url``
    would write, written in the copied config: two git processes a test less)."""
    made = object.__new__(Clones)
    made.root, made.origin, made.paths = tmp_path, tmp_path / "origin.git", {}
    shutil.copytree(built_clones.origin, made.origin, symlinks=True)
    for name, path in built_clones.paths.items():
        made.paths[name] = copy_repo(path, tmp_path / name)
        config = made.paths[name] / ".git" / "config"
        url = f"\turl = {built_clones.origin}\n"
        assert config.read_text().count(url) == 1
        config.write_text(config.read_text().replace(url, f"\turl = {made.origin}\n"))
    return made


def converge(clones: Clones, *names: str) -> None:
    """Sync every clone twice round, then check they hold identical hive files."""
    for _ in range(2):
        for name in names:
            clones.sync(name)
    trees = {clones.hive_files(name) for name in names}
    assert len(trees) == 1, "clones did not converge"


def test_edits_to_different_fields_of_one_cell_both_arrive(clones: Clones) -> None:
    cell = create_cell(clones.ws("a"), title="Shared", labels=["x"])
    clones.sync("a")
    clones.sync("b")
    update_cell(clones.ws("a"), cell_id=cell.id, title="Renamed in a")
    update_cell(clones.ws("b"), cell_id=cell.id, priority=0, add_labels=["from-b"])
    converge(clones, "a", "b")
    for name in ("a", "b"):
        merged = show_cell(clones.ws(name), cell_id=cell.id)
        assert (merged.title, merged.priority, merged.labels) == (
            "Renamed in a",
            0,
            ["x", "from-b"],
        )
        assert merged.conflicts == []
        assert_clean(clones.paths[name])


def test_stale_local_state_never_overwrites_newer_remote_state(clones: Clones) -> None:
    cell = create_cell(clones.ws("a"), title="Original", description="old")
    clones.sync("a")
    clones.sync("b")
    update_cell(clones.ws("a"), cell_id=cell.id, description="new from a")
    clones.sync("a")
    time.sleep(0.01)
    update_cell(clones.ws("b"), cell_id=cell.id, append_notes="b's later note")  # later updated_at
    result = clones.sync("b")
    merged = show_cell(clones.ws("b"), cell_id=cell.id)
    assert merged.description == "new from a" and merged.notes == "b's later note"
    assert result.received_cells == 1


def test_close_vs_edit(clones: Clones) -> None:
    cell = create_cell(clones.ws("a"), title="Close me")
    converge(clones, "a", "b")
    update_cell(clones.ws("b"), cell_id=cell.id, description="edited offline", status="in_progress")
    close_cell(clones.ws("a"), cell_id=cell.id, reason="done in a")
    converge(clones, "b", "a")
    for name in ("a", "b"):
        merged = show_cell(clones.ws(name), cell_id=cell.id)
        assert merged.status == "closed" and merged.close_reason == "done in a"
        assert merged.description == "edited offline"


def test_delete_vs_edit(clones: Clones) -> None:
    cell = create_cell(clones.ws("a"), title="Delete me")
    converge(clones, "a", "b")
    delete_cell(clones.ws("a"), cell_id=cell.id)
    update_cell(clones.ws("b"), cell_id=cell.id, priority=1)
    converge(clones, "a", "b")
    for name in ("a", "b"):
        assert show_cell(clones.ws(name), cell_id=cell.id).is_deleted
        assert cell.id not in {c.id for c in list_cells(clones.ws(name))}


def test_500_offline_creates_on_each_side_all_arrive(clones: Clones) -> None:
    made: dict[str, set[str]] = {}
    for name in ("a", "b"):
        ws = clones.ws(name)
        made[name] = {create_cell(ws, title=f"{name} {n}").id for n in range(500)}
    assert not made["a"] & made["b"]
    converge(clones, "a", "b")
    for name in ("a", "b"):
        ids = {c.id for c in list_cells(clones.ws(name), status="all")}
        assert ids == made["a"] | made["b"]
        assert_clean(clones.paths[name])


def test_mail_sent_on_both_sides_arrives_once(clones: Clones) -> None:
    for name, agent in (("a", "Alpha"), ("b", "Beta")):
        mail_init(clones.ws(name, agent), agent_name=agent)
    converge(clones, "a", "b")
    send_message(clones.ws("a", "Alpha"), to=["Beta"], subject="from a", body="1")
    send_message(clones.ws("b", "Beta"), to=["Alpha"], subject="from b", body="2")
    send_message(clones.ws("b", "Beta"), to=["Beta"], subject="note to self", body="3")
    clones.sync("b")
    result = clones.sync("a")
    assert result.mail_received == 2
    converge(clones, "a", "b")
    for name in ("a", "b"):
        beta = [m.subject for m in inbox(clones.ws(name, "Beta"), limit=5)]
        assert sorted(beta) == ["from a", "note to self"]
        assert [m.subject for m in inbox(clones.ws(name, "Alpha"), limit=5)] == ["from b"]
    ids = {name: {m.id for m in inbox(clones.ws(name, "Beta"), limit=5)} for name in ("a", "b")}
    assert ids["a"] == ids["b"]


def test_mail_travels_with_a_plain_git_fetch_and_push(clones: Clones) -> None:
    """With the refspecs hive init sets, plain git push/fetch carry the mail log: the
    next send joins what the fetch brought (so it knows agents registered elsewhere and
    the push is a fast-forward), and the next inbox shows it, library and CLI alike."""
    a, b = clones.paths["a"], clones.paths["b"]
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    mail_init(clones.ws("b", "Beta"), agent_name="Beta")
    git(b, "push", "-q")
    git(a, "fetch", "-q")
    send_message(clones.ws("a", "Alpha"), to=["Beta"], subject="over git", body="1")
    git(a, "push", "-q")
    pushed = git(a, "ls-remote", "origin", "refs/hive/mail").split()[0]
    assert pushed == git(a, "rev-parse", "refs/hive/mail").strip()
    git(b, "fetch", "-q")
    assert [m.subject for m in inbox(clones.ws("b", "Beta"), limit=5)] == ["over git"]
    send_message(clones.ws("a", "Alpha"), to=["Beta"], subject="second", body="2")
    git(a, "push", "-q")
    git(b, "fetch", "-q")
    git(b, "pack-refs", "--all")  # the fetched log's ref read from packed-refs
    shown = run_hive(["--json", "mail", "inbox"], cwd=b, env=agent_env(b, "Beta"))
    assert shown.returncode == 0, shown.stderr
    assert [m["subject"] for m in json.loads(shown.stdout)] == ["second", "over git"]
    assert git(b, "status", "--porcelain") == ""


def test_a_fetched_ref_that_is_no_mail_log_does_not_stop_mail(clones: Clones) -> None:
    """A remote's refs/hive/mail that is no commit (junk fetched into
    refs/hive-remotes/bad/mail) is passed over by the reads and sends that join fetched
    logs: it stopped every inbox and send (exit 8) even after the remote was removed."""
    b = clones.paths["b"]
    mail_init(clones.ws("b", "Beta"), agent_name="Beta")
    (b / "junk.txt").write_text("junk\n")
    junk = git(b, "hash-object", "-w", "junk.txt").strip()
    (b / "junk.txt").unlink()
    git(b, "update-ref", "refs/hive-remotes/bad/mail", junk)
    send_message(clones.ws("b", "Beta"), to=["Beta"], subject="still here", body="1")
    assert [m.subject for m in inbox(clones.ws("b", "Beta"), limit=5)] == ["still here"]
    shown = run_hive(["--json", "mail", "inbox"], cwd=b, env=agent_env(b, "Beta"))
    assert shown.returncode == 0, shown.stderr
    assert [m["subject"] for m in json.loads(shown.stdout)] == ["still here"]


def _overlapping_grants(clones: Clones) -> None:
    """alice's ``src/**`` in clone a, then bob's ``src/app.py`` in clone b (not synced)."""
    mail_init(clones.ws("a", "alice"), agent_name="alice")
    mail_init(clones.ws("b", "bob"), agent_name="bob")
    converge(clones, "a", "b")
    reserve(clones.ws("a", "alice"), paths=["src/**"], ttl_seconds=3600)
    time.sleep(0.01)
    reserve(clones.ws("b", "bob"), paths=["src/app.py"], ttl_seconds=3600)


def test_overlapping_reservations_are_settled_the_same_way_on_both_sides(
    clones: Clones,
) -> None:
    from hive.domain.history import claim_breaches

    _overlapping_grants(clones)
    first = clones.sync("a")
    assert first.contested == []  # a has not seen bob's yet (b has not synced)
    result = clones.sync("b")
    assert [(c.kept.agent, c.yielded.agent) for c in result.contested] == [("alice", "bob")]
    converge(clones, "a", "b")
    for name in ("a", "b"):
        ws = clones.ws(name)
        assert [r.agent for r in list_reservations(ws)] == ["alice"]
        assert [
            (r.agent, r.yielded_to and r.yielded_to.holder) for r in yielded_reservations(ws)
        ] == [("bob", "alice")]
        assert claim_breaches(ws, limit=50) == []  # the settlement is the sync's
        for agent in ("alice", "bob"):
            notices = [m for m in inbox(clones.ws(name, agent), limit=5) if m.sender == "hive"]
            assert len(notices) == 1, (name, agent)
            assert "src/app.py" in notices[0].subject
    # the rule is enforced: bob's commit of src/app.py is blocked, alice's is not
    b = clones.paths["b"]
    (b / "src").mkdir()
    (b / "src" / "app.py").write_text("print()\n")
    git(b, "add", "src/app.py")
    assert not check_staged(Workspace(str(b)), committer="bob").ok
    assert check_staged(Workspace(str(b)), committer="alice").ok


def test_a_sync_that_brings_another_agent_s_work_is_no_breach(clones: Clones) -> None:
    """The sync commit that brings another clone's agent's claim, close and reservation
    is hive's merge of that clone's state, as a ``git merge`` is: ``hive doctor`` named
    it a ``not-owner`` warning ("changed hv-... (claimed by alice) without an
    override", "changed the reservations of alice") after every ordinary sync."""
    from hive.domain.cells import start_cell
    from hive.domain.history import claim_breaches

    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    reserve(alice, paths=["src/**"], ttl_seconds=3600)
    close_cell(alice, cell_id=cell.id, reason="done")
    clones.sync("a")
    arrived = clones.sync("b")
    assert arrived.commit is not None and arrived.received_cells == 1
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []


def test_a_hand_commit_under_a_sync_trailer_is_a_breach(clones: Clones) -> None:
    """``Hive-Event: sync`` is a trailer anyone can write: a commit made by hand with the
    real ``git commit`` (past the hook) that closes alice's claimed cell under it, naming
    the remote's real state, is a ``not-owner`` warning of ``hive doctor``, also once a
    real sync has recorded its tree on refs/hive/state. The real sync commit before it,
    which merged alice's edit there with bob's comment here, is not."""
    from hive.domain.annotate import add_comment
    from hive.domain.cells import start_cell

    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    update_cell(alice, cell_id=cell.id, priority=0)
    clones.sync("a")
    add_comment(clones.ws("b", "bob"), cell_id=cell.id, text="seen")
    assert clones.sync("b").commit is not None  # alice's priority merged with bob's comment
    b = clones.paths["b"]
    shown = show_cell(clones.ws("b"), cell_id=cell.id)
    assert (shown.priority, [c.text for c in shown.comments]) == (0, ["seen"])
    path = b / cell_path(cell.id)
    path.write_text(path.read_text().replace("status: in_progress", "status: closed"))
    state = git(b, "rev-parse", "refs/hive-remotes/origin/state").strip()
    message = (
        f"hive: sync 1 cell(s) from origin\n\nHive-Cell: {cell.id}\nHive-Agent: bob\n"
        f"Hive-Event: sync\nHive-Sync-State: {state}"
    )
    env = {**os.environ, **GIT_ENV, "GIT_AUTHOR_NAME": "bob", "GIT_AUTHOR_EMAIL": "bob@hive.local"}
    subprocess.run(
        ["git", "-C", str(b), "commit", "-q", "--no-verify", "-am", message], env=env, check=True
    )
    forged = git(b, "rev-parse", "HEAD").strip()
    clones.sync("b")  # sends it: refs/hive/state now records the forged tree
    assert git(b, "rev-parse", f"{STATE_REF}:.hive") == git(b, "rev-parse", "HEAD:.hive")
    doctor = run_hive(["--json", "doctor"], cwd=b)
    warned = [w["message"] for w in json.loads(doctor.stdout)["warnings"]]
    assert [w for w in warned if "claimed by" in w] == [
        f"{forged[:10]} bob changed {cell.id} (claimed by alice) without an override (hive"
        " refuses that; made by hand past the pre-commit hook, or under trailers written"
        " by hand): review it with git show"
    ]


def test_a_push_race_between_two_syncs_retries(clones: Clones) -> None:
    cell = create_cell(clones.ws("a"), title="Raced")
    converge(clones, "a", "b")
    update_cell(clones.ws("a"), cell_id=cell.id, title="a's title")
    update_cell(clones.ws("b"), cell_id=cell.id, priority=4)
    raced: list[str] = []

    def meanwhile(phase: str, done: int, total: int) -> None:
        if phase == "pushing" and not raced:
            raced.append("b")
            clones.sync("b")  # b pushes between a's fetch and a's push

    result = clones.sync("a", progress=meanwhile)
    assert result.attempts == 2
    converge(clones, "a", "b")
    merged = show_cell(clones.ws("b"), cell_id=cell.id)
    assert (merged.title, merged.priority) == ("a's title", 4)


def test_three_clones_converge(clones: Clones) -> None:
    clones.clone("c")
    cell = create_cell(clones.ws("a"), title="Three")
    converge(clones, "a", "b", "c")
    update_cell(clones.ws("a"), cell_id=cell.id, add_labels=["a"])
    update_cell(clones.ws("b"), cell_id=cell.id, add_labels=["b"])
    update_cell(clones.ws("c"), cell_id=cell.id, add_labels=["c"], append_notes="c")
    create_cell(clones.ws("c"), title="only in c")
    converge(clones, "a", "b", "c")
    assert show_cell(clones.ws("a"), cell_id=cell.id).labels == ["a", "b", "c"]


def test_sync_touches_only_hive_files(clones: Clones) -> None:
    b = clones.paths["b"]
    (b / "README.md").write_text("# my unstaged edit\n")
    (b / "staged.txt").write_text("staged\n")
    git(b, "add", "staged.txt")
    (b / "untracked.txt").write_text("mine\n")
    status_before = git(b, "status", "--porcelain")
    create_cell(clones.ws("a"), title="Arrives in b")
    clones.sync("a")
    result = clones.sync("b")
    assert result.commit is not None
    changed = git(b, "show", "--name-only", "--format=", result.commit).split()
    assert changed and all(path.startswith(".hive/") for path in changed)
    assert git(b, "status", "--porcelain") == status_before
    assert (b / "README.md").read_text() == "# my unstaged edit\n"
    assert git(b, "diff", "--cached", "--name-only").split() == ["staged.txt"]


def _many_cells(repo: Path, count: int, *, shards: int = 0) -> None:
    """``count`` cells written as files and committed by git (a creation each would take
    seconds), more if needed until ``shards`` shards of ``.hive/cells`` hold some (ids
    are random: 200 of them left one of the 32 shards empty about one run in 20)."""
    from hive.models import Cell, utc_now
    from hive.store.cells import encode_cell
    from hive.store.ids import new_root_id
    from hive.store.layout import shard_of

    taken: set[str] = set()
    used: set[str] = set()
    number = 0
    while number < count or len(used) < shards:
        cell_id = new_root_id("hv", 6, taken.__contains__)
        taken.add(cell_id)
        used.add(shard_of(cell_id))
        path = repo / cell_path(cell_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        made = utc_now()
        cell = Cell(id=cell_id, title=f"cell {number}", created_at=made, updated_at=made)
        path.write_bytes(encode_cell(cell))
        number += 1
    git(repo, "add", ".hive")
    git(repo, "commit", "-q", "--no-verify", "-m", f"{number} cells")


def test_a_sync_reads_the_trees_of_what_changed_not_every_cell_folder(
    clones: Clones, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync that sends one cell and one that receives it read the folders on the way
    to that cell, whatever the number of cells: before, each listed the whole
    ``.hive`` tree of both sides and of their base (every shard of 32, ~40 ms at 10,000
    cells), and again after its commit."""
    from hive.git.repo import GitRepo
    from hive.store.layout import CELLS_DIR

    _many_cells(clones.paths["a"], 200, shards=32)
    clones.sync("a")
    clones.sync("b")
    shards = git(clones.paths["a"], "ls-tree", "-d", "--name-only", f"HEAD:{CELLS_DIR}")
    assert len(shards.split()) == 32
    read: set[str] = set()
    items = GitRepo.tree_items

    def counted(repo: GitRepo, tree: str) -> dict[bytes, tuple[int, str]]:
        read.add(tree)
        return items(repo, tree)

    monkeypatch.setattr(GitRepo, "tree_items", counted)
    cell = create_cell(clones.ws("a"), title="the one change").id
    for name in ("a", "b"):
        read.clear()
        done = clones.sync(name)
        assert (done.sent_cells, done.received_cells) == ((1, 0) if name == "a" else (0, 1))
        assert len(read) < 16, f"{name}: {len(read)} trees read"
    assert git(clones.paths["b"], "cat-file", "-e", f"HEAD:{cell_path(cell)}") == ""


def test_a_sync_s_fetch_leaves_packing_to_hive_not_to_git_maintenance(
    clones: Clones, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git's fetch starts ``git maintenance run --auto`` after it (``git gc --auto``,
    detached, once there are too many loose objects): a process each sync, and a repack
    in the background beside hive's packer. The sync's fetch runs none; what it brought
    is packed by hive as ``git gc --auto`` would (here a low ``gc.auto``: more than one
    loose object in ``objects/17``), in the sync itself."""
    from tests.test_packing import count_objects, fill_sample_directory

    a, trace = clones.paths["a"], clones.root / "trace.txt"
    create_cell(clones.ws("b"), title="arrives in a")
    clones.sync("b")
    git(a, "config", "gc.auto", "256")
    fill_sample_directory(a, 2)
    monkeypatch.setenv("GIT_TRACE", str(trace))
    monkeypatch.setenv("GIT_CONFIG_COUNT", "0")  # git's default here (tests turn it off)
    assert clones.sync("a").received_cells == 1
    monkeypatch.delenv("GIT_TRACE")
    ran = [
        line.split("built-in: ", 1)[1]
        for line in trace.read_text().splitlines()
        if "built-in: " in line
    ]
    assert any(line.startswith("git fetch") for line in ran)
    assert not [line for line in ran if "maintenance" in line or line.startswith("git gc")]
    assert count_objects(a)["count"] == 0  # the fetched objects and the sample: packed
    assert git(a, "fsck", "--no-dangling", "--no-progress") == ""


def test_the_history_of_a_state_with_a_seen_parent_lists_what_changed(clones: Clones) -> None:
    """A sync that sends a cell edited twice since the last sync names the version in
    between in a seen commit (a parent of the new state). That commit is made on the
    remote state, so ``git log --raw -m`` of the state's history (what the next sync of
    each clone reads, ``syncref.history_blobs``) lists the changes and the seen version;
    made parentless, the state against it listed every hive file as added (10,000
    lines at 10,000 cells)."""
    _many_cells(clones.paths["b"], 40)
    clones.sync("b")
    clones.sync("a")
    before = git(clones.paths["a"], "rev-parse", STATE_REF).strip()
    cell = create_cell(clones.ws("a"), title="edited twice").id
    clones.sync("a")
    update_cell(clones.ws("a"), cell_id=cell, title="once")
    once = git(clones.paths["a"], "rev-parse", f"HEAD:{cell_path(cell)}").strip()
    update_cell(clones.ws("a"), cell_id=cell, title="twice")
    clones.sync("a")
    state = git(clones.origin, "rev-parse", STATE_REF).strip()
    parents = git(clones.origin, "rev-list", "--parents", "-1", state).split()[1:]
    listed = {sha: git(clones.origin, "ls-tree", "--name-only", sha, ".hive/") for sha in parents}
    (seen,) = [sha for sha, names in listed.items() if ".hive/seen" in names.split()]
    assert git(clones.origin, "ls-tree", "--name-only", f"{seen}:.hive/seen").split() == [once]
    log = git(
        clones.origin,
        *("log", "--format=%H", "--raw", "--no-abbrev", "--full-history", "-m"),
        *(state, "--not", before, "--", ".hive"),
    )
    changed = {line.split("\t")[1] for line in log.splitlines() if line.startswith(":")}
    assert changed == {cell_path(cell), f".hive/seen/{once}"}, sorted(changed)[:5]
    for name in ("b", "a"):  # and both clones agree
        assert clones.sync(name).unresolved == []
    assert git(clones.paths["b"], "show", f"HEAD:{cell_path(cell)}") == git(
        clones.paths["a"], "show", f"HEAD:{cell_path(cell)}"
    )


def test_plain_git_fetch_and_push_carry_hive_refs(clones: Clones) -> None:
    a, b = clones.paths["a"], clones.paths["b"]
    init_hive(Workspace(str(a)))  # a's remote was added after its first init
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    clones.sync("a")
    create_cell(clones.ws("a"), title="pushed by git push")
    git(a, "push", "-q")  # pushes the branch and refs/hive/*
    remote_refs = git(a, "ls-remote", "origin", "refs/hive/*")
    assert "refs/hive/mail" in remote_refs and "refs/hive/state" in remote_refs
    assert git(a, "rev-parse", "HEAD").strip() in git(a, "ls-remote", "origin", "refs/heads/main")
    git(b, "fetch", "-q")
    assert git(b, "rev-parse", "refs/hive-remotes/origin/mail").strip()
    assert git(b, "config", "--get-all", "remote.origin.push").split() == [
        "HEAD",
        "refs/hive/*:refs/hive/*",
    ]


def test_cli_sync_and_errors(clones: Clones, tmp_path: Path) -> None:
    create_cell(clones.ws("a"), title="via cli")
    result = run_hive(["-C", str(clones.paths["a"]), "sync"], module="hive.cli.main")
    assert result.exit_code == 0, result.output
    assert "synced with origin" in result.output
    result = run_hive(
        ["-C", str(clones.paths["b"]), "sync", "origin", "--json"], module="hive.cli.main"
    )
    assert result.exit_code == 0 and '"received_cells": 1' in result.output
    lonely = make_repo(tmp_path / "lonely")
    init_hive(Workspace(str(lonely)))
    result = run_hive(["-C", str(lonely), "sync"], module="hive.cli.main")
    assert result.exit_code == 8 and "origin" in result.output
    result = run_hive(["-C", str(clones.paths["a"]), "sync", "nowhere"], module="hive.cli.main")
    assert result.exit_code == 8
    assert "from nowhere: 'nowhere' does not appear to be a git repository" in result.output
    with pytest.raises(InvalidInput):
        sync(clones.ws("a"), remote="--upload-pack=evil")
    assert git(clones.paths["a"], "rev-parse", STATE_REF).strip()


def test_a_remote_that_is_not_there_names_the_next_step(clones: Clones, tmp_path: Path) -> None:
    """'origin' does not appear to be a git repository was all a new clone without a
    remote was told, and a mistyped remote name got no list of the real ones."""
    lonely = make_repo(tmp_path / "lonely")
    init_hive(Workspace(str(lonely)))
    for command in (["sync"], ["mail", "sync"]):
        result = run_hive(["-C", str(lonely), *command], module="hive.cli.main")
        assert result.exit_code == 8, result.output
        assert "this clone has no remote yet: add one with 'git remote add origin URL'" in (
            result.stderr
        )
        result = run_hive(["-C", str(clones.paths["a"]), *command, "nowhere"])
        assert result.exit_code == 8
        assert "this clone's remotes: origin (or give a URL)" in result.stderr
    missing = str(tmp_path / "missing.git")
    result = run_hive(["-C", str(clones.paths["a"]), "sync", missing])
    assert result.exit_code == 8 and "remotes" not in result.stderr


def test_git_is_read_in_english_whatever_the_users_language(
    clones: Clones, monkeypatch: pytest.MonkeyPatch
) -> None:
    """hive reads git's messages (a failure's reason, a fetch racing another): git speaks
    the user's language unless told otherwise, so hive runs it with LC_ALL=C."""
    german = subprocess.run(
        ["git", "checkout", "nowhere"],
        cwd=clones.paths["a"],
        capture_output=True,
        text=True,
        env={**os.environ, "LANGUAGE": "de", "LANG": "C.UTF-8"},
        check=False,
    )
    if "Fehler" not in german.stderr:
        pytest.skip("this git has no German messages")
    monkeypatch.setenv("LANGUAGE", "de")
    monkeypatch.setenv("LANG", "C.UTF-8")
    result = run_hive(["-C", str(clones.paths["a"]), "sync", "nowhere"], module="hive.cli.main")
    assert result.exit_code == 8
    assert "from nowhere: 'nowhere' does not appear to be a git repository" in result.output


def test_sync_between_processes(clones: Clones) -> None:
    """Two real ``hive sync`` processes at once (one in each clone): both succeed."""
    import os

    cells = {name: create_cell(clones.ws(name), title=f"proc {name}").id for name in ("a", "b")}
    env = {**os.environ, **GIT_ENV}
    procs = [
        fork_hive(["-C", str(clones.paths[name]), "sync"], env=env, module="hive.cli.main")
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    converge(clones, "a", "b")
    ids = {c.id for c in list_cells(clones.ws("a"))}
    assert set(cells.values()) <= ids


def test_a_fetch_that_finds_its_ref_locked_by_another_fetch_is_tried_again(
    clones: Clones, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two syncs in one clone at once (agents of one repository, or the `git fetch` of a
    killed hive process that ran on): one fetch finds the tracking ref locked by the other
    (git: "cannot lock ref"). The sync fetches again; it failed before."""
    cell = create_cell(clones.ws("b"), title="from b")
    clones.sync("b")  # origin moved: a's fetch has a tracking ref to update
    lock = clones.paths["a"] / ".git" / "refs" / "hive-remotes" / "origin" / "state.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    lock.write_text("")  # the other fetch, updating the ref
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    syncing = fork_call(lambda: clones.sync("a"))
    deadline = time.monotonic() + 60
    while (trace.read_text() if trace.exists() else "").count("built-in: git fetch") < 2:
        assert syncing.poll() is None, syncing.communicate()[1]  # gave up at the first
        assert time.monotonic() < deadline
        time.sleep(0.002)
    lock.unlink()  # the other fetch is done
    _, err = syncing.communicate(timeout=60)
    assert syncing.returncode == 0, err
    assert cell.id in {c.id for c in list_cells(clones.ws("a"))}


def test_a_sync_with_nothing_to_send_makes_no_push(
    clones: Clones, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The refs the fetch found on the remote are not pushed back (one round trip, not
    two); a remote that lost hive's refs gets them again from the next sync."""
    create_cell(clones.ws("a"), title="sent once")
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    clones.sync("a")  # sends both refs
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    result = clones.sync("a")
    assert (result.sent_cells, result.received_cells) == (0, 0)
    assert "built-in: git fetch" in trace.read_text()
    assert "built-in: git push" not in trace.read_text()
    monkeypatch.delenv("GIT_TRACE")
    git(clones.origin, "update-ref", "-d", STATE_REF)
    git(clones.origin, "update-ref", "-d", "refs/hive/mail")
    clones.sync("a")
    for ref in (STATE_REF, "refs/hive/mail"):
        theirs = git(clones.origin, "rev-parse", ref).strip()
        assert theirs == git(clones.paths["a"], "rev-parse", ref).strip()


def test_a_push_url_elsewhere_gets_every_hive_ref(clones: Clones, tmp_path: Path) -> None:
    """Fetching from one repository and pushing to another (a fork): what the fetch
    found says nothing of the push destination, so a sync with nothing new of its own
    still sends hive's refs there."""
    create_cell(clones.ws("a"), title="made upstream")
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    clones.sync("a")
    fork = tmp_path / "fork.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(fork))
    git(clones.paths["b"], "remote", "set-url", "--push", "origin", str(fork))
    clones.sync("b")
    for ref in (STATE_REF, "refs/hive/mail"):
        assert git(fork, "rev-parse", ref).strip() == git(clones.origin, "rev-parse", ref).strip()


def test_mail_sync_does_not_need_a_readable_config(clones: Clones) -> None:
    """A broken committed .hive/config.yaml is refused by the commands that read it, not
    by mail sync (the sync lock and the join of the remote's log wait the default time)."""
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    clones.sync("a")  # the remote has a mail log: b's mail sync joins it
    (clones.paths["b"] / ".hive" / "config.yaml").write_text("version: [1\n")
    git(clones.paths["b"], "commit", "-qam", "a broken config")
    done = run_hive(["-C", str(clones.paths["b"]), "mail", "sync"])
    assert done.returncode == 0, done.stderr
    assert "synced mail with origin" in done.stdout
    mail = "refs/hive/mail"
    assert git(clones.paths["b"], "rev-parse", mail) == git(clones.origin, "rev-parse", mail)


def test_a_release_on_one_clone_reaches_the_other(clones: Clones) -> None:
    from hive.domain.reservations import release

    reserve(clones.ws("a", "alice"), paths=["docs/**"], ttl_seconds=3600)
    clones.sync("a")
    assert clones.sync("b").received_cells == 0  # a reservation file is not a cell file
    assert [r.agent for r in list_reservations(clones.ws("b"))] == ["alice"]
    release(clones.ws("a", "alice"), paths=["docs/**"])
    converge(clones, "a", "b")
    assert list_reservations(clones.ws("b")) == []


@pytest.mark.parametrize(
    ("how", "module"),
    [("ff", "hive"), ("ff", "hive.cli.main"), ("merge", "hive.cli.main")],
    ids=["fast-forward-lean", "fast-forward-full", "merge-full"],
)
def test_ids_a_git_pull_brought_are_never_given_again(
    clones: Clones, how: str, module: str
) -> None:
    """alice on clone a reserves #1 and #2 and releases #2; clone b takes it with a plain
    ``git pull`` (a fast-forward, or a merge that takes alice's file as it is): no merge
    driver runs, so b's sequence was never raised and b's next reservation was #2
    again. Ids in every commit the pull brought count, released ones too (lean and full
    path)."""
    a = clones.ws("a", "alice")
    assert [r.id for r in reserve(a, paths=["src/one.py"], ttl_seconds=3600).granted] == [1]
    assert [r.id for r in reserve(a, paths=["src/two.py"], ttl_seconds=3600).granted] == [2]
    release(a, paths=["src/two.py"])
    git(clones.paths["a"], "push", "-q", "origin", "main")
    b = clones.paths["b"]
    if how == "merge":
        (b / "code.py").write_text("x = 1\n")
        git(b, "add", "code.py")
        git(b, "commit", "-q", "-m", "b's own work")
    git(b, "pull", "-q", "--no-rebase", "--ff" if how == "ff" else "--no-ff", "origin", "main")
    assert ("Merge" in git(b, "log", "-1", "--format=%s")) == (how == "merge")
    reserved = run_hive(["-C", str(b), "reserve", "src/three.py", "--json"], module=module)
    assert reserved.returncode == 0, reserved.stderr
    assert [g["id"] for g in json.loads(reserved.stdout)["granted"]] == [3]
    again = run_hive(["-C", str(b), "reserve", "src/four.py", "--json"], module=module)
    assert [g["id"] for g in json.loads(again.stdout)["granted"]] == [4]


def test_an_id_line_in_a_reason_that_a_git_pull_brought_is_not_an_id(clones: Clones) -> None:
    """A reason of several lines is free text: one line of it reading ``id: 99999`` (a
    block scalar, indented under ``reason:``) is not a reservation's id, so it does not
    raise the sequence of the clone that pulls it (the next id there stays 2, not
    100000: any agent's reason could otherwise push every clone's ids past what a
    JavaScript number holds)."""
    a = clones.ws("a", "alice")
    reason = "first line\nid: 99999\n  - id: 88888"
    granted = reserve(a, paths=["src/one.py"], ttl_seconds=3600, reason=reason).granted
    assert [r.id for r in granted] == [1]
    git(clones.paths["a"], "push", "-q", "origin", "main")
    b = clones.paths["b"]
    git(b, "pull", "-q", "--ff", "origin", "main")
    assert "id: 99999" in git(b, "show", "HEAD:" + reservation_path("alice"))
    reserved = run_hive(["-C", str(b), "reserve", "src/two.py", "--json"])
    assert reserved.returncode == 0, reserved.stderr
    assert [g["id"] for g in json.loads(reserved.stdout)["granted"]] == [2]


def test_doctor_reports_an_overlap_a_git_merge_brought_in(tmp_path: Path) -> None:
    from hive.domain.doctor import diagnose

    repo = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(repo)))
    git(repo, "branch", "other")
    reserve(Workspace(str(repo), actor="alice"), paths=["src/**"])
    git(repo, "checkout", "-q", "other")
    reserve(Workspace(str(repo), actor="bob"), paths=["src/app.py"])
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-edit", "other")
    problems = [p for p in diagnose(Workspace(str(repo))).problems]
    assert [p.kind for p in problems] == ["contested-reservation"]
    assert "alice" in problems[0].message and "hive sync" in problems[0].message


def test_the_project_context_log_merges_across_clones(clones: Clones) -> None:
    from hive.domain.memory import load_context, update_context

    update_context(clones.ws("a"), section="goals", add="shared goal")
    converge(clones, "a", "b")
    update_context(clones.ws("a"), section="decisions", add="from a")
    update_context(clones.ws("b"), section="decisions", add="from b")
    update_context(clones.ws("b"), section="milestones", add="v1")
    clones.sync("a")
    result = clones.sync("b")
    assert result.unresolved == []
    converge(clones, "a", "b")
    for name in ("a", "b"):
        context = load_context(clones.ws(name))
        assert sorted(d["decision"] for d in context.decisions) == ["from a", "from b"]
        assert context.goals == ["shared goal"] and [m["name"] for m in context.milestones] == [
            "v1"
        ]


def test_progress_is_shown_on_a_terminal_only(clones: Clones) -> None:
    """The process boundary is the point: stdout and stderr a terminal, or pipes."""
    create_cell(clones.ws("a"), title="shown")
    command = ["-C", str(clones.paths["a"]), "sync"]
    code, seen = fork_on_terminal(command)  # a process of its own on a pseudo-terminal
    assert code == 0, seen
    assert (
        b"fetching" in seen and b"3/3" in seen and b"\x1b[" in seen
    )  # a bar was drawn, then cleared
    assert b"synced with origin" in seen
    piped = run_hive(command, module="hive.cli.main")  # stdout and stderr are pipes
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and piped.stdout.startswith("synced with origin")


def test_cli_reservations_lists_a_contested_reservation_in_both_clones(clones: Clones) -> None:
    reserve(clones.ws("a", "alice"), paths=["src/**"], ttl_seconds=3600)
    time.sleep(0.01)
    reserve(clones.ws("b", "bob"), paths=["src/app.py"], ttl_seconds=3600)
    clones.sync("a")
    synced = run_hive(["-C", str(clones.paths["b"]), "sync"], module="hive.cli.main")
    assert synced.exit_code == 0, synced.output
    assert "reservation contested: bob's 'src/app.py' yields to alice's 'src/**'" in synced.output
    clones.sync("a")
    for name in ("a", "b"):
        listed = run_hive(["-C", str(clones.paths[name]), "reservations"], module="hive.cli.main")
        assert listed.exit_code == 0, listed.output
        assert "contested across clones: bob's #" in listed.output, (name, listed.output)
        assert "yielded to alice's" in listed.output


def test_cli_init_says_which_remotes_carry_hive_refs(clones: Clones, tmp_path: Path) -> None:
    said = run_hive(["-C", str(clones.paths["b"]), "init"], module="hive.cli.main")
    assert said.exit_code == 0, said.output
    carried = "git fetch/push of origin carry hive's refs (refs/hive/*): unchanged"
    assert carried in said.output  # the clone's first init set them
    lonely = make_repo(tmp_path / "lonely-init")
    said = run_hive(["-C", str(lonely), "init"], module="hive.cli.main")
    assert said.exit_code == 0 and "no git remote yet" in said.output
    git(lonely, "remote", "add", "later", str(clones.origin))
    said = run_hive(["-C", str(lonely), "init"], module="hive.cli.main")
    assert "git fetch/push of later now carry hive's refs" in said.output
    again = run_hive(["-C", str(lonely), "init"], module="hive.cli.main")
    assert "git fetch/push of later carry hive's refs (refs/hive/*): unchanged" in again.output
    assert "+refs/hive/*:refs/hive-remotes/later/*" in git(
        lonely, "config", "--get-all", "remote.later.fetch"
    )


def test_one_read_of_git_config_answers_as_git_does(tmp_path: Path) -> None:
    """``GitConfig`` (one ``git config --list`` for init and sync) gives what ``git config
    --get-all`` gives: case rules of keys, valueless keys, values it added itself."""
    from hive.git.gitconfig import GitConfig, get_all

    repo = make_repo(tmp_path / "repo")
    git(repo, "remote", "add", "Up", "/elsewhere")
    git(repo, "config", "--add", "remote.Up.push", "HEAD")
    (repo / ".git" / "config").write_text(
        (repo / ".git" / "config").read_text() + "[Hive]\n\tFlag\n\tEmpty =\n"
    )
    config = GitConfig(str(repo))
    assert config.remotes() == ["Up"]
    for key in ("remote.Up.push", "REMOTE.Up.PUSH", "remote.up.push", "hive.flag", "hive.empty"):
        assert config.get_all(key) == get_all(str(repo), key), key
    assert config.add_value("remote.Up.push", "refs/hive/*:refs/hive/*")
    assert not config.add_value("Remote.Up.Push", "HEAD")
    assert config.get_all("remote.Up.push") == get_all(str(repo), "remote.Up.push")
    assert config.get_all("remote.Up.push") == ["HEAD", "refs/hive/*:refs/hive/*"]
    assert config.set_value("hive.flag", "on") and not config.set_value("hive.flag", "on")
    assert get_all(str(repo), "hive.flag") == ["on"]


def test_a_fresh_clone_with_an_older_copy_takes_the_newer_state_without_conflicts(
    clones: Clones,
) -> None:
    a = clones.paths["a"]
    cell = create_cell(clones.ws("a"), title="v1", labels=["keep", "drop"])
    clones.sync("a")
    git(a, "push", "-q", "origin", "main")  # the branch carries v1
    update_cell(clones.ws("a"), cell_id=cell.id, title="v2", remove_labels=["drop"])
    clones.sync("a")  # the state carries v2; the branch still has v1
    fresh = clones.clone("c")  # never synced: no common state to merge against
    result = clones.sync("c")
    merged = show_cell(clones.ws("c"), cell_id=cell.id)
    assert (merged.title, merged.labels, merged.conflicts) == ("v2", ["keep"], [])
    assert result.conflicts == [] and result.sent_cells == 0
    # the other way round: the branch is newer than the state (pushed, not synced)
    update_cell(clones.ws("a"), cell_id=cell.id, title="v3", add_labels=["new"])
    git(a, "push", "-q", "origin", "main")
    late = clones.clone("d")  # its branch has v3, the state v2
    clones.sync("d")
    kept = show_cell(clones.ws("d"), cell_id=cell.id)
    assert (kept.title, kept.labels, kept.conflicts) == ("v3", ["keep", "new"], [])
    assert_clean(fresh)
    assert_clean(late)


def test_syncs_in_one_clone_take_turns_while_another_clone_pushes(
    clones: Clones, tmp_path: Path
) -> None:
    """Agents syncing one checkout at once used to give up ("kept moving", 8 tries): each
    fetched and merged, then found refs/hive/state moved by another. Now they take turns
    (the sync lock): no two overlap, every one succeeds while another clone pushes, and
    every cell arrives on both sides."""
    spans = tmp_path / "spans"

    def timed_sync() -> None:
        began: list[float] = []

        def note(phase: str, done: int, total: int) -> None:
            began.append(time.monotonic())
            if phase == "done":  # still inside the lock
                with spans.open("a") as handle:
                    handle.write(f"{began[0]} {began[-1]}\n")

        clones.sync("a", progress=note)

    made: dict[str, list[str]] = {"a": [], "b": []}
    for round_ in range(3):
        for name in ("a", "b"):
            made[name].append(create_cell(clones.ws(name), title=f"{name} {round_}").id)
        syncing = [fork_call(timed_sync) for _ in range(4)]
        clones.sync("b")  # meanwhile, the other clone pushes
        for proc in syncing:
            _, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
        on_origin = git(clones.origin, "ls-tree", "-r", "--name-only", STATE_REF)
        assert all(cid in on_origin for cid in made["a"] + made["b"][:round_])
    turns = sorted(tuple(map(float, line.split())) for line in spans.read_text().splitlines())
    assert len(turns) == 12
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(turns))
    clones.sync("a")
    clones.sync("b")
    everything = set(made["a"] + made["b"])
    for name in ("a", "b"):
        files = clones.hive_files(name)
        assert all(cid in files for cid in everything)
        assert everything <= {c.id for c in list_cells(clones.ws(name))}
        assert_clean(clones.paths[name])


def test_a_sync_killed_holding_the_sync_lock_does_not_block_the_next(
    clones: Clones, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a sync holds the lock another waits HIVE_LOCK_TIMEOUT, then says so (exit 6,
    no traceback); once the holder is killed (SIGKILL) the next sync runs at once."""
    import os
    import signal

    cell = create_cell(clones.ws("b"), title="from b")
    clones.sync("b")
    holding = tmp_path / "holding"

    def hang(phase: str, done: int, total: int) -> None:
        if phase == "merging":
            holding.write_text("fetched")
            time.sleep(120)

    stuck = fork_call(lambda: clones.sync("a", progress=hang))
    try:
        deadline = time.monotonic() + 60
        while not holding.exists():
            assert stuck.poll() is None, stuck.communicate()[1]
            assert time.monotonic() < deadline
            time.sleep(0.005)
        impatient = {**os.environ, "HIVE_LOCK_TIMEOUT": "0.2"}
        for command in (["sync"], ["mail", "sync"]):
            result = run_hive(["-C", str(clones.paths["a"]), *command], env=impatient)
            assert result.exit_code == 6, result.output
            assert "another hive sync held this repository's sync lock for more than 0.2s" in (
                result.output
            )
            assert "Traceback" not in result.output
    finally:
        os.kill(stuck.pid, signal.SIGKILL)
        stuck.wait(60)
    assert stuck.returncode == -signal.SIGKILL
    # the dead holder's lock is taken over, not waited out: well under the 300 s wait,
    # with room for a loaded machine
    monkeypatch.setenv("HIVE_LOCK_TIMEOUT", "300")
    started = time.monotonic()
    result = clones.sync("a")
    assert time.monotonic() - started < 120
    assert result.received_cells == 1
    assert cell.id in {c.id for c in list_cells(clones.ws("a"))}
    assert git(clones.paths["a"], "rev-parse", STATE_REF) == git(
        clones.origin, "rev-parse", STATE_REF
    )
    assert_clean(clones.paths["a"])


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_git_pull_of_a_cell_that_came_by_sync_merges_against_the_synced_version(
    clones: Clones, how: str
) -> None:
    """A cell created in one clone reaches the other by ``hive sync`` (a sync commit on
    each branch, not a shared one), so git's merge base of the two branches predates the
    cell. A later ``git pull`` must still merge against the version both clones had:
    a label removed in one clone stays removed and nothing is a conflict."""
    a, b = clones.paths["a"], clones.paths["b"]
    cell = create_cell(clones.ws("a"), title="Shared", labels=["keep", "drop"])
    clones.sync("a")
    clones.sync("b")
    update_cell(clones.ws("b"), cell_id=cell.id, remove_labels=["drop"])
    update_cell(clones.ws("a"), cell_id=cell.id, priority=1, title="Renamed in a")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", f"--{'no-' if how == 'merge' else ''}rebase", "origin", "main")
    pulled = show_cell(clones.ws("b"), cell_id=cell.id)
    assert (pulled.labels, pulled.priority, pulled.title) == (["keep"], 1, "Renamed in a")
    assert pulled.conflicts == []
    assert_clean(b)


def test_a_sync_after_a_git_pull_merges_against_the_version_both_clones_had(
    clones: Clones,
) -> None:
    """The reverse way round: the cell reached ``b`` by ``git pull`` (so the state ``b``
    last agreed on does not have it) and both clones edited it. The version ``a``
    recorded at its sync and ``b`` pulled is the base: a label removed in ``a`` stays
    removed, ``b``'s title stays, and nothing is a conflict."""
    a, b = clones.paths["a"], clones.paths["b"]
    clones.sync("b")
    cell = create_cell(clones.ws("a"), title="Shared", labels=["keep", "drop"])
    clones.sync("a")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    update_cell(clones.ws("a"), cell_id=cell.id, remove_labels=["drop"], priority=1)
    update_cell(clones.ws("b"), cell_id=cell.id, title="Renamed in b")
    converge(clones, "a", "b")
    for name in ("a", "b"):
        merged = show_cell(clones.ws(name), cell_id=cell.id)
        assert (merged.labels, merged.priority, merged.title) == (["keep"], 1, "Renamed in b")
        assert merged.conflicts == []


def test_a_cell_pulled_by_git_edited_and_synced_is_no_conflict_for_its_author(
    clones: Clones,
) -> None:
    """``a`` creates a cell and pushes its branch (no sync); ``b`` pulls it, edits it and
    syncs. ``b``'s version replaced one ``b`` had (``a``'s), so ``a``'s copy is older:
    ``a``'s sync takes ``b``'s version, records no conflict and sends nothing back. The
    state ``b`` pushed did not say ``b`` had had ``a``'s version, so ``a`` merged the two
    without a base: "both sides changed description", and ``hive doctor`` exited 1."""
    a, b = clones.paths["a"], clones.paths["b"]
    for name in ("a", "b"):
        clones.sync(name)
    cell = create_cell(clones.ws("a"), title="Shared")
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", "--no-rebase", "origin", "main")
    update_cell(clones.ws("b"), cell_id=cell.id, description="written in b")
    update_cell(clones.ws("b"), cell_id=cell.id, title="Renamed in b")
    clones.sync("b")
    done = clones.sync("a")
    assert (done.received_cells, done.sent_cells, done.conflicts) == (1, 0, [])
    merged = show_cell(clones.ws("a"), cell_id=cell.id)
    assert (merged.title, merged.description, merged.conflicts) == (
        "Renamed in b",
        "written in b",
        [],
    )
    assert git(a, "show", f"HEAD:{cell_path(cell.id)}") == git(
        b, "show", f"HEAD:{cell_path(cell.id)}"
    )


def test_a_sync_from_a_branch_with_older_cells_does_not_undo_newer_state(
    clones: Clones,
) -> None:
    """A clone syncs on a feature branch, then switches back to a branch whose cells
    are older and syncs again: the older copies are stale, not edits. They must not
    be pushed over the newer state (every other clone would take them)."""
    a = clones.paths["a"]
    cell = create_cell(clones.ws("a"), title="v1", priority=3)
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    reserve(clones.ws("a", "Alpha"), paths=["docs/**"])
    clones.sync("a")
    git(a, "checkout", "-q", "-b", "feature")
    update_cell(clones.ws("a"), cell_id=cell.id, title="v2", priority=1)
    release(clones.ws("a", "Alpha"))
    clones.sync("a")
    clones.sync("b")
    git(a, "checkout", "-q", "main")
    clones.sync("a")
    clones.sync("b")
    for name in ("a", "b"):
        merged = show_cell(clones.ws(name), cell_id=cell.id)
        assert (merged.title, merged.priority) == ("v2", 1), name
        assert list_reservations(clones.ws(name)) == [], name
    assert_clean(a)


def test_a_git_revert_of_a_synced_hive_commit_is_sent_by_the_next_sync(clones: Clones) -> None:
    """Unlike a branch that is merely behind, a branch that had the newer version and
    reverted it chose the older one: the next sync sends it."""
    a = clones.paths["a"]
    cell = create_cell(clones.ws("a"), title="v1")
    clones.sync("a")  # the state has v1 in its history
    update_cell(clones.ws("a"), cell_id=cell.id, title="v2")
    clones.sync("a")
    clones.sync("b")
    assert git(a, "log", "-1", "--format=%s").startswith("hive: update")  # no sync commit
    git(a, "revert", "--no-edit", "HEAD")
    assert show_cell(clones.ws("a"), cell_id=cell.id).title == "v1"
    clones.sync("a")
    clones.sync("b")
    for name in ("a", "b"):
        assert show_cell(clones.ws(name), cell_id=cell.id).title == "v1", name


def test_a_remote_that_refuses_hive_refs_is_named_at_once_not_retried(clones: Clones) -> None:
    """A push the remote refuses (a hook, a permission) is not a race another clone
    won: trying again cannot help. The sync stops at the first refusal with the
    remote's reason, and so does mail sync."""
    from hive.domain.mail import sync_mail
    from hive.errors import GitError

    hook = clones.origin / "hooks" / "pre-receive"
    tries = clones.root / "tries"
    hook.write_text(f'#!/bin/sh\necho x >> "{tries}"\necho "denied by policy" >&2\nexit 1\n')
    hook.chmod(0o755)
    create_cell(clones.ws("a"), title="refused")
    with pytest.raises(GitError) as caught:
        clones.sync("a")
    assert "refs/hive/state" in caught.value.message
    assert "pre-receive hook declined" in caught.value.message
    assert "denied by policy" in caught.value.message
    assert tries.read_text().count("x") == 1
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    with pytest.raises(GitError) as caught:
        sync_mail(clones.ws("a"), remote="origin")
    assert "denied by policy" in caught.value.message
    result = run_hive(["-C", str(clones.paths["a"]), "sync"], module="hive.cli.main")
    assert result.exit_code == 8 and "denied by policy" in result.output
    assert "Traceback" not in result.output


def test_a_sync_from_a_branch_that_never_had_a_file_brings_it_and_loses_nothing(
    clones: Clones,
) -> None:
    """A second worktree (or a branch made before a cell and a reservation existed)
    shares refs/hive/state with the first. Its sync must bring it the cell and the
    reservation file, not record a state without them: the next sync of another
    clone took a reservation file missing from the state as released."""
    a = clones.paths["a"]
    mail_init(clones.ws("a", "Alpha"), agent_name="Alpha")
    reserve(clones.ws("a", "Alpha"), paths=["src/**"])
    release(clones.ws("a", "Alpha"))  # the branch had a file for Alpha once, then none
    git(a, "branch", "older")
    cell = create_cell(clones.ws("a"), title="made on main")
    reserve(clones.ws("a", "Alpha"), paths=["docs/**"])
    clones.sync("a")
    clones.sync("b")
    other = clones.root / "a-older"
    git(a, "worktree", "add", "-q", str(other), "older")
    clones.paths["a-older"] = other
    result = clones.sync("a-older")
    assert result.received_cells == 1  # the cell (the reservation file is not a cell)
    assert git(other, "ls-files", ".hive/reservations").strip() != ""
    assert show_cell(clones.ws("a-older"), cell_id=cell.id).title == "made on main"
    clones.sync("b")
    for name in ("a", "b", "a-older"):
        held = [(r.agent, r.path_pattern) for r in list_reservations(clones.ws(name))]
        assert held == [("Alpha", "docs/**")], name


def test_one_agents_reservation_ids_from_two_clones_stay_distinct(clones: Clones) -> None:
    """Both clones gave alice #1 offline: after they meet, the earliest grant keeps #1,
    the other becomes #2, and a release by #1 is refused as ambiguous (it released
    both), never guessing."""
    from hive.domain.merge import merge_reservation_files
    from hive.errors import AmbiguousId

    for name in ("a", "b"):
        git(clones.paths[name], "config", "user.name", "alice")  # one person, two clones
    reserve(clones.ws("a", "alice"), paths=["src/a.py"], ttl_seconds=3600)
    time.sleep(0.01)
    reserve(clones.ws("b", "alice"), paths=["src/b.py"], ttl_seconds=3600)
    ours = git(clones.paths["a"], "show", "HEAD:.hive/reservations/alice.yaml").encode()
    theirs = git(clones.paths["b"], "show", "HEAD:.hive/reservations/alice.yaml").encode()
    path = ".hive/reservations/alice.yaml"
    one_way = merge_reservation_files(path, None, ours, theirs).content
    assert one_way == merge_reservation_files(path, None, theirs, ours).content
    converge(clones, "a", "b")
    for name in ("a", "b"):
        held = list_reservations(clones.ws(name))
        assert [(r.id, r.path_pattern, r.renumbered_from) for r in held] == [
            (1, "src/a.py", None),
            (2, "src/b.py", 1),
        ]
    refused = run_hive(
        ["-C", str(clones.paths["b"]), "release", "--id", "1"],
        module="hive.cli.main",
    )
    assert refused.exit_code == 3, refused.output
    assert "#1 names 2 reservations" in refused.stderr and "(was #1)" in refused.stderr
    with pytest.raises(AmbiguousId):
        release(clones.ws("a", "alice"), reservation_ids=[1])
    released = release(clones.ws("b", "alice"), reservation_ids=[2])
    assert [r.path_pattern for r in released.released] == ["src/b.py"]
    kept = git(clones.paths["b"], "show", "HEAD:.hive/reservations/alice.yaml")
    assert "src/a.py" in kept and "src/b.py" not in kept
    reserved = reserve(clones.ws("b", "alice"), paths=["src/c.py"], ttl_seconds=3600)
    assert reserved.granted[0].id == 3  # above every id the agent's file ever showed here


@pytest.mark.parametrize("how", ["merge", "rebase"])
def test_a_git_pull_that_renumbers_a_reservation_never_gives_its_number_again(
    clones: Clones, how: str
) -> None:
    """Both clones gave alice #1; a ``git pull`` (git's merge driver) renumbers the
    later grant to #2. Released, #2 must not be given again by the next reserve in
    that clone (was: the merge driver left the clone's id sequence at 1, so the next
    reservation was a second #2)."""
    a, b = clones.paths["a"], clones.paths["b"]
    for path in (a, b):
        git(path, "config", "user.name", "alice")  # one person, two clones
    reserve(clones.ws("a", "alice"), paths=["src/a.py"], ttl_seconds=3600)
    time.sleep(0.01)
    reserve(clones.ws("b", "alice"), paths=["src/b.py"], ttl_seconds=3600)
    git(a, "push", "-q", "origin", "main")
    git(b, "pull", "-q", f"--{'no-' if how == 'merge' else ''}rebase", "origin", "main")
    merged = git(b, "show", "HEAD:.hive/reservations/alice.yaml")
    assert "renumbered_from: 1" in merged and "id: 2" in merged
    released = release(clones.ws("b", "alice"), reservation_ids=[2]).released
    assert [(r.id, r.path_pattern) for r in released] == [(2, "src/b.py")]
    reserved = reserve(clones.ws("b", "alice"), paths=["src/c.py"], ttl_seconds=3600)
    assert reserved.granted[0].id == 3  # 1, 2 (released) and 3: all distinct
    held = git(b, "show", "HEAD:.hive/reservations/alice.yaml")
    assert "id: 1\n" in held and "id: 3\n" in held and "id: 2\n" not in held
    assert_clean(b)


def test_config_changed_in_both_clones_merges_setting_by_setting(clones: Clones) -> None:
    """Both clones changed .hive/config.yaml: every setting only one changed arrives on
    both (the later sync overwrote the other clone's config); a setting both changed
    keeps one value, the same on both, and the other is reported and kept in the file
    (a '# hive merge conflict:' line that doctor reports) until someone deletes it."""
    from hive.domain.doctor import diagnose

    def edit(name: str, old: str, new: str) -> None:
        config = clones.paths[name] / ".hive" / "config.yaml"
        config.write_text(config.read_text().replace(old, new))
        git(clones.paths[name], "commit", "-qam", f"config in {name}")

    converge(clones, "a", "b")  # the state both clones agree on: the merge's base
    edit("a", "lock_timeout_seconds: 30.0", "lock_timeout_seconds: 45.0")
    edit("a", "id_length: 6", "id_length: 7")
    edit("b", "coordinators: []", "coordinators:\n- lead")
    edit("b", "id_length: 6", "id_length: 8")
    clones.sync("a")
    merged = clones.sync("b")
    assert merged.unresolved == []
    assert [(c["file"], c["field"], c["kept"], c["other"]) for c in merged.conflicts] == [
        (".hive/config.yaml", "id_length", 8, 7)
    ]
    converge(clones, "a", "b")
    line = "# hive merge conflict: both clones changed id_length: kept 8, the other had 7"
    for name in ("a", "b"):
        config = clones.ws(name).config()
        assert (config.lock_timeout_seconds, config.coordinators, config.id_length) == (
            45.0,
            ["lead"],
            8,
        )
        text = git(clones.paths[name], "show", "HEAD:.hive/config.yaml")
        assert text.startswith(line), text
        found = [
            p.message for p in diagnose(clones.ws(name)).problems if p.kind == "merge-conflict"
        ]
        assert found == [
            f".hive/config.yaml: {line.split(': ', 1)[1]} (set it, then delete this line)"
        ]
        assert_clean(clones.paths[name])
    config = clones.paths["a"] / ".hive" / "config.yaml"
    config.write_text("".join(config.read_text().splitlines(keepends=True)[1:]))
    git(clones.paths["a"], "commit", "-qam", "conflict settled")
    converge(clones, "a", "b")
    for name in ("a", "b"):
        assert "merge conflict" not in git(clones.paths[name], "show", "HEAD:.hive/config.yaml")


def test_a_release_by_id_names_the_holder_when_two_clones_gave_that_id(clones: Clones) -> None:
    """Ids are unique within a clone, but alice's #1 (clone a) and bob's #1 (clone b)
    meet at a sync: a release by id alone (the web board's) released whichever file
    came first; it is refused as ambiguous, and the holder named picks one."""
    from hive.domain.reservations import release_for_holder
    from hive.errors import AmbiguousId

    reserve(clones.ws("a", "alice"), paths=["src/a.py"], ttl_seconds=3600)
    reserve(clones.ws("b", "bob"), paths=["src/b.py"], ttl_seconds=3600)
    converge(clones, "a", "b")
    held = list_reservations(clones.ws("a"))
    assert sorted((r.agent, r.id) for r in held) == [("alice", 1), ("bob", 1)]
    person = clones.ws("a", "User a")
    with pytest.raises(AmbiguousId, match=r"alice's 'src/a\.py'; bob's 'src/b\.py'"):
        release_for_holder(person, reservation_id=1, as_coordinator=True)
    done = release_for_holder(person, reservation_id=1, agent="bob", as_coordinator=True)
    assert [(r.agent, r.path_pattern) for r in done.released] == [("bob", "src/b.py")]
    assert [r.agent for r in list_reservations(clones.ws("a"))] == ["alice"]
    assert "Hive-Released: bob #1 src/b.py" in git(clones.paths["a"], "log", "-1", "--format=%B")


def test_a_persons_sync_commits_say_person(clones: Clones) -> None:
    """docs/security.md: a person's commits carry ``Hive-Identity: person``. The sync
    commit and the state commit named the person in ``Hive-Agent`` only, so the other
    clone's ``hive doctor`` warned that no such identity was registered."""
    create_cell(clones.ws("a"), title="from a")
    for name in ("a", "b"):
        done = run_hive(["-C", str(clones.paths[name]), "sync"], module="hive.cli.main")
        assert done.exit_code == 0, done.output
    b = clones.paths["b"]
    for commit in ("HEAD", STATE_REF):
        message = git(b, "log", "-1", "--format=%B", commit)
        assert "Hive-Event: sync" in message and "Hive-Identity: person" in message, message
    person = git(b, "config", "user.name").strip()
    doctor = run_hive(["-C", str(b), "doctor"], module="hive.cli.main")
    assert f"Hive-Agent {person} is not" not in doctor.output, doctor.output


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["lean", "full"])
def test_a_clone_s_own_reservation_commits_are_not_read_back(tmp_path: Path, module: str) -> None:
    """The heads the next reserve starts its walk from (``reservation.tips``) move on
    with this clone's own reserve and release commits, whose ids were given here: the
    next reserve reads only what came since (a git commit), instead of reading back the
    reservation file it just wrote (every reserve, on the full and the lean path)."""
    repo = make_repo(tmp_path / "repo")
    init_hive(Workspace(str(repo)))
    env = agent_env(repo, "alice")
    tips = Path(Workspace(str(repo)).git.paths.hive_state_dir) / "reservation.tips"

    def hive(*args: str) -> None:
        done = run_hive(["-C", str(repo), *args], env=env, module=module)
        assert done.returncode == 0, done.stderr

    hive("reserve", "src/one.py")
    assert tips.read_text().split() == [git(repo, "rev-parse", "HEAD").strip()]
    hive("release", "src/one.py")
    assert tips.read_text().split() == [git(repo, "rev-parse", "HEAD").strip()]
    (repo / "code.py").write_text("x = 1\n")
    git(repo, "add", "code.py")
    git(repo, "commit", "-q", "-m", "code")
    hive("reserve", "src/two.py")
    assert tips.read_text().split() == [git(repo, "rev-parse", "HEAD").strip()]


def test_a_mirror_remote_gets_hives_refs_as_any_other(clones: Clones) -> None:
    """A remote kept as a mirror (``git remote add --mirror=push backup URL``: a
    backup, a second forge): ``hive sync backup`` ended in "cannot push hive's refs to
    backup: --mirror can't be combined with refspecs" (exit 8), as a mirror remote
    takes no refspec. hive pushes its own refs there as to any remote (a plain ``git
    push backup`` mirrors them with the rest)."""
    git(clones.paths["a"], "remote", "add", "--mirror=push", "backup", str(clones.origin))
    made = create_cell(clones.ws("a"), title="Mirrored")
    sync(clones.ws("a"), remote="backup")
    assert git(clones.origin, "for-each-ref", "--format=%(refname)", "refs/hive/")
    clones.sync("b")
    assert made.id in clones.hive_files("b")


def test_a_sync_that_settles_a_contest_writes_each_file_once(
    clones: Clones, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sync's plan held every change twice (the merge's changes, then
    ``settle_contests``' whole list again): the loser's reservation file was written
    first as received and then as rewritten, the last one winning. Each path once."""
    from hive.git.repo import GitRepo, Plan

    _overlapping_grants(clones)
    clones.sync("a")
    planned: list[list[str]] = []
    real = GitRepo.transact

    def watched(self: GitRepo, plan: Any, **kwargs: Any) -> Any:
        def seen(snap: Any) -> Plan:
            made: Plan = plan(snap)
            planned.append([change.path for change in made.changes])
            return made

        return real(self, seen, **kwargs)

    monkeypatch.setattr(GitRepo, "transact", watched)
    result = clones.sync("b")
    assert [(c.kept.agent, c.yielded.agent) for c in result.contested] == [("alice", "bob")]
    assert planned and all(len(paths) == len(set(paths)) for paths in planned), planned
    assert any(".hive/reservations/bob.yaml" in paths for paths in planned)
