"""How long hive waits for a lock: ``HIVE_LOCK_TIMEOUT`` and ``lock_timeout_seconds``
(shared by the models, the domain and the lean command-line path; imports nothing)."""

from __future__ import annotations

MAX_WAIT = 86400.0  # seconds: the longest lock wait hive accepts (a day)


def wait_of(text: str) -> float | None:
    """The lock wait ``text`` gives (``HIVE_LOCK_TIMEOUT``): a number of seconds from 0
    (one try) to :data:`MAX_WAIT`; None for anything else (not a number, negative,
    nan, inf, more than a day), which the caller refuses naming the value."""
    try:
        seconds = float(text)
    except ValueError:
        return None
    if not 0 <= seconds <= MAX_WAIT:  # also nan and inf
        return None
    return max(0.01, seconds)


def wait_refused(name: str, text: str) -> str:
    """Why ``text`` is not a lock wait (:func:`wait_of` gave None)."""
    return (
        f"{name} must be a number of seconds from 0 to {MAX_WAIT:g} (a day), got {text!r}:"
        " hive never waits for a lock without end"
    )
