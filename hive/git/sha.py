"""SHA-1 for git object ids without loading OpenSSL on every start-up.

``hashlib`` loads OpenSSL (``_hashlib``, ~2 ms of every fresh process); CPython's
built-in ``_sha1`` imports in a fraction of that and is fast enough for the
small objects a hive write hashes. Bulk work (packing) keeps ``hashlib``."""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time (start-up cost, see cli/entry.py)
if TYPE_CHECKING:
    from collections.abc import Callable
    from hashlib import sha1 as sha1


def _load_sha1() -> Callable[..., object]:
    try:
        loaded: Callable[..., object] = importlib.import_module("_sha1").sha1
    except ImportError:  # a Python built without it
        import hashlib

        loaded = hashlib.sha1
    return loaded


if not TYPE_CHECKING:
    sha1 = _load_sha1()
