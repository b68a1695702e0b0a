"""Merge driver benchmark: ``git merge`` of two branches that edited the same cells.

Usage::

    python benchmarks/bench_merge.py                      # 2,000 commits, 5 cells
    python benchmarks/bench_merge.py --commits 5000 --cells 10 --runs 9
    python benchmarks/bench_merge.py --size 20 --commits 3 --cells 1 --runs 1  # smoke run
    python benchmarks/bench_merge.py --agents 10          # 10 agents' reservation files

Builds a scratch repository (2,000 source files, 1,000 cells or ``--size``), gives it a
history of ``--commits`` hive commits (cell updates, one commit each) and packs it as
``git gc`` would, then branches: ``side`` and ``main`` each update the same ``--cells`` cells.
Each run resets ``main`` and times a fresh ``git merge side`` (git runs hive's merge
driver once per cell both sides changed; the driver searches both histories for the
newest version they share), paired with the baseline, ``git add && git commit`` of a
one-file change; the CPU time (user + system) of git and the drivers it ran is counted
too (wall-clock numbers on a busy machine are noise; CPU time much less so). Then one
driver process is run directly on one cell's three versions, as git runs it, and its
CPU time (with the ``git log`` it runs) reported. Beside it, in-process: one history
search by ``git log`` and the same search reading the commits object by object (the
fallback without a usable git).

Then the other files hive merges: from ``main``'s tip, ``--agents`` agents each reserve a
pattern and a decision is recorded in ``.hive/context.yaml``; two branches grow from
there, and on each every agent reserves one more pattern (the second branch as another
clone would: its reservation id sequence is reset, so ids clash and the merge
renumbers) and one more decision is recorded. A ``git merge`` of the two is timed as
above (one driver process per agent's file and one for the context), and one driver
run on one reservation file and on the context.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import SOURCE_FILES, SOURCE_FILES_HELP, build_repo, git, git_baseline_ms  # noqa: E402

from hive.domain.cells import list_cells, update_cell  # noqa: E402
from hive.domain.memory import CONTEXT_PATH, load_context, update_context  # noqa: E402
from hive.domain.reservations import list_reservations, reserve  # noqa: E402
from hive.domain.reservecore import SEQUENCE_FILE, reservation_path  # noqa: E402
from hive.domain.workspace import Workspace  # noqa: E402
from hive.git.syncref import _path_versions_read, path_versions  # noqa: E402
from hive.store.layout import cell_path  # noqa: E402


def make_history(repo: Path, commits: int) -> list[str]:
    """``commits`` one-cell updates; returns the ids of the cells, oldest first."""
    ws = Workspace(str(repo), actor="bench")
    ids = sorted(cell.id for cell in list_cells(ws, status="all"))
    for number in range(commits):
        update_cell(ws, cell_id=ids[number % len(ids)], append_notes=f"history {number}")
    git(repo, "gc", "-q")
    return ids


def make_branches(repo: Path, cells: list[str]) -> None:
    """``side`` and ``main`` each update ``cells``; tag ``before-merge`` marks main's tip."""
    ws = Workspace(str(repo), actor="bench")
    git(repo, "branch", "side")
    for cell_id in cells:
        update_cell(ws, cell_id=cell_id, add_labels=["main-side"])
    git(repo, "tag", "before-merge")
    git(repo, "checkout", "-q", "side")
    for cell_id in cells:
        update_cell(ws, cell_id=cell_id, add_labels=["other-side"])
    git(repo, "checkout", "-q", "main")


