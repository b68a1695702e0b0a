"""Text a person or an agent wrote is shown as it is by every command a person reads:
never read as rich markup ('app/[id]/**' is no markup, '[/red]' no error), and its
control characters never reach the terminal (an escape sequence in a description
must not clear the screen): each is shown as '?' (``hive.text.shown_lines``).

One repository holds such text in every field hive keeps: cells (titles, descriptions,
notes, labels, assignees, comments, reasons), mail (subjects, bodies, threads),
reservations, proposals, the event log, scratchpad, todos, shared context, the
blackboard, the queue, permission requests, outcomes; and a cell file, a reservation
file and an event line written by hand with escape sequences in them. Every command
that shows them runs in this process (``tests/inprocess.py``: rich renders as in a
real process, to a pipe) and its output is checked."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hive.cli import output
from tests.conftest import agent_env, git, isolated_env, make_repo
from tests.inprocess import Outcome, fork_on_terminal, run_hive

# What rich would read as markup: styles, a closing tag with nothing open (a
# MarkupError), a link, a Next.js route, and a backslash before a tag.
MARK = r"[bold]B[/bold] [/red] [link=http://e]z[/link] app/[id]/** C:\[red]"
PERSON = "Eve [/red] [bold]E"  # a person's git user.name: any text
# Control text written by hand into files hive reads, and how it is to be shown.
CLEAR, SHOWN_CLEAR = "\x1b[2J", "?[2J"
TITLE_SEQ = "\x1b]0;pwned\x07"  # sets the terminal's title
# A title that reads one way and means another ("Trojan Source"): a right-to-left
# override and isolates reorder it, zero-width characters hide in it.
TROJAN = "ok\u202e\u2066 nimda\u2069\u2066 // x\u200b\u2060\ufeff"
SHOWN_TROJAN = "ok<U+202E><U+2066> nimda<U+2069><U+2066> // x<U+200B><U+2060><U+FEFF>"
RAW = ("\x1b", "\x9b", "\x07", "\x08", "\r", "\u202e", "\u2066", "\u2069", "\u200b", "\ufeff")


def hive(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> Outcome:
    return run_hive(["-C", str(repo), *args], env=env, input=stdin)


def ok(repo: Path, *args: str, env: dict[str, str] | None = None, stdin: str = "") -> Outcome:
    done = hive(repo, *args, env=env, stdin=stdin)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done


def _person_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env.update(GIT_AUTHOR_NAME=PERSON, GIT_COMMITTER_NAME=PERSON)
    return env


def _id_of(done: Outcome) -> str:
    found = re.search(r"\b(hv-[a-z0-9.]+)", done.stdout)
    assert found, done.stdout
    return found.group(1)


def _hand_written_cell(repo: Path) -> None:
    """A cell file written by hand (or by another tool) with escape sequences in its
    text fields: hive reads it (only a title is checked), so hive must show it safely."""
    cell = {
        "id": "hv-ctl001",
        "title": f"hand written {TROJAN}",
        "type": "task",
        "status": "open",
        "priority": 1,
        "assignee": f"mallory{CLEAR}",
        "labels": [f"lab{TITLE_SEQ}", TROJAN],
        "description": f"desc{CLEAR}\nsecond\tline\r\nthird\x9b",
        "notes": f"notes{CLEAR}",
        "design": f"design{CLEAR}",
        "acceptance_criteria": f"accept{CLEAR}",
        "comments": [
            {
                "id": "c-1",
                "author": f"au{CLEAR}",
                "text": f"comment{CLEAR}\x08",
                "created_at": "2026-11-01T10:00:00.000Z",
            }
        ],
        "created_at": "2026-11-01T10:00:00.000Z",
        "created_by": f"maker{CLEAR}",
        "updated_at": "2026-11-01T10:00:00.000Z",
    }
    path = repo / ".hive" / "cells" / "c" / "hv-ctl001.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(cell, indent=2))  # JSON is YAML
    git(repo, "add", str(path))
    git(repo, "commit", "-qm", "a cell written by hand", "--no-verify")


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """The repository (``repo``) and the ids of what it holds."""
    with isolated_env(tmp_path_factory):
        repo = make_repo(tmp_path_factory.mktemp("markup") / "repo")
        route = repo / "app" / "[id]" / "page.tsx"
        route.parent.mkdir(parents=True)
        route.write_text("export default 1\n")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "a route")
        git(repo, "config", "user.name", PERSON)
        person = _person_env()
        ok(repo, "init", env=person)
        ids: dict[str, str] = {"repo": str(repo)}
        epic = ok(repo, "epic", "create", f"epic {MARK}", "-s", f"sub {MARK}", env=person)
        ids["epic"] = _id_of(epic)
        ids["sub"] = re.findall(r"\b(hv-[a-z0-9]+\.[a-z0-9]+)", epic.stdout)[0]
        ids["blocker"] = _id_of(ok(repo, "create", f"blocker {MARK}", env=person))
        ids["cell"] = _id_of(
            ok(
                repo,
                "create",
                f"title {MARK}",
                "-d",
                f"description {MARK}\nline two \\",
                "-l",
                f"label {MARK}",
                "--dep",
                f"blocks:{ids['blocker']}",
                "--files",
                "app/[id]/**",
                env=person,
            )
        )
        ok(repo, "comment", ids["cell"], f"comment {MARK}", env=person)
        ok(repo, "update", ids["cell"], "--append-notes", f"notes {MARK}", env=person)
        ok(repo, "update", ids["cell"], "--assignee", f"assignee {MARK}", env=person)
        closed = ok(repo, "create", f"closed {MARK}", env=person)
        ids["closed"] = _id_of(closed)
        ok(repo, "close", ids["closed"], "-r", f"reason {MARK}", env=person)
        _hand_written_cell(repo)
        trojan = ok(repo, "create", f"trojan {TROJAN}", "-d", f"desc {TROJAN}")
        ids["trojan"] = _id_of(trojan)

        ag1, ag2 = agent_env(repo, "ag1"), agent_env(repo, "ag2")
        ok(repo, "agent", "register", "ag1", "--task", f"task {MARK}", env=ag1)
        ok(repo, "agent", "register", "ag2", env=ag2)
        ok(
            repo,
            "mail",
            "send",
            "ag2",
            "-s",
            f"subject {MARK} ends \\",
            "-b",
            f"body {MARK}\nline two \\",
            "--thread",
            f"thread {MARK}",
            env=ag1,
        )
        ok(repo, "start", ids["sub"], env=ag1)
        route.write_text(f"export default 1 // {MARK}{CLEAR}{TROJAN}\r\n")  # a patch to review
        ok(
            repo,
            "swarm",
            "complete",
            ids["sub"],
            "-s",
            f"summary {MARK}",
            "-f",
            "app/[id]/page.tsx",
            "--no-gate",
            env=ag1,
        )
        ok(repo, "reserve", "app/[id]/**", "lib/x.py", "--reason", f"why {MARK}", env=ag2)
        held = repo / ".hive" / "reservations" / "ag2.yaml"  # a pattern edited by hand
        held.write_text(
            re.sub(
                r"path_pattern: \"?lib/x.py\"?",
                'path_pattern: "lib/\\\\e[2Jx.py"',
                held.read_text(),
            )
        )
        git(repo, "commit", "-qam", "a reservation edited by hand", "--no-verify")
        calls = [
            {"name": "fs_write", "args": {"path": "app/[id]/new.tsx", "content": "x\n"}},
            {"name": "fs_read", "args": {"path": "app/[id]/page.tsx"}},
        ]
        ok(repo, "tools", "run", env=ag1, stdin=json.dumps({"tool_calls": calls}))
        ok(
            repo,
            "scratchpad",
            "write",
            "notes/[id]",
            f"pad {MARK}{CLEAR}",
            "--title",
            MARK,
            env=ag1,
        )
        todo = {"content": f"todo {MARK}", "status": "pending"}
        ok(repo, "todo", "set", json.dumps(todo), env=ag1)
        ok(repo, "ctx", "put", f"key {MARK}", f"value {MARK}", env=ag1)
        ok(repo, "blackboard", "set", f"bb {MARK}", json.dumps(f"entry {MARK}"), env=ag1)
        ok(repo, "queue", "add", f"kind {MARK}", json.dumps({"x": MARK}), env=ag1)
        ok(repo, "memory", "add", "goals", f"goal {MARK}", env=ag1)
        hive(
            repo,
            "permissions",
            "request",
            "FILE_EXPORT",
            f"because {MARK}",
            "--scope",
            MARK,
            env=ag1,
        )
        state = Path(git(repo, "rev-parse", "--git-common-dir").strip())
        state = state if state.is_absolute() else repo / state
        line = {
            "ts": 1795575845,
            "agent": f"ag{CLEAR}",
            "tool": f"tool{TITLE_SEQ}",
            "outcome": MARK,
        }
        with open(state / "hive" / "events.jsonl", "a", encoding="utf-8") as log:
            log.write(json.dumps(line) + "\n")
        yield ids


def _check(done: Outcome, *literal: str, code: int = 0) -> str:
    """The command's output (stdout and stderr): no error from rich, no traceback, no
    raw control character; each of ``literal`` shown as it is."""
    shown = done.stdout + done.stderr
    assert done.returncode == code, (done.args, shown)
    for bad in ("Traceback", "internal error", "MarkupError"):
        assert bad not in shown, (done.args, shown)
    for char in RAW:  # a CR before a line break is no hazard (review's piped patches)
        assert char not in shown.replace("\r\n", "\n"), (done.args, char, shown)
    for text in literal:
        assert text in shown, (done.args, text, shown)
    return shown


def _as(hostile: dict[str, str], *args: str, agent: str | None = None) -> Outcome:
    repo = Path(hostile["repo"])
    env = agent_env(repo, agent) if agent else _person_env()
    return hive(repo, *args, env=env)


def test_cells_show_their_text_as_it_is(hostile: dict[str, str]) -> None:
    cell, blocker, closed = hostile["cell"], hostile["blocker"], hostile["closed"]
    shown = _check(
        _as(hostile, "show", cell),
        f"title {MARK}",
        f"description {MARK}\nline two \\",
        f"label {MARK}",
        f"assignee {MARK}",
        f"comment {MARK}",
        f"notes {MARK}",
        f"comment by {PERSON} at",
        f"by {PERSON}",
        f"blocked by   {blocker} [open] blocker {MARK}",
    )
    assert "app/[id]/**" in shown
    _check(_as(hostile, "show", closed), f"close reason reason {MARK}")
    for args in (["list"], ["list", "--all", "-s", "all"], ["ready"]):
        _check(_as(hostile, *args), f"blocker {MARK}")
    _check(_as(hostile, "blocked"), f"title {MARK}", f"{cell} waits on {blocker} [open]")
    _check(_as(hostile, "stats"), f"assignee {MARK} 1")
    _check(_as(hostile, "log"), f"title {MARK}"[:30], PERSON)
    _check(_as(hostile, "dep", "tree", cell), f"{blocker} [open] blocker {MARK}")
    _check(_as(hostile, "review", cell), f"{cell} [open] title {MARK} — assignee {MARK}")
    _check(_as(hostile, "epic", "status", hostile["epic"]), f"epic {MARK}  [open]")
    _check(_as(hostile, "swarm", "status", hostile["epic"]), f"{hostile['epic']} epic {MARK}:")
    _check(
        _as(hostile, "review", hostile["sub"]),
        f"summary {MARK}",
        "touched:  app/[id]/page.tsx",
        "[closed]",
        f"+export default 1 // {MARK}{SHOWN_CLEAR}{SHOWN_TROJAN}\r\n",
    )
    _check(_as(hostile, "swarm", "insights"), "feature-based")


def test_a_hand_written_cell_file_shows_escapes_as_question_marks(
    hostile: dict[str, str],
) -> None:
    """Only a title is checked when a cell file is read: every other field of a file
    written by hand may hold an escape sequence."""
    shown = _check(
        _as(hostile, "show", "hv-ctl001"),
        f"mallory{SHOWN_CLEAR}",
        "lab?]0;pwned?",
        f"desc{SHOWN_CLEAR}\nsecond",
        "line\nthird?",
        f"notes{SHOWN_CLEAR}",
        f"design{SHOWN_CLEAR}",
        f"accept{SHOWN_CLEAR}",
        f"comment by au{SHOWN_CLEAR} at",
        f"comment{SHOWN_CLEAR}?",
        f"by maker{SHOWN_CLEAR}",
    )
    assert "second" in shown
    for args in (["list"], ["ready"], ["stats"], ["list", "--assignee", f"mallory{CLEAR}"]):
        _check(_as(hostile, *args), f"mallory{SHOWN_CLEAR}")
    _check(_as(hostile, "review", "hv-ctl001"), f"mallory{SHOWN_CLEAR}")
    _check(_as(hostile, "doctor"), "warning hand-edit", "checked 7 cells")


def test_bidi_controls_and_invisible_characters_are_shown_by_their_code_points(
    hostile: dict[str, str],
) -> None:
    """A right-to-left override, isolates and zero-width characters are written as
    given in free text (Hebrew and Arabic use the marks, emoji the joiners) and kept
    exactly in JSON, but never reach a terminal, where they would reorder or hide what
    a reviewer reads ("Trojan Source"): each is shown as its code point ('<U+202E>'),
    in commit subjects too, so the reader sees what is stored. (A label holding one is
    refused: tests/test_hidden_characters.py; this one was written by hand.)"""
    trojan = hostile["trojan"]
    _check(_as(hostile, "show", trojan), f"trojan {SHOWN_TROJAN}", f"desc {SHOWN_TROJAN}")
    _check(
        _as(hostile, "show", "hv-ctl001"),
        f"hand written {SHOWN_TROJAN}",
        f"lab?]0;pwned?, {SHOWN_TROJAN}",
    )
    for args in (["list"], ["ready"], ["log"], ["review", trojan]):
        _check(_as(hostile, *args), f"trojan {SHOWN_TROJAN}")
    subjects = git(Path(hostile["repo"]), "log", "--format=%s")
    assert f"hive: create {trojan} trojan {SHOWN_TROJAN}" in subjects.splitlines()
    exact = json.loads(_as(hostile, "--json", "show", trojan).stdout)
    assert exact["title"] == f"trojan {TROJAN}"
    hand = json.loads(_as(hostile, "--json", "show", "hv-ctl001").stdout)
    assert hand["labels"] == [f"lab{TITLE_SEQ}", TROJAN]


# Format characters (category Cf) a script shows: Arabic, Syriac and Kaithi number and
# end-of-verse signs, and the Egyptian hieroglyph controls, which lay out signs.
SHOWN_FORMAT = frozenset(
    [chr(code) for code in (0x6DD, 0x70F, 0x8E2, 0x110BD, 0x110CD)]
    + [chr(code) for code in [*range(0x600, 0x606), 0x890, 0x891, *range(0x13430, 0x13440)]]
)


def test_every_invisible_format_character_is_shown_by_its_code_point() -> None:
    """Every character of Unicode's format category (Cf) but the joiners and the signs
    some scripts show is invisible, and is shown as its code point: the shorthand
    format controls (U+1BCA0-U+1BCA3) and the musical beam, tie, slur and phrase
    controls (U+1D173-U+1D17A) hid in a title as well as a zero-width space."""
    import unicodedata

    from hive.text import INVISIBLE_CHARS, without_control

    codes = [*range(0x20000), *range(0xE0000, 0xE1000)]  # where Cf characters are
    invisible = {
        char
        for char in map(chr, codes)
        if unicodedata.category(char) == "Cf" and char not in SHOWN_FORMAT | {"\u200c", "\u200d"}
    }
    assert invisible - INVISIBLE_CHARS == set()
    assert without_control("ad\U0001d173m\U0001bca0in") == "ad<U+1D173>m<U+1BCA0>in"


def test_joiners_of_emoji_and_words_are_shown_as_written(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """The zero-width joiner and non-joiner neither reorder nor hide text: emoji are made
    of joined parts (a family, a rainbow flag) and Persian and Indic words shape their
    letters with them, so a terminal shows them as written, in commit subjects too."""
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    persian = "\u0645\u06cc\u200c\u062e\u0648\u0627\u0647\u0645"
    title = f"family {family} {persian}"
    with isolated_env(tmp_path_factory):
        repo = make_repo(tmp_path_factory.mktemp("joiners") / "repo")
        ok(repo, "init", env=_person_env())
        created = _id_of(ok(repo, "create", title, env=_person_env()))
        _check(hive(repo, "show", created, env=_person_env()), title)
        _check(hive(repo, "list", env=_person_env()), title)
        subjects = git(repo, "log", "--format=%s").splitlines()
    assert f"hive: create {created} {title}" in subjects


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["show", "hv-ctl001"], f"mallory{SHOWN_CLEAR}"),
        (["list"], f"mallory{SHOWN_CLEAR}"),
        (["stats"], f"mallory{SHOWN_CLEAR}"),
        (["review", "sub"], "export default 1 // [bold]B[/bold]"),
        (["events"], "ag?[2J"),
    ],
)
def test_on_a_terminal_no_escape_sequence_of_the_text_is_sent(
    hostile: dict[str, str], args: list[str], expected: str
) -> None:
    """On a terminal rich lays out, colours and highlights (review's patch too): its
    own sequences, none of the text's."""
    args = [hostile.get(arg, arg) for arg in args]
    code, seen = fork_on_terminal(["-C", hostile["repo"], *args], module="hive")
    shown = seen.decode("utf-8", "replace")
    assert code == 0 and expected in shown, shown
    for sequence in (CLEAR, TITLE_SEQ, "\x9b", "\x08", "\u202e", "\u200b"):
        assert sequence not in shown, (args, shown)


def test_json_keeps_the_text_exactly(hostile: dict[str, str]) -> None:
    """--json gives every value exactly, and a C1 control character (U+009B is CSI to a
    terminal, as ESC [ is) as an escape, as JSON writes ESC: on the lean path, the full
    CLI and the tool envelope alike."""
    repo = hostile["repo"]
    for module in ("hive", "hive.cli.main"):
        printed = run_hive(["-C", repo, "--json", "show", "hv-ctl001"], module=module).stdout
        assert "\x9b" not in printed and "\\u009b" in printed
        shown = json.loads(printed)
        assert shown["assignee"] == f"mallory{CLEAR}"
        assert shown["description"] == f"desc{CLEAR}\nsecond\tline\r\nthird\x9b"
        listed = run_hive(["-C", repo, "--json", "list", "-s", "all"], module=module).stdout
        assert "\x9b" not in listed and "\\u009b" in listed
    calls = '{"tool_calls": [{"name": "hive_query", "args": {"id": "hv-ctl001"}}]}'
    transcript = run_hive(["-C", repo, "tools", "run"], input=calls).stdout
    assert "\x9b" not in transcript and "\\u009b" in transcript
    listed = json.loads(_as(hostile, "--json", "list").stdout)
    assert {c["id"]: c["title"] for c in listed}[hostile["cell"]] == f"title {MARK}"


def test_mail_reservations_and_agents(hostile: dict[str, str]) -> None:
    inbox = _check(
        _as(hostile, "mail", "inbox", agent="ag2"),
        f"from ag1 [thread {MARK}]: subject {MARK} ends \\",
    )
    number = re.findall(r"#(\w+) ", inbox)[0]
    _check(
        _as(hostile, "mail", "read", number, agent="ag2"),
        "from ag1 to ag2  [normal]",
        f"subject {MARK} ends \\\n",
        f"body {MARK}\nline two \\",
    )
    _check(_as(hostile, "reservations"), "app/[id]/**", f"lib/{SHOWN_CLEAR}x.py")
    _check(_as(hostile, "agent", "list"), "ag1 ")
    refused = _as(hostile, "reserve", "app/[id]/page.tsx", agent="ag1")  # ag2 holds it
    _check(refused, "app/[id]/**", code=refused.returncode)
    assert refused.returncode != 0


def test_agent_records_show_their_text(hostile: dict[str, str]) -> None:
    _check(_as(hostile, "proposals", "list"), "app/[id]/new.tsx")
    _check(_as(hostile, "events"), "ag?[2J", "tool?]0;pwned?", '"app/[id]/page.tsx"')
    _check(_as(hostile, "scratchpad", "read", "notes/[id]"), f"pad {MARK}{SHOWN_CLEAR}")
    _check(_as(hostile, "scratchpad", "list"), "notes/[id]")
    _check(_as(hostile, "todo", "show", agent="ag1"), f"todo {MARK}")
    _check(_as(hostile, "ctx", "list"), f"key {MARK}")
    _check(_as(hostile, "ctx", "get", f"key {MARK}"), f"value {MARK}"[:40])
    _check(_as(hostile, "blackboard", "list"), f"bb {MARK}")
    _check(_as(hostile, "queue", "list"), f"kind {MARK}")
    _check(_as(hostile, "permissions", "list"), f"because {MARK}")
    _check(_as(hostile, "memory", "show"), f"goal {MARK}")
    _check(_as(hostile, "search", "[bold]B"), "[bold]B")
    _check(_as(hostile, "swarm", "select-strategy", f"task {MARK}"))
    _check(_as(hostile, "swarm", "state"))


def test_errors_quote_what_was_given_as_it_is(hostile: dict[str, str]) -> None:
    _check(_as(hostile, "show", f"hv-[bold]x[/red]{CLEAR}"), "'hv-[bold]x[/red]\\x1b[2J'", code=3)
    _check(_as(hostile, "list", "--status", f"[/red]{CLEAR}"), "'[/red]\\x1b[2J'", code=2)
    _check(_as(hostile, "create", f"bad{CLEAR}"), "U+001B", code=2)


@pytest.mark.parametrize(
    "text",
    [
        *("plain", "ends \\", "ends \\\\", "ends \\\\\\", "C:\\[red]", "[/bold]\\", "\\", MARK),
        *("regex \\d+\\[0-9]", "\\[", "\\\\[[/none]", "a \\[/[none]", "\\[] \\\\\\[x"),
    ],
)
def test_escape_keeps_any_text_whatever_follows(text: str) -> None:
    """rich's own escape doubled a backslash at the end of a line and lost one (or
    opened a tag) before a tag that followed, and lost one before a '[' that starts
    no tag ('\\[0-9]' was shown as '[0-9]')."""
    import io

    printed = io.StringIO()
    console = output._console_class()(file=printed, width=200, highlight=False)
    for line, shown in (
        (output.escape(text), text),
        (f"[bold]{output.escape(text)}[/bold]|", f"{text}|"),
        (f"{output.escape(text)} [dim]x[/dim]", f"{text} x"),
    ):
        console.print(line)
        assert printed.getvalue().splitlines()[-1] == shown


def test_the_live_view_of_a_swarm_run_shows_titles_as_they_are() -> None:
    """The live view (a terminal) put titles and agent names into a rich table as
    markup: '[/red]' in a title raised MarkupError in its refresh thread."""
    import io

    from rich.console import Console

    from hive.cli.swarm_view import LiveView
    from hive.models.swarm_run import SubtaskState, SwarmEvent

    view = LiveView()
    subtask = SubtaskState(id="hv-e.1", title=f"sub {MARK}{CLEAR}", status="open")
    view(SwarmEvent(event="run_started", epic_id="hv-e", title=f"epic {MARK}", subtasks=[subtask]))
    view(SwarmEvent(event="blocked", cell_id="hv-e.1", reason=f"reason {MARK}"))
    printed = io.StringIO()
    Console(file=printed, width=400, highlight=False).print(view.render())
    shown = printed.getvalue()
    assert f"epic {MARK}" in shown and f"sub {MARK}{SHOWN_CLEAR}" in shown
    assert f"reason {MARK}" in shown and "\x1b" not in shown
