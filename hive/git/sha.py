"""SHA-1 for git object ids without loading OpenSSL on every start-up.

``hashlib`` loads OpenSSL (``_hashlib``, ~2 ms of every fresh process); CPython's
built-in ``_sha1`` imports in a fraction of that and is fast enough for the
small objects a hive write hashes. Large buffers (the checksum of git's index,
~1 MB at 10,000 cells: ~3.6 ms built-in, ~0.5 ms in OpenSSL) go through
:func:`hasher`, which loads OpenSSL only for them. Bulk work (packing) keeps
``hashlib``. Both modules are loaded with ``__import__`` (typed here as what they
hold), not ``importlib``, which would import ``warnings`` too."""

from __future__ import annotations

from hive.digests import builtin_hash

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import sha1 as sha1
    from typing import Any

    from dulwich.objects import ObjectID

# Above this many bytes OpenSSL's speed pays for its load (~2 ms).
LARGE = 256 * 1024


if not TYPE_CHECKING:
    sha1 = builtin_hash(("_sha1",), "sha1")


def hasher(size: int) -> Any:
    """An incremental SHA-1 for ``size`` bytes in all: OpenSSL's for large inputs
    (``_hashlib``, which ``hashlib`` wraps, without ``hashlib``'s own imports)."""
    if size >= LARGE:
        try:
            openssl_sha1: Callable[..., Any] = __import__("_hashlib").openssl_sha1
        except (ImportError, AttributeError):  # a Python built without OpenSSL
            return sha1()
        return openssl_sha1(usedforsecurity=False)
    return sha1()


def object_id(sha: str) -> ObjectID:
    """A hex sha as dulwich's ObjectID (bytes at run time)."""
    return sha.encode("ascii")  # type: ignore[return-value]
