"""``hive sync`` between clones of a bare remote, paired with ``git pull --rebase && git push``.

Usage (the numbers only mean something on a quiet machine)::

    python benchmarks/bench_sync.py                          # 1,000 and 10,000 cells
    python benchmarks/bench_sync.py --sizes 1000 --runs 5 --histories 10 100
    python benchmarks/bench_sync.py --quick                  # a smoke run (seconds)

Each size is a repository with 2,000 source files (100 in a smoke run) plus N
cells (the one ``benchmarks/bench_process.py`` builds, ``gc.auto=0``), built in a
scratch directory and removed at the end. It is cloned twice for hive (``a`` and ``b``
of a bare ``origin``, each with ``hive init``, both synced once) and twice for git
(``ga`` and ``gb`` of another bare remote, no hive refs), so the two never
share a remote.

Every row alternates, run by run, the git equivalent (fresh ``git pull
--rebase`` then ``git push`` processes in a git clone, after the same kind of
change made there) with one fresh ``hive sync`` process; the set-up of each run
(the change, and bringing every clone level afterwards) is not timed, and hive's part
of it (``hive init`` of a clone, creates, updates, the syncs that level the clones)
runs in this process, through the functions a ``hive`` process calls. It reports the
median of hive, the median of git, the median of the per-run ratios and the median
CPU time (user + system, git's processes that hive runs included):

* no-op: nothing changed anywhere;
* one ``hive create`` in ``a``: ``a``'s sync (sends), then ``b``'s (receives);
* one change on each side, different cells: ``b``'s sync after ``a``'s (merges
  and sends); git: a commit of a different file in each clone;
* the same cell changed on both sides (title in ``a``, priority in ``b``, merged
  field by field): ``b``'s sync after ``a``'s; git: different lines of one file;
* the first sync of a fresh clone (``git clone`` and ``hive init`` not timed);
* a sync that sends one create after H earlier rounds of (create and sync in ``a``,
  create and sync in ``b``) for each H of ``--histories`` (the rounds made in this
  process, not timed; git: H commits pushed by ``ga``): what grows with history.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_process import REPO_CONFIG, build_repo, compile_hive, hive_command  # noqa: E402
from run import SOURCE_FILES, machine  # noqa: E402

if TYPE_CHECKING:
    from hive.domain.workspace import Workspace

HIVE_CLONES = ("a", "b")
GIT_CLONES = ("ga", "gb")
SHARED = "src/shared.txt"  # the file both git clones change (different lines)
SHARED_LINES = 40
QUICK_SOURCE_FILES = 100  # a smoke run's repository (a full run's: SOURCE_FILES, 2,000)
HEADER = ["cells", "operation", "hive", "git", "vs git (paired)", "hive CPU"]


@dataclass
class Sample:
    seconds: float
    cpu: float  # user + system of the process and the children it waited for


@dataclass
class Pairs:
    git: list[Sample] = field(default_factory=list)
    hive: list[Sample] = field(default_factory=list)

    def row(self, size: int, operation: str) -> list[str]:
        hive = statistics.median(s.seconds for s in self.hive) * 1000
        git = statistics.median(s.seconds for s in self.git) * 1000
        ratio = statistics.median(
            h.seconds / g.seconds for h, g in zip(self.hive, self.git, strict=True)
        )
        cpu = statistics.median(s.cpu for s in self.hive) * 1000
        return [
            f"{size:,}",
            operation,
            _duration(hive),
            _duration(git),
            f"{ratio:.2f}x",
            _duration(cpu),
        ]


def _duration(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


def environment() -> dict[str, str]:
    """This environment without git's and Python's tuning variables, acting as the
    clone's person (no agent: an agent would need a credential in each clone)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTHON", "HIVE_"))}
    return env


