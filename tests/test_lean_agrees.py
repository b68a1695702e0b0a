"""The lean answers (``hive/cli/entry.py``, ``lean.py``, ``lean_write.py``) and the full
CLI agree on what a user meets: the same output, error and exit code for ids by
prefix, ambiguous and unknown ids, ``--json``, bytes that are not UTF-8, ``-C ~/DIR``,
and every kind of place a command can be run from (issue 10).

Both run in this process: ``run_hive(..., module="hive")`` is the console script (lean
first), ``module="hive.cli.main"`` the full CLI alone."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from hive.domain.cells import close_cell, create_cell
from hive.domain.workspace import Workspace
from hive.store import ids as id_maker
from tests.conftest import copy_repo, git, isolated_env, make_repo
from tests.inprocess import run_hive

NOT_UTF8 = "\udcff"  # how the byte 0xff of a command line reaches Python


def both(
    cwd: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The console script's answer, checked to be the full CLI's (output, error, exit code)."""
    environment = {**os.environ, **(env or {})}
    lean = run_hive(args, cwd=cwd, env=environment)
    full = run_hive(args, cwd=cwd, env=environment, module="hive.cli.main")
    assert "Traceback" not in lean.stderr, lean.stderr
    assert (lean.returncode, lean.stdout, lean.stderr) == (
        full.returncode,
        full.stdout,
        full.stderr,
    ), f"hive {' '.join(args)}"
    return lean


@pytest.fixture(scope="module")
def made(
    tmp_path_factory: pytest.TempPathFactory, hive_template: Path
) -> tuple[Path, dict[str, str]]:
    """A hive with the cells below and their ids, made once per module."""
    with isolated_env(tmp_path_factory):
        root = copy_repo(hive_template, tmp_path_factory.mktemp("template") / "repo")
        ws = Workspace(str(root), actor="alice")
        ids = {
            "urgent": create_cell(ws, title="Urgent one", priority=0, type="bug").id,
            "plain": create_cell(ws, title="Plain one").id,
            "taken": create_cell(ws, title="Taken", assignee="bob", labels=["x"]).id,
            "waiting": "",
            "done": create_cell(ws, title="Done").id,
        }
        ids["waiting"] = create_cell(ws, title="Waits", deps=[f"blocks:{ids['plain']}"]).id
        ids["child"] = create_cell(ws, title="Child", parent=ids["urgent"]).id
        ids["part"] = ids["urgent"][:-2]  # a partial id, resolved as the full CLI does
        ids["twin"] = _twin_of(ws, ids["urgent"])
        close_cell(ws, cell_id=ids["done"], reason="finished")
    return root, ids


def _twin_of(ws: Workspace, cell_id: str) -> str:
    """A cell whose id shares the first two letters of ``cell_id``'s hash, not the
    third: random ids do so now and then (about one run in 250 of this module drew such
    a pair, and ``hv-2n`` of ``hv-2n4zvc`` was ambiguous); made so here, every run."""
    first, third = cell_id[3:5], cell_id[5]
    real = id_maker.random_part
    other = next(letter for letter in id_maker.ALPHABET if letter != third)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(id_maker, "random_part", lambda n: first + other + real(n)[3:])
        return create_cell(ws, title="Twin").id


def shortest_prefix(cell_id: str, cells: dict[str, str]) -> str:
    """The shortest prefix of ``cell_id`` (two letters of its hash at least) that begins
    no other cell's id than its own subtasks': what names it whatever ids were drawn."""
    others = [other for other in cells.values() if not other.startswith(cell_id)]
    return next(
        cell_id[:n]
        for n in range(5, len(cell_id) + 1)
        if not any(other.startswith(cell_id[:n]) for other in others)
    )


@pytest.fixture
def repo(made: tuple[Path, dict[str, str]], tmp_path: Path) -> Path:
    """A copy of ``made``'s repository."""
    return copy_repo(made[0], tmp_path / "repo")


@pytest.fixture
def cells(made: tuple[Path, dict[str, str]], repo: Path) -> dict[str, str]:
    """The ids of the cells in ``repo``: urgent, plain, taken (by bob), waiting (blocked
    by plain), done (closed), child (of urgent), part (urgent's id less two letters),
    twin (its hash begins with the two letters urgent's does)."""
    return dict(made[1])


