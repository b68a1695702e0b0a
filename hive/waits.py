"""How long hive waits for a lock: ``HIVE_LOCK_TIMEOUT`` and ``lock_timeout_seconds``
(shared by the models, the domain and the lean command-line path; imports only ``time``
and ``contextvars``), how it is waited (:class:`Backoff`), and how a wait is cut short
when its caller gave up on the call (:func:`pause`, :func:`abandoned_when`)."""

from __future__ import annotations

import time
from contextvars import ContextVar

TYPE_CHECKING = False  # typing is not imported at run time (the lean path's start-up)
if TYPE_CHECKING:
    from threading import Event

_abandoned: ContextVar[Event | None] = ContextVar("hive_call_abandoned", default=None)


def abandoned_when(flag: Event) -> None:
    """The call running in this context is abandoned once ``flag`` is set (the MCP
    server sets it when the client cancels the call): every wait of the call ends at
    once then (:func:`pause` says False), so its thread ends soon and with it the
    server's stop at stdin EOF no longer waits out a cancelled ``ctx_wait``."""
    _abandoned.set(flag)


def pause(seconds: float) -> bool:
    """Sleep ``seconds``; False, at once, when the call was abandoned (before or during
    the sleep): the caller stops waiting."""
    flag = _abandoned.get()
    if flag is None:
        time.sleep(seconds)
        return True
    return not (flag.is_set() or flag.wait(seconds))


MAX_WAIT = 86400.0  # seconds: the longest lock wait hive accepts (a day)
DEFAULT_WAIT = 30.0  # seconds: the lock wait where nothing sets one (lock_timeout_seconds)


def seconds_of(value: object) -> float | None:
    """The lock wait ``value`` gives (``HIVE_LOCK_TIMEOUT``'s text, ``lock_timeout_seconds``
    as the config's YAML reads it): a number of seconds from 0 to :data:`MAX_WAIT`, as a
    number or text; None for anything else (not a number, a boolean, negative, nan,
    inf, more than a day), which the caller refuses naming the value (:func:`wait_refused`)."""
    if isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    seconds = float(value)
    if not 0 <= seconds <= MAX_WAIT:  # also nan and inf
        return None
    return seconds


def lock_wait(seconds: float) -> float:
    """How long a lock is waited for, given the wait set: 0 means one try (which is
    given 10 ms, as a lock held for an instant should not fail a write)."""
    return max(0.01, seconds)


def wait_of(text: str) -> float | None:
    """The lock wait ``HIVE_LOCK_TIMEOUT``'s ``text`` gives (:func:`seconds_of`, then
    :func:`lock_wait`); None when it gives none."""
    seconds = seconds_of(text)
    return None if seconds is None else lock_wait(seconds)


def wait_rule(value: object) -> str:
    """What a lock wait must be, and the ``value`` given."""
    return (
        f"a number of seconds from 0 to {MAX_WAIT:g} (a day), got {value!r}:"
        " hive never waits for a lock without end"
    )


def wait_refused(name: str, text: str) -> str:
    """Why ``text`` is not a lock wait (:func:`wait_of` gave None)."""
    return f"{name} must be {wait_rule(text)}"


class Backoff:
    """The pauses between tries of a lock another process holds (git's ``index.lock``,
    a ``<ref>.lock``): 1 ms, doubling up to 50 ms, until ``timeout`` seconds have
    passed since it was made (or the call was abandoned: :func:`pause`). :meth:`pause`
    sleeps once and says whether to try again."""

    __slots__ = ("_deadline", "_delay")

    def __init__(self, timeout: float) -> None:
        self._deadline = time.monotonic() + timeout
        self._delay = 0.001

    def pause(self) -> bool:
        """Sleep before the next try; False (without sleeping) once the time is up."""
        left = self._deadline - time.monotonic()
        if left <= 0 or not pause(min(self._delay, left)):
            return False
        self._delay = min(self._delay * 2, 0.05)
        return True
