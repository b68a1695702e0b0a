"""Many blobs read at once by git itself (``git cat-file --batch``).

A state index built from nothing (a fresh clone's first command) reads every cell
file's blob. hive's own object reader (``hive/git/packfile.py``) resolves a pack's
delta chains in Python, ~75 us an object on a 2-core machine; one ``git cat-file
--batch`` gives 500 of them in a few milliseconds. Anything unusual (git missing or
refusing the repository, an object it does not have, output that does not parse)
returns None and the caller reads the objects one by one, as before.

Replace refs are ignored (``--no-replace-objects``): the bytes are those of the
object named, as hive's own reader gives them.
"""

from __future__ import annotations

from hive.git.refs import RepoPaths

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Sequence

AT_ONCE = 64  # fewer objects are read here: starting git costs more than they do


def read_blobs_at_once(paths: RepoPaths, shas: Sequence[str]) -> dict[str, bytes] | None:
    """The bodies of the blobs ``shas`` (full hex ids) by their ids, from one ``git
    cat-file --batch``; None when git does not give every one of them as a blob."""
    import subprocess

    from hive.git.rungit import git_environment

    argv = ["git", f"--git-dir={paths.git_dir}", "--no-replace-objects", "cat-file", "--batch"]
    request = "".join(f"{sha}\n" for sha in shas).encode("ascii")
    try:
        done = subprocess.run(
            argv, input=request, capture_output=True, check=False, env=git_environment()
        )
    except OSError:
        return None
    if done.returncode != 0:
        return None
    return parse_batch(done.stdout, shas)


def parse_batch(output: bytes, shas: Sequence[str]) -> dict[str, bytes] | None:
    """``git cat-file --batch``'s answer to ``shas``, in their order: each
    ``<id> blob <size>`` line, the body, a line feed; None at anything else."""
    found: dict[str, bytes] = {}
    at = 0
    for sha in shas:
        end = output.find(b"\n", at)
        header = output[at:end].split(b" ") if end >= 0 else []
        if len(header) != 3 or header[0] != sha.encode("ascii") or header[1] != b"blob":
            return None
        if not header[2].isdigit():
            return None
        size = int(header[2])
        start = end + 1
        if output[start + size : start + size + 1] != b"\n":
            return None
        found[sha] = output[start : start + size]
        at = start + size + 1
    return found if at == len(output) else None
