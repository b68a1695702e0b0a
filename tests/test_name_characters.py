"""Which characters a name may hold beyond the printable ones, and how a hidden one is
shown when it is cut to fit: the zero-width non-joiner and joiner where Unicode's
identifier rules allow them (UAX #31, 2.3; emoji ZWJ sequences), spaces other than the
plain space and private-use or unassigned code points refused with what to write
instead, ``<U+XXXX>`` never split by a cut, and ``hive doctor`` naming hidden characters
in reservation files and the mail log."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hive.cli.lean import cut, table, text_width
from hive.domain.actors import check_actor
from hive.domain.beads import import_beads
from hive.domain.limits import check_name
from hive.domain.maillog import append
from hive.domain.workspace import Workspace
from hive.errors import InvalidInput
from hive.store.index import Row
from hive.text import first_unprintable, shown_pieces
from hive.tools.registry import CallContext, call_tool
from tests.conftest import agent_env, git
from tests.inprocess import run_hive

ZWNJ, ZWJ = "\u200c", "\u200d"
PERSIAN = f"\u0645\u06cc{ZWNJ}\u062e\u0648\u0627\u0647\u0645"  # mi-khaham: ی ZWNJ خ
HINDI = f"\u0915\u094d{ZWJ}\u0937"  # क्‍ष: a half form (ZWJ after the virama)
HINDI_ZWNJ = f"\u0915\u094d{ZWNJ}\u0937"  # क्‌ष: the virama shown (ZWNJ after it)
MALAYALAM = f"\u0d05\u0d35\u0d28\u0d4d{ZWJ}"  # അവന്‍: an old-style chillu, ZWJ last
SINHALA = f"\u0dc1\u0dca{ZWJ}\u0dbb\u0dd3"  # ශ්‍රී
FAMILY = f"\U0001f468{ZWJ}\U0001f469{ZWJ}\U0001f467"
RAINBOW = f"\U0001f3f3\ufe0f{ZWJ}\U0001f308"
CODER = f"\U0001f9d1\U0001f3fd{ZWJ}\U0001f4bb"  # a skin tone before the joiner


@pytest.mark.parametrize(
    "name", [PERSIAN, HINDI, HINDI_ZWNJ, MALAYALAM, SINHALA, FAMILY, RAINBOW, CODER]
)
def test_a_joiner_where_unicode_allows_it_is_kept_in_a_name(name: str) -> None:
    assert first_unprintable(name) is None
    assert check_name(name, "label") == name


def test_the_joining_tables_hold_assigned_characters_of_this_unicode() -> None:
    """The joining types are derived from UCD 14.0: every code point the table names is
    assigned in this Python's ``unicodedata`` (a typo in a range would name unassigned
    ones)."""
    import unicodedata

    from hive import joiners

    for first, last, _ in joiners._JOINING:  # (Extended_Pictographic reserves unassigned)
        for code in range(first, last + 1):
            assert unicodedata.category(chr(code)) != "Cn", hex(code)
    kinds = {char: joiners.joining_type(char) for char in "\u06cc\u0627\u0645a\u064e\u200c"}
    assert kinds == {
        "\u06cc": "D",  # Farsi yeh
        "\u0627": "R",  # alef
        "\u0645": "D",  # meem
        "a": "U",
        "\u064e": "T",  # fatha: transparent
        "\u200c": "U",
    }


@pytest.mark.parametrize(
    ("name", "position"),
    [
        (f"a{ZWJ}b", 2),  # between Latin letters: "ab" that is not "ab"
        (f"a{ZWNJ}b", 2),
        (ZWJ, 1),  # alone
        (f"{ZWNJ}\u0645\u06cc", 1),  # leading
        (f"\u0645\u06cc{ZWNJ}", 3),  # trailing: no letter after it to keep from joining
        (f"\u0627{ZWNJ}\u062e", 2),  # after alef, which never joins to the left
        (f"\u0645{ZWNJ}{ZWNJ}\u06cc", 2),  # doubled
        (f"\u0915{ZWJ}\u0937", 2),  # no virama before it
        (f"\U0001f468{ZWJ}x", 2),  # an emoji and a letter
        (f"{FAMILY}{ZWJ}", 6),  # after the last emoji
    ],
)
def test_a_joiner_anywhere_else_is_refused_naming_it(name: str, position: int) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_name(name, "label")
    assert caught.value.details["position"] == position
    assert caught.value.details["character"] in ("U+200C", "U+200D")
    assert "is a joiner outside the letters or emoji it may join" in caught.value.message


@pytest.mark.parametrize(
    "name",
    [
        "\u2764\ufe0f",  # a red heart, emoji style
        "\u2764\ufe0e",  # text style
        "1\ufe0f\u20e3",  # keycap one
        "\u845b\U000e0100",  # an ideographic variant (a family name)
        "\u1820\u180b",  # a Mongolian letter's variant form
        "\u2269\ufe00",  # a math symbol's standardized variant
    ],
)
def test_a_variation_selector_after_what_it_selects_a_form_of_is_kept(name: str) -> None:
    assert check_name(name, "label") == name


@pytest.mark.parametrize(
    ("name", "position", "said"),
    [
        ("bob\u3164", 4, "a character shown as nothing"),  # HANGUL FILLER, a letter
        ("\uffa0x", 1, "a character shown as nothing"),
        ("ab\u034fc", 3, "a character shown as nothing"),  # COMBINING GRAPHEME JOINER
        ("a\ufe0f", 2, "a variation selector that is not after"),  # after a Latin letter
        ("\ufe0fx", 1, "a variation selector"),
        ("\u2764\ufe0f\ufe0f", 3, "a variation selector"),  # doubled
        ("x \U000e0100", 3, "a variation selector"),  # after a space
    ],
)
def test_characters_shown_as_nothing_are_refused_in_names(
    name: str, position: int, said: str
) -> None:
    """``str.isprintable`` passes them (letters and marks), yet nothing is seen."""
    with pytest.raises(InvalidInput) as caught:
        check_name(name, "label")
    assert caught.value.details["position"] == position, caught.value.message
    assert f"at position {position} is {said}" in caught.value.message


@pytest.mark.parametrize(
    "space", ["\u00a0", "\u2003", "\u202f", "\u3000", "\u2009"]
)  # no-break, em, narrow no-break, ideographic, thin
def test_a_space_other_than_the_plain_one_is_refused_with_the_plain_one_suggested(
    space: str,
) -> None:
    with pytest.raises(InvalidInput) as caught:
        check_name(f"Jane{space}Doe", "assignee")
    message = caught.value.message
    assert "at position 5 is a space other than the plain space" in message, message
    assert message.endswith("write a plain space (U+0020) instead"), message
    assert caught.value.details == {"character": f"U+{ord(space):04X}", "position": 5}
    assert check_name("Jane Doe", "assignee") == "Jane Doe"  # the plain space is a name's


def test_private_use_and_unassigned_code_points_are_refused_in_names_only(
    repo: Path, ws: Workspace
) -> None:
    """A private-use character is a glyph in one font and a box or nothing in another
    (two such names read alike); an unassigned one is shown as nothing yet."""
    with pytest.raises(InvalidInput, match="is a private-use character") as caught:
        check_name("build\ue0a0", "label")
    assert caught.value.details == {"character": "U+E0A0", "position": 6}
    with pytest.raises(InvalidInput, match="U\\+0378 at position 2 is an unassigned code"):
        check_name("a\u0378", "label")
    made = run_hive(["-C", str(repo), "--json", "create", "branch \ue0a0 main"])
    assert made.returncode == 0, made.stderr  # free text keeps it, as written
    assert json.loads(made.stdout)["title"] == "branch \ue0a0 main"
    shown = run_hive(["-C", str(repo), "list"])
    assert "branch \ue0a0 main" in shown.stdout, shown.stdout


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_the_command_line_keeps_joined_names_and_refuses_the_rest(
    repo: Path, ws: Workspace, module: str
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    refused = {
        "label": (["-l", f"ab{ZWJ}c"], "U+200D (ZERO WIDTH JOINER) at position 3 is a joiner"),
        "file pattern": (
            ["--files", "src/\u3164.py"],
            "U+3164 (HANGUL FILLER) at position 5 is a character shown as nothing",
        ),
        "assignee": (
            ["--assignee", "Jane\u00a0Doe"],
            "U+00A0 (NO-BREAK SPACE) at position 5 is a space other than the plain space",
        ),
    }
    for what, (args, said) in refused.items():
        done = run_hive(["-C", str(repo), "create", "t", *args], module=module)
        assert done.returncode == 2, (what, done.stdout, done.stderr)
        assert f"invalid {what}" in done.stderr and said in done.stderr, done.stderr
    assert "write a plain space (U+0020) instead" in done.stderr
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
    args = ["create", "t", "-l", PERSIAN, "-l", RAINBOW, "--assignee", HINDI]
    made = run_hive(["-C", str(repo), *args], module=module)
    assert made.returncode == 0, made.stderr
    cell_id = made.stdout.split()[1]
    stored = json.loads(run_hive(["-C", str(repo), "--json", "show", cell_id]).stdout)
    assert (stored["labels"], stored["assignee"]) == (sorted([PERSIAN, RAINBOW]), HINDI)
    update = ["-C", str(repo), "update", cell_id, "--assignee", f"\u0915{ZWNJ}"]
    updated = run_hive(update, module=module)
    assert updated.returncode == 2 and "U+200C (ZERO WIDTH NON-JOINER) at position 2" in (
        updated.stderr
    ), updated.stderr


def test_tools_answer_a_joiner_or_a_space_with_its_character_and_position(
    repo: Path, ws: Workspace
) -> None:
    git(repo, "commit", "--allow-empty", "-qm", "x")
    ctx = CallContext(root=str(repo), agent="carol")
    assert "error" not in call_tool(ctx, "swarmmail_init", {})
    calls = {
        "hive_create": ({"title": "t", "labels": [f"a{ZWNJ}b"]}, "U+200C", 2),
        "swarmmail_reserve": ({"paths": ["src/a\u2003b.py"]}, "U+2003", 6),
        "ctx_put": ({"key": "k\u00a0", "value": 1}, "U+00A0", 2),
    }
    for name, (args, character, position) in calls.items():
        answer = call_tool(ctx, name, args)
        assert answer.get("code") == "invalid_input", (name, answer)
        assert (answer["character"], answer["position"]) == (character, position), answer
    kept = call_tool(ctx, "hive_create", {"title": "t", "labels": [PERSIAN, FAMILY]})
    assert "error" not in kept, kept


def test_agent_names_take_indic_marks_and_joiners_where_allowed(repo: Path) -> None:
    """An agent name was letters and digits only (``str.isalnum``): the vowel signs and
    viramas of Hindi and Malayalam names are combining marks, and were refused."""
    for name in ("\u0930\u093e\u092e", HINDI, PERSIAN, MALAYALAM, "Jos\u00e9 2"):
        assert check_actor(name) == name
    refused = {
        f"a{ZWNJ}b": "U+200C (ZERO WIDTH NON-JOINER) at position 2 is a joiner",
        "x\u00a0y": "U+00A0 (NO-BREAK SPACE) at position 2 is a space other than the plain"
        " space, which a name may not hold (it would read as another name); write a plain"
        " space (U+0020) instead; use letters",
        "bob\u034f": "U+034F (COMBINING GRAPHEME JOINER) at position 4 is a character shown",
        "bob\u3164": "U+3164 (HANGUL FILLER) at position 4 is a character shown as nothing",
        "bo\ufe0fb": "U+FE0F (VARIATION SELECTOR-16) at position 3 is a variation selector",
        "\u0301a": "use letters",  # a mark with nothing to combine with
    }
    for name, said in refused.items():
        with pytest.raises(InvalidInput) as caught:
            check_actor(name)
        assert said in caught.value.message, caught.value.message
    env = agent_env(repo, "\u0930\u093e\u092e")
    for module in ("hive", "hive.cli.main"):
        done = run_hive(["-C", str(repo), "agent", "whoami"], env=env, module=module)
        assert done.returncode == 0 and "\u0930\u093e\u092e" in done.stdout, done.stderr
    registered = run_hive(["-C", str(repo), "agent", "register", f"ag{ZWJ}1"], env=env)
    assert registered.returncode == 2, registered.stderr
    assert "U+200D (ZERO WIDTH JOINER) at position 3 is a joiner" in registered.stderr


def test_a_beads_id_with_a_no_break_space_is_told_to_remove_it(
    ws: Workspace, tmp_path: Path
) -> None:
    """An id takes no plain space either: "write a plain space" would be refused next."""
    stamp = "2025-12-17T21:19:10Z"
    row = {"id": "bd-1\u00a0a", "title": "t", "created_at": stamp, "updated_at": stamp}
    source = tmp_path / "ids.jsonl"
    source.write_text(json.dumps(row) + "\n")
    with pytest.raises(InvalidInput) as caught:
        import_beads(ws, path=str(source))
    error = caught.value.details["errors"][0]
    assert "U+00A0 (NO-BREAK SPACE) at position 5 is a space other than the plain" in error
    assert error.endswith("remove it"), error


def test_a_cut_never_splits_a_hidden_characters_marker() -> None:
    shown = "ab<U+202E>cd"
    assert shown_pieces(shown) == ["a", "b", "<U+202E>", "c", "d"]
    assert shown_pieces("<U+1F>x<U+E0041>") == [*"<U+1F>x", "<U+E0041>"]  # too short: text
    for room in range(3, 11):  # every width that would have ended inside the marker
        assert cut(shown, room) == "ab…", room
    assert cut(shown, 11) == "ab<U+202E>…"
    assert cut(shown, 12) == shown
    row = Row("hv-1", "", 2, "task", "open", "\u202eeve", "pay \u202elanoitan", b"{}")
    whole = 0
    for width in range(40, 60):  # the title cut at every place in and around the marker
        line = table([row], width).splitlines()[1]
        assert line.count("<U+") == line.count("<U+202E>"), (width, line)
        whole += line.count("<U+202E>")
    assert whole  # shown whole where there is room (the narrowest: cut off before it)


def test_a_cut_never_ends_on_a_joiner_of_an_emoji_sequence() -> None:
    """A title of joined emoji (a family, 👩‍👩‍👧‍👦: four emoji and three U+200D) cut to
    fit a list could end with the joiner itself before the ellipsis, which a terminal
    draws as half a sequence or a stray box. A cut ends before the joiner; the joiner
    takes no column of its own."""
    family = "\U0001f469\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    title = f"{family} {family} the Smiths"
    assert text_width(family) == 8  # four emoji of two columns, the joiners none
    for room in range(1, text_width(title) + 1):
        shown = cut(title, room)
        assert "\u200d…" not in shown and text_width(shown) <= max(room, 1), (room, shown)
    assert cut(title, text_width(title)) == title


def test_hive_reservations_folds_and_cuts_around_markers(repo: Path, ws: Workspace) -> None:
    """A reservation file written by hand may hold a hidden character; the table shows
    it as ``<U+XXXX>`` and neither cuts the agent name nor folds the pattern inside it."""
    agent = agent_env(repo, "ag1")
    assert run_hive(["-C", str(repo), "reserve", "src/a.py"], env=agent).returncode == 0
    path = repo / ".hive" / "reservations" / "ag1.yaml"
    path.write_text(path.read_text().replace("src/a.py", "src/\u202eyp.evil/" + "x" * 30))
    git(repo, "commit", "-qam", "hand edit", "--no-verify")
    for columns in range(62, 80):  # (a pattern keeps 12 columns at least)
        env = {**agent, "COLUMNS": str(columns)}
        shown = run_hive(["-C", str(repo), "reservations"], env=env)
        assert shown.returncode == 0, shown.stderr
        folded = "".join(line.strip() for line in shown.stdout.splitlines()[2:])
        assert "src/<U+202E>yp.evil/" in shown.stdout.splitlines()[1] + folded, shown.stdout
        for line in shown.stdout.splitlines():
            assert len(line) <= columns, (columns, shown.stdout)
            assert line.count("<U+") == line.count("<U+202E>"), (columns, shown.stdout)


def test_doctor_names_hidden_characters_in_reservations_and_the_mail_log(
    repo: Path, ws: Workspace
) -> None:
    """Names hive refuses when written can reach a reservation file or the mail log by
    hand (or from a clone that allowed them): ``hive doctor`` warns of each, as it warns
    of a cell's labels and assignee, with what can be done about it."""
    from hive.domain.reservecore import reservation_path

    agent = agent_env(repo, "ag1")
    assert run_hive(["-C", str(repo), "reserve", "src/a.py"], env=agent).returncode == 0
    mine = repo / ".hive" / "reservations" / "ag1.yaml"
    mine.write_text(mine.read_text().replace("src/a.py", '"src/\\u202ea.py"'))
    evil = "ev\u200bil"
    theirs = repo / reservation_path(evil)
    theirs.write_text(
        mine.read_text()
        .replace("agent: ag1", 'agent: "ev\\u200bil"')
        .replace("id: 1", "id: 2")
        .replace("\\u202ea.py", "b.py")
    )
    git(repo, "add", ".hive/reservations")
    git(repo, "commit", "-qm", "hand edit", "--no-verify")

    def by_hand(event: dict[str, object]) -> None:
        stamped = {**event, "at": "2026-01-01T00:00:00.000Z"}
        append(ws, lambda state: ("by hand", stamped, None), author="ag1")

    by_hand({"type": "agent_registered", "name": "m\u00a0allory"})
    sent = {"subject": "s", "body": "", "importance": "normal", "ack_required": False}
    by_hand({**sent, "type": "message_sent", "from": "ag1", "to": ["b\ue000b"], "thread_id": None})
    by_hand({**sent, "type": "message_sent", "from": "ag1", "to": ["ag1"], "thread_id": "t\u2066"})
    doctor = run_hive(["-C", str(repo), "doctor"])
    assert doctor.returncode == 0, doctor.stdout  # warnings, not problems
    said = [line for line in doctor.stdout.splitlines() if "hidden-character" in line]
    path = reservation_path(evil)
    expected = [
        ".hive/reservations/ag1.yaml reservation #1 pattern 'src/\\u202ea.py' holds U+202E at"
        " position 5 (written by hand or merged: hive refuses it in a name); 'hive release"
        " --id 1 --agent ag1 --reason TEXT' releases it",
        f"{path} agent 'ev\\u200bil' holds U+200B at position 3 (written by hand or merged:"
        f" hive refuses it in a name); 'git rm \"{path}\"' and a commit drop its reservations",
        "mail log agent 'm\\xa0allory' holds U+00A0 at position 2",
        "mail log recipient 'b\\ue000b' holds U+E000 at position 2",
        "mail log thread id 't\\u2066' holds U+2066 at position 2",
    ]
    for line in expected:
        assert any(line in warning for warning in said), (line, said)
    assert len(said) == len(expected), said
    assert "refs/hive/mail is append-only" in said[-1]
    report = json.loads(run_hive(["-C", str(repo), "--json", "doctor"]).stdout)
    kinds = [warning["kind"] for warning in report["warnings"]]
    assert kinds.count("hidden-character") == len(expected), report["warnings"]


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_a_blank_letter_in_free_text_is_shown_by_its_code_point(
    repo: Path, ws: Workspace, module: str
) -> None:
    """A Hangul filler is a printable letter shown as nothing: a title keeps it, and
    every listing shows it as ``<U+3164>`` (as a zero-width space), the JSON as it is."""
    made = run_hive(["-C", str(repo), "create", "pay bob\u3164 now"], module=module)
    assert made.returncode == 0, made.stderr
    assert "pay bob<U+3164> now" in made.stdout, made.stdout
    cell_id = made.stdout.split()[1]
    for args in (["list"], ["show", cell_id], ["ready"]):
        shown = run_hive(["-C", str(repo), *args], module=module)
        assert "pay bob<U+3164> now" in shown.stdout, (args, shown.stdout)
        assert "\u3164" not in shown.stdout, (args, shown.stdout)
    exact = json.loads(run_hive(["-C", str(repo), "--json", "show", cell_id]).stdout)
    assert exact["title"] == "pay bob\u3164 now"


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
def test_reserve_and_mail_refuse_other_spaces_and_keep_joined_names(
    repo: Path, ws: Workspace, module: str
) -> None:
    ag1 = agent_env(repo, "ag1")
    for name in ("ag1", PERSIAN):
        env = agent_env(repo, name)
        assert run_hive(["-C", str(repo), "agent", "register", name], env=env).returncode == 0
    refused = run_hive(["-C", str(repo), "reserve", "src/a\u00a0b.py"], env=ag1, module=module)
    assert refused.returncode == 2, refused.stderr
    assert "U+00A0 (NO-BREAK SPACE) at position 6 is a space other than" in refused.stderr
    assert "write a plain space (U+0020) instead" in refused.stderr
    held = run_hive(["-C", str(repo), "reserve", "src/a b.py"], env=ag1, module=module)
    assert held.returncode == 0, held.stderr  # the plain space is a pattern's
    send = ["-C", str(repo), "mail", "send", PERSIAN, "-s", "hi"]
    assert run_hive(send, env=ag1, module=module).returncode == 0
    odd = run_hive([*send[:4], f"{PERSIAN}{ZWNJ}", *send[5:]], env=ag1, module=module)
    assert odd.returncode == 2, odd.stderr
    assert "U+200C (ZERO WIDTH NON-JOINER) at position 9 is a joiner" in odd.stderr


