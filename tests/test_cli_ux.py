"""The CLI as a new user meets it (issue 12, "What a person expects from the CLI"),
run in-process with typer's test runner on real repositories."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from hive.cli import entry
from hive.cli.main import app
from tests.conftest import agent_env, git

LONG = "A fairly long title that goes on and on so that it cannot fit in eighty columns at all"


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    """``hive -C repo ARGS`` in this process; as the person unless ``env`` says otherwise."""
    runner = CliRunner()
    return runner.invoke(app, ["-C", str(repo), *args], env=env, catch_exceptions=False)


def ok(result: Any) -> str:
    assert result.exit_code == 0, result.output
    return str(result.stdout)


def data(result: Any) -> Any:
    return json.loads(ok(result))


@pytest.fixture
def hived(repo: Path) -> Path:
    ok(hive(repo, "init", "--prefix", "hv"))
    return repo


def create(repo: Path, title: str, *options: str) -> str:
    cell_id: str = data(hive(repo, "create", title, "--json", *options))["id"]
    return cell_id


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


# ------------------------------------------------------------------ output fits the terminal


def test_list_ready_show_fit_80_columns_and_never_cut_an_id(hived: Path) -> None:
    long_id = create(hived, LONG, "-p", "1")
    short_id = create(hived, "Short one", "--assignee", "Somebody With A Very Long Name")
    env = {"COLUMNS": "80"}
    for command in (["list"], ["ready"], ["list", "--parent", long_id], ["blocked"]):
        shown = ok(hive(hived, *command, env=env))
        assert all(len(line) <= 80 for line in shown.splitlines()), shown
    table = ok(hive(hived, "list", env=env))
    assert long_id in table and short_id in table and "A fairly long title" in table
    assert "…" in table  # the title was cut, with an ellipsis
    detail = ok(hive(hived, "show", long_id, env=env))
    assert all(len(line) <= 80 for line in detail.splitlines())
    assert long_id in detail and "cannot fit" in detail  # wrapped, not cut
    ok(hive(hived, "reserve", "src/some/really/long/directory/name/that/goes/on/**"))
    reservations = ok(hive(hived, "reservations", env=env))
    assert all(len(line) <= 80 for line in reservations.splitlines()), reservations
    piped = ok(hive(hived, "list"))  # no terminal, no $COLUMNS: whole lines for grep
    assert LONG in piped
    assert "Somebody With A Very Long Name" in piped  # was cut to 16 columns even piped
    assert "Somebody With A Very Long Name" not in table  # at 80 columns it is cut


def test_piped_tables_keep_long_agent_names_whole(
    hived: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/cli.md: piped output without $COLUMNS is never cut, so grep sees whole
    lines; the assignee of hive list / ready (lean path too) and the agent of hive
    reservations were cut to 16 columns all the same."""
    name = "An-Agent-With-A-Very-Long-Name"
    create(hived, "Long-named assignee", "--assignee", name)
    monkeypatch.delenv("COLUMNS", raising=False)
    for command in ("list", "ready"):
        assert entry.dispatch(entry.parse(["-C", str(hived), command])) == 0  # the lean path
        assert name in capsys.readouterr().out
    assert name in ok(hive(hived, "list", "--assignee", name))
    ok(hive(hived, "reserve", "docs/**", env=agent_env(hived, name)))
    piped = ok(hive(hived, "reservations")).splitlines()
    assert name in piped[1], piped
    narrow = ok(hive(hived, "reservations", env={"COLUMNS": "80"})).splitlines()
    assert name not in narrow[1] and "…" in narrow[1]


