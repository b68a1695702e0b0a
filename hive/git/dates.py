"""The dates of a commit as ``git commit`` gives them: ``GIT_AUTHOR_DATE`` for the
author, ``GIT_COMMITTER_DATE`` for the committer (and the reflog line), else now in
the local time zone (an empty variable counts as unset, as in git).

A value in git's internal format, ``<unix-timestamp> <+/-hhmm>`` (with a leading ``@``
too), is read here with no process. Any other value (RFC 2822, ISO 8601 and the rest of
what git's lenient ``parse_date`` takes) is asked of git itself, once per process for
each value: ``git var GIT_<ROLE>_IDENT`` under the variable prints the date git would
write. A value git refuses ("invalid date format") is :class:`InvalidInput` naming the
variable.
"""

from __future__ import annotations

import os
import time

from hive.errors import GitError, InvalidInput

Date = tuple[int, int]  # seconds since the epoch, offset from UTC in seconds
_TIME_MAX = 2**64 - 1  # git's timestamp_t: a larger @-stamp is refused
_YEAR_2100 = 4_102_444_800  # a bare stamp git reads as a date from 1973 to 2099 only
_BARE_MIN = 100_000_000
_known: dict[tuple[str, str], Date] = {}


def commit_date(role: str, now: int) -> Date:
    """The date of ``role`` (``author`` or ``committer``) for a commit made ``now``."""
    variable = f"GIT_{role.upper()}_DATE"
    value = os.environ.get(variable)
    if not value:
        return now, local_utc_offset(now)
    key = (variable, value)
    if key not in _known:
        if len(_known) >= 64:
            _known.clear()
        _known[key] = _internal(value) or _from_git(role, variable, value)
    return _known[key]


def local_utc_offset(timestamp: int) -> int:
    return int(time.localtime(timestamp).tm_gmtoff or 0)


def _internal(value: str) -> Date | None:
    """``<stamp> <+/-hhmm>`` or ``@<stamp> <+/-hhmm>`` read exactly as git reads it;
    None for anything else (git decides)."""
    at = value.startswith("@")
    stamp, space, zone = value[1 if at else 0 :].partition(" ")
    digits = frozenset("0123456789")
    if not (space and stamp and set(stamp) <= digits and len(zone) == 5):
        return None
    if zone[0] not in "+-" or not set(zone[1:]) <= digits or int(zone[3:]) >= 60:
        return None
    hours, minutes, seconds = int(zone[1:3]), int(zone[3:]), int(stamp)
    # without @ git's date parser reads a stamp of nine digits or more, a zone under 24h
    fits = seconds < _TIME_MAX if at else _BARE_MIN <= seconds < _YEAR_2100 and hours < 24
    if not fits:
        return None
    offset = (hours * 60 + minutes) * 60
    return seconds, -offset if zone[0] == "-" else offset


def _from_git(role: str, variable: str, value: str) -> Date:
    """The date git writes for ``value``: ``git var`` under a fixed name and email (the
    identity is not asked here), or the refusal naming ``variable``."""
    import subprocess

    prefix = f"GIT_{role.upper()}"
    env = {**os.environ, "LC_ALL": "C", f"{prefix}_NAME": "hive", f"{prefix}_EMAIL": "h@h"}
    try:
        said = subprocess.run(
            ["git", "var", f"{prefix}_IDENT"], capture_output=True, text=True, env=env, check=False
        )
    except OSError as exc:
        raise GitError(f"git var failed: {exc} (needed to read {variable})") from None
    parts = said.stdout.strip().rsplit(" ", 2)
    if said.returncode == 0 and len(parts) == 3:
        found = _internal(f"@{parts[1]} {parts[2]}")
        if found is not None:
            return found
    raise InvalidInput(
        f"{variable}={value!r} is not a date git reads, so hive does not commit with it"
        f" either: use git's internal format ('1112911993 +0200', also with a leading @),"
        " RFC 2822 ('Thu, 07 Apr 2005 22:13:13 +0200') or ISO 8601"
        f" ('2005-04-07T22:13:13+02:00'), or unset {variable}"
    )