READS = [
    ["list"],
    ["list", "--json"],
    ["list", "-n", "2"],
    ["list", "--all", "-s", "all"],
    ["list", "-l", "x", "--json"],
    ["list", "--parent", "{urgent}"],
    ["list", "--parent={urgent}", "--json", "-s", "all"],
    ["list", "--parent", "{part}"],
    ["list", "--parent", "{plain}", "--json"],
    ["list", "--parent", "{plain}"],
    ["ready"],
    ["ready", "--json", "-n", "1"],
    ["list", "--all", "--json", "--verbose"],
    ["list", "--verbose", "-n", "2"],
    ["list", "--json", "--no-verbose"],
    ["ready", "--verbose", "--json"],
    ["ready", "--all", "--verbose"],
    ["show", "{urgent}"],
    ["show", "{waiting}", "--json"],
    ["show", "{done}"],
]


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_reads_agree(repo: Path, cells: dict[str, str], args: list[str]) -> None:
    shown = both(repo, *[arg.format(**cells) for arg in args])
    assert shown.returncode == 0 and shown.stdout


# Option forms the lean parsers must read as click does (or leave to the full CLI).
OPTION_FORMS = [
    (["list", "-s=open"], 2),  # a short option's value is "=open"
    (["list", "-sopen", "-n", "1"], 0),
    (["list", "--status=in-progress"], 0),
    (["list", "-s", "ALL"], 2),  # "all" is taken only as written
    (["list", "-s", "all", "-n", "1"], 0),
    (["list", "-p", "P1"], 0),
    (["list", "-p", "\u00b2"], 2),  # a digit int() does not read
    (["list", "-n", "\u0661"], 2),  # not an ASCII number
    (["list", "-n", "100001"], 2),  # above the largest page
    (["list", "-n", "99999999999999999999"], 2),
    (["list", "--all", "-n", "0"], 2),
    (["list", "-n", "2", "-n", "1"], 0),
    (["list", "--parent", "hv-nothing"], 3),
    (["list", "--parent", ""], 0),  # no filter, as the full CLI reads it
    (["list", "--parent", " "], 2),
    (["ready", "--all", "-n", "1"], 0),  # --all wins wherever it stands
    (["ready", "-n", "1", "--all"], 0),
    (["ready", "-n", "100001"], 2),
    (["ready", "--limit=1", "--json"], 0),
]


@pytest.mark.parametrize(("args", "code"), OPTION_FORMS, ids=lambda v: str(v))
def test_option_forms_are_read_as_the_full_cli_reads_them(
    repo: Path, cells: dict[str, str], args: list[str], code: int
) -> None:
    assert both(repo, *args).returncode == code


@pytest.mark.parametrize(
    "args",
    [["list", "-C"], ["ready", "--json", "--actor"], ["show", "hv-x", "-C"], ["-C"]],
    ids=" ".join,
)
def test_a_global_option_without_its_value_is_named_wherever_it_stands(
    repo: Path, cells: dict[str, str], args: list[str]
) -> None:
    """``-C`` and ``--actor`` are read before or after the command: given last without
    a value, both paths say which option needs one (not 'No such option: -C')."""
    said = both(repo, *args)
    assert said.returncode == 2
    option = args[-1]
    assert said.stderr == f"error: Option '{option}' requires an argument.\n"


@pytest.mark.parametrize(
    "args",
    [
        ["create", "x", "-t", "BUGS"],
        ["create", "x", "-p", "\u00b2"],
        ["create", "x", "-p=1"],
        ["update", "{plain}", "-t", "FEATURES"],
        ["update", "{plain}", "-p", "\u00b2"],
    ],
    ids=" ".join,
)
def test_writes_refuse_what_the_full_cli_refuses(
    repo: Path, cells: dict[str, str], args: list[str]
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    refused = both(repo, *[arg.format(**cells) for arg in args])
    assert refused.returncode == 2 and refused.stderr.startswith("error: ")
    assert git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    "args",
    [
        ["create", "x", "-t", "BUG"],
        ["create", "x", "--type=Task"],
        ["update", "{plain}", "-t", "Epic"],
    ],
    ids=" ".join,
)
def test_a_type_in_any_case_is_taken_by_both_paths(
    repo: Path, cells: dict[str, str], args: list[str]
) -> None:
    """``-t Bug`` was refused by create and update ('Input should be ...') though ``hive
    list -t BUG`` and ``-s In-Progress`` take any case: both paths take it now."""
    wanted = args[-1].rpartition("=")[2].lower()
    for module in ("hive", "hive.cli.main"):
        done = run_hive([*[arg.format(**cells) for arg in args], "--json"], cwd=repo, module=module)
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        assert (answer[0] if isinstance(answer, list) else answer)["type"] == wanted


