"""hive swarm run: real worker processes (the example agent and misbehaving ones)."""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from hive.cli.swarm_view import describe, summary_lines
from hive.domain.cells import show_cell
from hive.domain.epics import create_epic
from hive.domain.identity import list_identities, register_agent, retire_agent
from hive.domain.outcomes import load_outcomes
from hive.domain.reservations import list_reservations
from hive.domain.swarm.review import review
from hive.domain.swarm.runner import run_directory, run_swarm, worker_environment
from hive.domain.workspace import Workspace
from hive.errors import Conflict, InvalidInput
from hive.models.swarm_run import SwarmEvent, SwarmRunResult
from hive.store.credentials import name_of_token
from tests.conftest import agent_env, assert_clean, git
from tests.hivefork import hive_command, module_command
from tests.inprocess import Forked, fork_hive, fork_on_terminal, run_hive

PYTHON = shlex.quote(sys.executable)
AGENT = f"{PYTHON} -m hive.agents.example {{prompt_file}}"


def shell_agent(extra: str = "") -> str:
    """The example agent as a command of a shell script (an agent command the runner
    cannot fork, unlike ``AGENT``): forked from the tests' warm fork server
    (tests/hivefork.py), a process of its own doing all the agent does, without a
    fresh interpreter's ~0.25 s of imports (a dozen of them here: what the runner does
    with a worker, not how fast Python starts, is tested). Not for a worker the runner
    kills: SIGKILL to the worker's process group would reach only the launcher."""
    argv = module_command("hive.agents.example", shlex.split(extra))
    return f"{shlex.join(argv)} {{prompt_file}}"


def shell_hive() -> str:
    """A shell function ``hive`` (to put before a shell script's own ``hive`` commands):
    ``hive ARGS`` forked from the tests' warm fork server (tests/hivefork.py), a process
    of its own with the script's environment, directory and streams, instead of a fresh
    interpreter (~0.3 s of CPU for a command of the full CLI). The ``hive`` on the
    worker's ``PATH`` is what test_a_shell_script_agent_using_the_hive_cli runs."""
    return f'hive() {{ {shlex.join(hive_command([]))} "$@"; }};'


def agent_cmd(extra: str = "", *, special: dict[str, str] | None = None) -> str:
    """The example agent; cells named in ``special`` run their own command instead
    (then the others run it from the shell script: ``shell_agent``)."""
    command = f"{PYTHON} -m hive.agents.example {extra} {{prompt_file}}"
    if not special:
        return command
    command = shell_agent(extra)
    cases = " ".join(f"{cell}) {cmd} ;;" for cell, cmd in special.items())
    return f'case "$HIVE_CELL" in {cases} *) {command} ;; esac'


def make_epic(ws: Workspace, subtasks: list[dict[str, Any]]) -> list[str]:
    cells = create_epic(
        ws, title="Build it", subtasks=subtasks, metadata={"strategy": "file-based"}
    )
    return [cell.id for cell in cells]


def run(
    ws: Workspace, epic: str, command: str = AGENT, **options: Any
) -> tuple[SwarmRunResult, list[SwarmEvent]]:
    events: list[SwarmEvent] = []
    result = run_swarm(ws, epic_id=epic, agent_cmd=command, on_event=events.append, **options)
    return result, events


def peak_concurrency(events: list[SwarmEvent]) -> int:
    running = peak = 0
    for event in events:
        if event.event == "worker_started":
            running += 1
            peak = max(peak, running)
        elif event.event == "worker_exited":
            running -= 1
    return peak


def files(count: int) -> list[dict[str, Any]]:
    return [{"title": f"Part {n}", "files": [f"src/part{n}.py"]} for n in range(count)]


def test_one_worker_runs_every_subtask_one_at_a_time(ws: Workspace, repo: Path) -> None:
    epic, *subtasks = make_epic(ws, files(3))
    result, events = run(ws, epic, workers=1)
    assert result.finished and sorted(result.completed) == sorted(subtasks)
    assert peak_concurrency(events) == 1
    assert next(e.event for e in events) == "run_started" and events[-1].event == "run_finished"
    # each worker's progress reports are told before its completion, not after it
    for done in (n for n, e in enumerate(events) if e.event == "completed"):
        said = [
            n
            for n, e in enumerate(events)
            if e.event == "message" and e.agent == events[done].agent
        ]
        assert said and max(said) < done
    for cell in subtasks:
        assert show_cell(ws, cell_id=cell).status == "closed"
    # each subtask's code landed in its own swarm_complete commit
    completes = git(repo, "log", "--format=%H", "--grep=^hive: complete").split()
    assert len(completes) == 3
    for sha in completes:
        changed = git(repo, "show", "--name-only", "--format=", sha).split()
        assert any(path.startswith("src/part") for path in changed)
    assert "def part_" in (repo / "src/part0.py").read_text()
    assert list_reservations(ws) == []
    assert_clean(repo)


def test_three_workers_run_in_parallel(ws: Workspace, repo: Path) -> None:
    epic, *_subtasks = make_epic(ws, files(3))
    result, events = run(ws, epic, agent_cmd("--pace 0.4"), workers=3)
    assert result.finished and len(result.completed) == 3
    assert peak_concurrency(events) == 3
    agents = {e.agent for e in events if e.event == "worker_started"}
    assert len(agents) == 3  # one identity per worker
    assert_clean(repo)


def test_eight_workers(ws: Workspace, repo: Path) -> None:
    epic, *subtasks = make_epic(ws, files(8))
    result, events = run(ws, epic, agent_cmd("--pace 0.5"), workers=8)
    assert result.finished and sorted(result.completed) == sorted(subtasks)
    assert peak_concurrency(events) == 8
    outcomes = [o for o in load_outcomes(ws) if o.cell_id in subtasks]
    assert len(outcomes) == 8 and all(o.success for o in outcomes)
    assert_clean(repo)


def test_dependencies_are_respected(ws: Workspace, repo: Path) -> None:
    epic, a, b, c, d = make_epic(
        ws,
        [
            {"title": "Base", "files": ["src/base.py"]},
            {"title": "Left", "files": ["src/left.py"], "dependencies": [0]},
            {"title": "Right", "files": ["src/right.py"], "dependencies": [0]},
            {"title": "Top", "files": ["src/top.py"], "dependencies": [1, 2]},
        ],
    )
    result, _events = run(ws, epic, workers=4)
    assert result.finished
    history = git(repo, "log", "--reverse", "--format=%s").splitlines()

    def at(verb: str, cell: str) -> int:
        return next(n for n, line in enumerate(history) if line.startswith(f"hive: {verb} {cell} "))

    # a subtask is claimed for its worker only after its blockers were completed
    assert at("start", b) > at("complete", a) and at("start", c) > at("complete", a)
    assert at("start", d) > max(at("complete", b), at("complete", c))


def test_failing_crashing_and_silent_workers_block_their_cells(ws: Workspace, repo: Path) -> None:
    epic, fails, crashes, silent, fine, after, killed, missing = make_epic(
        ws,
        [
            {"title": "Fails", "files": ["src/fails.py"]},
            {"title": "Crashes", "files": ["src/crash.py"]},
            {"title": "Silent", "files": ["src/silent.py"]},
            {"title": "Fine", "files": ["src/fine.py"]},
            {"title": "After", "files": ["src/after.py"], "dependencies": [0]},
            {"title": "Killed", "files": ["src/killed.py"]},
            {"title": "Missing", "files": ["src/missing.py"]},
        ],
    )
    command = agent_cmd(
        special={
            fails: shell_agent("--fail"),
            crashes: "echo crashing now; kill -9 $$",
            silent: "echo did nothing",
            killed: "sh -c 'kill -9 $$'",  # the agent's process, not the worker's shell
            missing: "no-such-agent-program-here",
        }
    )
    result, events = run(ws, epic, command, workers=3)
    assert not result.finished and result.completed == [fine]
    assert set(result.blocked) == {fails, crashes, silent, killed, missing}
    assert "code 137 (the shell's code for a command killed by SIGKILL)" in result.blocked[killed]
    assert "code 127 (the shell's code for a command not found" in result.blocked[missing]
    assert result.remaining == [after]  # waits for the failed one
    assert "exited with code 1 without calling swarm_complete" in result.blocked[fails]
    # what the failed worker left uncommitted in the shared tree is named and kept
    assert "uncommitted changes left in the working tree: src/fails.py" in result.blocked[fails]
    assert (repo / "src/fails.py").exists()
    assert "uncommitted changes" not in result.blocked[silent]
    assert "killed by signal SIGKILL" in result.blocked[crashes]
    assert "exited (code 0) without calling swarm_complete" in result.blocked[silent]
    # the last line the worker wrote says why, without opening its log
    assert result.blocked[crashes].endswith("; its log ends: crashing now")
    assert result.blocked[silent].endswith("; its log ends: did nothing")
    assert "its log ends: " in result.blocked[missing] and "not found" in result.blocked[missing]
    outcomes = {o.cell_id: o for o in load_outcomes(ws)}
    for cell in (fails, crashes, silent):
        stored = show_cell(ws, cell_id=cell)
        assert stored.status == "blocked"
        log = stored.metadata["swarm_run"]["log"]
        assert log in stored.notes and os.path.isfile(log)  # the log is linked from the cell
        assert not outcomes[cell].success and outcomes[cell].source == "swarm_run"
        assert outcomes[cell].summary == result.blocked[cell]
    assert outcomes[fails].files_touched == ["src/fails.py"]
    crash_log = show_cell(ws, cell_id=crashes).metadata["swarm_run"]["log"]
    assert "crashing now" in Path(crash_log).read_text()
    fail_log = Path(show_cell(ws, cell_id=fails).metadata["swarm_run"]["log"]).read_text()
    assert "swarmmail_reserve ok" in fail_log and "failing on purpose" in fail_log
    assert list_reservations(ws) == []  # the failed agent's reservation was released
    # the block, the release and the outcome are one commit
    block = git(repo, "log", "-1", "--format=%H", f"--grep=^hive: block {fails}").strip()
    changed = git(repo, "show", "--name-only", "--format=", block).split()
    assert any(p.startswith(".hive/reservations/") for p in changed)
    assert any(p.startswith(".hive/outcomes/") for p in changed)
    assert any(p.endswith(f"{fails}.yaml") for p in changed)
    # ...made by the runner (alice), naming the worker it settles
    worker = show_cell(ws, cell_id=fails).assignee
    message = git(repo, "show", "-s", "--format=%an%n%B", block)
    assert message.startswith("alice\n") and "Hive-Agent: alice" in message
    assert f"Hive-Worker: {worker}" in message
    assert [e.event for e in events].count("blocked") == 5


