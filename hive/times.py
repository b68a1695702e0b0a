"""Times as hive writes them, in its files and in every JSON result: UTC with a ``Z``,
millisecond precision (``2026-11-22T16:35:37.123Z``); a time with finer digits
(imported from another tracker) keeps its microseconds. Standard library only: the
lean commands, the models and the surfaces all use these."""

from __future__ import annotations

from datetime import UTC, datetime


def utc_now() -> datetime:
    """The current time in UTC, truncated to milliseconds (what the files store)."""
    now = datetime.now(UTC)
    return now.replace(microsecond=now.microsecond // 1000 * 1000)


def format_time(value: datetime) -> str:
    """UTC with a ``Z`` suffix, millisecond precision (``2026-11-22T16:35:37.123Z``)
    unless the time has finer digits (imported data): then microseconds. A time with
    a zone is given in UTC; one without is taken as UTC."""
    if value.utcoffset():
        value = value.astimezone(UTC)
    micro = value.microsecond
    fraction = f"{micro // 1000:03d}" if micro % 1000 == 0 else f"{micro:06d}"
    return _seconds(value) + "." + fraction + "Z"


def _seconds(value: datetime) -> str:
    """``value.strftime("%Y-%m-%dT%H:%M:%S")``, about twice as fast."""
    if value.year < 1000:  # strftime does not pad the year
        return value.strftime("%Y-%m-%dT%H:%M:%S")
    return (
        f"{value.year:04d}-{value.month:02d}-{value.day:02d}"
        f"T{value.hour:02d}:{value.minute:02d}:{value.second:02d}"
    )


def json_default(value: object) -> str:
    """``json.dumps``'s ``default`` for hive's results: a time as :func:`format_time`
    gives it, anything else as its ``str``."""
    return format_time(value) if isinstance(value, datetime) else str(value)
