"""Start-up cost of ``hive`` commands: CPU time (user + sys) of fresh processes.

Usage (numbers only mean something on a quiet machine; CPU time is steadier than
wall time when it is not)::

    python benchmarks/bench_startup.py                  # 9 runs per command
    python benchmarks/bench_startup.py --runs 15 --cells 200
    python benchmarks/bench_startup.py --runs 1 --cells 2 --no-warm-up  # a smoke run
    git worktree add /tmp/hive-before <commit>          # an older hive, then side by side:
    python benchmarks/bench_startup.py --before /tmp/hive-before

A scratch repository with ``--cells`` cells (made with ``hive create``) in a temporary
directory; each command runs ``--runs`` times as a new process of this venv's ``hive``
console script, commands interleaved run by run; the table gives the median CPU time
(the child's user + sys, from ``wait4``) and the median wall time. Commands that go
through the full CLI (typer, ``hive/cli/main.py``) are listed beside the lean ones
(``hive/cli/entry.py``) for comparison.

``--before DIR`` compares with the hive of another checkout (an older commit): each
command then runs as ``python -m hive`` from DIR and from this checkout (``PYTHONPATH``),
pair by pair on the same repository, and the table gives both medians and the change.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (label, arguments): {cell} is the cell commented on, {other} another cell (the lean
# path shows a cell without comments; one with comments goes to the full CLI)
COMMANDS: tuple[tuple[str, list[str]], ...] = (
    ("list (lean)", ["list"]),
    ("show ID (lean)", ["show", "{other}"]),
    ("show ID (comments)", ["show", "{cell}"]),
    ("comment ID TEXT", ["comment", "{cell}", "a comment"]),
    ("stats", ["stats"]),
    ("blocked", ["blocked"]),
    ("log", ["log"]),
    ("mail inbox", ["mail", "inbox"]),
    ("doctor", ["doctor"]),
    ("show --help", ["show", "--help"]),
    ("--version (lean)", ["--version"]),
)


def hive_command() -> str:
    found = shutil.which("hive", path=str(Path(sys.executable).parent))
    if found is None:
        raise SystemExit("no 'hive' console script beside this Python: run scripts/setup.sh dev")
    return found


def environment() -> dict[str, str]:
    """A shell's environment without git's, Python's and hive's variables."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "PYTHON", "HIVE_"))}
    env.update(
        GIT_AUTHOR_NAME="bench",
        GIT_AUTHOR_EMAIL="bench@example.com",
        GIT_COMMITTER_NAME="bench",
        GIT_COMMITTER_EMAIL="bench@example.com",
    )
    return env


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, str]:
    """One process to its end: (CPU seconds, wall seconds, standard output)."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        text = out.read().decode("utf-8", errors="replace")
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # doctor exits 1 when it finds something
        raise SystemExit(f"{' '.join(argv)} exited {code}:\n{text}")
    return usage.ru_utime + usage.ru_stime, wall, text


def build(repo: Path, hive: str, cells: int, env: dict[str, str]) -> list[str]:
    """A git repository with ``hive init``, ``cells`` cells and the agent ``bench``
    registered (its credential put in ``env``); the cells' ids."""
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "config", "commit.gpgsign", "false"], cwd=repo, check=True)
    (repo / "README").write_text("scratch\n")
    subprocess.run(["git", "add", "README"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, env=env, check=True)
    config = ["git", "config", "user.name", "bench"]
    subprocess.run(config, cwd=repo, check=True)
    subprocess.run(["git", "config", "user.email", "bench@example.com"], cwd=repo, check=True)
    run([hive, "init"], repo, env)
    _, _, text = run([hive, "--json", "agent", "register", "bench"], repo, env)
    env.update(HIVE_AGENT="bench", HIVE_AGENT_TOKEN=json.loads(text)["token"])
    ids = []
    for number in range(max(cells, 2)):
        _, _, text = run([hive, "--json", "create", f"cell {number}"], repo, env)
        ids.append(json.loads(text)["id"])
    return ids


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=9, help="processes per command (median)")
    parser.add_argument("--cells", type=int, default=20, help="cells in the scratch repository")
    parser.add_argument(
        "--before", metavar="DIR", help="compare with the hive of this checkout (python -m hive)"
    )
    parser.add_argument(
        "--no-warm-up", action="store_true", help="no untimed first round (smoke runs)"
    )
    args = parser.parse_args()
    hive = hive_command()
    env = environment()
    sides = {"": ([hive], env)}  # the console script of this venv
    if args.before:
        module = [sys.executable, "-m", "hive"]
        before = str(Path(args.before).resolve())
        sides = {
            "before": (module, {**env, "PYTHONPATH": before}),
            "now": (module, {**env, "PYTHONPATH": str(ROOT)}),
        }
    with tempfile.TemporaryDirectory(prefix="hive-startup-") as scratch:
        repo = Path(scratch) / "repo"
        cell, other = build(repo, hive, args.cells, env)[:2]
        commands = [
            (label, [a.format(cell=cell, other=other) for a in argv]) for label, argv in COMMANDS
        ]
        cpu: dict[tuple[str, str], list[float]] = {
            (s, label): [] for s in sides for label, _ in commands
        }
        wall: dict[tuple[str, str], list[float]] = {key: [] for key in cpu}
        # the first round untimed (page cache, .pyc), unless --no-warm-up (a smoke run,
        # whose numbers mean nothing: each command still runs, as a fresh process, once)
        first = 1 if args.no_warm_up else 0
        for number in range(first, args.runs + 1):
            for label, argv in commands:
                for side, (start, side_env) in sides.items():
                    seconds, elapsed, _ = run([*start, *argv], repo, side_env)
                    if number:
                        cpu[side, label].append(seconds)
                        wall[side, label].append(elapsed)
    print(f"hive start-up, {args.cells} cells, median of {args.runs} fresh processes")
    print()
    if not args.before:
        print("| command | CPU (user+sys) | wall |")
        print("| --- | ---: | ---: |")
        for label, _ in commands:
            cpu_ms = statistics.median(cpu["", label]) * 1000
            wall_ms = statistics.median(wall["", label]) * 1000
            print(f"| hive {label} | {cpu_ms:.1f} ms | {wall_ms:.1f} ms |")
        return
    print(f"before: {args.before}; now: {ROOT} (each as python -m hive, pair by pair)")
    print()
    print("| command | CPU before | CPU now | change | wall before | wall now |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for label, _ in commands:
        old, new = (statistics.median(cpu[side, label]) * 1000 for side in ("before", "now"))
        walls = [statistics.median(wall[side, label]) * 1000 for side in ("before", "now")]
        print(
            f"| hive {label} | {old:.1f} ms | {new:.1f} ms | {(new - old) / old:+.0%}"
            f" | {walls[0]:.1f} ms | {walls[1]:.1f} ms |"
        )


if __name__ == "__main__":
    main()
