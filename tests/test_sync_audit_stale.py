"""``hive doctor``'s audit of a sync-shaped commit that names a remote state older than
what the branch already had of a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from hive.domain.annotate import add_comment
from hive.domain.cells import close_cell, create_cell, reopen_cell, start_cell, update_cell
from hive.domain.history import claim_breaches
from hive.domain.identity import mail_init
from hive.domain.mail import send_message
from hive.domain.merge import merge_file
from hive.domain.mergecore import HISTORY_LIMIT
from hive.domain.syncaudit import SyncCommits, _StateTable, state_tips
from hive.git.remote import STATE_REF, tracking_ref
from hive.git.repo import GitRepo
from hive.git.syncref import path_versions
from hive.store.layout import cell_path
from tests.conftest import git
from tests.parsecount import yaml_parses
from tests.test_precommit import _forged_commit
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)


def test_a_forged_sync_of_an_older_state_cannot_close_a_claimed_cell(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """alice closed her cell, then reopened and claimed it again. A hand commit under a
    sync's trailers that names the older state (the cell closed there) and writes the
    merge of the two versions (closed beats open) closed alice's cell unseen: the branch
    had the cell as a later state had it, so a sync of that older state changes
    nothing of it (its merge base is that state's version), and the change is a
    ``not-owner`` warning of ``hive doctor``."""
    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    close_cell(alice, cell_id=cell.id, reason="done")
    clones.sync("a")
    closed_state = git(clones.paths["a"], "rev-parse", STATE_REF).strip()
    reopen_cell(alice, cell_id=cell.id)
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    b, path = clones.paths["b"], cell_path(cell.id)
    ours = (b / path).read_bytes()
    theirs = git(b, "show", f"{closed_state}:{path}").encode()
    merged = merge_file(path, None, ours, theirs)
    assert merged.clean and b"status: closed" in merged.content
    (b / path).write_bytes(merged.content)
    git(b, "add", path)
    forged = _forged_commit(
        b, "bob", f"sync 1 cell(s) from origin\n\nHive-Sync-State: {closed_state}"
    )
    walked: list[str] = []  # later states were each walked back to the named one
    real = GitRepo.is_ancestor

    def counted(self: GitRepo, ancestor: str, descendant: str) -> bool:
        walked.append(descendant)
        return real(self, ancestor, descendant)

    monkeypatch.setattr(GitRepo, "is_ancestor", counted)
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == [
        (forged, f"bob changed {cell.id} (claimed by alice)")
    ]
    assert walked == []  # the descendants of the named state, from the state table


def test_a_sync_shaped_commit_naming_a_mail_log_commit_names_no_state(
    clones: Clones,  # noqa: F811
) -> None:
    """The states a sync commit may name are those of the state history: reachable from
    ``refs/hive/state`` or a tracking ``refs/hive-remotes/<remote>/state``, never a
    commit of a fetched mail log (``refs/hive-remotes/<remote>/mail``), which is no
    state: a long mail log walked as one spent the walk's budget before the states."""
    mail_init(clones.ws("a", "alice"), agent_name="alice")
    send_message(clones.ws("a", "alice"), to=["alice"], subject="hi", body="1")
    clones.sync("a")
    clones.sync("b")
    b = clones.paths["b"]
    mail = git(b, "rev-parse", tracking_ref("origin", "mail")).strip()
    ws = clones.ws("b", "bob")
    (b / ".hive" / "note.txt").write_text("by hand\n")
    git(b, "add", ".hive/note.txt")
    forged = _forged_commit(b, "bob", f"sync 0 cell(s) from origin\n\nHive-Sync-State: {mail}")
    commit = next(ws.git.iter_commits(limit=1))
    assert commit.sha == forged
    assert SyncCommits(ws).source(commit, commit.trailers()) is None
    assert mail not in SyncCommits(ws).states()


def test_each_version_history_an_audit_needs_is_read_once(
    clones: Clones,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Honest syncs that brought alice's edits of her claimed cells: the audit reads the
    versions each (named state, file) pair had with one ``git log``, whether it asks
    if the branch's version was the state's (``SyncCommits.brought``) or if the branch
    was ahead of that state (``LaterStates.ahead_of``): it read each twice."""
    alice = clones.ws("a", "alice")
    cells = [create_cell(alice, title=f"alice's {n}") for n in range(2)]
    for cell in cells:
        start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    syncs = []
    for round_ in range(2):
        for cell in cells:
            update_cell(alice, cell_id=cell.id, description=f"round {round_}")
        clones.sync("a")
        syncs.append(clones.sync("b").commit)
    assert None not in syncs
    trace = tmp_path / "trace"
    monkeypatch.setenv("GIT_TRACE", str(trace))
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []
    monkeypatch.delenv("GIT_TRACE")
    logs = [line for line in trace.read_text().splitlines() if "built-in: git log" in line]
    assert len(logs) == 1, logs  # one for the whole state history, not one a pair


def test_the_state_table_gives_each_state_the_versions_its_own_log_gives(
    clones: Clones,  # noqa: F811
) -> None:
    """``_StateTable`` reads the versions of every file in the state history and the
    branch's at once; for each state (or branch commit) and file, the answer holds what
    a ``git log`` of that commit and file gives (``syncref.path_versions``; the order
    of commits made in one second may differ), and a limit keeps the newest ones."""
    alice, bob = clones.ws("a", "alice"), clones.ws("b", "bob")
    cells = [create_cell(alice, title=f"alice's {n}") for n in range(2)]
    start_cell(alice, cell_id=cells[0].id)
    clones.sync("a")
    clones.sync("b")
    for round_ in range(3):
        update_cell(alice, cell_id=cells[0].id, description=f"a {round_}")
        add_comment(bob, cell_id=cells[1].id, text=f"b {round_}")
        clones.sync("a")
        clones.sync("b")
        clones.sync("a")
    ws = clones.ws("b", "bob")
    table = _StateTable(ws, state_tips(ws))
    states = SyncCommits(ws).states()
    assert len(states) > 6
    paths = [cell_path(cell.id) for cell in cells] + [".hive/config.yaml"]
    for state in states:
        for path in paths:
            want = path_versions(ws.git, state, path, limit=HISTORY_LIMIT)
            got = table.versions(state, path, HISTORY_LIMIT)
            assert got is not None and sorted(got) == sorted(want), (state, path)
            newest = table.versions(state, path, 1)
            assert newest is not None and set(newest) <= set(want)
            assert len(newest) <= 4 and (newest != []) == (want != [])  # one merge's diffs
    head = git(clones.paths["b"], "rev-parse", "HEAD").strip()  # the branch's, for parents
    for sha in (head, git(clones.paths["b"], "rev-parse", "HEAD~2").strip()):
        for path in paths:
            want = path_versions(ws.git, sha, path, limit=HISTORY_LIMIT)
            got = table.versions(sha, path, HISTORY_LIMIT)
            assert got is not None and sorted(got) == sorted(want), (sha, path)
    assert table.versions("0" * 40, paths[0], 9) is None  # not read: the caller asks git


def test_a_forged_sync_merging_without_the_shared_base_is_a_breach(
    clones: Clones,  # noqa: F811
) -> None:
    """alice renamed her claimed cell and synced; bob commented on it in his clone. The
    versions both histories share are a base a sync merges against; a hand commit
    under a sync's trailers that wrote the merge against no base instead (either side's
    edit kept where the two differ) passed the audit: it is a ``not-owner`` breach,
    while bob's honest sync of the same state is none."""
    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="Alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    update_cell(alice, cell_id=cell.id, title="Alice's, renamed")
    clones.sync("a")
    bob = clones.ws("b", "bob")
    add_comment(bob, cell_id=cell.id, text="bob was here")
    b, path = clones.paths["b"], cell_path(cell.id)
    git(b, "fetch", "-q", "origin", f"+{STATE_REF}:{tracking_ref('origin', 'state')}")
    state = git(b, "rev-parse", tracking_ref("origin", "state")).strip()
    ours = (b / path).read_bytes()
    theirs = git(b, "show", f"{state}:{path}").encode()
    blind = merge_file(path, None, ours, theirs)
    assert blind.clean and blind.content != ours
    head = git(b, "rev-parse", "HEAD").strip()
    (b / path).write_bytes(blind.content)
    git(b, "add", path)
    forged = _forged_commit(b, "bob", f"sync 1 cell(s) from origin\n\nHive-Sync-State: {state}")
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == [
        (forged, f"bob changed {cell.id} (claimed by alice)")
    ]
    git(b, "reset", "-q", "--hard", head)
    honest = clones.sync("b").commit
    assert honest is not None
    assert b"Alice's, renamed" in (b / path).read_bytes()
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []


def test_each_cell_version_is_parsed_once_over_an_audit(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Both clones edit alice's claimed cell (alice its description, bob a comment), and
    sync: the audit of bob's sync commits read each version of the cell's file up to
    three times (the plain claim check, the claim check, and the sync's merge made from
    the files); each version is parsed once, with the same findings (none)."""
    alice, bob = clones.ws("a", "alice"), clones.ws("b", "bob")
    cell = create_cell(alice, title="alice's")
    start_cell(alice, cell_id=cell.id)
    clones.sync("a")
    clones.sync("b")
    for round_ in range(2):
        update_cell(alice, cell_id=cell.id, description=f"round {round_}")
        add_comment(bob, cell_id=cell.id, text=f"bob {round_}")
        clones.sync("a")
        clones.sync("b")
    parsed = yaml_parses(monkeypatch)
    assert claim_breaches(clones.ws("b", "bob"), limit=50) == []
    cells = {text: count for text, count in parsed.items() if cell.id in text}
    assert len(cells) >= 4  # the versions the syncs changed (and their merge bases)
    assert max(cells.values()) == 1, cells


def test_the_state_walk_is_the_state_table_s_where_it_holds_the_history_whole(
    clones: Clones,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The states a sync commit may name were walked commit by commit (each commit read
    for its parents) beside the state table's ``git rev-list --parents``: where the
    table holds the state history whole they are its commits, read by no one else,
    the same set ``git rev-list`` of the state refs gives; past the limit (here 3)
    the walk reads them one by one, as before, the newest first."""
    alice = clones.ws("a", "alice")
    cell = create_cell(alice, title="alice's")
    start_cell(alice, cell_id=cell.id)
    for round_ in range(3):
        update_cell(alice, cell_id=cell.id, description=f"round {round_}")
        clones.sync("a")
        clones.sync("b")
    b = clones.paths["b"]
    refs = [STATE_REF, tracking_ref("origin", "state")]
    want = set(git(b, "rev-list", *refs).split())
    assert len(want) > 3
    read: list[str] = []
    real = GitRepo.parents_of

    def counted(self: GitRepo, sha: str) -> tuple[str, ...]:
        read.append(sha)
        return real(self, sha)

    monkeypatch.setattr(GitRepo, "parents_of", counted)
    ws = clones.ws("b", "bob")
    assert set(SyncCommits(ws).states()) == want
    assert read == []
    assert claim_breaches(ws, limit=50) == [] and read == []
    monkeypatch.setattr("hive.domain.syncaudit.STATE_WALK_LIMIT", 3)
    cut = SyncCommits(ws).states()
    assert len(cut) == 3 and set(cut) < want and len(read) == 3
