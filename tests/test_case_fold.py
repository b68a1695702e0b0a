"""One case folding everywhere hive ignores case (``hive.domain.foldcase.fold``: Unicode
case folding between NFD and NFC): the pre-commit hook (quick and full), reservation
conflicts, ``globquick``, the settling of two clones' grants by ``hive sync`` and the
``tools.permissions`` path rules; and one rule for the reservations that hold files
against others (``reserveplain.exclusive_held``) in the quick hook and the lean sync."""

from __future__ import annotations

import time
import unicodedata
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hive.cli import entry, hookrun, lean_sync, leanhook, parse
from hive.cli.lean_write import prepare
from hive.domain.agents import write_check
from hive.domain.contest import yielded_reservations
from hive.domain.foldcase import fold
from hive.domain.globquick import quick_match
from hive.domain.globs import case_folded, path_matches, patterns_meet
from hive.domain.identity import mail_init
from hive.domain.path_rules import PathPermissionDenied, check_paths, pattern_only_denied
from hive.domain.precommit import check_staged
from hive.domain.reservations import list_reservations, reserve
from hive.domain.reserveplain import RESERVATIONS_DIR, entry_text, file_text
from hive.domain.workspace import Workspace
from hive.errors import ReservationConflict
from hive.git.refs import discover, read_head_fast
from hive.git.repo import Change
from hive.times import utc_now
from tests.conftest import credential, git
from tests.seedkit import configure
from tests.test_sync import Clones, built_clones, clones  # noqa: F401 (fixtures)

NFD_E = unicodedata.normalize("NFD", "é")  # "e" and U+0301, as macOS writes a name


# ------------------------------------------------------------------ the folding


def test_one_fold_names_one_file_as_a_case_blind_file_system_may() -> None:
    assert fold("SRC/A.py") == "src/a.py"
    assert fold("Straße") == fold("STRASSE") == fold("strasse") == "strasse"
    assert fold(f"caf{NFD_E}") == fold("CAFÉ") == "café" and len(fold(f"caf{NFD_E}")) == 4
    assert fold("ΣΊΣΥΦΟΣ") == fold("σίσυφος") == fold("σίσυφοσ")  # final sigma
    assert fold("straße") != fold("strase")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=12))
def test_the_fold_is_idempotent_and_ascii_is_lowered(text: str) -> None:
    assert fold(fold(text)) == fold(text)
    assert not text.isascii() or fold(text) == text.lower()


@pytest.mark.parametrize(
    ("pattern", "path", "folded"),
    [
        ("Straße/**", "STRASSE/a.py", True),  # decided: full folding, one name
        ("STRASSE/*", "straße/a.py", True),
        ("Stra?e/*", "Straße/a.py", True),  # as written: ? stands for ß
        ("Stra?e/*", "STRASSE/a.py", False),  # ? is one character of "strasse": not two
        ("café/**", f"CAF{NFD_E.upper()}/x", True),  # NFC pattern, NFD name
        (f"caf{NFD_E}/**", "Café/x", True),
        ("caf[é]/*", f"CAF{NFD_E}/x", True),
        ("cafe/**", f"caf{NFD_E}/x", False),  # an accent is no case
        ("SRC/**", "src/a.py", True),
    ],
)
def test_a_name_folded_matches_as_decided(pattern: str, path: str, folded: bool) -> None:
    assert path_matches(pattern, path, True) is folded
    assert patterns_meet(pattern, path.replace("[", "\\["), True) is folded
    quick = quick_match(pattern, path, True)
    assert quick is None or quick is folded


PLAIN = st.sampled_from(["a", "B", "ss", "SS", "ß", "é", NFD_E, "É", "x.py", "Σ", "ς"])
SIMPLE = st.lists(st.sampled_from(["a", "B", "ss", "SS", "*", "?", "x.py", "**"]), min_size=1)
NAMES = st.lists(PLAIN, min_size=1, max_size=3).map("".join)


@settings(max_examples=800, deadline=None)
@given(pattern=SIMPLE.map("/".join), path=st.lists(NAMES, min_size=1, max_size=3).map("/".join))
def test_the_quick_folded_answer_is_the_glob_matcher_s(pattern: str, path: str) -> None:
    quick = quick_match(pattern, path, True)
    assert quick is None or quick == path_matches(pattern, path, True), (pattern, path)


def test_a_folded_pattern_keeps_its_wildcards_and_escapes() -> None:
    assert case_folded("Straße/{A,b}/*.PY") == "strasse/{a,b}/*.py"
    assert case_folded("x\\ß") == "x\\s\\s"
    assert case_folded(f"caf{NFD_E}") == "café"


# ------------------------------------------------------------------ reservations