def test_scope_violation_shows_in_outcome_and_review(ws: Workspace, repo: Path) -> None:
    epic, honest, sneaky = make_epic(
        ws,
        [
            {"title": "Honest", "files": ["src/honest.py"]},
            {"title": "Sneaky", "files": ["src/s.py"]},
        ],
    )
    # In the shared working tree, honest also edits README.md, which it did not reserve,
    # and leaves it; sneaky (waiting for that edit) commits README.md as its own. The
    # run says that sneaky's commit carries a file outside its scope while honest worked
    # in the same tree.
    sneak = f"{PYTHON} -m hive.agents.example --also-edit README.md {{prompt_file}}"
    command = agent_cmd(
        special={
            honest: f"echo 'from honest' >> README.md && echo n > notes.txt && {shell_agent()}",
            sneaky: f"until grep -q 'from honest' README.md; do sleep 0.05; done; {sneak}",
        }
    )
    (repo / "mine.txt").write_text("there before the run\n")
    result, events = run(ws, epic, command, workers=2)
    assert result.finished
    # what a worker left uncommitted (not what was there before) is named at the end
    assert result.left_uncommitted == ["notes.txt"] and events[-1].files == ["notes.txt"]
    assert any("left uncommitted" in line and "notes.txt" in line for line in summary_lines(result))
    agents = {e.cell_id: e.agent for e in events if e.event == "worker_started"}
    done = {e.cell_id: e for e in events if e.event == "completed"}
    assert done[sneaky].files == ["README.md"] and done[honest].files is None
    note = (
        f"its commit carries README.md, outside its subtask's files and reservations, while"
        f" {agents[honest]} worked in the same working tree: they may hold their edits"
        f" (see 'hive review {sneaky}')"
    )
    assert done[sneaky].reason == note and done[honest].reason is None
    assert f"  check {sneaky}: {note}" in summary_lines(result)
    carried = git(repo, "log", "-1", "--format=%s", "--", "README.md").strip()
    assert carried.startswith(f"hive: complete {sneaky} ")
    assert "from honest" in git(repo, "show", "HEAD:README.md")
    outcomes = {o.cell_id: o for o in load_outcomes(ws)}
    assert outcomes[sneaky].scope_violations == ["README.md"]
    assert outcomes[honest].scope_violations == []
    seen = {c.cell_id: c for c in review(ws, target=epic, with_patch=False).cells}
    assert seen[sneaky].scope_violations == ["README.md"]
    cli = run_hive(["-C", str(repo), "review", sneaky, "--stat"], module="hive.cli.main")
    assert cli.exit_code == 0 and "outside scope: README.md" in cli.output


def test_subtasks_assigned_to_one_agent_run_one_after_the_other(ws: Workspace, repo: Path) -> None:
    # Each worker of an assigned subtask gets a fresh credential of its assignee: two at
    # once would cut the first off (its credential re-issued under it), so the second
    # waits for the first.
    from hive.domain.cells import update_cells

    epic, *subtasks = make_epic(ws, files(2))
    person = Workspace(str(repo), from_env=False)
    update_cells(person, cell_ids=subtasks, assignee="Solo")
    result, events = run(person, epic, workers=2)
    assert result.finished, result.blocked
    assert peak_concurrency(events) == 1
    assert {e.agent for e in events if e.event == "worker_started"} == {"Solo"}


def test_a_worker_s_own_git_commit_shows_in_the_review_of_its_subtask(
    ws: Workspace, repo: Path
) -> None:
    # In the shared working tree a worker commits part of its work itself with git, as
    # an agent would, then completes: the commit-msg hook (hive hooks install) gives
    # that commit its subtask's Hive-Cell trailer, so 'hive review' shows it there.
    from hive.domain.hooks import install_hook

    install_hook(ws)
    epic, cell, other = make_epic(
        ws, [{"title": "Own", "files": ["src/own.py"]}, {"title": "Other", "files": ["src/o.py"]}]
    )
    own = (
        "mkdir -p src && echo 'OWN = 1' > src/own.py && git add src/own.py"
        " && git -c user.name=w -c user.email=w@example.com commit -qam 'my own commit'"
        f" && {shell_agent()}"
    )
    result, _events = run(ws, epic, agent_cmd(special={cell: own}), workers=1)
    assert result.finished, result.blocked
    assert result.hooks_missing == [] and result.hooks_note is None
    mine = git(repo, "log", "-1", "--format=%H", "--grep=^my own commit").strip()
    trailer = git(repo, "log", "-1", "--format=%(trailers:key=Hive-Cell,valueonly)", mine)
    assert trailer.strip() == cell
    assert mine in [c.sha for c in review(ws, target=cell).commits]
    assert mine not in [c.sha for c in review(ws, target=other).commits]
    shown = run_hive(["-C", str(repo), "review", cell, "--stat"], module="hive.cli.main")
    assert shown.returncode == 0 and "my own commit" in shown.stdout, shown.stdout


def test_a_hanging_worker_is_killed_at_the_timeout(ws: Workspace, repo: Path) -> None:
    epic, hangs = make_epic(ws, [{"title": "Hangs", "files": ["src/h.py"]}])
    marker = repo.parent / "child.pid"
    command = f"sh -c 'sleep 600 & echo $! > {marker}; wait'"
    started = time.monotonic()
    result, _events = run(ws, epic, command, timeout=1.0, grace=1.0)
    # killed at the timeout, not waited out: well under the worker's 600 s, with room for
    # a loaded machine
    assert time.monotonic() - started < 120
    assert "timed out after 1s" in result.blocked[hangs]
    child = int(marker.read_text())
    assert _gone([child])  # the whole process group was killed
    outcome = next(o for o in load_outcomes(ws) if o.cell_id == hangs)
    assert not outcome.success and "timed out" in outcome.summary
    assert_clean(repo)


def test_worktree_isolation_merges_each_branch(ws: Workspace, repo: Path) -> None:
    epic, _one, two, three = make_epic(
        ws,
        [
            {"title": "One", "files": ["src/one.py"]},
            {"title": "Two", "files": ["README.md"]},
            {"title": "Three", "files": ["src/three.py"], "dependencies": [0]},
        ],
    )
    result, events = run(ws, epic, agent_cmd("--pace 0.2"), workers=2, isolation="worktree")
    assert result.finished, result.blocked
    starts = [e for e in events if e.event == "worker_started"]
    assert all(e.worktree and e.branch for e in starts)
    assert all(not e.worktree.startswith(str(repo) + "/src") for e in starts if e.worktree)
    assert git(repo, "rev-list", "--merges", "--count", "HEAD").strip() == "3"
    assert "def one" in (repo / "src/one.py").read_text()
    assert "## Two" in (repo / "README.md").read_text()
    # the dependent subtask started from a branch that already had its blocker's code
    three_start = next(e for e in starts if e.cell_id == three)
    assert three_start.branch is not None
    assert git(repo, "worktree", "list").count("\n") == 1  # worktrees removed
    assert "hive/" not in git(repo, "branch", "--list")  # merged branches deleted
    assert show_cell(ws, cell_id=two).status == "closed"
    assert_clean(repo)


def test_worktree_merge_conflict_blocks_the_cell_and_merges_nothing(
    ws: Workspace, repo: Path
) -> None:
    (repo / "src").mkdir()
    (repo / "src/shared.py").write_text("VALUE = 1\n")
    git(repo, "add", "src/shared.py")
    git(repo, "commit", "-qm", "shared file")
    # Overlapping reservations are refused across worktrees, so both workers edit the
    # shared file outside their (disjoint) reservations: their branches conflict.
    epic, _first, _second = make_epic(
        ws,
        [
            {"title": "First edit", "files": ["src/first.py"]},
            {"title": "Second edit", "files": ["src/second.py"]},
        ],
    )
    command = agent_cmd("--pace 0.3 --also-edit src/shared.py")
    result, events = run(ws, epic, command, workers=2, isolation="worktree")
    assert len(result.completed) == 1 and len(result.blocked) == 1
    loser = next(iter(result.blocked))
    reason = result.blocked[loser]
    assert (
        "merge conflict" in reason and "src/shared.py" in reason and "nothing was merged" in reason
    )
    text = (repo / "src/shared.py").read_text()
    assert "<<<<<<<" not in text and text.count("def ") == 1  # only the winner's change
    assert git(repo, "status", "--porcelain") == ""
    assert git(repo, "ls-files", "--unmerged") == ""
    blocked = next(e for e in events if e.event == "blocked")
    assert blocked.files == ["src/shared.py"] and blocked.branch
    assert blocked.worktree and os.path.isdir(blocked.worktree)  # kept to resolve by hand
    assert blocked.branch in git(repo, "branch", "--list")
    outcome = next(o for o in load_outcomes(ws) if o.cell_id == loser)
    assert not outcome.success and "merge conflict" in outcome.summary
    assert_clean(repo)


def test_the_worker_environment() -> None:
    env = worker_environment(
        agent="BlueLake",
        cell_id="hv-a.b",
        epic_id="hv-a",
        project="/p",
        prompt_file="/f",
        session="s",
        log="/l",
        token="secret",
        base={"HIVE_BYPASS": "1", "PATH": "/usr/bin", "HIVE_AGENT_TOKEN": "stale", "KEEP": "x"},
    )
    assert env["HIVE_AGENT"] == "BlueLake" and env["HIVE_CELL"] == "hv-a.b"
    assert env["HIVE_PROJECT"] == "/p" and env["HIVE_PROMPT_FILE"] == "/f"
    assert env["HIVE_AGENT_TOKEN"] == "secret" and env["KEEP"] == "x"
    assert "HIVE_BYPASS" not in env
    assert env["PATH"].split(os.pathsep)[0] == os.path.dirname(sys.executable)
    assert "HIVE_AGENT_TOKEN" not in worker_environment(
        agent="A",
        cell_id="c",
        epic_id="e",
        project="/p",
        prompt_file="/f",
        session="s",
        log="/l",
        base={"HIVE_AGENT_TOKEN": "someone else's"},
    )


def test_workers_get_their_identity_and_brief(ws: Workspace, repo: Path) -> None:
    epic, cell = make_epic(ws, [{"title": "Look around", "files": ["src/x.py"]}])
    dump = repo.parent / "env.json"
    script = (
        "import json, os, sys; json.dump({'env': dict(os.environ), 'cwd': os.getcwd(),"
        f" 'brief': open(sys.argv[1]).read()}}, open({str(dump)!r}, 'w'))"
    )
    command = f"{PYTHON} -c {shlex.quote(script)} {{prompt_file}}"
    result, events = run(ws, epic, command)
    seen = json.loads(dump.read_text())
    started = next(e for e in events if e.event == "worker_started")
    assert seen["env"]["HIVE_AGENT"] == started.agent
    # ...proven by the credential the runner issued (the hash is in the store)
    issued = seen["env"]["HIVE_AGENT_TOKEN"]
    assert name_of_token(ws.git.paths.hive_state_dir, issued) == started.agent
    assert issued not in (repo / ".git" / "hive" / "identities.json").read_text()
    assert seen["env"]["HIVE_CELL"] == cell and seen["env"]["HIVE_EPIC"] == epic
    assert seen["env"]["HIVE_PROJECT"] == str(repo) and seen["cwd"] == str(repo)
    assert f"# Subtask {cell}: Look around" in seen["brief"] and "swarm_complete" in seen["brief"]
    assert started.agent in seen["brief"]
    assert result.blocked[cell].endswith("exited (code 0) without calling swarm_complete")


def test_bad_options_and_a_second_runner_are_refused(ws: Workspace, repo: Path) -> None:
    from filelock import FileLock

    epic, _ = make_epic(ws, files(1))
    for options, message in (
        ({"workers": 0}, "--workers"),
        ({"isolation": "docker"}, "invalid isolation"),
        ({"timeout": 0}, "--timeout"),
        ({"agent_cmd": " "}, "--agent-cmd is empty"),
    ):
        with pytest.raises(InvalidInput, match=message):
            run_swarm(ws, epic_id=epic, **{"agent_cmd": AGENT, **options})
    with (
        FileLock(os.path.join(run_directory(ws, epic), "run.lock")),
        pytest.raises(Conflict, match="already working"),
    ):
        run_swarm(ws, epic_id=epic, agent_cmd=AGENT)
    assert show_cell(ws, cell_id=epic).status == "open"


