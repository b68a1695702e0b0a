"""Bidirectional controls and invisible characters ("Trojan Source"): a name (a label,
an assignee, an agent name, a file pattern, a key, a thread id, an imported beads id)
holding one is refused on every surface, naming the character and its position; free
text (a title, a description, a body) keeps it and is shown with it as ``<U+XXXX>``."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from hive.domain.beads import import_beads
from hive.domain.cells import create_cell, show_cell
from hive.domain.limits import check_name
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.text import first_unprintable, shown_lines, without_control
from hive.tools.registry import CallContext, call_tool
from tests.conftest import agent_env, git
from tests.inprocess import run_hive

RLO = "\u202e"  # RIGHT-TO-LEFT OVERRIDE
NAMED = "U+202E (RIGHT-TO-LEFT OVERRIDE) at position"


def test_a_name_is_refused_naming_the_character_and_its_position() -> None:
    with pytest.raises(InvalidInput) as caught:
        check_name(f"ab{RLO}c", "label")
    assert f"{NAMED} 3" in caught.value.message
    assert caught.value.details == {"character": "U+202E", "position": 3}
    assert "'ab\\u202ec'" in caught.value.message  # quoted with the character escaped
    for hidden, code in (("\u200b", "U+200B"), ("\ufeff", "U+FEFF"), ("\u2066", "U+2066")):
        with pytest.raises(InvalidInput, match=re.escape(f"{code} (")):
            check_name(f"x{hidden}", "assignee")
    assert first_unprintable("a\u00a0b") == (2, "\u00a0")  # a no-break space reads as one
    assert first_unprintable("Jane Doe, \u00e9l\u00e8ve, \U0001f41d") is None
    assert check_name("Jane Doe", "assignee") == "Jane Doe"


def test_free_text_is_shown_with_each_invisible_character_by_its_code_point() -> None:
    assert without_control(f"a{RLO}b\u200bc") == "a<U+202E>b<U+200B>c"
    assert without_control("esc\x1b[2J") == "esc?[2J"  # control characters: '?' as before
    assert shown_lines(f"one{RLO}\r\ntwo\tthree\u2069") == "one<U+202E>\ntwo\tthree<U+2069>"
    assert without_control("\U000e0041") == "<U+E0041>"  # a tag character: five digits


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_the_command_line_refuses_names_and_keeps_titles(
    repo: Path, ws: Workspace, module: str
) -> None:
    """Both paths answer alike: exit 2, the character and its position on stderr,
    nothing committed; a title keeps the character and is shown with ``<U+202E>``."""
    head = git(repo, "rev-parse", "HEAD")
    refused = {
        "label": ["create", "a title", "-l", f"ok{RLO}"],
        "assignee": ["create", "a title", "--assignee", f"bob{RLO}x"],
        "file pattern": ["create", "a title", "--files", f"src/{RLO}x.py"],
    }
    for what, args in refused.items():
        done = run_hive(["-C", str(repo), *args], module=module)
        assert done.returncode == 2, (what, done.stdout, done.stderr)
        assert f"invalid {what}" in done.stderr and NAMED in done.stderr, done.stderr
        assert RLO not in done.stderr  # quoted escaped: what is seen is what was given
    assert git(repo, "rev-parse", "HEAD") == head
    made = run_hive(["-C", str(repo), "create", f"pay {RLO}lanoitan"], module=module)
    assert made.returncode == 0, made.stderr
    assert "pay <U+202E>lanoitan" in made.stdout
    cell_id = made.stdout.split()[1]
    assert show_cell(ws, cell_id=cell_id).title == f"pay {RLO}lanoitan"
    assert git(repo, "log", "-1", "--format=%s").strip().endswith("pay <U+202E>lanoitan")
    update = run_hive(["-C", str(repo), "update", cell_id, "--assignee", f"x{RLO}"], module=module)
    assert update.returncode == 2 and f"{NAMED} 2" in update.stderr, update.stderr
    shown = run_hive(["-C", str(repo), "show", cell_id], module=module)
    assert "pay <U+202E>lanoitan" in shown.stdout and RLO not in shown.stdout
    exact = json.loads(run_hive(["-C", str(repo), "--json", "show", cell_id]).stdout)
    assert exact["title"] == f"pay {RLO}lanoitan"


def test_the_lean_path_and_the_full_cli_refuse_with_the_same_words(
    repo: Path, ws: Workspace
) -> None:
    args = ["-C", str(repo), "create", "t", "-l", "fine", "--assignee", "\u2066eve"]
    lean, full = (run_hive(args, module=module) for module in ("hive", "hive.cli.main"))
    assert (lean.returncode, lean.stderr) == (full.returncode, full.stderr) == (2, full.stderr)
    assert "U+2066 (LEFT-TO-RIGHT ISOLATE) at position 1" in full.stderr


def test_a_read_refuses_a_claimed_name_with_a_hidden_character_as_a_write_does(
    repo: Path, ws: Workspace
) -> None:
    """``hive --actor 'bob<U+2003>' list`` (or ``HIVE_AGENT`` holding it): the refusal
    of a write, from the lean path and the full CLI alike; a plain name still reads."""
    cell_id = create_cell(ws, title="t").id
    base = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    write = run_hive(["-C", str(repo), "--actor", "bob\u2003", "create", "x"], env=base)
    assert write.returncode == 2 and "U+2003 (EM SPACE) at position 4" in write.stderr
    for command in (["list"], ["show", cell_id], ["ready"]):
        for claim, env in (
            (["--actor", "bob\u2003"], base),
            ([], {**base, "HIVE_AGENT": "bob\u2003"}),
        ):
            args = ["-C", str(repo), *claim, *command]
            for module in ("hive", "hive.cli.main"):
                read = run_hive(args, env=env, module=module)
                assert (read.returncode, read.stderr, read.stdout) == (2, write.stderr, ""), (
                    command,
                    claim,
                    module,
                )
        plain = run_hive(["-C", str(repo), "--actor", "bob", *command], env=base)
        assert plain.returncode == 0 and cell_id in plain.stdout, plain.stderr


def test_tools_answer_a_structured_error_naming_the_character(repo: Path, ws: Workspace) -> None:
    git(repo, "commit", "--allow-empty", "-qm", "x")
    ctx = CallContext(root=str(repo), agent="carol")
    assert "error" not in call_tool(ctx, "swarmmail_init", {})
    calls = {
        "hive_create": {"title": "t", "labels": [f"a{RLO}"]},
        "hive_update": {"id": "hv-x", "assignee": f"a{RLO}"},
        "swarmmail_reserve": {"paths": [f"l{RLO}b/a.py"]},
        "ctx_put": {"key": f"k{RLO}", "value": 1},
        "fs_write": {"path": f"a{RLO}b.txt", "content": "x"},
    }
    for name, args in calls.items():
        answer = call_tool(ctx, name, args)
        assert answer.get("code") == "invalid_input", (name, answer)
        assert (answer["character"], answer["position"]) == ("U+202E", 2), (name, answer)
    agent = agent_env(repo, "ag1")
    registered = run_hive(["-C", str(repo), "agent", "register", f"ag{RLO}2"], env=agent)
    assert registered.returncode == 2 and f"{NAMED} 3" in registered.stderr, registered.stderr
    said = (
        f"invalid agent name 'ag\\u202e2': {NAMED} 3 is an invisible, bidirectional or"
        " control character, which a name may not hold (it would read as another name);"
        " use letters"
    )  # worded as every other name's refusal (limits.hidden_character)
    assert said in " ".join(registered.stderr.split()), registered.stderr  # whole, not cut
    fresh = call_tool(CallContext(root=str(repo)), "swarmmail_init", {"agent_name": f"d{RLO}"})
    assert fresh.get("code") == "invalid_input", fresh
    assert (fresh["character"], fresh["position"]) == ("U+202E", 2), fresh


def test_mail_refuses_a_hidden_thread_id_and_keeps_a_hidden_subject(
    repo: Path, ws: Workspace
) -> None:
    ag1, ag2 = agent_env(repo, "ag1"), agent_env(repo, "ag2")
    for env, name in ((ag1, "ag1"), (ag2, "ag2")):
        assert run_hive(["-C", str(repo), "agent", "register", name], env=env).returncode == 0
    send = ["-C", str(repo), "mail", "send", "ag2", "-s", f"re {RLO}x", "-b", f"body {RLO}"]
    refused = run_hive([*send, "--thread", f"t{RLO}"], env=ag1)
    assert refused.returncode == 2 and f"invalid thread_id 't\\u202e': {NAMED} 2" in refused.stderr
    # a recipient is a name: refused as one, not "unknown: register it with 'hive agent
    # register ...'" (a name no agent can be registered under)
    to_hidden = ["-C", str(repo), "mail", "send", f"ag{RLO}2", "-s", "hi"]
    refused = run_hive(to_hidden, env=ag1)
    assert refused.returncode == 2, refused.stderr
    assert f"invalid recipient 'ag\\u202e2': {NAMED} 3" in refused.stderr
    assert "register" not in refused.stderr, refused.stderr
    assert run_hive(send, env=ag1).returncode == 0
    inbox = run_hive(["-C", str(repo), "mail", "inbox"], env=ag2)
    assert "re <U+202E>x" in inbox.stdout and RLO not in inbox.stdout, inbox.stdout


def test_beads_records_with_hidden_names_are_named_like_other_bad_lines(
    ws: Workspace, repo: Path, tmp_path: Path
) -> None:
    stamp = "2025-12-17T21:19:10Z"

    def bead(ident: str, **fields: object) -> str:
        row = {"id": ident, "title": f"bead {ident}", "created_at": stamp, "updated_at": stamp}
        return json.dumps(row | fields)

    source = tmp_path / "hidden.jsonl"
    lines = [
        bead("bd-1", title=f"free text {RLO} is kept"),
        bead(f"bd-2{RLO}"),
        bead("bd-3", labels=[f"l{RLO}"]),
        bead("bd-4", assignee="\u200bbob"),
        bead("bd-5", dependencies=[{"depends_on_id": f"bd-1{RLO}", "type": "blocks"}]),
    ]
    source.write_text("\n".join(lines) + "\n")
    with pytest.raises(InvalidInput) as caught:
        import_beads(ws, path=str(source))
    errors = caught.value.details["errors"]
    assert [error.split(":")[1] for error in errors] == ["2", "3", "4", "5"], errors
    assert f"hidden.jsonl:2: invalid id 'bd-2\\u202e': {NAMED} 5" in errors[0]
    assert (
        "hidden.jsonl:4: bd-4: invalid assignee '\\u200bbob': U+200B (ZERO WIDTH SPACE)"
        in errors[2]
    )
    assert "invalid dependency target" in errors[3]
    source.write_text(lines[0] + "\n")
    assert import_beads(ws, path=str(source)).imported == 1
    assert show_cell(ws, cell_id="bd-1").title == f"free text {RLO} is kept"


def test_a_name_written_by_hand_is_shown_with_its_code_point(repo: Path, ws: Workspace) -> None:
    """A label in a cell file edited by hand (hive reads what it did not write) is
    shown by the rule for text: the reader sees it holds a right-to-left override."""
    cell = create_cell(ws, title="plain", labels=["safe"])
    path = next((repo / ".hive" / "cells").rglob(f"{cell.id}.yaml"))
    path.write_text(path.read_text().replace("- safe", f'- "sa{RLO}fe"'))
    git(repo, "commit", "-qam", "hand edit", "--no-verify")
    for module in ("hive", "hive.cli.main"):
        shown = run_hive(["-C", str(repo), "show", cell.id], module=module)
        assert "sa<U+202E>fe" in shown.stdout and RLO not in shown.stdout, shown.stdout
    doctor = run_hive(["-C", str(repo), "doctor"])
    assert doctor.returncode == 0, doctor.stdout  # a warning, not a problem
    assert (
        f"warning hidden-character: {cell.id} label 'sa\\u202efe' holds U+202E at" in doctor.stdout
    )
    assert f"'hive update {cell.id} --remove-label NAME' removes it" in doctor.stdout


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_a_label_written_by_hand_can_still_be_removed(
    repo: Path, ws: Workspace, module: str
) -> None:
    """Adding a label holding U+202E is refused, but one that reached a cell by a hand
    edit (or a merge) can be removed: removing names what is stored."""
    cell = create_cell(ws, title="plain", labels=["safe", "kept"])
    path = next((repo / ".hive" / "cells").rglob(f"{cell.id}.yaml"))
    path.write_text(path.read_text().replace("- safe", f'- "sa{RLO}fe"'))
    git(repo, "commit", "-qam", "hand edit", "--no-verify")
    args = ["-C", str(repo), "update", cell.id]
    added = run_hive([*args, "--add-label", f"new{RLO}"], module=module)
    assert added.returncode == 2 and f"{NAMED} 4" in added.stderr, added.stderr
    removed = run_hive([*args, "--remove-label", f"sa{RLO}fe"], module=module)
    assert removed.returncode == 0, removed.stderr
    assert show_cell(Workspace(str(repo)), cell_id=cell.id).labels == ["kept"]
