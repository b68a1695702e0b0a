"""Whole fresh processes: every ``hive`` command timed as a new process, paired with git.

Usage (the numbers only mean something on a quiet machine)::

    python benchmarks/bench_process.py                        # 1,000 and 10,000 cells
    python benchmarks/bench_process.py --sizes 1000 --runs 5  # a quick check
    python benchmarks/bench_process.py --sizes 10000 100000 --write-docs
    python benchmarks/bench_process.py --sizes 20 --runs 1 --cold-runs 1 --no-warm-up --repos DIR

Each size is a repository with 2,000 source files (``--source-files``) plus N cells
(``gc.auto=0``), built once (cell files written with hive's own encoder, then one plain
``git add -A && git commit``, then ``git repack -a -d`` so that, as in a fresh
clone, the objects are packed; ``--loose`` keeps them loose) under
``benchmarks/results/process/`` and reset to its built commit on every later
run (``--rebuild`` builds it again).

Every row alternates, pair by pair, a fresh ``git add FILE && git commit`` of a
one-file change (two processes, no hooks) with a fresh ``hive`` process (the
console script of this venv) on the same repository, and reports the median of
hive, the median of git and the median of the per-pair ratios, plus hive's peak
resident memory (GNU time's ``%M``). Special rows:

* "fresh clone": ``ready --json``, ``list`` and the hook measured first, before
  any hive write, while ``.hive`` is in the pack (the other rows come after the
  write rows, when HEAD's ``.hive`` is a tree hive wrote, a loose object);
* the pre-commit hook: ``git commit`` with the hook ``hive hooks install``
  writes, against the same commit with ``--no-verify``, paired; the hive column
  is the median of the per-pair differences (what the hook adds); the "agent" rows
  commit as an agent with its credential (``HIVE_AGENT_TOKEN``), as a worker of
  ``hive swarm run`` does: the file under the agent's own exclusive reservation (the
  pre-commit hook alone installed), then with the cell it has in progress (the
  commit-msg hook alone, which adds its ``Hive-Cell:`` trailer);
* ``ready --json``, first after a write: an untimed ``hive update`` of one open cell
  before each timed ``ready`` (no ready list of the new state stored yet);
* the first command with no index: ``<git dir>/hive/index.sqlite3*`` deleted,
  then ``hive ready --json`` (time and peak memory).

In-process rows (``--no-in-process`` skips them) time the library functions the
MCP server calls, on the same repository and paired the same way, for
information beside the process numbers.
"""

from __future__ import annotations

import argparse
import contextlib
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from run import SOURCE_FILES, SOURCE_FILES_HELP, machine, synthetic_cells, write_docs  # noqa: E402

import hive  # noqa: E402
from hive.store.cells import encode_cell  # noqa: E402
from hive.store.layout import cell_path  # noqa: E402

BUILD_FORMAT = 2  # bump when the built repositories change shape
AGENT = "bench"
SOURCE_PATH = "src/pkg00/mod0.py"  # the file every paired commit changes
COMMITTER = "bench-worker"  # the agent of the agent hook rows (its own credential)
IN_PROCESS_AGENT = "bench-mcp"
PEER = "peer"
PREFIX = "bn"
DEFAULT_REPOS = ROOT / "benchmarks" / "results" / "process"
INDEX_GLOB = "hive/index.sqlite3*"
ID_PATTERN = re.compile(rf"\b{PREFIX}-[0-9a-z]+\b")
IDENTITY = {"user.name": AGENT, "user.email": "bench@example.com"}
REPO_CONFIG = {**IDENTITY, "gc.auto": "0", "commit.gpgsign": "false"}


@dataclass
class Sample:
    """One process (or a few in a row): wall time and the largest peak RSS."""

    seconds: float
    maxrss_kb: int = 0


@dataclass
class Pairs:
    """Paired samples of one row: git then hive, pair by pair."""

    git: list[float] = field(default_factory=list)
    hive: list[float] = field(default_factory=list)
    maxrss_kb: list[int] = field(default_factory=list)

    def add(self, git: Sample, hive: Sample) -> None:
        self.git.append(git.seconds)
        self.hive.append(hive.seconds)
        self.maxrss_kb.append(hive.maxrss_kb)

    @property
    def ratio(self) -> float:
        return statistics.median(h / g for h, g in zip(self.hive, self.git, strict=True))


