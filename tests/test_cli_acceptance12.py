"""Issue 12's CLI tried once more as a new user would (its acceptance audit): each test
failed before the fix it names. The command line runs in-process (``run_hive``, the
console script's own entry point) on real repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import git
from tests.inprocess import Outcome, run_hive


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_hive(["-C", str(repo), *args], env=env)


def ok(result: Outcome) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.fixture
def hived(repo: Path) -> Path:
    ok(hive(repo, "init", "--prefix", "hv"))
    return repo


@pytest.mark.parametrize(
    ("group", "names"),
    [((), None), (("dep",), "add, remove or tree"), (("mail",), "inbox"), (("swarm",), None)],
)
def test_a_missing_command_under_json_is_a_json_usage_error(
    hived: Path, group: tuple[str, ...], names: str | None
) -> None:
    """``hive --json dep`` printed the group's help text on stdout (exit 2): a program
    that asked for JSON could not read what went wrong."""
    shown = hive(hived, "--json", *group)
    assert shown.returncode == 2, shown
    payload = json.loads(shown.stdout)
    path = " ".join(["hive", *group])
    assert payload["code"] == "usage" and f"see '{path} --help'" in payload["error"]
    assert payload["error"].startswith("missing command")
    if names:
        assert names in payload["error"]
    assert shown.stderr == f"error: {payload['error']}\n"
    helped = hive(hived, *group)  # a person still gets the help
    assert "Usage: hive" in helped.stdout and helped.returncode in (0, 2)
    assert "Commands:" in ok(hive(hived, "--json", *group, "--help"))
    assert git(hived, "status", "--porcelain") == ""


LONG = "A title long enough that it cannot fit on one line of eighty columns at all, not even"


def test_history_status_doctor_events_search_and_review_fit_80_columns(hived: Path) -> None:
    """`hive list` fitted 80 columns, but `log` (124), `events` (88 with no arguments),
    `search` (237), `epic status` (99), `swarm status` (139), `doctor` (105) and
    `review --stat` (110) did not."""
    from tests.conftest import agent_env

    worker = agent_env(hived, "BlueLake")
    epic_id, task = (
        c["id"] for c in json.loads(ok(hive(hived, "epic", "create", LONG, "-s", LONG, "--json")))
    )
    ok(hive(hived, "start", task, env=worker))
    ok(hive(hived, "comment", task, "x", env=worker))
    deep = "src/a/very/long/path/to/some/deeply/nested/module/that/goes/on/and/on/forever.py"
    ok(hive(hived, "reserve", deep, "--cell", task, env=worker))
    ok(hive(hived, "update", task, "-p", "0", "--force", "--reason", "the owner is away " * 3))
    wide = {**os.environ, "COLUMNS": "80"}
    commands: list[tuple[str, ...]] = [
        ("log",),
        ("events",),
        ("search", "title"),
        ("epic", "status", epic_id),
        ("swarm", "status", epic_id),
        ("doctor",),
        ("review", task, "--stat"),
    ]
    for command in commands:
        shown = hive(hived, *command, env=wide)
        assert shown.returncode in (0, 1), shown  # doctor: 1 when it finds problems
        lines = shown.stdout.splitlines()
        assert lines and all(len(line) <= 80 for line in lines), (command, shown.stdout)
    log = ok(hive(hived, "log", env=wide)).splitlines()
    assert log[0].startswith(git(hived, "rev-parse", "--short=10", "HEAD").strip())
    assert log[0].endswith("  Test User") and "…" in log[0]  # the subject cut, the author whole
    events = ok(hive(hived, "events", env=wide)).splitlines()
    assert any(line.startswith(tuple("0123456789")) and line.endswith("ms") for line in events)
    review = ok(hive(hived, "review", task, "--stat", env=wide))
    assert deep in review.replace("\n", "")  # wrapped, not cut
    piped = ok(hive(hived, "log"))  # piped without $COLUMNS: whole lines for grep
    assert LONG in piped


def test_a_reading_command_s_help_does_not_promise_one_write(hived: Path) -> None:
    """`hive show --help` said its ids were 'one or more (one write for all)'."""
    shown = ok(hive(hived, "show", "--help"))
    assert "one or more" in shown and "write" not in shown
    assert "one or more (one write for all)" in ok(hive(hived, "close", "--help"))


def test_version_under_json_is_json(hived: Path) -> None:
    """`hive --json --version` printed 'hive 0.1.0'."""
    from hive import __version__

    assert ok(hive(hived, "--version")) == f"hive {__version__}\n"
    for argv in (["--json", "--version"], ["--version", "--json"]):
        assert json.loads(ok(hive(hived, *argv))) == {"version": __version__}


def test_a_subtask_s_diff_in_an_epic_review_is_its_own(hived: Path) -> None:
    """Reviewing an epic, each subtask's one diff listed every sibling's cell file (the
    epic's creation commit carries all their trailers): the same cell reviewed alone
    showed its own files only."""
    from tests.conftest import agent_env

    created = json.loads(
        ok(hive(hived, "epic", "create", "Epic", "-s", "one", "-s", "two", "--json"))
    )
    epic_id, first, second = (cell["id"] for cell in created)
    for cell_id, name, path in ((first, "BlueLake", "a.py"), (second, "GreenCastle", "b.py")):
        env = agent_env(hived, name)
        ok(hive(hived, "start", cell_id, env=env))
        (hived / path).write_text(f"# {cell_id}\n")
        ok(hive(hived, "swarm", "complete", cell_id, "-s", "done", "-f", path, env=env))
    whole = json.loads(ok(hive(hived, "review", epic_id, "--json")))
    cells = {cell["cell_id"]: cell for cell in whole["cells"]}
    for cell_id, sibling in ((first, second), (second, first)):
        paths = [changed["path"] for changed in cells[cell_id]["files"]]
        assert not any(sibling in path for path in paths), paths
        assert f"{sibling}.yaml" not in cells[cell_id]["patch"]
        alone = json.loads(ok(hive(hived, "review", cell_id, "--json")))["cells"][0]
        assert paths == [changed["path"] for changed in alone["files"]]
        assert cells[cell_id]["patch"] == alone["patch"]
    epic_paths = [changed["path"] for changed in cells[epic_id]["files"]]
    assert epic_paths and all(first not in p and second not in p for p in epic_paths)
    commits = {commit["sha"]: commit for commit in whole["commits"]}
    creation = next(c for c in commits.values() if c["event"] == "create-epic")
    assert len(creation["files"]) == 3  # a commit's own diff still shows all it changed


def test_update_to_in_progress_respects_open_blockers_as_start_does(hived: Path) -> None:
    """`hive start` refused a blocked cell, but `hive update ID -s in_progress` started
    it without a word; and `update -s closed` said 'use --force', which it ignored."""
    blocker = json.loads(ok(hive(hived, "create", "blocker", "--json")))["id"]
    waiting = json.loads(ok(hive(hived, "create", "waiting", "--json")))["id"]
    ok(hive(hived, "dep", "add", waiting, blocker))
    head = git(hived, "rev-parse", "HEAD")
    for status in ("in_progress", "closed"):
        refused = hive(hived, "update", waiting, "-s", status)
        assert refused.returncode == 4, refused
        assert "blocked by open" in refused.stderr and "--force" in refused.stderr
    assert git(hived, "rev-parse", "HEAD") == head
    ok(hive(hived, "update", waiting, "-s", "in_progress", "--force", "--reason", "agreed"))
    assert f"forced: start {waiting} despite open blockers {blocker}: agreed" in git(
        hived, "log", "-1", "--format=%B"
    )
    ok(hive(hived, "update", waiting, "-s", "blocked"))
    ok(hive(hived, "update", waiting, "-s", "in_progress"))  # work resumed: not a start
    ok(hive(hived, "update", waiting, "-s", "closed", "--force", "--reason", "moot"))
    assert f"forced: close {waiting} despite open blockers {blocker}: moot" in git(
        hived, "log", "-1", "--format=%B"
    )
    ok(hive(hived, "update", blocker, "-s", "in_progress"))  # nothing blocks it


def test_shared_state_lists_fit_80_columns(hived: Path) -> None:
    """`ctx list` (137), `blackboard list` (92), `scratchpad list` (200), `todo show`
    (110) and `memory show` (119 columns) ran past an 80-column terminal."""
    from tests.conftest import agent_env

    env = agent_env(hived, "BlueLake")
    value = "a value that goes on and on, well beyond what eighty columns of a terminal hold"
    todos = json.dumps([{"content": value, "status": "pending"}])
    pad = "notes/a-rather-long-file-name.md"
    for command in (
        ("ctx", "put", "some.rather.long.key.name", value),
        ("blackboard", "set", "board-key", value),
        ("scratchpad", "write", pad, "text", "--title", value),
        ("todo", "set", todos),
        ("memory", "add", "decisions", value),
    ):
        ok(hive(hived, *command, env=env))
    wide = {**env, "COLUMNS": "80"}
    for command in (
        ("ctx", "list"),
        ("blackboard", "list"),
        ("scratchpad", "list"),
        ("todo", "show"),
        ("memory", "show"),
    ):
        shown = ok(hive(hived, *command, env=wide))
        assert all(len(line) <= 80 for line in shown.splitlines()), (command, shown)
    assert "some.rather.long.key.name" in ok(hive(hived, "ctx", "list", env=wide))
    assert pad in ok(hive(hived, "scratchpad", "list", env=wide))  # the path whole
    for command in (("todo", "show"), ("memory", "show")):  # wrapped, not cut
        assert value in " ".join(ok(hive(hived, *command, env=wide)).split())
    assert value in ok(hive(hived, "scratchpad", "list", env=env))  # piped: whole


def test_releasing_another_agent_s_reservations_says_so_in_plain_words(hived: Path) -> None:
    """The refusal read '... is held by BlueLake; only BlueLake may release the
    reservations it'."""
    from tests.conftest import agent_env

    ok(hive(hived, "reserve", "src/**", env=agent_env(hived, "BlueLake")))
    refused = hive(hived, "release", "--agent", "BlueLake", env=agent_env(hived, "Mallory"))
    assert refused.returncode == 5
    assert "is held by BlueLake; only BlueLake may release it (" in refused.stderr, refused.stderr


def test_the_quick_help_fits_80_columns(hived: Path) -> None:
    """`hive --help` (and `hive` alone), the first thing a new user reads, ran to 88
    columns."""
    for argv in (["--help"], [], ["-h"]):
        shown = ok(hive(hived, *argv))
        assert "Commands:" in shown and "reservations" in shown
        assert all(len(line) <= 80 for line in shown.splitlines()), shown


def test_a_hive_file_is_named_by_every_command_not_only_init(repo: Path) -> None:
    """Where `.hive` is a file, `hive init` said so, but `hive list` (and every other
    command) said only "run 'hive init' first", which then refused."""
    (repo / ".hive").write_text("notes\n")
    for command in (("list",), ("ready",), ("doctor",), ("create", "x"), ("stats",)):
        shown = hive(repo, "--json", *command)
        assert shown.returncode == 2, shown
        error = json.loads(shown.stdout)
        assert error["code"] == "not_initialized", error
        assert ".hive is a file, not a directory" in error["error"]
        assert "move or rename it" in error["error"]
    assert (repo / ".hive").read_text() == "notes\n"


def test_stats_overrides_swarm_state_and_strategy_fit_80_columns(hived: Path) -> None:
    """`stats` with many assignees (100 columns), `log --overrides` (104), `swarm
    state` (98) and `swarm select-strategy` (114) ran past an 80-column terminal."""
    from tests.conftest import agent_env

    names = [f"Agent{n}WithABC" for n in range(6)]  # 13 letters: a count fell to the next line
    for name in names:
        cell = json.loads(ok(hive(hived, "create", f"work of {name}", "--json")))["id"]
        ok(hive(hived, "start", cell, env=agent_env(hived, name)))
    ok(hive(hived, "update", cell, "-p", "0", "--force", "--reason", "the owner is away " * 4))
    env = agent_env(hived, names[0])
    ok(hive(hived, "blackboard", "set", "k", "a value that goes on " * 6, env=env))
    wide = {**os.environ, "COLUMNS": "80"}
    commands: list[tuple[str, ...]] = [
        ("stats",),
        ("log", "--overrides"),
        ("swarm", "state"),
        ("swarm", "select-strategy", "add login " * 12),
    ]
    for command in commands:
        shown = ok(hive(hived, *command, env=wide))
        assert all(len(line) <= 80 for line in shown.splitlines()), (command, shown)
    stats = ok(hive(hived, "stats", env=wide))
    assert all(name in " ".join(stats.split()) for name in names)  # wrapped, not cut
    assert all(f"{name} 1" in stats for name in names)  # a count stays with its name
    piped = ok(hive(hived, "log", "--overrides"))
    assert "the owner is away " * 3 in piped
