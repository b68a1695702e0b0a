"""Times as hive writes them, in its files and in every JSON result: UTC with a ``Z``,
millisecond precision (``2026-11-22T16:35:37.123Z``); a time with finer digits
(imported from another tracker) keeps its microseconds. Standard library only: the
lean commands, the models and the surfaces all use these."""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from datetime import UTC as UTC
    from datetime import datetime as datetime
else:
    try:  # the C module ``datetime`` re-exports: the same classes (``datetime.datetime is
        # _datetime.datetime``) without the package's pure-Python half, which a fresh
        # process (the pre-commit hook) would compile into classes it never uses: ~2 ms
        from _datetime import UTC, datetime
    except ImportError:  # an implementation without it
        from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time in UTC, truncated to milliseconds (what the files store)."""
    return to_milliseconds(datetime.now(UTC))


def to_milliseconds(value: datetime) -> datetime:
    """``value`` truncated to milliseconds: a time hive computes (now plus a timeout
    given in fractions of a millisecond) is written as every time it writes."""
    return value.replace(microsecond=value.microsecond // 1000 * 1000)


def format_time(value: datetime) -> str:
    """UTC with a ``Z`` suffix, millisecond precision (``2026-11-22T16:35:37.123Z``)
    unless the time has finer digits (imported data): then microseconds. A time with
    a zone is given in UTC; one without is taken as UTC. (``isoformat`` in C: the
    models' JSON calls this for every time it gives.)"""
    if value.utcoffset():
        value = value.astimezone(UTC)
    if value.year < 1000:  # as strftime writes such a year: not padded
        micro = value.microsecond
        fraction = f"{micro // 1000:03d}" if micro % 1000 == 0 else f"{micro:06d}"
        return value.strftime("%Y-%m-%dT%H:%M:%S") + "." + fraction + "Z"
    text = value.isoformat("T", "milliseconds" if value.microsecond % 1000 == 0 else "microseconds")
    return (text if value.tzinfo is None else text[:-6]) + "Z"


def parse_time(text: str) -> datetime:
    """A time as :func:`format_time` (or any ISO 8601 writer) gives it: ``Z`` read as UTC."""
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def json_default(value: object) -> str:
    """``json.dumps``'s ``default`` for hive's results: a time as :func:`format_time`
    gives it, anything else as its ``str``."""
    return format_time(value) if isinstance(value, datetime) else str(value)


def exact_time(value: object) -> datetime | None:
    """A time exactly as hive writes it (UTC, ``Z``, see :func:`format_time`), else None."""
    if not isinstance(value, str) or not value.endswith("Z"):
        return None
    try:
        parsed = datetime.fromisoformat(value[:-1] + "+00:00")
    except ValueError:
        return None
    return parsed if format_time(parsed) == value else None