@dataclass
class Target:
    """A bar from issue 10: at most ``ms`` (absolute) or ``ratio`` x git, and ``mb``."""

    ms: float | None = None
    ratio: float | None = None
    mb: float | None = None

    def text(self) -> str:
        parts = []
        if self.ratio is not None:
            parts.append(f"<= {self.ratio:g}x git")
        if self.ms is not None:
            limit = f"{self.ms / 1000:g} s" if self.ms >= 1000 else f"{self.ms:g} ms"
            parts.append(f"<= {limit}")
        if self.mb is not None:
            parts.append(f"<= {self.mb:g} MB")
        return ", ".join(parts)

    def met(self, ms: float, ratio: float | None, mb: float | None) -> bool:
        checks = [
            self.ms is None or ms <= self.ms,
            self.ratio is None or (ratio is not None and ratio <= self.ratio),
            self.mb is None or (mb is not None and mb <= self.mb),
        ]
        return all(checks)


@dataclass
class Row:
    size: int
    operation: str
    hive_ms: float
    git_ms: float | None
    ratio: float | None
    peak_mb: float | None
    target: Target | None
    added: bool = False  # hive_ms is an added cost (the hook), shown with a +

    def cells(self) -> list[str]:
        hive = ("+" if self.added else "") + _duration(self.hive_ms)
        git = _duration(self.git_ms) if self.git_ms is not None else ""
        ratio = f"{self.ratio:.2f}x" if self.ratio is not None else ""
        peak = f"{self.peak_mb:.0f} MB" if self.peak_mb is not None else ""
        target = self.target.text() if self.target else ""
        met = ""
        if self.target:
            met = "yes" if self.target.met(self.hive_ms, self.ratio, self.peak_mb) else "**no**"
        return [f"{self.size:,}", self.operation, hive, git, ratio, peak, target, met]


def _duration(ms: float) -> str:
    return f"{ms / 1000:.2f} s" if ms >= 1000 else f"{ms:.1f} ms"


# --- processes -------------------------------------------------------------------------


def hive_command() -> str:
    """The ``hive`` console script installed beside this Python (the venv's)."""
    found = shutil.which("hive", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("no 'hive' console script beside this Python: run scripts/setup.sh dev")
    return found


def environment(agent: str = AGENT) -> dict[str, str]:
    """This environment without git's and Python's tuning variables (a shell's usual one:
    e.g. PYTHONDONTWRITEBYTECODE would make every process compile hive from source)."""
    env = {
        key: value for key, value in os.environ.items() if not key.startswith(("GIT_", "PYTHON"))
    }
    env.pop("HIVE_BYPASS", None)
    env["HIVE_AGENT"] = agent
    return env


def time_binary() -> str | None:
    """GNU time, which measures a process it forks itself (from a small process)."""
    found = shutil.which("time")
    if found is None:
        return None
    probe = subprocess.run([found, "-q", "-f", "%M", "true"], capture_output=True, text=True)
    return found if probe.returncode == 0 and probe.stderr.strip().isdigit() else None


TIME = time_binary()


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[Sample, str]:
    """Run one process to its end: its wall time, its peak RSS and its output.

    The peak comes from GNU time when there is one: a child forked from this (large)
    process reports at least this process's RSS as its own peak (Linux keeps the
    high-water mark across exec), so ``wait4`` alone would overstate small processes.
    Every process, git's and hive's, runs the same way, so the pairs stay fair."""
    with tempfile.TemporaryFile() as output, tempfile.NamedTemporaryFile("r") as peak:
        wrapped = [TIME, "-q", "-f", "%M", "-o", peak.name, *argv] if TIME else argv
        start = time.perf_counter()
        process = subprocess.Popen(
            wrapped, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=output, stderr=output
        )
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        output.seek(0)
        text = output.read().decode("utf-8", errors="replace")
        maxrss_kb = int(peak.read().split()[-1]) if TIME else usage.ru_maxrss
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} exited {process.returncode}:\n{text}")
    return Sample(elapsed, maxrss_kb), text