def test_doctor_names_an_owned_file_pattern_written_by_hand(repo: Path, ws: Workspace) -> None:
    from hive.domain.cells import create_cell

    cell = create_cell(ws, title="plain", files=["src/ok.py"])
    path = next((repo / ".hive" / "cells").rglob(f"{cell.id}.yaml"))
    path.write_text(path.read_text().replace("src/ok.py", '"src/\\u200bok.py"'))
    git(repo, "commit", "-qam", "hand edit", "--no-verify")
    doctor = run_hive(["-C", str(repo), "doctor"])
    assert (
        f"warning hidden-character: {cell.id} owned file pattern 'src/\\u200bok.py' holds"
        " U+200B at position 5" in doctor.stdout
    ), doctor.stdout
    assert f"'hive update {cell.id} --files GLOB ...' replaces the cell's patterns" in (
        doctor.stdout
    )
    fixed = run_hive(["-C", str(repo), "update", cell.id, "--files", "src/ok.py"])
    assert fixed.returncode == 0, fixed.stderr
    assert "hidden-character" not in run_hive(["-C", str(repo), "doctor"]).stdout


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])  # the lean path, the full CLI
@pytest.mark.parametrize("name", ["\u00a0{}", "{}\u00a0", "{}\u2003", "\u3000{}"])
def test_a_space_other_than_the_plain_one_at_a_names_end_is_refused_as_inside(
    repo: Path, module: str, name: str
) -> None:
    """``str.strip`` dropped a no-break space (and every other Unicode space) at an agent
    name's ends, so ``--actor 'me\u00a0'`` acted as me and ``agent register`` took
    another name than the one given; they are refused with the message of the same
    character inside the name. Plain spaces and line breaks at the ends are trimmed."""
    me = git(repo, "config", "user.name").strip()
    claimed = name.format(me)
    position = 1 if claimed[0] != me[0] else len(me) + 1
    said = f"at position {position} is a space other than the plain space"
    with pytest.raises(InvalidInput) as caught:
        check_actor(claimed)
    assert said in caught.value.message and "write a plain space" in caught.value.message
    assert check_actor(f" {me}\t\n") == me
    head = git(repo, "rev-parse", "HEAD")
    for args in (["--actor", claimed, "create", "t"], ["agent", "register", claimed]):
        done = run_hive(["-C", str(repo), *args], module=module)
        assert done.returncode == 2 and said in done.stderr, (args, done.stdout, done.stderr)
    assert git(repo, "rev-parse", "HEAD") == head  # nothing committed