def test_the_lean_list_and_ready_fit_80_columns(
    hived: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = [create(hived, LONG), create(hived, "Second")]
    monkeypatch.setenv("COLUMNS", "80")
    for command in ("list", "ready"):
        assert entry.dispatch(entry.parse(["-C", str(hived), command])) == 0  # the lean path
        shown = capsys.readouterr().out
        assert all(len(line) <= 80 for line in shown.splitlines()), shown
        assert all(cell_id in shown for cell_id in ids) and "…" in shown


def test_the_lean_list_counts_wide_characters_as_two_columns(
    hived: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import unicodedata

    def columns(line: str) -> int:
        return sum(2 if unicodedata.east_asian_width(char) in "WF" else 1 for char in line)

    wide = create(hived, "日本語のタイトルはとても長いのでこの行は八十桁に収まりません" * 2)
    named = create(hived, "Short", "--assignee", "山田太郎")
    monkeypatch.setenv("COLUMNS", "80")
    assert entry.dispatch(entry.parse(["-C", str(hived), "list"])) == 0  # the lean path
    shown = capsys.readouterr().out
    assert all(columns(line) <= 80 for line in shown.splitlines()), shown
    assert wide in shown and named in shown and "…" in shown and "山田太郎" in shown
    starts = {columns(line.split("TITLE")[0]) for line in shown.splitlines() if "TITLE" in line}
    rows = [line for line in shown.splitlines() if line.startswith((wide, named))]
    assert {
        columns(row[: row.index("Short" if named in row else "日本")]) for row in rows
    } == starts


# ------------------------------------------------------------------ blocked work is visible


def test_blocked_show_start_and_stats(hived: Path) -> None:
    blocker = create(hived, "Design the schema", "-p", "1")
    waiting = create(hived, "Write the migration", "--dep", f"blocks:{blocker}")
    free = create(hived, "Unrelated", "-t", "bug")
    blocked = data(hive(hived, "blocked", "--json"))
    assert [item["id"] for item in blocked] == [waiting]
    assert blocked[0]["blocked_by"] == [blocker]
    assert blocked[0]["open_blockers"][0]["title"] == "Design the schema"
    shown_blocked = ok(hive(hived, "blocked"))
    assert f"{waiting} waits on {blocker} [open]" in shown_blocked
    row = next(line for line in shown_blocked.splitlines() if line.startswith(waiting))
    assert row.split()[:5] == [waiting, "P2", "task", "open", "-"], row  # as in hive list

    shown = ok(hive(hived, "show", waiting))
    assert "blocked by" in shown and blocker in shown
    assert data(hive(hived, "show", waiting, "--json"))["blocked_by"] == [blocker]

    before = head(hived)
    refused = hive(hived, "start", waiting)
    assert refused.exit_code == 4
    assert f"blocked by open {blocker}" in refused.stderr and "--force" in refused.stderr
    assert head(hived) == before
    started = data(
        hive(hived, "start", waiting, "--force", "--reason", "schema is agreed", "--json")
    )
    assert started["status"] == "in_progress"
    message = git(hived, "log", "-1", "--format=%B")
    assert f"Hive-Override: Test User forced: start {waiting} despite open blockers {blocker}" in (
        message
    )
    assert "schema is agreed" in message
    ok(hive(hived, "update", waiting, "--status", "open"))
    ok(hive(hived, "start", waiting, "--force"))  # no reason: worded as a forced claim is
    assert (
        f"Hive-Override: Test User forced: start {waiting} despite open blockers {blocker}:"
        " (no reason given)\n"
    ) in git(hived, "log", "-1", "--format=%B")

    ok(hive(hived, "close", free))
    stats = data(hive(hived, "stats", "--json"))
    assert stats["total"] == 3 and stats["open"] == 2 and stats["blocked"] == 1
    assert stats["by_status"]["in_progress"] == 1 and stats["by_status"]["closed"] == 1
    assert stats["by_type"] == {"bug": 1, "task": 2}
    assert stats["by_priority"]["P1"] == 1 and stats["by_priority"]["P2"] == 2
    assert stats["by_assignee"]["Test User"] == 1
    assert stats["lead_time"]["closed"] == 1 and stats["lead_time"]["mean_hours"] >= 0
    text = ok(hive(hived, "stats"))
    assert "3 cells: 2 not closed (" in text and "lead time" in text
    assert "by status    open 1, in_progress 1, closed 1" in text  # the headline's 2, split


def test_stats_shows_lead_time_in_a_unit_that_fits(hived: Path) -> None:
    """A cell closed within seconds: 'Ns', not '0.0h' (--json keeps hours, precise)."""
    from hive.text import duration

    assert [duration(s) for s in (0.4, 9.96, 42, 59.4, 59.96, 60, 210, 3599.9, 5400)] == [
        "0.4s",
        "10s",
        "42s",
        "59s",
        "1.0min",
        "1.0min",
        "3.5min",
        "1.0h",
        "1.5h",
    ]
    assert [duration(s) for s in (86399, 86400 * 3.25)] == ["1.0d", "3.2d"]
    cell = data(hive(hived, "create", "quick", "--json"))["id"]
    ok(hive(hived, "close", cell))
    hours = data(hive(hived, "stats", "--json"))["lead_time"]
    assert hours["closed"] == 1 and 0 < hours["mean_hours"] * 3600 < 60, hours
    line = next(x for x in ok(hive(hived, "stats")).splitlines() if "lead time" in x)
    mean = line.split("mean ")[1].split(",")[0]
    assert mean == duration(hours["mean_hours"] * 3600) and mean.endswith("s"), line
    assert "h," not in line and float(mean[:-1]) < 60, line


def test_stats_and_doctor_count_one_cell_in_the_singular(hived: Path) -> None:
    ok(hive(hived, "create", "only one"))
    assert ok(hive(hived, "stats")).startswith("1 cell: 1 not closed")
    assert "checked 1 cell:" in ok(hive(hived, "doctor"))


# ------------------------------------------------------------------ several ids


def test_several_ids_one_commit_all_or_nothing(hived: Path) -> None:
    a, b, c = (create(hived, f"cell {n}") for n in "abc")
    before = head(hived)
    refused = hive(hived, "close", a, "nope", c)
    assert refused.exit_code == 3
    assert "no cell matches id 'nope'" in refused.stderr
    assert "nothing was changed" in refused.stderr
    assert head(hived) == before
    closed = data(hive(hived, "close", a, b, c, "--reason", "done", "--json"))
    assert [cell["id"] for cell in closed] == [a, b, c]
    assert git(hived, "rev-list", "--count", f"{before}..HEAD").strip() == "1"
    message = git(hived, "log", "-1", "--format=%B")
    assert message.startswith("hive: close 3 cells")
    assert all(f"Hive-Cell: {cell_id}" in message for cell_id in (a, b, c))
    assert git(hived, "status", "--porcelain") == ""

    again = hive(hived, "reopen", a, b)
    assert ok(again).count("reopened") == 2
    partly = hive(hived, "reopen", a, c)  # a is open again: refused, c stays closed
    assert partly.exit_code == 4 and "nothing was changed" in partly.stderr
    assert data(hive(hived, "show", c, "--json"))["status"] == "closed"
    updated = data(hive(hived, "update", a, b, "-p", "0", "--json"))
    assert [cell["priority"] for cell in updated] == [0, 0]
    shown = data(hive(hived, "show", a, b, "--json"))
    assert [cell["id"] for cell in shown] == [a, b]
    deleted = data(hive(hived, "delete", a, b, "--json"))
    assert all(cell["deleted_at"] for cell in deleted)


def test_closing_a_blocker_and_what_it_blocks_together_works_in_any_order(hived: Path) -> None:
    blocker = create(hived, "first")
    waiting = create(hived, "second", "--dep", f"blocks:{blocker}")
    closed = data(hive(hived, "close", waiting, blocker, "--json"))
    assert {cell["status"] for cell in closed} == {"closed"}


# ------------------------------------------------------------------ a claimed cell is respected


def test_a_claimed_cell_is_respected_by_people_and_agents(hived: Path) -> None:
    cell_id = create(hived, "Claimed work")
    ok(hive(hived, "start", cell_id, env=agent_env(hived, "BlueLake")))
    before = head(hived)
    other_agent = agent_env(hived, "GreenCastle")
    for command in (
        ["update", cell_id, "--title", "Mine now"],
        ["update", cell_id, "-p", "0"],
        ["close", cell_id],
        ["delete", cell_id],
    ):
        for env in (other_agent, None):  # another agent, and a person without --force
            refused = hive(hived, *command, env=env)
            assert refused.exit_code == 5, (command, refused.output)
            assert "only BlueLake may" in refused.stderr
        forced_agent = hive(hived, *command, "--force", "--reason", "x", env=other_agent)
        assert forced_agent.exit_code == 5  # an agent is no coordinator
    assert head(hived) == before
    ok(hive(hived, "update", cell_id, "-p", "0", "--force", "--reason", "urgent now"))
    message = git(hived, "log", "-1", "--format=%B")
    assert f"Hive-Override: Test User (person) update {cell_id} of BlueLake: urgent now" in message
    ok(hive(hived, "close", cell_id, "--force", "--reason", "BlueLake is gone"))
    assert "BlueLake is gone" in git(hived, "log", "-1", "--format=%B")


# ------------------------------------------------------------------ messages naming the next step


def test_mail_to_an_unregistered_recipient_says_how_to_register(hived: Path) -> None:
    sender = agent_env(hived, "BlueLake")
    ok(hive(hived, "agent", "register", "GreenCastle"))
    before = git(hived, "rev-parse", "refs/hive/mail", check=False)
    refused = hive(hived, "mail", "send", "Nobody", "-s", "hello", env=sender)
    assert refused.exit_code == 3
    assert "unknown recipient(s) Nobody: not registered" in refused.stderr
    assert "hive agent register Nobody" in refused.stderr and "HIVE_AGENT_TOKEN" in refused.stderr
    assert git(hived, "rev-parse", "refs/hive/mail", check=False) == before


def test_the_commands_messages_suggest_work_for_a_name_with_spaces(hived: Path) -> None:
    """git's user.name is often "Jane Doe": a suggested command is pasted as it is shown."""
    import shlex

    sender = agent_env(hived, "BlueLake")
    refused = hive(hived, "mail", "send", "Jane Doe", "-s", "hello", env=sender)
    assert refused.exit_code == 3
    suggested = refused.stderr.split("register it with '")[1].split("'")[0]
    assert shlex.split(suggested) == ["hive", "agent", "register", "Jane Doe"], suggested
    registered = ok(hive(hived, *shlex.split(suggested)[1:]))
    export = registered.splitlines()[-1]
    words = shlex.split(export)
    assert words[:2] == ["export", "HIVE_AGENT=Jane Doe"], export
    token = words[2].removeprefix("HIVE_AGENT_TOKEN=")
    env = {"HIVE_AGENT": "Jane Doe", "HIVE_AGENT_TOKEN": token}
    ok(hive(hived, "mail", "send", "BlueLake", "-s", "hi", env=env))
    taken = hive(hived, "agent", "register", "Jane Doe")
    retire = taken.stderr.split("retire it ('")[1].split("'")[0]
    assert shlex.split(retire) == ["hive", "agent", "retire", "Jane Doe"], taken.stderr


def test_init_where_hive_is_a_file_says_so(repo: Path) -> None:
    (repo / ".hive").write_text("not a directory\n")
    refused = hive(repo, "init")
    assert refused.exit_code == 2
    assert ".hive is a file, not a directory" in refused.stderr
    assert "move or rename it" in refused.stderr and "internal error" not in refused.stderr
    as_json = hive(repo, "init", "--json")
    assert json.loads(as_json.stdout)["code"] == "invalid_input"


def test_a_verify_entry_that_is_not_a_mapping_says_what_it_takes(hived: Path) -> None:
    from hive.domain.swarm.complete import verify_settings
    from hive.domain.workspace import Workspace
    from hive.errors import InvalidInput

    config = hived / ".hive" / "config.yaml"
    lines = config.read_text().splitlines()
    config.write_text("\n".join([*lines, "verify: [pytest -q]"]) + "\n")
    git(hived, "commit", "-qam", "verify", "--no-verify")
    with pytest.raises(InvalidInput) as caught:
        verify_settings(Workspace(str(hived), actor="alice"))
    message = caught.value.message
    assert message.startswith(f".hive/config.yaml:{len(lines) + 1}: invalid verify: "), message
    assert "a mapping is expected, not list" in message and "VerifySettings" not in message
    assert "verify: takes commands:" in message


def test_a_tilde_in_a_file_option_is_the_home_directory(
    hived: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """bash leaves ``--from=~/cells.yaml`` (and a quoted ``~``) for the program to expand."""
    from hive.cli.demo import _scratch_dir

    home = tmp_path / "home"
    home.mkdir()
    (home / "cells.yaml").write_text("- title: from my home directory\n")
    monkeypatch.setenv("HOME", str(home))
    created = data(hive(hived, "create", "--from=~/cells.yaml", "--json"))
    assert created["count"] == 1
    assert "from my home directory" in ok(hive(hived, "list"))
    assert _scratch_dir("~/demo") == str(home / "demo") and (home / "demo").is_dir()


def test_a_malformed_verify_entry_names_its_line(hived: Path) -> None:
    from hive.domain.swarm.complete import verify_settings
    from hive.domain.workspace import Workspace
    from hive.errors import InvalidInput

    config = hived / ".hive" / "config.yaml"
    lines = config.read_text().splitlines()
    config.write_text(
        "\n".join([*lines, "verify:", "  commands:", "    - pytest -q", "    - {run: ruff}"]) + "\n"
    )
    git(hived, "commit", "-qam", "verify", "--no-verify")
    with pytest.raises(InvalidInput) as caught:
        verify_settings(Workspace(str(hived), actor="alice"))
    assert caught.value.message.startswith(f".hive/config.yaml:{len(lines) + 4}: invalid verify")
    assert "commands" in caught.value.message
    config.write_text("\n".join([*lines, "verify:", "  timeout_seconds: soon"]) + "\n")
    git(hived, "commit", "-qam", "verify", "--no-verify")
    with pytest.raises(InvalidInput, match=rf":{len(lines) + 2}: invalid verify.timeout_seconds"):
        verify_settings(Workspace(str(hived), actor="alice"))
    doctor = hive(hived, "doctor")
    assert doctor.exit_code == 1
    assert f".hive/config.yaml:{len(lines) + 2}: invalid verify.timeout_seconds" in doctor.stdout


def test_a_broken_committed_config_says_hive_reads_the_committed_file(hived: Path) -> None:
    """Fixed on disk but not committed, the error still named line 1 of a file that looked
    fine; doctor stopped with exit 7 instead of reporting, and said nothing of edits on disk."""
    config = hived / ".hive" / "config.yaml"
    good = config.read_text()
    config.write_text("prefix: [oops\n")
    git(hived, "commit", "-qam", "broken", "--no-verify")
    refused = hive(hived, "create", "x")
    assert refused.exit_code == 7
    assert "fix it, then commit it: git commit .hive/config.yaml" in refused.stderr
    config.write_text(good)  # fixed on disk only
    refused = hive(hived, "create", "x")
    assert refused.exit_code == 7
    assert "in the committed file, which is the one hive reads" in refused.stderr
    assert "git commit .hive/config.yaml" in refused.stderr
    doctor = hive(hived, "doctor")
    assert doctor.exit_code == 1, doctor.output
    assert "corrupt: .hive/config.yaml:1: malformed YAML" in doctor.stdout
    git(hived, "commit", "-qam", "fixed", "--no-verify")
    create(hived, "works again")


def test_doctor_checks_the_cells_while_the_committed_config_is_broken(hived: Path) -> None:
    """A broken committed config stopped doctor before the cells: "checked 0 cells" in a
    hive with cells, and a broken cell file went unreported until the config was fixed."""
    create(hived, "fine")
    broken_id = create(hived, "to be broken")
    cell = next((hived / ".hive" / "cells").rglob(f"{broken_id}.yaml"))
    cell.write_text("title: [unclosed\n")
    (hived / ".hive" / "config.yaml").write_text("prefix: [oops\n")
    git(hived, "commit", "-qam", "both broken", "--no-verify")
    doctor = hive(hived, "doctor", "--json")
    assert doctor.exit_code == 1, doctor.output
    report = json.loads(doctor.stdout)
    assert report["cells"] == 1  # the readable one; the other is a problem
    paths = sorted(p["path"] for p in report["problems"] if p["kind"] == "corrupt")
    assert paths == sorted([".hive/config.yaml", cell.relative_to(hived).as_posix()])


def test_doctor_checks_config_edits_not_yet_committed(hived: Path) -> None:
    config = hived / ".hive" / "config.yaml"
    good = config.read_text()
    config.write_text(good.replace("prefix: hv", "prefix: ab"))
    doctor = hive(hived, "doctor", "--json")
    assert doctor.exit_code == 0, doctor.output
    report = json.loads(doctor.stdout)
    assert [w["kind"] for w in report["warnings"]] == ["config-uncommitted"]
    assert "take effect once committed" in report["warnings"][0]["message"]
    assert create(hived, "still the committed prefix").startswith("hv-")
    config.write_text(good + "lock_timeout_seconds: [\n")
    doctor = hive(hived, "doctor")
    assert doctor.exit_code == 1
    assert "corrupt-uncommitted: .hive/config.yaml:" in doctor.stdout


def test_doctor_shows_the_warnings_it_finds(hived: Path) -> None:
    """The command replaced the report's warnings (hand edits, overrides, unregistered
    identities) with its own list of unknown tools: a person never saw them."""
    cell_id = create(hived, "edited by hand")
    from hive.store.layout import cell_path

    path = hived / cell_path(cell_id)
    path.write_text(path.read_text().replace("edited by hand", "edited"))
    git(hived, "commit", "-qam", "by hand", "--no-verify")
    shown = ok(hive(hived, "doctor"))
    assert "warning hand-edit:" in shown and "(by hand)" in shown
    report = data(hive(hived, "doctor", "--json"))
    assert [w["kind"] for w in report["warnings"]] == ["hand-edit"]


def test_a_tilde_in_paths_is_the_home_directory(
    hived: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hive.domain.workspace import Workspace

    monkeypatch.setenv("HOME", str(hived.parent))
    tilde = f"~/{hived.name}"
    assert Workspace(tilde, actor="alice").root == str(hived)
    cell_id = create(hived, "Seen from ~")
    runner = CliRunner()
    shown = runner.invoke(app, ["-C", tilde, "show", cell_id, "--json"])
    assert shown.exit_code == 0 and json.loads(shown.stdout)["id"] == cell_id
    assert entry.parse(["-C", tilde, "list"]).directory == str(hived)


# ------------------------------------------------------------------ review by cell and by commit


def test_review_shows_the_agents_own_commits_and_one_diff_per_cell(hived: Path) -> None:
    from hive.domain.swarm.complete import swarm_complete
    from hive.domain.swarm.review import review
    from hive.domain.workspace import Workspace

    cell_id = create(hived, "Add the parser", "--files", "src/**")
    worker = Workspace(str(hived), actor="BlueLake")
    from hive.domain.cells import start_cell

    start_cell(worker, cell_id=cell_id)
    (hived / "src").mkdir()
    (hived / "src" / "parse.py").write_text("def parse():\n    return 1\n")
    git(hived, "add", "src/parse.py")
    git(hived, "commit", "-qm", "parser: first cut", "--trailer", f"Hive-Cell: {cell_id}")
    own = git(hived, "rev-parse", "HEAD").strip()
    git(hived, "commit", "-qm", "unrelated", "--allow-empty")
    (hived / "src" / "parse.py").write_text("def parse():\n    return 2\n")
    done = swarm_complete(
        worker,
        cell_id=cell_id,
        summary="Parser returns 2 now.\n\nThe first cut returned 1.",
        files_touched=["src/parse.py"],
        run_gate=False,
    )
    message = git(hived, "log", "-1", "--format=%B")
    assert "Parser returns 2 now." in message and "The first cut returned 1." in message
    assert "Files: src/parse.py" in message
    assert git(hived, "log", "-1", "--format=%(trailers:key=Hive-Cell,valueonly)").strip() == (
        cell_id
    )

    found = review(Workspace(str(hived), actor="alice"), target=cell_id)
    shas = [commit.sha for commit in found.commits]
    assert own in shas and done.commit in shas
    assert "unrelated" not in [commit.subject for commit in found.commits]
    cell = found.cells[0]
    assert cell.commits == shas
    assert "src/parse.py" in [changed.path for changed in cell.files]
    assert "+    return 2" in cell.patch and "return 1" not in cell.patch  # net, one diff
    text = ok(hive(hived, "review", cell_id))
    assert f"diff of {cell_id} ({len(shas)} commits)" in text
    assert "parser: first cut" in text  # and each commit's own diff
    only_cells = ok(hive(hived, "review", cell_id, "--per", "cell"))
    assert "parser: first cut" not in only_cells and "+    return 2" in only_cells


def test_blocked_stats_and_forced_start_as_agent_tools(hived: Path) -> None:
    from hive.tools.registry import CallContext, call_tool

    blocker = create(hived, "Design")
    waiting = create(hived, "Build", "--dep", f"blocks:{blocker}")
    ctx = CallContext(root=str(hived), agent="BlueLake")
    blocked = call_tool(ctx, "hive_blocked", {})["result"]
    assert [(item["id"], item["blocked_by"]) for item in blocked] == [(waiting, [blocker])]
    stats = call_tool(ctx, "hive_stats", {})["result"]
    assert stats["total"] == 2 and stats["blocked"] == 1 and stats["ready"] == 1
    refused = call_tool(ctx, "hive_start", {"id": waiting})
    assert refused["code"] == "blocked_by_dependency" and refused["blockers"] == [blocker]
    started = call_tool(ctx, "hive_start", {"id": waiting, "force": True, "reason": "go"})
    assert started["result"]["assignee"] == "BlueLake"
    assert "BlueLake forced: start" in git(hived, "log", "-1", "--format=%B")


def test_mail_inbox_fits_80_columns(hived: Path) -> None:
    sender, reader = agent_env(hived, "BlueLake"), agent_env(hived, "GreenCastle")
    subject = "A subject long enough that it cannot possibly fit on one line of eighty columns"
    ok(hive(hived, "mail", "send", "GreenCastle", "-s", subject, "--thread", "hv-abc", env=sender))
    shown = ok(hive(hived, "mail", "inbox", env={**reader, "COLUMNS": "80"}))
    assert all(len(line) <= 80 for line in shown.splitlines()), shown
    assert "from BlueLake" in shown and "cannot possibly" in shown


def test_mail_shows_the_thread_the_time_and_an_acknowledgement_asked_for(hived: Path) -> None:
    """--ack-required was only in --json: the inbox and 'mail read' said nothing of it
    (nor of the thread or the time sent), so a reader could not tell a message waited
    for an ack."""
    sender, reader = agent_env(hived, "BlueLake"), agent_env(hived, "GreenCastle")
    asking = ("-s", "ack me", "--thread", "hv-abc", "--ack-required")
    sent = ok(hive(hived, "mail", "send", "GreenCastle", *asking, env=sender))
    number = sent.split()[1].removeprefix("#")
    ok(hive(hived, "mail", "send", "GreenCastle", "-s", "plain", env=sender))
    inbox = ok(hive(hived, "mail", "inbox", env=reader)).splitlines()
    assert [line.endswith("[ack required]") for line in inbox] == [False, True], inbox
    shown = ok(hive(hived, "mail", "read", number, env=reader)).splitlines()
    sent_then = r"thread hv-abc  sent \d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ  "
    assert re.fullmatch(sent_then + rf"ack required \('hive mail ack {number}'.*", shown[1])
    ok(hive(hived, "mail", "ack", number, env=reader))
    assert "ack required" not in ok(hive(hived, "mail", "inbox", env=reader))
    again = ok(hive(hived, "mail", "read", number, env=reader)).splitlines()
    assert again[1].endswith("  acknowledged")


def test_show_lists_the_subtasks_and_the_cells_it_blocks(hived: Path) -> None:
    """'hive show EPIC' said nothing of its subtasks, nor 'hive show A' of the cells
    waiting on A ('bd show' lists children and dependents): both are listed, deleted
    ones left out, oldest first, ten of them and how many more; --json and the
    hive_query tool have all of them."""
    from hive.tools.registry import CallContext, call_tool

    epic = create(hived, "Epic", "-t", "epic")
    subtasks = [create(hived, f"sub {n}", "--parent", epic) for n in range(12)]
    ok(hive(hived, "delete", subtasks[0]))
    waiting = create(hived, "waits", "--dep", f"blocks:{subtasks[1]}")
    ok(hive(hived, "close", subtasks[2]))
    rows = [line[15:] for line in ok(hive(hived, "show", epic)).splitlines()[1:]]
    listed = [
        f"{cell} [{'closed' if n == 2 else 'open'}] sub {n}" for n, cell in enumerate(subtasks)
    ]
    more = f"and 1 more ('hive show {epic} --json' lists all)"
    assert [row for row in rows if row.startswith(("hv-", "and "))] == [*listed[1:11], more]
    assert [ref["id"] for ref in data(hive(hived, "show", epic, "--json"))["subtasks"]] == subtasks[
        1:
    ]
    blocker = ok(hive(hived, "show", subtasks[1])).splitlines()
    assert f"  blocks       {waiting} [open] waits" in blocker
    ctx = CallContext(root=str(hived), agent="BlueLake")
    found = call_tool(ctx, "hive_query", {"id": subtasks[1]})["result"]
    assert found["blocks"] == [
        {"id": waiting, "title": "waits", "status": "open", "assignee": None}
    ]
    assert found["subtasks"] == [] and data(hive(hived, "show", waiting, "--json"))["blocks"] == []


def test_design_and_acceptance_criteria_are_set_by_update(hived: Path) -> None:
    """A cell's design and acceptance criteria (beads' fields, imported and shown) could
    be set only by 'hive create --from' or an import: 'bd update --design' had no
    counterpart. The console script (lean first) and the hive_update tool set them;
    the same text again changes nothing (no commit)."""
    from hive.tools.registry import CallContext, call_tool
    from tests.inprocess import run_hive

    def stored(cell_id: str) -> tuple[str, str]:
        shown = data(hive(hived, "show", cell_id, "--json"))
        return shown["design"], shown["acceptance_criteria"]

    cell_id = create(hived, "Queue")
    given = ["--design", "two\nlines", "--acceptance", "ok"]
    changed = run_hive(["update", cell_id[3:7], *given], cwd=hived)
    assert changed.returncode == 0, changed.stderr
    assert stored(cell_id) == ("two\nlines", "ok")
    before = head(hived)
    assert run_hive(["update", cell_id, "--acceptance", "ok"], cwd=hived).returncode == 0
    assert head(hived) == before
    assert "design:\ntwo\nlines\n\nacceptance criteria:\nok" in ok(hive(hived, "show", cell_id))
    ctx = CallContext(root=str(hived), agent="BlueLake")
    args = {"id": cell_id, "design": "", "acceptance": "tests pass"}
    answer = call_tool(ctx, "hive_update", args)["result"]
    assert answer["changed"] == ["design", "acceptance_criteria"]
    assert stored(cell_id) == ("", "tests pass")


def test_a_subtasks_own_part_of_its_id_is_answered_with_the_whole_id(hived: Path) -> None:
    """'hive show a3f8' for the subtask listed as hv-x7k2q9.a3f8 said only 'no cell
    matches': the error names the subtask(s) meant (console script and tool alike)."""
    from hive.tools.registry import CallContext, call_tool
    from tests.inprocess import run_hive

    parent = create(hived, "parent")
    child = create(hived, "child", "--parent", parent)
    suffix = child.rsplit(".", 1)[1]
    shown = run_hive(["show", suffix], cwd=hived)
    assert (shown.returncode, shown.stderr) == (
        3,
        f"error: no cell matches id '{suffix}' (did you mean {child}?)\n",
    )
    refused = call_tool(CallContext(root=str(hived)), "hive_close", {"id": suffix})
    assert refused["code"] == "not_found" and f"did you mean {child}?" in refused["error"]
    assert "did you mean" not in run_hive(["show", "zzzzz"], cwd=hived).stderr


def test_a_text_given_as_a_dash_is_read_from_standard_input(hived: Path) -> None:
    """'hive mail send -b -' read the body from standard input, but 'hive create -d -',
    'hive update --append-notes -' and 'hive comment ID -' stored a literal '-': each
    reads it now (the console script: the lean path leaves it to the full CLI); two
    texts given as '-' are refused, nothing changed. The line ends closing the input
    are dropped, as the shell's $(...) drops them ('echo x | hive create t -d -' kept
    "x\n" where '-d x' is "x"); a scratchpad's content, a file's, is kept exactly."""
    from tests.inprocess import run_hive

    text = "line 1\r\nline 2\n\n"
    made = run_hive(["create", "piped", "-d", "-", "--json"], cwd=hived, input=text)
    cell = json.loads(made.stdout)
    assert cell["description"] == "line 1\r\nline 2"
    typed = data(hive(hived, "create", "typed", "-d", "line 1\r\nline 2", "--json"))
    assert typed["description"] == cell["description"]
    pad = run_hive(["scratchpad", "write", "notes/piped", "-"], cwd=hived, input="kept\n\n")
    assert pad.returncode == 0, pad.stderr
    assert run_hive(["scratchpad", "read", "notes/piped"], cwd=hived).stdout == "kept\n\n"
    noted = run_hive(["update", cell["id"], "--append-notes", "-"], cwd=hived, input="a note")
    assert noted.returncode == 0, noted.stderr
    said = run_hive(["comment", cell["id"], "-"], cwd=hived, input="said\nit")
    assert said.returncode == 0, said.stderr
    shown = data(hive(hived, "show", cell["id"], "--json"))
    assert (shown["notes"], [c["text"] for c in shown["comments"]]) == ("a note", ["said\nit"])
    before = head(hived)
    two = run_hive(["update", cell["id"], "-d", "-", "--design", "-"], cwd=hived, input="x")
    assert (two.returncode, head(hived)) == (2, before)
    assert "only one text can be read from standard input" in two.stderr
    for piped in ("", "\n\n"):  # nothing to comment: said of standard input, nothing changed
        empty = run_hive(["comment", cell["id"], "-"], cwd=hived, input=piped)
        assert (empty.returncode, head(hived)) == (2, before), empty.stderr
        assert "TEXT was to be read from standard input ('-'), which gave nothing" in empty.stderr


def test_dependencies_given_as_a_comma_list_are_several(hived: Path) -> None:
    """beads' 'bd create --deps blocks:bd-1,related:bd-2' is two dependencies; hive
    looked for a cell named 'bd-1,related:bd-2' ('no cell matches id')."""
    from hive.tools.registry import CallContext, call_tool

    first, second = create(hived, "first"), create(hived, "second")
    cell = data(hive(hived, "create", "x", "--deps", f"blocks:{first},related:{second}", "--json"))
    assert [(d["type"], d["target"]) for d in cell["dependencies"]] == [
        ("blocks", first),
        ("related", second),
    ]
    both = data(hive(hived, "create", "y", "--dep", f"{first}, {second}", "--json"))
    assert [d["target"] for d in both["dependencies"]] == [first, second]
    found = call_tool(
        CallContext(root=str(hived)), "hive_create", {"title": "z", "deps": [f"{first},{second}"]}
    )
    assert len(found["result"]["dependencies"]) == 2


def test_search_names_nobody_as_show_does(hived: Path, tmp_path: Path) -> None:
    """An imported issue without its creator was found as 'bd-1  round 1   (worker,
    cell)': an empty name and a double blank; it is '?', as 'hive show' says 'by ?'."""
    exported = tmp_path / "issues.jsonl"
    record = {"id": "bd-1", "title": "a needle here", "status": "open", "priority": 2}
    when = {"created_at": "2026-01-01T00:00:00Z", "updated_at": "2026-01-01T00:00:00Z"}
    exported.write_text(json.dumps({**record, **when, "issue_type": "task"}) + "\n")
    ok(hive(hived, "import", "beads", str(exported)))
    (line,) = ok(hive(hived, "search", "needle")).splitlines()
    assert re.fullmatch(r"bd-1  round 1  \? \(\w+, cell\): a needle here", line), line


def test_closing_an_epic_names_its_open_subtasks(hived: Path) -> None:
    """'epic X still has open subtasks' named none: which ones (the first three and
    how many more; open_subtasks lists all in --json and for a tool)."""
    from hive.tools.registry import CallContext, call_tool

    epic = create(hived, "Epic", "-t", "epic")
    subtasks = sorted(create(hived, f"sub {n}", "--parent", epic) for n in range(5))
    ok(hive(hived, "close", subtasks[0]))
    refused = hive(hived, "close", epic)
    assert refused.exit_code == 4
    named = ", ".join(subtasks[1:4])
    assert f"still has open subtasks ({named} and 1 more);" in refused.stderr
    found = call_tool(CallContext(root=str(hived)), "hive_close", {"id": epic})
    assert found["code"] == "blocked_by_dependency" and found["open_subtasks"] == subtasks[1:]


def test_every_exit_code_the_code_uses_is_in_the_table() -> None:
    import re

    from hive.cli.docs import PREAMBLE
    from hive.domain import governance
    from hive.errors import HiveError

    def subclasses(cls: type) -> list[type]:
        return [cls, *(sub for child in cls.__subclasses__() for sub in subclasses(child))]

    assert governance.RateLimited  # its module defines an error too
    codes = {cls.exit_code for cls in subclasses(HiveError)} | {0, 2, 70, 130}
    table = {int(found) for found in re.findall(r"(?m)^\| (\d+) \|", PREAMBLE)}
    assert codes <= table, sorted(codes - table)


def test_deleting_a_parent_with_its_subtasks_needs_no_force(hived: Path) -> None:
    parent = create(hived, "parent")
    child = create(hived, "child", "--parent", parent)
    alone = hive(hived, "delete", parent)
    assert alone.exit_code == 4 and "has subtasks" in alone.stderr
    deleted = data(hive(hived, "delete", parent, child, "--json"))
    assert [cell["id"] for cell in deleted] == [parent, child]


def test_numbers_are_taken_as_hive_prints_them(hived: Path) -> None:
    """hive prints '#12' for a message or a reservation; pasting that was an error."""
    sender, reader = agent_env(hived, "BlueLake"), agent_env(hived, "GreenCastle")
    sent = ok(hive(hived, "mail", "send", "GreenCastle", "-s", "hello", "-b", "hi", env=sender))
    number = sent.split()[1]
    assert number.startswith("#")
    assert f"{number} from BlueLake" in ok(hive(hived, "mail", "read", number, env=reader))
    assert ok(hive(hived, "mail", "ack", number, env=reader)).startswith(f"acknowledged {number}")
    reserved = ok(hive(hived, "reserve", "docs/a.md", env=sender))
    mark = reserved.split()[1]
    assert mark.startswith("#")
    assert "released 1 reservation(s)" in ok(hive(hived, "release", "--id", mark, env=sender))
    assert data(hive(hived, "reservations", "--json")) == []
    bad = hive(hived, "mail", "read", "#x", env=reader)
    assert bad.exit_code == 2 and "invalid MESSAGE_ID" in bad.stderr


def test_init_says_when_it_does_not_apply_a_prefix(hived: Path) -> None:
    """A second 'hive init --prefix ab' kept prefix hv without a word (exit 0)."""
    again = hive(hived, "init", "--prefix", "ab")
    assert again.exit_code == 0
    assert "--prefix ab was not applied: this hive's prefix is hv" in again.stderr
    assert "prefix: ab' in .hive/config.yaml and commit it" in again.stderr
    assert "not applied" not in hive(hived, "init", "--prefix", "hv").stderr
    assert "not applied" not in hive(hived, "init").stderr
    assert create(hived, "still hv").startswith("hv-")


def test_help_gives_the_command_s_defaults_not_an_agent_s() -> None:
    """'hive list --help' said 'whole cells (default: id, title, ...)  [default: verbose]'
    and 'hive release --help' said --all applies 'also when none given' (it is refused)."""
    import re

    from hive.cli.docs import render_cli_docs

    docs = render_cli_docs()
    flags = [line for line in docs.splitlines() if re.match(r"\* `--[\w-]+ / --", line)]
    assert flags
    contradicted = [line for line in flags if "(default" in line and "[default:" in line]
    assert contradicted == []
    assert "* `--verbose / --no-verbose`: whole cells  [default: verbose]" in docs
    assert "also when none given" not in docs
    runner = CliRunner()
    assert "also when none given" not in runner.invoke(app, ["release", "--help"]).stdout


def test_an_overlong_value_is_not_echoed_whole(hived: Path) -> None:
    """A 3,000-character title filled the terminal with its own error message."""
    refused = hive(hived, "create", "ü" * 3000)
    assert refused.exit_code == 2
    line = refused.stderr.strip()
    assert len(line) < 200, line
    assert "(3000 characters): String should have at most 500 characters" in line
    short = hive(hived, "create", "x", "-t", "story")
    assert "invalid --type 'story'" in short.stderr


def test_blocked_and_epic_status_print_the_table_list_prints(hived: Path) -> None:
    """They padded every row to the longest title (trailing blanks), with a second table
    renderer beside the one 'hive list' uses."""
    epic = data(
        hive(hived, "epic", "create", "Epic", "-s", "a much longer subtask", "-s", "b", "--json")
    )
    first, second = (cell["id"] for cell in epic[1:])
    ok(hive(hived, "dep", "add", second, first))
    status = ok(hive(hived, "epic", "status", epic[0]["id"]))
    blocked = ok(hive(hived, "blocked"))
    listed = ok(hive(hived, "list", "--parent", epic[0]["id"]))
    for shown in (status, blocked):
        assert all(line == line.rstrip() for line in shown.splitlines()), repr(shown)
    table = listed.splitlines()
    assert table[0] in status.splitlines() and table[0] in blocked.splitlines()
    assert all(row in status.splitlines() for row in table[1:])


def test_a_broken_cell_s_error_says_how_to_mend_it(hived: Path) -> None:
    from hive.store.layout import cell_path

    cell_id = create(hived, "to break")
    path = hived / cell_path(cell_id)
    good = path.read_text()
    path.write_text(good + "title: [broken\n")
    git(hived, "commit", "-qam", "broken by hand", "--no-verify")
    for command in (["show", cell_id], ["close", cell_id], ["delete", cell_id]):
        refused = hive(hived, *command)
        assert refused.exit_code == 7
        assert f"fix it and commit it, git commit {cell_path(cell_id)}" in refused.stderr
    path.write_text(good)
    git(hived, "commit", "-qam", "mended", "--no-verify")
    ok(hive(hived, "close", cell_id))


def test_list_status_all_and_deferred_are_named_where_a_status_is_refused(hived: Path) -> None:
    """'-s bogus' said 'use one of open, in_progress, blocked, deferred, closed' without
    'all', which -s takes; the help named all but not deferred."""
    refused = hive(hived, "list", "-s", "bogus")
    assert refused.exit_code == 2
    assert "use one of open, in_progress, blocked, deferred, closed, all" in refused.stderr
    closed = create(hived, "closed one")
    ok(hive(hived, "close", closed))
    assert closed in ok(hive(hived, "list", "-s", "all"))
    assert closed not in ok(hive(hived, "list", "-s", "deferred"))
    assert "open|in_progress|blocked|deferred|closed|all" in ok(hive(hived, "list", "--help"))
    updated = hive(hived, "update", closed, "-s", "all")
    assert updated.exit_code == 2 and "closed, all" not in updated.stderr


def test_reservations_fit_a_narrow_terminal_with_patterns_whole(hived: Path) -> None:
    """At 60 columns the heading read 'PATTER' over 'N' and a pattern was folded into a
    column a few characters wide; at 40 the agent and pattern columns were dropped."""
    env = agent_env(hived, "BlueLake")
    pattern = "lib/very/long/path/to/some/module/**"
    ok(hive(hived, "reserve", pattern, env=env))
    for columns in (40, 60, 80):
        shown = ok(hive(hived, "reservations", env={"COLUMNS": str(columns)})).splitlines()
        assert shown[0].split() == ["ID", "AGENT", "KIND", "CELL", "EXPIRES", "PATTERN"]
        assert "BlueLake" in shown[1] and "exclusive" in shown[1]
        start = shown[0].index("PATTERN")
        assert "".join(line[start:] for line in shown[1:]) == pattern
        assert all(line == line.rstrip() for line in shown)
        if columns >= 80:
            assert all(len(line) <= columns for line in shown), shown
    piped = ok(hive(hived, "reservations")).splitlines()
    assert len(piped) == 2 and piped[1].endswith(pattern)


def test_event_lines_end_without_blanks(hived: Path) -> None:
    """An event without arguments (a person's override) ended in two blanks."""
    cell_id = create(hived, "claimed")
    ok(hive(hived, "start", cell_id, env=agent_env(hived, "BlueLake")))
    ok(hive(hived, "close", cell_id, "--force", "--reason", "done by hand"))
    shown = ok(hive(hived, "events", "-n", "50")).splitlines()
    assert shown and all(line == line.rstrip() for line in shown), shown


# ------------------------------------------------------------------ --json with nothing to show


@pytest.mark.parametrize("as_agent", [False, True])
def test_every_listing_prints_json_when_there_is_nothing_to_show(
    hived: Path, as_agent: bool
) -> None:
    """``hive events --json`` on an empty log printed nothing, which no JSON reader
    takes: every command that lists prints a JSON document for nothing too, exit 0."""
    env = agent_env(hived, "BlueLake") if as_agent else None
    listings = [
        ["events"],
        ["list"],
        ["ready"],
        ["blocked"],
        ["reservations"],
        ["search", "nothing-matches-this"],
        ["stats"],
        ["log", "--overrides"],
        ["proposals", "list"],
        ["ctx", "list"],
        ["ctx", "keys"],
        ["queue", "list"],
        ["blackboard", "list"],
        ["permissions", "list"],
        ["scratchpad", "list"],
        ["agent", "list"],
        ["qa", "history"],
        ["swarm", "insights"],
    ]
    listings += [["mail", "inbox"], ["todo", "list"]] if as_agent else []
    for argv in listings:
        shown = hive(hived, "--json", *argv, env=env)
        assert shown.exit_code == 0, (argv, shown.output)
        json.loads(shown.stdout)  # one JSON document, also for nothing


def test_the_reason_option_does_not_say_a_person_needs_one_to_override(hived: Path) -> None:
    """`hive close --help` said --reason is 'needed to override', while a person's
    --force alone overrides (recorded as '(no reason given)'); a coordinator gives one."""
    for command in ("close", "update", "delete"):
        shown = " ".join(ok(hive(hived, command, "--help")).split())
        assert "needed to override" not in shown, command
        assert "a coordinator must give one to override" in shown, command


@pytest.mark.parametrize(
    "command",
    [["list"], ["mail"], ["mail", "send"], ["swarm", "run"], ["tools", "list"], ["close"]],
)
def test_dash_h_is_help_for_every_command_as_in_git(repo: Path, command: list[str]) -> None:
    """`hive -h` printed the help but `hive list -h` was a usage error ("No such option:
    -h", exit 2): every command takes -h as --help, as git's commands do."""
    runner = CliRunner()
    short = runner.invoke(app, ["-C", str(repo), *command, "-h"], catch_exceptions=False)
    long = runner.invoke(app, ["-C", str(repo), *command, "--help"], catch_exceptions=False)
    assert (short.exit_code, long.exit_code) == (0, 0)
    assert short.stdout == long.stdout
    assert short.stdout.startswith(f"Usage: hive {' '.join(command)} ")
    assert "-h, --help" in short.stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_before_a_command_is_that_commands_help(repo: Path, flag: str) -> None:
    """`hive --help create` printed hive's own help, the command ignored; as `git --help
    commit` is commit's help, it is `hive create --help`, also for a group's command."""
    from tests.inprocess import run_hive

    for words in (["create"], ["mail", "send"]):
        before = run_hive(["-C", str(repo), flag, *words])
        after = run_hive(["-C", str(repo), *words, "--help"])
        assert (before.returncode, before.stderr) == (0, ""), before.stderr
        assert before.stdout == after.stdout
        assert before.stdout.startswith(f"Usage: hive {' '.join(words)} [OPTIONS]")
    alone = run_hive([flag])
    assert alone.returncode == 0 and alone.stdout.startswith("Usage: hive [-C DIR]")


@pytest.mark.parametrize(
    ("argv", "shown"),
    [
        (("delegate", "BlueLake", "do-it"), "TASK_PAYLOAD 'do-it'"),
        (("queue", "add", "k", "[1]"), "PAYLOAD [1]"),
    ],
)
def test_a_json_object_argument_says_how_to_type_one(
    hived: Path, argv: tuple[str, ...], shown: str
) -> None:
    """Pydantic's 'Input should be a valid dictionary' named a Python type, not what to type."""
    refused = hive(hived, *argv)
    assert refused.exit_code == 2, refused.output
    assert f"invalid {shown}: expected a JSON object, in quotes for the shell" in refused.stderr
    assert "dictionary" not in refused.stderr


def test_blocked_and_ready_warn_of_a_directory_where_a_cell_file_is(hived: Path) -> None:
    """A directory left in the working tree in place of a cell file (hive could not
    write that cell) was warned of by list and show only: blocked said nothing."""
    from tests.inprocess import run_hive

    first = create(hived, "first")
    waiting = create(hived, "waiting", "--deps", first)
    said = "is a directory, not a cell file; move what is inside it elsewhere"
    for cell in (waiting, first):  # the blocked cell, then its blocker (not listed)
        path = next((hived / ".hive" / "cells").glob(f"*/{cell}.yaml"))
        path.unlink()
        path.mkdir()
        done = run_hive(["-C", str(hived), "blocked"])
        assert done.returncode == 0 and f"{waiting} waits on" in done.stdout
        assert f"warning: {path.relative_to(hived)}: {said}" in done.stderr, done.stderr
        path.rmdir()
        git(hived, "checkout", "--", str(path))
    path = next((hived / ".hive" / "cells").glob(f"*/{first}.yaml"))
    path.unlink()
    path.mkdir()
    for command in (["ready"], ["ready", "--json"], ["blocked", "--json"]):
        done = run_hive(["-C", str(hived), *command])
        assert done.returncode == 0 and said in done.stderr, (command, done.stderr)


def test_show_prints_every_field_text_and_merge_conflict(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``output.cell_detail`` (the full CLI's 'hive show'), piped and on a narrow
    terminal: every field (lists folded under their value), the texts and comments as
    they are (never markup), and both kinds of merge conflict."""
    from datetime import UTC, datetime

    from hive.cli import output
    from hive.models import Cell
    from hive.models.cell import Comment, Dependency, MergeConflict

    at = datetime(2026, 1, 2, 3, 4, tzinfo=UTC)
    cell = Cell(
        id="hv-abc123",
        title="Queue [b]x[/b]",
        status="closed",
        priority=1,
        labels=["ui", "api", "backend-services", "frontend-widgets"],
        assignee="bob",
        parent="hv-epic00",
        dependencies=[Dependency(target="hv-zzz999", type="blocks")],
        files_owned=["src/a.py", "src/b.py"],
        design="two\nlines",
        acceptance_criteria="ok",
        notes="a note",
        comments=[Comment(id="c1", author="ann", text="looks [i]good[/i]", created_at=at)],
        created_at=at,
        created_by="alice",
        updated_at=at,
        closed_at=at,
        close_reason="done",
        description="Do the thing.",
        deleted_at=at,
        conflicts=[
            MergeConflict(field="priority", kept=1, other=3),
            MergeConflict(field="file", other="garbage: ["),
        ],
    )
    for name in ("COLUMNS", "FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE", "TTY_COLS"):
        monkeypatch.delenv(name, raising=False)
    output.cell_detail(cell)
    piped = capsys.readouterr().out.split("\n")
    assert piped == [
        "hv-abc123  Queue [b]x[/b]",
        "  status       closed (deleted)",
        "  type         task",
        "  priority     P1",
        "  assignee     bob",
        "  parent       hv-epic00",
        "  labels       ui, api, backend-services, frontend-widgets",
        "  files        src/a.py, src/b.py",
        "  depends on   hv-zzz999 (blocks)",
        "  close reason done",
        "  created      2026-01-02 03:04 by alice",
        "  updated      2026-01-02 03:04",
        "  closed       2026-01-02 03:04",
        "",
        "Do the thing.",
        "",
        "design:",
        "two",
        "lines",
        "",
        "acceptance criteria:",
        "ok",
        "",
        "notes:",
        "a note",
        "",
        "comment by ann at 2026-01-02 03:04:",
        "looks [i]good[/i]",
        "",
        "merge conflicts (both sides changed; resolve with 'hive resolve'):",
        "  priority: kept 1",
        "            other 3",
        "  file: one side did not parse; its text was:",
        "garbage: [",
        "",
    ]
    monkeypatch.setenv("COLUMNS", "40")  # rich: long values continue under themselves
    output.cell_detail(cell)
    assert capsys.readouterr().out.split("\n") == [
        *piped[0:6],
        "  labels       ui, api,",
        "               backend-services,",
        "               frontend-widgets",
        *piped[7:29],
        "merge conflicts (both sides changed; ",
        "resolve with 'hive resolve'):",
        *piped[30:32],
        "  file: one side did not parse; its text",
        "was:",
        *piped[33:],
    ]


def test_a_person_claims_with_ready_claim_as_its_help_says(hived: Path) -> None:
    """``hive ready --help`` said an agent must be registered to --claim: a person
    claims too (the first ready cell that is unassigned or theirs), and -n does not
    make it claim more than one."""
    for title in ("first", "second"):
        ok(hive(hived, "create", title))
    helped = " ".join(ok(hive(hived, "ready", "--help")).split())
    assert "an agent must be registered" not in helped
    assert "starts the first one that is unassigned or yours, as you (a person" in helped
    claimed = ok(hive(hived, "ready", "--claim", "-n", "2"))
    assert claimed.startswith("claimed ") and claimed.count("\n") == 1
    assert len(data(hive(hived, "list", "-s", "in_progress", "--json"))) == 1
