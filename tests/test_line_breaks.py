"""Line breaks of every kind in free text: U+2028 (LINE SEPARATOR), U+2029 (PARAGRAPH
SEPARATOR), NEL (U+0085), vertical tab and form feed beside LF, CR and CRLF, and tabs.
Pasted text holds them (a word processor's soft line break is U+2028), and one of them in
a beads export's description stopped the whole import. Free text keeps them on every
surface (``hive.domain.limits.check_text``: ``hive.text.TEXT_KEPT``), the cell file and
git hold them escaped (ASCII), ``--json`` gives them back exactly and ``hive show`` lays
each out as a line break; any other control character (ESC, NUL, BEL) is refused,
naming the record, field, character and position."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from hive.domain.beads import export_beads, import_beads
from hive.domain.cells import create_cell, show_cell
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.text import LINE_BREAKS, as_lines
from hive.tools.registry import CallContext, call_tool
from tests.conftest import git
from tests.gitchecks import assert_fsck_clean
from tests.inprocess import run_hive

# Every line break kept (LF, CRLF, lone CR, VT, FF, NEL, LS, PS) and a tab.
PASTED = "one\u2028two\u2029three\x85four\r\nfive\rsix\x0bseven\x0ceight\tnine\n"
STAMP = "2025-12-17T21:19:10Z"


def _bead(ident: str, **fields: object) -> str:
    row = {"id": ident, "title": f"bead {ident}", "created_at": STAMP, "updated_at": STAMP}
    return json.dumps(row | fields, ensure_ascii=False)


def _cell_file(repo: Path, cell_id: str) -> str:
    path = git(repo, "ls-files", "--", f".hive/cells/*{cell_id}.yaml").strip()
    return git(repo, "show", f"HEAD:{path}")


def test_a_beads_import_keeps_every_line_break_exactly(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    source = tmp_path / "pasted.jsonl"
    comment = {"id": "c1", "author": "ann", "text": PASTED, "created_at": STAMP}
    lines = [
        _bead("bd-1", description=PASTED, design=PASTED, notes=PASTED, comments=[comment]),
        _bead("bd-2", title="soft\u2028break\x85title", acceptance_criteria="a\u2029b"),
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert import_beads(ws, path=str(source)).imported == 2
    shown = json.loads(run_hive(["-C", str(repo), "--json", "show", "bd-1"]).stdout)
    assert shown["description"] == shown["design"] == shown["notes"] == PASTED
    assert shown["comments"][0]["text"] == PASTED
    stored = _cell_file(repo, "bd-1")
    assert stored.isascii() and "\\u2028" in stored and "\\r\\n" in stored, stored
    assert_fsck_clean(repo)
    # a title is one line: its line breaks become spaces, the original goes back out
    assert show_cell(ws, cell_id="bd-2").title == "soft break title"
    back = tmp_path / "back.jsonl"
    export_beads(ws, path=str(back))
    text = back.read_text(encoding="utf-8")
    assert LINE_BREAKS.isdisjoint(text.replace("\n", ""))  # escaped: one line per record
    exported = {row["id"]: row for row in map(json.loads, text.splitlines())}
    assert exported["bd-1"]["description"] == PASTED
    assert exported["bd-1"]["comments"][0]["text"] == PASTED
    assert exported["bd-2"]["title"] == "soft\u2028break\x85title"
    assert exported["bd-2"]["acceptance_criteria"] == "a\u2029b"


def test_a_beads_import_refuses_other_control_characters_naming_each_record(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    """As every other bad record: refused up front, all named (file, line, id, field,
    character and its position), nothing committed."""
    head = git(repo, "rev-parse", "HEAD")
    source = tmp_path / "mixed.jsonl"
    comment = {"id": "c1", "text": "bell\x07", "created_at": STAMP}
    lines = [
        _bead("bd-1", description=PASTED),
        _bead("bd-2", description="colour \x1b[31mred"),
        _bead("bd-3", comments=[comment]),
        _bead("bd-4", title="title \x1b[2J"),
    ]
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InvalidInput) as caught:
        import_beads(ws, path=str(source))
    errors = caught.value.details["errors"]
    assert errors == [
        "mixed.jsonl:2: bd-2: description must not contain control characters (found U+001B)"
        " at position 8: remove it (text may hold tabs and line breaks, no other control"
        " character)",
        "mixed.jsonl:3: bd-3: comments[0].text must not contain control characters (found"
        " U+0007) at position 5: remove it (text may hold tabs and line breaks, no other"
        " control character)",
        "mixed.jsonl:4: bd-4: invalid title: title must not contain control characters"
        " (found U+001B)",
    ]
    assert "nothing was imported" in caught.value.message
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_create_update_and_the_tools_agree_on_free_text(
    repo: Path, ws: Workspace, module: str
) -> None:
    made = run_hive(["-C", str(repo), "--json", "create", "t", "-d", PASTED], module=module)
    assert made.returncode == 0, made.stderr
    cell_id = json.loads(made.stdout)["id"]
    assert show_cell(ws, cell_id=cell_id).description == PASTED
    again = PASTED[::-1]
    updated = run_hive(["-C", str(repo), "update", cell_id, "-d", again], module=module)
    assert updated.returncode == 0, updated.stderr
    assert show_cell(ws, cell_id=cell_id).description == again
    head = git(repo, "rev-parse", "HEAD")
    for args in (["create", "t", "-d", "a\x1bb"], ["update", cell_id, "--design", "a\x1bb"]):
        refused = run_hive(["-C", str(repo), *args], module=module)
        assert refused.returncode == 2, refused.stderr
        assert "(found U+001B) at position 2: remove it" in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    ctx = CallContext(root=str(repo), agent="carol")
    answer = call_tool(ctx, "hive_create", {"title": "t", "description": PASTED})
    assert answer["result"]["description"] == PASTED, answer
    answer = call_tool(ctx, "hive_update", {"id": cell_id, "design": PASTED})
    assert answer["result"]["design"] == PASTED, answer
    answer = call_tool(ctx, "hive_update", {"id": cell_id, "design": "x\x00"})
    assert answer["code"] == "invalid_input", answer
    assert (answer["character"], answer["position"]) == ("U+0000", 2), answer
    refused_title = call_tool(ctx, "hive_create", {"title": "a\u2028b"})
    assert refused_title["code"] == "invalid_input", refused_title  # a title is one line


def test_show_lays_each_line_break_out_as_one(repo: Path, ws: Workspace) -> None:
    """No raw separator, NEL, lone CR, VT or FF reaches the terminal (a lone CR would
    overwrite the line, a separator is drawn differently by each terminal): each is a
    line break, on the lean path and the full CLI, piped and laid out by rich."""
    cell_id = create_cell(ws, title="pasted", description=PASTED).id
    expected = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight"
    for module in ("hive", "hive.cli.main"):
        for env in ({}, {"COLUMNS": "100", "FORCE_COLOR": "1"}):
            shown = run_hive(["-C", str(repo), "show", cell_id], module=module, env=_env(env))
            assert shown.returncode == 0, shown.stderr
            text = _without_styles(shown.stdout)
            assert expected in text, text
            assert "nine" in text and LINE_BREAKS.isdisjoint(text.replace("\n", "")), text
    assert as_lines("a\r\nb\rc\u2028d") == "a\nb\nc\nd"
    assert as_lines("plain") == "plain"


def _env(extra: dict[str, str]) -> dict[str, str]:
    import os

    base = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "FORCE_COLOR")}
    return base | extra


def _without_styles(text: str) -> str:
    import re

    return re.sub("\x1b\\[[0-9;]*m", "", text)


def test_git_keeps_the_text_through_a_clone(repo: Path, ws: Workspace, tmp_path: Path) -> None:
    """What git holds is the text: a clone reads it back exactly."""
    cell_id = create_cell(ws, title="pasted", description=PASTED).id
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    shown = json.loads(run_hive(["-C", str(clone), "--json", "show", cell_id]).stdout)
    assert shown["description"] == PASTED


def test_a_mail_body_keeps_its_line_breaks_and_is_read_with_them(repo: Path, ws: Workspace) -> None:
    from tests.conftest import agent_env

    ag1, ag2 = agent_env(repo, "ag1"), agent_env(repo, "ag2")
    for env, name in ((ag1, "ag1"), (ag2, "ag2")):
        assert run_hive(["-C", str(repo), "agent", "register", name], env=env).returncode == 0
    send = ["-C", str(repo), "--json", "mail", "send", "ag2", "-s", "hi", "-b", PASTED]
    sent = run_hive(send, env=ag1)
    assert sent.returncode == 0, sent.stderr
    number = str(json.loads(sent.stdout)["message_id"])
    exact = run_hive(["-C", str(repo), "--json", "mail", "read", number], env=ag2)
    assert json.loads(exact.stdout)["body"] == PASTED
    for module in ("hive", "hive.cli.main"):
        read = run_hive(["-C", str(repo), "mail", "read", number], env=ag2, module=module)
        assert read.returncode == 0, read.stderr
        assert "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight" in read.stdout, read.stdout
    refused = run_hive(["-C", str(repo), "mail", "send", "ag2", "-s", "x", "-b", "a\x1b"], env=ag1)
    assert refused.returncode == 2 and "U+001B" in refused.stderr, refused.stderr
