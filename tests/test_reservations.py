"""Enforced file reservations and the pre-commit hook, on real repositories."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from hive.domain.cells import create_cell
from hive.domain.hooks import install_hook, uninstall_hook
from hive.domain.reservations import list_reservations, release, reserve
from hive.domain.workspace import Workspace
from hive.errors import (
    InvalidInput,
    NotFound,
    PathOutsideRepository,
    PermissionDenied,
    ReservationConflict,
)
from tests.conftest import HeldClock, agent_env, assert_clean, git, set_coordinators
from tests.inprocess import run_hive


def agent(repo: Path, name: str) -> Workspace:
    return Workspace(str(repo), actor=name)


@pytest.mark.parametrize(
    ("held", "requested"),
    [
        ("app/**", "app/models/user.py"),
        ("app/models/user.py", "app/**"),
        ("src/*.py", "src/a*"),
        ("src/a*", "src/*.py"),
        ("**/*.py", "lib/**"),
        ("lib/**", "**/*.py"),
    ],
)
def test_exclusive_conflicts_both_directions(
    ws: Workspace, repo: Path, held: str, requested: str
) -> None:
    reserve(agent(repo, "alice"), paths=[held], reason="hv-1 work")
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(ReservationConflict) as caught:
        reserve(agent(repo, "bob"), paths=[requested])
    error = caught.value
    assert "reserved by alice" in error.message and held in error.message
    conflict = error.to_dict()["conflicts"][0]
    assert conflict["holder"] == "alice" and conflict["pattern"] == held and conflict["expires_at"]
    assert error.code == "reservation_conflict"
    assert git(repo, "rev-parse", "HEAD") == head


def test_non_intersecting_patterns_are_granted(ws: Workspace, repo: Path) -> None:
    reserve(agent(repo, "alice"), paths=["src/*.py"])
    granted = reserve(agent(repo, "bob"), paths=["src/sub/a.py", "docs/**"])
    assert [g.path_pattern for g in granted.granted] == ["src/sub/a.py", "docs/**"]


def test_shared_only_conflicts_with_exclusive(ws: Workspace, repo: Path) -> None:
    reserve(agent(repo, "alice"), paths=["docs/**"], exclusive=False)
    reserve(agent(repo, "bob"), paths=["docs/guide.md"], exclusive=False)
    with pytest.raises(ReservationConflict):
        reserve(agent(repo, "carol"), paths=["docs/a.md"])
    reserve(agent(repo, "dave"), paths=["src/**"])
    with pytest.raises(ReservationConflict):
        reserve(agent(repo, "erin"), paths=["src/x.py"], exclusive=False)


def test_reservation_is_one_commit_in_hive_and_renews(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="auth")
    alice = agent(repo, "alice")
    first = reserve(
        alice, paths=["./src//auth/", "src/lib/jwt.ts"], reason="auth", cell=cell.id[:6]
    )
    assert [g.path_pattern for g in first.granted] == ["src/auth/**", "src/lib/jwt.ts"]
    assert first.granted[0].cell == cell.id
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        ".hive/reservations/alice.yaml"
    ]
    assert f"Hive-Cell: {cell.id}" in git(repo, "log", "-1", "--format=%B")
    again = reserve(alice, paths=["src/auth/**"], ttl_seconds=7200)
    assert again.renewed == [first.granted[0].id]
    assert len(list_reservations(ws, agent="alice")) == 2
    assert_clean(repo)


def test_expired_reservations_stop_counting_at_once(
    ws: Workspace, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = HeldClock(monkeypatch)  # the one-second TTL is not waited out
    reserve(agent(repo, "alice"), paths=["src/**"], ttl_seconds=1)
    assert [r.path_pattern for r in list_reservations(ws)] == ["src/**"]
    clock.advance(1.2)
    assert list_reservations(ws) == []
    assert reserve(agent(repo, "bob"), paths=["src/a.py"]).granted


def test_release_specific_all_and_errors(ws: Workspace, repo: Path) -> None:
    alice = agent(repo, "alice")
    granted = reserve(alice, paths=["a/**", "b/**", "c.txt"]).granted
    assert [r.path_pattern for r in release(alice, paths=["a/"]).released] == ["a/**"]
    assert [r.id for r in release(alice, reservation_ids=[granted[2].id]).released] == [
        granted[2].id
    ]
    with pytest.raises(NotFound, match="no active reservation"):
        release(alice, paths=["zzz"])
    assert [r.path_pattern for r in release(alice).released] == ["b/**"]
    assert not (repo / ".hive/reservations/alice.yaml").exists()
    assert reserve(agent(repo, "bob"), paths=["a/x", "b/y"]).granted
    assert_clean(repo)


def test_force_is_for_coordinators_and_recorded(ws: Workspace, repo: Path) -> None:
    reserve(agent(repo, "alice"), paths=["src/**"])
    with pytest.raises(PermissionDenied, match="coordinator"):
        reserve(agent(repo, "bob"), paths=["src/a.py"], force=True)
    with pytest.raises(PermissionDenied, match="coordinator"):  # a name is not a grant
        reserve(agent(repo, "coordinator"), paths=["src/a.py"], force=True, reason="x")
    set_coordinators(repo, ["lead"])
    head = git(repo, "rev-parse", "HEAD")
    with pytest.raises(InvalidInput, match="reason"):
        reserve(agent(repo, "lead"), paths=["src/a.py"], force=True)
    assert git(repo, "rev-parse", "HEAD") == head
    forced = reserve(agent(repo, "lead"), paths=["src/a.py"], force=True, reason="alice left")
    assert forced.overridden[0].holder == "alice" and forced.granted[0].forced
    message = git(repo, "log", "-1", "--format=%B")
    assert "force-reserve" in message and "Hive-Overrides: alice #" in message
    assert "Hive-Override: lead (coordinator) override the reservations" in message
    assert "of alice: alice left" in message


def test_bad_paths_are_refused(ws: Workspace, repo: Path) -> None:
    alice = agent(repo, "alice")
    with pytest.raises(PathOutsideRepository):
        reserve(alice, paths=["../outside.py"])
    with pytest.raises(PathOutsideRepository):
        reserve(alice, paths=["/etc/passwd"])
    with pytest.raises(InvalidInput):
        reserve(alice, paths=["src/[unclosed"])
    with pytest.raises(InvalidInput, match="ttl"):
        reserve(alice, paths=["a"], ttl_seconds=0)
    absolute = reserve(alice, paths=[str(repo / "README.md")])
    assert absolute.granted[0].path_pattern == "README.md"


def hive_env(repo: Path, agent_name: str | None = None, **extra: str) -> dict[str, str]:
    """The environment of ``agent_name`` proven by its credential (None: a person)."""
    if agent_name:
        env = agent_env(repo, agent_name)
    else:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HIVE_")}
    env.update(extra)
    return env


def commit(repo: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(repo), "commit", "-q", "-m", "work", *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )


def test_pre_commit_hook_blocks_reserved_files(ws: Workspace, repo: Path) -> None:
    install_hook(ws)
    cell = create_cell(ws, title="auth work")
    reserve(agent(repo, "alice"), paths=["src/auth/**"], cell=cell.id)
    (repo / "src" / "auth").mkdir(parents=True)
    (repo / "src/auth/login.py").write_text("x = 1\n")
    git(repo, "add", "src/auth/login.py")
    head = git(repo, "rev-parse", "HEAD")
    blocked = commit(repo, hive_env(repo, "bob"))
    assert blocked.returncode != 0
    assert "src/auth/login.py is reserved by alice" in blocked.stderr and cell.id in blocked.stderr
    human = commit(repo, hive_env(repo, None))
    assert human.returncode != 0 and "reserved by alice" in human.stderr
    assert git(repo, "rev-parse", "HEAD") == head
    assert commit(repo, hive_env(repo, "alice")).returncode == 0


def test_pre_commit_hook_checks_both_sides_of_a_rename_and_bypass(
    ws: Workspace, repo: Path
) -> None:
    (repo / "lib").mkdir()
    (repo / "lib/old.py").write_text("y = 2\n")
    git(repo, "add", "lib/old.py")
    git(repo, "commit", "-qm", "add old")
    install_hook(ws)
    reserve(agent(repo, "alice"), paths=["lib/old.py"])
    git(repo, "mv", "lib/old.py", "new.py")
    blocked = commit(repo, hive_env(repo, "bob"))
    assert blocked.returncode != 0 and "lib/old.py is reserved by alice" in blocked.stderr
    assert commit(repo, hive_env(repo, "bob", HIVE_BYPASS="1")).returncode == 0


def test_pre_commit_hook_rejects_invalid_hive_files(ws: Workspace, repo: Path) -> None:
    install_hook(ws)
    cell = create_cell(ws, title="valid")
    path = next(repo.glob(f".hive/cells/*/{cell.id}.yaml"))
    path.write_text(path.read_text().replace("priority: 2", "priority: 11"))
    git(repo, "add", str(path))
    blocked = commit(repo, hive_env(repo, "alice"))
    assert blocked.returncode != 0
    assert f"{path.relative_to(repo).as_posix()}:5: invalid field 'priority'" in blocked.stderr


def test_hook_install_is_idempotent_chains_and_honours_hooks_path(
    ws: Workspace, repo: Path
) -> None:
    hooks = repo / ".githooks"
    hooks.mkdir()
    git(repo, "config", "core.hooksPath", ".githooks")
    existing = hooks / "pre-commit"
    marker = repo / "chained-ran"
    existing.write_text(f"#!/bin/sh\ntouch {marker}\n")
    existing.chmod(0o755)
    first = install_hook(ws)
    assert first.action == "installed" and first.chained == str(hooks / "pre-commit.hive-chained")
    assert install_hook(ws).action == "unchanged"
    (repo / "f.txt").write_text("f\n")
    git(repo, "add", "f.txt")
    assert commit(repo, hive_env(repo, "alice")).returncode == 0
    assert marker.exists()
    said = run_hive(["-C", str(repo), "hooks", "uninstall"], module="hive.cli.main")
    assert said.returncode == 0  # it said "restored: X (chains X)": chaining itself
    assert said.stdout == (
        f"restored: {existing} (your own hook, which hive had chained)\n"
        f"removed: {hooks / 'commit-msg'}\n"  # hive's other hooks, which chained none
        f"removed: {hooks / 'pre-merge-commit'}\n"
    )
    assert existing.read_text().startswith("#!/bin/sh\ntouch")
    assert install_hook(ws).action == "installed" and uninstall_hook(ws).action == "restored"


def test_cli_reserve_release_and_hook_run(ws: Workspace, repo: Path) -> None:
    def hive(*args: str, actor: str) -> subprocess.CompletedProcess[str]:
        return run_hive(
            ["-C", str(repo), "--actor", actor, *args],
            env=agent_env(repo, actor),
            module="hive.cli.main",
        )

    assert hive("reserve", "src/**", "--reason", "r", actor="alice").returncode == 0
    refused = hive("reserve", "src/a.py", actor="bob")
    assert refused.returncode == 4 and refused.stderr.startswith(
        "error: src/a.py conflicts with src/** reserved by alice"
    )
    listed = hive("reservations", "--json", actor="bob")
    assert '"path_pattern": "src/**"' in listed.stdout
    assert hive("release", "--all", actor="alice").returncode == 0
    assert hive("reserve", "src/a.py", actor="bob").returncode == 0


def _racer(repo: str, name: str, pattern: str, start_at: float, results: Any) -> None:
    ws = Workspace(repo, actor=name, persist_cache=False)
    time.sleep(max(0.0, start_at - time.time()))
    try:
        reserve(ws, paths=[pattern])
        results.put((name, "granted"))
    except ReservationConflict:
        results.put((name, "refused"))


def race(requests: list[tuple[str, str]], delay: float = 0.5) -> dict[str, str]:
    """(repository, pattern) reserved by one process each, all at the same instant:
    racer name -> granted/refused."""
    context = multiprocessing.get_context("fork")
    results = context.Queue()
    start_at = time.time() + delay
    procs = [
        context.Process(target=_racer, args=(where, f"racer{n}", pattern, start_at, results))
        for n, (where, pattern) in enumerate(requests)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(90)
        assert proc.exitcode == 0
    return dict(results.get(timeout=5) for _ in requests)


def test_racing_intersecting_reservations_grant_exactly_one(ws: Workspace, repo: Path) -> None:
    """Six agents ask for intersecting exclusive patterns at the same instant."""
    patterns = ["src/**", "src/a.py", "src/*.py", "**/*.py", "src/a*", "src/{a,b}.py"]
    outcomes = race([(str(repo), pattern) for pattern in patterns])
    granted = [name for name, outcome in outcomes.items() if outcome == "granted"]
    assert len(granted) == 1, outcomes
    holders = {r.agent for r in list_reservations(Workspace(str(repo), persist_cache=False))}
    assert holders == set(granted)
    assert_clean(repo)


def test_reserve_requires_an_initialised_hive(tmp_path: Path) -> None:
    from hive.errors import NotInitialized
    from tests.conftest import make_repo

    bare = make_repo(tmp_path / "plain")
    head = git(bare, "rev-parse", "HEAD")
    with pytest.raises(NotInitialized):
        reserve(agent(bare, "alice"), paths=["x"])
    assert git(bare, "rev-parse", "HEAD") == head


def test_renewal_keeps_reason_and_cell_and_ids_are_never_reused(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="auth")
    alice = agent(repo, "alice")
    first = reserve(alice, paths=["src/**"], reason="auth work", cell=cell.id).granted[0]
    renewed = reserve(alice, paths=["src/**"], ttl_seconds=7200).granted[0]
    assert (renewed.id, renewed.reason, renewed.cell) == (first.id, "auth work", cell.id)
    release(alice)
    again = reserve(agent(repo, "bob"), paths=["lib/**"]).granted[0]
    assert again.id > first.id


def test_conflict_message_names_every_conflict(ws: Workspace, repo: Path) -> None:
    cell = create_cell(ws, title="auth")
    reserve(agent(repo, "alice"), paths=["src/a.py"], cell=cell.id)
    reserve(agent(repo, "carol"), paths=["src/b.py"])
    with pytest.raises(ReservationConflict) as caught:
        reserve(agent(repo, "bob"), paths=["src/*.py"])
    message = caught.value.message
    assert "reserved by alice for " + cell.id in message and "reserved by carol" in message
    conflicts = caught.value.to_dict()["conflicts"]
    assert {c["holder"] for c in conflicts} == {"alice", "carol"}
    assert next(c for c in conflicts if c["holder"] == "alice")["cell"] == cell.id


def _cli(repo: Path, actor: str, *args: str, cwd: Path | None = None) -> Any:
    directory = [] if cwd is not None else ["-C", str(repo)]
    return run_hive(
        [*directory, "--actor", actor, *args],
        cwd=str(cwd or repo),
        env=agent_env(repo, actor),
        module="hive.cli.main",
    )


def test_cli_reservation_flags(ws: Workspace, repo: Path) -> None:
    import json

    cell = create_cell(ws, title="docs")
    made = _cli(
        repo, "alice", "--json", "reserve", "docs/**", "--shared", "--ttl", "60", "--cell", cell.id
    )
    assert made.returncode == 0, made.stderr
    granted = json.loads(made.stdout)["granted"][0]
    assert granted["exclusive"] is False and granted["cell"] == cell.id
    assert _cli(repo, "bob", "reserve", "docs/a.md", "--shared").returncode == 0
    listed = json.loads(_cli(repo, "bob", "--json", "reservations", "--agent", "alice").stdout)
    assert [r["agent"] for r in listed] == ["alice"]
    released = _cli(repo, "alice", "--json", "release", "--id", str(granted["id"]))
    assert json.loads(released.stdout)["released"][0]["id"] == granted["id"]
    assert _cli(repo, "alice", "release", "--id", "999").returncode == 3


def test_cli_conflict_lists_all_and_paths_are_relative_to_cwd(ws: Workspace, repo: Path) -> None:
    (repo / "sub").mkdir()
    assert _cli(repo, "alice", "reserve", "f.py", cwd=repo / "sub").returncode == 0
    assert [r.path_pattern for r in list_reservations(ws)] == ["sub/f.py"]
    assert _cli(repo, "alice", "reserve", "../top.py", cwd=repo / "sub").returncode == 0
    assert _cli(repo, "carol", "reserve", "sub/g.py").returncode == 0
    refused = _cli(repo, "bob", "reserve", "sub/*.py")
    assert refused.returncode == 4
    assert "reserved by alice" in refused.stderr and "reserved by carol" in refused.stderr
    assert _cli(repo, "alice", "release", "f.py", cwd=repo / "sub").returncode == 0
    assert {r.path_pattern for r in list_reservations(ws)} == {"top.py", "sub/g.py"}


def test_hooks_install_never_overwrites_a_hook_it_set_aside(ws: Workspace, repo: Path) -> None:
    """A user who replaces hive's hook again and again (hive chains the first of their
    hooks) keeps every one: each later one is set aside under a name of its own, and
    install says where."""
    hooks = repo / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    hook = hooks / "pre-commit"
    chained = hooks / "pre-commit.hive-chained"
    kept: list[str] = []
    for number in range(1, 4):
        hook.write_text(f"#!/bin/sh\necho mine {number}\n")
        hook.chmod(0o755)
        said = run_hive(["-C", str(repo), "hooks", "install"], module="hive.cli.main")
        assert said.returncode == 0, said.stderr
        if number > 1:
            kept.append(said.stdout.split("kept as ", 1)[1].split(" ", 1)[0])
    assert chained.read_text() == "#!/bin/sh\necho mine 1\n"
    assert kept == [f"{chained}.old", f"{chained}.old.2"]
    assert [Path(k).read_text() for k in kept] == [
        "#!/bin/sh\necho mine 2\n",
        "#!/bin/sh\necho mine 3\n",
    ]


GIT_DIR_PATHS = [".git/config", ".GIT/hooks/pre-commit", "sub/.git/x", "{src,.git}/**", ".git"]


@pytest.mark.parametrize("module", ["hive", "hive.cli.main"])
def test_a_path_in_git_s_own_directory_is_refused(ws: Workspace, repo: Path, module: str) -> None:
    """``hive reserve .git/config`` was granted (git tracks nothing there): refused, exit
    2, by the lean path and the full CLI alike, an absolute path into it too; a name
    that merely starts with .git is a file like any other."""
    for path in [*GIT_DIR_PATHS, str(repo / ".git" / "config")]:
        done = run_hive(["-C", str(repo), "reserve", path], module=module)
        assert done.returncode == 2, (path, done.stdout, done.stderr)
        assert done.stderr == (
            f"error: {path!r} is inside git's own directory (.git), which holds no tracked"
            " file: reserve the files you edit, such as src/a.py\n"
        )
    assert not git(repo, "ls-files", ".hive/reservations")
    done = run_hive(["-C", str(repo), "reserve", ".gitignore", "a/.github/x"], module=module)
    assert done.returncode == 0, done.stderr


def test_the_reserve_tool_refuses_git_s_own_directory(ws: Workspace, repo: Path) -> None:
    from hive.tools.registry import CallContext, call_tool

    ctx = CallContext(root=str(repo), agent="BlueLake")
    assert call_tool(ctx, "swarmmail_init", {"agent_name": "BlueLake"}).get("error") is None
    for path in GIT_DIR_PATHS:
        answer = call_tool(ctx, "swarmmail_reserve", {"paths": ["src/a.py", path]})
        assert answer.get("code") == "invalid_input", answer
        assert "inside git's own directory (.git)" in answer["error"]
    assert call_tool(ctx, "swarmmail_reserve", {"paths": ["src/a.py"]}).get("error") is None
