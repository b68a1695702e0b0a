"""hive sync in the situations real teams meet: clones syncing at the same moment, a
remote rewritten or pruned under a clone, work in progress in the clone, another hive
process writing meanwhile, a clone with no history in common, a remote out of reach.
Real clones of a real bare remote; checked with the real ``git``."""

from __future__ import annotations

import os
from pathlib import Path

from hive.domain.cells import create_cell, list_cells, show_cell, update_cell
from hive.domain.setup import init_hive
from hive.domain.workspace import Workspace
from hive.git.remote import STATE_REF
from hive.store.layout import cell_path
from tests.conftest import GIT_ENV, git, make_repo
from tests.inprocess import fork_call, fork_hive, run_hive
from tests.test_sync import Clones, built_clones, clones, converge  # noqa: F401 (fixtures)

MAIL_REF = "refs/hive/mail"


def fsck(repo: Path) -> None:
    """The real ``git fsck``: no broken, missing or dangling-by-corruption object."""
    out = git(repo, "fsck", "--no-dangling", "--no-progress")
    assert "missing" not in out and "broken" not in out and "error" not in out, out


def refs_and_head(repo: Path) -> str:
    """The branches, hive's own refs, HEAD and the status of the work tree: what
    'nothing changed here' means (tracking refs mirror the remote: a fetch sets them)."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/hive")
    return refs + git(repo, "rev-parse", "HEAD") + git(repo, "status", "--porcelain")


def ids(made: Clones, name: str) -> set[str]:
    return {cell.id for cell in list_cells(made.ws(name), status="all")}


def test_three_clones_syncing_at_the_same_moment_lose_nothing(clones: Clones) -> None:  # noqa: F811
    """Three ``hive sync`` processes started together, each with cells of its own and a
    change to one shared cell: every sync succeeds, and after one more sync each, every
    clone holds every cell and every change, the same files in each."""
    clones.clone("c")
    shared = create_cell(clones.ws("a"), title="shared")
    converge(clones, "a", "b", "c")
    made = {
        name: {create_cell(clones.ws(name), title=f"{name} {n}").id for n in range(3)}
        for name in ("a", "b", "c")
    }
    update_cell(clones.ws("a"), cell_id=shared.id, title="title from a")
    update_cell(clones.ws("b"), cell_id=shared.id, priority=0)
    update_cell(clones.ws("c"), cell_id=shared.id, add_labels=["from-c"])
    env = {**os.environ, **GIT_ENV}
    procs = [
        fork_hive(["-C", str(clones.paths[name]), "sync"], env=env, module="hive.cli.main")
        for name in ("a", "b", "c")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
    for name in ("a", "b", "c"):  # one more sync each
        clones.sync(name)
    every = set().union(*made.values()) | {shared.id}
    files = {clones.hive_files(name) for name in ("a", "b", "c")}
    assert len(files) == 1, "clones did not converge after one more sync each"
    for name in ("a", "b", "c"):
        assert every <= ids(clones, name)
        cell = show_cell(clones.ws(name), cell_id=shared.id)
        assert (cell.title, cell.priority, cell.labels) == ("title from a", 0, ["from-c"])
        fsck(clones.paths[name])
    state = git(clones.origin, "rev-parse", STATE_REF).strip()
    assert all(git(p, "rev-parse", STATE_REF).strip() == state for p in clones.paths.values())
    fsck(clones.origin)


def test_a_remote_state_rewritten_under_a_clone_loses_nothing(clones: Clones) -> None:  # noqa: F811
    """Someone force-pushes an older ``refs/hive/state`` (and mail log) to the remote:
    the next sync of a clone that had the newer one merges against what it finds and
    sends back what the rewrite dropped; every clone converges."""
    first = create_cell(clones.ws("a"), title="before the rewrite")
    clones.sync("a")
    old_state = git(clones.origin, "rev-parse", STATE_REF).strip()
    later = create_cell(clones.ws("a"), title="dropped by the rewrite")
    clones.sync("a")
    clones.sync("b")
    git(clones.origin, "update-ref", STATE_REF, old_state)  # the force-push
    create_cell(clones.ws("b"), title="after the rewrite")
    clones.sync("b")
    converge(clones, "a", "b")
    for name in ("a", "b"):
        assert {first.id, later.id} <= ids(clones, name)
        fsck(clones.paths[name])
    remote_state = git(clones.origin, "rev-parse", STATE_REF).strip()
    assert git(clones.origin, "merge-base", "--is-ancestor", old_state, remote_state) == ""
    assert later.id in git(clones.origin, "ls-tree", "-r", "--name-only", remote_state)


def test_a_remote_state_replaced_by_an_unrelated_one_is_joined(clones: Clones) -> None:  # noqa: F811
    """The remote's ``refs/hive/state`` force-pushed to a history that shares nothing
    with this clone's (another project's, or rebuilt): joined like a first sync, no
    cell lost on either side."""
    mine = create_cell(clones.ws("a"), title="mine")
    clones.sync("a")
    other = make_repo(clones.root / "other")
    git(other, "remote", "add", "origin", str(clones.origin))
    init_hive(Workspace(str(other), actor="zed"))
    theirs = create_cell(Workspace(str(other), actor="zed"), title="theirs")
    clones.paths["other"] = other
    git(other, "fetch", "-q", "origin")
    git(clones.origin, "update-ref", "-d", STATE_REF)
    git(clones.origin, "update-ref", "-d", MAIL_REF)
    clones.sync("other")  # the remote's state is now other's alone
    clones.sync("a")
    assert {mine.id, theirs.id} <= ids(clones, "a")
    fsck(clones.paths["a"])


def test_a_remote_branch_deleted_does_not_stop_a_sync(clones: Clones) -> None:  # noqa: F811
    """The remote's branch deleted (``git push origin --delete main``): hive sync moves
    only hive's refs; it neither needs the branch nor pushes it back."""
    cell = create_cell(clones.ws("a"), title="no branch needed")
    git(clones.origin, "update-ref", "-d", "refs/heads/main")  # as a push --delete does
    clones.sync("a")
    clones.sync("b")
    assert cell.id in ids(clones, "b")
    assert git(clones.origin, "for-each-ref", "refs/heads") == ""
    fsck(clones.origin)


