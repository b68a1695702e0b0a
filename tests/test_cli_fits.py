"""Output that fits a terminal (80 columns: list, ready, blocked, show, dep tree, tools
list), JSON errors under --json (an internal error, Ctrl-C), a page announced under
--json, a reader that goes away: found by trying issue 12 as a new user would; each
test failed before its fix. The command line runs in-process
(``run_hive``, the console script's own entry point) on real repositories."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.inprocess import Outcome, run_hive


def hive(repo: Path, *args: str, env: dict[str, str] | None = None) -> Outcome:
    return run_hive(["-C", str(repo), *args], env=env)


def ok(result: Outcome) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_list_and_ready_fit_80_columns_with_the_long_ids_of_a_beads_import(
    repo: Path, tmp_path: Path
) -> None:
    """Cells imported from beads keep ids like ``bd-beads-polecat-obsidian``: at 80
    columns `hive list` and `hive ready` printed 85-column lines (the assignee column
    kept 16 columns while the title was squeezed below its minimum)."""
    ok(hive(repo, "init", "--prefix", "hv"))
    names = ("obsidian", "jasper", "quartz")
    records = [
        {
            "id": f"bd-beads-polecat-{name}",
            "title": f"Process the pending cleanup of polecat {name} and report back",
            "status": "in_progress" if name == "jasper" else "open",
            "priority": 2,
            "issue_type": "feature",
            "assignee": f"beads/polecats/{name}",
            "created_at": "2026-01-14T10:00:00Z",
            "updated_at": "2026-01-14T10:00:00Z",
        }
        for name in names
    ]
    jsonl = tmp_path / "issues.jsonl"
    jsonl.write_text("".join(json.dumps(record) + "\n" for record in records))
    ok(hive(repo, "import", "beads", str(jsonl)))
    wide = {**os.environ, "COLUMNS": "80"}
    for command in ("list", "ready"):
        lines = ok(hive(repo, command, env=wide)).splitlines()
        assert len(lines) == (4 if command == "list" else 3), lines
        assert all(len(line) <= 80 for line in lines), (command, [len(x) for x in lines])
        for line in lines[1:]:
            assert line.split()[0].startswith("bd-beads-polecat-")  # ids whole
            assert line.split()[0].removeprefix("bd-beads-polecat-") in names
            assert "…  Process the pend" in line  # the assignee gave way to the title


INTERNAL = (
    "internal error: PermissionError: [Errno 13] Permission denied: '/somewhere'"
    " (set HIVE_DEBUG=1 for details)"
)


def _fault(*args: object, **kwargs: object) -> object:
    raise PermissionError(13, "Permission denied", "/somewhere")


def _ctrl_c(*args: object, **kwargs: object) -> object:
    raise KeyboardInterrupt


def test_an_internal_error_under_json_is_a_json_error(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Exit 70 printed its line on stderr only, also under --json: a program that asked
    for JSON read nothing on stdout (every other error is {"error", "code"} there)."""
    from hive.cli import entry, main

    ok(hive(repo, "init"))
    monkeypatch.setattr(entry, "dispatch", _fault)  # a fault in a lean answer
    monkeypatch.setattr(main, "focused_app", _fault)  # and where the full CLI builds one
    for module in ("hive", "hive.cli.main"):
        done = run_hive(["-C", str(repo), "--json", "stats"], module=module)
        assert done.returncode == 70, done
        assert json.loads(done.stdout) == {"error": INTERNAL, "code": "internal_error"}
        assert done.stderr == INTERNAL + "\n"
        plain = run_hive(["-C", str(repo), "stats"], module=module)
        assert (plain.returncode, plain.stdout, plain.stderr) == (70, "", INTERNAL + "\n")


