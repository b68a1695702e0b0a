"""The CLI as a user runs it on a real repository (in-process: tests/inprocess.py)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import agent_env, assert_clean, at_a_terminal, git
from tests.cputime import cpu_clock
from tests.inprocess import run_hive


def hive(
    repo: Path, *args: str, actor: str | None = "alice", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run hive as agent ``actor``, proven by its credential (outside a repository
    there is nothing to prove it with); ``actor`` None: as the person (git user)."""
    from hive.errors import NotAGitRepository

    base = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    with contextlib.suppress(NotAGitRepository):
        base = agent_env(repo, actor) if actor else base
    claim = ["--actor", actor] if actor else []
    return run_hive(
        ["-C", str(repo), *claim, *args], env={**base, **(env or {})}, module="hive.cli.main"
    )


def ok(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result.stdout


def as_json(result: subprocess.CompletedProcess[str]) -> object:
    return json.loads(ok(result))


@pytest.fixture
def hived(repo: Path) -> Path:
    ok(hive(repo, "init", "--prefix", "hv"))
    return repo


def test_full_cycle_through_the_cli(hived: Path) -> None:
    created = as_json(hive(hived, "create", "Fix login", "-t", "bug", "-p", "1", "--json"))
    assert isinstance(created, dict)
    cell_id = created["id"]
    shown = as_json(hive(hived, "show", cell_id[:6], "--json"))
    assert isinstance(shown, dict) and shown["priority"] == 1
    ready = as_json(hive(hived, "--json", "ready"))
    assert isinstance(ready, list) and [c["id"] for c in ready] == [cell_id]
    ok(hive(hived, "start", cell_id))
    claimed = hive(hived, "start", cell_id, actor="bob")
    assert claimed.returncode == 4
    assert claimed.stderr.strip() == f"error: {cell_id} is already claimed by alice"
    ok(hive(hived, "close", cell_id, "--reason", "done"))
    listed = ok(hive(hived, "list", "--status", "closed"))
    assert cell_id in listed and "Fix login" in listed
    log = as_json(hive(hived, "log", cell_id, "--json"))
    assert isinstance(log, list) and [e["event"] for e in log] == ["close", "start", "create"]
    assert_clean(hived)


def test_log_names_who_made_a_commit_without_hive_trailers(hived: Path) -> None:
    """A cell staged with HIVE_AUTOCOMMIT=0 lands in the user's own commit: hive log
    lists it with its git author, as it lists a hive commit with its Hive-Agent."""
    staged = hive(hived, "create", "Staged", "--json", actor=None, env={"HIVE_AUTOCOMMIT": "0"})
    cell_id = json.loads(ok(staged))["id"]
    git(hived, "commit", "-q", "-m", "code and cell")
    line = ok(hive(hived, "log", cell_id, actor=None)).splitlines()[0]
    assert line.endswith("code and cell  Test User"), line


def test_epic_dep_and_doctor_commands(hived: Path) -> None:
    cells = as_json(
        hive(hived, "epic", "create", "Auth", "--subtask", "schema", "--subtask", "api", "--json")
    )
    assert isinstance(cells, list)
    epic, first, second = (c["id"] for c in cells)
    ok(hive(hived, "dep", "add", second, first))
    cycle = hive(hived, "dep", "add", first, second)
    assert cycle.returncode == 4 and "cycle" in cycle.stderr
    tree = as_json(hive(hived, "dep", "tree", second, "--json"))
    assert isinstance(tree, dict) and tree["depends_on"][0]["id"] == first
    assert tree["deleted"] is False and tree["depends_on"][0]["deleted"] is False
    status = as_json(hive(hived, "epic", "status", epic, "--json"))
    assert isinstance(status, dict) and status["total"] == 2 and status["ready"] == [first]
    assert "no problems" in ok(hive(hived, "doctor"))
    # a deleted blocker blocks nothing: the tree says so, as hive show does (it said [open])
    ok(hive(hived, "delete", first))
    shown = ok(hive(hived, "dep", "tree", second)).splitlines()
    assert shown[1].endswith(f"{first} [open (deleted)] schema (blocks)"), shown
    tree = as_json(hive(hived, "dep", "tree", second, "--json"))
    assert isinstance(tree, dict) and tree["depends_on"][0]["deleted"] is True


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("show", "hv-nothere"), 3, "no cell matches id 'hv-nothere'"),
        (("create", "x", "-p", "9"), 2, "invalid priority '9'"),
        (("update", "PLACEHOLDER", "--status", "done"), 2, "invalid status 'done'"),
        (("create", "x", "--dep", "blocks:hv-missing"), 3, "no cell matches id 'hv-missing'"),
        (("epic", "create", "E", "-s", ""), 2, "invalid subtask title: String should have"),
        (("init", "--prefix", "X"), 2, "invalid prefix 'X': prefix must be lowercase"),
        (("init", "--prefix", "a" * 20), 2, "invalid prefix 'aaaaaaaaaaaaaaaaaaaa': String should"),
        (("create", "  "), 2, "invalid title: title must not be blank"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(
    hived: Path, args: tuple[str, ...], code: int, message: str
) -> None:
    cell = as_json(hive(hived, "create", "target", "--json"))
    assert isinstance(cell, dict)
    argv = [cell["id"] if arg == "PLACEHOLDER" else arg for arg in args]
    head = git(hived, "rev-parse", "HEAD")
    result = hive(hived, *argv)
    assert result.returncode == code
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {message}")
    assert "pydantic" not in result.stderr and "Value error" not in result.stderr
    assert git(hived, "rev-parse", "HEAD") == head


@pytest.mark.parametrize("command", ["list", "init"])
def test_outside_a_repository(tmp_path: Path, command: str) -> None:
    result = hive(tmp_path, command)
    assert result.returncode == 2
    assert (
        result.stderr
        == f"error: {tmp_path} is not inside a git repository (run 'git init' first)\n"
    )
    assert not (tmp_path / ".hive").exists()


def test_a_bare_repository_is_named_as_such(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    result = hive(tmp_path / "bare.git", "init")
    assert result.returncode == 2
    assert result.stderr.startswith(f"error: {tmp_path / 'bare.git'} is a bare repository")


def test_json_errors_are_structured(hived: Path) -> None:
    result = hive(hived, "show", "hv-zzzz", "--json")
    assert result.returncode == 3
    assert json.loads(result.stdout) == {
        "error": "no cell matches id 'hv-zzzz'",
        "code": "not_found",
        "id": "hv-zzzz",
    }


def test_corrupt_cell_warns_but_list_works(hived: Path) -> None:
    good = as_json(hive(hived, "create", "good", "--json"))
    bad = as_json(hive(hived, "create", "bad", "--json"))
    assert isinstance(good, dict) and isinstance(bad, dict)
    path = next(hived.glob(f".hive/cells/*/{bad['id']}.yaml"))
    path.write_text("title: [broken\n")
    git(hived, "commit", "-qam", "break it")
    result = hive(hived, "list")
    assert result.returncode == 0
    assert good["id"] in result.stdout
    warning = f"warning: {path.relative_to(hived).as_posix()}:1: malformed YAML"
    assert warning in result.stderr
    for module in ("hive.cli.main", "hive"):  # the full CLI, and the entry's lean answer
        for args in (["ready"], ["--json", "ready"], ["ready", "-n", "1"]):
            ready = run_hive(["-C", str(hived), *args], module=module)
            assert ready.returncode == 0 and good["id"] in ready.stdout, (module, args, ready)
            assert bad["id"] not in ready.stdout and warning in ready.stderr, (module, args)
    doctor = hive(hived, "doctor")
    assert doctor.returncode == 1 and "corrupt" in doctor.stdout


def test_show_list_ready_warn_of_an_uncommitted_edit_that_does_not_load(hived: Path) -> None:
    """hive reads committed cells: a cell file broken in the working tree (not committed)
    was shown and listed as committed without a word; show, list and ready name its
    file and line now."""
    cell = as_json(hive(hived, "create", "edited", "--json"))
    assert isinstance(cell, dict)
    path = next(hived.glob(f".hive/cells/*/{cell['id']}.yaml"))
    broken = f"id: {cell['id']}\ntitle: [broken\n"
    path.write_text(broken)
    relative = re.escape(path.relative_to(hived).as_posix())
    for module in ("hive.cli.main", "hive"):  # the full CLI, and the entry's lean answer
        for args in (
            ["show", cell["id"]],
            ["--json", "show", cell["id"]],
            ["list"],
            ["--json", "ready"],
        ):
            shown = run_hive(["-C", str(hived), *args], module=module)
            assert shown.returncode == 0 and "edited" in shown.stdout, (module, args, shown)
            assert re.search(rf"warning: {relative}:\d+: malformed YAML", shown.stderr), shown
            assert "uncommitted edit" in shown.stderr, (module, args, shown)
    git(hived, "checkout", "--", str(path))
    for args in (["show", cell["id"]], ["list"], ["ready"]):
        clean = run_hive(["-C", str(hived), *args], module="hive")
        assert clean.returncode == 0 and clean.stderr == "", clean
    assert path.read_text() != broken


def test_mail_send_takes_recipients_as_to_options_too(hived: Path) -> None:
    """The tool's parameter is ``to``: ``hive mail send --to NAME`` was refused as an
    unknown option (recipients are the command's arguments)."""
    sender, reader = agent_env(hived, "BlueLake"), agent_env(hived, "GreenCastle")
    for module in ("hive", "hive.cli.main"):  # the entry's lean answer, and the full CLI
        sent = run_hive(
            ["-C", str(hived), "mail", "send", "--to", "GreenCastle", "-s", module, "-b", "--to"],
            env=sender,
            module=module,
        )
        assert sent.returncode == 0 and "to GreenCastle" in sent.stdout, (module, sent)
    both = ["--to=GreenCastle", "--to", "BlueLake", "--subject", "both"]
    sent = run_hive(["-C", str(hived), "mail", "send", *both], env=sender)
    assert sent.returncode == 0 and "to GreenCastle, BlueLake" in sent.stdout, sent
    inbox = run_hive(["-C", str(hived), "--json", "mail", "inbox"], env=reader)
    headers = json.loads(inbox.stdout)
    assert [h["subject"] for h in headers] == ["both", "hive.cli.main", "hive"], headers
    read = run_hive(
        ["-C", str(hived), "--json", "mail", "read", str(headers[-1]["id"])], env=reader
    )
    assert json.loads(read.stdout)["body"] == "--to", read  # a value is never a recipient


def demo(*args: str) -> subprocess.CompletedProcess[str]:
    return run_hive(["demo", *args], module="hive.cli.main")


def test_demo_runs_a_real_swarm_and_keeps_the_repository(tmp_path: Path) -> None:
    # "in seconds": its own work (this process and the workers it reaps, ~0.5-1 s) is
    # counted in CPU seconds (tests/cputime.py), which a loaded machine does not
    # stretch; the wall time is that and the example agents' pacing (~5 s), here bounded
    # with room for a loaded machine
    started, spent = time.monotonic(), cpu_clock()
    result = demo("--keep", str(tmp_path / "demo"))
    assert spent() < 5
    assert time.monotonic() - started < 120
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "$ hive swarm run demo-" in out and "--workers 3" in out
    assert out.count("started   ") == 5 and out.count("completed ") == 5
    assert "5/5 subtasks completed, 0 blocked" in out
    assert "hive review" in out and "+def sign_up_and_login_endpoints() -> str:" in out
    assert "feature-based" in out.split("hive swarm insights")[1]
    repo = tmp_path / "demo"
    # the newest commits, as `git log --oneline` prints them (the README's main job shows them)
    shown = out.split(" git log --oneline ")[1].split("hive swarm insights")[0].splitlines()[1:-1]
    logged = git(repo, "log", "--format=%H %s").splitlines()
    assert len(shown) == 13 and shown[-1] == f"... and {len(logged) - 12} older commits"
    for line, entry in zip(shown[:-1], logged, strict=False):
        (short, subject), (sha, logged_subject) = line.split(" ", 1), entry.split(" ", 1)
        assert len(short) == 7 and sha.startswith(short) and subject == logged_subject
    completes = git(repo, "log", "--format=%h", "--grep=^hive: complete").split()
    assert len(completes) == 5
    files = git(repo, "show", "--name-only", "--format=", completes[0]).split()
    assert any(f.startswith(".hive/cells/") for f in files)  # the closed cell
    assert any(f.startswith(".hive/outcomes/") for f in files)  # its outcome
    assert any(f.startswith(".hive/reservations/") for f in files)  # the released reservation
    assert any(f.startswith(("app/", "docs/", "tests/")) for f in files)  # and the agent's code
    # the subtasks ran in parallel: more than one worker was running at a time
    lines = [
        line.split()[0] for line in out.splitlines() if line.startswith(("started", "completed"))
    ]
    assert lines[:3] == ["started"] * 3
    assert max(len(line) for line in out.splitlines()) < 200  # piped: no long rules
    assert_clean(repo)


def test_demo_json_and_removing_the_scratch_repository(tmp_path: Path) -> None:
    result = demo("--json")
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [event["event"] for event in events]
    assert kinds[0] == "demo_started" and kinds[-1] == "demo_finished"
    for kind in (
        "planned",
        "run_started",
        "worker_started",
        "run_finished",
        "board",
        "review",
        "log",
        "insights",
    ):
        assert kind in kinds
    root = events[0]["repository"]
    assert not os.path.exists(root)  # no --keep: the scratch repository is removed
    review_event = next(event for event in events if event["event"] == "review")
    assert any("app/api.py" in c["files_touched"] for c in review_event["cells"])


def test_demo_refuses_a_used_or_impossible_directory(hived: Path, tmp_path: Path) -> None:
    head = git(hived, "rev-parse", "HEAD")
    (tmp_path / "file").write_text("x")
    for target, message in (
        (hived, "not an empty directory"),
        (tmp_path / "file", "not an empty directory"),
        (tmp_path / "file" / "below", "cannot create it"),
    ):
        result = demo("--keep", str(target))
        assert result.returncode == 2
        assert result.stderr.startswith(f"error: --keep {target}: {message}")
        assert len(result.stderr.splitlines()) == 1
    assert git(hived, "rev-parse", "HEAD") == head


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["ready", "--json"], ["ready"]),
        (["-C", "/tmp", "--actor", "bob", "--json", "mail", "send"], ["mail"]),
        (["--actor=bob", "-C/tmp", "epic", "status"], ["epic"]),
        (["--help"], None),
        (["no-such-command"], None),
    ],
)
def test_the_cli_builds_only_the_command_it_runs(
    argv: list[str], expected: list[str] | None
) -> None:
    from hive.cli.main import app, focused_app

    focused = focused_app(argv)
    if expected is None:
        assert focused is app
        return
    names = [c.name or c.callback.__name__ for c in focused.registered_commands if c.callback]
    names += [g.name for g in focused.registered_groups if g.name]
    assert names == expected