def test_a_stray_copy_of_a_cell_in_another_shard_is_not_the_cell(
    repo: Path, cells: dict[str, str]
) -> None:
    """A copy of a cell file left in another shard directory (copied or moved by hand):
    the cell is listed once, from its own file, on both paths (the lean list showed it
    twice; which copy ready took followed the order of tree ids); with only stray
    copies left, both paths still agree."""
    from hive.store.layout import cell_path

    plain = cells["plain"]
    own = repo / cell_path(plain)
    shard = own.parent.name
    other = repo / ".hive" / "cells" / ("z" if shard != "z" else "y")
    other.mkdir(exist_ok=True)
    stale = own.read_text().replace("title: Plain one", "title: stale copy")
    assert stale != own.read_text()
    (other / own.name).write_text(stale.replace("status: open", "status: closed"))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", "a stray copy")
    for args in (["list"], ["list", "--json", "--all"], ["ready"], ["ready", "--json"]):
        listed = both(repo, *args)
        lines = listed.stdout.splitlines()
        rows = [line for line in lines if line.startswith(plain) or f'"id": "{plain}"' in line]
        assert len(rows) == 1, (args, listed.stdout)
        assert "stale copy" not in listed.stdout
    assert "stale copy" not in both(repo, "show", plain).stdout
    git(repo, "rm", "-q", str(own.relative_to(repo)))
    git(repo, "commit", "-q", "--no-verify", "-m", "only the stray copy left")
    for args in (["list", "--json", "--all"], ["ready", "--json"], ["show", plain]):
        both(repo, *args)


def test_ids_by_prefix_ambiguous_and_unknown(repo: Path, cells: dict[str, str]) -> None:
    urgent, twin = cells["urgent"], cells["twin"]
    by_prefix = both(repo, "show", shortest_prefix(urgent, cells), "--json")
    assert by_prefix.returncode == 0, by_prefix.stderr  # (an error's JSON has an "id" too)
    assert json.loads(by_prefix.stdout)["id"] == urgent
    shared = both(repo, "--json", "show", urgent[:5])  # begins urgent's id and twin's
    assert shared.returncode == 3
    # ... and any other cell's whose random id drew the same two letters (~1 run in 150)
    named = [cell for key, cell in cells.items() if key != "part"]  # part: no cell's id
    begins = sorted(other for other in named if other.startswith(urgent[:5]))
    assert {urgent, cells["child"], twin} <= set(begins)
    assert json.loads(shared.stdout)["matches"] == begins
    assert json.loads(both(repo, "show", urgent.upper(), "--json").stdout)["id"] == urgent
    ambiguous = both(repo, "show", "hv-")
    assert ambiguous.returncode == 3 and "ambiguous" in ambiguous.stderr
    unknown = both(repo, "--json", "show", "hv-nothere")
    assert unknown.returncode == 3
    assert json.loads(unknown.stdout)["code"] == "not_found"
    for write in (["update", "hv-nothere", "-p", "1"], ["close", "hv-nothere"]):
        assert both(repo, *write).returncode == 3
    head = git(repo, "rev-parse", "HEAD")
    assert both(repo, "close", "hv-").returncode == 3
    assert git(repo, "rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    "args",
    [
        ["show", NOT_UTF8],
        ["show", f"hv-{NOT_UTF8}", "--json"],
        ["list", "-l", NOT_UTF8],
        ["list", "--assignee", NOT_UTF8, "--json"],
        ["create", f"bad {NOT_UTF8} byte"],
        ["create", "fine", "-d", NOT_UTF8],
        ["update", "{plain}", "--title", NOT_UTF8],
        ["close", "{plain}", "-r", NOT_UTF8],
        ["--actor", NOT_UTF8, "create", "fine"],
    ],
    ids=lambda args: " ".join(a.replace(NOT_UTF8, "0xff") for a in args),
)
def test_bytes_that_are_not_utf8_are_named_not_a_traceback(
    repo: Path, cells: dict[str, str], args: list[str]
) -> None:
    head = git(repo, "rev-parse", "HEAD")
    refused = both(repo, *[arg.replace("{plain}", cells["plain"]) for arg in args])
    assert refused.returncode == 2, refused.stderr
    assert refused.stderr.startswith("error: ") and "internal error" not in refused.stderr
    assert git(repo, "rev-parse", "HEAD") == head  # nothing was written


