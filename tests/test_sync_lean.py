"""``hive sync`` with nothing to do is answered by ``hive/cli/lean_sync.py`` (no typer,
pydantic or dulwich) with the full CLI's bytes and exit code; every other sync is left
to the full CLI, which then does what it always did (issue 14).

The lean answer runs in this process through ``entry.dispatch``; ``both`` compares the
console script (lean first) with the full CLI alone. Real clones of a real bare remote,
checked with ``git``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from hive.domain.cells import create_cell, update_cell
from hive.domain.identity import mail_init
from hive.domain.mail import send_message
from hive.domain.reservations import reserve
from hive.git.remote import STATE_REF, tracking_ref
from hive.store.layout import cell_path
from tests.conftest import agent_env, assert_clean, copy_repo, git, isolated_env
from tests.inprocess import run_hive
from tests.test_sync import Clones

MAIL_REF = "refs/hive/mail"


@pytest.fixture(scope="module")
def synced(tmp_path_factory: pytest.TempPathFactory) -> Clones:
    """Clones ``a`` and ``b`` of ``origin``, each with a cell and a message, synced
    level (every hive ref on both clones is the remote's)."""
    with isolated_env(tmp_path_factory):
        made = Clones(tmp_path_factory.mktemp("lean-sync"))
        made.clone("b")
        create_cell(made.ws("a"), title="from a")
        for name in ("a", "b"):
            mail_init(made.ws(name, f"agent-{name}"), agent_name=f"agent-{name}")
        send_message(made.ws("a", "agent-a"), to=["agent-a"], subject="hello", body="1")
        for name in ("a", "b", "a"):
            made.sync(name)
        return made


@pytest.fixture
def clones(synced: Clones, tmp_path: Path) -> Clones:
    """A copy of ``synced`` of its own (origin, a and b), pointed at its own origin."""
    return copied(synced, tmp_path)


def copied(source: Clones, root: Path) -> Clones:
    """A copy of ``source`` (origin, any other bare repository beside it, and its
    clones) in ``root``, pointed at its own origin."""
    made = object.__new__(Clones)
    made.root, made.origin = root, root / "origin.git"
    for bare in source.root.glob("*.git"):
        shutil.copytree(bare, root / bare.name, symlinks=True)
    made.paths = {
        name: _pointed_at(copy_repo(path, root / name), made.origin)
        for name, path in source.paths.items()
    }
    return made


def _pointed_at(repo: Path, origin: Path) -> Path:
    git(repo, "remote", "set-url", "origin", str(origin))
    return repo


def lean(repo: Path, *args: str, capsys: pytest.CaptureFixture[str]) -> int | None:
    """The lean path's answer (its exit code), or None when it leaves the sync to the
    full CLI; what it printed is dropped (``both`` compares it)."""
    from hive.cli import entry, parse

    code = entry.dispatch(parse(["-C", str(repo), "sync", *args]))
    capsys.readouterr()
    return code


def both(
    repo: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``hive sync`` by the console script and by the full CLI: the same answer."""
    environment = dict(os.environ if env is None else env)
    lean_run = run_hive(["sync", *args], cwd=repo, env=environment)
    full = run_hive(["sync", *args], cwd=repo, env=environment, module="hive.cli.main")
    assert "Traceback" not in lean_run.stderr, lean_run.stderr
    assert (lean_run.returncode, lean_run.stdout, lean_run.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    )
    return lean_run


def traced(
    clones: Clones, repo: Path, *args: str, fetches: int, configs: int = 1, ok: bool = True
) -> str:
    """The output of ``hive *args`` by the console script, checked to have run ``git
    fetch`` exactly ``fetches`` times and ``git config`` ``configs`` times (git's own
    trace says; the full sync reads git's config once); ``ok``: whether it succeeds."""
    trace = clones.root / "trace.txt"
    trace.unlink(missing_ok=True)
    ran = run_hive(args, cwd=repo, env={**os.environ, "GIT_TRACE": str(trace)})
    assert (ran.returncode == 0) == ok, ran.stderr
    lines = trace.read_text().splitlines()
    assert sum("built-in: git fetch" in line for line in lines) == fetches
    assert sum("built-in: git config" in line for line in lines) == configs
    return ran.stdout


def test_a_fetch_handed_over_is_taken_once() -> None:
    from hive.git.remote import hand_over_fetch, take_handed_over_fetch

    assert not take_handed_over_fetch("/nowhere", "origin")
    hand_over_fetch("/nowhere", "origin")
    assert not take_handed_over_fetch("/nowhere", "other")
    assert take_handed_over_fetch("/nowhere", "origin") == {"attempt": 1, "fetched": True}
    assert not take_handed_over_fetch("/nowhere", "origin")


def test_a_hand_over_slow_to_be_taken_keeps_its_counts_and_fetches_again() -> None:
    """The full sync that takes a hand-over may start seconds later on a loaded machine
    (its imports): the fetch is then done again, but what the lean sync's earlier rounds
    did is still counted (it was dropped with the fetch); a hand-over no sync took for
    minutes is no sync's of this process."""
    from hive.git import remote

    counts = {"attempt": 2, "commit": "c0ffee", "totals": {"received": 3}}
    remote.hand_over_fetch("/nowhere", "origin", counts)
    when, carried = remote._HANDED_OVER[("/nowhere", "origin")]
    remote._HANDED_OVER[("/nowhere", "origin")] = (when - remote.HANDOVER_SECONDS, carried)
    assert remote.take_handed_over_fetch("/nowhere", "origin") == {**counts, "fetched": False}
    remote.hand_over_fetch("/nowhere", "origin", counts)
    when, carried = remote._HANDED_OVER[("/nowhere", "origin")]
    remote._HANDED_OVER[("/nowhere", "origin")] = (when - remote.CARRIED_SECONDS, carried)
    assert remote.take_handed_over_fetch("/nowhere", "origin") is None


def refs(repo: Path) -> str:
    """Every ref but the tracking refs a fetch sets, and what it points at, HEAD included."""
    listed = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    kept = [line for line in listed if not line.startswith("refs/hive-remotes/")]
    return "\n".join(kept) + git(repo, "rev-parse", "HEAD")


def test_a_sync_with_nothing_to_do_is_answered_lean_with_the_full_cli_s_bytes(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    a = clones.paths["a"]
    before, remote_before = refs(a), refs(clones.origin)
    for args in ([], ["--json"], ["origin"], ["origin", "--json"], [str(clones.origin)]):
        both(a, *args)  # a URL's first sync: its tracking refs are made (no push)
        assert lean(a, *args, capsys=capsys) == 0, f"hive sync {args}: deferred"
        assert both(a, *args).returncode == 0
    shown = json.loads(both(a, "--json").stdout)
    assert shown["state"] == git(a, "rev-parse", STATE_REF).strip()
    assert shown["commit"] is None and shown["attempts"] == 1
    assert both(a).stdout == (
        "synced with origin: 0 cell file(s) received, 0 sent, 0 message(s) received\n"
    )
    assert refs(a) == before and refs(clones.origin) == remote_before
    assert_clean(a)


def test_an_agent_s_sync_with_nothing_to_do_is_answered_lean_and_a_claim_is_checked(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent proven by its credential: answered lean, as the full CLI answers; a name
    claimed without its credential: left to the full CLI, which refuses it."""
    a = clones.paths["a"]
    env = agent_env(a, "agent-a")  # its registration is mail to send: sent lean
    assert lean(a, capsys=capsys) == 0
    with monkeypatch.context() as patch:
        for key, value in env.items():
            patch.setenv(key, value)
        assert lean(a, "--json", capsys=capsys) == 0
    assert both(a, "--json", env=env).returncode == 0
    monkeypatch.setenv("HIVE_AGENT", "agent-a")
    assert lean(a, capsys=capsys) is None
    claimed = both(a)
    assert claimed.returncode != 0 and "agent-a" in claimed.stderr


def test_an_offline_remote_is_reported_lean_as_the_full_cli_reports_it(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    a = clones.paths["a"]
    before = refs(a)
    shutil.rmtree(clones.origin)
    for args in ([], ["--json"]):
        assert lean(a, *args, capsys=capsys) == 8
        refused = both(a, *args)
        assert refused.returncode == 8
        assert "cannot fetch hive's refs from origin" in refused.stderr
    assert refs(a) == before


FIXED_DATE = "1700000000 +0000"  # both paths' commits made at the same time: the same ids


def agree(
    clones: Clones,
    name: str,
    *args: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    refs_differ: str = "",
) -> tuple[int | None, str]:
    """``hive sync *args`` in clone ``name`` by the console script (lean first; what it
    hands over finished by the full sync, in this process as the script does) and, in a
    copy made just before, by the full CLI alone: the same output, error and exit code,
    and the same refs (tracking refs too) and HEAD in the clone and in its origin.
    Returns what the lean path answered (None: handed over) and the output.
    ``refs_differ``: the refs whose ends may differ (a notice's time in its mail)."""
    for key in ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE"):
        monkeypatch.setenv(key, FIXED_DATE)
    twin = copied(clones, Path(tempfile.mkdtemp(dir=clones.root)))
    from hive.cli import entry, parse

    repo = clones.paths[name]
    code = entry.dispatch(parse(["-C", str(repo), "sync", *args]))
    said = capsys.readouterr()
    answer = (code, said.out, said.err)
    if code is None:
        finished = run_hive(["sync", *args], cwd=repo, module="hive.cli.main")
        answer = (finished.returncode, finished.stdout, finished.stderr)
    full = run_hive(["sync", *args], cwd=twin.paths[name], module="hive.cli.main")
    assert answer == (full.returncode, full.stdout, full.stderr)
    for here, there in ((repo, twin.paths[name]), (clones.origin, twin.origin)):
        assert all_refs(here, refs_differ) == all_refs(there, refs_differ)
    assert_clean(repo)
    return code, answer[1]


def all_refs(repo: Path, differ: str = "") -> list[str]:
    listed = git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    kept = [line for line in listed if not (differ and line.split()[0].endswith(differ))]
    return [*kept, git(repo, "rev-parse", "HEAD")]


def test_a_sync_that_sends_is_answered_lean_as_the_full_cli_answers_it(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its own new commits to push (two creates since the last sync, one cell edited
    twice): sent by the lean path with the full sync's commits, refs and answer, with
    one fetch."""
    a = clones.paths["a"]
    cell = create_cell(clones.ws("a"), title="new here").id
    create_cell(clones.ws("a"), title="another")
    update_cell(clones.ws("a"), cell_id=cell, title="renamed")
    update_cell(clones.ws("a"), cell_id=cell, priority=1)  # a version never sent: seen
    code, said = agree(clones, "a", "--json", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and json.loads(said)["sent_cells"] == 2
    assert cell in git(clones.origin, "ls-tree", "-r", "--name-only", STATE_REF)
    create_cell(clones.ws("a"), title="one more")
    assert json.loads(traced(clones, a, "sync", "--json", fetches=1))["sent_cells"] == 1
    assert lean(a, capsys=capsys) == 0  # and then there is nothing left to do


def test_a_sync_that_receives_or_merges_is_answered_lean_as_the_full_cli_answers_it(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The remote moved (a fast-forward here); then each side changed another cell; then
    both sides changed the same cell (a merge with a recorded conflict): each answered
    lean, as the full CLI answers it, plain and JSON."""
    cell = create_cell(clones.ws("b"), title="from b").id
    other = create_cell(clones.ws("b"), title="other").id
    clones.sync("b")
    code, said = agree(clones, "a", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and said.startswith("synced with origin: 2 cell file(s) received, 0 sent")
    clones.sync("b")
    update_cell(clones.ws("a"), cell_id=cell, priority=3)
    update_cell(clones.ws("b"), cell_id=other, priority=4)
    clones.sync("b")
    code, said = agree(clones, "a", "--json", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and (json.loads(said)["received_cells"], json.loads(said)["sent_cells"]) == (
        1,
        1,
    )
    clones.sync("b")
    update_cell(clones.ws("a"), cell_id=cell, title="title from a")
    update_cell(clones.ws("b"), cell_id=cell, title="title from b")
    clones.sync("b")
    for args in ([], ["--json"]):
        copy = copied(clones, clones.root / f"merge{len(args)}")
        code, said = agree(copy, "a", *args, capsys=capsys, monkeypatch=monkeypatch)
        assert code == 0 and "title" in said and "conflict" in said


def test_mail_to_join_or_send_is_answered_lean_as_the_full_cli_answers_it(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    send_message(clones.ws("b", "agent-b"), to=["agent-a"], subject="from b", body="2")
    assert agree(clones, "b", capsys=capsys, monkeypatch=monkeypatch)[0] == 0  # to send
    send_message(clones.ws("a", "agent-a"), to=["agent-b"], subject="from a", body="3")
    code, said = agree(clones, "a", "--json", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and json.loads(said)["mail_received"] == 1  # and a merge to send
    a = clones.paths["a"]
    assert git(a, "rev-parse", MAIL_REF) == git(clones.origin, "rev-parse", MAIL_REF)


def test_a_contest_to_settle_is_handed_over_to_the_full_sync_after_the_fetch(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two agents' exclusive reservations of one file, taken in two clones: the lean path
    hands the round over (its fetch, one in all) and the full sync settles the contest,
    as the full CLI alone does."""
    reserve(clones.ws("b", "bob"), paths=["src/x.py"])
    clones.sync("b")
    reserve(clones.ws("a", "alice"), paths=["src/x.py"])
    code, said = agree(clones, "a", capsys=capsys, monkeypatch=monkeypatch, refs_differ="/mail")
    assert code is None and "reservation contested" in said
    code, said = agree(clones, "b", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and said.startswith("synced with origin: 0 cell file(s) received")


def test_a_failure_after_the_fetch_hands_the_fetch_over_to_the_full_sync(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    """The lean path cannot read an object of the state after the fetch (a damaged store:
    the state's root tree is a directory where its loose file was): it hands the sync
    over with its fetch, and the full sync says what it says of it without asking the
    remote again (one fetch; before, the lean path gave up and the full sync fetched
    again), as the full CLI alone says it."""
    a = clones.paths["a"]
    tree = git(a, "rev-parse", f"{STATE_REF}^{{tree}}").strip()
    loose = a / ".git" / "objects" / tree[:2] / tree[2:]
    assert loose.is_file()  # (hive writes loose objects; nothing packed them yet)
    loose.unlink()
    loose.mkdir()
    assert lean(a, capsys=capsys) is None  # handed over
    said = both(a).stderr
    assert "Traceback" not in said and said.strip(), said
    traced(clones, a, "sync", fetches=1, configs=2, ok=False)


def test_a_remote_without_hive_state_or_a_url_is_answered_lean(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A path of an empty repository (its first sync sends everything), then a path of
    the origin (its first sync, with something to send) and a new remote with no hive
    refs and no hive refspecs yet (the full CLI configures it): as the full CLI."""
    git(clones.root, "init", "-q", "--bare", "empty.git")
    create_cell(clones.ws("a"), title="to send")
    for remote in ("../empty.git", "../origin.git"):
        assert agree(clones, "a", remote, capsys=capsys, monkeypatch=monkeypatch)[0] == 0
    git(clones.root, "init", "-q", "--bare", "other.git")
    git(clones.paths["a"], "remote", "add", "other", "../other.git")
    assert agree(clones, "a", "other", capsys=capsys, monkeypatch=monkeypatch)[0] is None
    assert lean(clones.paths["a"], "other", capsys=capsys) == 0


def test_a_push_to_a_url_leaves_its_tracking_refs_at_what_it_sent(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    """git keeps no tracking refs for a URL: hive sets them to what the remote accepted
    (as git's push does for a named remote), so the next sync knows what the remote has."""
    a = clones.paths["a"]
    url = clones.origin.as_uri()
    assert run_hive(["sync", url], cwd=a).returncode == 0
    create_cell(clones.ws("a"), title="sent to a URL")
    send_message(clones.ws("a", "agent-a"), to=["agent-a"], subject="and mail", body="4")
    assert lean(a, url, capsys=capsys) == 0
    for name in ("state", "mail"):
        sent = git(clones.origin, "rev-parse", f"refs/hive/{name}")
        assert git(a, "rev-parse", tracking_ref(url, name)) == sent
    assert sent == git(a, "rev-parse", MAIL_REF)
    create_cell(clones.ws("a"), title="and by the full sync")
    assert run_hive(["sync", url], cwd=a, module="hive.cli.main").returncode == 0
    sent = git(clones.origin, "rev-parse", STATE_REF)
    assert git(a, "rev-parse", tracking_ref(url, "state")) == sent


def test_hive_refspecs_missing_or_a_push_elsewhere_is_left_to_the_full_cli(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    a = clones.paths["a"]
    git(a, "config", "--unset-all", "remote.origin.push")
    assert lean(a, capsys=capsys) is None
    run_hive(["sync"], cwd=a)  # the full CLI puts them back
    assert "refs/hive/*:refs/hive/*" in git(a, "config", "--get-all", "remote.origin.push")
    assert lean(a, capsys=capsys) == 0
    git(a, "config", "remote.origin.pushurl", str(clones.origin))
    assert lean(a, capsys=capsys) is None  # every hive ref is pushed there


def test_a_detached_head_or_a_merge_under_way_is_left_to_the_full_cli(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    a = clones.paths["a"]
    git(a, "checkout", "-q", "--detach")
    assert lean(a, capsys=capsys) is None
    refused = run_hive(["sync"], cwd=a)
    assert refused.returncode != 0 and "detached" in refused.stderr
    git(a, "checkout", "-q", "main")
    (a / ".git" / "MERGE_HEAD").write_text(git(a, "rev-parse", "HEAD") + "\n")
    assert lean(a, capsys=capsys) is None


def test_reservations_of_two_agents_are_answered_lean_when_they_cannot_overlap(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sync settles overlaps it finds even when nothing arrived (a ``git merge`` may
    have brought them): two agents' exclusive reservations of different files cannot
    overlap, so a sync that sends them and one with nothing to do are answered lean, as
    the full CLI answers them; ``SRC/**`` taken in another clone may name both (case
    folded): that clone's sync hands the contest over."""
    a = clones.paths["a"]
    reserve(clones.ws("a", "alice"), paths=["src/a.py"])
    reserve(clones.ws("a", "bob"), paths=["src/b.py"])
    assert agree(clones, "a", capsys=capsys, monkeypatch=monkeypatch)[0] == 0
    assert lean(a, capsys=capsys) == 0
    reserve(clones.ws("b", "carol"), paths=["SRC/**"])
    code, said = agree(clones, "b", capsys=capsys, monkeypatch=monkeypatch, refs_differ="/mail")
    assert code is None and said.count("reservation contested") == 1


def test_options_and_a_remote_shown_otherwise_are_left_to_the_full_cli(
    clones: Clones, capsys: pytest.CaptureFixture[str]
) -> None:
    a = clones.paths["a"]
    for args in (["--help"], ["origin", "extra"], [" origin"], ["or\tigin"], ["--", "origin"]):
        assert lean(a, *args, capsys=capsys) is None, args


PROBE = (
    "import io, sys\n"
    "from hive.cli import entry\n"
    "for args in ([], ['--json']):\n"
    "    sys.stdout = io.TextIOWrapper(io.BytesIO())\n"
    "    assert entry.dispatch(entry.parse(['-C', sys.argv[1], 'sync', *args])) == 0, args\n"
    "sys.stdout = sys.__stdout__\n"
    "heavy = ('typer', 'click', 'pydantic', 'pydantic_core', 'rich', 'ruamel', 'dulwich',"
    " 'filelock', 'sqlite3')\n"
    "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))\n"
)


NOTHING_LOADED = PROBE.replace(
    "print(sorted({m.split('.')[0] for m in sys.modules} & set(heavy)))",
    "print(sorted(set(sys.modules) & {'typing', 'hive.domain.sync', 'hive.domain.reservecore'}))",
)


def test_a_fresh_sync_with_nothing_to_do_imports_no_heavy_module(clones: Clones) -> None:
    """The point of the lean path: no models, no CLI framework, no dulwich (the process
    boundary is what is tested: a fresh interpreter's modules); nor the sync's rounds,
    typing, or the overlap test of one agent's reservations."""
    reserve(clones.ws("a", "alice"), paths=["src/a.py"])
    clones.sync("a")
    probe = [sys.executable, "-c", NOTHING_LOADED, str(clones.paths["a"])]
    plain = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    found = subprocess.run(probe, capture_output=True, text=True, env=plain)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"
    probe = [sys.executable, "-c", PROBE, str(clones.paths["a"])]
    plain = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    found = subprocess.run(probe, capture_output=True, text=True, env=plain)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"


def test_a_fresh_sync_that_receives_and_sends_imports_no_heavy_module(clones: Clones) -> None:
    """A cell to receive, one to send, a message to send: the lean path's exchange needs
    no models, no CLI framework and no dulwich either (a fresh interpreter's modules)."""
    create_cell(clones.ws("b"), title="to receive")
    clones.sync("b")
    create_cell(clones.ws("a"), title="to send")
    send_message(clones.ws("a", "agent-a"), to=["agent-a"], subject="also", body="5")
    probe = [sys.executable, "-c", PROBE, str(clones.paths["a"])]
    plain = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    found = subprocess.run(probe, capture_output=True, text=True, env=plain)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"
    assert git(clones.origin, "rev-parse", STATE_REF) == git(
        clones.paths["a"], "rev-parse", STATE_REF
    )


def test_a_fresh_sync_that_merges_a_cell_changed_on_both_sides_imports_no_heavy_module(
    clones: Clones,
) -> None:
    """One cell changed on both sides (its title there, its priority and a label here):
    merged field by field by the rules without the models (mergecore, the merge driver's
    lean path), so the sync loads no pydantic (a fresh interpreter's modules); before,
    merge_file's models did it, ~0.1 s of such a sync."""
    cell = create_cell(clones.ws("b"), title="both change it").id
    clones.sync("b")
    clones.sync("a")
    update_cell(clones.ws("b"), cell_id=cell, title="retitled there")
    clones.sync("b")
    update_cell(clones.ws("a"), cell_id=cell, priority=0, add_labels=["here"])
    probe = [sys.executable, "-c", PROBE, str(clones.paths["a"])]
    plain = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
    found = subprocess.run(probe, capture_output=True, text=True, env=plain)
    assert found.returncode == 0, found.stderr
    assert found.stdout.splitlines()[-1] == "[]"
    merged = git(clones.origin, "show", f"{STATE_REF}:{cell_path(cell)}")
    assert "title: retitled there" in merged and "priority: 0" in merged and "- here" in merged


def test_a_conflict_is_answered_without_the_models_as_the_full_cli_answers_it(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both sides retitled one cell (non-ASCII titles): the merge records a conflict,
    and its answer, plain or JSON, is the full CLI's bytes without pydantic or rich (a
    fresh interpreter's modules); before, the answer loaded the full CLI's printer
    (``output.say``: pydantic and the models) or ``pydantic_core.to_json``."""
    cell = create_cell(clones.ws("b"), title="retitled on both sides").id
    clones.sync("b")
    clones.sync("a")
    update_cell(clones.ws("a"), cell_id=cell, title="naïve — here")
    update_cell(clones.ws("b"), cell_id=cell, title="naïve — there")
    clones.sync("b")
    for number, args in enumerate(([], ["--json"])):
        copy = copied(clones, clones.root / f"agree{number}")
        code, said = agree(copy, "a", *args, capsys=capsys, monkeypatch=monkeypatch)
        assert code == 0 and "conflict" in said and (not args or "naïve — there" in said)
        copy = copied(clones, clones.root / f"probe{number}")
        first = PROBE.replace("for args in ([], ['--json'])", f"for args in ({args!r}, [])")
        probe = [sys.executable, "-c", first, str(copy.paths["a"])]
        plain = {key: value for key, value in os.environ.items() if not key.startswith("HIVE_")}
        found = subprocess.run(probe, capture_output=True, text=True, env=plain)
        assert found.returncode == 0, found.stderr
        assert found.stdout.splitlines()[-1] == "[]", args


def test_json_writes_an_answer_of_integers_as_pydantic_does() -> None:
    """The lean answer's JSON is ``json``'s only where it is pydantic's, byte for byte."""
    from pydantic_core import to_json

    from hive.cli.lean_sync import _integers_only
    from hive.jsontext import dumps

    done = {"a": ["naïve\u2028\x1b\x7f", None, True, 3, {"k": [], "e": {}}], "b": "x/<y>"}
    assert _integers_only(done)
    assert dumps(done, indent=2).encode() == to_json(done, indent=2).replace(b"\x7f", b"\\u007f")
    assert not _integers_only({"a": [1e16]})
    assert dumps({"a": 1e16}) != to_json({"a": 1e16}).decode()


def test_the_first_sync_of_a_fresh_clone_is_answered_lean_as_the_full_cli_answers_it(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """No state here yet, a cell made before it (git clone and hive init, then a create):
    the state, mail and cells arrive and the cell is sent, as the full CLI does it."""
    clones.clone("c")
    create_cell(clones.ws("c"), title="made before the first sync")
    code, said = agree(clones, "c", capsys=capsys, monkeypatch=monkeypatch)
    assert code == 0 and said.startswith("synced with origin: 1 cell file(s) received, 1 sent")


RACE_HOOK = """#!/bin/sh
# the first push only: another clone's state lands on the remote first
[ -e .git/raced ] && exit 0
touch .git/raced
pending=$(git --git-dir=../origin.git rev-parse refs/pending/state)
git --git-dir=../origin.git update-ref refs/hive/state "$pending"
"""


def test_a_contest_met_after_a_rejected_push_is_handed_over_with_the_first_round(
    clones: Clones, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The lean sync's first round merges and pushes, and loses the push to another
    clone's (a pre-push hook moves the remote's state first); its second round finds a
    contest and hands over: the full sync goes on with that round, counting the first
    (attempts, the cell it received), as the full CLI alone does."""
    b = clones.paths["b"]
    create_cell(clones.ws("b"), title="received in the first round")
    clones.sync("b")
    spare = clones.root / "spare.git"
    shutil.copytree(clones.origin, spare, symlinks=True)
    reserve(clones.ws("b", "bob"), paths=["src/x.py"])
    assert run_hive(["sync", str(spare)], cwd=b).returncode == 0
    git(clones.origin, "fetch", "-q", str(spare), "refs/hive/state:refs/pending/state")
    shutil.rmtree(spare)
    reserve(clones.ws("a", "alice"), paths=["src/x.py"])
    create_cell(clones.ws("a"), title="sent in the first round")
    hook = clones.paths["a"] / ".git" / "hooks" / "pre-push"
    hook.write_text(RACE_HOOK)
    hook.chmod(0o755)
    code, said = agree(
        clones, "a", "--json", capsys=capsys, monkeypatch=monkeypatch, refs_differ="/mail"
    )
    done = json.loads(said)
    assert code is None and done["attempts"] == 2 and len(done["contested"]) == 1
    assert (done["received_cells"], done["sent_cells"]) == (1, 1)


OVERLAPS = [  # (pattern, pattern, may they name one file)
    ("src/a.py", "src/b.py", False),
    ("src/**", "src/b.py", True),
    ("SRC/**", "src/b.py", True),  # case folded, in every clone
    ("docs/*.md", "src/*.md", False),
    ("src/[ab].py", "src/?.py", True),
    ("src/*.py", "tests/**", False),
]


@pytest.mark.parametrize(("first", "second", "expected"), OVERLAPS)
def test_the_lean_contest_test_is_find_contests_s_overlap(
    first: str, second: str, expected: bool
) -> None:
    """``reservecore.may_contest`` (the lean sync's test) says a contest may be there
    exactly when ``contest.find_contests`` finds one between two agents' grants, and
    never for one agent's own."""
    from datetime import timedelta

    from hive.domain.contest import find_contests
    from hive.domain.reservecore import may_contest
    from hive.models import utc_now
    from hive.models.reservation import Reservation, ReservationFile

    now = utc_now()

    def grant(number: int, agent: str, pattern: str) -> Reservation:
        made = now - timedelta(minutes=10 - number)
        later = now + timedelta(hours=1)
        return Reservation(
            id=number, agent=agent, path_pattern=pattern, created_at=made, expires_at=later
        )

    pair = [grant(1, "alice", first), grant(2, "bob", second)]
    files = {
        agent: ReservationFile(agent=agent, reservations=[r])
        for agent, r in zip(["alice", "bob"], pair, strict=True)
    }
    assert bool(find_contests(files, now)) == expected
    assert may_contest(pair) == expected
    assert not may_contest([grant(1, "alice", first), grant(2, "alice", second)])