def run(argv: list[str], cwd: Path) -> Sample:
    """One process to its end: wall time and CPU (its waited-for children included)."""
    start = time.perf_counter()
    process = subprocess.Popen(
        argv,
        cwd=cwd,
        env=environment(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    output = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{' '.join(argv)} in {cwd} failed:\n{output.decode(errors='replace')}")
    return Sample(elapsed, usage.ru_utime + usage.ru_stime)


def add(first: Sample, second: Sample) -> Sample:
    return Sample(first.seconds + second.seconds, first.cpu + second.cpu)


class World:
    """The two hive clones and the two git clones of one built repository."""

    def __init__(self, base: Path, built: Path) -> None:
        self.base = base
        self.hive = hive_command()
        self.counter = 0
        shared = "".join(f"line {number}\n" for number in range(SHARED_LINES))
        (built / SHARED).write_text(shared)
        self.git_in(built, "add", SHARED)
        self.git_in(built, "commit", "-q", "-m", "a file both git clones change")
        for remote, clones in (("origin.git", HIVE_CLONES), ("git-origin.git", GIT_CLONES)):
            self.git_in(base, "clone", "-q", "--bare", str(built), remote)
            for name in clones:
                self.clone(remote, name)
        self.level()

    # -- set-up (not timed) ---------------------------------------------------------------

    def git_in(self, cwd: Path, *args: str) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=environment(), check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    def clone(self, remote: str, name: str) -> Path:
        path = self.base / name
        shutil.rmtree(path, ignore_errors=True)
        self.git_in(self.base, "clone", "-q", str(self.base / remote), name)
        for key, value in REPO_CONFIG.items():
            self.git_in(path, "config", key, value)
        if not name.startswith("g"):
            from hive.domain.setup import init_hive

            init_hive(self.workspace(name))
        return path

    def sync(self, name: str) -> Sample:
        return run([self.hive, "sync"], self.base / name)

    # hive's untimed writes and syncs run in this process: the same domain functions a
    # ``hive`` process runs, without an interpreter's start-up and imports each

    def workspace(self, name: str) -> Workspace:
        from hive.domain.workspace import Workspace

        return Workspace(str(self.base / name), from_env=False)

    def sync_untimed(self, name: str) -> None:
        from hive.domain.sync import sync

        sync(self.workspace(name), remote="origin")

    def create(self, name: str, title: str | None = None) -> str:
        from hive.domain.cells import create_cell

        self.counter += 1
        made = create_cell(self.workspace(name), title=title or f"bench sync {self.counter}")
        return made.id

    def update(self, name: str, cell_id: str, **changes: Any) -> None:
        from hive.domain.cells import update_cell

        update_cell(self.workspace(name), cell_id=cell_id, **changes)

    def commit(self, name: str, path: str, line: int | None = None) -> None:
        """A one-file change committed in a git clone (a whole file, or one line of it)."""
        self.counter += 1
        target = self.base / name / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if line is None:
            target.write_text(f"VALUE = {self.counter}\n")
        else:
            lines = target.read_text().splitlines(keepends=True)
            lines[line] = f"line {line} changed {self.counter}\n"
            target.write_text("".join(lines))
        self.git_in(self.base / name, "add", path)
        self.git_in(self.base / name, "commit", "-q", "-m", f"change {self.counter}")

    def git_sync(self, name: str) -> Sample:
        """The git equivalent: ``git pull --rebase && git push``, fresh processes."""
        cwd = self.base / name
        pulled = run(["git", "pull", "-q", "--rebase"], cwd)
        return add(pulled, run(["git", "push", "-q"], cwd))

    def level(self) -> None:
        """Every clone up to date with its remote (untimed, between runs; hive's syncs in
        this process)."""
        for name in (*HIVE_CLONES, *HIVE_CLONES):
            self.sync_untimed(name)
        for name in (*GIT_CLONES, *GIT_CLONES):
            self.git_sync(name)


class Bench:
    def __init__(self, world: World, size: int, runs: int, warm_up: bool) -> None:
        self.world = world
        self.size = size
        self.runs = runs
        self.warm_up = warm_up
        self.rows: list[list[str]] = []

    def row(self, operation: str, git: Callable[[], Sample], hive: Callable[[], Sample]) -> Pairs:
        pairs = Pairs()
        for number in range(-1 if self.warm_up else 0, self.runs):
            git_sample, hive_sample = git(), hive()
            self.world.level()
            if number >= 0:
                pairs.git.append(git_sample)
                pairs.hive.append(hive_sample)
        self.rows.append(pairs.row(self.size, operation))
        print("    " + " | ".join(self.rows[-1][1:]), file=sys.stderr, flush=True)
        return pairs

    def measure(self, histories: list[int]) -> list[list[str]]:
        w = self.world
        self.row("no-op: nothing changed anywhere", lambda: w.git_sync("ga"), lambda: w.sync("a"))
        self.sends_and_receives()
        self.both_sides()
        self.fresh_clone()
        done = 0
        for rounds in sorted(histories):
            self.add_history(rounds - done)
            done = rounds
            self.row(
                f"sync that sends one create, after {rounds:,} earlier rounds of syncs",
                lambda: self.git_sends("ga"),
                lambda: self.hive_sends("a"),
            )
        return self.rows

    def git_sends(self, name: str) -> Sample:
        self.world.commit(name, f"src/{name}.py")
        return self.world.git_sync(name)

    def hive_sends(self, name: str) -> Sample:
        self.world.create(name)
        return self.world.sync(name)

    def sends_and_receives(self) -> None:
        w = self.world
        received: dict[str, list[Sample]] = {"git": [], "hive": []}

        def git() -> Sample:
            sent = self.git_sends("ga")
            received["git"].append(w.git_sync("gb"))
            return sent

        def hive() -> Sample:
            sent = self.hive_sends("a")
            received["hive"].append(w.sync("b"))
            return sent

        self.row("one `hive create` in a: a's sync (sends it)", git, hive)
        skip = 1 if self.warm_up else 0
        pairs = Pairs(git=received["git"][skip:], hive=received["hive"][skip:])
        self.rows.append(pairs.row(self.size, "... then b's sync (receives it)"))

    def both_sides(self) -> None:
        w = self.world

        def git_each() -> Sample:
            w.commit("ga", "src/ga.py")
            w.commit("gb", "src/gb.py")
            w.git_sync("ga")
            return w.git_sync("gb")

        def hive_each() -> Sample:
            cells = self.two_cells()
            w.update("a", cells[0], priority=1)
            w.update("b", cells[1], priority=2)
            w.sync("a")
            return w.sync("b")

        def git_same() -> Sample:
            w.commit("ga", SHARED, line=0)
            w.commit("gb", SHARED, line=SHARED_LINES - 1)
            w.git_sync("ga")
            return w.git_sync("gb")

        def hive_same() -> Sample:
            cell = self.two_cells()[0]
            w.counter += 1
            w.update("a", cell, title=f"title {w.counter}")
            w.update("b", cell, priority=w.counter % 5)
            w.sync("a")
            return w.sync("b")

        self.row(
            "one change on each side, different cells: b's sync after a's", git_each, hive_each
        )
        self.row("the same cell changed on both sides: b's sync after a's", git_same, hive_same)

    def two_cells(self) -> list[str]:
        from hive.domain.cells import list_cells

        return [cell.id for cell in list_cells(self.world.workspace("a"), status="open", limit=2)]

    def fresh_clone(self) -> None:
        w = self.world

        def git() -> Sample:
            w.clone("git-origin.git", "gfresh")
            return w.git_sync("gfresh")

        def hive() -> Sample:
            w.clone("origin.git", "fresh")
            return w.sync("fresh")

        self.row("first sync of a fresh clone", git, hive)

    def add_history(self, rounds: int) -> None:
        """``rounds`` rounds of (create and sync in a, then in b), in this process; git:
        as many commits pushed by ga."""
        w = self.world
        with reported(f"{self.size:,} cells: {rounds:,} rounds of history"):
            for number in range(rounds):
                for name in HIVE_CLONES:
                    w.create(name, title=f"history {number}")
                    w.sync_untimed(name)
                w.commit("ga", "src/history.py")
                w.git_in(w.base / "ga", "push", "-q")
            w.level()


class reported:
    def __init__(self, label: str) -> None:
        self.label = label

    def __enter__(self) -> None:
        self.began = time.perf_counter()
        print(f"  {self.label} ...", file=sys.stderr, flush=True)

    def __exit__(self, *exc: object) -> None:
        took = time.perf_counter() - self.began
        print(f"  {self.label}: {took:.1f} s", file=sys.stderr, flush=True)


def render(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|---:|---|---:|---:|---:|---:|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=7, help="pairs per row (default 7)")
    parser.add_argument(
        "--histories", type=int, nargs="*", default=[10, 100, 1000], help="earlier rounds"
    )
    parser.add_argument("--no-warm-up", action="store_true", help="no untimed pair before each row")
    parser.add_argument(
        "--quick",
        action="store_true",
        help="a smoke run: 20 cells, 100 source files, 1 run, 2 rounds of history",
    )
    args = parser.parse_args()
    source_files = SOURCE_FILES
    if args.quick:  # the rows' numbers mean nothing: every row still runs once
        args.sizes, args.runs, args.histories, args.no_warm_up = [20], 1, [2], True
        source_files = QUICK_SOURCE_FILES
    compile_hive()
    rows: list[list[str]] = []
    loads = []
    for size in args.sizes:
        base = Path(tempfile.mkdtemp(prefix="hive-bench-sync-"))
        try:
            began = os.getloadavg()[0]
            with reported(f"{size:,} cells: building"):
                build_repo(base / "built", size, source_files=source_files)
                world = World(base, base / "built")
            bench = Bench(world, size, args.runs, warm_up=not args.no_warm_up)
            rows += bench.measure(args.histories)
            loads.append(f"{size:,} cells: {began:.2f} -> {os.getloadavg()[0]:.2f}")
        finally:
            shutil.rmtree(base, ignore_errors=True)
    print(render(rows))
    print(
        f"\n{args.runs} pairs per row; git: `git pull --rebase && git push`. "
        f"1-minute load average at the start and end of each size: {'; '.join(loads)}."
    )
    print(f"({machine()})", file=sys.stderr)


if __name__ == "__main__":
    main()
