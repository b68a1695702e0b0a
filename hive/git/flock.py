"""hive's inter-process locks: ``flock`` on a lock file (released by the OS when the
process dies), the same lock ``filelock`` takes on Unix, without importing it
(~15 ms per fresh process); Windows goes through ``filelock``."""

from __future__ import annotations

import errno
import os
import time

from hive.errors import GitError
from hive.store.layout import state_dir_not_a_directory, unwritable
from hive.waits import pause


class Held:
    def __init__(self, release: object) -> None:
        self._release = release

    def release(self) -> None:
        callback = self._release
        if callable(callback):
            callback()


def try_lock(path: str, wait: float) -> Held | None:
    """hive's write lock within ``wait`` seconds (0: one attempt), or None when another
    process holds it; ``GitError`` when the lock file cannot be opened at all."""
    try:
        import fcntl
    except ImportError:  # Windows: the same lock through filelock
        return _try_filelock(path, wait)
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        descriptor = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError as error:
        raise _unopenable(path, error) from None
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return Held(lambda: os.close(descriptor))
        except OSError:
            if time.monotonic() >= deadline or not pause(0.005):  # or the call abandoned
                os.close(descriptor)
                return None


def _unopenable(path: str, error: OSError) -> GitError:
    """Why hive's lock file cannot be made, naming the part of the path at fault."""
    folder = os.path.dirname(path)
    if error.errno in (errno.ENOTDIR, errno.EEXIST) or (
        os.path.lexists(folder) and not os.path.isdir(folder)
    ):
        return state_dir_not_a_directory(folder)
    return unwritable(path, error)


def _try_filelock(path: str, wait: float) -> Held | None:
    from filelock import FileLock, Timeout

    lock = FileLock(path)
    try:
        lock.acquire(timeout=wait)
    except (Timeout, OSError):
        return None
    return Held(lock.release)
