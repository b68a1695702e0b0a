"""Bulk creation: ``hive create --from FILE`` / ``create_cells``: one commit for N cells,
references between entries, and bad input reported line by line with nothing committed."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from hive.domain.bulk import create_cells, parse_cell_file, read_cell_file
from hive.domain.cells import create_cell, list_cells, ready, show_cell
from hive.domain.history import cell_log
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.store.layout import cell_path
from tests.conftest import assert_clean, git
from tests.inprocess import fork_on_terminal, run_hive


def from_text(ws: Workspace, text: str, source: str = "cells.yaml", **kw: Any) -> Any:
    return create_cells(ws, cells_file=parse_cell_file(text, source=source), **kw)


def problems_of(ws: Workspace, text: str, source: str = "cells.yaml") -> list[str]:
    head = git(Path(ws.root), "rev-parse", "HEAD")
    with pytest.raises(InvalidInput) as caught:
        from_text(ws, text, source)
    assert "nothing was created" in caught.value.message
    assert git(Path(ws.root), "rev-parse", "HEAD") == head  # nothing committed
    assert_clean(Path(ws.root))
    return [problem["message"] for problem in caught.value.details["problems"]]


def cli(repo: Path, *args: str, stdin: str | None = None) -> Any:
    """``hive`` in-process as agent alice, proven by her credential."""
    from tests.conftest import credential

    env = {"HIVE_AGENT": "alice", "HIVE_AGENT_TOKEN": credential(repo, "alice")}
    return run_hive(
        ["-C", str(repo), "--actor", "alice", *args],
        input=stdin,
        env={**os.environ, **env},
        module="hive.cli.main",
    )


# ----------------------------------------------------------------- one commit for N cells


def test_two_thousand_cells_in_one_commit(ws: Workspace, repo: Path) -> None:
    lines = [
        json.dumps({"key": f"e{n}", "title": f"epic {n}", "type": "epic"})
        if n % 10 == 0
        else json.dumps({"title": f"task {n}", "parent": f"e{n - n % 10}", "priority": n % 5})
        for n in range(2000)
    ]
    source = repo.parent / "backlog.jsonl"
    source.write_text("\n".join(lines) + "\n")
    before = int(git(repo, "rev-list", "--count", "HEAD"))
    created = create_cells(ws, cells_file=read_cell_file(str(source)))
    assert created.count == 2000 and len(set(created.ids)) == 2000
    assert int(git(repo, "rev-list", "--count", "HEAD")) == before + 1
    assert created.commit == git(repo, "rev-parse", "HEAD").strip()
    stat = git(repo, "show", "--stat", "--format=%s", "HEAD")
    assert stat.startswith("hive: create 2000 cells from backlog.jsonl")
    assert "2000 files changed" in stat
    names = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(names) == sorted(cell_path(cell_id) for cell_id in created.ids)
    assert_clean(repo)
    cells = {cell.id: cell for cell in list_cells(ws)}
    assert len(cells) == 2000
    epic = created.keys["e10"]
    child = cells[created.ids[11]]
    assert child.parent == epic and child.id.startswith(epic + ".")
    assert child.title == "task 11" and child.priority == 1
    assert cell_log(ws, cell_id=child.id)[0].commit == created.commit
    # the blobs went into one pack, not 2,000 loose files
    counts = git(repo, "count-objects", "-v")
    assert "in-pack: 2000" in counts or int(counts.split("in-pack: ")[1].split()[0]) >= 2000


def test_fields_and_references(ws: Workspace, repo: Path) -> None:
    existing = create_cell(ws, title="already there")
    created = from_text(
        ws,
        f"""