def make_reservation_branches(repo: Path, agents: int) -> list[str]:
    """``res-main`` and ``res-side`` (from ``main``'s tip, after a first reservation per
    agent) each add one reservation per agent and a decision to the context; tag
    ``res-before-merge`` marks ``res-main``'s tip. Returns the agents."""
    names = [f"agent-{number}" for number in range(agents)]
    git(repo, "checkout", "-q", "-b", "res-main", "main")
    for number, name in enumerate(names):
        reserve(Workspace(str(repo), actor=name), paths=[f"src/pkg{number:02d}/base/**"])
    update_context(Workspace(str(repo), actor=names[0]), section="decisions", add="base")
    git(repo, "branch", "res-side")
    for side in ("main", "side"):
        git(repo, "checkout", "-q", f"res-{side}")
        sequence = Workspace(str(repo)).git.paths.hive_state_dir
        Path(sequence, SEQUENCE_FILE).unlink(missing_ok=True)  # as another clone: ids clash
        for number, name in enumerate(names):
            ws = Workspace(str(repo), actor=name)
            reserve(ws, paths=[f"src/pkg{number:02d}/{side}/**"])
        update_context(Workspace(str(repo), actor=names[0]), section="decisions", add=side)
    git(repo, "checkout", "-q", "res-main")
    git(repo, "tag", "res-before-merge")
    return names


def children_cpu_ms() -> float:
    """CPU time (user + system) of the finished child processes so far."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (used.ru_utime + used.ru_stime) * 1000


def merge_ms(repo: Path) -> tuple[float, float]:
    """(wall-clock ms, CPU ms of git and every driver it ran) of one ``git merge``."""
    git(repo, "reset", "-q", "--hard", "before-merge")
    start, cpu = time.perf_counter(), children_cpu_ms()
    git(repo, "merge", "-q", "--no-edit", "side")
    elapsed, cpu = (time.perf_counter() - start) * 1000, children_cpu_ms() - cpu
    merged = Workspace(str(repo))
    assert all("other-side" in cell.labels for cell in list_cells(merged, label="main-side"))
    return elapsed, cpu


def reservations_merge_ms(repo: Path, agents: int) -> tuple[float, float]:
    """(wall-clock ms, CPU ms of git and every driver it ran) of one ``git merge
    res-side`` into ``res-main``: every agent's file and the context."""
    git(repo, "reset", "-q", "--hard", "res-before-merge")
    start, cpu = time.perf_counter(), children_cpu_ms()
    git(repo, "merge", "-q", "--no-edit", "res-side")
    elapsed, cpu = (time.perf_counter() - start) * 1000, children_cpu_ms() - cpu
    merged = Workspace(str(repo))
    held = list_reservations(merged)
    assert len(held) == 3 * agents, held
    assert len({(r.agent, r.id) for r in held}) == len(held)  # clashing ids renumbered
    assert {"main", "side"} <= {d.get("decision") for d in load_context(merged).decisions}
    return elapsed, cpu


def driver_cpu_ms(repo: Path, path: str, runs: int, branches: tuple[str, str]) -> float:
    """Median CPU ms (the driver process and the git it runs) of one run of hive's merge
    driver on one file both branches changed, as ``git merge`` of ``branches`` (the tag
    of ours, their branch) runs it."""
    git(repo, "reset", "-q", "--hard", branches[0])
    side = git_bytes(repo, "rev-parse", branches[1]).decode().strip()
    base = git_bytes(repo, "merge-base", "HEAD", side).decode().strip()
    env = {**os.environ, f"GITHEAD_{side}": branches[1]}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed: compiled modules cached
    samples = []
    with tempfile.TemporaryDirectory(prefix="hive-bench-driver-") as scratch:
        files = [Path(scratch, name) for name in ("base", "ours", "theirs")]
        for _ in range(runs + 1):  # the first run writes the bytecode caches
            for file, commit in zip(files, (base, "HEAD", side), strict=True):
                file.write_bytes(git_bytes(repo, "show", f"{commit}:{path}"))
            command = [sys.executable, "-m", "hive.cli.merge_driver", *map(str, files), path]
            cpu = children_cpu_ms()
            subprocess.run(command, cwd=repo, env=env, check=True, capture_output=True)
            samples.append(children_cpu_ms() - cpu)
    return statistics.median(samples[1:])


