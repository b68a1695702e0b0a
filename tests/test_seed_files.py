"""File tools of the seeds: fs_list's regex patterns and directories above an
allowlist (seed 000); file_read / list_files in the context directory (seed 004)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from hive.domain import files
from hive.domain.workspace import Workspace
from tests.seedkit import call_beside_a_pipe, configure, error, result


def _tree(repo: Path) -> None:
    for path in ("src/sub/a.py", "src/sub/b.txt", "src/c.py", "lib/d.py", "secrets/k.txt"):
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"{path}\n")


def test_fs_list_accepts_regex_patterns(ws: Workspace, repo: Path) -> None:
    _tree(repo)
    listed = result(repo, "A", "fs_list", {"dir": "src", "pattern": r"regex:\.py$"})
    assert listed["files"] == ["src/c.py", "src/sub/a.py"] and listed["count"] == 2
    globbed = result(repo, "A", "fs_list", {"dir": ".", "pattern": "*.txt"})
    assert "src/sub/b.txt" in globbed["files"] and "src/c.py" not in globbed["files"]
    bad = error(repo, "A", "fs_list", {"pattern": "regex:(unclosed"})
    assert bad["code"] == "invalid_input" and "invalid regex" in bad["error"]


def test_fs_list_reads_the_seeds_anchored_example_as_a_regex(ws: Workspace, repo: Path) -> None:
    """Seed 000's own envelope lists files with {"pattern": "py$"}: a glob has no
    anchors, so a pattern ending in $ or starting with ^ is a regex (as if regex:)."""
    _tree(repo)
    listed = result(repo, "A", "fs_list", {"dir": ".", "pattern": "py$", "max_results": 200})
    assert listed["files"] == ["lib/d.py", "src/c.py", "src/sub/a.py"]
    assert result(repo, "A", "fs_list", {"pattern": "^src/sub/"})["files"] == [
        "src/sub/a.py",
        "src/sub/b.txt",
    ]
    assert result(repo, "A", "fs_list", {"pattern": "[$]"})["files"] == []  # a literal $
    bad = error(repo, "A", "fs_list", {"pattern": "^(unclosed"})
    assert bad["code"] == "invalid_input" and "invalid regex" in bad["error"]


def test_hive_records_do_not_crowd_out_the_code(ws: Workspace, repo: Path) -> None:
    """fs_list and search_text leave .hive/ out unless dir is in it: with many cells the
    first page of a listing was hive's records and no source file."""
    _tree(repo)
    for number in range(30):
        result(repo, "A", "hive_create", {"title": f"cell {number} mentions src"})
    listed = result(repo, "A", "fs_list", {"max_results": 10})
    assert "src/c.py" in listed["files"] and "lib/d.py" in listed["files"]
    assert not [f for f in listed["files"] if f.startswith(".hive/")]
    found = result(repo, "A", "search_text", {"pattern": "src"})["matches"]
    assert found and {m["file"] for m in found} == {"src/c.py", "src/sub/a.py", "src/sub/b.txt"}
    cells = result(repo, "A", "fs_list", {"dir": ".hive/cells"})
    assert cells["count"] == 30 and cells["files"][0].startswith(".hive/cells/")
    assert (
        len(result(repo, "A", "search_text", {"pattern": "mentions", "dir": ".hive"})["matches"])
        == 30
    )