def test_user_text_is_never_read_as_markup(hived: Path) -> None:
    created = hive(hived, "create", "close [/] tag :smile:")
    assert ok(created).strip().endswith("close [/] tag :smile:")
    cell = as_json(hive(hived, "create", "[red]alert", "--assignee", "[/]", "--json"))
    assert isinstance(cell, dict)
    listed = ok(hive(hived, "list"))
    assert "[red]alert" in listed and "[/]" in listed
    updated = ok(
        hive(hived, "update", cell["id"], "-s", "blocked", "--force", "--reason", "x", actor=None)
    )
    assert updated.strip() == f"updated {cell['id']}  [blocked] [red]alert"
    epic = ok(hive(hived, "epic", "create", "E [x]", "-s", "a [/b]"))
    assert "E [x]" in epic and "a [/b]" in epic
    epic_id = epic.split()[2]
    status = ok(hive(hived, "epic", "status", epic_id))
    assert status.splitlines()[0] == f"{epic_id}  E [x]  [open]"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show",), "Missing argument 'ID'. (see 'hive show --help')"),
        # TARGET is optional to the hive_dep tool (tree has none), never to add/remove
        (("dep", "add", "hv-x"), "Missing argument 'TARGET'. (see 'hive dep add --help')"),
        (("dep", "remove", "hv-x"), "Missing argument 'TARGET'. (see 'hive dep remove --help')"),
        (("no-such-command",), "No such command 'no-such-command'."),
        # a swarm verb is named as typed, not dashed (select_strategy is a spelling it takes)
        (("swarm", "select_stratgy"), "No such command 'select_stratgy'. Did you mean"),
        (("ready", "--bogus"), "No such option: --bogus"),
        # what other tools spell as commands is named as hive spells it
        (("help",), "No such command 'help': 'hive --help' lists the commands"),
        (("version",), "No such command 'version': 'hive --version' prints it"),
        # a title starting with '-' is read as options: the error says how to give it
        (
            ("create", "-fix the login"),
            "No such option: -f (see 'hive create --help'); a text starting with '-' goes"
            " after '--' (... -- \"-fix the login\")",
        ),
        # a group of one command (import, export): a file given first is named in full
        (
            ("import", "issues.jsonl"),
            "No such command 'issues.jsonl'. (see 'hive import --help'); did you mean"
            " 'hive import beads issues.jsonl'?",
        ),
        (
            ("export", "out file.jsonl"),
            "No such command 'out file.jsonl'. (see 'hive export --help'); did you mean"
            " 'hive export beads \"out file.jsonl\"'?",
        ),
        (("ready", "-n", "0"), "Invalid value for '--limit' / '-n'"),
        # an option without its value: click gives no context, the help is still named
        (("ready", "-n"), "Option '-n' requires an argument. (see 'hive ready --help')"),
        (
            ("mail", "send", "bob", "--to"),
            "Option '--to' requires an argument. (see 'hive mail send --help')",
        ),
    ],
)
def test_usage_errors_are_one_line_and_json_when_asked(
    hived: Path, args: tuple[str, ...], message: str
) -> None:
    plain = hive(hived, *args)
    assert plain.returncode == 2 and plain.stdout == ""
    assert len(plain.stderr.splitlines()) == 1
    assert plain.stderr.startswith(f"error: {message}")
    structured = hive(hived, "--json", *args)
    assert structured.returncode == 2
    payload = json.loads(structured.stdout)
    assert payload["code"] == "usage" and payload["error"].startswith(message)