def compile_hive() -> None:
    """Byte-compile hive as an installer would, so no measured process compiles it."""
    package = Path(str(hive.__file__)).parent
    command = [sys.executable, "-m", "compileall", "-q", str(package)]
    subprocess.run(command, env=environment(), check=True)


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=repo, env=environment(), check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


class Bench:
    """One built repository and the processes run on it."""

    def __init__(self, repo: Path, size: int, runs: int, *, warm_up: bool = True) -> None:
        self.repo = repo
        self.size = size
        self.runs = runs
        self.warm_up = warm_up  # one untimed pair before each row's pairs
        self.hive = hive_command()
        self._counter = iter(range(10**6, 10**9))
        self.git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))

    def hive_run(self, *args: str, agent: str = AGENT) -> tuple[Sample, str]:
        return timed([self.hive, *args], self.repo, environment(agent))

    def hive_step(self, command: list[str] | Callable[[int], list[str]]) -> Callable[[int], Sample]:
        """A paired step: one ``hive`` process (the command line may depend on the run)."""

        def step(number: int) -> Sample:
            args = command(number) if callable(command) else command
            return self.hive_run(*args)[0]

        return step

    def touch_source(self) -> str:
        (self.repo / SOURCE_PATH).write_text(f"VALUE = {next(self._counter)}\n")
        return SOURCE_PATH

    def git_change(self) -> Sample:
        """The baseline: a one-file change, then fresh ``git add FILE`` and ``git commit``."""
        path = self.touch_source()
        env = environment()
        added, _ = timed(["git", "add", path], self.repo, env)
        committed, _ = timed(["git", "commit", "-q", "-m", "baseline"], self.repo, env)
        return Sample(added.seconds + committed.seconds, max(added.maxrss_kb, committed.maxrss_kb))

    def paired(
        self, step: Callable[[int], Sample], runs: int | None = None, *, warm_up: bool = True
    ) -> Pairs:
        """``runs`` pairs of (git baseline, ``step``), after one untimed warm-up pair."""
        if warm_up and self.warm_up:
            self.git_change()
            step(-1)
        pairs = Pairs()
        for number in range(runs or self.runs):
            git_sample = self.git_change()
            pairs.add(git_sample, step(number))
        return pairs

    def row(self, operation: str, pairs: Pairs, target: Target | None, *, peak: bool = True) -> Row:
        peak_mb = statistics.median(pairs.maxrss_kb) / 1024 if peak else None
        return progress(
            Row(
                self.size,
                operation,
                statistics.median(pairs.hive) * 1000,
                statistics.median(pairs.git) * 1000,
                pairs.ratio,
                peak_mb,
                target,
            )
        )

    def set_hook(self, installed: bool, only: str | None = None) -> None:
        """hive's hooks installed (those ``hive hooks install`` writes; ``only``: that one
        alone) or removed: untimed set-up, done in this process (a full-CLI process costs
        ~0.4 s of CPU)."""
        from hive.domain.hooks import HOOKS, install_hook, uninstall_hook
        from hive.domain.workspace import Workspace

        ws = Workspace(str(self.repo), from_env=False)
        done = install_hook(ws) if installed else uninstall_hook(ws)
        actions = {result.action for result in (done, *done.also)}
        if not actions <= {"installed", "removed", "absent"} or actions == {"absent"}:
            raise SystemExit(f"hive's hooks: {', '.join(sorted(actions))}")
        for name in HOOKS if installed and only else ():
            if name != only:
                (self.git_dir / "hooks" / name).unlink()

    def agent_environment(self) -> dict[str, str]:
        """The environment of the agent COMMITTER, proven by a credential issued here,
        holding an exclusive reservation over the file each commit changes and one cell
        in progress (untimed set-up, in this process)."""
        from hive.domain.cells import create_cell, start_cell
        from hive.domain.identity import issue_credential
        from hive.domain.reservations import reserve
        from hive.domain.workspace import Workspace

        token = issue_credential(
            Workspace(str(self.repo), from_env=False), name=COMMITTER, replace=True
        ).token
        ws = Workspace(str(self.repo), actor=COMMITTER)
        reserve(ws, paths=[SOURCE_PATH])
        start_cell(ws, cell_id=create_cell(ws, title="bench: the agent's work").id)
        env = environment(COMMITTER)
        env["HIVE_AGENT_TOKEN"] = token
        return env

    def drop_index(self) -> None:
        for path in glob.glob(str(self.git_dir / INDEX_GLOB)):
            os.remove(path)