def test_a_tilde_directory_from_anywhere(repo: Path, cells: dict[str, str], tmp_path: Path) -> None:
    home = {"HOME": str(repo.parent)}
    answers = {
        both(tmp_path, *args, env=home).stdout
        for args in (
            ["-C", f"~/{repo.name}", "ready", "--json"],
            ["ready", "-C", f"~/{repo.name}", "--json"],
            [f"-C~/{repo.name}", "ready", "--json"],
            ["-C", str(repo), "ready", "--json"],
        )
    }
    assert len(answers) == 1
    missing = both(tmp_path, "-C", "~/nowhere", "list", env=home)
    assert missing.returncode == 2 and str(repo.parent / "nowhere") in missing.stderr


def test_several_directory_options_chain_as_gits_do(
    repo: Path, cells: dict[str, str], tmp_path: Path
) -> None:
    """``git -C A -C B`` runs in A/B (a relative -C is taken from the one before it);
    hive took the last -C alone from the current directory: ``hive -C ~/code -C app
    list`` ran in ./app, another repository when one was there."""
    here = tmp_path / "elsewhere"
    make_repo(here / repo.name)  # what the last -C alone names from here: no hive
    expected = both(here, "-C", str(repo), "ready", "--json").stdout
    shown = git(here, "-C", str(repo.parent), "-C", repo.name, "rev-parse", "--show-toplevel")
    assert shown.strip() == str(repo)  # git's own rule
    chained = (
        ["-C", str(repo.parent), "-C", repo.name, "ready", "--json"],
        ["-C", str(repo.parent), "ready", "-C", repo.name, "--json"],
        [f"-C{repo.parent}", f"-C{repo.name}", "ready", "--json"],
        ["-C", str(here), "-C", str(repo), "ready", "--json"],  # an absolute one restarts
        ["-C", str(repo), "-C", "", "ready", "--json"],  # an empty one changes nothing
    )
    for args in chained:
        assert both(here, *args).stdout == expected, args


def test_every_kind_of_place(repo: Path, cells: dict[str, str], tmp_path: Path) -> None:
    """Outside a repository, without ``hive init``, bare, a linked worktree, a
    detached HEAD, an unborn branch: the same answer from both paths."""
    urgent = cells["urgent"]
    reads = (["list", "--json"], ["ready"], ["show", urgent], ["--json", "show", urgent[:-1]])
    outside = tmp_path / "outside"
    outside.mkdir()
    uninitialised = make_repo(tmp_path / "plain")
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    for place, code in ((outside, 2), (uninitialised, 2), (bare, 2)):
        for args in (*reads, ["create", "x"], ["close", urgent]):
            refused = both(place, *args)
            assert refused.returncode == code and refused.stderr.startswith("error: ")
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked), "-b", "other")
    for args in reads:
        assert both(linked, *args).returncode == 0
    git(repo, "checkout", "-q", "--detach")
    for args in reads:
        assert both(repo, *args).returncode == 0
    head = git(repo, "rev-parse", "HEAD")
    detached = both(repo, "update", urgent, "-p", "1")
    assert detached.returncode == 4 and "detached" in detached.stderr
    git(repo, "checkout", "-q", "--orphan", "unborn")
    for args in (*reads, ["create", "x"]):
        unborn = both(repo, *args)
        assert unborn.returncode == 2 and "hive init" in unborn.stderr
    assert git(repo, "rev-parse", "--verify", "-q", head.strip()) == head