def test_search_says_when_files_were_left_unsearched(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tree(repo)
    monkeypatch.setattr(files, "MAX_SEARCH_FILES", 2)  # of the 5 files, 2 are searched
    cut = result(repo, "A", "search_text", {"pattern": "d"})
    assert cut["truncated"] is True and not cut.get("timed_out")
    assert result(repo, "A", "search_text", {"pattern": "d", "dir": "lib"})["truncated"] is False


def test_search_skips_a_named_pipe(ws: Workspace, repo: Path) -> None:
    """search_text opened every listed path: a named pipe in the repository blocked the
    search until its 10 s deadline, and the files after it were never searched."""
    _tree(repo)
    os.mkfifo(repo / "lib/a_pipe")  # listed before lib/d.py
    found = result(repo, "A", "search_text", {"pattern": "d\\.py", "dir": "lib"})
    assert found["matches"] == [{"file": "lib/d.py", "line": 1, "text": "lib/d.py"}]
    assert found["truncated"] is False and found["timed_out"] is False
    piped = error(repo, "A", "fs_read", {"path": "lib/a_pipe"})
    assert piped["code"] == "invalid_input" and "not a regular file" in piped["error"]


def test_reading_a_directory_or_listing_a_file_names_the_tool_meant(
    ws: Workspace, repo: Path
) -> None:
    """fs_read of a directory answered "no file 'src'" (it is there) and fs_list of a
    file "no directory": each now says what the path is and which tool takes it."""
    _tree(repo)
    folder = error(repo, "A", "fs_read", {"path": "src"})
    assert folder == {
        "error": "'src' is a directory, not a file: fs_list lists its files",
        "code": "invalid_input",
    }
    single = error(repo, "A", "fs_list", {"dir": "src/c.py"})
    assert single == {
        "error": "'src/c.py' is a file, not a directory: fs_read reads it",
        "code": "invalid_input",
    }
    assert error(repo, "A", "fs_read", {"path": "src/none.py"})["code"] == "not_found"
    assert error(repo, "A", "fs_list", {"dir": "none"})["code"] == "not_found"
    os.symlink("gone.py", repo / "src/dangling.py")  # not there: not found, not "a pipe"
    assert error(repo, "A", "fs_read", {"path": "src/dangling.py"})["code"] == "not_found"


def test_a_binary_file_is_refused_not_read_as_mangled_text(ws: Workspace, repo: Path) -> None:
    """fs_read and file_read of an image or an archive answered its bytes decoded with
    replacement characters: up to 50 KB (1 MB) of noise in an agent's context. A file
    with a NUL byte in its first 8,000 bytes (git's rule) is refused, saying why; text
    in any encoding without NULs (Latin-1 here) is still read."""
    (repo / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(500))
    (repo / "latin.txt").write_bytes("café\n".encode("latin-1"))
    refused = error(repo, "A", "fs_read", {"path": "logo.png"})
    assert refused == {
        "error": "'logo.png' is a binary file (516 bytes), not text: fs_read reads text files",
        "code": "invalid_input",
    }
    other = error(repo, "A", "file_read", {"path": "logo.png"})
    assert other["code"] == "invalid_input" and other["error"].startswith("File is binary")
    assert result(repo, "A", "fs_read", {"path": "latin.txt"})["content"] == "caf\ufffd\n"
    assert result(repo, "A", "file_read", {"path": "latin.txt"})["result"]["content"] == (
        "caf\ufffd\n"
    )


def test_a_cut_read_ends_on_a_whole_character(ws: Workspace, repo: Path) -> None:
    """fs_read with max_bytes inside a multi-byte character ended its content with
    U+FFFD, a character the file does not hold."""
    (repo / "notes.md").write_text("café naïve\n", encoding="utf-8")
    cut = result(repo, "A", "fs_read", {"path": "notes.md", "max_bytes": 4})
    assert cut["content"] == "caf" and cut["truncated"] is True and cut["bytes"] == 13
    assert result(repo, "A", "fs_read", {"path": "notes.md", "max_bytes": 5})["content"] == "café"
    (repo / "bad.txt").write_bytes(b"a\xffb\xc3")  # a bad byte, and one cut by the file's end
    assert result(repo, "A", "fs_read", {"path": "bad.txt"})["content"] == "a\ufffdb\ufffd"


def test_an_absolute_path_inside_the_repository_is_taken_by_every_path_tool(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """An agent that knows its files by absolute path (as editors give them) reserved
    /repo/src/c.py, then had swarm_complete (and swarm_progress, fs_read, a cell's files)
    refuse the same path as "absolute; use a path inside the repository". Each takes it
    now, from the repository's top directory; one outside is still refused."""
    from tests.conftest import git

    _tree(repo)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tree")
    full = str(repo / "src/c.py")
    result(repo, "A", "swarmmail_init", {"agent_name": "A"})
    cell = result(repo, "A", "hive_create", {"title": "t", "files": [full]})
    assert cell["files_owned"] == ["src/c.py"]
    result(repo, "A", "hive_start", {"id": cell["id"]})
    assert result(repo, "A", "swarmmail_reserve", {"paths": [full]})["granted"]
    assert result(repo, "A", "fs_read", {"path": full})["path"] == "src/c.py"
    assert "src/c.py" in result(repo, "A", "fs_list", {"dir": str(repo / "src")})["files"]
    (repo / "src/c.py").write_text("changed\n")
    progress = {"cell_id": cell["id"], "status": "in_progress", "files_touched": [full]}
    result(repo, "A", "swarm_progress", progress)
    done = {"cell_id": cell["id"], "summary": "s", "files_touched": [full]}
    assert result(repo, "A", "swarm_complete", done)["outcome"]["files_touched"] == ["src/c.py"]
    assert git(repo, "show", "--name-only", "--format=", "HEAD").count("src/c.py") == 1
    outside = tmp_path / "elsewhere.py"
    outside.write_text("x\n")
    refused = error(repo, "A", "fs_read", {"path": str(outside)})
    assert refused["code"] == "path_outside_repository"
    configure(repo, agents={"B": {"directory": "lib"}})  # B's relative paths start in lib/
    assert result(repo, "B", "fs_read", {"path": full})["path"] == "src/c.py"
    assert result(repo, "B", "fs_read", {"path": "d.py"})["path"] == "lib/d.py"


def test_files_touched_given_a_directory_or_a_pattern_says_to_give_files(
    ws: Workspace, repo: Path
) -> None:
    """swarm_complete with a directory in files_touched said only that it is 'not a
    regular file', and with a glob (as reservations take) 'exists neither in the
    working tree nor in HEAD; check the path': an agent was left to guess that it
    must list the files themselves."""
    _tree(repo)
    result(repo, "A", "swarmmail_init", {"agent_name": "A"})
    cell = result(repo, "A", "hive_create", {"title": "t"})["id"]
    result(repo, "A", "hive_start", {"id": cell})
    folder = error(
        repo, "A", "swarm_complete", {"cell_id": cell, "summary": "s", "files_touched": ["src/sub"]}
    )
    assert folder == {
        "error": "src/sub is a directory: files_touched takes the files you changed in it",
        "code": "invalid_input",
        "field": "files_touched",
    }
    glob = error(
        repo, "A", "swarm_complete", {"cell_id": cell, "summary": "s", "files_touched": ["src/**"]}
    )
    assert glob["field"] == "files_touched" and glob["error"].endswith(
        "files_touched takes the paths of files, not patterns"
    )
    typo = error(
        repo,
        "A",
        "swarm_complete",
        {"cell_id": cell, "summary": "s", "files_touched": ["src/nope.py"]},
    )
    assert typo["error"].endswith("; check the path")
    done = {"cell_id": cell, "summary": "s", "files_touched": ["src/sub/a.py"]}
    assert result(repo, "A", "swarm_complete", done)["files_committed"] == ["src/sub/a.py"]


def test_a_write_proposal_for_a_named_pipe_is_refused(ws: Workspace, repo: Path) -> None:
    """fs_write read the current file to record what the proposal was made against:
    for a named pipe that read blocked the call until something wrote to the pipe."""
    os.mkfifo(repo / "a_pipe")
    refused = call_beside_a_pipe(
        repo / "a_pipe", repo, "fs_write", {"path": "a_pipe", "content": "x"}
    )
    assert refused == {
        "error": "fs_write writes regular files only: 'a_pipe' is not one",
        "code": "invalid_input",
    }


def test_listing_a_directory_above_an_allowed_pattern(ws: Workspace, repo: Path) -> None:
    _tree(repo)
    configure(
        repo,
        tools={
            "permissions": {
                "*": {
                    "fs_list": {"allowed_paths": ["src/sub/**"], "denied_paths": ["secrets/**"]},
                    "search_text": {"allowed_paths": ["src/sub/**"]},
                }
            }
        },
    )
    assert result(repo, "A", "fs_list", {"dir": "src"})["files"] == [
        "src/sub/a.py",
        "src/sub/b.txt",
    ]
    assert result(repo, "A", "fs_list", {"dir": "."})["files"] == ["src/sub/a.py", "src/sub/b.txt"]
    assert result(repo, "A", "fs_list", {"dir": "src/sub"})["count"] == 2
    found = result(repo, "A", "search_text", {"pattern": "py", "dir": "src"})["matches"]
    assert [m["file"] for m in found] == ["src/sub/a.py"]
    outside = error(repo, "A", "fs_list", {"dir": "lib"})
    assert outside["code"] == "permission_denied" and "allowed_paths" in outside["error"]
    denied = error(repo, "A", "fs_list", {"dir": "secrets"})
    assert denied["code"] == "permission_denied" and "denied_paths" in denied["error"]


def test_all_tool_schemas_fit_in_8000_tokens(ws: Workspace, repo: Path) -> None:
    """~4 characters per token, measured on what `hive tools schema` prints."""
    from tests.seedkit import cli

    for format in ("mcp", "openai", "anthropic"):
        code, out = cli(repo, "tools", "schema", "--format", format)
        assert code == 0
        assert len(out) / 4 < 8000, (format, len(out) / 4)


def test_search_reads_large_files_and_long_lines(ws: Workspace, repo: Path) -> None:
    """search_text searches a file over 1 MB (a lock file, generated code) line by line; it
    skipped it and said nothing. A line's match counts on its first 4,000 characters, and
    the lines after a long one keep their numbers."""
    lock = "\n".join(f'"dep-{n}": "1.0.{n}",' for n in range(60_000)) + '\n"needle": "2.0",\n'
    assert len(lock) > files.MAX_READ
    (repo / "package-lock.json").write_text(lock)
    (repo / "long.txt").write_text("a" * 10_000 + "needle\n" + "b" * 3_000 + "needle\nneedle\n")
    found = result(repo, "A", "search_text", {"pattern": "needle"})
    assert [(m["file"], m["line"]) for m in found["matches"]] == [
        ("long.txt", 2),
        ("long.txt", 3),
        ("package-lock.json", 60_001),
    ]
    assert found["truncated"] is False