# --- the repositories ------------------------------------------------------------------


def prepare_repo(
    base: Path,
    size: int,
    *,
    rebuild: bool = False,
    loose: bool = False,
    source_files: int = SOURCE_FILES,
) -> tuple[Path, dict[str, str]]:
    """The repository of ``size`` cells and ``source_files`` source files, built once and
    reset to its built commit."""
    name = f"repo-{size}" + ("-loose" if loose else "")
    if source_files != SOURCE_FILES:
        name += f"-{source_files}-files"
    repo = base / name
    stamp = base / f"{name}.json"
    info: dict[str, str] | None = None
    if stamp.exists() and repo.exists() and not rebuild:
        loaded = json.loads(stamp.read_text())
        if loaded.get("format") == str(BUILD_FORMAT):
            info = loaded
    if info is None:
        stamp.unlink(missing_ok=True)
        shutil.rmtree(repo, ignore_errors=True)
        info = build_repo(repo, size, loose=loose, source_files=source_files)
        stamp.write_text(json.dumps(info))
    reset_repo(repo, info["base"])
    return repo, info


def build_repo(
    repo: Path, size: int, *, loose: bool = False, source_files: int = SOURCE_FILES
) -> dict[str, str]:
    """``source_files`` (2,000) committed source files, ``hive init``, then ``size`` cells
    in one git commit; then everything packed, as in a fresh clone (unless ``loose``)."""
    began = time.perf_counter()
    print(f"building {size:,} cells + {source_files:,} source files in {repo} ...", file=sys.stderr)
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for key, value in REPO_CONFIG.items():
        git(repo, "config", key, value)
    for number in range(source_files):
        package = repo / "src" / f"pkg{number % 40:02d}"
        package.mkdir(parents=True, exist_ok=True)
        (package / f"mod{number}.py").write_text(f"VALUE = {number}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "source files")
    timed([hive_command(), "init", "--prefix", PREFIX], repo, environment())
    ids = write_cells(repo, size)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"bench: {size} cells", "-m", "Hive-Event: import")
    if not loose:
        git(repo, "repack", "-a", "-d", "-q")
    open_id = ids[1]  # number 0 is closed (every third is)
    info = {"format": str(BUILD_FORMAT), "base": git(repo, "rev-parse", "HEAD"), "show": open_id}
    print(f"  built in {time.perf_counter() - began:.1f} s", file=sys.stderr)
    return info