def git_bytes(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def search_ms(repo: Path, path: str, runs: int) -> tuple[float, float]:
    ws = Workspace(str(repo))
    head = ws.git.head().commit
    assert head is not None, "the benchmark repository has commits"
    by_git, by_reading = [], []
    for _ in range(runs):
        start = time.perf_counter()
        path_versions(ws.git, head, path, limit=2000)
        by_git.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        _path_versions_read(ws.git, head, path, limit=2000)
        by_reading.append((time.perf_counter() - start) * 1000)
    return statistics.median(by_git), statistics.median(by_reading)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1000, help="cells in the repository")
    parser.add_argument("--source-files", type=int, default=SOURCE_FILES, help=SOURCE_FILES_HELP)
    parser.add_argument("--commits", type=int, default=2000, help="hive commits of history")
    parser.add_argument("--cells", type=int, default=5, help="cells both branches change")
    parser.add_argument("--runs", type=int, default=7, help="merges timed (default 7)")
    parser.add_argument(
        "--agents", type=int, default=3, help="agents whose reservation files both branches change"
    )
    args = parser.parse_args()
    if not 1 <= args.cells <= args.size:
        raise SystemExit("--cells: between 1 and --size")
    if not 1 <= args.agents <= 40:
        raise SystemExit("--agents: between 1 and 40")
    with tempfile.TemporaryDirectory(prefix="hive-bench-merge-") as scratch:
        repo = build_repo(Path(scratch), args.size, args.source_files)
        git(repo, "config", "gc.auto", "0")
        ids = make_history(repo, args.commits)
        make_branches(repo, ids[: args.cells])
        merges, cpus, baselines = [], [], []
        for _ in range(args.runs):  # paired: a merge, then the baseline, in each run
            wall, cpu = merge_ms(repo)
            merges.append(wall)
            cpus.append(cpu)
            baselines.append(git_baseline_ms(repo, 1))
        merge, baseline = statistics.median(merges), statistics.median(baselines)
        by_git, by_reading = search_ms(repo, cell_path(ids[0]), args.runs)
        driver = driver_cpu_ms(repo, cell_path(ids[0]), args.runs, ("before-merge", "side"))
        names = make_reservation_branches(repo, args.agents)
        files = args.agents + 1  # every agent's reservation file and the context
        reservation_cpus = [reservations_merge_ms(repo, args.agents)[1] for _ in range(args.runs)]
        res_branches = ("res-before-merge", "res-side")
        res_driver = driver_cpu_ms(repo, reservation_path(names[0]), args.runs, res_branches)
        context_driver = driver_cpu_ms(repo, CONTEXT_PATH, args.runs, res_branches)
    print(f"history: {args.commits} hive commits, packed; {args.cells} cells changed on both sides")
    print(f"git merge with hive's driver     {merge:8.1f} ms  ({merge / baseline:.1f}x baseline)")
    print(f"  per cell both sides changed    {merge / args.cells:8.1f} ms")
    print(f"  CPU per cell (all processes)   {statistics.median(cpus) / args.cells:8.1f} ms")
    print(f"one driver run, CPU (with its git) {driver:6.1f} ms")
    print(f"git add && git commit (baseline) {baseline:8.1f} ms")
    print(f"in-process history search, git log          {by_git:8.1f} ms")
    print(f"in-process history search, object by object {by_reading:8.1f} ms")
    print(f"{args.agents} agents' reservation files and the context changed on both sides")
    reservation_cpu = statistics.median(reservation_cpus) / files
    print(f"  CPU per file of that git merge (all processes) {reservation_cpu:8.1f} ms")
    print(f"one driver run on a reservation file, CPU (with its git) {res_driver:6.1f} ms")
    print(f"one driver run on the context, CPU (with its git)        {context_driver:6.1f} ms")


if __name__ == "__main__":
    main()