def test_ctrl_c_under_json_is_a_json_error(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C ended a command with 130 and 'interrupted' on stderr, also under --json:
    stdout stayed empty, where every other error is {"error", "code"}."""
    from hive.cli import entry, main

    ok(hive(repo, "init"))
    monkeypatch.setattr(entry, "dispatch", _ctrl_c)
    monkeypatch.setattr(main, "focused_app", _ctrl_c)
    for module in ("hive", "hive.cli.main"):
        done = run_hive(["-C", str(repo), "stats", "--json"], module=module)
        assert (done.returncode, done.stderr) == (130, "interrupted\n"), done
        assert json.loads(done.stdout) == {"error": "interrupted", "code": "interrupted"}
        plain = run_hive(["-C", str(repo), "stats"], module=module)
        assert (plain.returncode, plain.stdout, plain.stderr) == (130, "", "interrupted\n")
        server = run_hive(["-C", str(repo), "--json", "mcp"], module=module, input="")
        assert (server.returncode, server.stdout, server.stderr) == (0, "", "")  # stopped


def _waits_on_six(repo: Path) -> tuple[str, list[str]]:
    """A hive with a cell that waits on six open blockers: its id and theirs."""
    ok(hive(repo, "init", "--prefix", "hv"))
    target = json.loads(ok(hive(repo, "--json", "create", "Waits on six")))["id"]
    blockers = [
        json.loads(ok(hive(repo, "--json", "create", f"Blocker {n}")))["id"] for n in range(6)
    ]
    for blocker in blockers:
        ok(hive(repo, "dep", "add", target, blocker))
    return target, blockers


def test_blocked_fits_80_columns_with_many_blockers(repo: Path) -> None:
    """`hive blocked` printed each cell's blockers on one line, however many: six of
    them made a 125-column line at COLUMNS=80. They fold between blockers (an id and
    its status stay together), continued under the first; piped, the line stays whole."""
    target, blockers = _waits_on_six(repo)
    shown = ok(hive(repo, "blocked", env={**os.environ, "COLUMNS": "80"}))
    lines = shown.splitlines()
    assert all(len(line) <= 80 for line in lines), [len(line) for line in lines]
    head = f"{target} waits on "
    start = next(n for n, line in enumerate(lines) if line.startswith(head))
    folded = lines[start:]
    assert len(folded) == 2 and folded[1].startswith(" " * len(head) + "hv-"), folded
    said = " ".join(" ".join(folded).split())
    assert said == head + ", ".join(f"{b} [open]" for b in blockers)
    piped = ok(hive(repo, "blocked", env={k: v for k, v in os.environ.items() if k != "COLUMNS"}))
    assert head + ", ".join(f"{b} [open]" for b in blockers) in piped.splitlines()


def test_tools_list_fits_80_columns(repo: Path) -> None:
    """`hive tools list` printed each name padded to 30 columns and its description
    whole: lines of up to 106 columns at COLUMNS=80 (piped, they stay whole)."""
    shown = ok(hive(repo, "tools", "list", env={**os.environ, "COLUMNS": "80"}))
    lines = shown.splitlines()
    assert len(lines) > 50 and all(len(line) <= 80 for line in lines), max(map(len, lines))
    assert any(line.endswith("…") for line in lines)
    piped = ok(
        hive(repo, "tools", "list", env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    )
    assert any(len(line) > 80 for line in piped.splitlines())


def _left_by_its_reader(repo: Path, command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """``hive -C repo COMMAND`` in a process whose reader goes away before the first
    line: (exit code, what it said on stderr).

    The process is forked from the tests' warm fork server (tests/hivefork.py) with
    ``finalize``: it runs what the console script runs, on standard streams made as a
    new interpreter makes them, and ends as that process ends (the interpreter's last
    flush of stdout included: output left in its buffer would be "Exception ignored
    ... BrokenPipeError" and exit status 120, as it is for ``python -m hive``); what is
    tested is the closed pipe, not the start-up (a fresh interpreter each cost ~0.35 s
    of CPU, a forked one ~0.1 s)."""
    import subprocess

    from tests.hivefork import hive_command

    reader = subprocess.Popen(
        hive_command(["-C", str(repo), *command], finalize=True),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env=env,
    )
    assert reader.stdout is not None and reader.stderr is not None
    reader.stdout.close()  # the reader goes away before the first line
    code = reader.wait(timeout=60)
    error = reader.stderr.read().decode()
    reader.stderr.close()
    return code, error


@pytest.mark.parametrize("command", [["list"], ["list", "--json"], ["schema"], ["docs"]])
@pytest.mark.parametrize("columns", [None, "80"])
def test_a_reader_that_leaves_hive_tools_is_not_a_failure(
    repo: Path, command: list[str], columns: str | None
) -> None:
    """`hive tools list | head -1` exited 1 (click's way with a closed pipe) or, at a
    terminal's width, 70 with 'internal error: BrokenPipeError', where `hive list |
    head -1` exits 0 and says nothing: a `set -o pipefail` script failed on it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_") and k != "COLUMNS"}
    if columns:
        env["COLUMNS"] = columns
    assert _left_by_its_reader(repo, ["tools", *command], env) == (0, "")


@pytest.mark.parametrize(
    ("command", "code"),
    [
        (["list", "--help"], 0),
        (["swarm", "--help"], 0),
        (["mail"], 2),  # a group without its command: its help, exit 2 as always
    ],
)
def test_a_reader_that_leaves_the_help_is_not_a_failure(
    repo: Path, command: list[str], code: int
) -> None:
    """`hive list --help | head -1` exited 1 (click's way with a closed pipe), and
    `hive mail | head -1` (a group's help) ended in a traceback, where `hive list |
    head -1` exits 0 and says nothing."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    assert _left_by_its_reader(repo, command, env) == (code, "")


def test_a_page_under_json_says_on_stderr_that_it_is_one(repo: Path, tmp_path: Path) -> None:
    """`hive list --json` gave 50 of 704 cells and said nothing, where the table says
    'showing 50 of 704 cells (--all for every one)' on stderr: a program reading the
    JSON could not know it had a page. The notice is on stderr, stdout stays the list."""
    ok(hive(repo, "init", "--prefix", "hv"))
    source = tmp_path / "cells.jsonl"
    source.write_text("".join(json.dumps({"title": f"cell {n}"}) + "\n" for n in range(12)))
    ok(hive(repo, "create", "--from", str(source)))
    for module in ("hive", "hive.cli.main"):  # the lean answer and the full CLI
        for command, what in (("list", "cells"), ("ready", "ready cells")):
            page = run_hive(["-C", str(repo), command, "--json", "-n", "5"], module=module)
            assert page.returncode == 0, page
            assert len(json.loads(page.stdout)) == 5
            assert page.stderr == f"showing 5 of 12 {what} (--all for every one)\n"
            every = run_hive(["-C", str(repo), command, "--json", "--all"], module=module)
            assert len(json.loads(every.stdout)) == 12 and every.stderr == ""


def test_show_folds_a_long_field_under_its_value(repo: Path) -> None:
    """`hive show` at 80 columns wrapped a long 'depends on' (or files, labels) back to
    the first column, under the field names; it now folds between items, continued
    under the value, and never inside an id. Piped without COLUMNS: one line each."""
    target, blockers = _waits_on_six(repo)
    shown = ok(hive(repo, "show", target, env={**os.environ, "COLUMNS": "80"})).splitlines()
    assert all(len(line) <= 80 for line in shown), shown
    start = next(n for n, line in enumerate(shown) if line.startswith("  depends on   "))
    folded = [shown[start]]
    for line in shown[start + 1 :]:
        if not line.startswith(" " * 15):
            break
        folded.append(line)
    assert len(folded) == 2, shown
    said = " ".join(" ".join(line.split()) for line in folded)
    assert said == "depends on " + ", ".join(f"{b} (blocks)" for b in blockers)
    piped = ok(
        hive(repo, "show", target, env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    )
    assert "  depends on   " + ", ".join(f"{b} (blocks)" for b in blockers) in piped.splitlines()


def test_show_continues_a_long_blocker_under_its_value(repo: Path) -> None:
    """`hive show` at 80 columns wrapped 'blocked by  ID [open] <a long title>' back to
    the first column; it continues under the value, as the list fields do."""
    ok(hive(repo, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(repo, "--json", "create", "Blocked thing")))["id"]
    title = "A blocker with a really long title that will not fit on one line of eighty columns"
    blocker = json.loads(ok(hive(repo, "--json", "create", title)))["id"]
    ok(hive(repo, "dep", "add", cell, blocker))
    shown = ok(hive(repo, "show", cell, env={**os.environ, "COLUMNS": "80"})).splitlines()
    assert all(len(line) <= 80 for line in shown), shown
    start = next(n for n, line in enumerate(shown) if line.startswith("  blocked by   "))
    assert shown[start + 1].startswith(" " * 15) and shown[start + 1][15] != " ", shown
    said = " ".join(" ".join(shown[start : start + 2]).split())
    assert said == f"blocked by {blocker} [open] {title}"


def test_dep_tree_cuts_a_long_title_and_keeps_the_dependency_type(repo: Path) -> None:
    """`hive dep tree` at 80 columns cropped a long title at the edge: no ellipsis, and
    the dependency's type after it, '(blocks)', was lost. The title is cut with '…' so
    the line fits with its type; piped without COLUMNS the line is whole."""
    ok(hive(repo, "init", "--prefix", "hv"))
    cell = json.loads(ok(hive(repo, "--json", "create", "Blocked thing")))["id"]
    title = "A blocker with a really long title that will not fit on one line of eighty columns"
    blocker = json.loads(ok(hive(repo, "--json", "create", title)))["id"]
    ok(hive(repo, "dep", "add", cell, blocker))
    lines = ok(hive(repo, "dep", "tree", cell, env={**os.environ, "COLUMNS": "80"})).splitlines()
    assert len(lines) == 2 and all(len(line) <= 80 for line in lines), lines
    assert lines[1].startswith(f"└── {blocker} [open] A blocker") and "…" in lines[1]
    assert lines[1].endswith(" (blocks)"), lines
    piped = ok(
        hive(repo, "dep", "tree", cell, env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    )
    assert f"└── {blocker} [open] {title} (blocks)" in piped.splitlines()


@pytest.mark.parametrize("columns", [20, 30, 40, 43])
def test_show_at_a_narrow_width_wraps_the_text_never_its_colours(repo: Path, columns: int) -> None:
    """`hive show` of a cell in progress at 40 columns ended in "internal error:
    MarkupError: closing tag '[/yell ow]'" (exit 70), and at 20-35 printed `[/yellow]`
    cut in two: a field's value was wrapped with its colour tags in it. The text is
    wrapped, then coloured; brackets of the text itself are shown as they are."""
    ok(hive(repo, "init", "--prefix", "hv"))
    title = "[wip] a blocker/with/a/path/long/enough/to/be/cut/anywhere [x]"
    blocker = json.loads(ok(hive(repo, "--json", "create", title)))["id"]
    cell = json.loads(ok(hive(repo, "--json", "create", "Busy thing")))["id"]
    ok(hive(repo, "start", cell))
    ok(hive(repo, "dep", "add", cell, blocker))
    env = {**os.environ, "COLUMNS": str(columns)}
    shown = ok(hive(repo, "show", cell, env=env))
    assert "[/" not in shown and "\\[" not in shown, shown
    lines = shown.splitlines()
    assert "Busy thing status in_progress type task" in " ".join(shown.split()), lines
    blocked = lines.index(next(line for line in lines if line.startswith("  blocked by")))
    said = " ".join(line[15:] for line in lines[blocked:] if not line.startswith("  created"))
    assert "[wip]" in said and "[x]" in said, shown