def test_json_events_and_exit_codes_through_the_cli(ws: Workspace, repo: Path) -> None:
    epic, _ok_cell, bad_cell = make_epic(ws, files(2))
    command = agent_cmd(special={bad_cell: "exit 3"})
    done = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", command, "--json"],
        module="hive.cli.main",
    )
    assert done.returncode == 1, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "run_started" and events[-1]["event"] == "run_finished"
    assert events[-1]["totals"] == {
        "subtasks": 2,
        "completed": 1,
        "blocked": 1,
        "remaining": 0,
        "workers_run": 2,
    }
    blocked = next(e for e in events if e["event"] == "blocked")
    assert blocked["cell_id"] == bad_cell and "exited with code 3" in blocked["reason"]
    plain = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", command], module="hive.cli.main"
    )
    assert plain.returncode == 1 and f"blocked {bad_cell}: worker" in plain.stdout
    # the retry the run suggests works as printed (the cell is still its worker's)
    hint = next(line for line in plain.stdout.splitlines() if "hive update" in line)
    retry = shlex.split(hint[hint.index("hive update") :].split(" # ")[0])
    assert retry[:2] == ["hive", "update"] and bad_cell in retry
    reopened = run_hive(["-C", str(repo), *retry[1:]], module="hive.cli.main")
    assert reopened.returncode == 0, reopened.stderr
    assert show_cell(ws, cell_id=bad_cell).status == "open"
    # an ordinary agent's run cannot re-issue the worker's credential: it says who can
    by_agent = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", AGENT],
        module="hive.cli.main",
        env=agent_env(repo, "Helper"),
    )
    assert by_agent.returncode == 1 and show_cell(ws, cell_id=bad_cell).status == "open"
    worker = show_cell(ws, cell_id=bad_cell).assignee
    assert (
        f"not run: {bad_cell}: it is assigned to {worker}, whose credential only a person"
        " or a coordinator may re-issue for its worker (this run acts as agent Helper): run"
        " 'hive swarm run' again as a person (without HIVE_AGENT_TOKEN)"
    ) in " ".join(by_agent.stdout.split())
    again = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", AGENT], module="hive.cli.main"
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert show_cell(ws, cell_id=bad_cell).status == "closed"


def test_a_run_on_a_terminal_draws_its_live_view_then_the_summary(
    ws: Workspace, repo: Path
) -> None:
    """On a terminal, hive swarm run draws the live table of the epic's subtasks (not
    the plain event lines) and then prints the summary; the work is done all the same."""
    epic, *subtasks = make_epic(ws, files(2))
    code, seen = fork_on_terminal(["-C", str(repo), "swarm", "run", epic, "--agent-cmd", AGENT])
    text = seen.decode(errors="replace")
    assert code == 0, text
    assert "SUBTASK" in text and "Build it" in text  # the live table and its epic title
    assert f"{epic}: 2/2 subtasks completed" in text
    assert [show_cell(ws, cell_id=cell).status for cell in subtasks] == ["closed", "closed"]
    assert_clean(repo)


def _start_runner(repo: Path, epic: str, command: str, workers: int) -> Forked:
    """``hive swarm run --json`` as a process of its own, forked from this one (the CLI's
    imports are here already)."""
    argv = ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", command]
    return fork_hive([*argv, "--workers", str(workers), "--json"], module="hive.cli.main")