def test_global_options_also_work_after_the_command(hived: Path, tmp_path: Path) -> None:
    cell = as_json(hive(hived, "create", "work", "--json"))
    assert isinstance(cell, dict)
    result = run_hive(
        ["ready", "--claim", "--actor", "zed", "-C", str(hived), "--json"],
        cwd=tmp_path,
        env=agent_env(hived, "zed"),
        module="hive.cli.main",
    )
    claimed = json.loads(ok(result))
    assert [(c["id"], c["assignee"]) for c in claimed] == [(cell["id"], "zed")]
    title = ok(hive(hived, "create", "--", "--actor"))
    assert title.strip().endswith("--actor")


def test_global_options_are_parsed_once_wherever_they_stand(tmp_path: Path) -> None:
    from hive.cli.entry import parse

    after = parse(["list", "-s", "open", "--actor=bo", f"-C{tmp_path}", "--json"])
    assert (after.command, after.args, after.actor, after.json) == (
        "list",
        ["-s", "open"],
        "bo",
        True,
    )
    assert after.directory == str(tmp_path)
    assert after.argv() == ["-C", str(tmp_path), "--actor", "bo", "--json", "list", "-s", "open"]
    before = parse(["-C", str(tmp_path), "dep", "add", "a", "b", "--actor", "x"])
    assert (before.command, before.args, before.actor) == ("dep", ["add", "a", "b"], "x")
    assert before.directory == after.directory
    kept = parse(["create", "t", "--", "--actor", "x", "-C", "y"])
    assert kept.args == ["t", "--", "--actor", "x", "-C", "y"] and kept.actor is None
    home = parse(["-C", "~", "ready"])
    assert home.directory == str(Path.home())