cells:
  - key: login
    title: Login page
    type: epic
    priority: P1
    labels: [auth, ui]
  - key: form
    title: Login form
    parent: login
    assignee: bob
    files: [src/login/*.py]
    description: |
      Two lines
      of text.
    notes: from the old tracker
    design: a form
    acceptance: it logs in
    metadata: {{origin: jira, number: 12}}
  - title: Wire the form
    parent: login
    blocks: [form]
    deps: ["related:{existing.id[:6]}", {{type: discovered-from, target: form}}]
    files_owned: [src/api/**]
""",
    )
    login, form, wire = (show_cell(ws, cell_id=cell_id) for cell_id in created.ids)
    assert created.keys == {"login": login.id, "form": form.id}
    assert (login.type, login.priority, login.labels) == ("epic", 1, ["auth", "ui"])
    assert form.parent == login.id and form.id.startswith(login.id + ".")
    assert form.assignee == "bob" and form.files_owned == ["src/login/*.py"]
    assert form.description == "Two lines\nof text.\n" and form.notes == "from the old tracker"
    assert form.metadata == {"origin": "jira", "number": 12}
    assert (form.design, form.acceptance_criteria) == ("a form", "it logs in")
    assert wire.parent == login.id and wire.files_owned == ["src/api/**"]
    assert [(d.type, d.target) for d in wire.dependencies] == [
        ("blocks", form.id),
        ("related", existing.id),
        ("discovered-from", form.id),
    ]
    assert login.created_at < form.created_at < wire.created_at  # the file's order is kept
    ready_ids = [cell.id for cell in ready(ws)]
    assert form.id in ready_ids and wire.id not in ready_ids  # wire waits for form
    assert_clean(repo)


def test_a_plain_list_and_specs_given_as_data(ws: Workspace) -> None:
    created = from_text(ws, "- title: one\n- title: two\n  type: bug\n", "list.yaml")
    assert [show_cell(ws, cell_id=i).type for i in created.ids] == ["task", "bug"]
    by_data = create_cells(ws, specs=[{"key": "a", "title": "A"}, {"title": "B", "blocks": ["a"]}])
    assert show_cell(ws, cell_id=by_data.ids[1]).blockers() == [by_data.keys["a"]]
    with pytest.raises(InvalidInput) as caught:
        create_cells(ws, specs=[{"title": "fine"}, {"title": "bad", "priority": 7}])
    assert caught.value.details["problems"][0]["message"].startswith("specs: entry 2: ")


def test_progress_is_reported(ws: Workspace) -> None:
    seen: list[tuple[str, int, int]] = []
    text = "".join(f"- title: t{n}\n" for n in range(600))
    from_text(ws, text, progress=lambda phase, done, total: seen.append((phase, done, total)))
    phases = [phase for phase, _, _ in seen]
    assert phases[0] == "checking" and "building" in phases and phases[-1] == "writing"
    assert seen[-1] == ("writing", 600, 600)


# ----------------------------------------------------------------- bad input


def test_every_problem_is_reported_with_its_line(ws: Workspace) -> None:
    found = problems_of(
        ws,
        """- key: a
  title: First
  priority: 9
- key: a
  title: Same key
- titel: typo
- title: Bad references
  parent: nowhere
  blocks: [a, zzz]
- title: Bad type
  type: story
  labels: [ok, ""]
- just a string
""",
    )
    assert found == [
        "cells.yaml:3: invalid priority 9: use 0-4 (0 is most urgent) or P0-P4",
        "cells.yaml:4: key 'a' is already used (line 1)",
        "cells.yaml:6: unknown field 'titel' (fields: key, title, type, priority, description,"
        " labels, assignee, parent, deps, blocks, files, notes, design, acceptance_criteria,"
        " metadata)",
        "cells.yaml:6: title is required",
        "cells.yaml:8: parent: 'nowhere' is neither a key of this file nor a cell",
        "cells.yaml:9: blocks: 'zzz' is neither a key of this file nor a cell",
        "cells.yaml:11: invalid type 'story': use one of bug, feature, task, epic, chore",
        "cells.yaml:12: empty label given",
        "cells.yaml:13: expected a mapping with at least a title",
    ]
    assert list_cells(ws) == []


def test_bad_titles_are_problems_with_their_line(ws: Workspace, repo: Path) -> None:
    """A title with a control character was an internal error (exit 70); a blank one was
    reported only once every other problem was fixed."""
    found = problems_of(
        ws,
        '- title: "two\\nlines"\n- title: "tab\\there"\n- title: ""\n- title: "  "\n'
        "- title: fine\n  priority: 9\n",
    )
    assert found == [
        "cells.yaml:1: invalid title: title must not contain control characters (found U+000A)",
        "cells.yaml:2: invalid title: title must not contain control characters (found U+0009)",
        "cells.yaml:3: invalid title: title must not be blank",
        "cells.yaml:4: invalid title: title must not be blank",
        "cells.yaml:6: invalid priority 9: use 0-4 (0 is most urgent) or P0-P4",
    ]
    source = repo.parent / "titles.yaml"
    source.write_text('- title: "a\\nb"\n')
    shown = cli(repo, "create", "--from", str(source))
    assert shown.exit_code == 2, shown.output
    assert "titles.yaml:1: invalid title" in shown.output and "internal error" not in shown.output
    assert list_cells(ws) == []


def test_json_lines_problems_name_the_record(ws: Workspace) -> None:
    found = problems_of(
        ws,
        '{"title": "fine"}\n\n{"title": "x", "type": "nope"}\nnot json\n{"title": ["a"]}\n',
        "cells.jsonl",
    )
    assert found == [
        "cells.jsonl:3: record 2: invalid type 'nope': use one of bug, feature, task, epic, chore",
        "cells.jsonl:4: record 3: invalid JSON: Expecting value (column 1)",
        "cells.jsonl:5: record 4: title must be text",
    ]


def test_json_lines_are_split_at_line_ends_only(ws: Workspace) -> None:
    """JSON lines as ``json.dumps(..., ensure_ascii=False)`` and ``JSON.stringify`` write
    them hold U+2028, U+2029 and U+0085 raw inside strings: the file was split at them
    too ("invalid JSON: Unterminated string", a problem per piece, every later line
    number off). A record is one line, ended by LF, CRLF or CR; what a field may not
    hold is named as such, at its line."""
    record = json.dumps(
        {"title": "Kept", "metadata": {"k": "a\u2028b\u2029c\x85d"}}, ensure_ascii=False
    )
    text = record + "\r\n" + '{"title": "Second"}\n'
    made = from_text(ws, text, "cells.jsonl")
    assert len(made.ids) == 2
    assert show_cell(ws, cell_id=made.ids[0]).metadata == {"k": "a\u2028b\u2029c\x85d"}
    bad = json.dumps({"title": "x", "description": "a\u2028b\x1b"}, ensure_ascii=False)
    found = problems_of(ws, bad + "\n" + '{"title": ["a"]}\n', "more.jsonl")
    assert found == [
        "more.jsonl:1: record 1: description must not contain control characters (found U+001B)"
        " at position 4: remove it (text may hold tabs and line breaks, no other control"
        " character)",
        "more.jsonl:2: record 2: title must be text",
    ]


def test_json_lines_nested_deeper_than_a_cell_file_may_are_refused(ws: Workspace) -> None:
    """A record whose cell file would nest more than MAX_NESTING levels (what hive's
    YAML loader refuses) is a problem: it was created, read back only while its file
    stayed in hive's own form, and any other form of it (a hand edit) a corrupt cell."""
    from hive.store.yamlio import MAX_NESTING, loads

    def record(depth: int) -> str:  # the record (and its cell file) nests ``depth`` levels
        metadata: dict[str, Any] = {}
        for _ in range(depth - 2):
            metadata = {"a": metadata}
        return json.dumps({"title": f"nests {depth}", "metadata": metadata})

    too_deep = f"{record(MAX_NESTING)}\n{record(MAX_NESTING + 1)}\n"
    assert problems_of(ws, too_deep, "cells.jsonl") == [
        f"cells.jsonl:2: record 2: invalid JSON: nested more than {MAX_NESTING} levels deep"
    ]
    (created,) = from_text(ws, record(MAX_NESTING) + "\n", "cells.jsonl").ids
    text = (Path(ws.root) / cell_path(created)).read_text(encoding="utf-8")
    assert loads(text.replace("\ntitle: ", "\ntitle:  ")) == loads(text)  # any form reads


TWO_CYCLES = """- key: c1
  title: one
  blocks: [c2]
- key: c2
  title: two
  blocks: [c1]
- key: e
  title: epic
  type: epic
- title: waits for its own epic
  parent: e
  blocks: [e]
"""


def test_cycles_are_refused(ws: Workspace) -> None:
    parents_and_self = """- key: p
  title: parent loop
  parent: q
- key: q
  title: other half
  parent: p
- key: self
  title: me
  blocks: [self]
"""
    found = problems_of(ws, TWO_CYCLES + parents_and_self)
    assert found == [
        "cells.yaml:15: parent cycle through key 'p'",
        "cells.yaml:18: parent cycle through key 'q'",
        "cells.yaml:21: a cell cannot depend on itself",
    ]  # dependency cycles are looked for once ids can be given
    assert problems_of(ws, TWO_CYCLES) == [
        "cells.yaml:1: dependency cycle: c1 -> c2 -> c1",
        "cells.yaml:7: dependency cycle: e -> 'waits for its own epic' -> e",
    ]


def test_a_cycle_through_an_existing_epic_is_refused(ws: Workspace) -> None:
    epic = create_cell(ws, title="stored epic", type="epic")
    found = problems_of(ws, f"- title: child\n  parent: {epic.id}\n  blocks: [{epic.id}]\n")
    assert found == [f"cells.yaml:1: dependency cycle: 'child' -> {epic.id} -> 'child'"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "no cells to create"),
        ("cells: []\n", "no cells to create"),
        ("cells:\n  - title: a\nextra: 1\n", "expected a list of cells"),
        ("title: not a list\n", "expected a list of cells"),
        ("- title: [unclosed\n", "malformed YAML"),
    ],
)
def test_documents_that_are_not_lists_of_cells(ws: Workspace, text: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        from_text(ws, text)
    assert list_cells(ws) == []


# ----------------------------------------------------------------- the command line


def test_cli_from_file_and_stdin(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    source = tmp_path / "backlog.yaml"
    source.write_text("- key: a\n  title: A\n- title: B\n  parent: a\n")
    shown = cli(repo, "create", "--from", str(source))
    assert shown.exit_code == 0, shown.stdout
    assert shown.stdout.startswith("created 2 cells in commit ")
    piped = cli(repo, "create", "--from", "-", "--json", stdin='{"title": "C"}\n{"title": "D"}\n')
    assert piped.exit_code == 0, piped.stdout
    data = json.loads(piped.stdout)
    assert data["count"] == 2 and len(data["ids"]) == 2 and data["commit"]
    assert {show_cell(ws, cell_id=i).title for i in data["ids"]} == {"C", "D"}
    assert git(repo, "log", "-1", "--format=%s").strip() == "hive: create 2 cells from <stdin>"


def test_cli_bad_input(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    source = tmp_path / "bad.yaml"
    source.write_text("- title: ok\n- priority: 1\n- title: x\n  parent: nope\n")
    failed = cli(repo, "create", "--from", str(source), "--json")
    assert failed.exit_code == 2
    error = json.loads(failed.stdout)
    assert error["code"] == "invalid_input"
    assert [p["line"] for p in error["problems"]] == [2, 4]
    assert list_cells(ws) == []
    missing = cli(repo, "create", "--from", str(tmp_path / "absent.yaml"))
    assert missing.exit_code == 2 and "cannot read" in missing.output
    both = cli(repo, "create", "a title", "--from", str(source))
    assert both.exit_code == 2 and "--from" in both.output
    neither = cli(repo, "create")
    assert neither.exit_code == 2 and "TITLE" in neither.output


def test_a_progress_bar_on_a_terminal_only(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    """The process boundary is the point here: stdout a terminal (a pty) or a pipe. The
    input is just over the size a bar is drawn from (600 entries of ~120 bytes: the
    bar is for the input's size, not its number of cells)."""
    from hive.cli.output import PROGRESS_FROM

    source = tmp_path / "big.jsonl"
    description = "words of a longer description " * 3
    lines = (json.dumps({"title": f"imported {n}", "description": description}) for n in range(600))
    source.write_text("".join(f"{line}\n" for line in lines))
    assert PROGRESS_FROM < source.stat().st_size < PROGRESS_FROM * 1.25
    command = ["-C", str(repo), "create", "--from"]
    code, seen = fork_on_terminal([*command, str(source)])  # a process of its own on a pty
    assert code == 0, seen
    assert b"600/600" in seen and b"\x1b[" in seen  # a bar was drawn, then cleared
    assert b"created 600 cells in commit " in seen
    piped = run_hive([*command, str(source)], module="hive.cli.main")  # pipes, no terminal
    assert piped.returncode == 0, piped.stderr
    assert piped.stderr == "" and piped.stdout.startswith("created 600 cells")


def test_one_cell_is_one_cell(ws: Workspace, repo: Path, tmp_path: Path) -> None:
    """'created 1 cells', 'hive: create 1 cells from one.yaml', '1 problem in 1 entries'."""
    source = tmp_path / "one.yaml"
    source.write_text("- title: only\n")
    shown = cli(repo, "create", "--from", str(source))
    assert shown.exit_code == 0, shown.output
    assert shown.stdout.startswith("created 1 cell in commit ")
    assert git(repo, "log", "-1", "--format=%s").strip() == "hive: create 1 cell from one.yaml"
    source.write_text("- title: bad\n  priority: 9\n")
    failed = cli(repo, "create", "--from", str(source))
    assert failed.exit_code == 2
    assert "one.yaml: 1 problem in 1 entry, nothing was created" in failed.stderr
