"""Which process left a file behind, and whether it is still running (no dulwich).

Files that hive's write path creates next to git's own (the twin of
``index.lock``, ref-lock twins, temporary object files) carry an *owner tag*:
the process id and, where the system tells it (Linux ``/proc``), the process's
start time, so a recycled process id is not mistaken for the writer that died.
"""

from __future__ import annotations

import os

from hive.record import suppress

_TAGS: dict[int, str] = {}


def owner_tag() -> str:
    """This process's tag: ``<pid>-<start time>`` (``<pid>-0`` without ``/proc``)."""
    pid = os.getpid()  # recomputed after a fork: the child is another owner
    tag = _TAGS.get(pid)
    if tag is None:
        tag = f"{pid}-{_start_time(pid) or 0}"
        _TAGS[pid] = tag
    return tag


def parse_tag(tag: str) -> tuple[int, int] | None:
    """(pid, start) of a tag, or None when ``tag`` is not one."""
    pid, sep, start = tag.partition("-")
    if not sep or not pid.isdigit() or not start.isdigit():
        return None
    return int(pid), int(start)


def owner_alive(tag: str) -> bool:
    """False only when the tagged process has certainly ended (unknown tags count as alive)."""
    parsed = parse_tag(tag)
    if parsed is None:
        return True
    pid, start = parsed
    if pid == os.getpid():
        return tag == owner_tag()
    if os.path.isdir("/proc/self"):
        found = _start_time(pid)
        return found is not None and (start == 0 or found == start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _start_time(pid: int) -> int | None:
    """The start time of a running process from ``/proc`` (None: gone, a zombie, or no /proc)."""
    with suppress(OSError, ValueError, IndexError):
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
        if fields[0] in (b"Z", b"X"):
            return None  # killed and not yet reaped: it holds nothing any more
        return int(fields[19])
    return None