@pytest.mark.parametrize(
    "args",
    [["list", "--all", "--json", "--verbose"], ["list", "--verbose"], ["ready", "--verbose"]],
    ids=" ".join,
)
def test_verbose_is_answered_by_the_lean_path(
    repo: Path, cells: dict[str, str], args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--verbose`` (whole cells) is what a person gets anyway: the lean path answers
    it (the full CLI printed the same bytes at ~5x the CPU at 10,000 cells)."""
    from hive.cli import entry

    assert entry.dispatch(entry.parse(["-C", str(repo), *args])) == 0
    assert capsys.readouterr().out == both(repo, *args).stdout


@pytest.mark.parametrize(
    "args",
    [
        ["show", "{part}"],  # urgent's id less two letters: urgent and its child match
        ["show", "{part}", "--json"],
        ["list", "--parent", "{part}"],
        ["list", "--parent={hash}", "--json", "-s", "all"],
        ["show", "{upper}"],
        ["list", "--parent", "{upper}", "--json"],
    ],
    ids=" ".join,
)
def test_ids_by_prefix_are_answered_by_the_lean_path(
    repo: Path, cells: dict[str, str], args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A prefix of an id (with or without ``hv-``, in any case) is resolved by the lean
    path as the full CLI resolves it (``ids.resolve_among``): the same bytes, without
    the full CLI."""
    from hive.cli import entry

    prefixes = {"hash": cells["urgent"][3:-1], "upper": cells["urgent"][:-1].upper()}
    filled = [arg.format(**cells, **prefixes) for arg in args]
    assert entry.dispatch(entry.parse(["-C", str(repo), *filled])) == 0
    assert capsys.readouterr().out == both(repo, *filled).stdout


def test_places_the_full_cli_refuses_are_refused_by_the_lean_path(
    repo: Path, cells: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a user meets most before hive is set up (outside a repository, a bare one,
    ``git init`` without a commit, a repository without ``hive init``, an unborn branch)
    and a write on a detached HEAD: answered by the lean path itself (no full CLI
    started for one line), with the full CLI's output, error and exit code."""
    from hive.cli import entry

    urgent = cells["urgent"]
    reads = [["list"], ["--json", "ready"], ["show", urgent], ["list", "--json", "-s", "open"]]
    writes = [["create", "x"], ["--json", "update", urgent, "-p", "1"], ["close", urgent]]
    outside = tmp_path / "outside"
    outside.mkdir()
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(bare))
    places = [
        (outside, "not inside a git repository", reads + writes + [["reserve", "src/x.py"]]),
        (bare, "needs a working tree", reads + writes + [["release", "src/x.py"]]),
        (make_repo(tmp_path / "fresh", commit=False), "hive init", reads + writes),
        (make_repo(tmp_path / "plain"), "hive init", reads + writes),
    ]
    unborn = copy_repo(repo, tmp_path / "unborn")
    git(unborn, "checkout", "-q", "--orphan", "unborn")
    places.append((unborn, "hive init", reads + writes))
    detached = copy_repo(repo, tmp_path / "detached")
    git(detached, "checkout", "-q", "--detach")
    places.append((detached, "detached", writes))

    def answered(place: Path, args: list[str]) -> bool:
        code = entry.dispatch(entry.parse(["-C", str(place), *args]))
        capsys.readouterr()
        return code is not None

    for place, said, commands in places:
        head = git(place, "rev-parse", "-q", "--verify", "HEAD", check=False)
        for args in commands:
            assert answered(place, args), f"hive {' '.join(args)} in {place.name}: deferred"
            refused = both(place, *args)
            assert refused.returncode in (2, 4) and said in refused.stderr, refused.stderr
            if "--json" in args:
                assert json.loads(refused.stdout)["error"] in refused.stderr
        assert git(place, "rev-parse", "-q", "--verify", "HEAD", check=False) == head


def test_a_credential_of_nobody_is_refused_by_every_command(
    repo: Path, cells: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """A retired agent's credential (and one never issued) is refused by reads as by
    writes and ``whoami``: the lean path answers so itself (no full CLI started), with the
    full CLI's error and exit code (``not_your_identity``, 5); commands the full CLI alone
    runs refuse it alike. The name registered again, its new credential reads; the
    credential re-registers the same identity; a person's shell is unchanged."""
    from hive.cli import entry

    person = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    made = run_hive(["--json", "agent", "register", "rita"], cwd=repo, env=person)
    old = json.loads(made.stdout)["token"]
    retired = run_hive(["agent", "retire", "rita", "--reason", "gone"], cwd=repo, env=person)
    assert retired.returncode == 0, retired.stderr
    lean = [["list"], ["--json", "ready"], ["show", cells["urgent"]], ["create", "x"]]
    full = [["log"], ["doctor"], ["reservations"], ["--json", "agent", "whoami"], ["blocked"]]
    head = git(repo, "rev-parse", "HEAD")
    for token in (old, "never-issued"):
        env = {**person, "HIVE_AGENT_TOKEN": token, "HIVE_AGENT": "rita"}
        for args in lean:
            with pytest.MonkeyPatch.context() as patch:
                for key, value in env.items():
                    patch.setenv(key, value)
                patch.delenv("HIVE_SESSION", raising=False)
                assert entry.dispatch(entry.parse(["-C", str(repo), *args])) == 5, args
            capsys.readouterr()
            assert "not the credential of any agent" in both(repo, *args, env=env).stderr
        for args in full:
            done = run_hive(args, cwd=repo, env=env, module="hive.cli.main")
            assert done.returncode == 5 and "not the credential of any" in done.stderr, args
        answer = run_hive(["--json", "list"], cwd=repo, env=env)
        assert json.loads(answer.stdout)["code"] == "not_your_identity"
    assert git(repo, "rev-parse", "HEAD") == head  # nothing written
    again = run_hive(["--json", "agent", "register", "rita"], cwd=repo, env=person)
    new = {**person, "HIVE_AGENT_TOKEN": json.loads(again.stdout)["token"], "HIVE_AGENT": "rita"}
    assert both(repo, "--json", "ready", env=new).returncode == 0
    kept = run_hive(["--json", "agent", "register", "rita"], cwd=repo, env=new)
    assert json.loads(kept.stdout)["name"] == "rita", kept.stderr
    assert both(repo, "ready", env=person).returncode == 0


TYPOS = ["lst", "craete", "reserv", "mai", "frobnicate", "help", "version", "a  b", "Ünïcode"]
TYPOS += ["x\x1by", "", "stat", "re"]


@pytest.mark.parametrize("typo", TYPOS)
def test_a_command_that_does_not_exist_is_named_by_the_lean_path_as_by_the_full_cli(
    repo: Path, typo: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A mistyped command (with click's suggestions, ``help`` and ``version`` said as what
    to type): the full CLI's words, JSON and exit code, from the lean path (the full CLI
    built the whole app to say it: ~0.3 s)."""
    from hive.cli import entry

    for args in ([typo], ["--json", typo], [typo, "--help"], [typo, "x", "-p", "1"]):
        code = entry.dispatch(entry.parse(["-C", str(repo), *args]))
        capsys.readouterr()
        assert code == 2, f"hive {args}: the lean path deferred"
        refused = both(repo, *args)
        assert refused.returncode == 2 and "No such command" in refused.stderr


@pytest.mark.parametrize("args", [["list"], ["ready"]], ids=" ".join)
def test_a_zero_columns_is_no_width_as_git_reads_it(
    repo: Path, cells: dict[str, str], args: list[str]
) -> None:
    """``COLUMNS=0`` (a terminal that reports no size yet, a CI runner) is no width, as
    git and ``hive show`` read it: ``hive list`` cut every title to an ellipsis, as if
    the terminal had no column. Piped, the titles are whole (on a terminal: its size)."""
    title = "A title long enough to be cut at any width a terminal might have"
    assert run_hive(["create", title], cwd=repo).returncode == 0
    shown = both(repo, *args, env={"COLUMNS": "0"})
    assert title in shown.stdout, shown.stdout


BROKEN_CONFIG_COMMANDS = [
    *READS[::4],
    ["create", "x"],
    ["update", "{plain}", "-p", "1"],
    ["close", "{plain}"],
    ["reserve", "src/a.py"],
    ["release", "src/a.py"],
    ["mail", "inbox"],
    ["sync"],
]


@pytest.mark.parametrize("agent", [False, True], ids=["person", "agent"])
def test_a_committed_config_that_does_not_parse_is_met_alike(
    repo: Path, cells: dict[str, str], agent: bool
) -> None:
    """A committed ``.hive/config.yaml`` that does not parse: every lean command answers
    as the full CLI does (a read that needs no config answers; what needs it refuses,
    exit 7, naming the file and its line)."""
    env = {"HIVE_AGENT": ""}
    if agent:
        made = run_hive(["-C", str(repo), "agent", "register", "robo"], env=env)
        token = made.stdout.split("HIVE_AGENT_TOKEN=")[1].split()[0]
        env = {"HIVE_AGENT": "robo", "HIVE_AGENT_TOKEN": token}
    config = repo / ".hive" / "config.yaml"
    config.write_bytes(config.read_bytes() + b"verify: [unclosed\n")
    git(repo, "-c", "core.hooksPath=/dev/null", "commit", "-qm", "broken", "--", str(config))
    refused = 0
    for args in BROKEN_CONFIG_COMMANDS:
        said = both(repo, *[arg.format(**cells) for arg in args], env=env)
        if said.returncode == 7:
            refused += 1
            assert said.stderr.startswith("error: .hive/config.yaml:"), said.stderr
    assert refused >= 5