def test_reserving_folds_unicode_case_and_normal_forms(ws: Workspace, repo: Path) -> None:
    reserve(Workspace(str(repo), actor="alice"), paths=["Straße/**", "café/*"])
    for asked in (["STRASSE/a.py"], ["strasse/**"], [f"CAF{NFD_E.upper()}/x"]):
        with pytest.raises(ReservationConflict):
            reserve(Workspace(str(repo), actor="bob"), paths=asked)
    reserve(Workspace(str(repo), actor="bob"), paths=["strase/**", "cafe/*"])


def test_the_hook_folds_an_nfd_name_under_an_nfc_reservation(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A name staged decomposed (as macOS writes it) and in capitals under another's
    ``café/**``: the quick hook leaves it to the full check, which refuses it, where the
    file system ignores case; a repository that tells case apart commits it."""
    git(repo, "config", "core.ignorecase", "true")
    git(repo, "config", "core.precomposeunicode", "false")
    reserve(Workspace(str(repo), actor="alice"), paths=["café/**", "Straße/**"])
    for name in (f"CAF{NFD_E.upper()}/a.py", "STRASSE/b.py"):
        (repo / name).parent.mkdir(exist_ok=True)
        (repo / name).write_text("x\n")
        git(repo, "add", "--", name)
        for key, value in (("HIVE_AGENT", "bob"), ("HIVE_AGENT_TOKEN", credential(repo, "bob"))):
            monkeypatch.setenv(key, value)
        assert entry.dispatch(parse(["-C", str(repo), "hooks", "run", "pre-commit"])) is None
        report = check_staged(Workspace(str(repo)), committer="bob")
        assert [v.holder for v in report.violations] == ["alice"], name
        git(repo, "config", "core.ignorecase", "false")
        assert check_staged(Workspace(str(repo)), committer="bob").ok
        git(repo, "config", "core.ignorecase", "true")
        git(repo, "reset", "-q")


# ------------------------------------------------------------------ two clones


def test_two_clones_settle_a_contest_in_another_case_as_the_hook_decides(
    clones: Clones,  # noqa: F811
) -> None:
    """``SRC/**`` granted to alice in a clone whose file system ignores case, ``src/**``
    to bob in one that tells case apart, offline: the sync settles them (bob's, the later
    grant, yields), the same in both clones whatever their ``core.ignorecase``, so the
    hook of the clone that folds case blocks bob's commit and lets alice's through
    (before, both were kept, and it blocked both)."""
    a, b = clones.paths["a"], clones.paths["b"]
    git(a, "config", "core.ignorecase", "true")
    mail_init(clones.ws("a", "alice"), agent_name="alice")
    mail_init(clones.ws("b", "bob"), agent_name="bob")
    clones.sync("a")
    clones.sync("b")
    clones.sync("a")
    reserve(clones.ws("a", "alice"), paths=["SRC/**"], ttl_seconds=3600)
    time.sleep(0.01)
    reserve(clones.ws("b", "bob"), paths=["src/**"], ttl_seconds=3600)
    clones.sync("a")
    settled = clones.sync("b")  # b (case told apart) meets alice's grant
    assert [(c.kept.agent, c.yielded.agent) for c in settled.contested] == [("alice", "bob")]
    clones.sync("a")
    assert clones.hive_files("a") == clones.hive_files("b")
    assert git(a, "rev-parse", "HEAD:.hive") == git(b, "rev-parse", "HEAD:.hive")
    for name in ("a", "b"):
        ws = clones.ws(name)
        assert [r.agent for r in list_reservations(ws)] == ["alice"], name
        assert [r.agent for r in yielded_reservations(ws)] == ["bob"], name
    (a / "src").mkdir()
    (a / "src" / "x.py").write_text("x = 1\n")
    git(a, "add", "src/x.py")
    assert check_staged(Workspace(str(a)), committer="alice").ok
    assert not check_staged(Workspace(str(a)), committer="bob").ok
    git(b, "config", "core.ignorecase", "true")  # the answer stays: a function of the files
    assert clones.sync("b").contested == []
    assert clones.hive_files("a") == clones.hive_files("b")


# ------------------------------------------------------------------ path rules

DENIED = {"permissions": {"*": {"*": {"denied_paths": ["secrets/**", "Straße/*"]}}}}


@pytest.mark.parametrize(
    "path", ["SECRETS/x", "Secrets/a/b", "STRASSE/k", "strasse/k", f"SECRETS/{NFD_E}"]
)
def test_a_deny_rule_folds_case_where_the_file_system_ignores_it(path: str) -> None:
    rules = {"*": {"*": {"denied_paths": ["secrets/**", "Straße/*"], "allowed_paths": []}}}
    check_paths(rules, "bee", "fs_write", [path])  # case told apart: another file
    with pytest.raises(PathPermissionDenied):
        check_paths(rules, "bee", "fs_write", [path], fold_case=True)
    with pytest.raises(PathPermissionDenied):
        pattern_only_denied(rules, "bee", "swarmmail_reserve", path, fold_case=True)


def test_an_allowlist_folds_case_too() -> None:
    rules = {"bee": {"*": {"denied_paths": [], "allowed_paths": ["docs/**"]}}}
    with pytest.raises(PathPermissionDenied):
        check_paths(rules, "bee", "fs_write", ["DOCS/a.md"])
    check_paths(rules, "bee", "fs_write", ["DOCS/a.md", "Docs/*.md"], fold_case=True)
    with pytest.raises(PathPermissionDenied):
        check_paths(rules, "bee", "fs_write", ["src/a.py"], fold_case=True)


def test_an_agent_denied_secrets_cannot_commit_or_write_them_in_capitals(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pre-commit hook (quick and full) and a tool's write check, where the file
    system ignores case: ``SECRETS/x`` is ``secrets/x`` there."""
    configure(repo, tools=DENIED)
    (repo / "SECRETS").mkdir()
    (repo / "SECRETS" / "x").write_text("key\n")
    git(repo, "add", "SECRETS/x")
    for key, value in (("HIVE_AGENT", "bee"), ("HIVE_AGENT_TOKEN", credential(repo, "bee"))):
        monkeypatch.setenv(key, value)
    argv = ["-C", str(repo), "hooks", "run", "pre-commit"]
    assert hookrun.hook(parse(argv)) == 0  # case told apart: another directory
    check = write_check(Workspace(str(repo)))
    check("bee", ["SECRETS/x"])
    git(repo, "config", "core.ignorecase", "true")
    assert entry.dispatch(parse(argv)) is None  # the rules stored: the full check words it
    assert hookrun.hook(parse(argv)) == 1
    report = check_staged(Workspace(str(repo)), committer="bee")
    assert [v.kind for v in report.violations] == ["denied"]
    assert "secrets/**" in report.violations[0].message
    with pytest.raises(PathPermissionDenied):
        write_check(Workspace(str(repo)))("bee", ["SECRETS/x"])


# ------------------------------------------------------------------ one rule of holding


def _item(number: int, agent: str, **fields: object) -> str:
    now = utc_now()
    values = {
        "id": number,
        "agent": agent,
        "path_pattern": f"{agent}/{number}/**",
        "exclusive": True,
        "created_at": now - timedelta(minutes=5),
        "expires_at": now + timedelta(hours=1),
        **fields,
    }
    return entry_text(values)


YIELDED = {"reservation_id": 1, "holder": "ant", "pattern": "ant/1/**"}
# (holder's reservation as a file, whether it holds files against others)
BEE = [
    ({}, True),
    ({"exclusive": False}, False),
    ({"expires_at": utc_now() - timedelta(seconds=1)}, False),
    ({"yielded_to": YIELDED}, False),
    ({"forced": True, "overrides": [YIELDED]}, True),
]


@pytest.mark.parametrize(
    ("fields", "holds"), BEE, ids=["held", "shared", "expired", "yielded", "forced"]
)
def test_the_quick_hook_and_the_lean_sync_count_the_same_holds(
    ws: Workspace, repo: Path, fields: dict[str, object], holds: bool
) -> None:
    """Ant holds an exclusive reservation; bee one of each kind. The quick hook's holds
    (holder, pattern) and the lean sync's question (may two agents' holds name one file?
    a forced grant is no contest) agree."""
    files = {
        "ant": file_text("ant", [_item(1, "ant")]),
        "bee": file_text("bee", [_item(2, "bee", **fields), _item(3, "bee", exclusive=False)]),
    }
    for name, data in files.items():
        (repo / RESERVATIONS_DIR / f"{name}.yaml").parent.mkdir(parents=True, exist_ok=True)
        (repo / RESERVATIONS_DIR / f"{name}.yaml").write_bytes(data)
    git(repo, "add", ".hive")
    git(repo, "commit", "-qm", "reservations", "--no-verify")
    paths = discover(str(repo))
    head = read_head_fast(paths)
    assert head is not None and head.commit is not None
    listing = leanhook._hive_listing(paths, head.commit)
    assert listing is not None
    held = leanhook._exclusive_holds(paths, head.commit, listing)
    expected = [("ant", "ant/1/**"), *([("bee", "bee/2/**")] if holds else [])]
    assert held is not None and sorted(held) == expected
    prepared = prepare(parse(["-C", str(repo), "sync"]))
    assert prepared is not None and not isinstance(prepared, int)
    repo_now, snap = prepared.session.repo, prepared.snap
    assert not lean_sync.contest_possible(repo_now, snap, [])  # ant/1/**, bee/2/**: apart
    near = {**fields, "path_pattern": "ANT/1/x"}  # within ant's, case folded
    bee = file_text("bee", [_item(2, "bee", **near), _item(3, "bee", exclusive=False)])
    changes = [Change(f"{RESERVATIONS_DIR}/bee.yaml", bee)]
    contested = holds and not fields.get("forced")
    assert lean_sync.contest_possible(repo_now, snap, changes) is contested
