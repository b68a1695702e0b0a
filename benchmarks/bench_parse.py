"""Cell decoding micro-benchmark: bytes of a cell file -> validated ``Cell``.

Usage::

    python benchmarks/bench_parse.py              # 10,000 generated cells
    python benchmarks/bench_parse.py --cells 2000

Generates realistic cells (titles, multi-line descriptions, labels,
dependencies, timestamps, some metadata) with a fixed seed, encodes them with
hive's emitter, then decodes each one with the old path (ruamel's safe loader,
then pydantic) and with :func:`hive.store.cells.decode_cell` (the canonical-form
reader, falling back to ruamel), checks both give the same cells, and prints
the median and mean microseconds per cell of each.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from hive.models import Cell
from hive.store.cells import decode_cell, encode_cell
from hive.store.yamlfast import fast_loads
from hive.store.yamlio import ruamel_loads

WORDS = (
    "fix login token expiry cache index parse yaml cell agent swarm reserve release mail "
    "merge branch commit hook doctor graph ready blocked epic child import export query "
    "timeout retry crash lock path glob memory limit fast slow test docs cli server"
).split()
START = datetime(2026, 1, 1, tzinfo=UTC)


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(WORDS, k=rng.randint(low, high))
    return " ".join(words).capitalize()


def _time(rng: random.Random) -> datetime:
    moment = START + timedelta(seconds=rng.randint(0, 10**7), milliseconds=rng.randint(0, 999))
    return moment


def _description(rng: random.Random) -> str:
    paragraphs = []
    for _ in range(rng.randint(1, 4)):
        lines = [_sentence(rng, 4, 12) + rng.choice([".", ":", "", "?"])]
        if rng.random() < 0.3:
            lines += [f"- {_sentence(rng, 2, 5)}" for _ in range(rng.randint(1, 4))]
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs) + ("\n" if rng.random() < 0.7 else "")


def realistic_cell(rng: random.Random, number: int) -> Cell:
    """One cell shaped like those agents and people write."""
    root = f"hv-{number:06x}"
    status = rng.choice(["open", "open", "in_progress", "blocked", "closed", "closed"])
    created = _time(rng)
    fields: dict[str, Any] = {
        "id": root if rng.random() < 0.6 else f"{root}.{rng.randint(0, 999):03d}",
        "title": _sentence(rng, 3, 10) + rng.choice(["", "", ": follow-up", " (issue 7)"]),
        "type": rng.choice(["bug", "feature", "task", "task", "epic", "chore"]),
        "status": status,
        "priority": rng.randint(0, 4),
        "created_at": created,
        "updated_at": created + timedelta(minutes=rng.randint(0, 5000)),
        "created_by": rng.choice(["lead", "agent-1", "agent-2", "alice"]),
        "labels": rng.sample(
            ["backend", "cli", "perf", "docs", "bug-bash", "p0"], rng.randint(0, 3)
        ),
        "dependencies": [
            {"type": rng.choice(["blocks", "related"]), "target": f"hv-{rng.randint(0, 99999):06x}"}
            for _ in range(rng.choice([0, 0, 1, 1, 2, 3]))
        ],
    }
    if rng.random() < 0.8:
        fields["description"] = _description(rng)
    if rng.random() < 0.3:
        fields["notes"] = _sentence(rng, 5, 20) + "."
    if rng.random() < 0.5:
        fields["assignee"] = f"agent-{rng.randint(1, 20)}"
        fields["started_at"] = created + timedelta(minutes=5)
    if rng.random() < 0.3:
        fields["files_owned"] = [
            f"src/{rng.choice(WORDS)}/**",
            f"tests/test_{rng.choice(WORDS)}.py",
        ]
    if status == "closed":
        fields["closed_at"] = created + timedelta(days=1)
        fields["close_reason"] = _sentence(rng, 2, 8)
    if rng.random() < 0.2:
        fields["metadata"] = {
            "estimate": rng.randint(1, 8),
            "source": {"kind": "triage", "ok": True},
        }
    return Cell.model_validate(fields)


def old_decode(data: bytes, path: str) -> Cell:
    """What ``decode_cell`` did before the canonical-form reader: ruamel, then pydantic."""
    return Cell.model_validate(ruamel_loads(data.decode("utf-8")))


def time_each(
    decode: Callable[[bytes, str], Cell], files: list[bytes]
) -> tuple[list[Cell], list[float]]:
    cells: list[Cell] = []
    micros: list[float] = []
    clock = time.perf_counter_ns
    for data in files:
        start = clock()
        cells.append(decode(data, "p.yaml"))
        micros.append((clock() - start) / 1000)
    return cells, micros


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=10)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    files = [encode_cell(realistic_cell(rng, number)) for number in range(args.cells)]
    fast = sum(fast_loads(data.decode()) is not None for data in files)
    size = statistics.mean(len(data) for data in files)
    print(f"{args.cells} cells, mean {size:.0f} bytes, {fast} in canonical form")
    old_cells, old_times = time_each(old_decode, files)
    new_cells, new_times = time_each(decode_cell, files)
    if old_cells != new_cells:
        raise SystemExit("the two paths decoded different cells")
    print(f"{'path':<38} {'median us':>10} {'mean us':>9} {'total s':>8}")
    for name, times in (("old: ruamel + pydantic", old_times), ("new: decode_cell", new_times)):
        median, mean, total = statistics.median(times), statistics.mean(times), sum(times) / 1e6
        print(f"{name:<38} {median:>10.1f} {mean:>9.1f} {total:>8.2f}")
    ratio = statistics.median(old_times) / statistics.median(new_times)
    print(f"speed-up (median): {ratio:.1f}x")


if __name__ == "__main__":
    main()