def write_cells(repo: Path, count: int) -> list[str]:
    """``count`` cell files written straight into the work tree with hive's encoder."""
    ids = []
    for cell in synthetic_cells(count, PREFIX, AGENT):
        path = repo / cell_path(cell.id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(encode_cell(cell))
        ids.append(cell.id)
    return ids


def reset_repo(repo: Path, base: str) -> None:
    """Back to the built commit: no hook, no mail, nothing left by an earlier run."""
    git(repo, "reset", "-q", "--hard", base)
    git(repo, "clean", "-q", "-f", "-d")
    for ref in git(repo, "for-each-ref", "--format=%(refname)", "refs/hive").splitlines():
        git(repo, "update-ref", "-d", ref)
    git_dir = Path(git(repo, "rev-parse", "--absolute-git-dir"))
    for name in ("pre-commit", "pre-commit.hive-chained", "commit-msg", "commit-msg.hive-chained"):
        (git_dir / "hooks" / name).unlink(missing_ok=True)
    # agents registered by an earlier run (their names would need its credentials)
    (git_dir / "hive" / "identities.json").unlink(missing_ok=True)


# --- the rows ---------------------------------------------------------------------------


def targets(size: int) -> dict[str, Target]:
    cold = Target(ms=20_000, mb=400) if size >= 100_000 else Target(ms=2_000, mb=150)
    return {
        "create": Target(ratio=1.5),
        "hook": Target(ms=50),
        "list": Target(ms=150),
        "help": Target(ms=120),
        "ready": Target(ms=35),
        "cold": cold,
        "swarm_complete": Target(ms=30),
        "coord": Target(ms=10),
    }


def measure_processes(
    bench: Bench, info: dict[str, str], cold_runs: int, *, fresh_clone: bool
) -> list[Row]:
    """Every row of one repository. With ``fresh_clone`` (packed objects) the reads and
    the hook are measured twice: first as a fresh clone has ``.hive`` (packed, no hive
    write yet), then after the write rows (hive writes loose objects)."""
    bar = targets(bench.size)
    bench.hive_run("ready", "--json")  # the index knows the built state (built when missing)
    rows: list[Row] = []
    if fresh_clone:
        clone = ", fresh clone"
        rows += measure_reads(bench, ["ready", "list"], clone)
        rows.append(measure_hook(bench, bar["hook"], clone))
    rows += measure_writes(bench)
    rows.append(measure_ready_after_write(bench))
    rows += measure_reads(bench, ["ready", "list", "show", "help"], "", info["show"])
    rows.append(measure_hook(bench, bar["hook"]))
    env = bench.agent_environment()
    rows.append(measure_hook(bench, bar["hook"], ", agent", env=env, only="pre-commit"))
    rows.append(measure_hook(bench, bar["hook"], ", agent", env=env, only="commit-msg"))
    rows.append(measure_cold(bench, bar["cold"], cold_runs))
    return rows


def measure_writes(bench: Bench) -> list[Row]:
    created: list[str] = []

    def create(number: int) -> Sample:
        sample, text = bench.hive_run("create", f"bench create {number}")
        found = ID_PATTERN.search(text)
        if found is None:
            raise SystemExit(f"no cell id in the output of hive create: {text!r}")
        created.append(found.group(0))
        return sample

    rows = [bench.row("`hive create`", bench.paired(create), targets(bench.size)["create"])]
    updating, closing = iter(created), iter(created)
    pattern = "src/pkg39/bench{}.py"
    writes: list[tuple[str, Callable[[int], list[str]]]] = [
        ("`hive update ID -p 1`", lambda n: ["update", next(updating), "-p", "1"]),
        ("`hive close ID`", lambda n: ["close", next(closing)]),
        ("`hive reserve PATTERN` (as an agent)", lambda n: ["reserve", pattern.format(n)]),
        ("`hive release PATTERN`", lambda n: ["release", pattern.format(n)]),
        ("`hive mail send`", lambda n: ["mail", "send", PEER, "-s", "bench", "-b", "hello"]),
        (
            "`hive mail send --thread ID`",
            lambda n: ["mail", "send", PEER, "-s", "bench", "--thread", created[0]],
        ),
    ]
    bench.hive_run("mail", "init")
    bench.hive_run("mail", "init", agent=PEER)
    for operation, command in writes:
        rows.append(bench.row(operation, bench.paired(bench.hive_step(command)), None))
    return rows


def measure_ready_after_write(bench: Bench) -> Row:
    """``hive ready --json`` as the first read of a new state, as an agent's "close, then
    ready" meets it: before each timed ``ready`` an untimed ``hive update`` moves one open
    cell's priority (so the ready list changes and no list of the new state is stored)."""
    _, text = bench.hive_run("create", "bench ready after a write")
    found = ID_PATTERN.search(text)
    if found is None:
        raise SystemExit(f"no cell id in the output of hive create: {text!r}")
    moved = found.group(0)

    def step(number: int) -> Sample:
        bench.hive_run("update", moved, "-p", "1" if number % 2 == 0 else "3")
        return bench.hive_run("ready", "--json")[0]

    operation = "`hive ready --json`, first after a write"
    return bench.row(operation, bench.paired(step), targets(bench.size)["ready"])


def measure_reads(bench: Bench, which: list[str], suffix: str, show_id: str = "") -> list[Row]:
    bar = targets(bench.size)
    reads: dict[str, tuple[str, list[str], Target | None]] = {
        "ready": ("`hive ready --json`", ["ready", "--json"], bar["ready"]),
        "list": ("`hive list`", ["list"], bar["list"]),
        "show": ("`hive show ID`", ["show", show_id], None),
        "help": ("`hive --help`", ["--help"], bar["help"]),
    }
    rows = []
    for key in which:
        operation, args, target = reads[key]
        rows.append(bench.row(operation + suffix, bench.paired(bench.hive_step(args)), target))
    return rows


def measure_hook(
    bench: Bench,
    target: Target,
    suffix: str = "",
    *,
    env: dict[str, str] | None = None,
    only: str | None = None,
) -> Row:
    """``git commit`` with hive's hooks (``only``: that one alone, the row named after
    it; else the pre-commit hook's row) against the same commit without them, in
    ``env`` (default: a person's, who has ``HIVE_AGENT`` but no credential)."""
    bench.set_hook(installed=True, only=only)
    env = env or environment()
    pairs = Pairs()

    def commit(*extra: str) -> Sample:
        path = bench.touch_source()
        subprocess.run(["git", "add", path], cwd=bench.repo, env=env, check=True)
        return timed(["git", "commit", "-q", *extra, "-m", "hook"], bench.repo, env)[0]

    if bench.warm_up:
        commit("--no-verify")
        commit()
    for _ in range(bench.runs):
        pairs.add(commit("--no-verify"), commit())
    added = statistics.median(h - g for h, g in zip(pairs.hive, pairs.git, strict=True))
    if only == "commit-msg" and "Hive-Cell:" not in git(bench.repo, "log", "-1", "--format=%B"):
        raise SystemExit("the commit-msg hook added no Hive-Cell trailer to the agent's commit")
    bench.set_hook(installed=False)
    return progress(
        Row(
            bench.size,
            f"{only or 'pre-commit'} hook{suffix}: added to `git commit` (git: without the hook)",
            added * 1000,
            statistics.median(pairs.git) * 1000,
            pairs.ratio,
            statistics.median(pairs.maxrss_kb) / 1024,
            target,
            added=True,
        )
    )


def measure_cold(bench: Bench, target: Target, runs: int) -> Row:
    """The first command with no index: the index files deleted, then ``hive ready --json``."""

    def cold(number: int) -> Sample:
        bench.drop_index()
        return bench.hive_run("ready", "--json")[0]

    pairs = bench.paired(cold, runs, warm_up=False)
    operation = "first command with no index (`hive ready --json`, index deleted)"
    row = bench.row(operation, pairs, target)
    row.peak_mb = max(pairs.maxrss_kb) / 1024  # the bar is on the peak
    return row


# --- in-process (for information) ------------------------------------------------------


def measure_in_process(bench: Bench) -> list[Row]:
    """The library calls the MCP server makes, timed in this process, paired with git."""
    from hive.domain.cells import create_cell, start_cell
    from hive.domain.epics import create_epic
    from hive.domain.identity import mail_init
    from hive.domain.mail import send_message
    from hive.domain.reservations import release, reserve
    from hive.domain.swarm.complete import swarm_complete
    from hive.domain.workspace import Workspace

    bar = targets(bench.size)
    # its own name: the fresh-process rows registered AGENT from the CLI already
    ws = Workspace(str(bench.repo), actor=IN_PROCESS_AGENT, session="bench:in-process")
    mail_init(ws, agent_name=IN_PROCESS_AGENT)
    rows = [
        _in_process(
            bench, "in-process: create", lambda n: create_cell(ws, title=f"in-process {n}"), None
        )
    ]
    pattern = "src/pkg38/inproc{}.py"
    reserving = ("in-process: reserve", lambda n: reserve(ws, paths=[pattern.format(n)]))
    releasing = ("in-process: release", lambda n: release(ws, paths=[pattern.format(n)]))
    sending = (
        "in-process: mail send",
        lambda n: send_message(ws, to=[PEER], subject="bench", body="hello"),
    )
    for operation, action in (reserving, releasing, sending):
        rows.append(_in_process(bench, operation, action, bar["coord"]))
    subtasks = [
        {"title": f"subtask {n}", "files": [f"src/pkg{n % 40:02d}/mod{n}*.py"]}
        for n in range(bench.runs + 1)
    ]
    cells = create_epic(
        ws, title="bench epic", subtasks=subtasks, metadata={"strategy": "file-based"}
    )
    pending = iter(cells[1:])

    def complete(number: int) -> Sample:
        cell = next(pending)
        worker = ws.for_actor(f"worker{number + 1}")
        start_cell(worker, cell_id=cell.id)
        patterns = [f"src/pkg{number % 40:02d}/bench{number}_{k}/**" for k in range(3)]
        reserve(worker, paths=patterns, reason="bench", cell=cell.id)
        begin = time.perf_counter()
        swarm_complete(worker, agent_name=worker.actor, cell_id=cell.id, summary="done")
        return Sample(time.perf_counter() - begin)

    pairs = bench.paired(complete)
    operation = "in-process: swarm_complete (3 released + outcome)"
    rows.append(bench.row(operation, pairs, bar["swarm_complete"], peak=False))
    return rows


def _in_process(
    bench: Bench, operation: str, action: Callable[[int], object], target: Target | None
) -> Row:
    def step(number: int) -> Sample:
        begin = time.perf_counter()
        action(number)
        return Sample(time.perf_counter() - begin)

    return bench.row(operation, bench.paired(step), target, peak=False)


# --- output -----------------------------------------------------------------------------


HEADER = ["cells", "operation", "hive", "git", "vs git (paired)", "hive peak RSS", "target", "met"]


def render(rows: list[Row]) -> str:
    lines = ["| " + " | ".join(HEADER) + " |", "|---:|---|---:|---:|---:|---:|---|---|"]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


def progress(row: Row) -> Row:
    """Show a finished row on stderr (a run at 100,000 cells takes a while)."""
    print("    " + " | ".join(row.cells()[1:]), file=sys.stderr, flush=True)
    return row


def load_average() -> float:
    return os.getloadavg()[0]


@contextlib.contextmanager
def reported(label: str) -> Iterator[None]:
    began = time.perf_counter()
    print(f"  {label} ...", file=sys.stderr, flush=True)
    yield
    print(f"  {label}: {time.perf_counter() - began:.1f} s", file=sys.stderr, flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=15, help="pairs per row (default 15)")
    parser.add_argument("--cold-runs", type=int, default=5, help="pairs of the no-index row")
    parser.add_argument("--repos", type=Path, default=DEFAULT_REPOS, help="where repos are kept")
    parser.add_argument("--rebuild", action="store_true", help="build the repositories again")
    parser.add_argument("--source-files", type=int, default=SOURCE_FILES, help=SOURCE_FILES_HELP)
    parser.add_argument(
        "--loose", action="store_true", help="keep the built objects loose (default: packed)"
    )
    parser.add_argument("--no-in-process", action="store_true", help="skip in-process rows")
    parser.add_argument(
        "--no-warm-up", action="store_true", help="no untimed pair before each row (smoke runs)"
    )
    parser.add_argument("--write-docs", action="store_true")
    args = parser.parse_args()
    args.repos.mkdir(parents=True, exist_ok=True)
    compile_hive()
    rows: list[Row] = []
    loads: dict[int, tuple[float, float]] = {}
    for size in args.sizes:
        repo, info = prepare_repo(
            args.repos, size, rebuild=args.rebuild, loose=args.loose, source_files=args.source_files
        )
        bench = Bench(repo, size, args.runs, warm_up=not args.no_warm_up)
        began = load_average()
        with reported(f"{size:,} cells: fresh processes"):
            rows += measure_processes(bench, info, args.cold_runs, fresh_clone=not args.loose)
        if not args.no_in_process:
            with reported(f"{size:,} cells: in-process"):
                rows += measure_in_process(bench)
        loads[size] = (began, load_average())
        reset_repo(repo, info["base"])
        (args.repos / "last-run.md").write_text(render(rows) + "\n")
    table = render(sorted(rows, key=lambda row: row.size))
    during = "; ".join(
        f"{size:,} cells: {start:.2f} -> {end:.2f}" for size, (start, end) in sorted(loads.items())
    )
    objects = "loose" if args.loose else "packed, as in a fresh clone"
    note = (
        f"{args.runs} pairs per row ({args.cold_runs} for the no-index row); the built "
        f"repository's objects {objects}. "
        f"1-minute load average at the start and end of each size: {during}."
    )
    print(table)
    print(f"\n{note}")
    if args.write_docs:
        write_docs(f"{table}\n\n{note}", marker="process")
    print(f"({machine()})", file=sys.stderr)


if __name__ == "__main__":
    main()