def test_dep_add_and_remove_echo_the_resolved_id(hived: Path) -> None:
    first = as_json(hive(hived, "create", "first", "--json"))
    second = as_json(hive(hived, "create", "second", "--json"))
    assert isinstance(first, dict) and isinstance(second, dict)
    partial = first["id"].split("-", 1)[1][:5]
    added = ok(hive(hived, "dep", "add", second["id"], partial))
    assert added.strip() == f"{second['id']} now depends on {first['id']} (blocks)"
    removed = ok(hive(hived, "dep", "remove", second["id"], partial))
    assert removed.strip() == f"{second['id']} no longer depends on {first['id']}"
    # one kind of two links to one cell: the blocker stays
    ok(hive(hived, "dep", "add", second["id"], first["id"], "--type", "related"))
    ok(hive(hived, "dep", "add", second["id"], first["id"]))
    unlinked = ok(hive(hived, "dep", "remove", second["id"], first["id"], "-t", "related"))
    assert unlinked.strip() == f"{second['id']} no longer depends on {first['id']} (related)"
    shown = as_json(hive(hived, "show", second["id"], "--json"))
    assert isinstance(shown, dict)
    assert shown["dependencies"] == [{"type": "blocks", "target": first["id"]}]


def test_the_quick_help_names_every_command_of_the_full_cli() -> None:
    from hive.cli.docs import render_command_table

    current = (Path(__file__).resolve().parent.parent / "hive/cli/commands.py").read_text()
    assert current == render_command_table(), "stale: run scripts/gen_cli_docs.sh"