def _wait_for_starts(runner: Forked, count: int) -> list[dict[str, Any]]:
    """Events up to the ``count``-th worker_started (read from the runner's stdout)."""
    deadline = time.monotonic() + 60
    while True:
        seen = [
            json.loads(line)
            for line in runner.stdout_so_far().splitlines(keepends=True)
            if line.endswith("\n")
        ]
        if sum(e["event"] == "worker_started" for e in seen) >= count:
            return seen
        assert runner.poll() is None, runner.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Running (a zombie waiting for init to reap it is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state not in ("Z", "X")


def _gone(pids: list[int]) -> bool:
    """Has every process of ``pids`` ended (it was killed; a process this one did not
    start ends on its own time, which a loaded machine makes long: a minute at most)?"""
    deadline = time.monotonic() + 60
    while any(_alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_ctrl_c_stops_the_workers_and_a_second_run_resumes(ws: Workspace, repo: Path) -> None:
    epic, *subtasks = make_epic(ws, files(4))
    runner = _start_runner(repo, epic, agent_cmd("--pace 3"), 2)
    _wait_for_starts(runner, 2)
    os.kill(runner.pid, signal.SIGINT)
    out, err = runner.communicate(timeout=60)
    assert runner.returncode == 130, err
    # not the bare word: the run says what to do (with --json, on stderr)
    assert err.splitlines()[-1:] == [
        "hive swarm run: interrupted; run the same command again to resume"
    ]
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["event"] for e in events]
    assert "interrupted" in kinds and kinds.count("requeued") == 2 and kinds[-1] == "run_finished"
    pids = [e["pid"] for e in events if e["event"] == "worker_started"]
    assert not any(_alive(pid) for pid in pids)
    for cell in subtasks:  # nothing left claimed: all open, nobody assigned
        stored = show_cell(ws, cell_id=cell)
        assert stored.status == "open" and stored.assignee is None
    assert list_reservations(ws) == []
    assert git(repo, "status", "--porcelain", "--", ".hive") == ""
    assert_fsck(repo)
    again = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", AGENT, "--workers", "4"],
        module="hive.cli.main",
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert all(show_cell(ws, cell_id=cell).status == "closed" for cell in subtasks)
    # the stopped subtasks resumed as the agents that worked them: no new name for them
    first = {e["cell_id"]: e["agent"] for e in events if e["event"] == "worker_started"}
    assert {cell: show_cell(ws, cell_id=cell).assignee for cell in first} == first
    assert len({c.name for c in list_identities(ws) if c.credential}) == 4
    assert "interrupted" not in again.stderr
    assert again.stdout.count("; again: its last worker was stopped\n") == 2  # the resumed


def test_a_killed_runner_is_recovered_by_the_next_run(ws: Workspace, repo: Path) -> None:
    epic, *subtasks = make_epic(ws, files(2))
    runner = _start_runner(repo, epic, agent_cmd("--pace 5"), 2)
    seen = _wait_for_starts(runner, 2)
    os.kill(runner.pid, signal.SIGKILL)  # no chance to clean up: the workers live on
    runner.communicate(timeout=120)
    assert runner.returncode == -signal.SIGKILL
    pids = [e["pid"] for e in seen if e["event"] == "worker_started"]
    assert all(show_cell(ws, cell_id=cell).status == "in_progress" for cell in subtasks)
    result, events = run(ws, epic, workers=2)
    assert result.finished
    assert [e.event for e in events].count("resumed") == 2
    assert _gone(pids)  # the leftover workers were stopped
    assert_clean(repo)


def test_stop_event_requeues_in_process(ws: Workspace, repo: Path) -> None:
    epic, *subtasks = make_epic(ws, files(2))
    stop = threading.Event()
    events: list[SwarmEvent] = []

    def watch(event: SwarmEvent) -> None:
        events.append(event)
        if event.event == "worker_started" and len(events) > 2:
            stop.set()

    result = run_swarm(
        ws,
        epic_id=epic,
        agent_cmd=agent_cmd("--pace 3"),
        workers=2,
        on_event=watch,
        stop=stop,
        isolation="worktree",
    )
    assert result.interrupted and not result.completed
    assert sorted(result.remaining) == sorted(subtasks)
    assert git(repo, "worktree", "list").count("\n") == 1  # interrupted worktrees removed
    assert_clean(repo)
    # Resuming as the same agent is not safe when its name was retired meanwhile (on
    # purpose), or registered by someone else since (re-issuing would cut them off):
    # those subtasks go to new names, and the holder's credential still works.
    first = {e.cell_id: str(e.agent) for e in events if e.event == "worker_started"}
    retired, taken = (first[cell] for cell in subtasks)
    person = Workspace(str(repo), from_env=False)
    retire_agent(person, name=retired, reason="stopped for good")
    holder = register_agent(person, name=taken, replace=True, session="someone-else").token
    again, more = run(person, epic, workers=2)
    assert again.finished
    second = {e.cell_id: e.agent for e in more if e.event == "worker_started"}
    assert not set(second.values()) & {retired, taken}
    assert name_of_token(ws.git.paths.hive_state_dir, str(holder)) == taken


def assert_fsck(repo: Path) -> None:
    fsck = subprocess.run(
        ["git", "-C", str(repo), "fsck", "--strict"], capture_output=True, text=True, check=False
    )
    assert fsck.returncode == 0, fsck.stderr


def test_a_shell_script_agent_using_the_hive_cli(ws: Workspace, repo: Path) -> None:
    """The script from docs/agents.md, as the page writes it (its ``./do-the-work.sh``
    committed, as the page says): identity from the environment the runner sets
    (``hive`` is the console script of this environment: the runner puts it on PATH)."""
    import re

    page = (Path(__file__).parent.parent / "docs" / "agents.md").read_text()
    (text,) = re.findall(r"^cat > work\.sh <<'EOF'\n(.*?)^EOF$", page, re.S | re.M)
    assert "./do-the-work.sh" in text and "--files-touched src/feature/a.py" in text
    epic, cell = make_epic(ws, [{"title": "Do A", "files": ["src/feature/**"]}])
    script = repo.parent / "work.sh"
    script.write_text(text)
    work = repo / "do-the-work.sh"
    work.write_text("#!/bin/sh\nmkdir -p src/feature && echo 'x = 1' > src/feature/a.py\n")
    work.chmod(0o755)
    git(repo, "add", "do-the-work.sh")
    git(repo, "commit", "-q", "-m", "the work")
    result, events = run(ws, epic, f"sh {script} {{prompt_file}}")
    assert result.finished, result.blocked
    agent = next(e.agent for e in events if e.event == "worker_started")
    outcome = next(o for o in load_outcomes(ws) if o.cell_id == cell)
    assert outcome.agent == agent and outcome.files_touched == ["src/feature/a.py"]
    assert outcome.files_reserved == ["src/feature/**"] and outcome.scope_violations == []
    assert any(e.event == "message" and e.agent == agent for e in events)
    assert_clean(repo)


def test_summary_lines_tell_everything_a_run_left_in_order() -> None:
    """What a person is told when a run is over, every kind of line at once: the count,
    the epic, the blocked and how to retry them, the commits to check, what is left
    uncommitted, the hooks, the kept worktrees, and what was not run and why."""
    from hive.models.swarm_run import KeptWorktree, WorkerRun

    def ran(cell: str, result: Any, reason: str | None = None, **more: Any) -> WorkerRun:
        return WorkerRun(cell_id=cell, agent="w", result=result, log="l", reason=reason, **more)

    result = SwarmRunResult(
        epic_id="hv-e",
        title="E",
        isolation="worktree",
        workers=2,
        completed=["hv-e.1"],
        blocked={"hv-e.2": "exited (code 1)", "hv-e.3": "timed out"},
        remaining=["hv-e.4", "hv-e.5", "hv-e.6", "hv-e.7"],
        waiting={"hv-e.4": ["hv-e.2", "hv-x"]},
        blocker_status={"hv-e.2": "blocked"},
        skipped={"hv-e.5": "left unsettled", "hv-e.6": "claimed by bob", "hv-e.4": "waits"},
        runs=[
            ran("hv-e.1", "completed", "its commit took a.py", outside_scope=["a.py"]),
            ran("hv-e.8", "completed", None, outside_scope=["b.py"]),
            ran("hv-e.5", "unsettled"),
        ],
        epic_status="open",
        epic_note="left open: 2 subtasks blocked",
        kept_worktrees=[
            KeptWorktree(
                worktree="/w/1",
                branch="b1",
                why="of closed hv-e.9",
                files=["x", "y"],
                command="git worktree remove --force /w/1",
            ),
            KeptWorktree(worktree="/w/2", why="an earlier attempt's", files=["z"], command="rm"),
        ],
        left_uncommitted=["n.txt", "m.txt"],
        hooks_note="the pre-commit hook is missing",
    )
    assert summary_lines(result) == [
        "hv-e: 1/7 subtasks completed",
        "  epic hv-e left open: 2 subtasks blocked",
        "  blocked hv-e.2: exited (code 1)",
        "  blocked hv-e.3: timed out",
        "  to retry, fix the cause, reopen and run the same command again:",
        "    hive update hv-e.2 hv-e.3 --status open --force --reason 'retry'",
        "  (a subtask resumes in the worktree kept for it, on its branch: remove both with"
        " 'git worktree remove --force PATH' and 'git branch -D BRANCH' to start it afresh)",
        "  check hv-e.1: its commit took a.py",
        "  left uncommitted in the working tree by this run's workers (the next commit that"
        " takes them carries them as its own): n.txt, m.txt; commit or discard them"
        " ('git diff', 'git status')",
        "  note: the pre-commit hook is missing",
        "  kept: of closed hv-e.9, /w/1 on branch b1, holds work found nowhere else: x, y",
        "    look at it, then remove it: git worktree remove --force /w/1",
        "  kept: an earlier attempt's, /w/2, holds work found nowhere else: z",
        "    look at it, then remove it: rm",
        "  not run: hv-e.4 waits for hv-e.2 (blocked), hv-x (open)",
        "  ran: hv-e.5: left unsettled",
        "  not run: hv-e.6: claimed by bob",
        "  not run: hv-e.7 (see 'hive show ID')",
    ]
    stopped = result.model_copy(
        update={"interrupted": True, "isolation": "reservation", "epic_status": "closed"}
    )
    assert summary_lines(stopped) == [
        "hv-e: 1/7 subtasks completed (interrupted: run the same command again to resume)",
        "  epic hv-e closed: left open: 2 subtasks blocked",
        *summary_lines(result)[2:6],
        *summary_lines(result)[7:14],
    ]  # no worktree advice, and nothing about what was not run: the run resumes
    quiet = SwarmRunResult(epic_id="hv-e", title="E", isolation="worktree", workers=1)
    assert summary_lines(quiet) == ["hv-e: 0/0 subtasks completed"]


def test_the_live_view_and_the_plain_lines_show_the_events() -> None:
    from io import StringIO

    from rich.console import Console

    from hive.cli.swarm_view import LiveView, describe
    from hive.models.swarm_run import SubtaskState

    view = LiveView()
    for event in (
        SwarmEvent(
            event="run_started",
            epic_id="hv-e",
            title="Epic",
            settings={"workers": 2, "isolation": "reservation"},
            subtasks=[
                SubtaskState(id="hv-e.a", title="A", status="open"),
                SubtaskState(id="hv-e.b", title="B", status="open"),
            ],
        ),
        SwarmEvent(event="worker_started", cell_id="hv-e.a", agent="BlueLake", pid=42),
        SwarmEvent(event="reservations", reservations=[{"agent": "BlueLake", "path": "src/a.py"}]),
        SwarmEvent(
            event="message",
            message={
                "from": "BlueLake",
                "subject": "progress hv-e.a",
                "body": "[2026-01-01 10:00Z] in_progress - 50% - halfway",
            },
        ),
        SwarmEvent(event="blocked", cell_id="hv-e.b", agent="RedStone", reason="worker exploded"),
    ):
        view(event)
    screen = StringIO()
    Console(file=screen, width=150, color_system=None).print(view.render())
    text = screen.getvalue()
    assert "hv-e.a" in text and "in_progress" in text and "BlueLake" in text and "running" in text
    assert "blocked" in text and "worker exploded" in text
    assert "reservations: BlueLake src/a.py" in text
    assert "BlueLake: progress hv-e.a - in_progress - 50% - halfway" in text
    assert "0/2 done, 1 of 2 workers busy" in text
    # on a narrow terminal a long reason is cut, not the subtask's id or its agent
    long = "the run was stopped before it finished; its work is kept in worktree /x/y/z"
    view(SwarmEvent(event="requeued", cell_id="hv-e.b", agent="RedStone", reason=long))
    screen = StringIO()
    Console(file=screen, width=60, color_system=None).print(view.render())
    rows = [row for row in screen.getvalue().splitlines() if row.startswith("hv-e.")]
    assert rows[0].split()[:3] == ["hv-e.a", "in_progress", "BlueLake"]
    assert rows[1].split()[:2] == ["hv-e.b", "open"] and "the run was" in rows[1]
    line = describe(SwarmEvent(event="blocked", cell_id="hv-e.b", reason="why", log="/l"))
    assert line == "blocked   hv-e.b: why (log: /l)"
    for kind, word in (("worktree_kept", "kept     "), ("worktree_removed", "removed  ")):
        tidy = SwarmEvent(event=kind, cell_id="hv-e.b", worktree="/w", reason="the worktree")
        assert describe(tidy) == f"{word} the worktree"
        view(tidy)  # a note under the table, as the live view's other notes
    screen = StringIO()
    Console(file=screen, width=150, color_system=None).print(view.render())
    assert "kept      the worktree" in screen.getvalue()


def test_placeholders_are_shell_quoted() -> None:
    from hive.domain.swarm.runner import expand_command

    command = expand_command(
        "agent {prompt_file} --cell {cell} {{cell}} ${cell} {a,b} {x y}",
        {"prompt_file": "/a b/it's.md", "cell": "c"},
    )
    assert command == "agent '/a b/it'\"'\"'s.md' --cell c {cell} ${cell} {a,b} {x y}"


def test_the_last_line_of_a_worker_s_log(tmp_path: Path) -> None:
    from hive.domain.swarm.runner import LAST_LINE_CHARS, last_line

    log = tmp_path / "w.log"
    log.write_bytes(b"$ the command\n")
    assert last_line(str(log), len(b"$ the command\n")) is None  # the worker wrote nothing
    log.write_bytes(b"$ cmd\nstarting\nerror: \x1b[2Jno luck\n\n  \n")
    assert last_line(str(log)) == "error: ?[2Jno luck"
    log.write_bytes(b"x" * 5000 + b"\n")
    assert last_line(str(log)) == "x" * (LAST_LINE_CHARS - 1) + "\u2026"
    assert last_line(str(tmp_path / "gone.log")) is None


def test_an_unknown_placeholder_is_refused_before_anything_runs(ws: Workspace, repo: Path) -> None:
    epic, cell = make_epic(ws, files(1))
    head = git(repo, "rev-parse", "HEAD")
    command = "sh work.sh {promptfile} {cell} {{literal}} ${HOME} {nope}"
    done = run_hive(["-C", str(repo), "swarm", "run", epic, "--agent-cmd", command])
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith(
        "error: --agent-cmd has an unknown placeholders {promptfile}, {nope} (did you mean"
        " {prompt_file}?): the placeholders are {prompt_file}, {cell}, {agent}, {epic}, {project};"
        " write {{word}} for a literal {word}"
    )
    assert git(repo, "rev-parse", "HEAD") == head  # nothing was claimed or written
    assert not os.path.exists(os.path.join(ws.git.paths.hive_state_dir, "swarm", epic))
    assert show_cell(ws, cell_id=cell).status == "open"


def test_the_example_agent_through_hive_tools_run(ws: Workspace, repo: Path) -> None:
    epic, cell = make_epic(ws, [{"title": "Via the CLI", "files": ["docs/via.md"]}])
    assert cell.startswith(epic + ".")
    result, events = run(ws, epic, agent_cmd("--via cli"))
    assert result.finished, result.blocked
    log = Path(next(e.log for e in events if e.event == "worker_started" and e.log)).read_text()
    assert "swarm_complete ok" in log
    assert "Done by" in (repo / "docs/via.md").read_text()
    assert_clean(repo)


def test_an_unexpected_interrupt_kills_the_workers_and_the_next_run_recovers(
    ws: Workspace, repo: Path
) -> None:
    epic, *subtasks = make_epic(ws, files(2))
    pids: list[int] = []

    def interrupt(event: SwarmEvent) -> None:
        if event.event == "worker_started" and event.pid:
            pids.append(event.pid)
            if len(pids) == 2:
                raise KeyboardInterrupt  # e.g. Ctrl-C in a program without a handler

    with pytest.raises(KeyboardInterrupt):
        run_swarm(ws, epic_id=epic, agent_cmd=agent_cmd("--pace 3"), workers=2, on_event=interrupt)
    assert not any(_alive(pid) for pid in pids)
    assert all(show_cell(ws, cell_id=cell).status == "in_progress" for cell in subtasks)
    result, events = run(ws, epic, workers=2)
    assert result.finished and [e.event for e in events].count("resumed") == 2
    assert_clean(repo)


def test_a_failed_worker_in_a_worktree_keeps_its_branch_without_reservations(
    ws: Workspace, repo: Path
) -> None:
    epic, cell = make_epic(ws, [{"title": "Fails", "files": ["src/f.py"]}])
    result, events = run(ws, epic, agent_cmd("--fail"), isolation="worktree")
    reason = result.blocked[cell]
    blocked = next(e for e in events if e.event == "blocked")
    assert blocked.worktree and f"worktree {blocked.worktree} on branch" in reason
    assert os.path.isfile(os.path.join(blocked.worktree, "src/f.py"))  # its work is kept
    assert list_reservations(Workspace(blocked.worktree)) == []  # released on the branch too
    assert show_cell(ws, cell_id=cell).status == "blocked"
    assert git(repo, "status", "--porcelain") == ""


def test_a_blocked_subtask_retried_resumes_in_its_kept_worktree_then_the_epic_closes(
    ws: Workspace, repo: Path
) -> None:
    # The worker fails its first attempt after committing part of its work on its branch
    # and leaving a draft; reopened, the subtask runs again in the same worktree and
    # branch, where the second attempt finds both and completes. The epic then closes.
    from hive.domain.cells import update_cells

    epic, cell, other = make_epic(
        ws,
        [{"title": "Retry", "files": ["src/retry.py"]}, {"title": "Fine", "files": ["src/f.py"]}],
    )
    seen = repo.parent / "seen"
    retry = (
        "if [ -f src/partial.py ]; then"
        f" cat src/partial.py src/draft.py > {shlex.quote(str(seen))} && rm src/draft.py"
        f" && exec {shell_agent()}; fi;"
        " mkdir -p src && echo 'PART = 1' > src/partial.py && git add src/partial.py"
        " && git -c user.name=w -c user.email=w@example.com commit -qm 'first attempt'"
        " && echo 'DRAFT = 1' > src/draft.py; exit 3"
    )
    command = agent_cmd(special={cell: retry})
    first, events = run(ws, epic, command, isolation="worktree")
    assert list(first.blocked) == [cell] and first.completed == [other]
    assert first.epic_status is None and show_cell(ws, cell_id=epic).status == "open"
    started = next(e for e in events if e.event == "worker_started" and e.cell_id == cell)
    person = Workspace(str(repo), from_env=False)  # the one who retries, as the summary says
    update_cells(person, cell_ids=[cell], status="open", force=True, reason="retry")
    again, more = run(person, epic, command, isolation="worktree")
    assert again.finished and set(again.completed) == {cell, other}, again.skipped
    second = next(e for e in more if e.event == "worker_started")
    assert (second.worktree, second.branch) == (started.worktree, started.branch)
    resumed = next(e for e in more if e.event == "resumed")
    assert f"in its kept worktree {started.worktree} on branch {started.branch}" in str(
        resumed.reason
    )
    assert seen.read_text() == "PART = 1\nDRAFT = 1\n"
    # its brief says it is a retry, why the last attempt failed, and where its work is
    brief = Path(str(second.prompt_file)).read_text()
    assert "## Context\nAn earlier attempt at this subtask failed and was blocked: worker" in brief
    assert "exited with code 3" in brief and "You continue where it worked" in brief
    assert (repo / "src/partial.py").read_text() == "PART = 1\n"  # merged with the rest
    assert git(repo, "worktree", "list").count("\n") == 1 and "hive/" not in git(repo, "branch")
    # every subtask closed: the epic is closed in a commit of its own, the summary its reason
    closed = next(e for e in more if e.event == "epic_closed")
    assert git(repo, "log", "-1", "--format=%s").strip() == f"hive: close {epic} Build it"
    assert closed.commit == git(repo, "rev-parse", "HEAD").strip()
    changed = git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert len(changed) == 1 and changed[0].endswith(f"{epic}.yaml")
    stored = show_cell(ws, cell_id=epic)
    assert stored.status == "closed" and stored.close_reason == closed.reason
    assert closed.reason == "hive swarm run: all 2 subtasks closed, 1 of them in this run"
    assert again.epic_status == "closed"
    assert f"  epic {epic} closed: {closed.reason}" in summary_lines(again)
    assert more[-1].event == "run_finished" and more[-1].epic_status == "closed"
    assert_clean(repo)


def test_a_re_issue_for_the_runner_s_own_worker_is_no_override_another_s_is(
    ws: Workspace, repo: Path
) -> None:
    # A failed subtask, reopened (an override: the cell was its worker's), resumes as the
    # same agent: re-issuing that agent's credential to the subtask's next worker
    # overrides nobody and is logged as what it is. A subtask assigned to an agent that
    # registered for itself is an override the first time the runner re-issues its
    # credential (recorded as one); the retry then succeeds the runner's own worker.
    from hive.domain.cells import update_cells
    from hive.domain.events import read_events
    from hive.domain.history import audit_log

    epic, fails, theirs = make_epic(
        ws, [{"title": "Fails once", "files": ["src/a.py"]}, {"title": "Theirs", "files": ["b"]}]
    )
    person = Workspace(str(repo), from_env=False)
    register_agent(person, name="Outsider", session="outsiders-own")
    update_cells(person, cell_ids=[theirs], assignee="Outsider")
    first, events = run(person, epic, agent_cmd(special={fails: "exit 3", theirs: "exit 3"}))
    assert set(first.blocked) == {fails, theirs}
    # (hive hooks install was not run here: the run says what that means, and what to do)
    assert first.hooks_missing == ["pre-commit", "commit-msg", "pre-merge-commit"]
    note = next(line for line in summary_lines(first) if line.startswith("  note: "))
    assert "not checked against the reservations and not tied to their subtasks" in note
    assert note.endswith("run 'hive hooks install' first") and events[0].reason == first.hooks_note
    worker = next(e.agent for e in events if e.event == "worker_started" and e.cell_id == fails)
    update_cells(person, cell_ids=[fails, theirs], status="open", force=True, reason="retry")
    again, more = run(person, epic)
    assert again.finished
    assert {e.cell_id: e.agent for e in more if e.event == "worker_started"} == {
        fails: worker,
        theirs: "Outsider",
    }
    retried = next(e for e in more if e.event == "worker_started")
    assert retried.reason == "again: its last attempt failed"
    assert str(describe(retried)).endswith(f"(pid {retried.pid}); again: its last attempt failed")
    overrides = [e.detail for e in audit_log(person) if e.kind == "override"]
    assert not [o for o in overrides if f"re-issue the credential of {worker}" in o]
    assert len([o for o in overrides if "re-issue the credential of Outsider" in o]) == 1
    assert len([o for o in overrides if o.endswith(": retry")]) == 2  # the reopenings
    logged = read_events(ws.git.paths.hive_state_dir)
    reissued = [e for e in logged if e.get("event") == "credential_reissued"]
    # the retries: each credential was held by the first run's worker of that subtask
    assert sorted(e["target"] for e in reissued) == sorted([worker, "Outsider"])
    for event in reissued:
        cell = fails if event["target"] == worker else theirs
        assert event["args"]["replaced_session"].startswith(f"swarm:{epic}:{cell}:")


def test_an_epic_whose_subtasks_are_all_closed_is_closed_unless_told_or_refused(
    ws: Workspace, repo: Path
) -> None:
    from hive.domain.cells import close_cells, update_cells
    from hive.domain.mail import send_message

    epic, one, two = make_epic(ws, files(2))
    close_cells(ws, cell_ids=[one, two], reason="done by hand")
    head = git(repo, "rev-parse", "HEAD")
    kept, _ = run(ws, epic, close_epic=False)
    assert kept.finished and kept.epic_note == "left open (--keep-epic-open)"
    assert git(repo, "rev-parse", "HEAD") == head
    update_cells(ws, cell_ids=[epic], assignee="bob")  # someone else's epic: not the run's
    send_message(ws, to=["alice"], subject="progress", body="an earlier run's", thread_id=epic)
    refused, events = run(ws, epic)
    assert not any(e.event == "message" for e in events)  # not news of this run
    assert refused.finished and refused.epic_status == "open"
    note = next(e for e in events if e.event == "epic_open")
    assert "bob" in str(note.reason) and refused.epic_note == f"left open: {note.reason}"
    person = Workspace(str(repo), from_env=False)
    update_cells(person, cell_ids=[epic], assignee="", force=True, reason="back to nobody")
    closed, _ = run(ws, epic)
    assert closed.epic_status == "closed" and show_cell(ws, cell_id=epic).status == "closed"
    assert "all 2 subtasks closed, 0 of them" in str(closed.epic_note)
    again, events = run(ws, epic)  # nothing left to do or to close
    assert again.finished and again.epic_note is None
    assert not any(e.event in ("epic_closed", "epic_open") for e in events)


def test_hives_own_agents_on_this_interpreter_are_forked_others_go_to_the_shell() -> None:
    from hive.domain.swarm.forked import forkable

    env = {"PATH": os.pathsep.join([os.path.dirname(sys.executable), "/usr/bin"])}
    python = shlex.quote(sys.executable)
    assert forkable(f"{python} -m hive.agents.example  --pace 0.3 '/a b/p.md'", env) == (
        "hive.agents.example",
        ["--pace", "0.3", "/a b/p.md"],
    )
    name = os.path.basename(sys.executable)
    assert forkable(f"{name} -m hive.agents.example x", env) == ("hive.agents.example", ["x"])
    for command in (
        f"{python} -m hive.agents.example x; rm -f y",  # shell syntax
        f"{python} -m hive.agents.example $HOME",
        f"{python} -m hive.agents.example x > out",
        f"{python} -m hive.agents.example 'it'\"'\"'s.md'",  # a quote inside: left to sh
        f"{python} -u -m hive.agents.example x",  # interpreter options
        f"{python} -m hive.cli.main ready",  # not an agent of hive's
        "/usr/bin/python3 -m hive.agents.example x",  # another interpreter
        "sh work.sh x",
    ):
        assert forkable(command, env) is None, command


def test_a_forked_worker_is_a_process_of_its_own(tmp_path: Path) -> None:
    from hive.domain.swarm.forked import start_forked

    held = open(tmp_path / "runner.lock", "w")  # noqa: SIM115 - a file the runner holds open
    report, log = tmp_path / "seen.json", tmp_path / "worker.log"
    work = tmp_path / "work"
    work.mkdir()
    with open(log, "ab") as handle:
        worker = start_forked(
            "tests.swarm_probe",
            [str(report)],
            cwd=str(work),
            env={**os.environ, "HIVE_CELL": "hv-x.y"},
            log_fd=handle.fileno(),
        )
    assert worker is not None and worker.wait(timeout=120) == 7
    seen = json.loads(report.read_text())
    assert seen["pid"] == worker.pid != os.getpid()
    assert seen["pgid"] == seen["sid"] == worker.pid  # its own session and process group
    assert seen["cwd"] == str(work) and seen["cell"] == "hv-x.y" and seen["argv"] == [str(report)]
    assert seen["sigterm_default"]
    assert seen["fds"]["0"] == os.devnull and seen["fds"]["1"] == seen["fds"]["2"] == str(log)
    assert str(tmp_path / "runner.lock") not in seen["fds"].values()  # nothing of the runner's
    assert log.read_text() == "probe ran\n"
    held.close()
    with open(log, "ab") as handle:
        hanging = start_forked(
            "tests.swarm_probe",
            [str(report), "--hang"],
            cwd=str(work),
            env=dict(os.environ),
            log_fd=handle.fileno(),
        )
    assert hanging is not None
    deadline = time.monotonic() + 60
    while json.loads(report.read_text()).get("pid") != hanging.pid:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(hanging.pid, signal.SIGTERM)
    assert hanging.wait(timeout=120) == -signal.SIGTERM
    assert start_forked("tests.no_such_module", [], cwd=str(work), env={}, log_fd=1) is None


PREPARED_PROBE = """
import json, sys
import hive.agents.example as example
from hive.domain.swarm.runner import run_swarm
from hive.domain.workspace import Workspace
from hive.git.repo import GitRepo
from hive.models.base import HiveModel

REPORT = sys.argv[3]  # (a forked worker's sys.argv is its own)

def unbuilt():
    pending, found = [HiveModel], set()
    while pending:
        for model in pending.pop().__subclasses__():
            pending.append(model)
            if not model.__pydantic_complete__:
                found.add(f"{model.__module__}.{model.__qualname__}")
    return found

def main(argv):
    modules, models, diffed = set(sys.modules), unbuilt(), []
    between = GitRepo.paths_between  # the trees two commits differ in (dulwich's walk)
    GitRepo.paths_between = lambda *args, **kw: diffed.append(1) or between(*args, **kw)
    try:
        return work(argv)
    finally:
        with open(REPORT, "w") as report:
            json.dump({"modules": sorted(set(sys.modules) - modules),
                       "built": sorted(models - unbuilt()), "diffed": len(diffed)}, report)

example.preload()  # what the runner does before its first fork
work, example.main = example.main, main
result = run_swarm(Workspace(sys.argv[1]), epic_id=sys.argv[2], agent_cmd=sys.argv[4])
if not result.finished:  # say why: the run's result and each worker's log
    logs = [open(run.log).read() for run in result.runs]
    sys.exit(f"unfinished: {result.model_dump_json()} logs: {logs}")
"""


# hive's clock a second behind git's commit times: the claim's commit is dated a second
# after the cell's started_at, as when a claim straddles a second (seen under load: the
# worker then diffed the claim's commit, importing dulwich to do so)
_CLOCK_BEHIND = """
from datetime import timedelta
import hive.times
real_now = hive.times.utc_now
for module in list(sys.modules.values()):
    if getattr(module, "utc_now", None) is real_now:
        module.utc_now = lambda: real_now() - timedelta(seconds=1)
"""


@pytest.mark.parametrize("clock", ["", _CLOCK_BEHIND], ids=["in-step", "claim-straddles"])
def test_a_forked_example_worker_finds_its_modules_and_models_ready(
    ws: Workspace, repo: Path, clock: str
) -> None:
    """The runner's ``preload`` of the example agent imports what its tool calls import
    and builds the models they use, once, so that no forked worker does it again; and
    the worker's completion diffs no commit of hive's (the claim's was diffed when its
    commit was dated a second after ``started_at``: 1 run in ~10 at load ~14)."""
    epic, cell = make_epic(ws, [{"title": "Ready", "files": ["src/ready.py"]}])
    report = repo.parent / "worker.json"
    script = PREPARED_PROBE.replace("\nwork, example.main", f"{clock}\nwork, example.main")
    probe = [sys.executable, "-c", script, str(repo), epic, str(report), AGENT]
    done = subprocess.run(probe, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert show_cell(ws, cell_id=cell).status == "closed"
    seen = json.loads(report.read_text())
    assert [name for name in seen["modules"] if name.startswith("hive")] == []
    assert seen["diffed"] == 0  # no commit of the cell was diffed (the claim's was)
    assert seen["built"] == []


def test_a_completed_worktree_with_uncommitted_work_is_kept(ws: Workspace, repo: Path) -> None:
    # The worker completes (its subtask's file merged) but leaves a file it never
    # committed in its worktree: that file exists nowhere else, so the worktree stays.
    epic, cell = make_epic(ws, [{"title": "Leaves notes", "files": ["src/notes.py"]}])
    command = f"{shell_agent()} && echo 'the only copy' > findings.txt"
    result, events = run(ws, epic, command, isolation="worktree")
    assert result.finished and result.completed == [cell]
    assert "def leaves_notes" in (repo / "src/notes.py").read_text()  # merged
    done = next(e for e in events if e.event == "completed")
    assert done.worktree and done.reason and "findings.txt" in done.reason
    assert done.worktree in done.reason
    assert (Path(done.worktree) / "findings.txt").read_text() == "the only copy\n"
    assert done.worktree in git(repo, "worktree", "list")
    assert result.runs[0].reason == done.reason and result.runs[0].worktree == done.worktree
    assert_clean(repo)
    # the summary names it with the command that removes it; later runs of the epic say
    # so again while it holds the only copy of findings.txt, and remove it (and its
    # branch) once the file is committed on the current branch
    branch = str(done.branch)
    command = f"git worktree remove --force {done.worktree} && git branch -D {branch}"
    [kept] = result.kept_worktrees
    assert (kept.cell_id, kept.files, kept.command) == (cell, ["findings.txt"], command)
    assert f"    look at it, then remove it: {command}" in summary_lines(result)
    again, more = run(ws, epic, isolation="worktree")  # nothing to run: no worker starts
    assert [k.worktree for k in again.kept_worktrees] == [done.worktree]
    assert [e.event for e in more].count("worktree_kept") == 1
    assert (Path(done.worktree) / "findings.txt").is_file()
    (repo / "findings.txt").write_text("the only copy\n")
    git(repo, "add", "findings.txt")
    git(repo, "commit", "-qm", "keep the findings")
    tidied, events3 = run(ws, epic, isolation="worktree")
    assert tidied.kept_worktrees == [] and not os.path.exists(done.worktree)
    removed = next(e for e in events3 if e.event == "worktree_removed")
    assert removed.worktree == done.worktree and f"closed subtask {cell}" in str(removed.reason)
    assert branch not in git(repo, "branch") and done.worktree not in git(repo, "worktree", "list")
    assert_clean(repo)
    # with nothing left behind, a completed worktree is still removed (the usual case)
    epic2, _ = make_epic(ws, [{"title": "Tidy", "files": ["src/tidy.py"]}])
    result2, events2 = run(ws, epic2, isolation="worktree")
    tidy = next(e for e in events2 if e.event == "completed")
    assert result2.finished and tidy.reason is None
    assert tidy.worktree is None or not os.path.exists(tidy.worktree)
    assert git(repo, "worktree", "list").count("\n") == 1


def test_files_git_ignores_keep_a_worktree_unless_they_are_build_output(
    ws: Workspace, repo: Path
) -> None:
    # Both workers complete, making files the repository's .gitignore ignores: one a
    # .env and notes of its own among caches and build output (kept: the worktree
    # stays, the files named), the other only caches and build output, hive's own idea
    # of them and the project's (swarm.disposable in .hive/config.yaml): removed.
    from hive.domain.doctor import diagnose
    from hive.store.yamlio import dumps, load_mapping

    (repo / ".gitignore").write_text(".env\nnotes/\nbuild/\n__pycache__/\n*.pyc\nout/\n")
    config = repo / ".hive" / "config.yaml"
    settings = load_mapping(config.read_text(), "config")
    config.write_text(dumps({**settings, "swarm": {"disposable": "out"}}))
    git(repo, "add", ".gitignore", ".hive/config.yaml")
    git(repo, "commit", "-qm", "ignore")
    epic, secret, plain = make_epic(
        ws, [{"title": "Secret", "files": ["src/s.py"]}, {"title": "Plain", "files": ["src/p.py"]}]
    )
    # a malformed setting is refused before anything runs, naming its line
    with pytest.raises(InvalidInput, match=r"config.yaml:\d+: invalid swarm.disposable: "):
        run(ws, epic)
    assert "invalid swarm.disposable" in str([p.message for p in diagnose(ws).problems])
    config.write_text(dumps({**settings, "swarm": {"disposable": ["out"]}}))
    git(repo, "commit", "-qm", "disposable", "--", ".hive/config.yaml")
    caches = (
        "mkdir -p build __pycache__ out && echo o > build/out.o && echo c > __pycache__/m.pyc"
        " && echo x > out/x.bin"
    )
    keeps = f"{caches} && mkdir notes && echo 'TOKEN=1' > .env && echo n > notes/n.md"
    command = agent_cmd(
        special={secret: f"{keeps} && {shell_agent()}", plain: f"{caches} && {shell_agent()}"}
    )
    result, events = run(ws, epic, command, isolation="worktree")
    assert result.finished
    done = {e.cell_id: e for e in events if e.event == "completed"}
    assert done[plain].reason is None and not os.path.exists(str(done[plain].worktree))
    kept = done[secret]
    assert kept.reason and ".env (ignored by git), notes/ (ignored by git)" in kept.reason
    assert not [name for name in ("build", "pycache", "out/") if name in kept.reason]
    assert (Path(str(kept.worktree)) / ".env").read_text() == "TOKEN=1\n"
    [leftover] = result.kept_worktrees  # and the summary names it, with the files
    assert leftover.files == [".env (ignored by git)", "notes/ (ignored by git)"]
    assert leftover.worktree == kept.worktree
    assert_clean(repo)


def _interrupted_with_work(ws: Workspace, repo: Path) -> tuple[str, str, SwarmEvent, SwarmEvent]:
    """A worktree run stopped mid-work after its worker committed src/slow.py on its
    branch and left src/draft.py uncommitted: (epic, cell, worker_started, requeued)."""
    epic, cell = make_epic(ws, [{"title": "Slow", "files": ["src/slow.py"]}])
    marker = repo.parent / "committed"
    command = (
        "mkdir -p src && echo 'WORK = 1' > src/slow.py && git add src/slow.py"
        " && git -c user.name=w -c user.email=w@example.com commit -qm 'my real work'"
        f" && echo 'DRAFT = 1' > src/draft.py && touch {shlex.quote(str(marker))} && sleep 60"
    )
    stop = threading.Event()

    def stop_when_committed() -> None:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        stop.set()

    watcher = threading.Thread(target=stop_when_committed)
    watcher.start()
    events: list[SwarmEvent] = []
    result = run_swarm(
        ws,
        epic_id=epic,
        agent_cmd=command,
        isolation="worktree",
        on_event=events.append,
        stop=stop,
        grace=1.0,
    )
    watcher.join()
    assert result.interrupted and result.remaining == [cell]
    started = next(e for e in events if e.event == "worker_started")
    requeued = next(e for e in events if e.event == "requeued")
    return epic, cell, started, requeued


def test_an_interrupted_worker_keeps_its_worktree_commits_and_edits(
    ws: Workspace, repo: Path
) -> None:
    # Stopped mid-work after committing on its branch and editing another file: the
    # subtask is requeued, but its branch and worktree stay (nothing of it is lost).
    epic, cell, started, requeued = _interrupted_with_work(ws, repo)
    assert started.worktree and started.branch and requeued.reason
    for name in (started.worktree, started.branch, "src/slow.py", "src/draft.py"):
        assert name in requeued.reason
    assert "my real work" in git(repo, "log", "--format=%s", started.branch)
    assert (Path(started.worktree) / "src/draft.py").read_text() == "DRAFT = 1\n"
    stored = show_cell(ws, cell_id=cell)
    assert stored.status == "open" and started.worktree in stored.notes
    assert list_reservations(ws) == []
    assert_clean(repo)
    assert "the next run resumes it there" in requeued.reason
    # running again resumes in the kept worktree, on the kept branch: the worker finds
    # its commit and its draft, and the finished branch is merged with them
    seen = repo.parent / "seen"
    look = f"cat src/slow.py src/draft.py > {shlex.quote(str(seen))} && {shell_agent()}"
    person = Workspace(str(repo), from_env=False)  # may re-issue its worker's credential
    again, more = run(person, epic, look, isolation="worktree")
    assert again.finished and again.completed == [cell], Path(again.runs[0].log).read_text()
    resumed = next(e for e in more if e.event == "resumed")
    second = next(e for e in more if e.event == "worker_started")
    assert (second.worktree, second.branch) == (started.worktree, started.branch)
    assert started.worktree in (resumed.reason or "")
    assert second.agent == started.agent  # the same identity resumes its subtask
    assert started.agent in {c.name for c in list_identities(ws) if c.credential}
    brief = Path(str(second.prompt_file)).read_text()
    assert "An earlier attempt at this subtask was stopped: the run was stopped" in brief
    assert seen.read_text() == "WORK = 1\nDRAFT = 1\n"
    assert "my real work" in git(repo, "log", "--format=%s", "HEAD")
    assert (repo / "src/slow.py").read_text().startswith("WORK = 1\n")
    assert show_cell(ws, cell_id=cell).status == "closed"
    assert_clean(repo)


def test_a_kept_worktree_that_conflicts_with_the_branch_is_blocked_not_resumed(
    ws: Workspace, repo: Path
) -> None:
    epic, cell, started, _ = _interrupted_with_work(ws, repo)
    (repo / "src").mkdir(exist_ok=True)
    (repo / "src/slow.py").write_text("OTHER = 2\n")
    git(repo, "add", "src/slow.py")
    git(repo, "commit", "-qm", "the same file, written here meanwhile")
    again, more = run(ws, epic, isolation="worktree")
    assert not any(e.event == "worker_started" for e in more)
    reason = again.blocked[cell]
    assert "cannot resume in its kept worktree" in reason and "src/slow.py" in reason
    assert started.worktree in reason
    assert (Path(started.worktree) / "src/draft.py").read_text() == "DRAFT = 1\n"
    assert (Path(started.worktree) / "src/slow.py").read_text() == "WORK = 1\n"
    assert (repo / "src/slow.py").read_text() == "OTHER = 2\n"
    assert_clean(repo)


def test_the_summary_says_what_each_unrun_subtask_waits_for(ws: Workspace, repo: Path) -> None:
    from hive.domain.cells import add_dependency, create_cell

    outside = create_cell(ws, title="Outside prerequisite").id
    epic, waits, after, fails = make_epic(
        ws,
        [
            {"title": "Waits outside", "files": ["src/w.py"]},
            {"title": "After failure", "files": ["src/a.py"], "dependencies": [2]},
            {"title": "Fails", "files": ["src/f.py"]},
        ],
    )
    add_dependency(ws, cell_id=waits, target=outside)
    command = agent_cmd(special={fails: "exit 3"})
    done = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", command], module="hive.cli.main"
    )
    assert done.returncode == 1, done.stderr
    assert f"{waits} waits for {outside} (open)" in done.stdout
    assert f"{after} waits for {fails} (blocked)" in done.stdout
    assert "waiting on blocked work" not in done.stdout  # the old line said so of both
    result, _ = run(ws, epic, command)
    assert result.waiting == {waits: [outside], after: [fails]}


def test_hive_files_changed_on_both_sides_merge_field_by_field(ws: Workspace, repo: Path) -> None:
    # While a worker works in its worktree, someone comments on its subtask on the
    # current branch: both sides changed the cell's file. The merge keeps both (hive's
    # field merge), where a text merge conflicted and blocked finished work.
    from hive.domain.annotate import add_comment

    epic, cell = make_epic(ws, [{"title": "Slow work", "files": ["src/slow.py"]}])
    meddled: list[str] = []

    def meddle(event: SwarmEvent) -> None:
        if event.event == "worker_started":
            add_comment(Workspace(str(repo), actor="bob"), cell_id=cell, text="mind the docs")
            meddled.append(cell)

    result = run_swarm(
        ws, epic_id=epic, agent_cmd=agent_cmd("--pace 0.3"), isolation="worktree", on_event=meddle
    )
    assert meddled == [cell] and result.finished, result.blocked
    stored = show_cell(ws, cell_id=cell)
    assert stored.status == "closed" and [c.text for c in stored.comments] == ["mind the docs"]
    assert stored.conflicts == []
    assert "def slow_work" in (repo / "src/slow.py").read_text()
    assert "<<<<<<<" not in git(
        repo, "show", f"HEAD:{git(repo, 'ls-files', f'*{cell}.yaml').strip()}"
    )
    assert git(repo, "rev-list", "--merges", "--count", "HEAD").strip() == "1"
    assert_clean(repo)


def test_a_failed_worktree_worker_s_files_and_scope_violations_are_in_its_outcome(
    ws: Workspace, repo: Path
) -> None:
    # In its own worktree everything a worker changed is its own: what it committed on
    # its branch and what it left uncommitted go into the failure outcome, and a file
    # outside its subtask's files is a scope violation there and in hive review.
    epic, cell = make_epic(ws, [{"title": "Strays", "files": ["src/own.py"]}])
    command = (
        "mkdir -p src && echo 'OWN = 1' > src/own.py && git add src/own.py"
        " && git -c user.name=w -c user.email=w@example.com commit -qm 'own work'"
        " && echo 'stray' >> README.md && exit 1"
    )
    result, _ = run(ws, epic, command, isolation="worktree")
    assert cell in result.blocked
    outcome = next(o for o in load_outcomes(ws) if o.cell_id == cell)
    assert not outcome.success
    assert outcome.files_touched == ["README.md", "src/own.py"]
    assert outcome.scope_violations == ["README.md"]
    seen = review(ws, target=cell, with_patch=False).cells[0]
    assert "README.md" in seen.scope_violations
    assert_clean(repo)


def test_a_merge_commit_is_the_runner_s_naming_the_worker(ws: Workspace, repo: Path) -> None:
    # Like a block or a requeue, the merge is written by the runner: its author and
    # Hive-Agent agree (hive doctor / the audit log flag a mismatch), Hive-Worker
    # names the worker whose branch it merges.
    from hive.domain.history import audit_log

    epic, cell = make_epic(ws, [{"title": "Merged", "files": ["src/m.py"]}])
    result, events = run(ws, epic, isolation="worktree")
    assert result.finished
    worker = next(e.agent for e in events if e.event == "worker_started")
    merge = git(repo, "log", "-1", "--merges", "--format=%H").strip()
    message = git(repo, "show", "-s", "--format=%an%n%B", merge)
    assert message.startswith("alice\n") and "Hive-Agent: alice" in message
    assert f"Hive-Worker: {worker}" in message and f"Hive-Merge: {cell}" in message
    flagged = [e for e in audit_log(ws) if e.commit == merge]
    assert [e for e in flagged if e.kind == "author-mismatch"] == []


def test_a_subtask_deleted_while_its_worker_ran_is_not_reported_completed(
    ws: Workspace, repo: Path
) -> None:
    from hive.domain.cells import delete_cells
    from tests.conftest import set_coordinators

    set_coordinators(repo, ["alice"])  # may delete a cell its worker holds
    epic, cell = make_epic(ws, [{"title": "Doomed", "files": ["src/d.py"]}])
    marker, deleted = repo.parent / "started", repo.parent / "deleted"
    # the worker ends once its cell is deleted (it slept 2 s, which a loaded machine
    # could spend before the deletion)
    command = (
        f"touch {shlex.quote(str(marker))};"
        f" while [ ! -e {shlex.quote(str(deleted))} ]; do sleep 0.05; done; exit 1"
    )

    def delete_when_started() -> None:
        try:
            deadline = time.monotonic() + 60
            while not marker.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            delete_cells(ws, cell_ids=[cell], force=True, reason="not needed")
        finally:
            deleted.touch()

    deleter = threading.Thread(target=delete_when_started)
    deleter.start()
    result, events = run(ws, epic, command)
    deleter.join()
    kinds = [e.event for e in events]
    assert "completed" not in kinds and "blocked" not in kinds
    gone = next(e for e in events if e.event == "skipped")
    assert gone.cell_id == cell and gone.reason and "deleted" in gone.reason
    assert [r.result for r in result.runs] == ["deleted"] and result.completed == []
    assert result.finished
    assert_clean(repo)


def run_gated(
    ws: Workspace,
    repo: Path,
    epic: str,
    *,
    before: str,
    after: str,
    started: int,
    meanwhile: Any,
    **options: Any,
) -> tuple[SwarmRunResult, list[SwarmEvent]]:
    """Run ``epic`` with workers that run ``before``, then wait; once ``started`` of them
    wait, ``meanwhile()`` is called and they go on with ``after`` (shell commands)."""
    marks = repo.parent / "marks"
    marks.mkdir()
    go = repo.parent / "go"
    command = (
        f'{before} touch {shlex.quote(str(marks))}/"$HIVE_CELL";'
        f" while [ ! -e {shlex.quote(str(go))} ]; do sleep 0.05; done; {after}"
    )

    def when_started() -> None:
        try:
            deadline = time.monotonic() + 60
            while len(list(marks.iterdir())) < started and time.monotonic() < deadline:
                time.sleep(0.05)
            meanwhile()
        finally:
            go.touch()

    helper = threading.Thread(target=when_started)
    helper.start()
    try:
        return run(ws, epic, command, timeout=120, **options)
    finally:
        helper.join()


def take_away(ws: Workspace, deleted: str, taken: str) -> None:
    """Someone (a coordinator) deletes one subtask and gives another to bob."""
    from hive.domain.cells import delete_cells, update_cells

    delete_cells(ws, cell_ids=[deleted], force=True, reason="not needed")
    update_cells(ws, cell_ids=[taken], assignee="bob", force=True, reason="bob's now")


def test_a_subtask_settled_or_taken_by_someone_else_is_left_and_its_worker_holds_nothing(
    ws: Workspace, repo: Path
) -> None:
    # Each worker reserves its file; then, while they run, someone closes one subtask,
    # deletes another and gives the third to bob; the workers' swarm_complete is refused
    # and they exit. The run reports each (completed / skipped / skipped), leaves bob's
    # cell as it is (no block, no failure outcome), and the dead workers' reservations are
    # released, not left to block those files and their commits until they expire.
    from hive.domain.cells import close_cells
    from tests.conftest import set_coordinators

    set_coordinators(repo, ["alice"])  # may close, delete and reassign its workers' cells
    epic, closed, deleted, taken = make_epic(
        ws,
        [
            {"title": "Closed", "files": ["src/c.py"]},
            {"title": "Gone", "files": ["src/g.py"]},
            {"title": "Taken", "files": ["src/t.py"]},
        ],
    )
    held: list[int] = []

    def settle() -> None:
        held.append(len(list_reservations(ws)))
        close_cells(ws, cell_ids=[closed], force=True, reason="done by hand")
        take_away(ws, deleted, taken)

    result, events = run_gated(
        ws,
        repo,
        epic,
        before=shell_hive()
        + ' hive reserve "src/$HIVE_CELL.py" --cell "$HIVE_CELL" --reason work >/dev/null &&',
        after='hive swarm complete "$HIVE_CELL" -s done; exit 1',
        started=3,
        meanwhile=settle,
        workers=3,
    )
    assert held == [3] and result.completed == [closed] and not result.blocked
    skipped = {e.cell_id: e.reason or "" for e in events if e.event == "skipped"}
    assert "deleted" in skipped[deleted] and "taken from worker" in skipped[taken]
    assert "now in_progress, bob's" in skipped[taken]
    assert sorted(r.result for r in result.runs) == ["completed", "deleted", "taken"]
    kept = show_cell(ws, cell_id=taken)
    assert kept.status == "in_progress" and kept.assignee == "bob"
    assert [o.cell_id for o in load_outcomes(ws)] == []  # nobody's failure was recorded
    assert list_reservations(ws) == []
    released = git(repo, "log", "--format=%s%n%b", "--grep", "Hive-Event: release")
    assert released.count("Hive-Worker:") == 3
    assert git(repo, "log", "--format=%s", "--grep", "^hive: block") == ""
    assert_clean(repo)


def test_a_worktree_of_a_subtask_taken_meanwhile_is_kept_only_when_it_holds_work(
    ws: Workspace, repo: Path
) -> None:
    # With worktrees: one subtask is deleted while its worker, which wrote a file there,
    # runs; the other is given to bob while its worker, which wrote nothing, runs. The
    # first worktree holds work: kept, and its skipped line says where and what; the
    # second holds nothing: removed with its branch (it was kept without a word).
    from tests.conftest import set_coordinators

    set_coordinators(repo, ["alice"])
    epic, gone, taken = make_epic(
        ws, [{"title": "Gone", "files": ["src/g.py"]}, {"title": "Taken", "files": ["src/t.py"]}]
    )

    result, events = run_gated(
        ws,
        repo,
        epic,
        before=f'if [ "$HIVE_CELL" = {gone} ]; then mkdir -p src && echo draft > src/g.py; fi;',
        after="exit 1",
        started=2,
        meanwhile=lambda: take_away(ws, gone, taken),
        workers=2,
        isolation="worktree",
    )
    assert not result.blocked and not result.completed
    skipped = {e.cell_id: e.reason or "" for e in events if e.event == "skipped"}
    assert "its work is kept in worktree" in skipped[gone] and skipped[gone].endswith("src/g.py")
    assert "worktree" not in skipped[taken]
    trees = git(repo, "worktree", "list")
    assert gone in trees and taken not in trees
    assert git(repo, "branch", "--list", f"hive/{taken}*") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_worktree_of_a_subtask_closed_meanwhile_is_kept_only_when_it_holds_work(
    ws: Workspace, repo: Path
) -> None:
    # With worktrees: both subtasks are closed by hand while their workers run; one
    # worker wrote a file in its worktree, the other nothing. Both are reported
    # completed; the first worktree is kept and its completed line says where and what,
    # the second is removed with its branch.
    from hive.domain.cells import close_cells
    from tests.conftest import set_coordinators

    set_coordinators(repo, ["alice"])
    epic, drafted, empty = make_epic(
        ws, [{"title": "Drafted", "files": ["src/d.py"]}, {"title": "Empty", "files": ["src/e.py"]}]
    )

    result, events = run_gated(
        ws,
        repo,
        epic,
        before=f'if [ "$HIVE_CELL" = {drafted} ]; then mkdir -p src && echo x > src/d.py; fi;',
        after="exit 1",
        started=2,
        meanwhile=lambda: close_cells(
            ws, cell_ids=[drafted, empty], force=True, reason="done by hand"
        ),
        workers=2,
        isolation="worktree",
    )
    assert sorted(result.completed) == sorted([drafted, empty]) and not result.blocked
    completed = {e.cell_id: e.reason or "" for e in events if e.event == "completed"}
    assert "its work is kept in worktree" in completed[drafted]
    assert completed[drafted].endswith("src/d.py") and completed[empty] == ""
    trees = git(repo, "worktree", "list")
    assert drafted in trees and empty not in trees
    assert git(repo, "branch", "--list", f"hive/{empty}*") == ""
    assert git(repo, "status", "--porcelain") == ""


def test_a_worker_that_reports_blocked_and_exits_gets_a_failure_outcome(
    ws: Workspace, repo: Path
) -> None:
    # swarm_progress(status="failed") records the failure outcome itself; "blocked" does
    # not, so the runner must still record one when that worker exits without finishing.
    epic, stuck, failed = make_epic(
        ws,
        [{"title": "Stuck", "files": ["src/s.py"]}, {"title": "Failed", "files": ["src/f.py"]}],
    )
    report = shell_hive() + ' hive swarm progress "$HIVE_CELL" --status'
    command = agent_cmd(
        special={
            stuck: f'{report} blocked -m "waiting on the API team"; exit 0',
            failed: f'{report} failed -m "the tests cannot pass"; exit 1',
        }
    )
    result, _ = run(ws, epic, command, workers=2)
    assert set(result.blocked) == {stuck, failed}
    outcomes = load_outcomes(ws)
    mine = [o for o in outcomes if o.cell_id == stuck]
    assert len(mine) == 1 and not mine[0].success and mine[0].source == "swarm_run"
    theirs = [o for o in outcomes if o.cell_id == failed]
    assert len(theirs) == 1 and not theirs[0].success and theirs[0].source == "swarm_progress"
    assert_clean(repo)


def test_a_subtask_that_cannot_be_settled_does_not_stop_the_others(
    ws: Workspace, repo: Path
) -> None:
    # A worker scribbles on its own cell file and fails: hive will not commit over an
    # uncommitted edit, so that subtask cannot be blocked now. The run says so and goes
    # on with the rest; once the file is restored, the next run picks it up again.
    epic, vandal, fine, later = make_epic(
        ws,
        [
            {"title": "Vandal", "files": ["src/v.py"]},
            {"title": "Fine", "files": ["src/fine.py"]},
            {"title": "Later", "files": ["src/later.py"], "dependencies": [1]},
        ],
    )
    cell_file = git(repo, "ls-files", f"*{vandal}.yaml").strip()
    command = agent_cmd(special={vandal: f"echo 'garbage: [' >> {cell_file}; exit 1"})
    result, events = run(ws, epic, command, workers=1)
    assert sorted(result.completed) == sorted([fine, later])
    stuck = next(e for e in events if e.event == "skipped" and e.cell_id == vandal)
    assert stuck.reason and "local edits" in stuck.reason and "next run" in stuck.reason
    assert result.remaining == [vandal] and not result.finished
    # its worker ran: counted, and the summary does not say it did not run
    assert [r.result for r in result.runs if r.cell_id == vandal] == ["unsettled"]
    totals = next(e for e in events if e.event == "run_finished").totals
    assert totals and totals["workers_run"] == 3
    assert f"  ran: {vandal}: could not record what became of it" in "\n".join(
        summary_lines(result)
    )
    git(repo, "checkout", "--", cell_file)
    again, more = run(ws, epic, workers=1)
    assert again.finished and vandal in again.completed
    assert any(e.event == "resumed" and e.cell_id == vandal for e in more)
    assert_clean(repo)


def test_the_summary_says_why_a_subtask_was_not_started(ws: Workspace, repo: Path) -> None:
    epic, cell = make_epic(ws, [{"title": "Here", "files": ["src/h.py"]}])
    git(repo, "checkout", "-q", "--detach")
    done = run_hive(
        ["-C", str(repo), "swarm", "run", epic, "--agent-cmd", AGENT], module="hive.cli.main"
    )
    assert done.returncode == 1, done.stderr
    assert f"not run: {cell}: HEAD is detached" in done.stdout
    git(repo, "checkout", "-q", "-")
    result, _ = run(ws, epic)
    assert result.finished and result.skipped == {}


def test_the_reason_an_epic_is_closed_with_counts_a_lone_subtask_as_one() -> None:
    """The run closed an epic of one subtask "all 1 subtasks closed, 1 of them in this
    run"; several still read as agents.md quotes them."""
    from hive.domain.swarm.runner import epic_closing_reason

    assert epic_closing_reason(1, 1) == "hive swarm run: its one subtask closed, in this run"
    assert epic_closing_reason(1, 0) == "hive swarm run: its one subtask closed, before this run"
    assert (
        epic_closing_reason(4, 3) == "hive swarm run: all 4 subtasks closed, 3 of them in this run"
    )


def _run_state(repo: Path, commit: str, cell: str) -> str | None:
    """``metadata.swarm_run.state`` of ``cell`` as committed in ``commit`` (git show)."""
    from hive.store.yamlio import loads

    path = git(repo, "ls-tree", "-r", "--name-only", commit, ".hive/cells").split()
    found = next(p for p in path if p.endswith(f"/{cell}.yaml"))
    data = loads(git(repo, "show", f"{commit}:{found}"))
    state: str | None = data["metadata"]["swarm_run"]["state"]
    return state


def test_a_completed_subtask_s_run_state_says_so_in_its_closing_commit(
    ws: Workspace, repo: Path
) -> None:
    """A subtask its worker finished with swarm_complete said ``swarm_run.state:
    running`` ever after; its completion (one commit, no second one) says
    ``completed``. One its worker closed with ``hive close`` instead is marked by the
    runner when the worker exits (the runner's commit)."""
    epic, done, closed = make_epic(ws, files(2))
    special = {closed: f'{shell_hive()} hive close "$HIVE_CELL" -r "closed by hand"'}
    ran = run_hive(
        [
            "-C",
            str(repo),
            "swarm",
            "run",
            epic,
            "--workers",
            "1",
            "--agent-cmd",
            agent_cmd(special=special),
        ],
        env={k: v for k, v in os.environ.items() if not k.startswith("HIVE_")},
    )
    assert ran.returncode == 0, ran.stderr
    completes = git(repo, "log", "--format=%H", "--grep=^hive: complete").split()
    assert len(completes) == 1
    assert _run_state(repo, f"{completes[0]}~1", done) == "running"
    assert _run_state(repo, completes[0], done) == "completed"  # in the completion itself
    closes = git(repo, "log", "--format=%H", f"--grep=^hive: close {closed}").split()
    assert _run_state(repo, closes[0], closed) == "running"  # hive close says nothing of it
    settled = git(repo, "log", "--format=%H %s", f"--grep=^hive: settle {closed}").splitlines()
    assert len(settled) == 1
    assert _run_state(repo, settled[0].split()[0], closed) == "completed"
    assert git(
        repo, "log", "-1", "--format=%(trailers:key=Hive-Worker,valueonly)", settled[0].split()[0]
    ).strip()
    assert_clean(repo)


def test_hooks_installed_before_the_merge_hook_are_named_in_the_note() -> None:
    """Hooks installed before hive had a pre-merge-commit hook: the run says what is
    missing and what it means."""
    from hive.domain.swarm.runner import _hooks_note

    assert _hooks_note(["pre-merge-commit"]) == (
        "hive's git hooks are not installed here (pre-merge-commit): the workers' own git"
        " commits are not checked against the reservations when git merge makes them;"
        " run 'hive hooks install' first"
    )


def test_a_forked_worker_s_fallback_on_dulwich_is_ready_too(ws: Workspace, repo: Path) -> None:
    """A worker's read that races another writer (a ref made between two looks, an
    object a packer moves) falls back on dulwich's reader; under load a forked worker
    imported ``hive.git.dulwichrepo`` that way (test above). The runner's preload makes
    that path ready as well: opening the repository through dulwich imports no module
    of hive's after it."""
    probe = (
        "import sys\n"
        "import hive.agents.example as example\n"
        "from hive.git.repo import GitRepo\n"
        "example.preload()\n"
        "before = set(sys.modules)\n"
        "repo = GitRepo.discover(sys.argv[1])\n"
        "assert repo.dulwich.refs[b'HEAD']\n"
        "print(sorted(m for m in set(sys.modules) - before if m.startswith('hive')))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(repo)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "[]\n", done.stdout


def test_a_dependent_starts_once_its_blocker_s_worker_is_settled(ws: Workspace, repo: Path) -> None:
    """A subtask started as soon as its blocker's cell was closed, while the blocker's
    worker was still running after its swarm_complete: the run told `started B` before
    `completed A` (a dependency order broken, to whoever watched), and B's worker began
    before the runner had settled A (its leftover reservations, its scope check)."""
    epic, base, top = make_epic(
        ws,
        [
            {"title": "Base", "files": ["src/base.py"]},
            {"title": "Top", "files": ["src/top.py"], "dependencies": [0]},
        ],
    )
    lingering = f"{agent_cmd()} && sleep 1"  # each worker lingers after its completion
    result, events = run(ws, epic, lingering, workers=2)
    assert result.finished and sorted(result.completed) == sorted([base, top])
    told = [(e.event, e.cell_id) for e in events if e.event in ("completed", "worker_started")]
    assert told.index(("completed", base)) < told.index(("worker_started", top)), told
