"""Agent credentials: ``<git common dir>/hive/identities.json``.

Registering an agent issues a random token; this file keeps only its SHA-256
(never the token, never committed, readable by the owner only). A process
proves it is the agent by presenting the token (``HIVE_AGENT_TOKEN``); the
hash is looked up here. Retired identities stay listed (``retired``) so old
commits naming them can still be told apart from names nobody ever registered.

Writers hold ``identities.lock`` (an OS file lock); readers read the file as
it is (it is replaced atomically) and keep it parsed per file version.
"""

from __future__ import annotations

import os

from hive.digests import same_digest, sha256_hex
from hive.errors import CorruptFile, GitError, LockTimeout
from hive.jsontext import loads
from hive.store.layout import make_state_dir, unwritable

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from contextlib import AbstractContextManager
    from typing import Any

FILE = "identities.json"
LOCK = "identities.lock"
TOKEN_PREFIX = "hive_"
VERSION = 1

_parsed: dict[str, tuple[tuple[int, int, int], dict[str, Any]]] = {}


def path_of(state_dir: str) -> str:
    return os.path.join(state_dir, FILE)


def new_token() -> str:
    import secrets

    return TOKEN_PREFIX + secrets.token_urlsafe(32)


def masked(text: str) -> str:
    """``text`` with every credential in it (``hive_`` and 43 URL-safe characters, as
    :func:`new_token` makes them) replaced by ``[redacted]``: for what hive hands on or
    keeps beyond the one who registered (a hook's input, what a hook printed)."""
    if TOKEN_PREFIX not in text:
        return text
    import re

    return re.sub(TOKEN_PREFIX + r"[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])", "[redacted]", text)


def hash_token(token: str) -> str:
    return sha256_hex(token.strip().encode("utf-8"))  # CPython's own: no OpenSSL loaded


# What to do about a store that cannot be read (it is local to this clone, never committed).
RECOVERY = (
    "move it aside (mv it to a .broken name) and register the agents again"
    " ('hive agent register NAME'): their old credentials stop working"
)


def empty() -> dict[str, Any]:
    return {"version": VERSION, "agents": {}, "retired": []}


def load(state_dir: str) -> dict[str, Any]:
    """The stored identities (an empty store when there is none yet)."""
    path = path_of(state_dir)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):  # no store yet (or no state dir)
        return empty()
    key = (info.st_mtime_ns, info.st_size, info.st_ino)
    known = _parsed.get(path)
    if known is not None and known[0] == key:
        return known[1]
    try:
        with open(path, encoding="utf-8") as handle:
            data = loads(handle.read())  # json.load, without importing json
    except (OSError, ValueError) as exc:
        raise CorruptFile(
            f"{path}: cannot read the agent credentials ({exc}); {RECOVERY}", path=path
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("agents"), dict):
        raise CorruptFile(f"{path}: not a hive credential store; {RECOVERY}", path=path)
    data.setdefault("retired", [])
    _parsed[path] = (key, data)
    return data


def save(state_dir: str, data: dict[str, Any]) -> None:
    """Replace the store atomically, readable by the owner only."""
    with staged(state_dir, data) as publish:
        publish()


def staged(state_dir: str, data: dict[str, Any]) -> AbstractContextManager[Callable[..., None]]:
    """Write ``data`` beside the store (what can fail, a directory hive cannot write
    to or a full disk, fails here: GitError naming the file) and yield ``publish``,
    which puts it in place with one rename. Not published, it is removed: the store
    stays as it was (a write that must land together with others publishes last).
    ``publish(changed)``: what its error is to say was done already when the rename
    fails (default: nothing was changed)."""
    import contextlib  # a writer's: a reader (the pre-commit hook) does without it

    return contextlib.contextmanager(_staged)(state_dir, data)


def _staged(state_dir: str, data: dict[str, Any]) -> Iterator[Callable[..., None]]:
    import contextlib
    import json

    make_state_dir(state_dir)
    path = path_of(state_dir)
    temp = f"{path}.{os.getpid()}.tmp"
    done = False

    def publish(changed: str = NOTHING_CHANGED) -> None:
        nonlocal done
        try:
            os.replace(temp, path)
        except OSError as exc:
            raise _unwritable(path, exc, changed) from None
        done = True

    try:
        try:
            descriptor = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                json.dump(data, handle, indent=1, sort_keys=True)
                handle.write("\n")
        except OSError as exc:
            raise _unwritable(temp, exc) from None
        yield publish
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(temp)


NOTHING_CHANGED = "nothing was changed"


def _unwritable(path: str, exc: OSError, changed: str = NOTHING_CHANGED) -> GitError:
    return GitError(
        f"cannot write the agent credentials ({path}: {exc.strerror or exc}); {changed}",
        path=path,
    )


def name_of_token(state_dir: str, token: str) -> str | None:
    """The live identity ``token`` is the credential of, or None."""
    wanted = hash_token(token)
    for name, entry in load(state_dir)["agents"].items():
        if same_digest(str(entry.get("token_sha256", "")), wanted):
            return str(name)
    return None


def retired_names(state_dir: str) -> set[str]:
    """Names retired here that nobody holds now (no live credential of the name)."""
    data = load(state_dir)
    return {str(entry.get("name")) for entry in data["retired"]} - set(data["agents"])


def matches(entry: dict[str, Any], token: str) -> bool:
    return same_digest(str(entry.get("token_sha256", "")), hash_token(token))


def locked(state_dir: str, timeout: float) -> AbstractContextManager[None]:
    """Hold the store's write lock (released by the OS if the process dies)."""
    import contextlib

    return contextlib.contextmanager(_locked)(state_dir, timeout)


def _locked(state_dir: str, timeout: float) -> Iterator[None]:
    from filelock import FileLock, Timeout

    make_state_dir(state_dir)
    lock = FileLock(os.path.join(state_dir, LOCK), timeout=timeout)
    try:
        lock.acquire()
    except Timeout:
        raise LockTimeout(
            f"another hive process held the identity lock for more than {timeout:g}s"
        ) from None
    except OSError as exc:
        raise unwritable(os.path.join(state_dir, LOCK), exc) from None
    try:
        yield
    finally:
        lock.release()