def test_a_reader_that_goes_away_is_not_a_failure(hived: Path) -> None:
    """`hive show A B C | head -1` exited 1 (rich and click's way with a closed pipe),
    where `hive list | head -1` exits 0: a `set -o pipefail` script failed on it.
    (The writer is forked from the warm fork server and ends as a process ends:
    ``hive_command(..., finalize=True)``, tests/hivefork.py.)"""
    from tests.hivefork import hive_command

    lines = [json.dumps({"title": f"cell {n}", "description": "x" * 4000}) for n in range(60)]
    source = hived.parent / "many.jsonl"
    source.write_text("\n".join(lines) + "\n")
    created = as_json(hive(hived, "create", "--from", str(source), "--json"))
    assert isinstance(created, dict)
    ids = created["ids"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    for extra in ([], ["--json"]):  # 60 x 4 kB: more than a pipe holds
        reader = subprocess.Popen(
            hive_command(["-C", str(hived), "show", *ids, *extra], finalize=True),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert reader.stdout is not None and reader.stderr is not None
        assert reader.stdout.readline()
        reader.stdout.close()  # the reader goes away
        code = reader.wait(timeout=120)
        error = reader.stderr.read().decode()
        reader.stderr.close()
        assert code == 0, error
        assert error == ""


def test_a_reader_that_leaves_the_demo_is_not_an_internal_error(tmp_path: Path) -> None:
    """`hive demo | head -1` ended in 'internal error: BrokenPipeError' (its command is
    not a generated one, whose renderer handles a reader that went away). (Forked
    from the warm fork server, ending as a process ends: tests/hivefork.py.)"""
    from tests.hivefork import hive_command

    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env["TMPDIR"] = str(tmp_path)  # where the scratch repository is made
    reader = subprocess.Popen(
        hive_command(["demo"], finalize=True),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=tmp_path,
    )
    assert reader.stdout is not None and reader.stderr is not None
    assert "hive demo" in reader.stdout.readline().decode()
    reader.stdout.close()  # the reader goes away
    code = reader.wait(timeout=120)
    error = reader.stderr.read().decode()
    reader.stderr.close()
    assert (code, error) == (0, "")
    assert not list(tmp_path.glob("hive-demo-*"))  # removed all the same


def test_create_from_a_terminal_says_it_reads_standard_input(hived: Path) -> None:
    """'hive create --from -' typed at a terminal waited without a word."""
    said, out, code = at_a_terminal(
        hived, ["create", "--from", "-"], b"- title: typed at a terminal"
    )
    assert said.startswith("reading cells from standard input"), said
    assert code == 0 and out.startswith("created 1 cell"), out
    assert "typed at a terminal" in ok(hive(hived, "list", actor=None))
    piped = run_hive(["-C", str(hived), "create", "--from", "-"], input="- title: piped\n")
    assert piped.exit_code == 0 and "reading cells" not in piped.stderr


def test_the_options_quickstart_names_say_what_they_do(hived: Path) -> None:
    """``hive reservations --expired`` and ``hive list --deleted`` had no help text."""
    for command, option, meaning in (
        ("reservations", "--include-expired, --expired", "also those past their expiry"),
        ("list", "--include-deleted, --deleted", "also deleted cells"),
    ):
        shown = " ".join(ok(hive(hived, command, "--help", actor=None)).split())
        assert f"{option} {meaning}" in shown, shown


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"], ids=["entry", "full"])
def test_list_deleted_marks_the_deleted_cells(hived: Path, module: str) -> None:
    """``hive list --deleted`` showed a deleted cell as a plain open one (``hive show``
    says ``open (deleted)``); its title now starts with ``(deleted)``, the others not."""
    kept = as_json(hive(hived, "create", "Kept cell", "--json"))
    gone = as_json(hive(hived, "create", "Gone cell", "--json"))
    assert isinstance(kept, dict) and isinstance(gone, dict)
    ok(hive(hived, "delete", gone["id"], actor=None))
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    shown = ok(run_hive(["-C", str(hived), "list", "--deleted"], env=env, module=module))
    lines = {line.split()[0]: line for line in shown.splitlines()[1:]}
    assert lines[gone["id"]].endswith("(deleted) Gone cell"), shown
    assert lines[kept["id"]].endswith("  Kept cell"), shown
    plain = ok(run_hive(["-C", str(hived), "list"], env=env, module=module))
    assert gone["id"] not in plain and "(deleted)" not in plain
