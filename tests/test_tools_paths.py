"""File tools and permissions against symlinks, listings and hostile paths."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from tests.test_tools import arbiter, configure, envelope, hive

SECRET = "API_KEY=hunter2"


def _secrets_layout(repo: Path) -> None:
    """secrets/ and .env denied for everyone; agent T may write docs/** only."""
    configure(
        repo,
        {
            "permissions": {
                "*": {"*": {"denied_paths": ["secrets/**", ".env"]}},
                "T": {"fs_write": {"allowed_paths": ["docs/**"]}},
            }
        },
    )
    (repo / "secrets").mkdir()
    (repo / "secrets/key.txt").write_text(SECRET + "\n")
    (repo / ".env").write_text("TOKEN=abc\n")
    (repo / "docs").mkdir()
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("API = 1\n")
    os.symlink("secrets", repo / "pub")
    os.symlink("secrets/key.txt", repo / "innocent.txt")
    os.symlink("../secrets", repo / "docs/link")


def test_symlinks_inside_the_repo_to_denied_paths_are_denied(ws: Workspace, repo: Path) -> None:
    _secrets_layout(repo)
    results = envelope(
        repo,
        [
            {"name": "fs_read", "args": {"path": "pub/key.txt"}},
            {"name": "fs_read", "args": {"path": "innocent.txt"}},
            {"name": "search_text", "args": {"pattern": "API", "dir": "pub"}},
            {"name": "fs_list", "args": {"dir": "docs/link"}},
            {"name": "fs_write", "args": {"path": "docs/link/planted.txt", "content": "pwned"}},
            {"name": "fs_read", "args": {"path": "src/app.py"}},
        ],
        agent="T",
    )["results"]
    for denied in results[:5]:
        assert denied["code"] == "permission_denied", denied
        assert denied["path"].startswith("secrets/")
    assert "result" in results[5]
    assert SECRET not in json.dumps(results)


def test_permissions_are_checked_again_when_a_write_is_applied(ws: Workspace, repo: Path) -> None:
    _secrets_layout(repo)
    (repo / "docs/later").mkdir()
    queued = envelope(
        repo,
        [{"name": "fs_write", "args": {"path": "docs/later/x.txt", "content": "pwned"}}],
        agent="T",
    )["results"][0]
    assert queued["result"]["queued"] is True
    (repo / "docs/later").rmdir()
    os.symlink("../secrets", repo / "docs/later")  # swapped after the proposal
    decision = {"decisions": [{"path": "docs/later/x.txt", "action": "approve", "notes": ""}]}
    applied = arbiter(
        repo, "--json", "proposals", "decide", "-", "--allow-write", stdin=json.dumps(decision)
    )
    report = json.loads(applied.stdout)
    assert report[0]["status"] == "failed" and "denied" in report[0]["result"]
    assert not (repo / "secrets/x.txt").exists()


def test_listing_and_search_leave_out_files_the_agent_may_not_read(
    ws: Workspace, repo: Path
) -> None:
    _secrets_layout(repo)
    results = envelope(
        repo,
        [
            {"name": "search_text", "args": {"pattern": "API_KEY|TOKEN|API"}},
            {"name": "fs_list", "args": {"dir": "."}},
        ],
    )["results"]
    found = {m["file"] for m in results[0]["result"]["matches"]}
    assert found == {"src/app.py"}
    listed = set(results[1]["result"]["files"])
    assert "src/app.py" in listed
    assert not listed & {".env", "secrets/key.txt", "innocent.txt", "pub/key.txt"}


def test_an_allowlist_filters_a_listing_of_the_root(ws: Workspace, repo: Path) -> None:
    configure(repo, {"permissions": {"*": {"fs_list": {"allowed_paths": ["src/**"]}}}})
    (repo / "src").mkdir()
    (repo / "src/a.py").write_text("a\n")
    listed = envelope(repo, [{"name": "fs_list", "args": {}}])["results"][0]
    assert listed["result"]["files"] == ["src/a.py"]


def test_search_and_list_never_follow_symlinks_out_of_the_repo(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside_secret.txt"
    outside.write_text("OUTSIDE_SECRET=42\n")
    (tmp_path / "outside_dir").mkdir()
    (tmp_path / "outside_dir/f.txt").write_text("OUTSIDE_SECRET=43\n")
    (repo / "src").mkdir()
    (repo / "src/app.py").write_text("OUTSIDE_SECRET is not here\n")
    os.symlink(outside, repo / "src/link.txt")
    os.symlink(tmp_path / "outside_dir", repo / "src/dirlink")
    os.symlink("../.git/config", repo / "src/gitlink")
    results = envelope(
        repo,
        [
            {"name": "search_text", "args": {"pattern": "OUTSIDE_SECRET|core"}},
            {"name": "fs_list", "args": {"dir": "src"}},
        ],
    )["results"]
    assert [m["file"] for m in results[0]["result"]["matches"]] == ["src/app.py"]
    assert results[1]["result"]["files"] == ["src/app.py"]


def test_fs_write_refuses_directories(ws: Workspace, repo: Path) -> None:
    (repo / "src").mkdir()
    results = envelope(
        repo,
        [
            {"name": "fs_write", "args": {"path": ".", "content": "c"}},
            {"name": "fs_write", "args": {"path": "src/", "content": "c"}},
            {"name": "fs_write", "args": {"path": "src", "content": "c"}},
            {"name": "fs_write", "args": {"path": ".hive/config.yaml", "content": "c"}},
            {"name": "fs_write", "args": {"path": ".git/config", "content": "c"}},
        ],
    )["results"]
    assert [r["code"] for r in results] == ["invalid_input"] * 4 + ["path_outside_repository"]
    assert json.loads(hive(repo, "--json", "proposals", "list").stdout) == []


def test_a_failed_apply_leaves_no_temporary_file(ws: Workspace, repo: Path) -> None:
    envelope(repo, [{"name": "fs_write", "args": {"path": "docs/a.md", "content": "x"}}])
    (repo / "docs").mkdir()
    (repo / "docs/a.md").mkdir()  # the target became a directory
    decision = {"decisions": [{"path": "docs/a.md", "action": "approve", "notes": ""}]}
    result = arbiter(
        repo, "--json", "proposals", "decide", "-", "--allow-write", stdin=json.dumps(decision)
    )
    assert json.loads(result.stdout)[0]["status"] == "failed"
    strays = [p for p in repo.parent.rglob("*") if "hive-tmp" in p.name]
    assert strays == []


def test_write_refused_when_the_file_changed_since_the_proposal(ws: Workspace, repo: Path) -> None:
    envelope(repo, [{"name": "fs_write", "args": {"path": "README.md", "content": "new"}}])
    (repo / "README.md").write_text("edited by a human\n")
    decision = {"decisions": [{"path": "README.md", "action": "approve", "notes": ""}]}
    result = arbiter(
        repo, "--json", "proposals", "decide", "-", "--allow-write", stdin=json.dumps(decision)
    )
    assert json.loads(result.stdout)[0]["status"] == "failed"
    assert (repo / "README.md").read_text() == "edited by a human\n"


def test_a_write_that_could_not_be_applied_is_an_error_of_decide(ws: Workspace, repo: Path) -> None:
    """``proposals decide --allow-write`` that applies one write and fails another
    reports both and exits non-zero with a line naming the failure (it exited 0, so a
    script saw success); the write it could apply is applied."""
    envelope(
        repo,
        [
            {"name": "fs_write", "args": {"path": "README.md", "content": "new"}},
            {"name": "fs_write", "args": {"path": "notes.md", "content": "notes\n"}},
        ],
    )
    (repo / "README.md").write_text("edited by a human\n")
    decision = {
        "decisions": [
            {"path": "README.md", "action": "approve", "notes": ""},
            {"path": "notes.md", "action": "approve", "notes": ""},
        ]
    }
    result = arbiter(repo, "proposals", "decide", "-", "--allow-write", stdin=json.dumps(decision))
    assert result.returncode == 1, result
    assert result.stderr == (
        "error: could not apply README.md: README.md changed since the write was proposed;"
        " propose again\n"
    )
    assert "applied" in result.stdout and "failed" in result.stdout
    assert (repo / "notes.md").read_text() == "notes\n"
    assert (repo / "README.md").read_text() == "edited by a human\n"


def test_catastrophic_regex_is_stopped_by_the_time_budget(ws: Workspace, repo: Path) -> None:
    from hive.domain.files import search_text

    (repo / "evil.txt").write_text("a" * 40 + "!\n")
    found = search_text(str(repo), pattern="(a+)+$", seconds=1.0)
    assert found["timed_out"] is True and found["matches"] == []


def test_decide_with_no_decisions_says_where_it_looked(ws: Workspace, repo: Path) -> None:
    """``hive proposals decide`` with nothing on standard input (its default), or an empty
    file, says so and what to give (it said "invalid DECISIONS ''")."""
    empty = repo / "empty.json"
    empty.write_text("\n")
    for args, where in (
        (("proposals", "decide"), "standard input"),
        (("proposals", "decide", str(empty)), str(empty)),
    ):
        result = hive(repo, *args)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr.startswith(
            f'error: {where} is empty: give the arbiter\'s {{"decisions": '
        )
        assert "'hive proposals decide FILE'" in result.stderr


def test_git_s_and_hive_s_directories_named_in_another_case_are_theirs(
    ws: Workspace, repo: Path
) -> None:
    """Where the file system ignores case (macOS, Windows) ``.GIT/config`` is git's own
    config (remote URLs with their credentials; core.hooksPath runs code): the tools
    refuse ``.git`` and ``.hive`` named in any case as they refuse them named as they
    are. (A directory ``.GIT`` stands for it here, on a file system that keeps case.)"""
    from hive.domain.swarm.complete import swarm_complete

    (repo / ".GIT").mkdir()
    (repo / ".GIT/config").write_text("[remote]\n\turl = https://me:secret@example.com/r\n")
    calls = [
        {"name": "fs_read", "args": {"path": ".GIT/config"}},
        {"name": "fs_write", "args": {"path": ".Git/hooks/pre-commit", "content": "x"}},
        {"name": "fs_write", "args": {"path": ".HIVE/config.yaml", "content": "x"}},
        {"name": "file_read", "args": {"path": ".GIT/config"}},
        {"name": "fs_list", "args": {}},
        {"name": "list_files", "args": {"path": "."}},
        {"name": "search_text", "args": {"pattern": "secret"}},
    ]
    results = envelope(repo, calls)["results"]
    assert [r.get("code") for r in results[:4]] == [
        "path_outside_repository",
        "path_outside_repository",
        "invalid_input",
        "access_denied",
    ], results
    assert not any(path.startswith(".GIT/") for path in results[4]["result"]["files"])
    entries = results[5]["result"]["result"]["entries"]
    assert not any(entry["path"].endswith("/.GIT") for entry in entries)
    assert results[6]["result"]["matches"] == []
    # a nested repository's git directory: git refuses to check such a path out, so a
    # commit holding it broke every clone's checkout (and git fsck --strict: hasDotgit)
    (repo / "vendor/lib/.git").mkdir(parents=True)
    (repo / "vendor/lib/.git/config").write_text("[core]\n")
    nested = envelope(repo, [{"name": "fs_read", "args": {"path": "vendor/lib/.git/config"}}])
    assert nested["results"][0]["code"] == "path_outside_repository"
    for touched in (".GIT/config", "vendor/lib/.git/config", "vendor/lib/.Git./config"):
        with pytest.raises(InvalidInput, match="not a source file hive can commit"):
            swarm_complete(ws, cell_id="hv-none", summary="s", files_touched=[touched])
