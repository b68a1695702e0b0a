"""Worker prompts, review by diff, and the swarm CLI end to end."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import start_cell
from hive.domain.reservations import reserve
from hive.domain.swarm.complete import swarm_complete
from hive.domain.swarm.decompose import create_epic_from_decomposition
from hive.domain.swarm.prompts import (
    swarm_evaluation_prompt,
    swarm_spawn_subtask,
    swarm_subtask_prompt,
)
from hive.domain.swarm.review import review
from hive.domain.workspace import Workspace
from hive.errors import Conflict, InvalidInput
from tests.conftest import agent_env, git
from tests.inprocess import run_hive

PLAN = {
    "epic": {"title": "CSV export"},
    "strategy": "feature-based",
    "subtasks": [
        {"title": "export core", "files": ["src/export/**"]},
        {"title": "export command", "files": ["src/cli.py"], "dependencies": [0]},
    ],
}


def make_epic(ws: Workspace) -> tuple[str, str, str]:
    epic, core, command = create_epic_from_decomposition(ws, decomposition=PLAN)
    return epic.id, core.id, command.id


def test_subtask_prompt_has_files_siblings_protocol(ws: Workspace) -> None:
    epic_id, core, command = make_epic(ws)
    brief = swarm_subtask_prompt(ws, cell_id=command, agent_name="bob")
    assert brief.epic_id == epic_id and brief.files == ["src/cli.py"]
    for fragment in (
        "## Files you own\n- src/cli.py",
        f"## Waits for\n- {core}",
        "export core — files src/export/**",
        'swarm_complete(project_key="',
        f'thread_id="{epic_id}"',
        "(strategy feature-based)",
    ):
        assert fragment in brief.prompt
    with pytest.raises(InvalidInput, match="is an epic"):
        swarm_subtask_prompt(ws, cell_id=epic_id)
    start_cell(ws.for_actor("carol"), cell_id=core)
    with pytest.raises(Conflict, match="already assigned to carol"):
        swarm_spawn_subtask(ws, cell_id=core, agent_name="bob")
    assert '"passed": true|false' in swarm_evaluation_prompt(ws, cell_id=core)


def test_review_shows_commits_files_scope_and_outcome(ws: Workspace, repo: Path) -> None:
    epic_id, core, _ = make_epic(ws)
    bob = ws.for_actor("bob")
    start_cell(bob, cell_id=core)
    reserve(bob, paths=["src/export/**"], cell=core)
    (repo / "src/export").mkdir(parents=True)
    (repo / "src/export/csv.py").write_text("def export():\n    return 1\n")
    (repo / "stray.txt").write_text("x\n")
    swarm_complete(
        ws.for_actor("bob"),
        agent_name="bob",
        cell_id=core,
        summary="core export",
        files_touched=["src/export/csv.py", "stray.txt"],
    )
    result = review(ws, target=core)
    assert [c.event for c in result.commits] == ["create-epic", "start", "reserve", "complete"]
    last = result.commits[-1]
    assert "+    return 1" in last.patch
    assert {(f.path, f.status) for f in last.files} >= {
        ("src/export/csv.py", "A"),
        ("stray.txt", "A"),
        (".hive/reservations/bob.yaml", "D"),
    }
    cell = result.cells[0]
    assert cell.files_touched == ["src/export/csv.py", "stray.txt"]
    assert cell.files_reserved == ["src/export/**"]
    assert cell.scope_violations == ["stray.txt"]
    assert cell.outcome is not None and cell.outcome.success
    whole = review(ws, target=epic_id, with_patch=False)
    assert whole.is_epic and whole.cells[0].cell_id == epic_id
    assert len(whole.cells) == 3 and all(c.patch == "" for c in whole.commits)


def hive(
    repo: Path, *args: str, actor: str = "bob", stdin: str = ""
) -> subprocess.CompletedProcess[str]:
    return run_hive(
        ["-C", str(repo), "--actor", actor, *args],
        input=stdin,
        env={**agent_env(repo, actor), "HIVE_SESSION": f"test-{actor}"},
        module="hive.cli.main",
    )


def test_swarm_cli_end_to_end(ws: Workspace, repo: Path) -> None:
    plan = "The plan:\n```json\n" + json.dumps(PLAN) + "\n```"
    checked = hive(repo, "--json", "swarm", "validate", "-", stdin=plan)
    assert checked.returncode == 0 and json.loads(checked.stdout)["valid"]
    bad = hive(repo, "swarm", "validate", "-", stdin='{"epic": {"title": "x"}, "subtasks": []}')
    assert bad.returncode == 2 and "invalid" in bad.stdout
    created = hive(repo, "--json", "swarm", "create-epic", "-", stdin=plan)
    assert created.returncode == 0, created.stderr
    epic, core, _ = (cell["id"] for cell in json.loads(created.stdout))
    choice = json.loads(hive(repo, "--json", "swarm", "select-strategy", "Add CSV export").stdout)
    assert choice["strategy"] == "feature-based"
    prompt = hive(repo, "swarm", "plan-prompt", "Add PDF export", "--no-cass")
    assert prompt.returncode == 0 and "## Strategy:" in prompt.stdout
    assert hive(repo, "start", core).returncode == 0
    progress = hive(repo, "swarm", "progress", core, "--status", "in_progress", "--percent", "50")
    assert progress.returncode == 0, progress.stderr
    (repo / "src/export").mkdir(parents=True)
    (repo / "src/export/csv.py").write_text("x = 1\n")
    done = hive(repo, "--json", "swarm", "complete", core, "-s", "done", "-f", "src/export/csv.py")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["outcome"]["files_touched"] == ["src/export/csv.py"]
    again = hive(repo, "swarm", "complete", core, "-s", "again")
    assert (
        again.returncode == 4
        and again.stderr.startswith("error: ")
        and "already closed" in again.stderr
    )
    status = json.loads(hive(repo, "--json", "swarm", "status", epic).stdout)
    assert (status["total"], status["completed"]) == (2, 1)
    insight = json.loads(hive(repo, "--json", "swarm", "insights").stdout)
    assert insight["strategies"][0]["strategy"] == "feature-based"
    shown = hive(repo, "review", core, "--stat")
    assert shown.returncode == 0 and "A src/export/csv.py" in shown.stdout
    failing = hive(repo, "swarm", "complete", "hv-nope00", "-s", "x", "--evaluation", "{bad")
    assert failing.returncode == 3 and "no cell" in failing.stderr  # "{bad" is kept as notes
    assert "Traceback" not in failing.stderr + again.stderr
    assert git(repo, "status", "--porcelain") == ""


def test_review_checks_scope_over_every_trailer_commit_and_hides_sibling_cells(
    ws: Workspace, repo: Path
) -> None:
    _, core, command = make_epic(ws)
    (repo / "other").mkdir()
    (repo / "other/manual.py").write_text("manual = 1\n")
    git(repo, "add", "other/manual.py")
    git(repo, "commit", "-qm", f"manual work\n\nHive-Cell: {core}")
    (repo / "src/export").mkdir(parents=True)
    (repo / "src/export/csv.py").write_text("x = 1\n")
    swarm_complete(
        ws.for_actor("alice"),
        agent_name="alice",
        cell_id=core,
        summary="done",
        files_touched=["src/export/csv.py"],
    )
    result = review(ws, target=core)
    [cell] = result.cells
    assert cell.files_touched == ["other/manual.py", "src/export/csv.py"]
    assert cell.scope_violations == ["other/manual.py"]
    created = result.commits[0]
    assert created.event == "create-epic"
    cell_files = [f.path for f in created.files if f.path.startswith(".hive/cells/")]
    assert cell_files == [p for p in cell_files if p.endswith(f"/{core}.yaml")] and cell_files
    assert command not in created.patch and core in created.patch


def test_review_of_one_cell_reads_only_the_files_it_shows(ws: Workspace, repo: Path) -> None:
    """A cell's review diffed every file of each of its commits and then kept its own:
    the cell page of a 3,003-cell ``hive import beads`` took 1.3 s of CPU (2-4 s a
    page under load). Now a file it does not show is never read: here a sibling's
    first version, gone from the object store, does not matter."""
    from hive.domain.cells import update_cell
    from hive.store.layout import cell_path

    _, core, command = make_epic(ws)
    sibling = git(repo, "rev-parse", f"HEAD:{cell_path(command)}").strip()
    update_cell(ws, cell_id=command, title="export command, renamed")
    (repo / ".git" / "objects" / sibling[:2] / sibling[2:]).unlink()
    result = review(Workspace(str(repo)), target=core)
    [commit] = result.commits
    assert [f.path for f in commit.files] == [cell_path(core)]
    assert core in commit.patch and command not in commit.patch
    assert [f.path for f in result.cells[0].files] == [f.path for f in commit.files]


def test_review_prints_paths_as_they_are(ws: Workspace, repo: Path) -> None:
    """A Next.js route's path ('app/[id]/page.tsx') is no rich markup: review printed
    'app//page.tsx', and '[/bold]' in a file name ended the command in an error."""
    from hive.domain.cells import create_cell

    cell = create_cell(ws, title="route", files=["app/[id]/page.tsx", "x[/bold]y.py"])
    shown = hive(repo, "review", cell.id)
    assert shown.returncode == 0, shown.stderr
    assert "owned:    app/[id]/page.tsx, x[/bold]y.py" in shown.stdout


def test_a_piped_review_is_a_patch_git_applies_crlf_endings_and_all(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """Piped, review prints each diff as git does: a cell's diff (``--per cell``) or its
    commits' (``--per commit``) applies with ``git apply`` to the commit before its
    work. Its CRLF line endings were printed as LF, which git refused."""
    from hive.domain.cells import create_cell

    (repo / "win.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    (repo / "unix.txt").write_bytes(b"x\n")
    git(repo, "add", "win.txt", "unix.txt")
    git(repo, "commit", "-qm", "files with CRLF and LF endings")
    before = git(repo, "rev-parse", "HEAD").strip()
    cell = create_cell(ws, title="endings", files=["win.txt", "unix.txt"])
    start_cell(ws, cell_id=cell.id)
    (repo / "win.txt").write_bytes(b"one\r\nTWO\r\nthree\r\nfour\r\n")
    (repo / "unix.txt").write_bytes(b"y\n")
    swarm_complete(
        ws, agent_name="alice", cell_id=cell.id, summary="x", files_touched=["win.txt", "unix.txt"]
    )
    after = git(repo, "rev-parse", "HEAD").strip()
    for per in ("cell", "commit"):
        shown = run_hive(["-C", str(repo), "review", cell.id, "--per", per])
        assert shown.returncode == 0, shown.stderr
        assert "+TWO\r\n" in shown.stdout and "+y\n" in shown.stdout
        patch = tmp_path / f"{per}.patch"
        patch.write_bytes(shown.stdout.encode())
        tree = tmp_path / per
        git(repo, "worktree", "add", "-q", "--detach", str(tree), before)
        git(tree, "apply", str(patch))  # the real git CLI; raises if it refuses
        assert (tree / "win.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\nfour\r\n"
        git(tree, "add", "-A")
        assert git(tree, "diff", "--cached", "--stat", after) == ""


def test_a_piped_patch_keeps_crlf_and_shows_other_control_characters_as_marks() -> None:
    from hive.text import shown_patch

    assert shown_patch("+a\r\n-b\n") == "+a\r\n-b\n"
    assert shown_patch("+a\rb\r\n+\x1b[2J\r\r\n+\u202ex\t\n") == "+a?b\r\n+?[2J?\r\n+<U+202E>x\t\n"


def test_reserve_and_release_print_patterns_as_they_are(ws: Workspace, repo: Path) -> None:
    """'app/[id]/**' (a Next.js route) was printed as 'app//**' by the full CLI."""
    reserved = run_hive(["-C", str(repo), "reserve", "app/[id]/**"], module="hive.cli.main")
    assert reserved.returncode == 0, reserved.stderr
    assert "reserved #1 app/[id]/** (exclusive)" in reserved.stdout


def test_review_of_an_outcome_without_a_summary_ends_with_its_counts(
    ws: Workspace, repo: Path
) -> None:
    """An outcome recorded without a summary (swarm_record_outcome's default) printed
    'outcome:  failure in 1s, 0 errors, 0 retries — ' with a dash before nothing."""
    from hive.domain.cells import create_cell
    from hive.domain.swarm.progress import swarm_record_outcome

    cell = create_cell(ws, title="done elsewhere")
    swarm_record_outcome(ws, cell_id=cell.id, success=False, duration_ms=1000)
    shown = hive(repo, "review", cell.id, "--stat")
    assert shown.returncode == 0, shown.stderr
    outcome = next(line for line in shown.stdout.splitlines() if "outcome:" in line)
    assert outcome == "  outcome:  failure in 1s, 0 errors, 0 retries"


def test_review_says_who_made_each_commit(ws: Workspace, repo: Path) -> None:
    """A commit carrying a Hive-Cell trailer written by hand was listed under its cell
    without a word of who made it: each commit now says whether hive made it (and for
    whom), an agent with git (its Hive-Committer trailer) or someone with git (its
    author alone), in the result and in the text."""
    from hive.domain.cells import create_cell

    cell = create_cell(ws, title="work").id
    start_cell(ws.for_actor("bob"), cell_id=cell)
    for name, trailers in (("hand.py", ""), ("agent.py", "Hive-Committer: bob\n")):
        (repo / name).write_text("x = 1\n")
        git(repo, "add", name)
        by = "Mallory <m@example.com>"
        git(repo, "commit", "-q", "--author", by, "-m", f"{name}\n\n{trailers}Hive-Cell: {cell}")
    swarm_complete(ws.for_actor("bob"), agent_name="bob", cell_id=cell, summary="done")
    result = review(ws, target=cell, with_patch=False)
    count = len(result.commits)
    authors = git(repo, "log", "--reverse", "--format=%an <%ae>", f"-{count}").splitlines()
    assert [c.author for c in result.commits] == authors
    made = [(c.made_by, c.committer, c.agent) for c in result.commits]
    assert (
        made
        == [
            ("hive", None, "alice"),  # created by alice
            ("hive", None, "bob"),  # started by bob
            ("git", None, None),  # the hand-written trailer: its author alone
            ("agent", "bob", None),
            ("hive", None, "bob"),  # swarm_complete
        ][-len(made) :]
    ), made
    shown = hive(repo, "review", cell, "--stat", actor="bob")
    assert shown.returncode == 0, shown.stderr
    text = " ".join(shown.stdout.split())
    assert "hand.py by Mallory <m@example.com> with git (no Hive-Committer trailer" in text
    assert "agent.py by agent bob with git (its Hive-Committer trailer); author Mallory" in text
    assert "by hive (complete, for bob); author bob <bob@hive.local>" in text, text
    answer = json.loads(hive(repo, "--json", "review", cell, "--stat", actor="bob").stdout)
    assert [c["made_by"] for c in answer["commits"]] == [m for m, _, _ in made]
    assert answer["commits"][-2]["committer"] == "bob"


def test_a_cell_s_diff_spans_its_merged_branch_whatever_the_commit_dates(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cell's work on a merged branch (a worktree of `hive swarm run`, a clone with a
    slow clock) was ordered by commit date alone, so equal or skewed dates put a commit
    before its parent: the cell's one diff ran from the wrong commit to the wrong one and
    lost the agent's code (and the commits were listed out of the order they were made)."""
    from hive.domain.cells import create_cell, update_cell

    def at(when: str) -> None:
        for name in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
            monkeypatch.setenv(name, when)

    at("2030-01-01T10:00:00")
    cell = create_cell(ws, title="Export", description="first").id
    main = git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip()
    git(repo, "switch", "-q", "-c", "work")
    (repo / "export.py").write_text("def export():\n    return 1\n")
    git(repo, "add", "export.py")
    at("2030-01-01T09:00:00")  # made on a machine whose clock is an hour slow
    git(repo, "commit", "-q", "-m", f"export\n\nHive-Cell: {cell}")
    git(repo, "switch", "-q", main)
    at("2030-01-01T11:00:00")
    update_cell(ws, cell_id=cell, description="main change")
    at("2030-01-01T12:00:00")
    git(repo, "merge", "-q", "--no-ff", "work", "-m", "merge work")

    found = review(ws, target=cell)
    listed = [commit.sha for commit in found.commits]
    assert len(listed) == 3
    for position, sha in enumerate(listed):  # each commit after every one it descends from
        ancestors = set(git(repo, "rev-list", sha).split())
        assert not ancestors.intersection(listed[position + 1 :]), listed
    (one,) = found.cells
    assert {(f.path, f.status) for f in one.files} == {
        ("export.py", "A"),
        (f".hive/cells/{cell.split('-')[1][0]}/{cell}.yaml", "A"),
    }
    assert "+    return 1" in one.patch and "+description: main change" in one.patch