def test_uncommitted_hive_edits_stop_a_sync_that_changes_the_file(clones: Clones) -> None:  # noqa: F811
    """A person edits cell files by hand and does not commit them (one staged), then a
    sync would bring another clone's change to the same cells: the sync is refused
    (exit code 4, naming the file and the way out), nothing here changes and the edits
    stay; once committed, the next sync merges them field by field."""
    cell = create_cell(clones.ws("a"), title="edited by hand")
    staged = create_cell(clones.ws("a"), title="staged by hand")
    converge(clones, "a", "b")
    update_cell(clones.ws("a"), cell_id=cell.id, priority=0)
    update_cell(clones.ws("a"), cell_id=staged.id, priority=0)
    clones.sync("a")
    b = clones.paths["b"]
    for made, title in ((cell, "my unsaved title"), (staged, "my staged title")):
        path = b / cell_path(made.id)
        path.write_text(path.read_text().replace(made.title, title))
    git(b, "add", cell_path(staged.id))
    before = refs_and_head(b)
    for _ in range(2):
        done = run_hive(["-C", str(b), "sync"], module="hive.cli.main")
        assert done.exit_code == 4, done.output
        assert "that are not committed; commit or" in done.output, done.output
        assert refs_and_head(b) == before
        git(b, "reset", "-q", "--", cell_path(staged.id))  # unstaged: the same
        before = refs_and_head(b)
    git(b, "commit", "-qam", "my titles")
    clones.sync("b")
    for made, title in ((cell, "my unsaved title"), (staged, "my staged title")):
        merged = show_cell(clones.ws("b"), cell_id=made.id)
        assert (merged.title, merged.priority) == (title, 0)
    fsck(b)


def test_a_sync_while_another_hive_process_writes_in_the_clone(clones: Clones) -> None:  # noqa: F811
    """Another hive process creates cells in the same clone while it syncs: both finish,
    every cell is on the branch, and the next sync sends the ones the first missed."""
    for number in range(3):
        create_cell(clones.ws("b"), title=f"from b {number}")
    clones.sync("b")

    def writer() -> None:
        for number in range(8):
            create_cell(clones.ws("a"), title=f"written meanwhile {number}")

    writing = fork_call(writer)
    result = clones.sync("a")
    _, err = writing.communicate(timeout=180)
    assert writing.returncode == 0, err
    assert result.received_cells == 3
    clones.sync("a")
    clones.sync("b")
    titles = {cell.title for cell in list_cells(clones.ws("b"), status="all")}
    assert {f"written meanwhile {number}" for number in range(8)} <= titles
    log = git(clones.paths["a"], "log", "--format=%s", "-n", "12")
    assert log.count("hive: sync") >= 1 and log.count("create") >= 8, log
    fsck(clones.paths["a"])


def test_an_unreachable_remote_changes_nothing_here(clones: Clones, tmp_path: Path) -> None:  # noqa: F811
    """The remote is out of reach (its URL names nothing there now): a clear message
    naming the remote, exit code 8 (docs/cli.md), and this clone as it was."""
    create_cell(clones.ws("a"), title="waits for the remote")
    a = clones.paths["a"]
    git(a, "remote", "set-url", "origin", str(tmp_path / "gone.git"))
    before = refs_and_head(a)
    done = run_hive(["-C", str(a), "sync"], module="hive.cli.main")
    assert done.exit_code == 8, done.output
    assert "cannot fetch hive's refs from origin" in done.output, done.output
    assert "gone.git" in done.output and "Traceback" not in done.output
    assert refs_and_head(a) == before


def test_a_hive_name_that_is_not_utf8_is_refused_naming_it(clones: Clones) -> None:  # noqa: F811
    """A stray file under .hive whose name is not UTF-8 (committed by hand: git takes
    any bytes): the sync refuses before changing anything (exit 7, corrupt_file, the
    name shown with backslash escapes and the way out), not an internal error, and
    hive doctor lists it; once removed, the sync goes through."""
    a = clones.paths["a"]
    create_cell(clones.ws("a"), title="waits for the name")
    stray = os.fsencode(a / ".hive") + b"/bad\xe9.txt"
    with open(stray, "wb") as handle:
        handle.write(b"hi\n")
    git(a, "add", "-A", ".hive")
    git(a, "commit", "-qm", "a stray file")
    before = refs_and_head(a)
    for argv in (["sync"], ["sync", "--json"]):
        done = run_hive(["-C", str(a), *argv], module="hive.cli.main")
        assert done.exit_code == 7, done.output
        assert ".hive/bad\\xe9.txt: a file whose name is not UTF-8" in done.output, done.output
        assert "git rm" in done.output and "internal error" not in done.output, done.output
        assert refs_and_head(a) == before
    doctor = run_hive(["-C", str(a), "doctor"], module="hive.cli.main")
    assert doctor.exit_code != 0, doctor.output
    assert "undecodable-name: .hive/bad\\xe9.txt" in doctor.output, doctor.output
    git(a, "rm", "-q", os.fsdecode(stray))
    git(a, "commit", "-qm", "no stray file")
    clones.sync("a")
    assert git(a, "rev-parse", STATE_REF) == git(clones.origin, "rev-parse", STATE_REF)
    fsck(a)
