"""The git merge driver for ``.hive/`` files: ``merge.hive.driver``.

git runs ``<python> -m hive.cli.merge_driver %O %A %B %P`` for a file both
sides changed (``hive init`` installs it; see :mod:`hive.domain.merge`). The
merged file is written over ``%A``; the exit code is 0 when the merge is
clean. Nothing here ever writes conflict markers: when no side parses, ``%A``
(ours) is left as it is and git reports the path as conflicted.
"""

from __future__ import annotations

import os
import sys


def _read(path: str) -> bytes | None:
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def run(argv: list[str]) -> int:
    if len(argv) != 4:
        sys.stderr.write("usage: python -m hive.cli.merge_driver BASE OURS THEIRS PATH\n")
        return 2
    base_file, ours_file, theirs_file, path = argv
    from hive.domain.merge import merge_file

    ours = _read(ours_file)
    outcome = merge_file(path, _read(base_file), ours, _read(theirs_file))
    if outcome.content != ours:
        temp = f"{ours_file}.hive-merge-{os.getpid()}"
        with open(temp, "wb") as handle:
            handle.write(outcome.content)
        os.replace(temp, ours_file)
    for record in outcome.conflicts:
        sys.stderr.write(
            f"hive: {path}: both sides changed {record.field}; kept one value, the other is"
            " recorded (see 'hive show', 'hive resolve')\n"
        )
    if not outcome.clean:
        sys.stderr.write(f"hive: cannot merge {path}: {outcome.message}\n")
        return 1
    return 0


def main() -> None:
    try:
        code = run(sys.argv[1:])
    except Exception as exc:  # never a traceback in the middle of a git merge
        if os.environ.get("HIVE_DEBUG"):
            raise
        sys.stderr.write(f"hive merge driver failed: {type(exc).__name__}: {exc}\n")
        code = 1
    sys.exit(code)


if __name__ == "__main__":
    main()
